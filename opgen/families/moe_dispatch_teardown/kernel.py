"""The moe_dispatch_teardown family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_dispatch_teardown_kernel.h); its template (kernel.cpp.j2 beside this file) renders what
the spec determines around it (templates/cpp/op_kernel/family_gen.h.j2)."""
from __future__ import annotations

from opgen.emit.kernel_lib import (KernelKind, SETUP_TEARDOWN_AREAS, SETUP_TEARDOWN_ATTRS, SETUP_TEARDOWN_LETS,
                                   gm_tensors)
from opgen.model.decl import Op


def dispatch_teardown_context(op: Op, ctx: dict) -> dict:
    used = ("expandXOut", "assistInfoForCombineOut", "expertTokenNumsOut")
    return dict(ctx, tp=False, perf=False, gm_tensors=gm_tensors(op, used, {"expandXOut"}))


KIND = KernelKind(
    "moe_dispatch_teardown", "y", "expandXOut",
    {"inputs": ("x", "y", "expertIds"),
     "outputs": ("expandXOut", "assistInfoForCombineOut", "expertTokenNumsOut"),
     "attrs": SETUP_TEARDOWN_ATTRS + ("expertTokenNumsType",),
     "lets": SETUP_TEARDOWN_LETS + ("tokenMsgSize", "isSharedRank"),
     "dims": ("BS", "H", "K")},
    dispatch_teardown_context, formulas="copied", window_areas=SETUP_TEARDOWN_AREAS,
    header="moe_dispatch_teardown_kernel.h", kernel_class="MoeDispatchTeardownKernel", types=("y", "expandXOut"),
    gm=("expandXOut", "assistInfoForCombineOut", "expertTokenNumsOut"))
