"""The moe_combine family's test world: CombineV2's positive world: the rows identity experts return, with DispatchV2's
assist info and counts."""
from __future__ import annotations

from opgen.core.products import EXPAND_IDX, ProductFacts
from opgen.harness.testworld import World, expert_rows, put, rank_metas, senders, topology, values, zeros
from opgen.runtime import moe


def moe_combine(case: dict, attrs: dict, facts: ProductFacts, specials: tuple = ()) -> World:
    """CombineV2: expandX holds the rows identity experts return, with DispatchV2's assist info and counts."""
    metas = rank_metas(case)
    world = senders(case, attrs, metas, "expandX", lambda m: (m["expandX"][0], (m["expertIds"][1][0],
                                                                                 m["expandX"][1][1])), specials)
    plans, rows = expert_rows(world, attrs, case["product"], metas)
    topo = topology(attrs)
    K = world.expert_ids[0].shape[1]
    for d, m in metas.items():
        plan = plans[d]
        capacity = max(plan.num_rows, m["assistInfoForCombine"][1][0] // 128)
        a2 = moe.a2_expand_idx(world.expert_ids[d], world.masks[d], topo["E"]) \
            if facts.assist_layout == EXPAND_IDX else None
        routed = moe.dispatch_outputs(plan, W=topo["W"], K=K, layout=facts.assist_layout, expert_token_nums_type=1,
                                      capacity_A=capacity, local_expert_num=plan.local_expert_num,
                                      expert_scales=world.weights, a2_expand_idx=a2)
        inp = world.inputs[d]
        for name, meta in m.items():
            if meta is None:
                inp[name] = None
            elif name == "expandX":
                inp[name] = put(meta, rows[d] if rows[d] is not None else [])
            elif name == "expertIds":
                inp[name] = world.expert_ids[d]
            elif name == "assistInfoForCombine":
                inp[name] = put(meta, routed["assistInfoForCombineOut"])
            elif name == "epSendCounts":
                inp[name] = put(meta, routed["epRecvCountsOut"])
            elif name == "expandScalesOptional":
                inp[name] = put(meta, routed["expandScalesOut"])
            elif name == "expertScales":
                inp[name] = world.weights[d]
            elif name == "xActiveMaskOptional":
                inp[name] = world.masks[d]
            elif name in ("tpSendCountsOptional", "elasticInfoOptional", "performanceInfoOptional",
                          "activationScaleOptional", "weightScaleOptional", "groupListOptional"):
                inp[name] = zeros(meta)
            else:  # oriX, const expert coefficients, sharedExpertX: values
                inp[name] = values(case, d, name, meta, -1.0, 1.0)
    return world


BUILDER = moe_combine
