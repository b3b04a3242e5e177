"""The moe_dispatch_teardown op family: DispatchTeardown (Ascend 950): deliver the rows DispatchSetup sent, in
DispatchV2's row order.

Its parts, one module per layer: opgen/core/family_parts.py."""
