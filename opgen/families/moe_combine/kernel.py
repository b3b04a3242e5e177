"""The moe_combine family's Ascend C kernel: its class template is plain C++
(templates/cpp/common/op_kernel/moe_combine_kernel.h); its template (kernel.cpp.j2 beside this file) renders what the
spec determines around it (templates/cpp/op_kernel/family_gen.h.j2): the Traits, the lowered quant, receiving,
special-expert and post-stage formulas as the class's members. And its UB plan (opgen/emit/ub_plan.py), the buffers
the class's InitBuffer calls take, phase by phase."""
from __future__ import annotations

import re

from opgen.core.dtypes import DTYPES
from opgen.emit.kernel_lib import (KernelKind, REDUCE_SLOTS, a2_expr, block_flags_expr, extra_gm_refs, gm_tensors, post_reads,
                                   post_stage, rank_expr, receive_modes, routed_and_rows, special_reads,
                                   special_terms, word)
from opgen.emit.tiling_layout import BATCH_WRITE_CHUNK, BATCH_WRITE_ITEM_BYTES
from opgen.emit.ub_plan import (AlignUp, Atom, CeilDiv, Field, Let, Max, Num, Param, Phase, Plan, U, block,
                                lift, when)
from opgen.lang.expr import Name
from opgen.lower.ascendc import CPP_TYPES, LoweringError
from opgen.model.decl import Op

# SendBack reads the triples of this many rows at a time (TRIPLE_BATCH of moe_combine_kernel.h): its UB does not grow
# with the rows a core returns (it held all of them before, and overran the UB past ~2,300 rows a core at H 8192)
TRIPLE_BATCH = 256
TRIPLE_BYTES = 12                 # (srcRank, tokenIdx, k), int32 each (TRIPLE of opgen_kernel_helpers.h)
UB_BLOCK = 32                     # opgen_kernel_helpers.h UB_BLOCK
FLAG_BYTES = 32                   # opgen_kernel_helpers.h FLAG_BYTES: one flag entry
REPEAT_BYTES = 256                # opgen_kernel_helpers.h REPEAT_BYTES
BLOCK_BYTES = 512                 # moe_combine_kernel.h BLOCK_BYTES: a window block of the 950 row slots
BLOCK_DATA_BYTES = 480            # BLOCK_DATA_BYTES: its data bytes (the flag takes the last 32)
BLOCK_FLAG_FLOATS = 8             # BLOCK_FLAG_FLOATS: its flag, fp32 1.0 eight times
FLOATS_PER_REPEAT = 64            # opgen_kernel_helpers.h FLOATS_PER_REPEAT
BW_UB_BYTES = BATCH_WRITE_CHUNK * BATCH_WRITE_ITEM_BYTES + FLAG_BYTES  # _batch_write.j2 BW_UB_BYTES: a chunk, a flag


def _atom(text: str, key: str) -> U:
    """A C++ test or count of the kernel's Init over ``tiling.`` as a plan term (a literal as a number)."""
    if text in ("false", "true"):
        return Num(int(text == "true"))
    m = re.fullmatch(r"(\d+)U", text)
    if m:
        return Num(int(m.group(1)))
    return Atom(text.replace("tiling.", "t."), key)


def _bits(op: Op, ctx: dict, ctype: str) -> int:
    """Bits of one element of C++ type ``ctype``: a dtype's, or a type parameter's widest dtype."""
    for name, c in CPP_TYPES.items():
        if c == ctype:
            return DTYPES[name].bits
    tensors = [t for t, c in ctx["quant_types"].tensor_types.items() if c == ctype]
    if not tensors:
        raise LoweringError(f"the UB plan has no element size for {ctype}")
    return max(DTYPES[d].bits for t in tensors for d in op.tensor(t).dtypes)


def _row_bytes(bits: int, count: U) -> U:
    return CeilDiv(count * bits, Num(8))  # RowBytes<T>: whole bytes of count elements


def _wire_bytes(op: Op, ctx: dict, r: dict, H: U) -> U:
    """The message a split quant mode sends (each part 32-byte aligned): wire_offsets' total."""
    total = Num(0)
    for w in r["wire"]:
        part = w["part"]
        if part.block is not None:
            count = CeilDiv(H, Num(part.block))
        elif part.count == "hLen":
            count = H
        else:
            raise LoweringError(f"the UB plan cannot size the sent part {part.name} ({part.count} elements)")
        total = total + AlignUp(_row_bytes(_bits(op, ctx, part.ctype), count), UB_BLOCK)
    return total


def ub_plan(op: Op, ctx: dict, specials: list, post: dict | None, receives: list, reduce_slots: int) -> Plan:
    """The kernel's UB, phase by phase, as moe_combine_kernel.h sizes its buffers (TPipe::InitBuffer, whole 32-byte
    blocks each): Init, SendBack (Atlas A2: SendBackBlocks, then WaitBlocks), Reduce."""
    H, BS, K = Field("H"), Field("BS"), Field("K")
    quant = Field(op.quant_by)
    core = Param("core")
    slot = Let("slotBytes", AlignUp(H * 4, REPEAT_BYTES) + AlignUp(CeilDiv(H, Num(8)), REPEAT_BYTES) + REPEAT_BYTES)
    calc: U = Num(1)  # CALC_SLOTS: the quant mode's formula slots
    for m in reversed(ctx["modes"]):
        calc = when([(quant, "==", m.value)], max(1, m.slots), calc)
    reduce = [lift(reduce_slots)]  # reduceSlots_: a special expert in use and a receiving formula may need more
    for s in specials:
        if not s["zero"] and s["slots"] > reduce_slots:
            reduce.append(when([(Field(s["special"].count), ">", 0)], s["slots"]))
    for r in receives:
        reduce.append(when([(quant, "==", r["value"])], r["slots"]))
    calc = Let("calcSlots", calc)
    reduce_n = Let("reduceSlots", Max(tuple(reduce)) if len(reduce) > 1 else reduce[0])
    row_buf = Let("rowBuf", AlignUp(_row_bytes(max(DTYPES[d].bits for d in op.tensor("expandX").dtypes), H),
                                    UB_BLOCK))
    send: U = row_buf  # sendBytes_: the row, or a split mode's message
    for r in receives:
        send = when([(quant, "==", r["value"])], _wire_bytes(op, ctx, r, H), send)
    server = Field("serverRanks")
    bw = when([(server, "!=", 0), (core, "==", 0)], BW_UB_BYTES)  # core 0 stages the BatchWrite items
    send = Let("sendBytes", send)
    fixed = Max((calc, reduce_n)) * slot + 4 * REPEAT_BYTES + bw
    # blockFlags (Ascend 950): a row slot of Ceil(sendBytes, 480) 512-byte blocks; SendBlocks reads the row as whole
    # 480-byte blocks (xInQue_), packs them (msgQue_), a quant formula's message through packBuf_
    flags = _atom(ctx["block_flags"], "blockFlags")
    blocks = Let("blocks", when([(flags, "!=", 0)], CeilDiv(send, Num(BLOCK_DATA_BYTES))))
    sends_row: U = Num(0)
    for m in ctx["row_modes"]:
        sends_row = when([(quant, "==", m["value"])], 1, sends_row)
    in_bytes = Max((row_buf, blocks * BLOCK_DATA_BYTES))
    pack_src = when([(flags, "!=", 0), (sends_row, "==", 0)], blocks * BLOCK_DATA_BYTES)
    queue_bytes = when([(flags, "!=", 0)], 2 * (in_bytes + blocks * BLOCK_BYTES) + pack_src, 4 * row_buf)
    depth = Let("bufDepth", when([(fixed + queue_bytes, "<=", Field("totalUbSize"))], 2, 1))
    queues = (("xInQue_", when([(flags, "!=", 0)], depth * block(in_bytes), depth * row_buf)),
              ("msgQue_", when([(flags, "!=", 0)], depth * blocks * BLOCK_BYTES,
                               depth * AlignUp(Max((row_buf, send)), UB_BLOCK))),
              ("packBuf_", pack_src))
    is_a2 = _atom(ctx["is_a2"], "isA2")
    entries = when([(Field("isSharedRank"), "==", 0)], Field("localExpertNum") * Field("epWorldSize"))
    share = CeilDiv(Field("moeExpertNum"), Field("aivNum"))  # WaitBlocks: this core's MoE experts
    send_rows = when([(is_a2, "==", 0)], TRIPLE_BATCH * TRIPLE_BYTES, block((entries + 1) * 4))
    # Atlas A2: a region's header (SendHeaders), an int32 per local expert and the flag; else one flag
    header = when([(is_a2, "==", 0)], UB_BLOCK, block((Field("localExpertNum") + 1) * 4))
    shared = when([(Field("sharedExpertRankNum"), "!=", 0)], Field("sharedExpertNum"))
    mask_len = when([(_atom(ctx["mask_rank"], "maskRank"), "==", 2)], BS * K, BS)
    k_bytes = AlignUp(K * 4, UB_BLOCK)
    # blockFlags: the fp32 flags of a token's blocks (whole repeats), their compare bits, zeros to clear them
    flag_floats = (K + shared) * blocks * BLOCK_FLAG_FLOATS
    compared = AlignUp(flag_floats, FLOATS_PER_REPEAT)
    reduce_flags = when([(flags, "!=", 0)], compared * 4 + AlignUp(CeilDiv(compared, Num(8)), UB_BLOCK) + flag_floats * 4,
                        block(2 * (K + shared) * FLAG_BYTES))
    invariants = post["invariants"] if post else 0
    out_rows = (("postBuf_", invariants * block(H * 4)),) if post else (("msgQue_", depth * row_buf),)
    return Plan(lets=(slot, calc, reduce_n, row_buf, send, blocks, depth), phases=(
        Phase("init", (("flagBuf_", Num(UB_BLOCK)),)),
        Phase("sendBack", (("calcBuf_", block(calc * slot)), ("infoBuf_", send_rows), ("flagBuf_", header),
                           ("bwBuf_", when([(is_a2, "!=", 0)], bw))) + queues),
        Phase("waitBlocks", (("flagBuf_", when([(is_a2, "!=", 0)], (share + 1) * FLAG_BYTES)),
                             ("infoBuf_", when([(is_a2, "!=", 0)], block((share + 1) * 4))))),
        Phase("reduce", (("calcBuf_", block(reduce_n * slot)), ("infoBuf_", block(3 * k_bytes)),
                         ("maskBuf_", block(AlignUp(mask_len, UB_BLOCK))),
                         ("flagBuf_", block(reduce_flags)),  # flags, zeros
                         # blockFlags: an int32 status per token of the core's share (CombineRoundRobin)
                         ("statusBuf_", when([(flags, "!=", 0)], block(CeilDiv(BS, Field("aivNum")) * 4)))) + out_rows),
    ))


# the GM tensors the class template addresses itself (KernelKind.gm); the others the spec's formulas read come in the
# Traits' ExtraGm
FAMILY_GM = ("expandX", "expertIds", "assistInfoForCombine", "epSendCounts", "expertScales", "xActiveMaskOptional",
             "sharedExpertXOptional", "xOut")


def _members(specials: list, post: dict | None, receives: list, extra: list) -> tuple:
    """The lowered bodies as members of the class template (extra GM tensors through extraGm_), and all their
    lines (which names of the Traits they use)."""
    specials = [dict(s, lines=extra_gm_refs(s["lines"], extra)) for s in specials]
    receives = [dict(r, lines=extra_gm_refs(r["lines"], extra)) for r in receives]
    if post:
        post = dict(post, lines=extra_gm_refs(post["lines"], extra),
                    invariant_lines=extra_gm_refs(post["invariant_lines"], extra))
    lines = [ln for s in specials for ln in s["lines"]] + [ln for r in receives for ln in r["lines"]]
    lines += [w["part"].ctype for r in receives for w in r["wire"]]
    lines += [r["msg_bytes"] for r in receives] + (post["lines"] + post["invariant_lines"] if post else [])
    return specials, post, receives, lines


def row_modes(op: Op, ctx: dict) -> list[dict]:
    """The quant modes whose formula returns the row itself (one unconditional ``xOut = expandX``, nothing sent
    apart): SendBack copies such a row from GM to the window through UB with no vector instruction, as the real
    kernel's unquantised path does (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h
    ExpertAlltoAllDispatchInnerCopyAdd)."""
    out = []
    for m in ctx["modes"]:
        q = op.quant_mode(m.value)
        body = q.body
        if (q.send is None and len(body) == 1 and body[0].kind == "assign" and body[0].name == KIND.row_output
                and not body[0].conditions and isinstance(body[0].expr, Name)
                and body[0].expr.id == KIND.row_input):
            out.append(dict(value=m.value, guard=ctx["mode_guards"][m.value]))
    return out


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
    reduce_slots = max(REDUCE_SLOTS, post["slots"]) if post else REDUCE_SLOTS
    receives = receive_modes(op, ctx)
    rows = row_modes(op, ctx)
    mask_rank = rank_expr(op, "xActiveMaskOptional")
    gms = gm_tensors(op, used, byte_rows)
    out = dict(ctx, tp=False, perf=False, gm_tensors=gms, mask_rank=mask_rank, is_a2=is_a2, specials=specials,
               post=post, reduce_slots=reduce_slots, receives=receives, row_modes=rows,
               block_flags=block_flags_expr(op))
    out["ub"] = dict(plan=ub_plan(op, out, specials, post, receives, reduce_slots))
    specials, post, receives, lines = _members(specials, post, receives,
                                               [g["name"] for g in gms if g["name"] not in FAMILY_GM])
    return dict(out, specials=specials, post=post, receives=receives, spec_lines=lines,
                receive_lines=[ln for r in receives for ln in r["lines"] + [w["part"].ctype for w in r["wire"]]],
                uses=lambda name, text: re.search(rf"\b{name}\b", "\n".join(text)) is not None)


KIND = KernelKind(
    "moe_combine", "expandX", "xOut",
    {"inputs": ("expandX", "expertIds", "assistInfoForCombine", "epSendCounts", "expertScales",
                "xActiveMaskOptional", "sharedExpertXOptional"),
     "outputs": ("xOut",),
     # the special experts' counts and inputs are the spec's `special` declarations, not names the kernel needs
     "attrs": ("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum"),
     "lets": ("localExpertNum", "maxBS", "isSharedRank"),
     "dims": ("BS", "H", "K")},
    combine_context, window_areas=("combine",), rank_step=True, quant_queued=True, header="moe_combine_kernel.h",
    kernel_class="MoeCombineKernel",
    types=("expandX", "xOut"), gm=FAMILY_GM)
