"""The moe_dispatch_setup family's test world: DispatchSetup's positive world (DispatchV2's), what it writes of yOut,
and its inputs as a Teardown's prelude."""
from __future__ import annotations

import numpy as np

from opgen.harness.testworld import World, token_world, topology
from opgen.runtime import moe
from opgen.runtime.scope import data

BUILDER = token_world


# (ref, case, inputs, rank, attrs, output, expected) -> the index of what a device writes of the output (None: all
# of it); the twin's poison check compares only there
def _dispatch_setup_written(ref, case, inputs, rank, attrs, name, expected):
    if name == "yOut":  # staged rows; tails past H are opaque
        ids = data(inputs["expertIds"])
        staged = moe.dispatch_setup_rank(x=np.zeros((ids.shape[0], 0), np.float32), expert_ids=ids,
                                         mask=data(inputs.get("xActiveMaskOptional")), **topology(attrs))
        rows = np.unique(staged["pair_row"][staged["pair_row"] >= 0])
        return np.s_[rows, :np.shape(data(inputs["x"]))[1]]
    return None


WRITTEN_REGION = _dispatch_setup_written


# (world of the Teardown this family is the prelude of, attrs) -> this op's inputs per rank in front of it: the
# same tokens and routes
def _dispatch_setup_inputs(world: World, attrs: dict) -> list[dict]:
    return [{"x": inp["x"], "expertIds": inp["expertIds"], "scalesOptional": None, "xActiveMaskOptional": None}
            for inp in world.inputs]


PRELUDE_INPUTS = _dispatch_setup_inputs
