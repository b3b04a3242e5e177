"""Per-block quant on a row whose last block is partial, on the CPU twin.

The generated suites' worlds have H = 1024, a whole number of blocks of 8, 32 and 128 values; Ascend 950 accepts
any H in [1024, 8192] (DispatchV2 and CombineV2 tiling, specs/dispatch_v2.spec and combine_v2.spec), so at
H = 1030 the last block of a row holds 6 values. Those are the paths of opgen_kernel_helpers.h BlockMaxRow,
MulBlocks and BroadcastBlocks that run a partial block by its own mask: per block of 128 (DispatchV2 quantMode
3), MX blocks of 32 (DispatchV2 quantMode 4) and blocks of 8 (CombineV2 commQuantMode 2, both directions).
Each world's outputs on the twin equal the reference's.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from .conftest import ROOT

GENERATED = ROOT / "generated"
H = 1030  # 8 blocks of 128 + 6, 32 blocks of 32 + 6, 128 blocks of 8 + 6

# (op, the suite's case at H = 1024, its input holding H)
CASES = [
    ("moe_distribute_dispatch_v2", "ascend950-q3-bs4-h1024-k2-w2", "x"),
    ("moe_distribute_dispatch_v2", "ascend950-q4-bs4-h1024-k2-w2", "x"),
    ("moe_distribute_combine_v2", "ascend950-q2-bs2-h1024-k2-w2", "expandX"),
]


def _case_at_h(op: str, case_id: str, tensor: str):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")
    case = dict(next(c for c in cases.POSITIVE if c["id"] == case_id))
    dtype, shape = case["inputs"][tensor]
    assert shape[-1] == 1024
    case["inputs"] = {**case["inputs"], tensor: (dtype, (*shape[:-1], H))}
    case["id"] = case_id.replace("-h1024-", f"-h{H}-")
    return ref, cases, case


@pytest.mark.cpu_twin
@pytest.mark.parametrize("op, case_id, tensor", CASES, ids=[c[1] for c in CASES])
def test_a_partial_last_block_gives_the_reference_on_the_twin(op, case_id, tensor, tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    ref, cases, case = _case_at_h(op, case_id, tensor)
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    try:
        sim.compiler()
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    found = testkit.twin_prelude(GENERATED / op, ref.INFO.semantics)  # the Setup op a world needs first, if any
    prelude = None
    if found is not None:
        pdir = GENERATED / found[1].__name__.split(".")[0]
        prelude = found + (lambda product: sim.build_for(pdir, found[0], product),)
    exe = sim.build_for(GENERATED / op, ref, case["product"])
    why_not = testkit.twin(ref, cases, case, world, results, exe, tmp_path, prelude)
    assert why_not is None, why_not
