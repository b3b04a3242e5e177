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
import importlib.util
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


def _load(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.cpu_twin
def test_per_block_on_its_own_broadcasts_blocks_of_128_through_a_work_row(tmp_path):
    """No spec divides by `per_block(v, n)` with n > 8 (that form lowers to BroadcastBlocks<n> with a work row: a
    Brcb block a value, then a Copy repeat per block); DispatchV2's quantMode 3 rewritten to divide by the block
    scale instead of multiplying by its inverse runs it, at H = 1030 (a partial last block), and the kernel built
    from that spec gives its own reference's outputs on the twin."""
    from opgen import cli, sim
    from opgen.harness import testkit

    try:
        sim.compiler()
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    line = ("expandXOut = cast(xf * per_block(qmax(dtype(expandXOut)) / amax, 128), dtype(expandXOut), round=rint, "
            "sat=false);")
    text = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    assert text.count(line) == 1, "the quantMode 3 formula changed: update this test"
    spec = tmp_path / "dispatch_v2.spec"
    spec.write_text(text.replace(line, line.replace("xf * per_block(qmax(dtype(expandXOut)) / amax, 128)",
                                                    "xf / per_block(amax / qmax(dtype(expandXOut)), 128)")),
                    encoding="utf-8")
    out = tmp_path / "out"
    assert cli.main(["build", str(spec), "-o", str(out), "--no-cache"]) == 0
    op_dir = out / "moe_distribute_dispatch_v2"
    kernel = (op_dir / "op_kernel" / "moe_distribute_dispatch_v2_gen.h").read_text(encoding="utf-8")
    assert "BroadcastBlocks<128U, false>(" in kernel and "MulBlocks<128U" not in kernel
    ref = _load("bq_div_reference", op_dir / "reference.py")
    _, cases, case = _case_at_h("moe_distribute_dispatch_v2", "ascend950-q3-bs4-h1024-k2-w2", "x")
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    assert testkit.twin(ref, cases, case, world, results, sim.build_for(op_dir, ref, case["product"]),
                        tmp_path / "twin") is None
