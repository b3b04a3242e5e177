"""The moe_combine_setup family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import Family, attrs, inputs

FAMILY = Family(
    "moe_combine_setup",
    "CombineSetup: send each (local expert, src rank) chunk back to its owner's window (semantics.md §6)",
    roles=(inputs("expandX", "expertIds", "assistInfoForCombine")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum")))
