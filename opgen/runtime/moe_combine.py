"""CombineV2 reference (semantics.md §5): send rows back along the dispatch path, then reduce.

The reduce is fp32 in k order with two roundings per term (Muls, then Add; the device
has no FMA here) and one RINT cast at the end.  numpy's float32 ufuncs and
``astype(float16 / ml_dtypes.bfloat16)`` are IEEE round-to-nearest-even, so MoE experts are
bit-exact, and so are zero and copy experts; a const expert (the real kernel's softmax of two dot
products) is as exact as the order of its sums and the Exp allow (the specs' tolerance).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from opgen.runtime.moe_routing import DispatchPlan, Topology, pair_mask

COMM_QUANT_BLOCK = 8                                    # one 32-byte block of fp32
_INV_127 = np.float32(1) / np.float32(127)              # multiplied, not divided (§5)

CommQuant = Callable[[np.ndarray], np.ndarray]


def comm_quant_int8_round_trip(rows: np.ndarray, x_dtype) -> np.ndarray:
    """commQuantMode 2: int8 quantise on send, dequantise on receive, in blocks of 8 along H.

    Per block b (H zero-padded to a multiple of 8), all in fp32:
    s_b = max|v| * fp32(1/127); stored = Cast(x_dtype, s_b, RINT);
    q = Cast(int8, Cast(fp16, v / s_b, RINT), RINT) (saturating);
    out = Cast(x_dtype, fp32(fp16(q)) * fp32(stored), RINT).
    A block whose s_b is 0 (all zeros, or underflow) divides by zero on device
    (unspecified); here it round-trips to zeros.
    Returns rows of ``x_dtype`` with the input's shape.
    """
    v = np.asarray(rows).astype(np.float32)
    h = v.shape[-1]
    lead = v.shape[:-1]
    v = v.reshape(-1, h)
    padded = np.pad(v, ((0, 0), (0, -h % COMM_QUANT_BLOCK)))
    blocks = padded.reshape(len(v), padded.shape[1] // COMM_QUANT_BLOCK, COMM_QUANT_BLOCK)
    scale = np.max(np.abs(blocks), axis=-1, keepdims=True) * _INV_127
    stored = scale.astype(x_dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(scale == 0, np.float32(0), blocks / scale)
    q = np.clip(np.rint(ratio.astype(np.float16)), -128, 127).astype(np.int8)
    deq = q.astype(np.float16).astype(np.float32) * stored.astype(np.float32)
    return deq.astype(x_dtype).reshape(padded.shape)[:, :h].reshape(*lead, h)


def returned_rows(rank: int, expert_outputs_per_rank: list, plans: list[DispatchPlan],
                  bs: int, slots: int, comm_quant: CommQuant | None) -> np.ndarray:
    """fp32 (BS, K+S, H) window of ``rank``: slot (t,k) holds the row the experts sent back.

    Row i of expert rank d's output returns to (plan.src_rank[i], plan.token[i], plan.k[i]),
    i.e. the triple dispatch recorded for it.  Slots nobody filled stay 0.
    """
    if len(plans) != len(expert_outputs_per_rank):
        raise ValueError(f"{len(plans)} plans but {len(expert_outputs_per_rank)} expert outputs")
    widths = {np.shape(o)[1] for o in expert_outputs_per_rank}
    if len(widths) != 1:
        raise ValueError(f"expert outputs disagree on H: {sorted(widths)}")
    window = np.zeros((bs, slots, widths.pop()), dtype=np.float32)
    for d, plan in enumerate(plans):
        out = np.asarray(expert_outputs_per_rank[d])
        if len(out) < plan.num_rows:
            raise ValueError(f"expert rank {d} returned {len(out)} rows, plan has {plan.num_rows}")
        mine = np.flatnonzero(plan.src_rank == rank)
        rows = out[mine]
        if comm_quant is not None:
            rows = comm_quant(rows)  # per-row op: quantising only our rows is equivalent
        window[plan.token[mine], plan.k[mine]] = rows.astype(np.float32)
    return window


@dataclass(frozen=True)
class SpecialTerm:
    """One kind of special expert: ids [lo, hi), computed on the token's rank, never sent.

    ``term(tokens, c)`` is the unweighted fp32 contribution (n, H) for the tokens (row indices) whose pair chose
    ids ``lo + c``; None: the kind adds nothing (a zero expert). The generated references build these from the
    spec's ``special`` formulas."""

    lo: int
    hi: int
    term: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None


def _term_for_k(ids_k: np.ndarray, on: np.ndarray, returned_k: np.ndarray, E: int,
                specials: tuple[SpecialTerm, ...]) -> np.ndarray:
    """Unweighted fp32 contribution of one top-k slot for every token (0 where none)."""
    end = specials[-1].hi if specials else E
    if np.any(on & (ids_k >= end)):
        raise ValueError(f"expert id beyond the MoE and special experts = {end}")
    term = np.zeros(returned_k.shape, dtype=np.float32)
    moe = on & (ids_k < E)
    term[moe] = returned_k[moe]
    for sp in specials:
        rows = on & (ids_k >= sp.lo) & (ids_k < sp.hi)
        if sp.term is not None and rows.any():
            tokens = np.flatnonzero(rows)
            term[tokens] = sp.term(tokens, ids_k[tokens] - sp.lo)
    return term


def combine_rank(rank: int, *, expert_outputs_per_rank: list, plans: list[DispatchPlan],
                 expert_ids: np.ndarray, expert_scales: np.ndarray | None,
                 mask: np.ndarray | None, W: int, Rs: int, S: int, E: int, K: int,
                 specials: tuple[SpecialTerm, ...] = (),
                 shared_expert_x: np.ndarray | None = None, out_dtype,
                 comm_quant: CommQuant | None = None) -> np.ndarray:
    """xOut (BS,H) of token owner ``rank`` (§5 step 2); rows of inactive tokens stay 0.

    ``plans[d]`` is expert rank d's dispatch plan (where each of its rows goes back);
    ``expert_outputs_per_rank[d]`` its combine expandX (first plan rows are used).
    ``comm_quant`` maps a batch of x-dtype rows to their dequantised x-dtype copies (e.g.
    ``functools.partial(comm_quant_int8_round_trip, x_dtype=...)``).

    Shared-expert rows and sharedExpertX are added UNWEIGHTED after the k loop.  The
    README/CombineV2 docs write ``expertScales*sharedExpertX`` (weighted); the kernel and
    the golden add them unweighted (semantics.md §5 flag) and the seed (the DispatchV2 doc)
    is silent, so the code wins.
    """
    topo = Topology.make(W=W, Rs=Rs, S=S, E=E)
    if len(plans) != W:
        raise ValueError(f"need the dispatch plans of all W={W} ranks, got {len(plans)}")
    ids = np.asarray(expert_ids)
    if ids.ndim != 2 or ids.shape[1] != K:
        raise ValueError(f"expert_ids shape {ids.shape} is not (BS, K={K})")
    window = returned_rows(rank, expert_outputs_per_rank, plans, ids.shape[0], K + topo.S, comm_quant)
    return reduce_window(window, expert_ids=ids, expert_scales=expert_scales, mask=mask, S=topo.S, E=E, K=K,
                         specials=specials, shared_expert_x=shared_expert_x, out_dtype=out_dtype)


def reduce_window(window: np.ndarray, *, expert_ids: np.ndarray, expert_scales: np.ndarray | None,
                  mask: np.ndarray | None, S: int, E: int, K: int, specials: tuple[SpecialTerm, ...] = (),
                  shared_expert_x: np.ndarray | None = None, out_dtype) -> np.ndarray:
    """§5 step 2 on a token owner's fp32 window (BS, K+S, H) of returned rows: the k-ordered sum.

    ``S`` is the normalised shared-expert count (0 without shared-expert ranks).
    """
    ids = np.asarray(expert_ids)
    bs = ids.shape[0]
    if window.shape[:2] != (bs, K + S):
        raise ValueError(f"window shape {window.shape} is not (BS={bs}, K+S={K + S}, H)")
    pairs_on, tokens_on = pair_mask(ids, mask)   # a 1-D mask already covers every pair
    weights = None if expert_scales is None else np.asarray(expert_scales, dtype=np.float32)

    acc = np.zeros((bs, window.shape[2]), dtype=np.float32)
    for k in range(K):
        term = _term_for_k(ids[:, k], pairs_on[:, k], window[:, k], E, tuple(specials))
        if weights is not None:
            term = term * weights[:, k:k + 1]        # Muls: rounded to fp32 ...
        acc = np.where(pairs_on[:, k:k + 1], acc + term, acc)  # ... then Add: second rounding
    for s in range(S):
        acc = np.where(tokens_on[:, None], acc + window[:, K + s], acc)
    if shared_expert_x is not None:
        acc = np.where(tokens_on[:, None], acc + np.asarray(shared_expert_x).astype(np.float32), acc)

    out = np.zeros(acc.shape, dtype=out_dtype)
    out[tokens_on] = acc[tokens_on].astype(out_dtype)  # Cast(XType, acc, CAST_RINT)
    return out


def combine_world(*, expert_outputs_per_rank: list, plans: list[DispatchPlan],
                  expert_ids: list, expert_scales: list | None, masks: list | None,
                  W: int, Rs: int, S: int, E: int, K: int, specials: list | None = None,
                  shared_expert_x: list | None = None,
                  out_dtype, comm_quant: CommQuant | None = None) -> list[np.ndarray]:
    """:func:`combine_rank` for every rank; per-rank inputs are lists indexed by rank (``specials[r]``: rank r's
    special experts, their terms read that rank's tokens)."""
    def per_rank(xs: list | None, r: int):
        return None if xs is None else xs[r]

    return [combine_rank(r, expert_outputs_per_rank=expert_outputs_per_rank, plans=plans,
                         expert_ids=expert_ids[r], expert_scales=per_rank(expert_scales, r),
                         mask=per_rank(masks, r), W=W, Rs=Rs, S=S, E=E, K=K,
                         specials=tuple(per_rank(specials, r) or ()),
                         shared_expert_x=per_rank(shared_expert_x, r), out_dtype=out_dtype,
                         comm_quant=comm_quant)
            for r in range(W)]
