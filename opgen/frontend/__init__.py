"""Spec text -> validated model: tree -> model, all semantic checks, the loader (imports core, lang, model)."""
