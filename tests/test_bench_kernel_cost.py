"""benchmarks/bench_kernel_cost.py on its smallest configuration (``--smoke``: BS 8, H 1024) and the world with the
most ops (Atlas A3 quant 0: DispatchV2, CombineV2, CombineAddRmsNorm): every op prints every figure with a real and a
generated count, and both kernels of every op issue vector instructions and synchronise (counted by the twin,
opgen/sim/README.md "Costs"). The counts themselves are the benchmark's output, not asserted: the poll loops'
depend on the peers' timing. Slow tier (three real and three generated kernels on 16 ranks)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import ROOT
from .real_ops import MARKS

pytestmark = [pytest.mark.slow, *MARKS]

BENCH = ROOT / "benchmarks" / "bench_kernel_cost.py"
OPS = ("MoeDistributeDispatchV2", "MoeDistributeCombineV2", "MoeDistributeCombineAddRmsNorm")


def _figures() -> tuple[str, ...]:
    sys.path.insert(0, str(BENCH.parent))
    try:
        import bench_kernel_cost
    finally:
        sys.path.remove(str(BENCH.parent))
    return tuple(label for label, _ in bench_kernel_cost.PATHS)


def test_the_cost_benchmark_prints_real_and_generated_counts_of_every_op():
    proc = subprocess.run([sys.executable, str(BENCH), "--smoke", "--world", "Atlas A3, ep 16, quant 0"],
                          capture_output=True, text=True, cwd=ROOT, env=dict(os.environ), timeout=3600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    rows = {}
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in OPS:
            rows[(cells[0], cells[1])] = (int(cells[2].replace(",", "")), int(cells[3].replace(",", "")))
    figures = _figures()
    assert set(rows) == {(op, f) for op in OPS for f in figures}, proc.stdout
    for op in OPS:
        for figure in ("vector instruction issues", "vector repeats", "vector lanes computed", "SetFlag + WaitFlag"):
            real, generated = rows[(op, figure)]
            assert real > 0 and generated > 0, (op, figure, real, generated)
