"""Ascend 950 numerics of an all-zero token under pertoken quant.

The pertoken formula divides by the token's absolute maximum: for a padding token of zeros that is 127 / 0 = inf,
and the row is 0 * inf = NaN before the int8 cast. The real 950 kernels compute it so (code: mc2/
moe_distribute_dispatch_v2/op_kernel/arch35/moe_distribute_dispatch_v2_a5_ccu.h QuantDynamicPerToken:
dynamicScale = maxVal / rowMax, Muls, Cast, scale out = 1 / dynamicScale) with per-instruction saturation
selected (SetCtrlSpr<60, 60>(0) after each TPipe reset, as the generated kernels do: templates/cpp/common/op_kernel/
opgen_kernel_helpers.h UseInstructionSaturation), and their int8 chain saturates: the row is 0 and the scale
1 / inf = 0.
The reference and the generated kernel on the twin give exactly that.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from .conftest import ROOT

GENERATED = ROOT / "generated"
OP = "moe_distribute_dispatch_v2"
CASE = "ascend950-q2-bs4-h1024-k2-w2"


def _zero_token_world():
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{OP}.reference"), importlib.import_module(f"{OP}.tests.cases")
    case = next(c for c in cases.POSITIVE if c["id"] == CASE)
    world = testkit.build_world(ref, case)
    for inputs in world.inputs:  # token 1 of every rank: padding, all zeros
        x = np.array(inputs["x"], copy=True)
        x[1] = 0
        inputs["x"] = x
    return ref, cases, case, world


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the formula's 127 / 0 and 0 * inf, on purpose
def test_the_reference_quantises_an_all_zero_token_to_zeros_with_a_zero_scale():
    from opgen.harness import testkit

    ref, _, case, world = _zero_token_world()
    for r, out in enumerate(testkit.run(ref, case, world)):
        rows = int(np.asarray(out["expertTokenNumsOut"]).sum())  # the rows this rank received
        scales = np.asarray(out["dynamicScalesOut"])[:rows]
        xs = np.asarray(out["expandXOut"])[:rows]
        assert np.isfinite(scales).all(), f"rank {r}: {scales}"
        zero = scales == 0.0
        assert zero.any(), f"rank {r} received no row of the zero tokens"
        assert not xs[zero].any() and xs[~zero].any(), f"rank {r}"


@pytest.mark.cpu_twin
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_950_kernel_on_the_twin_gives_the_reference_for_an_all_zero_token(tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    ref, cases, case, world = _zero_token_world()
    try:
        exe = sim.build_for(GENERATED / OP, ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    testkit.twin(ref, cases, case, world, testkit.run(ref, case, world), exe, tmp_path)
