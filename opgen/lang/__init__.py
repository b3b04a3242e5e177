"""The spec language: grammar, parser with spans, expression nodes, spec-text rendering (imports core)."""
