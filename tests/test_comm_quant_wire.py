"""CombineV2's int8 comm quant travels as int8 + block scales, and the owner dequantises (#13 item 5).

The spec splits quant mode 2 at `send q, stored;` (the real op: moe_distribute_combine_v2.h quantises in
ExpertAlltoAllDispatchInnerCopyAdd and dequantises in ProcessMoeExpert). The same world runs on the CPU twin with
commQuantMode 0 and 2: the outputs equal the reference in both, and the bytes written into the HCCL windows differ
by exactly the returned rows times (a BF16 row - the message: the int8 row and ceil(H / 8) BF16 scales, each
32-byte aligned). The flags and everything else the kernel writes are the same in both runs. At the largest rows
the receiving formula's calc slots and the message still fit the UB.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from .test_window_layout import _case as _window_case, _combine_case, _dispatch_min_mb

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
OP = "moe_distribute_combine_v2"
W, BS, H, K, MOE = 2, 4, 1032, 2, 2  # H not a multiple of 8 * 16: the last scale block and the padding count

pytestmark = pytest.mark.cpu_twin


def _align32(n: int) -> int:
    return (n + 31) // 32 * 32


def _case(product: str, quant: int) -> dict:
    a = BS * W * min(MOE // W, K)
    return {"id": f"wire-{product}-q{quant}", "product": product, "world": W, "env": {}, "rank_shapes": {},
            "out_dtypes": {}, "data": {}, "run": None,
            "attrs": {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": MOE, "commQuantMode": quant},
            "inputs": {"expandX": ("BFLOAT16", (a, H)), "expertIds": ("INT32", (BS, K)),
                       "assistInfoForCombine": ("INT32", (a * 128,)), "epSendCounts": ("INT32", (W * (MOE // W),)),
                       "expertScales": ("FLOAT32", (BS, K))}}


# Atlas A2 sends the same messages through its expert blocks; its twin world in the generated suite (commQuantMode
# 2, H 32: a message as long as the row) checks the values there.
@pytest.mark.parametrize("product", ("ascend910_93", "ascend950"))
def test_int8_rows_travel_as_int8_and_scales(product, tmp_path):
    from opgen import sim
    from opgen.harness import testkit
    from opgen.sim.job import read_costs

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{OP}.reference"), importlib.import_module(f"{OP}.tests.cases")
    try:
        exe = sim.build_for(GENERATED / OP, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    window, rows = {}, {}
    for quant in (0, 2):
        case = _case(product, quant)
        world = testkit.build_world(ref, case)
        results = testkit.run(ref, case, world)
        job = tmp_path / f"q{quant}"
        outs = sim.run(exe, ref, case, world, job)
        problems = [p for r, (got, want) in enumerate(zip(outs, results))
                    for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
        assert not problems, "\n".join(problems)
        costs = read_costs(job)
        window[quant] = sum(c["own_window_write"] + c["peer_window_write"] for c in costs.values())
        rows[quant] = sum(int(np.asarray(world.inputs[r]["epSendCounts"]).astype(np.int64)[-1]) for r in range(W))
    assert rows[0] == rows[2] > 0
    message = _align32(H) + _align32(2 * -(-H // 8))  # int8 row, then the BF16 block scales
    # the real A5 MTE combine's commDataBytes_: Ceil(H, 32) int8 bytes and Ceil(H, 128) * 16 scales, those past
    # Ceil(H, 8) the zero padding's (code: mc2/moe_distribute_combine_v2/op_kernel/moe_distribute_combine_v2_quant.h
    # QuantInit tokenScaleCnt_), the same length
    assert message == _align32(H) + 2 * 16 * -(-H // 128) == 1344
    if product == "ascend950":
        # a row travels as Ceil(bytes, 480) blocks of 512 bytes (480 data, a 32-byte flag), and the owner clears
        # the 32-byte flag of each block it summed (code: mc2/moe_distribute_combine_v2/op_kernel/arch35/
        # moe_distribute_combine_v2_a5_mte.h hAlignWinSize_, ClearPackedTokenFlags)
        blocks = lambda n: -(-n // 480)  # noqa: E731
        assert window[0] - window[2] == rows[0] * (blocks(2 * H) - blocks(message)) * (512 + 32)
    else:
        assert window[0] - window[2] == rows[0] * (_align32(2 * H) - message)


@pytest.mark.slow
@pytest.mark.parametrize("product", ("ascend910_93", "ascend950"))
def test_the_receiving_formula_fits_the_ub_at_the_largest_rows(product, tmp_path):
    """BS 512, H 8192, K 16 and a 2-D mask (the reduce's largest buffers) with commQuantMode 2 at the smallest
    window the checks accept: the owner's 5 calc slots hold the message and the dequantisation."""
    from opgen import sim
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{OP}.reference"), importlib.import_module(f"{OP}.tests.cases")
    # one MoE expert per rank and 14 zero experts: K = 16 with few MoE rows per token to quantise on the twin
    bs, h, k, ep, moe = 512, 8192, 16, 2, 2
    case = _combine_case(ref, _window_case(product, bs, h, k, ep, moe, _dispatch_min_mb(product, bs, h, k, ep, moe)))
    case["attrs"].update(commQuantMode=2, zeroExpertNum=k - moe)
    case["inputs"].update(xActiveMaskOptional=("BOOL", (bs, k)))
    case["data"] = {"xActiveMaskOptional": "sparse"}  # the buffers of BS x K, few rows to quantise on the twin
    try:
        exe = sim.build_for(GENERATED / OP, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    sent = sum(int(np.asarray(w["epSendCounts"]).astype(np.int64)[-1]) for w in world.inputs)
    assert sent > 0, "the world sends rows through the int8 path"
    results = testkit.run(ref, case, world)
    outs = sim.run(exe, ref, case, world, tmp_path)
    problems = [p for r, (got, want) in enumerate(zip(outs, results))
                for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
    assert not problems, "\n".join(problems)
