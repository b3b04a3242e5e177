"""The moe_dispatch family's test world: DispatchV2's positive world (tokens, routes, masks, weights) and what a device
writes of its capacity outputs."""
from __future__ import annotations

import numpy as np

from opgen.core.products import EXPAND_IDX
from opgen.harness.testworld import formula_outputs, token_world
from opgen.runtime.scope import data

BUILDER = token_world


def _active_tokens(inputs) -> int:
    """Tokens of the rank that take part (xActiveMask's leading trues; all of them without a mask)."""
    mask = inputs.get("xActiveMaskOptional")
    tokens = np.shape(data(inputs["expertIds"]))[0]
    return tokens if mask is None else int(np.count_nonzero(np.asarray(data(mask)).reshape(tokens, -1).any(axis=1)))


# (ref, case, inputs, rank, attrs, output, expected) -> the index of what a device writes of the output (None: all
# of it); the twin's poison check compares only there
def _dispatch_written(ref, case, inputs, rank, attrs, name, expected):
    T = max(int(attrs.get("tpWorldSize", 0) or 0), 1)
    W, L = int(attrs["epWorldSize"]), len(expected["expertTokenNumsOut"])
    if T > 1:  # own rows, then the TP peer's (the reference's AllGatherV)
        tp = np.asarray(expected["tpRecvCountsOut"]).astype(np.int64)
        rows, own = int(tp.sum()), int(tp[int(attrs["tpRankId"])])
    else:
        rows = own = int(expected["epRecvCountsOut"][W * L - 1]) if W * L else 0
    if name == "expandXOut":
        return np.s_[:rows]
    if name == "dynamicScalesOut":  # only quant modes (and branches) that produce scales write them
        return np.s_[:rows if name in formula_outputs(ref, case, inputs, rank) else 0]
    expand_idx = ref.INFO.fact(case["product"]).assist_layout == EXPAND_IDX  # Atlas A2
    if name == "expandScalesOut":  # the senders' weights of MoE rows: none without them, none on shared ranks
        shared_rank = int(attrs["epRankId"]) < int(attrs.get("sharedExpertRankNum", 0) or 0)
        # doc (A2): 当commAlg = "hierarchy"，expandScalesOut内容有效 — the A2 fullmesh kernel never writes it
        # (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h has no expandScales)
        fullmesh_a2 = expand_idx and attrs.get("commAlg") != "hierarchy"
        return np.s_[:0 if inputs.get("expertScalesOptional") is None or shared_rank or fullmesh_a2 else rows]
    if name == "assistInfoForCombineOut":  # A2: the sender's expandIdx of its active tokens; A3 / 950: a triple per row
        # code: moe_distribute_dispatch_a2.h IndexSort copies activeMaskBsCnt_ * axisK_ entries of expandIdx out
        return np.s_[:_active_tokens(inputs) * np.shape(data(inputs["expertIds"]))[-1] if expand_idx else 3 * own]
    if name == "epRecvCountsOut":  # the cumulative counts (A2's output is longer)
        return np.s_[:T * W if T > 1 else W * L]
    if name == "tpRecvCountsOut":  # only a TP exchange counts anything
        return np.s_[:T if T > 1 else 0]
    return None


WRITTEN_REGION = _dispatch_written
