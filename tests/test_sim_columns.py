"""The generated kernels choose their dtype instances at build time, one binary per OpDef column (#13 item 1).

CANN's op build compiles a kernel once per OpDef column with DTYPE_<NAME> / ORIG_DTYPE_<NAME> defined, and the
runtime launches the binary of the call's column. The twin does the same (opgen.sim.build.Twin). Here a binary
built for one column is launched for a call of another: it holds no instance for those dtypes and traps, where a
kernel that switched on dtypes at run time would have run it.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from .conftest import ROOT

GENERATED = ROOT / "generated"
OP = "moe_distribute_dispatch_v2"

pytestmark = pytest.mark.cpu_twin


def test_a_columns_binary_runs_only_its_columns_calls(tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{OP}.reference"), importlib.import_module(f"{OP}.tests.cases")
    by_id = {c["id"]: c for c in cases.POSITIVE}
    bf16 = by_id["ascend910_93-q0-bs1-h1024-k2-w2-globalBS-2"]  # x bf16, expandXOut bf16
    int8 = by_id["ascend910_93-q2-bs4-h1024-k2-w2"]             # x bf16, expandXOut int8
    try:
        twin = sim.build_for(GENERATED / OP, ref, "ascend910_93")
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    jobs, exes = {}, {}
    for name, case in (("bf16", bf16), ("int8", int8)):
        world = testkit.build_world(ref, case)
        jobs[name] = (sim.job.write_job(ref, case, world, tmp_path / name), case, world)
        exes[name] = sim.job.executable(twin, ref, world, jobs[name][0])
    assert exes["bf16"] != exes["int8"]  # two columns, two binaries
    job, case, world = jobs["int8"]
    outs = sim.job.run_job(exes["int8"], job)  # its own column's binary runs it
    expected = testkit.run(ref, case, world)
    problems = [p for r, (got, want) in enumerate(zip(outs, expected))
                for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
    assert not problems, "\n".join(problems)
    with pytest.raises(sim.TwinFault, match="AscendC::Trap"):
        sim.job.run_job(exes["bf16"], job)  # the bf16 column's binary has no int8 instance
