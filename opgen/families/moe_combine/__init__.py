"""The moe_combine op family: CombineV2 and CombineAddRmsNorm: expert rows back to their tokens, weighted and reduced.

Its parts, one module per layer: opgen/core/family_parts.py."""
