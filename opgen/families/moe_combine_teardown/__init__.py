"""The moe_combine_teardown op family: CombineTeardown (Ascend 950): read each pair's row in its expert's block and
reduce.

Its parts, one module per layer: opgen/core/family_parts.py."""
