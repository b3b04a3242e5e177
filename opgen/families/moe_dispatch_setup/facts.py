"""The moe_dispatch_setup family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import Family, attrs, inputs, outputs

FAMILY = Family(
    "moe_dispatch_setup", "DispatchSetup: stage the rows in a local buffer y and send them (semantics.md §6)",
    writes=("expandIdxOut",),
    roles=(inputs("x", "expertIds", "scalesOptional", "xActiveMaskOptional")
           + outputs("yOut", "expandIdxOut")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum")),
    optional_roles=("scalesOptional", "xActiveMaskOptional"))
