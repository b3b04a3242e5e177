"""The moe_combine family's numpy driver: CombineV2's rows back to their tokens, reduced (and a spec's post stage)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from opgen.core.products import EXPAND_IDX
from opgen.runtime import codecs, moe
from opgen.runtime.driving import ep_rank_attrs, post_stage, special_terms, topology, tp_size
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.rowbatch import RowBatch
from opgen.runtime.scope import INVALID, Scope, data


def _returning_rows(scopes: list[Scope], layout: str, owner: int) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """For each expert rank d: (d, rows of d's expandX, token, k) of the rows that go back to ``owner``.

    The ``triple`` layout (ascend910_93 / ascend950) reads the triples DispatchV2 stored in
    assistInfoForCombine on the expert rank; ``expand_idx`` (ascend910b) keeps the sender-side index
    instead (semantics §2.4, §5: the row is the start of the (local expert, owner) block in
    epSendCounts plus expandIdx[t*K+k]).
    """
    topo = topology(scopes[owner])
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
    if tp_size(scopes[0]) > 1:
        raise OpError(INVALID, "tpWorldSize", "the numpy reference of CombineV2 has no TP (ReduceScatterV) path: "
                                              "the documents give no row order for it")
    results = {}
    for t in dests:
        st = scopes[t]
        topo = topology(st)
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


DRIVER = moe_combine
RANK_ATTRS = ep_rank_attrs
