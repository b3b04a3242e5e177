"""Spec expressions -> target code: Python, the C++ check core, Ascend C (imports core, lang, model)."""
