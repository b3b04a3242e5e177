"""The moe_dispatch family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_dispatch_kernel.h); its template (kernel.cpp.j2 beside this file) renders what
the spec determines around it (templates/cpp/op_kernel/family_gen.h.j2 and the family's Traits members)."""
from __future__ import annotations

from opgen.emit.kernel_lib import KernelKind, a2_expr, gm_tensors, rank_expr, routed_and_rows
from opgen.lower.ascendc import LoweringError
from opgen.model.decl import Op


def dispatch_context(op: Op, ctx: dict) -> dict:
    comm = [g.domain for g in op.comm_groups]
    tp = all(op.attr(a) is not None for a in ("tpWorldSize", "tpRankId")) and \
        op.tensor("tpRecvCountsOut") is not None and "tp" in comm
    perf = op.tensor("performanceInfoOptional") is not None
    carried = ctx["carried"]
    # the class template carries one output besides expandXOut in the row message: the scales row
    for t in carried:
        if t.name != "dynamicScalesOut":
            at = next(s.span for q in op.quant_modes for s in q.body if s.kind == "assign" and s.name == t.name)
            raise LoweringError(f"the moe_dispatch kernel carries dynamicScalesOut beside expandXOut in its row "
                                f"message, but the quant formulas also assign {t.name}", at or t.span or op.span)
    byte_rows = {"x", "expandXOut", "xActiveMaskOptional"} | {t.name for t in carried} | routed_and_rows(op)
    used = ("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional", "expandXOut",
            "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut", "epRecvCountsOut") + \
        (("tpRecvCountsOut",) if tp else ()) + ("expandScalesOut",) + (("performanceInfoOptional",) if perf else ())
    return dict(ctx, tp=tp, perf=perf, gm_tensors=gm_tensors(op, used, byte_rows),
                mask_rank=rank_expr(op, "xActiveMaskOptional"), is_a2=a2_expr(op))


KIND = KernelKind(
    "moe_dispatch", "x", "expandXOut",
    {"inputs": ("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional"),
     "outputs": ("expandXOut", "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut",
                 "epRecvCountsOut", "expandScalesOut"),
     "attrs": ("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum",
               "expertTokenNumsType"),
     "lets": ("localMoeExpertNum", "localExpertNum", "maxBS"),
     "dims": ("BS", "H", "K")},
    dispatch_context, window_areas=("combine", "dispatch"),
    header="moe_dispatch_kernel.h", kernel_class="MoeDispatchKernel", types=("x", "expandXOut", "dynamicScalesOut"),
    gm=("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional", "expandXOut",
        "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut", "epRecvCountsOut", "expandScalesOut"))
