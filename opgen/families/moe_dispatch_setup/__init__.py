"""The moe_dispatch_setup op family: DispatchSetup (Ascend 950): stage the rows in a local buffer y and send them.

Its parts, one module per layer: opgen/core/family_parts.py."""
