"""Dispatch/Combine Setup + Teardown reference (semantics.md §6; Ascend950, URMA).

DispatchSetup stages rows in a local buffer ``y`` and sends them; DispatchTeardown
delivers them in DispatchV2's row order; CombineSetup sends each (local expert, src
rank) chunk back to its owner's per-expert window block; CombineTeardown reads each
pair's row at ``expand_idx`` inside its expert's block and reduces.  Setup staging
rows are kept as logical rows (data, optional per-row scales): packing them into
tokenMsgSize bytes is the caller's business.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from opgen.runtime.moe_combine import CommQuant
from opgen.runtime.moe_routing import (ASSIST_INFO_PER_ROW, DispatchPlan, Topology, a2_expand_idx,
                          active_pairs, expert_token_nums, gather_block_rows, pair_mask,
                          recv_counts_cumsum)

# (rows (n,H) x-dtype, smooth-scale row per row (n,)) -> (data (n,...), scales (n,...) | None)
SetupQuant = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, "np.ndarray | None"]]


def dispatch_setup_rank(*, x: np.ndarray, expert_ids: np.ndarray, mask: np.ndarray | None = None,
                        W: int, Rs: int, S: int, E: int,
                        quantize: SetupQuant | None = None) -> dict:
    """Staging buffer y and expand_idx of one rank's DispatchSetup.

    Returns ``y`` (BS*(K+S), ...) and ``y_scales`` (same rows, or None without quantize):
    rows [0, n) hold the sent pairs sorted by expert id (stable, so ties keep flattened
    (t,k) order, which is also each expert's slot order); rows [BS*K, BS*K + S*activeBS)
    hold the shared copies, s-major then active-token order (the order inside this region
    is inferred: only its location is documented).  Unwritten rows are 0.  Also
    ``expand_idx`` (BS*K,) int32 (:func:`a2_expand_idx`) and ``pair_row`` (BS, K+S) int64,
    the y row of each (t, k) (k >= K: shared copy), -1 where nothing was staged.

    Smooth-scale rows are each row's own expert (e+S, or s for a shared copy).  The kernel
    indexes smooth scales with the unsorted expertIds[p] while copying x[sortedIdx[p]/K]
    (§6 flag), which looks like a bug; the reference keeps data and scale row together.
    """
    topo = Topology.make(W=W, Rs=Rs, S=S, E=E)
    xs = np.asarray(x)
    ids = np.asarray(expert_ids)
    bs, K = ids.shape
    if len(xs) != bs:
        raise ValueError(f"x has {len(xs)} rows, expert_ids {bs}")
    t, k, act = active_pairs(ids, mask, E)
    e = ids[t, k].astype(np.int64)
    order = np.argsort(e, kind="stable")
    n_act = len(act)
    tokens = np.concatenate([t[order], np.tile(act, topo.S)])
    ks = np.concatenate([k[order], np.repeat(K + np.arange(topo.S), n_act)])
    experts = np.concatenate([e[order] + topo.S, np.repeat(np.arange(topo.S), n_act)])
    y_rows = np.concatenate([np.arange(len(order)), bs * K + np.arange(topo.S * n_act)])

    data, scales = (xs[tokens], None) if quantize is None else quantize(xs[tokens], experts)
    capacity = bs * (K + topo.S)
    pair_row = np.full((bs, K + topo.S), -1, dtype=np.int64)
    pair_row[tokens, ks] = y_rows
    return {"y": _scatter_rows(data, y_rows, capacity),
            "y_scales": None if scales is None else _scatter_rows(scales, y_rows, capacity),
            "expand_idx": a2_expand_idx(ids, mask, E),
            "pair_row": pair_row}


def _scatter_rows(rows: np.ndarray, at: np.ndarray, capacity: int) -> np.ndarray:
    rows = np.asarray(rows)
    out = np.zeros((capacity, *rows.shape[1:]), dtype=rows.dtype)
    out[at] = rows
    return out


def dispatch_teardown_rank(*, plan: DispatchPlan, setups: list[dict], W: int,
                           expert_token_nums_type: int, capacity_A: int) -> dict:
    """DispatchTeardown outputs of the plan's rank, at capacity shapes.

    ``setups[r]`` is rank r's :func:`dispatch_setup_rank` result.  Returns ``expand_x``
    (A, ...) and ``dynamic_scales`` (A, ...) or None, rows in DispatchV2 order (§2.3);
    ``assist_info_for_combine`` (A*128,) int32 whose head holds the inclusive cumulative
    (localExpert, srcRank) counts (epRecvCounts semantics, NOT triples: the kernel writes
    its send counts there); ``expert_token_nums`` (L,) int64 as in DispatchV2.
    """
    if len(setups) != W or plan.counts.shape[1] != W:
        raise ValueError(f"need W={W} setups and a W-wide plan")
    if plan.num_rows > capacity_A:
        raise ValueError(f"{plan.num_rows} received rows exceed capacity A={capacity_A}")
    y_row = np.empty(plan.num_rows, dtype=np.int64)
    for r in range(W):
        mine = np.flatnonzero(plan.src_rank == r)
        y_row[mine] = setups[r]["pair_row"][plan.token[mine], plan.k[mine]]
    if np.any(y_row < 0):
        raise ValueError("plan asks for rows the setups did not stage")

    def delivered(key: str) -> np.ndarray | None:
        if setups[0][key] is None:
            return None
        rows = gather_block_rows([s[key] for s in setups], plan, y_row)
        out = np.zeros((capacity_A, *rows.shape[1:]), dtype=rows.dtype)
        out[:plan.num_rows] = rows
        return out

    cum = recv_counts_cumsum(plan.counts)
    assist = np.zeros(capacity_A * ASSIST_INFO_PER_ROW, dtype=np.int32)
    assist[:len(cum)] = cum
    return {"expand_x": delivered("y"), "dynamic_scales": delivered("y_scales"),
            "assist_info_for_combine": assist,
            "expert_token_nums": expert_token_nums(plan.counts, expert_token_nums_type)}


def combine_setup_rank(*, rank: int, expand_x: np.ndarray, assist_info_for_combine: np.ndarray,
                       W: int, E: int, Rs: int = 0,
                       comm_quant: CommQuant | None = None) -> dict[int, dict[int, np.ndarray]]:
    """Rows CombineSetup on expert rank ``rank`` writes: {owner rank: {global expert: rows}}.

    Block i of the cumulative counts (i = localExpert*W + srcRank) is
    ``expand_x[cum[i-1]:cum[i]]`` and goes to owner srcRank's window block of global expert
    (rank-Rs)*L + localExpert, rows starting at slot 0.  The kernel writes epRankId*L +
    localExpert; the two agree because the combine family supports no shared experts
    (the CombineSetup seed: sharedExpertNum must be 0), and Rs is kept only for symmetry
    with dispatch.  Empty chunks are omitted.
    """
    topo = Topology.make(W=W, Rs=Rs, S=0 if Rs == 0 else 1, E=E)
    if topo.is_shared_rank(rank):
        raise ValueError("the combine setup family has no shared-expert ranks")
    cum = np.asarray(assist_info_for_combine, dtype=np.int64)[:topo.L * W]
    starts = np.concatenate(([0], cum[:-1]))
    rows = np.asarray(expand_x)
    if len(rows) < cum[-1]:
        raise ValueError(f"expand_x has {len(rows)} rows, counts say {cum[-1]}")
    sent: dict[int, dict[int, np.ndarray]] = {}
    for i in np.flatnonzero(cum > starts):
        chunk = rows[starts[i]:cum[i]]
        if comm_quant is not None:
            chunk = comm_quant(chunk)
        owner, local_expert = i % W, i // W
        sent.setdefault(int(owner), {})[(rank - Rs) * topo.L + int(local_expert)] = chunk
    return sent


def combine_teardown_rank(*, window: dict[int, np.ndarray], expert_ids: np.ndarray,
                          expand_idx: np.ndarray, expert_scales: np.ndarray,
                          mask: np.ndarray | None = None, E: int, H: int,
                          out_dtype) -> np.ndarray:
    """x (BS,H) = RINT cast of sum_k fp32(expertScales[t,k] * fp32(row)), fp32 in k order.

    ``window`` maps global expert -> rows this owner received for it (merge the
    :func:`combine_setup_rank` results addressed to this rank); the pair (t,k) reads row
    ``expand_idx[t*K+k]`` of its expert.  The arch35 kernel ignores xActiveMask and
    sharedExpertX (§6 flag); rows of tokens that sent nothing would be read from stale
    window memory there, so the reference honours ``mask`` and leaves them 0.
    """
    ids = np.asarray(expert_ids)
    bs, K = ids.shape
    pairs_on, tokens_on = pair_mask(ids, mask)
    pairs_on = pairs_on & (ids < E)
    experts = sorted(window)
    lengths = np.zeros(E, dtype=np.int64)
    lengths[experts] = [len(window[g]) for g in experts]
    base = np.cumsum(lengths) - lengths              # block start of each expert in `flat`
    flat = np.concatenate([np.zeros((0, H), np.float32)]
                          + [np.asarray(window[g]).astype(np.float32) for g in experts])
    safe_ids = np.where(pairs_on, ids, 0)
    slot = np.asarray(expand_idx, dtype=np.int64).reshape(bs, K)
    if np.any(pairs_on & (slot >= lengths[safe_ids])):
        raise ValueError("a pair's expand_idx lies outside the rows its expert sent back")
    row = np.where(pairs_on, base[safe_ids] + slot, 0)
    weights = np.asarray(expert_scales, dtype=np.float32)
    acc = np.zeros((bs, H), dtype=np.float32)
    for k in range(K):
        if not pairs_on[:, k].any():
            continue
        term = flat[row[:, k]] * weights[:, k:k + 1]           # Muls, rounded to fp32
        acc = np.where(pairs_on[:, k:k + 1], acc + term, acc)  # Add, second rounding
    out = np.zeros((bs, H), dtype=out_dtype)
    out[tokens_on] = acc[tokens_on].astype(out_dtype)
    return out
