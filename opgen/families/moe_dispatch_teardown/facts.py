"""The moe_dispatch_teardown family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import Family, attrs, inputs, outputs

FAMILY = Family(
    "moe_dispatch_teardown", "DispatchTeardown: deliver the sent rows in DispatchV2's row order (semantics.md §6)",
    prelude="moe_dispatch_setup", writes=("expandXOut", "assistInfoForCombineOut", "expertTokenNumsOut"),
    roles=(inputs("x", "y", "expertIds")
           + outputs("expandXOut", "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum",
                   "expertTokenNumsType")))
