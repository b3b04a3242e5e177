"""Layer 0: what every other layer may import; imports nothing of opgen (diagnostics, the dtype, product and builtin tables)."""
