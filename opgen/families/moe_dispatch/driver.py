"""The moe_dispatch family's numpy driver: DispatchV2's EP AllToAllV (and TP AllGatherV)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from opgen.core.products import EXPAND_IDX
from opgen.runtime import moe
from opgen.runtime.driving import ep_rank_attrs, put, topology, tp_size
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.rowbatch import ALL_ROWS, NeedsRouting, RowBatch
from opgen.runtime.scope import INVALID, Scope, data


def _per_token(info: OpInfo, src: Scope, dst: Scope, cache: dict) -> dict[str, np.ndarray] | None:
    """The formula applied once to every token of ``src``, when it does not depend on the destination.

    Without per-expert smooth scales a token quantises the same way for every expert it goes to,
    so quantising the sender's BS tokens once and gathering beats quantising BS*K copies.
    Returns None when the formula reads ``routed(...)``.  Cached per (sender, output dtypes).
    """
    # Senders quantise into the dtypes the receivers chose; those are the same on every rank.
    key = (id(src), frozenset(dst.out_dtypes.items()), dst.attr(info.quant_by))
    if key not in cache:
        batch = RowBatch(src, dst, ALL_ROWS, None, src.dim("x", 1), count=src.dim("x", 0))
        try:
            values = info.quant[dst.attr(info.quant_by)](batch)
            cache[key] = {name: (batch, v) for name, v in values.items()}
        except NeedsRouting:
            cache[key] = None
    return cache[key]


def _blocks_of(bounds: np.ndarray, W: int, src: int) -> np.ndarray:
    """Indices of the non-empty (local expert, src) blocks of one source rank."""
    nonempty = np.flatnonzero(np.diff(bounds))
    return nonempty[nonempty % W == src]


def _quantize_rows(info: OpInfo, scopes: list[Scope], dst: int, plan: moe.DispatchPlan,
                   out: dict[str, np.ndarray], cache: dict) -> None:
    """Run the spec's quant formula on every row ``dst`` receives, one batch per sender."""
    sd = scopes[dst]
    formula = info.quant[sd.attr(info.quant_by)]
    assigned: set[str] = set()
    width = sd.dim("x", 1)
    bounds = plan.block_bounds()
    W = plan.counts.shape[1]
    for r in np.unique(plan.src_rank):
        tokens = _per_token(info, scopes[int(r)], sd, cache)
        if tokens is not None:
            for name, (batch, value) in tokens.items():
                rows = batch.finish(name, value, out[name].shape[1:])
                # (local expert, src) blocks are contiguous: gather straight into the output, one copy
                for b in _blocks_of(bounds, W, int(r)):
                    lo, hi = bounds[b], bounds[b + 1]
                    np.take(rows, plan.token[lo:hi], axis=0, out=out[name][lo:hi], mode="clip")
                assigned.add(name)
            continue
        idx = np.flatnonzero(plan.src_rank == r)
        batch = RowBatch(scopes[int(r)], sd, plan.token[idx], plan.expert[idx], width)
        for name, value in formula(batch).items():
            out[name][idx] = batch.finish(name, value, out[name].shape[1:])
            assigned.add(name)
    if plan.num_rows and info.roles.get("expandXOut", "expandXOut") not in assigned:  # the formulas' own names
        raise OpError(INVALID, "expandXOut", f"quant mode {sd.attr(info.quant_by)} has no formula for "
                                             f"expandXOut with dtype {sd.dtype('expandXOut')}")


def _dispatch_group(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """DispatchV2 inside one EP group (scopes indexed by epRankId)."""
    s0 = scopes[0]
    topo = topology(s0)
    ids = [data(s.tensor("expertIds")) for s in scopes]
    masks = [data(s.inputs.get("xActiveMaskOptional")) for s in scopes]
    K = ids[0].shape[1]
    if len(dests) == len(scopes):
        plans = dict(enumerate(moe.plan_dispatch_world(ids, masks, **topo)))
    else:
        plans = {d: moe.plan_dispatch(ids, masks, d, **topo) for d in dests}
    expert_scales = [data(s.inputs.get("expertScalesOptional")) for s in scopes]
    cache: dict = {}
    results = {}
    for d in dests:
        sd, plan = scopes[d], plans[d]
        out = allocate(info, sd)
        capacity = int(sd.let("A"))
        if plan.num_rows > capacity:
            raise OpError(INVALID, "expandXOut", f"rank {d} receives {plan.num_rows} rows but the spec's capacity "
                                                 f"A is {capacity}")
        _quantize_rows(info, scopes, d, plan, out, cache)
        layout = info.fact(product).assist_layout
        a2_idx = moe.a2_expand_idx(ids[d], masks[d], topo["E"]) if layout == EXPAND_IDX else None
        routed = moe.dispatch_outputs(plan, W=topo["W"], K=K, layout=layout,
                                      expert_token_nums_type=sd.attr("expertTokenNumsType"), capacity_A=capacity,
                                      local_expert_num=int(sd.let("localExpertNum")),
                                      expert_scales=expert_scales, a2_expand_idx=a2_idx)
        for name, values in routed.items():
            if values.shape == out[name].shape and values.dtype == out[name].dtype:
                out[name] = values  # already a capacity-sized array: no second copy
            else:
                put(out[name], values)
        results[d] = out
    return results


def moe_dispatch(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """EP AllToAllV per TP slice, then (tpWorldSize 2) the TP AllGatherV of the two slices.

    With TP, world rank i is (ep = i // 2, tp = i % 2): each tp slice is an EP group of
    epWorldSize ranks, and a rank's outputs are its own rows followed by its TP peer's
    (semantics §2.4, legacy TP path; seed: AllGatherV(allToAllXOut)).
    """
    T = tp_size(scopes[0])
    if T == 1:
        return _dispatch_group(info, scopes, product, dests)
    W = len(scopes) // T
    want = sorted({(i // T) for i in dests})
    slices = {tp: _dispatch_group(info, scopes[tp::T], product, want) for tp in range(T)}
    results = {}
    for i in dests:
        ep, tp = divmod(i, T)
        own, peer = slices[tp][ep], slices[1 - tp][ep]
        out = allocate(info, scopes[i])
        n_own = int(own["epRecvCountsOut"][W * int(scopes[i].let("localExpertNum")) - 1])
        n_peer = int(peer["epRecvCountsOut"][W * int(scopes[i].let("localExpertNum")) - 1])
        for name in ("expandXOut", "dynamicScalesOut", "expandScalesOut"):
            rows = np.concatenate([own[name][:n_own], peer[name][:n_peer]])
            out[name][:len(rows)] = rows
        put(out["assistInfoForCombineOut"], own["assistInfoForCombineOut"])
        put(out["epRecvCountsOut"], np.concatenate([own["epRecvCountsOut"][:W], peer["epRecvCountsOut"][:W]]))
        out["expertTokenNumsOut"][:] = own["expertTokenNumsOut"] + peer["expertTokenNumsOut"]
        counts = np.zeros(T, dtype=np.int32)
        counts[tp], counts[1 - tp] = n_own, n_peer
        put(out["tpRecvCountsOut"], counts)
        results[i] = out
    return results


DRIVER = moe_dispatch
RANK_ATTRS = ep_rank_attrs
