"""Data-movement drivers, one per ``semantics`` a spec can name.

A driver receives the validated scope of every rank and produces each rank's
outputs; the op-specific numbers (capacities, quant formulas, output shapes
and dtypes) come from the spec through ``OpInfo``.  Drivers are written
against the aclnn parameter names of their op family (the seed documents'
names), which the analyzer guarantees the spec declares.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from opgen.runtime import moe
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.rowbatch import RowBatch
from opgen.runtime.scope import INVALID, Scope, data

Driver = Callable[[OpInfo, list[Scope], str, Sequence[int]], dict[int, dict[str, np.ndarray]]]


def ep_rank_attrs(i: int, attrs: Mapping) -> dict:
    """Rank ids of world rank i: epRankId = i // T, tpRankId = i % T, T = max(tpWorldSize, 1)."""
    t = max(int(attrs.get("tpWorldSize", 0) or 0), 1)
    out = {"epRankId": i // t}
    if "tpWorldSize" in attrs or t > 1:
        out["tpRankId"] = i % t
    return out


def _put(out: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` into the leading elements of a capacity-sized output."""
    flat = out.reshape(-1)
    v = np.asarray(values).reshape(-1)
    if v.size > flat.size:
        raise OpError(INVALID, "shape", f"{v.size} values do not fit an output of {flat.size} elements")
    flat[:v.size] = v


def _topology(s: Scope) -> dict:
    return dict(W=s.attr("epWorldSize"), Rs=s.attr("sharedExpertRankNum"), S=s.attr("sharedExpertNum"),
                E=s.attr("moeExpertNum"))


def _tp(s: Scope) -> int:
    return max(s.attrs.get("tpWorldSize", 0), 1)


def _quantize_rows(info: OpInfo, scopes: list[Scope], dst: int, plan: moe.DispatchPlan,
                   out: dict[str, np.ndarray]) -> None:
    """Run the spec's quant formula on every row ``dst`` receives, one batch per sender."""
    sd = scopes[dst]
    formula = info.quant[sd.attr(info.quant_by)]
    assigned: set[str] = set()
    for r in np.unique(plan.src_rank):
        idx = np.flatnonzero(plan.src_rank == r)
        batch = RowBatch(scopes[int(r)], sd, plan.token[idx], plan.expert[idx])
        for name, value in formula(batch).items():
            out[name][idx] = batch.finish(name, value, out[name].shape[1:])
            assigned.add(name)
    if plan.num_rows and "expandXOut" not in assigned:
        raise OpError(INVALID, "expandXOut", f"quant mode {sd.attr(info.quant_by)} has no formula for "
                                             f"expandXOut with dtype {sd.dtype('expandXOut')}")


def _dispatch_group(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """DispatchV2 inside one EP group (scopes indexed by epRankId)."""
    s0 = scopes[0]
    topo = _topology(s0)
    ids = [data(s.tensor("expertIds")) for s in scopes]
    masks = [data(s.inputs.get("xActiveMaskOptional")) for s in scopes]
    K = ids[0].shape[1]
    if len(dests) == len(scopes):
        plans = dict(enumerate(moe.plan_dispatch_world(ids, masks, **topo)))
    else:
        plans = {d: moe.plan_dispatch(ids, masks, d, **topo) for d in dests}
    expert_scales = [data(s.inputs.get("expertScalesOptional")) for s in scopes]
    results = {}
    for d in dests:
        sd, plan = scopes[d], plans[d]
        out = allocate(info, sd)
        capacity = int(sd.let("A"))
        if plan.num_rows > capacity:
            raise OpError(INVALID, "expandXOut", f"rank {d} receives {plan.num_rows} rows but the spec's capacity "
                                                 f"A is {capacity}")
        _quantize_rows(info, scopes, d, plan, out)
        a2_idx = moe.a2_expand_idx(ids[d], masks[d], topo["E"]) if product == "ascend910b" else None
        routed = moe.dispatch_outputs(plan, W=topo["W"], K=K, product=product,
                                      expert_token_nums_type=sd.attr("expertTokenNumsType"), capacity_A=capacity,
                                      local_expert_num=int(sd.let("localExpertNum")),
                                      expert_scales=expert_scales, a2_expand_idx=a2_idx)
        for name, values in routed.items():
            _put(out[name], values)
        results[d] = out
    return results


def moe_dispatch(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """EP AllToAllV per TP slice, then (tpWorldSize 2) the TP AllGatherV of the two slices.

    With TP, world rank i is (ep = i // 2, tp = i % 2): each tp slice is an EP group of
    epWorldSize ranks, and a rank's outputs are its own rows followed by its TP peer's
    (semantics §2.4, legacy TP path; seed: AllGatherV(allToAllXOut)).
    """
    T = _tp(scopes[0])
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
        _put(out["assistInfoForCombineOut"], own["assistInfoForCombineOut"])
        _put(out["epRecvCountsOut"], np.concatenate([own["epRecvCountsOut"][:W], peer["epRecvCountsOut"][:W]]))
        out["expertTokenNumsOut"][:] = own["expertTokenNumsOut"] + peer["expertTokenNumsOut"]
        counts = np.zeros(T, dtype=np.int32)
        counts[tp], counts[1 - tp] = n_own, n_peer
        _put(out["tpRecvCountsOut"], counts)
        results[i] = out
    return results


DRIVERS: dict[str, Driver] = {
    "moe_dispatch": moe_dispatch,
}
RANK_ATTRS: dict[str, Callable[[int, Mapping], dict]] = {
    "moe_dispatch": ep_rank_attrs,
}


def run(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    return DRIVERS[info.semantics](info, scopes, product, dests)
