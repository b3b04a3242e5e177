"""The moe_combine_setup family's test world: CombineSetup's positive world (expert rows in DispatchTeardown's order)
and its inputs as a Teardown's prelude."""
from __future__ import annotations

import numpy as np

from opgen.core.products import ProductFacts
from opgen.harness.testworld import World, expert_rows, put, rank_metas, senders, topology
from opgen.runtime import moe
from opgen.runtime.scope import data


def moe_combine_setup(case: dict, attrs: dict, facts: ProductFacts, specials: tuple = ()) -> World:
    """CombineSetup: expert rows in DispatchTeardown's order with its cumulative counts."""
    metas = rank_metas(case)
    world = senders(case, attrs, metas, "expandX", lambda m: (m["expandX"][0], (m["expertIds"][1][0],
                                                                                 m["expandX"][1][1])))
    world.masks = [None] * len(metas)
    plans, rows = expert_rows(world, attrs, case["product"], metas)
    for d, m in metas.items():
        inp = world.inputs[d]
        inp["expandX"] = put(m["expandX"], rows[d] if rows[d] is not None else [])
        inp["expertIds"] = world.expert_ids[d]
        inp["assistInfoForCombine"] = put(m["assistInfoForCombine"], moe.recv_counts_cumsum(plans[d].counts))
    return world


BUILDER = moe_combine_setup


# (world of the Teardown this family is the prelude of, attrs) -> this op's inputs per rank in front of it: the
# same tokens and routes
def _combine_setup_inputs(world: World, attrs: dict) -> list[dict]:
    out = []
    topo = topology(attrs)
    masks = [data(inp.get("xActiveMaskOptional")) for inp in world.inputs]
    plans = moe.plan_dispatch_world([data(inp["expertIds"]) for inp in world.inputs], masks, **topo)
    for inp, plan in zip(world.inputs, plans):
        rows = np.shape(data(inp["expandX"]))[0]
        assist = np.zeros(rows * 128, dtype=np.int32)  # (A * 128,): DispatchTeardown's cumulative counts
        cum = moe.recv_counts_cumsum(plan.counts)
        assist[:len(cum)] = cum
        out.append({"expandX": inp["expandX"], "expertIds": inp["expertIds"], "assistInfoForCombine": assist})
    return out


PRELUDE_INPUTS = _combine_setup_inputs
