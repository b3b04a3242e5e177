"""The kernels split their work over however many vector cores the platform reports.

The generated suites run the twin with 4 cores per rank; here the first world of each op's twin subset runs
with 1, 3 and 7 (an odd count leaves uneven shares), and must still equal the reference.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
OPS = ("moe_distribute_dispatch_v2", "moe_distribute_combine_v2", "moe_distribute_dispatch_setup",
       "moe_distribute_combine_setup")

pytestmark = pytest.mark.cpu_twin


# one core and an odd count by default; 3 cores (the middle case) in the slow tier
@pytest.mark.parametrize("aiv", (1, pytest.param(3, marks=pytest.mark.slow), 7))
@pytest.mark.parametrize("op", OPS)
def test_any_core_count(op, aiv, tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")
    case = next(c for c in cases.POSITIVE if c["id"] == cases.TWIN_SUBSET[-1])
    try:
        exe = sim.build_for(GENERATED / op, ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    outs = sim.run(exe, ref, case, world, tmp_path, aiv=aiv)
    problems = [p for r, (got, want) in enumerate(zip(outs, results))
                for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
    assert not problems, "\n".join(problems)
