"""The moe_dispatch_setup family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_dispatch_setup_kernel.h); its template (kernel.cpp.j2 beside this file) renders what
the spec determines around it (templates/cpp/op_kernel/family_gen.h.j2)."""
from __future__ import annotations

from opgen.emit.kernel_lib import (KernelKind, SETUP_TEARDOWN_AREAS, SETUP_TEARDOWN_ATTRS, SETUP_TEARDOWN_LETS,
                                   gm_tensors, rank_expr, routed_and_rows)
from opgen.model.decl import Op


def dispatch_setup_context(op: Op, ctx: dict) -> dict:
    byte_rows = {"x", "yOut", "xActiveMaskOptional"} | routed_and_rows(op)
    used = ("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "yOut", "expandIdxOut")
    return dict(ctx, tp=False, perf=False, gm_tensors=gm_tensors(op, used, byte_rows),
                mask_rank=rank_expr(op, "xActiveMaskOptional"))


KIND = KernelKind(
    "moe_dispatch_setup", "x", "yOut",
    {"inputs": ("x", "expertIds", "scalesOptional", "xActiveMaskOptional"),
     "outputs": ("yOut", "expandIdxOut"),
     "attrs": SETUP_TEARDOWN_ATTRS,
     "lets": SETUP_TEARDOWN_LETS + ("tokenMsgSize",),
     "dims": ("BS", "H", "K")},
    dispatch_setup_context, window_areas=SETUP_TEARDOWN_AREAS,
    quant_queued=True, header="moe_dispatch_setup_kernel.h", kernel_class="MoeDispatchSetupKernel", types=("x", "yOut"),
    gm=("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "yOut", "expandIdxOut"))
