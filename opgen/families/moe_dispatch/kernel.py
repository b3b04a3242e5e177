"""The moe_dispatch family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_dispatch_kernel.h); its template (kernel.cpp.j2 beside this file) renders what
the spec determines around it (templates/cpp/op_kernel/family_gen.h.j2 and the family's Traits members)."""
from __future__ import annotations

from opgen.emit.kernel_lib import KernelKind, a2_expr, gm_tensors, rank_expr, routed_and_rows
from opgen.lang.expr import Name
from opgen.lower.literals import cpp_literal
from opgen.lower.ascendc import LoweringError, QuantLowering, inline_defs
from opgen.model.decl import Op


def row_modes(op: Op, ctx: dict) -> list[dict]:
    """The quant modes whose formula, in some instances, is the row itself: one ``expandXOut = x`` under tests the
    compiler decides, its types equal, and every other statement of the mode off there. Each with ``test``, the
    C++ constant test of those instances: SendRow sends the token row GM -> UB -> window with MTE alone there, as
    the real A2 dispatch does (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h
    ProcessToken, its unquantised x rows)."""
    types = ctx["quant_types"]
    low = QuantLowering(op, types)
    row_type = f"std::is_same<{types.tensor_types[KIND.row_output]}, {types.tensor_types[KIND.row_input]}>::value"
    out = []
    for m in ctx["modes"]:
        q = op.quant_mode(m.value)
        conds = [[inline_defs(op, c) for c in s.conditions] for s in q.body]
        copies = [i for i, s in enumerate(q.body) if s.kind == "assign" and s.name == KIND.row_output
                  and isinstance(s.expr, Name) and s.expr.id == KIND.row_input]
        if q.send is not None or len(copies) != 1 or not all(low.is_static_test(c) for cs in conds for c in cs):
            continue
        others = [cs for i, cs in enumerate(conds) if i != copies[0]]
        if any(not cs for cs in others):
            continue  # a statement the mode always runs
        on = list(dict.fromkeys([low.condition(c)[0] for c in conds[copies[0]]] + [row_type]))
        off = [" && ".join(f"({low.condition(c)[0]})" for c in cs) for cs in others]
        mode = [f"({types.quant_value} == {cpp_literal(m.value)}U)"] if types.quant_value is not None else []
        test = " && ".join(mode + [f"({c})" for c in on] +
                           [f"(!({c}))" for c in off])
        out.append(dict(value=m.value, test=test, guard=ctx["mode_guards"][m.value]))
    return out


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
                mask_rank=rank_expr(op, "xActiveMaskOptional"), is_a2=a2_expr(op), row_modes=row_modes(op, ctx))


KIND = KernelKind(
    "moe_dispatch", "x", "expandXOut",
    {"inputs": ("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional"),
     "outputs": ("expandXOut", "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut",
                 "epRecvCountsOut", "expandScalesOut"),
     "attrs": ("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum",
               "expertTokenNumsType"),
     "lets": ("localMoeExpertNum", "localExpertNum", "maxBS"),
     "dims": ("BS", "H", "K")},
    dispatch_context, window_areas=("combine", "dispatch"), rank_step=True,
    quant_queued=True, header="moe_dispatch_kernel.h", kernel_class="MoeDispatchKernel",
    types=("x", "expandXOut", "dynamicScalesOut"),
    gm=("x", "expertIds", "scalesOptional", "xActiveMaskOptional", "expertScalesOptional", "expandXOut",
        "dynamicScalesOut", "assistInfoForCombineOut", "expertTokenNumsOut", "epRecvCountsOut", "expandScalesOut"))
