"""The moe_combine_teardown family's test world: CombineTeardown's positive world: every expert rank's rows (identity
experts) and each owner's expandIdx."""
from __future__ import annotations

from opgen.core.products import ProductFacts
from opgen.harness.testworld import World, expert_rows, put, rank_metas, senders, topology, values, zeros
from opgen.runtime import moe


def moe_combine_teardown(case: dict, attrs: dict, facts: ProductFacts, specials: tuple = ()) -> World:
    """CombineTeardown: every expert rank's rows (identity experts) and each owner's expandIdx."""
    metas = rank_metas(case)
    world = senders(case, attrs, metas, "expandX", lambda m: (m["expandX"][0], (m["expertIds"][1][0],
                                                                                 m["expandX"][1][1])))
    plans, rows = expert_rows(world, attrs, case["product"], metas)
    E = topology(attrs)["E"]
    for d, m in metas.items():
        inp = world.inputs[d]
        for name, meta in m.items():
            if meta is None:
                inp[name] = None
            elif name == "expandX":
                inp[name] = put(meta, rows[d] if rows[d] is not None else [])
            elif name == "expertIds":
                inp[name] = world.expert_ids[d]
            elif name == "expandIdx":
                inp[name] = moe.a2_expand_idx(world.expert_ids[d], world.masks[d], E)
            elif name == "expertScales":
                inp[name] = world.weights[d]
            elif name == "xActiveMaskOptional":
                inp[name] = world.masks[d]
            elif name == "sharedExpertXOptional":
                inp[name] = values(case, d, name, meta, -1.0, 1.0)
            else:
                inp[name] = zeros(meta)
    return world


BUILDER = moe_combine_teardown
