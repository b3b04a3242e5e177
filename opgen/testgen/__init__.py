"""Build-time generation of per-op test suites from the spec (see opgen.emit.tests)."""
