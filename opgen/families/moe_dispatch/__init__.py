"""The moe_dispatch op family: DispatchV2 (and its history): tokens to the ranks of their top-K experts.

Its parts, one module per layer: opgen/core/family_parts.py."""
