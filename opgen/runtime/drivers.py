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

from opgen.core.products import EXPAND_IDX
from opgen.runtime import codecs
from opgen.runtime import moe
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.rowbatch import ALL_ROWS, NeedsRouting, RowBatch
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


# ---- CombineV2 -------------------------------------------------------------------------------

def special_terms(info: OpInfo, st: Scope, E: int, H: int) -> tuple:
    """The spec's special experts on one token owner: consecutive id ranges after the E MoE experts, each term
    its formula over the owner's token rows (``routed(T)`` the row of T for the expert's index in its kind)."""
    out, lo = [], E
    for name, count_attr, formula, _ in info.specials:
        n = int(st.attr(count_attr) or 0)
        if formula is None:
            raise OpError(INVALID, name, f"special expert {name} has no formula on {info.name}: it only declares "
                                         "the ids a dispatch leaves unsent")

        def term(tokens, c, formula=formula, name=name):
            value = formula(RowBatch(st, st, tokens, np.asarray(c), H)).get("Moe")
            if value is None:
                raise OpError(INVALID, name, f"special expert {name} has no value (its formula assigns no Moe)")
            return np.broadcast_to(np.asarray(value, dtype=np.float32), (len(tokens), H))

        out.append(moe.SpecialTerm(lo, lo + n, term))
        lo += n
    return tuple(out)


def post_stage(info: OpInfo, st: Scope, reduced: np.ndarray, out: dict) -> tuple[str, ...]:
    """The spec's `post` stage over every token's fp32 reduced row (BS, H): each output it assigns gets one row
    per token (its shape past the first dim: (1, H), (1, 1), ...). Tokens the mask leaves out reduce to 0.
    Returns the outputs it wrote."""
    batch = RowBatch(st, st, ALL_ROWS, None, reduced.shape[1], count=reduced.shape[0])
    values = info.post(batch, reduced)
    for name, value in values.items():
        out[name][:] = batch.finish(name, value, out[name].shape[1:])
    return tuple(values)


def _returning_rows(scopes: list[Scope], layout: str, owner: int) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """For each expert rank d: (d, rows of d's expandX, token, k) of the rows that go back to ``owner``.

    The ``triple`` layout (ascend910_93 / ascend950) reads the triples DispatchV2 stored in
    assistInfoForCombine on the expert rank; ``expand_idx`` (ascend910b) keeps the sender-side index
    instead (semantics §2.4, §5: the row is the start of the (local expert, owner) block in
    epSendCounts plus expandIdx[t*K+k]).
    """
    topo = _topology(scopes[owner])
    W = topo["W"]
    out = []
    if layout == EXPAND_IDX:
        ids = data(scopes[owner].tensor("expertIds"))
        mask = data(scopes[owner].inputs.get("xActiveMaskOptional"))
        L = topo["E"] // W
        tok, kk, _ = moe.active_pairs(ids, mask, topo["E"])
        e = ids[tok, kk].astype(np.int64)
        idx = data(scopes[owner].tensor("assistInfoForCombine")).astype(np.int64)
        slot = idx[tok * ids.shape[1] + kk]
        for d in range(W):
            mine = np.flatnonzero(e // L == d)
            cum = data(scopes[d].tensor("epSendCounts")).astype(np.int64)
            block = (e[mine] % L) * W + owner
            start = np.where(block > 0, cum[np.maximum(block - 1, 0)], 0)
            out.append((d, start + slot[mine], tok[mine], kk[mine]))
        return out
    for d in range(W):
        L_d = int(scopes[d].let("localExpertNum"))
        cum = data(scopes[d].tensor("epSendCounts"))
        n = int(cum[W * L_d - 1]) if W * L_d else 0
        triples = data(scopes[d].tensor("assistInfoForCombine"))[:3 * n].reshape(n, 3).astype(np.int64)
        mine = np.flatnonzero(triples[:, 0] == owner)
        out.append((d, mine, triples[mine, 1], triples[mine, 2]))
    return out


def moe_combine(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """CombineV2: rows go back along the dispatch path, then each owner sums them per token (§5).

    The spec's quant formula maps one returned expandX row to the row the owner receives (its
    commQuantMode round trip); the fp32 k-ordered reduction is :func:`moe.reduce_window`.
    """
    if _tp(scopes[0]) > 1:
        raise OpError(INVALID, "tpWorldSize", "the numpy reference of CombineV2 has no TP (ReduceScatterV) path: "
                                              "the documents give no row order for it")
    results = {}
    for t in dests:
        st = scopes[t]
        topo = _topology(st)
        S = 0 if topo["Rs"] == 0 and topo["S"] == 1 else topo["S"]
        ids = data(st.tensor("expertIds"))
        K, H = ids.shape[1], st.dim("expandX", 1)
        window = np.zeros((ids.shape[0], K + S, H), dtype=np.float32)
        formula = info.quant[st.attr(info.quant_by)]
        for d, rows, tok, kk in _returning_rows(scopes, info.fact(product).assist_layout, t):
            if len(rows) == 0:
                continue
            batch = RowBatch(scopes[d], st, rows, np.zeros_like(rows), H)
            returned = formula(batch).get("xOut")
            if returned is None:
                raise OpError(INVALID, info.quant_by, f"{info.quant_by} {st.attr(info.quant_by)} has no formula "
                                                      f"for the returned rows")
            window[tok, kk] = codecs.to_f32(batch.finish("xOut", returned, (H,)), st.dtype("xOut"))
        shared_x = data(st.inputs.get("sharedExpertXOptional"))
        out = allocate(info, st)
        reduced = moe.reduce_window(
            window, expert_ids=ids, expert_scales=data(st.inputs.get("expertScales")),
            mask=data(st.inputs.get("xActiveMaskOptional")), S=S, E=topo["E"], K=K,
            specials=special_terms(info, st, topo["E"], H),
            shared_expert_x=None if shared_x is None else shared_x.reshape(ids.shape[0], H),
            out_dtype=np.float32 if info.post else out["xOut"].dtype)
        if info.post is None:
            out["xOut"][:] = reduced
        else:
            post_stage(info, st, reduced, out)
        results[t] = out
    return results


# ---- the Setup/Teardown family (Ascend 950, semantics §6) --------------------------------------
#
# The staging buffers carry opaque tails (scales and padding up to tokenMsgSize, URMA command
# descriptors): the references fill the documented part (the first H columns of each staged row,
# expandIdx, the delivered rows and counts) and leave the rest zero; the specs mark what is unspecified.

def _setup_topology(s: Scope) -> dict:
    return dict(W=s.attr("epWorldSize"), Rs=s.attr("sharedExpertRankNum"), S=s.attr("sharedExpertNum"),
                E=s.attr("moeExpertNum"))


def _staging(s: Scope) -> dict:
    """DispatchSetup's staging order on one rank: y row of every (token, k), k >= K for shared copies."""
    topo = _setup_topology(s)
    ids = data(s.tensor("expertIds"))
    mask = data(s.inputs.get("xActiveMaskOptional"))
    return moe.dispatch_setup_rank(x=np.zeros((ids.shape[0], 0), np.float32), expert_ids=ids, mask=mask, **topo)


def moe_dispatch_setup(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """Quantise (the spec's formula, smooth row of each row's own expert) and stage rows sorted by expert."""
    results = {}
    for d in dests:
        s = scopes[d]
        staged = _staging(s)
        pair_row = staged["pair_row"]
        t, k = np.nonzero(pair_row >= 0)
        rows = pair_row[t, k]
        ids = data(s.tensor("expertIds"))
        topo = moe.Topology.make(**_setup_topology(s))
        K = ids.shape[1]
        expert = np.where(k < K, ids[t, np.minimum(k, K - 1)].astype(np.int64) + topo.S, k - K)
        out = allocate(info, s)
        H = s.dim("x", 1)
        if len(rows):
            batch = RowBatch(s, s, t, expert, H)
            staged_rows = formula_output(info, s, batch, "yOut", (H,))
            out["yOut"][rows, :H] = staged_rows
        _put(out["expandIdxOut"], staged["expand_idx"])
        results[d] = out
    return results


def formula_output(info: OpInfo, s: Scope, batch: RowBatch, name: str, row_shape: tuple[int, ...]) -> np.ndarray:
    value = info.quant[s.attr(info.quant_by)](batch).get(name)
    if value is None:
        raise OpError(INVALID, info.quant_by, f"{info.quant_by} {s.attr(info.quant_by)} has no formula for {name} "
                                              f"with dtype {s.dtype(name)}")
    return batch.finish(name, value, row_shape)


def moe_dispatch_teardown(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """Deliver the staged rows in DispatchV2's row order; assistInfo holds the cumulative counts.

    The op's inputs carry no mask, so the staging order is recomputed with every token active
    (what the setup staged when it had no xActiveMask).
    """
    topo = _setup_topology(scopes[0])
    ids = [data(s.tensor("expertIds")) for s in scopes]
    staging = [_staging(s) for s in scopes]
    results = {}
    for d in dests:
        sd = scopes[d]
        plan = moe.plan_dispatch(ids, None, d, **topo)
        capacity = int(sd.let("A"))
        if plan.num_rows > capacity:
            raise OpError(INVALID, "expandXOut", f"rank {d} receives {plan.num_rows} rows but the spec's capacity "
                                                 f"A is {capacity}")
        H = sd.dim("x", 1)
        out = allocate(info, sd)
        for r in np.unique(plan.src_rank):
            idx = np.flatnonzero(plan.src_rank == r)
            y_rows = staging[int(r)]["pair_row"][plan.token[idx], plan.k[idx]]
            out["expandXOut"][idx] = data(scopes[int(r)].tensor("y"))[y_rows, :H]
        _put(out["assistInfoForCombineOut"], moe.recv_counts_cumsum(plan.counts))
        out["expertTokenNumsOut"][:] = moe.expert_token_nums(plan.counts, sd.attr("expertTokenNumsType"))
        results[d] = out
    return results


def moe_combine_setup(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """CombineSetup only sends: its outputs are a comm-quant staging buffer and URMA descriptors.

    With commQuantMode 0 (the only mode its products accept) neither carries data a caller may
    read, so every output is zero here and marked unspecified in the spec; what the op sends is
    observable through CombineTeardown, whose reference rebuilds it.
    """
    return {d: allocate(info, scopes[d]) for d in dests}


def moe_combine_teardown(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """x[t] = RINT(sum_k expertScales[t,k] * fp32(row)) over the rows peers' CombineSetup sent back.

    Expert rank d sends chunk (local expert le, owner t) of its expandX, located by the cumulative
    counts of the dispatch plan (what DispatchTeardown gave it as assistInfoForCombine); the pair
    (t, k) reads row expandIdx[t*K+k] of its expert's chunk.
    """
    topo = _setup_topology(scopes[0])
    ids = [data(s.tensor("expertIds")) for s in scopes]
    masks = [data(s.inputs.get("xActiveMaskOptional")) for s in scopes]
    plans = moe.plan_dispatch_world(ids, masks, **topo)
    results = {}
    for t in dests:
        st = scopes[t]
        H = st.dim("expandX", 1)
        window: dict[int, np.ndarray] = {}
        for d, plan in enumerate(plans):
            if plan.is_shared_rank:
                continue
            cum = moe.recv_counts_cumsum(plan.counts).astype(np.int64)
            starts = np.concatenate(([0], cum[:-1]))
            rows = data(scopes[d].tensor("expandX"))
            L = plan.counts.shape[0]
            for le in range(L):
                i = le * topo["W"] + t
                if cum[i] > starts[i]:
                    chunk = rows[starts[i]:cum[i]]
                    batch = RowBatch(scopes[d], st, np.arange(starts[i], cum[i]), np.zeros(cum[i] - starts[i], np.int64), H)
                    window[(d - topo["Rs"]) * L + le] = formula_output(info, st, batch, "xOut", (H,)) if len(chunk) else chunk
        out = allocate(info, st)
        out["xOut"][:] = moe.combine_teardown_rank(
            window=window, expert_ids=ids[t], expand_idx=data(st.tensor("expandIdx")),
            expert_scales=data(st.tensor("expertScales")), mask=masks[t], E=topo["E"], H=H,
            out_dtype=out["xOut"].dtype)
        results[t] = out
    return results


DRIVERS: dict[str, Driver] = {
    "moe_dispatch": moe_dispatch,
    "moe_combine": moe_combine,
    "moe_dispatch_setup": moe_dispatch_setup,
    "moe_dispatch_teardown": moe_dispatch_teardown,
    "moe_combine_setup": moe_combine_setup,
    "moe_combine_teardown": moe_combine_teardown,
}
RANK_ATTRS: dict[str, Callable[[int, Mapping], dict]] = {name: ep_rank_attrs for name in DRIVERS}


def run(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    return DRIVERS[info.semantics](info, scopes, product, dests)
