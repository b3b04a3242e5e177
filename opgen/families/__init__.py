"""The op families, one folder each: every part of a family in one place (opgen/core/family_parts.py)."""
