"""The moe_dispatch_teardown family's numpy driver: the rows DispatchSetup staged, delivered.

The Setup/Teardown family (Ascend 950, semantics §6): the staging buffers carry opaque tails (scales and padding up
to tokenMsgSize, URMA command descriptors); the references fill the documented part (the first H columns of each
staged row, expandIdx, the delivered rows and counts) and leave the rest zero; the specs mark what is unspecified."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from opgen.families.moe_dispatch_setup.driver import staging
from opgen.runtime import moe
from opgen.runtime.driving import ep_rank_attrs, put, topology
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.scope import INVALID, Scope, data


def moe_dispatch_teardown(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """Deliver the staged rows in DispatchV2's row order; assistInfo holds the cumulative counts.

    The op's inputs carry no mask, so the staging order is recomputed with every token active
    (what the setup staged when it had no xActiveMask).
    """
    topo = topology(scopes[0])
    ids = [data(s.tensor("expertIds")) for s in scopes]
    staged = [staging(s) for s in scopes]
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
            y_rows = staged[int(r)]["pair_row"][plan.token[idx], plan.k[idx]]
            out["expandXOut"][idx] = data(scopes[int(r)].tensor("y"))[y_rows, :H]
        put(out["assistInfoForCombineOut"], moe.recv_counts_cumsum(plan.counts))
        out["expertTokenNumsOut"][:] = moe.expert_token_nums(plan.counts, sd.attr("expertTokenNumsType"))
        results[d] = out
    return results


DRIVER = moe_dispatch_teardown
RANK_ATTRS = ep_rank_attrs
