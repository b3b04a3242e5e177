"""The moe_combine_setup family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_combine_setup_kernel.h); its template (kernel.cpp.j2 beside this file) renders what
the spec determines around it (templates/cpp/op_kernel/family_gen.h.j2)."""
from __future__ import annotations

from opgen.emit.kernel_lib import (KernelKind, SETUP_TEARDOWN_AREAS, SETUP_TEARDOWN_ATTRS, SETUP_TEARDOWN_LETS,
                                   gm_tensors)
from opgen.model.decl import Op


def combine_setup_context(op: Op, ctx: dict) -> dict:
    used = ("expandX", "assistInfoForCombine")
    return dict(ctx, tp=False, perf=False, gm_tensors=gm_tensors(op, used, {"expandX"}))


KIND = KernelKind(
    "moe_combine_setup", "expandX", "expandX",
    {"inputs": ("expandX", "expertIds", "assistInfoForCombine"),
     "outputs": (),
     "attrs": SETUP_TEARDOWN_ATTRS,
     "lets": SETUP_TEARDOWN_LETS + ("isSharedRank",),
     "dims": ("BS", "H", "K")},
    combine_setup_context, formulas="unchanged", window_areas=SETUP_TEARDOWN_AREAS[:1],
    header="moe_combine_setup_kernel.h", kernel_class="MoeCombineSetupKernel", types=("expandX",),
    gm=("expandX", "assistInfoForCombine"))
