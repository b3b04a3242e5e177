"""opgen: one declarative spec per CANN operator, every artefact generated from it."""

__version__ = "0.1.0"
