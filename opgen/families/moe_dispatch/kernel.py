"""The moe_dispatch family's Ascend C kernel: what its template (kernel.cpp.j2 beside this file) is written against."""
from __future__ import annotations

from opgen.emit.kernel_lib import KernelKind, a2_expr, gm_tensors, rank_expr, routed_and_rows
from opgen.model.decl import Op


def dispatch_context(op: Op, ctx: dict) -> dict:
    comm = [g.domain for g in op.comm_groups]
    tp = all(op.attr(a) is not None for a in ("tpWorldSize", "tpRankId")) and \
        op.tensor("tpRecvCountsOut") is not None and "tp" in comm
    perf = op.tensor("performanceInfoOptional") is not None
    carried = ctx["carried"]
    byte_rows = {"x", "expandXOut", "xActiveMaskOptional"} | {t.name for t in carried} | routed_and_rows(op)
    used = ("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional", "expandXOut") + \
        tuple(t.name for t in carried) + ("assistInfoForCombineOut", "expertTokenNumsOut", "epRecvCountsOut") + \
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
    dispatch_context, window_areas=("combine", "dispatch"))
