"""Routing half of the MoE dispatch reference: which rows travel where, in which order.

Everything here is index arithmetic over ``expert_ids`` and masks (semantics.md §2);
the only function that touches row data is :func:`gather_rows`.  Notation:
W = epWorldSize, Rs = sharedExpertRankNum, S = sharedExpertNum, E = moeExpertNum,
L = E/(W-Rs) local experts per MoE rank, P = Rs/S ranks per shared expert,
K = topK.  Shared ranks are 0..Rs-1 (expertShardType 0), MoE ranks Rs..W-1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opgen.core.products import ASSIST_LAYOUTS, EXPAND_IDX, TRIPLE as TRIPLE_LAYOUT

ASSIST_INFO_PER_ROW = 128   # assistInfoForCombineOut is (A*128,): capacity only (§2.4)
TRIPLE = 3                  # (srcRank, tokenIdx, k) per received row on A3/A5


@dataclass(frozen=True)
class Topology:
    """EP world layout with the tiling's normalisation applied (use :meth:`make`)."""

    W: int
    Rs: int
    S: int
    E: int

    @classmethod
    def make(cls, *, W: int, Rs: int, S: int, E: int) -> "Topology":
        if Rs == 0 and S == 1:
            S = 0  # SetAttrParams: "no shared ranks, one shared expert" means none
        if (Rs == 0) != (S == 0) or (S and Rs % S):
            raise ValueError(f"inconsistent shared experts: Rs={Rs}, S={S}")
        if not 0 <= Rs < W or E <= 0 or E % (W - Rs):
            raise ValueError(f"E={E} not divisible over {W - Rs} MoE ranks (W={W}, Rs={Rs})")
        return cls(W, Rs, S, E)

    @property
    def L(self) -> int:
        return self.E // (self.W - self.Rs)

    @property
    def P(self) -> int:
        return self.Rs // self.S if self.S else 0

    def is_shared_rank(self, rank: int) -> bool:
        return rank < self.Rs

    def local_expert_num(self, rank: int) -> int:
        return 1 if self.is_shared_rank(rank) else self.L


# --------------------------------------------------------------------------- senders

def pair_mask(expert_ids: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(BS,K) pairs selected by the mask (before the special-expert filter) and (BS,) active tokens.

    A 1-D mask activates its first sum(mask) tokens (the kernel counts, it does not gather;
    callers reject non-prefix masks).  A 2-D mask selects pairs; a token is active iff any
    of its pairs is.
    """
    ids = np.asarray(expert_ids)
    if ids.ndim != 2:
        raise ValueError(f"expert_ids must be (BS,K), got shape {ids.shape}")
    bs, k = ids.shape
    if mask is None:
        return np.ones((bs, k), dtype=bool), np.ones(bs, dtype=bool)
    m = np.asarray(mask, dtype=bool)
    if m.shape == (bs,):
        tokens = np.arange(bs) < np.count_nonzero(m)
        return np.repeat(tokens[:, None], k, axis=1), tokens
    if m.shape == (bs, k):
        return m, m.any(axis=1)
    raise ValueError(f"mask shape {m.shape} matches neither (BS,)={bs,} nor (BS,K)={bs, k}")


def active_pairs(expert_ids: np.ndarray, mask: np.ndarray | None,
                 E: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MoE pairs this rank sends, in flattened (t,k) order, plus its active tokens.

    Returns int64 ``(tokens, ks, active_tokens)``.  Pairs with id >= E (zero/copy/const
    experts) are never sent (§2.1 ``MaskZeroComputeExpert``) but do not deactivate the token.
    """
    ids = np.asarray(expert_ids)
    pairs, tokens_on = pair_mask(ids, mask)
    if np.any(pairs & (ids < 0)):
        raise ValueError("negative expert id in a selected pair")
    t, k = np.nonzero(pairs & (ids < E))
    return t.astype(np.int64), k.astype(np.int64), np.flatnonzero(tokens_on).astype(np.int64)


def rank_within_groups(keys: np.ndarray) -> np.ndarray:
    """For each element, how many earlier elements share its key (stable, vectorised)."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    first = np.searchsorted(ordered, ordered, side="left")
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = np.arange(len(keys)) - first
    return out


def a2_expand_idx(expert_ids: np.ndarray, mask: np.ndarray | None, E: int) -> np.ndarray:
    """Sender-side slot of every pair: entry t*K+k = #earlier valid pairs to the same expert.

    This is A2's expandIdx (``IndexSort``) and DispatchSetup's expand_idx (§2.4, §6).
    Pairs that are not sent (masked, special expert) hold 0: the kernel zero-fills the
    buffer and writes counts only for valid pairs.
    """
    ids = np.asarray(expert_ids)
    bs, k = ids.shape
    t, kk, _ = active_pairs(ids, mask, E)
    out = np.zeros(bs * k, dtype=np.int32)
    out[t * k + kk] = rank_within_groups(ids[t, kk].astype(np.int64))
    return out


# --------------------------------------------------------------------------- plans

@dataclass(frozen=True, eq=False)
class DispatchPlan:
    """What ONE destination rank receives, one entry per expandXOut row, in row order.

    ``expert`` is the smooth-scale row of each received row (MoE: e + S, S being 0 without
    shared ranks; shared copy: s), ``counts[le, src]`` the rows per (local expert, source
    rank).  Arrays are read-only.
    """

    dst_rank: int
    src_rank: np.ndarray
    token: np.ndarray
    k: np.ndarray
    expert: np.ndarray
    counts: np.ndarray
    is_shared_rank: bool

    def __post_init__(self) -> None:
        for name in ("src_rank", "token", "k", "expert", "counts"):
            getattr(self, name).flags.writeable = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DispatchPlan):
            return NotImplemented
        same_arrays = all(np.array_equal(getattr(self, n), getattr(other, n))
                          for n in ("src_rank", "token", "k", "expert", "counts"))
        return (same_arrays and self.dst_rank == other.dst_rank
                and self.is_shared_rank == other.is_shared_rank)

    @property
    def num_rows(self) -> int:
        return len(self.token)

    @property
    def local_expert_num(self) -> int:
        return self.counts.shape[0]

    def block_bounds(self) -> np.ndarray:
        """Row offsets of the (local expert, src rank) blocks: len L*W+1, localExpert-major."""
        return np.concatenate(([0], np.cumsum(self.counts.reshape(-1))))


def _make_plan(dst: int, shared: bool, *arrays: np.ndarray) -> DispatchPlan:
    """arrays: src_rank, token, k, expert, counts (copied to fresh contiguous int64)."""
    return DispatchPlan(dst, *(np.array(a, dtype=np.int64) for a in arrays), shared)


def _world_k(expert_ids: list, masks: list | None, W: int) -> int:
    if len(expert_ids) != W or (masks is not None and len(masks) != W):
        raise ValueError(f"need one expert_ids/mask per rank: W={W}, got {len(expert_ids)}")
    ks = {np.shape(ids)[1] for ids in expert_ids}
    if len(ks) != 1:
        raise ValueError(f"all ranks must share K, got {sorted(ks)}")
    return ks.pop()


def _masks(masks: list | None, W: int) -> list:
    return [None] * W if masks is None else list(masks)


def plan_dispatch(expert_ids: list, masks: list | None, dst_rank: int, *,
                  W: int, Rs: int, S: int, E: int) -> DispatchPlan:
    """Receive plan of ``dst_rank`` (§2.2/§2.3), looking only at what reaches that rank."""
    topo = Topology.make(W=W, Rs=Rs, S=S, E=E)
    K = _world_k(expert_ids, masks, W)
    masks = _masks(masks, W)
    if not 0 <= dst_rank < W:
        raise ValueError(f"dst_rank {dst_rank} outside [0, {W})")
    if topo.is_shared_rank(dst_rank):
        return _plan_shared(topo, expert_ids, masks, dst_rank, K)
    return _plan_moe(topo, expert_ids, masks, dst_rank)


def _plan_moe(topo: Topology, expert_ids: list, masks: list, d: int) -> DispatchPlan:
    first = (d - topo.Rs) * topo.L
    parts = []
    for r in range(topo.W):
        t, k, _ = active_pairs(expert_ids[r], masks[r], topo.E)
        e = np.asarray(expert_ids[r])[t, k].astype(np.int64)
        mine = (e >= first) & (e < first + topo.L)
        parts.append((np.full(np.count_nonzero(mine), r), t[mine], k[mine], e[mine]))
    src, tok, kk, e = (np.concatenate(c) for c in zip(*parts))
    block = (e - first) * topo.W + src
    # concatenation is rank-major in sender order, so a stable sort on the block keeps
    # the sender's flattened (t,k) order inside each (local expert, src rank) block
    order = np.argsort(block, kind="stable")
    counts = np.bincount(block, minlength=topo.L * topo.W).reshape(topo.L, topo.W)
    return _make_plan(d, False, src[order], tok[order], kk[order], e[order] + topo.S, counts)


def _plan_shared(topo: Topology, expert_ids: list, masks: list, d: int, K: int) -> DispatchPlan:
    s = d // topo.P
    counts = np.zeros((1, topo.W), dtype=np.int64)
    parts = []
    for r in range(d % topo.P, topo.W, topo.P):  # senders with r % P == d % P
        _, _, act = active_pairs(expert_ids[r], masks[r], topo.E)
        counts[0, r] = len(act)
        parts.append((np.full(len(act), r), act))
    src = np.concatenate([p[0] for p in parts])
    tok = np.concatenate([p[1] for p in parts])
    return _make_plan(d, True, src, tok, np.full(len(tok), K + s), np.full(len(tok), s), counts)


def plan_dispatch_world(expert_ids: list, masks: list | None, *,
                        W: int, Rs: int, S: int, E: int) -> list[DispatchPlan]:
    """All W receive plans in one stable sort over every (rank, pair); equals plan_dispatch per d."""
    topo = Topology.make(W=W, Rs=Rs, S=S, E=E)
    K = _world_k(expert_ids, masks, W)
    masks = _masks(masks, W)
    cols = [[] for _ in range(6)]  # src, token, k, expert, dest, local expert
    for r in range(W):
        t, k, act = active_pairs(expert_ids[r], masks[r], E)
        e = np.asarray(expert_ids[r])[t, k].astype(np.int64)
        rows = [np.full(len(t), r), t, k, e + topo.S, topo.Rs + e // topo.L, e % topo.L]
        for s in range(topo.S):
            n = len(act)
            shared = [np.full(n, r), act, np.full(n, K + s), np.full(n, s),
                      np.full(n, r % topo.P + s * topo.P), np.zeros(n, dtype=np.int64)]
            rows = [np.concatenate(p) for p in zip(rows, shared)]
        for col, part in zip(cols, rows):
            col.append(part)
    src, tok, kk, expert, dest, le = (np.concatenate(c).astype(np.int64) for c in cols)
    key = (dest * topo.L + le) * W + src
    order = np.argsort(key, kind="stable")
    counts = np.bincount(key, minlength=W * topo.L * W).reshape(W, topo.L, W)
    bounds = np.searchsorted(dest[order], np.arange(W + 1))
    plans = []
    for d in range(W):
        sel = order[bounds[d]:bounds[d + 1]]
        plans.append(_make_plan(d, topo.is_shared_rank(d), src[sel], tok[sel], kk[sel],
                                expert[sel], counts[d, :topo.local_expert_num(d)]))
    return plans


# --------------------------------------------------------------------------- receivers

def gather_block_rows(xs: list, plan: DispatchPlan, row_index: np.ndarray) -> np.ndarray:
    """out[i] = xs[plan.src_rank[i]][row_index[i]], one np.take per (local expert, src) block."""
    arrays = [np.asarray(x) for x in xs]
    shapes = {(a.shape[1:], a.dtype) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"per-rank arrays differ in row shape or dtype: {shapes}")
    row_shape, dtype = shapes.pop()
    out = np.empty((plan.num_rows, *row_shape), dtype=dtype)
    bounds = plan.block_bounds()
    W = plan.counts.shape[1]
    for b in np.flatnonzero(np.diff(bounds)):
        lo, hi = bounds[b], bounds[b + 1]
        # blocks are contiguous and single-source, so np.take writes straight into out
        np.take(arrays[b % W], row_index[lo:hi], axis=0, out=out[lo:hi], mode="clip")
    return out


def gather_rows(xs: list, plan: DispatchPlan) -> np.ndarray:
    """Rows ``xs[src][token]`` in the plan's row order (a single copy of the data)."""
    return gather_block_rows(xs, plan, plan.token)


def recv_counts_cumsum(counts: np.ndarray) -> np.ndarray:
    """epRecvCounts: inclusive cumsum over (localExpert-major, srcRank-minor) counts, int32."""
    return np.cumsum(counts.reshape(-1)).astype(np.int32)


def expert_token_nums(counts: np.ndarray, expert_token_nums_type: int) -> np.ndarray:
    """expertTokenNums (L,) int64: type 1 = rows per local expert, type 0 = their inclusive cumsum."""
    per_expert = counts.sum(axis=1).astype(np.int64)
    if expert_token_nums_type == 1:
        return per_expert
    if expert_token_nums_type == 0:
        return np.cumsum(per_expert)
    raise ValueError(f"expert_token_nums_type must be 0 or 1, got {expert_token_nums_type}")


def dispatch_outputs(plan: DispatchPlan, *, W: int, K: int, layout: str,
                     expert_token_nums_type: int, capacity_A: int, local_expert_num: int,
                     expert_scales: list | None = None,
                     a2_expand_idx: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Index outputs of DispatchV2 on the plan's rank, at capacity shapes, zeros where unwritten.

    Keys: ``assistInfoForCombineOut`` (A*128,) int32, ``epRecvCountsOut`` (W*L,) int32,
    ``expertTokenNumsOut`` (L,) int64, ``expandScalesOut`` (A,) float32.

    assistInfoForCombineOut depends on the product (§2.4; the seed says only that the values
    differ per product and must be passed to combine untouched); ``layout`` is the product's
    ``assist_layout`` fact (opgen.core.products):

    * ``triple`` (ascend910_93 / ascend950): the triple (srcRank, tokenIdx, k) of row i at
      [3i, 3i+3), k >= K for shared copies.
    * ``expand_idx`` (ascend910b): A2 fullmesh writes this rank's OWN send-side expandIdx there (entry
      t*K+k = slot of the pair inside its expert's block, see :func:`a2_expand_idx`), which
      A2 combine adds to the expert's window offset.  It is a property of the sender, not
      of the received rows, so the caller passes it as ``a2_expand_idx`` (BS*K,) and it
      lands at [0, BS*K).  The seed's description of this output ("the number of tokens
      sent to the same expert") matches this layout.

    expandScalesOut row i = expert_scales[src][token, k] for MoE rows; shared-copy rows are
    not filled by the sender (§2.4), so they stay 0, as do all rows when no scales are
    given.  Whether a product exposes this output (the seed: A3 hierarchy only, not on
    950) is the caller's decision.  tpRecvCountsOut is the caller's (TP).
    """
    if plan.counts.shape != (local_expert_num, W):
        raise ValueError(f"plan counts {plan.counts.shape} != (local_expert_num, W)"
                         f" = {(local_expert_num, W)}")
    if plan.num_rows > capacity_A:
        raise ValueError(f"{plan.num_rows} received rows exceed capacity A={capacity_A}")
    return {
        "assistInfoForCombineOut": _assist_info(plan, layout, capacity_A, a2_expand_idx),
        "epRecvCountsOut": recv_counts_cumsum(plan.counts),
        "expertTokenNumsOut": expert_token_nums(plan.counts, expert_token_nums_type),
        "expandScalesOut": _expand_scales(plan, K, capacity_A, expert_scales),
    }


def _assist_info(plan: DispatchPlan, layout: str, capacity_A: int,
                 a2_idx: np.ndarray | None) -> np.ndarray:
    out = np.zeros(capacity_A * ASSIST_INFO_PER_ROW, dtype=np.int32)
    if layout == EXPAND_IDX:
        if a2_idx is None:
            raise ValueError("the expand_idx layout needs the rank's own a2_expand_idx (see a2_expand_idx)")
        idx = np.asarray(a2_idx, dtype=np.int32).reshape(-1)
        if len(idx) > len(out):
            raise ValueError(f"a2_expand_idx has {len(idx)} entries, capacity is {len(out)}")
        out[:len(idx)] = idx
    elif layout == TRIPLE_LAYOUT:
        triples = np.stack([plan.src_rank, plan.token, plan.k], axis=1)
        out[:TRIPLE * plan.num_rows] = triples.reshape(-1)
    else:
        raise ValueError(f"unknown assistInfo layout {layout!r}, expected one of {ASSIST_LAYOUTS}")
    return out


def _expand_scales(plan: DispatchPlan, K: int, capacity_A: int,
                   expert_scales: list | None) -> np.ndarray:
    out = np.zeros(capacity_A, dtype=np.float32)
    if expert_scales is None:
        return out
    moe_row = plan.k < K
    for r, scales in enumerate(expert_scales):
        if scales is None:
            continue
        rows = np.flatnonzero(moe_row & (plan.src_rank == r))
        out[rows] = np.asarray(scales, dtype=np.float32)[plan.token[rows], plan.k[rows]]
    return out
