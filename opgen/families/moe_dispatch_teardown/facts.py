"""The moe_dispatch_teardown family's row of static facts (opgen/core/family.py says what each one means)."""
from __future__ import annotations

from opgen.core.family import CommPath, URMA_SETUP_TEARDOWN, URMA_SETUP_TEARDOWN_DOC, Family, attrs, inputs, outputs

FAMILY = Family(
    "moe_dispatch_teardown", "DispatchTeardown: deliver the sent rows in DispatchV2's row order (semantics.md §6)",
    prelude="moe_dispatch_setup", writes=("expandXOut", "assistInfoForCombineOut", "expertTokenNumsOut"),
    # the real Setup / Teardown pair (Ascend 950 only) moves the rows by URMA (comm_type 2: URMA work requests in
    # HCCL's send queues, commCmdInfoOut left unwritten); the generated kernels copy them by MTE into the peers' windows
    comm_path=CommPath(differs=URMA_SETUP_TEARDOWN, differs_doc=URMA_SETUP_TEARDOWN_DOC),
    # the real ops' status entries and data-state words are in windowsOut (opgen_family_window.h)
    status_places=("windowsOut",),
    roles=(inputs("x", "y", "expertIds")
           + outputs("expandXOut", "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut")
           + attrs("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum",
                   "expertTokenNumsType")))
