"""The moe_combine_teardown family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import Family, WEIGHTED_SUM, attrs, inputs, outputs

FAMILY = Family(
    "moe_combine_teardown",
    "CombineTeardown: read each pair's row at expandIdx in its expert's block and reduce (semantics.md §6)",
    round_trip=WEIGHTED_SUM, prelude="moe_combine_setup", writes=("xOut",),
    roles=(inputs("expandX", "expertIds", "expandIdx", "expertScales", "xActiveMaskOptional", "sharedExpertXOptional")
           + outputs("xOut")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum")),
    optional_roles=("xActiveMaskOptional", "sharedExpertXOptional"))
