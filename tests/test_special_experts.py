"""Special experts from the spec (#14 item 4): the kernel computes each one's `special` formula in UB beside the
reduce's accumulator, so the UB must hold them at the largest rows a product accepts.

The formulas' values are checked against hand-written loops in tests/test_reference_roundtrip.py (the generated
reference) and tests/runtime/test_moe_routing.py (the runtime); here the CPU twin, whose UB is the product's
(196608 bytes on Atlas A3) and which faults any buffer past it, runs CombineV2's worst case for the reduce's UB:
BS 512, H 8192, K 16, a 2-D mask and every kind of special expert, and must match the reference bit for bit.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from .conftest import ROOT
from .test_window_layout import _case, _combine_case, _dispatch_min_mb

GENERATED = ROOT / "generated"
OP = "moe_distribute_combine_v2"


@pytest.mark.parametrize("op", ["moe_distribute_dispatch_v2", OP])
def test_the_worlds_route_into_the_ranges_the_spec_declares(op):
    """Both sides of the pair take the special experts' id ranges from their spec (DispatchV2 declares them
    without a formula): the world's routes reach every range and nothing past the last, and the loop oracle
    values each range by its kind (a zero expert adds nothing, a copy expert w * oriX)."""
    from opgen.harness import testkit, testworld

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref = importlib.import_module(f"{op}.reference")
    bs, h, k, ep, moe = 16, 1024, 4, 2, 4
    case = _case("ascend910_93", bs, h, k, ep, moe, 64)
    if op == OP:
        case = _combine_case(ref, case)
    case["attrs"].update(zeroExpertNum=2, copyExpertNum=1, constExpertNum=0)
    world = testkit.build_world(ref, case)
    assert world.specials == (("zero", 4, 6), ("copy", 6, 7), ("const", 7, 7))
    routed = {int(e) for ids in world.expert_ids for e in ids.ravel()}
    assert {4, 5, 6} <= routed and max(routed) == 6
    # rank 0's oracle row by hand: only its MoE experts (weighted x) and its copy expert (weighted oriX) count
    ori = world.tokens[0] * 2  # any oriX that differs from x
    got = testworld.weighted_sum(world, case["attrs"], 0, shared_rows=0, ori_x=ori, out_dtype=np.float32)
    x, ids, w = (np.asarray(a, np.float32) for a in (world.tokens[0], world.expert_ids[0], world.weights[0]))
    want = np.zeros_like(x)
    for t in range(bs):
        for j in range(k):
            row = x[t] if ids[t, j] < 4 else 2 * x[t] if ids[t, j] == 6 else 0 * x[t]
            want[t] = (want[t] + (row * w[t, j]).astype(np.float32)).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("spec", ["dispatch_v2", "combine_v2", "combine_add_rms_norm"])
def test_the_positive_search_runs_every_special_expert_kind(spec):
    """No kernel path without a world: every special-expert kind has a positive world with data and a positive
    count on each product whose domain allows one (the const expert's four inputs given together)."""
    from opgen.tools.coverage import load_cases

    from .conftest import load_ok
    op = load_ok(ROOT / "specs" / f"{spec}.spec")
    cases = load_cases(GENERATED / op.snake_name)
    assert op.specials
    for soc, view in op.views.items():
        for sp in op.specials:
            if sp.count in view.unsupported_attrs:
                continue
            hits = [c["id"] for c in cases.POSITIVE if c["product"] == soc and c["attrs"].get(sp.count, 0) > 0
                    and c["run"] is None]
            assert hits, (spec, soc, sp.name)


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("product", ["ascend910_93", "ascend950"])
def test_special_experts_fit_the_ub_at_the_largest_rows(product, tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{OP}.reference"), importlib.import_module(f"{OP}.tests.cases")
    bs, h, k, ep, moe = 512, 8192, 16, 2, 16
    case = _combine_case(ref, _case(product, bs, h, k, ep, moe, _dispatch_min_mb(product, bs, h, k, ep, moe)))
    case["attrs"].update(zeroExpertNum=1, copyExpertNum=1, constExpertNum=2)
    case["inputs"].update(oriXOptional=("BFLOAT16", (bs, h)), xActiveMaskOptional=("BOOL", (bs, k)),
                          **{name: ("BFLOAT16", (2, h)) for name in ("constExpertAlpha1Optional",
                                                                      "constExpertAlpha2Optional",
                                                                      "constExpertVOptional")})
    case["data"] = {"xActiveMaskOptional": "random"}
    try:
        exe = sim.build_for(GENERATED / OP, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    routed = {int(e) for w in world.inputs for e in w["expertIds"].ravel()}
    assert {moe, moe + 1, moe + 2, moe + 3} <= routed, "the world routes to every kind of special expert"
    results = testkit.run(ref, case, world)
    outs = sim.run(exe, ref, case, world, tmp_path)
    problems = [p for r, (got, want) in enumerate(zip(outs, results))
                for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
    assert not problems, "\n".join(problems)
