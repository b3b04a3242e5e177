"""The moe_dispatch family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import DISPATCH_TO_COMBINE, Family, SPECIALS_UNSENT, attrs, inputs, outputs

FAMILY = Family(
    "moe_dispatch", "DispatchV2: tokens to the ranks of their top-K experts (semantics.md §2)",
    round_trip=DISPATCH_TO_COMBINE, dispatch_invariants=True, special_experts=SPECIALS_UNSENT,
    status_places=("windowsIn", "windowsExp"),
    # Atlas A2 across servers: each (destination, local expert) block's rows and its status entry, one per MoE
    # expert and shared-expert rank at most
    batch_write=("moeExpertNum", "epWorldSize"),
    # its cores exchange their per-expert slot counts, one int32 per MoE expert
    core_workspace=(4, "moeExpertNum"),
    seed_opaque=("assistInfoForCombineOut", "epRecvCountsOut", "tpRecvCountsOut"),
    writes=("assistInfoForCombineOut", "epRecvCountsOut", "expertTokenNumsOut", "expandScalesOut",
            "tpRecvCountsOut"),
    roles=(inputs("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional",
                  "elasticInfoOptional", "performanceInfoOptional")
           + outputs("expandXOut", "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut",
                     "epRecvCountsOut", "tpRecvCountsOut", "expandScalesOut")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum",
                   "expertTokenNumsType", "tpWorldSize", "tpRankId")),
    optional_roles=("scalesOptional", "xActiveMaskOptional", "expertScalesOptional", "elasticInfoOptional",
                    "performanceInfoOptional"))
