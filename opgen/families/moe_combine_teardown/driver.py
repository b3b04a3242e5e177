"""The moe_combine_teardown family's numpy driver: each owner reads its pairs' rows and reduces.

The Setup/Teardown family (Ascend 950, semantics §6): the staging buffers carry opaque tails (scales and padding up
to tokenMsgSize, URMA command descriptors); the references fill the documented part (the first H columns of each
staged row, expandIdx, the delivered rows and counts) and leave the rest zero; the specs mark what is unspecified."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from opgen.runtime import moe
from opgen.runtime.driving import ep_rank_attrs, formula_output, topology
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.rowbatch import RowBatch
from opgen.runtime.scope import Scope, data


def moe_combine_teardown(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """x[t] = RINT(sum_k expertScales[t,k] * fp32(row)) over the rows peers' CombineSetup sent back.

    Expert rank d sends chunk (local expert le, owner t) of its expandX, located by the cumulative
    counts of the dispatch plan (what DispatchTeardown gave it as assistInfoForCombine); the pair
    (t, k) reads row expandIdx[t*K+k] of its expert's chunk.
    """
    topo = topology(scopes[0])
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


DRIVER = moe_combine_teardown
RANK_ATTRS = ep_rank_attrs
