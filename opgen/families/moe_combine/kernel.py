"""The moe_combine family's Ascend C kernel: what its template (kernel.cpp.j2 beside this file) is written against."""
from __future__ import annotations

from opgen.emit.kernel_lib import (KernelKind, REDUCE_SLOTS, a2_expr, gm_tensors, post_reads, post_stage, rank_expr,
                                   receive_modes, routed_and_rows, special_reads, special_terms, word)
from opgen.lower.ascendc import LoweringError
from opgen.model.decl import Op


def combine_context(op: Op, ctx: dict) -> dict:
    reads = special_reads(op) | post_reads(op)  # the special experts' and the post stage's formulas name them
    special_inputs = tuple(t.name for t in op.inputs if t.name in reads)
    post_outputs = op.post.assigned if op.post is not None else ()
    byte_rows = {"expandX", "xOut", "xActiveMaskOptional", "sharedExpertXOptional", *special_inputs, *post_outputs}
    used = ("expandX", "expertIds", "assistInfoForCombine", "epSendCounts", "expertScales", "xActiveMaskOptional",
            "sharedExpertXOptional") + special_inputs + ("xOut",) + post_outputs
    is_a2 = a2_expr(op)
    if is_a2 != "false" and routed_and_rows(op):
        raise LoweringError(f"a formula reads {', '.join(sorted(routed_and_rows(op)))} per (token, k), "
                            f"which Atlas A2's expert blocks do not carry back",
                            word(op, op.product("ascend910b").span, r"\b(ascend910b)\b"))
    specials = special_terms(op, ctx)
    post = post_stage(op, ctx)
    return dict(ctx, tp=False, perf=False, gm_tensors=gm_tensors(op, used, byte_rows),
                mask_rank=rank_expr(op, "xActiveMaskOptional"), is_a2=is_a2, specials=specials, post=post,
                reduce_slots=max(REDUCE_SLOTS, post["slots"]) if post else REDUCE_SLOTS,
                receives=receive_modes(op, ctx))


KIND = KernelKind(
    "moe_combine", "expandX", "xOut",
    {"inputs": ("expandX", "expertIds", "assistInfoForCombine", "epSendCounts", "expertScales",
                "xActiveMaskOptional", "sharedExpertXOptional"),
     "outputs": ("xOut",),
     # the special experts' counts and inputs are the spec's `special` declarations, not names the kernel needs
     "attrs": ("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum"),
     "lets": ("localExpertNum", "maxBS", "isSharedRank"),
     "dims": ("BS", "H", "K")},
    combine_context, window_areas=("combine",))
