"""The Setup/Teardown pipelines on the CPU twin at the shapes the seeds allow every op of the pipeline.

The generated CombineTeardown suite draws worlds from CombineTeardown's own spec, whose ranges are wider than
what CombineSetup (seed 002: H = 4096, BS = 16, K = 6, 16 experts per rank) accepts, so none of them has a
prelude there.  This world satisfies both ops: CombineSetup fills the windows, CombineTeardown reduces them,
and both are compared with their references.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"

pytestmark = pytest.mark.cpu_twin

COMBINE_TEARDOWN = {
    "id": "twin-pipeline-ascend950-bs16-h4096-k6-w2",
    "product": "ascend950",
    "world": 2,
    "attrs": {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 32, "sharedExpertNum": 0, "commType": 2},
    "inputs": {"expandX": ("BFLOAT16", (192, 4096)), "quantExpandX": ("INT8", (192, 6144)),
               "expertIds": ("INT32", (16, 6)), "expandIdx": ("INT32", (96,)),
               "expertScales": ("FLOAT32", (16, 6)), "commCmdInfo": ("INT32", (3104,))},
    "data": {}, "env": {}, "out_dtypes": {}, "rank_shapes": {}, "run": None,
}


def _op(snake: str):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


def test_combine_setup_then_teardown(tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    ref, cases = _op("moe_distribute_combine_teardown")
    op_dir = GENERATED / "moe_distribute_combine_teardown"
    case = COMBINE_TEARDOWN
    try:
        pref, pcases = testkit.twin_prelude(op_dir, ref.INFO.semantics)
        prelude = (pref, pcases, sim.build_for(GENERATED / "moe_distribute_combine_setup", pref, case["product"]))
        exe = sim.build_for(op_dir, ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    testkit.accept(ref, case)
    world = testkit.build_world(ref, case)
    assert testkit.twin(ref, cases, case, world, testkit.run(ref, case, world), exe, tmp_path, prelude) is None
