"""The CPU twin's costs: compiling the DispatchV2 kernel at -O0 against -O1, and running a world on the twin
against the numpy reference's run_world.

Compile: the kernel translation unit alone (the largest of the three) for one OpDef column, once per level.  Run: the worlds of
the generated suite's TWIN_SUBSET, the executable already built, best of N runs of each (the machines are
noisy); the twin's figure includes writing the job, the process and reading the outputs back.
Usage: python benchmarks/bench_twin.py [N]
"""
from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
OP = "moe_distribute_dispatch_v2"


def compile_seconds(flags_o: str, out: Path) -> float:
    from opgen.sim.build import compile_commands, compiler

    # the widest arch, one OpDef column (bf16 rows quantised to int8: the quant modes with the most instances)
    column = {"x": "BFLOAT16", "expand_x": "INT8", "dynamic_scales": "FLOAT32"}
    cmds = compile_commands(compiler(), GENERATED / OP, "MoeDistributeDispatchV2", 3510, column)
    src, cmd = next((s, c) for s, c in cmds if s.name == "kernel_entry.cpp")
    cmd = [flags_o if a in ("-O0", "-O1", "-O2") else a for a in cmd]
    t0 = time.perf_counter()
    subprocess.run([*cmd, "-o", str(out / f"kernel{flags_o}.o")], check=True, capture_output=True)
    return time.perf_counter() - t0


def best(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    sys.path.insert(0, str(GENERATED))
    from opgen import sim
    from opgen.harness import testkit

    ref = importlib.import_module(f"{OP}.reference")
    cases = importlib.import_module(f"{OP}.tests.cases")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        o0, o1 = compile_seconds("-O0", work), compile_seconds("-O1", work)
        print(f"compile kernel TU: -O0 {o0:.1f} s, -O1 {o1:.1f} s, -O1 / -O0 = {o1 / o0:.1f}x")
        print("| case | world | reference run_world | twin | twin / reference |")
        print("| --- | --- | --- | --- | --- |")
        for case_id in cases.TWIN_SUBSET:
            case = next(c for c in cases.POSITIVE if c["id"] == case_id)
            world = testkit.build_world(ref, case)
            exe = sim.build_for(GENERATED / OP, ref, case["product"])  # the product's arch; the world's column
            t_ref = best(lambda: testkit.run(ref, case, world), n)
            t_twin = best(lambda: sim.run(exe, ref, case, world, work / case_id), n)
            print(f"| {case_id} | {case['world']} | {t_ref * 1e3:.1f} ms | {t_twin * 1e3:.1f} ms | "
                  f"{t_twin / t_ref:.1f}x |")


if __name__ == "__main__":
    main()
