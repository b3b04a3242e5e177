"""The moe_combine family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import Family, KernelTable, SPECIALS_COMPUTED, WEIGHTED_SUM, attrs, inputs, outputs
from opgen.core.products import TRIPLE

FAMILY = Family(
    "moe_combine", "CombineV2, CombineAddRmsNorm: expert rows back to their tokens, weighted (semantics.md §5)",
    round_trip=WEIGHTED_SUM, shared_expert_x=True, writes=("xOut",), special_experts=SPECIALS_COMPUTED,
    reduced="xOut", quant_send=True, status_places=("windowsIn", "windowsExp"),
    # Atlas A2 across servers: each (local expert, owner) block's rows and its flag, at most moeExpertNum blocks
    batch_write=("moeExpertNum", "epWorldSize"),
    # the kernel's UB plan (kernel.py ub_plan) is checked by tiling; the rejection shows these fields
    ub_check=("BS", "H", "K", "moeExpertNum"),
    # one flag per (token, k) and shared-expert slot of a data state in the status area: combineBytes / FLAG_BYTES
    # of the StatusLayout rows of templates/cpp/common/op_kernel/opgen_kernel_helpers.h, 10240 in both (OWN_STATUS:
    # COMBINE_FLAGS_HALF; REAL_STATUS, in Atlas A3's windowsExp and Ascend 950's windowsIn: the real ops' 768K -
    # 384K - 64K; code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_v2_constant.h) (Atlas A2 flags per
    # expert block instead)
    kernel_tables=(KernelTable("status_slots", "globalBS", (("maxBS",), ("K", "sharedExpertNum")), 10240,
                               (TRIPLE,), "row-slot flags one data state of the kernel's status area holds"),),
    no_tp_reference="the CombineV2 reference has no TP (ReduceScatterV) path: the documents give no row "
                    "order for it",
    roles=(inputs("expandX", "expertIds", "assistInfoForCombine", "epSendCounts", "expertScales",
                  "xActiveMaskOptional", "sharedExpertXOptional", "expandScalesOptional", "tpSendCountsOptional",
                  "elasticInfoOptional", "performanceInfoOptional", "activationScaleOptional", "weightScaleOptional",
                  "groupListOptional", "oriXOptional")
           + outputs("xOut")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum", "tpWorldSize",
                   "tpRankId", "globalBS")),
    optional_roles=("xActiveMaskOptional", "sharedExpertXOptional", "expandScalesOptional", "tpSendCountsOptional",
                    "elasticInfoOptional", "performanceInfoOptional", "activationScaleOptional",
                    "weightScaleOptional", "groupListOptional", "oriXOptional"))
