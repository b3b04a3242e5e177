"""The moe_dispatch_teardown family's test world: DispatchTeardown's positive world (y as DispatchSetup staged it) and
what it writes of its capacity outputs."""
from __future__ import annotations

import numpy as np

from opgen.core.products import ProductFacts
from opgen.harness.testworld import World, rank_metas, senders, topology, values, zeros
from opgen.runtime import moe


def moe_dispatch_teardown(case: dict, attrs: dict, facts: ProductFacts, specials: tuple = ()) -> World:
    """DispatchTeardown: y holds what DispatchSetup staged (the tokens themselves when y has x's dtype)."""
    metas = rank_metas(case)
    world = senders(case, attrs, metas, "x", specials=specials)
    topo = topology(attrs)
    for r, m in metas.items():
        inp = world.inputs[r]
        for name, meta in m.items():
            if meta is None:
                inp[name] = None
            elif name == "x":
                inp[name] = world.tokens[r]
            elif name == "expertIds":
                inp[name] = world.expert_ids[r]
            elif name == "y":
                y = values(case, r, name, meta)
                if meta[0] == m["x"][0]:
                    staged = moe.dispatch_setup_rank(x=world.tokens[r], expert_ids=world.expert_ids[r], **topo)["y"]
                    y = np.zeros(tuple(meta[1]), dtype=staged.dtype)
                    y[:staged.shape[0], :staged.shape[1]] = staged
                inp[name] = y
            else:
                inp[name] = zeros(meta)
    world.masks = [None] * len(metas)
    return world


BUILDER = moe_dispatch_teardown


# (ref, case, inputs, rank, attrs, output, expected) -> the index of what a device writes of the output (None: all
# of it); the twin's poison check compares only there
def _dispatch_teardown_written(ref, case, inputs, rank, attrs, name, expected):
    W, L = int(attrs["epWorldSize"]), len(expected["expertTokenNumsOut"])
    if name in ("expandXOut", "dynamicScalesOut"):
        return np.s_[:int(expected["assistInfoForCombineOut"][W * L - 1]) if W * L else 0]
    if name == "assistInfoForCombineOut":
        return np.s_[:W * L]
    return None


WRITTEN_REGION = _dispatch_teardown_written
