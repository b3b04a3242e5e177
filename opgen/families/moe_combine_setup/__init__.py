"""The moe_combine_setup op family: CombineSetup (Ascend 950): send each (local expert, src rank) chunk back to its
owner's window.

Its parts, one module per layer: opgen/core/family_parts.py."""
