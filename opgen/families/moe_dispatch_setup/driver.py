"""The moe_dispatch_setup family's numpy driver: DispatchSetup's staged rows.

The Setup/Teardown family (Ascend 950, semantics §6): the staging buffers carry opaque tails (scales and padding up
to tokenMsgSize, URMA command descriptors); the references fill the documented part (the first H columns of each
staged row, expandIdx, the delivered rows and counts) and leave the rest zero; the specs mark what is unspecified."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from opgen.runtime import moe
from opgen.runtime.driving import ep_rank_attrs, formula_output, put, topology
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.rowbatch import RowBatch
from opgen.runtime.scope import Scope, data


def staging(s: Scope) -> dict:
    """DispatchSetup's staging order on one rank: y row of every (token, k), k >= K for shared copies."""
    topo = topology(s)
    ids = data(s.tensor("expertIds"))
    mask = data(s.inputs.get("xActiveMaskOptional"))
    return moe.dispatch_setup_rank(x=np.zeros((ids.shape[0], 0), np.float32), expert_ids=ids, mask=mask, **topo)


def moe_dispatch_setup(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """Quantise (the spec's formula, smooth row of each row's own expert) and stage rows sorted by expert."""
    results = {}
    for d in dests:
        s = scopes[d]
        staged = staging(s)
        pair_row = staged["pair_row"]
        t, k = np.nonzero(pair_row >= 0)
        rows = pair_row[t, k]
        ids = data(s.tensor("expertIds"))
        topo = moe.Topology.make(**topology(s))
        K = ids.shape[1]
        expert = np.where(k < K, ids[t, np.minimum(k, K - 1)].astype(np.int64) + topo.S, k - K)
        out = allocate(info, s)
        H = s.dim("x", 1)
        if len(rows):
            batch = RowBatch(s, s, t, expert, H)
            staged_rows = formula_output(info, s, batch, "yOut", (H,))
            out["yOut"][rows, :H] = staged_rows
        put(out["expandIdxOut"], staged["expand_idx"])
        results[d] = out
    return results


DRIVER = moe_dispatch_setup
RANK_ATTRS = ep_rank_attrs
