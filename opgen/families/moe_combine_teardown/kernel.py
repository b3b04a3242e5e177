"""The moe_combine_teardown family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_combine_teardown_kernel.h); its template (kernel.cpp.j2 beside this file) renders what
the spec determines around it (templates/cpp/op_kernel/family_gen.h.j2)."""
from __future__ import annotations

from opgen.emit.kernel_lib import (KernelKind, SETUP_TEARDOWN_AREAS, SETUP_TEARDOWN_ATTRS, SETUP_TEARDOWN_LETS,
                                   gm_tensors, rank_expr, routed_and_rows)
from opgen.model.decl import Op


def combine_teardown_context(op: Op, ctx: dict) -> dict:
    byte_rows = {"expandX", "xOut", "xActiveMaskOptional"} | routed_and_rows(op)
    used = ("expertIds", "expandIdx", "expertScales", "xActiveMaskOptional", "xOut") + \
        tuple(sorted(routed_and_rows(op)))
    return dict(ctx, tp=False, perf=False, gm_tensors=gm_tensors(op, used, byte_rows),
                mask_rank=rank_expr(op, "xActiveMaskOptional"))


KIND = KernelKind(
    "moe_combine_teardown", "expandX", "xOut",
    {"inputs": ("expandX", "expertIds", "expandIdx", "expertScales", "xActiveMaskOptional"),
     "outputs": ("xOut",),
     "attrs": SETUP_TEARDOWN_ATTRS,
     "lets": SETUP_TEARDOWN_LETS,
     "dims": ("BS", "H", "K")},
    combine_teardown_context, window_areas=SETUP_TEARDOWN_AREAS[:1],
    header="moe_combine_teardown_kernel.h", kernel_class="MoeCombineTeardownKernel", types=("expandX", "xOut"),
    gm=("expertIds", "expandIdx", "expertScales", "xActiveMaskOptional", "xOut"))
