"""The hand-written (real) vs the generated MoE kernels (DispatchV2, CombineV2, CombineAddRmsNorm): their cost
on the same worlds, counted by the CPU twin: exact counts of one run each, no timing.

Worlds (H = 7168, K = 8, BS = 256 tokens per rank, BF16, one MoE expert per rank):

* Atlas A3, ep = 16, quant mode 0 and 2 (DispatchV2 quantMode; CombineV2 commQuantMode). Quant 2 at BS = 64, the
  one change from the issue's worlds: at BS = 256 the generated comm-quant-2 CombineV2 was still running on the
  twin after 600 s on 2 cores (its busiest core's scalar accesses were then ~46x the real kernel's at the smoke
  size, before per-block quant used repeat parameters);
* Atlas A2, 16 ranks on two servers (8 per server), quant mode 0 (the real A2 tiling takes comm quant 2 only
  layered), at the default HCCL_BUFFSIZE (200 MiB; the generated A2 kernels pack each source rank's rows as the
  real ones, so their window is the documents' formula, about 121 MiB here);
* Ascend 950, ep = 8, quant mode 0: the real arch35 DispatchV2 (the MTE path) on the platform
  ``real_world.real_platform`` gives it; the real A5 MTE CombineV2 faults in Init on the twin (it reads the HCCL
  context's winSize before it has the context: tests/test_real_ops_world.py A5_COMBINE_CONTEXT) and then packs rows
  from past its UB buffer, so it runs with those findings fixed in a temp copy (``opgen.sim.real_fixes``
  ``a5_combine_fixed``), which the output says under the world's table.

DispatchV2 runs on the world's tokens and routing; CombineV2 on DispatchV2's reference outputs through identity
experts (``opgen.harness.testkit.combine_inputs``; quant 2: the same quant-0 rows, the combine quantising them on the
wire), so both kernels of a pair see the same inputs. On the Atlas A3 quant 0 world CombineAddRmsNorm (DispatchV2's
other partner, comm quant 0 only) runs the same way after CombineV2. Each world runs with ``real_world.REAL_AIV``
vector cores per rank (the real dispatch assumes a multiple of 8). Every run's outputs are compared with the
reference first: a count of a wrong run is no cost.

Per op, real | generated | generated / real, from the twin's ``cost`` lines (opgen/sim/README.md) summed over
every rank and core: bytes moved between UB and GM by where the GM side lies (the rank's own GM; any window, read;
into windows, this rank's and its peers'), bytes of polls (repeated reads of a flag), and the busiest core's
scalar-unit accesses of UB and GM; then the vector instructions (issues, their 256-byte repeats, the lanes they
compute) and the synchronisation calls (SetFlag + WaitFlag, PipeBarrier, SyncAll, EnQue + DeQue), as the twin
counts them per API call (opgen/sim/README.md "Costs"). Flag waits inside a poll loop repeat with its rounds, which
depend on the peers' timing, as poll bytes do. The twin calls a poll only the same GM bytes read again back to
back; the real A3 DispatchV2 waits with one strided DataCopy of many 32-byte status blocks per round (code: mc2/
moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h WaitStatus: DataCopy(statusFp32Tensor_, ...,
{recStatusNumPerCore_, 1, 0, 0}), then ReduceSum, until the sum is reached), which the twin reads block by block,
so its wait rounds count as window reads and scalar accesses: those two figures of the real dispatch depend on
the peers' timing (two smoke runs: 5,417,408 / 4,231,488 window bytes read, 10,641 / 2,254 scalar accesses), and
its poll bytes read 0.

Usage: python benchmarks/bench_kernel_cost.py [--smoke] [--world TEXT]
  (--smoke: BS = 8, H = 1024, for checking the script; --world: only the worlds whose title contains TEXT)
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
SHARED_CANN = ROOT.parent / "shared" / "cann"
DISPATCH, COMBINE = "moe_distribute_dispatch_v2", "moe_distribute_combine_v2"
ADD_RMS_NORM = "moe_distribute_combine_add_rms_norm"
TIMEOUT = 1200.0  # seconds of a twin core waiting or running (a slow world, not a hang)


@dataclass(frozen=True)
class World:
    title: str
    product: str
    ep: int
    quant: int
    bs: int = 256  # tokens per rank
    env: tuple = ()  # (variable, value) the world sets
    combines: tuple = (COMBINE,)  # the ops run on DispatchV2's reference outputs
    real_fixed: tuple = ()  # (op snake name, the opgen.sim.real_fixes function its real kernel runs through)


WORLDS = (
    World("Atlas A3, ep 16, quant 0", "ascend910_93", 16, 0, combines=(COMBINE, ADD_RMS_NORM)),
    # BS 64: at 256 the generated comm-quant-2 CombineV2 was still running on the twin after 600 s (2 cores)
    World("Atlas A3, ep 16, quant 2", "ascend910_93", 16, 2, bs=64),
    World("Atlas A2, 16 ranks on two servers, quant 0", "ascend910b", 16, 0),
    World("Ascend 950, ep 8, quant 0", "ascend950", 8, 0, real_fixed=((COMBINE, "a5_combine_fixed"),)),
)

# (label, the figure of a run's costs); the busiest core's scalar accesses is a max, the rest sums
PATHS = (
    ("UB<->GM bytes, own GM", lambda c: sum(k["gm_read"] + k["gm_write"] for k in c.values())),
    ("window bytes read", lambda c: sum(k["window_read"] for k in c.values())),
    ("bytes into windows", lambda c: sum(k["own_window_write"] + k["peer_window_write"] for k in c.values())),
    ("poll bytes", lambda c: sum(k["poll_read"] for k in c.values())),
    ("busiest core's scalar accesses", lambda c: max(k["scalar"] for k in c.values())),
    ("vector instruction issues", lambda c: sum(k["vec_calls"] for k in c.values())),
    ("vector repeats", lambda c: sum(k["vec_repeats"] for k in c.values())),
    ("vector lanes computed", lambda c: sum(k["vec_elements"] for k in c.values())),
    ("SetFlag + WaitFlag", lambda c: sum(k["set_flag"] + k["wait_flag"] for k in c.values())),
    ("PipeBarrier", lambda c: sum(k["pipe_barrier"] for k in c.values())),
    ("SyncAll (per core)", lambda c: sum(k["sync_all"] for k in c.values())),
    ("EnQue + DeQue", lambda c: sum(k["enque"] + k["deque"] for k in c.values())),
)


def dispatch_case(w: World, bs: int, h: int, k: int) -> dict:
    return {"id": f"cost-{w.product}-q{w.quant}-bs{bs}-h{h}-k{k}-w{w.ep}", "product": w.product, "world": w.ep,
            "attrs": {"groupEp": "ep", "epWorldSize": w.ep, "moeExpertNum": w.ep, "quantMode": w.quant},
            "env": dict(w.env), "inputs": {"x": ("BFLOAT16", (bs, h)), "expertIds": ("INT32", (bs, k))},
            "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}


def run_op(kind: str, tree, ref, cases, case: dict, world, work: Path, kernel_root: Path | None = None) -> dict:
    """(rank, core) -> costs of one run of the ``kind`` ("real" / "generated") kernel, its outputs checked (the real
    one's entry from ``kernel_root`` if given: a temp copy with findings fixed)."""
    from opgen import sim
    from opgen.harness import testkit
    from opgen.sim import real_world

    if kind == "real":
        got = real_world.run(tree, ref, case, world, work, timeout=TIMEOUT, kernel_root=kernel_root)
        result = work / "run"
    else:
        exe = sim.build_for(GENERATED / Path(ref.__file__).parent.name, ref, case["product"])
        got = sim.run(exe, ref, case, world, work, aiv=real_world.REAL_AIV, timeout=TIMEOUT)
        result = work
    want = testkit.run(ref, case, world)
    problems = [p for r in range(case["world"])
                for p in testkit.output_problems(ref, cases, case, world, r, got[r], want[r])]
    if problems:
        raise SystemExit(f"{kind} {ref.OP} on {case['id']} disagrees with the reference:\n" + "\n".join(problems[:20]))
    return sim.job.read_costs(result)


def worlds_of(w: World, bs: int, h: int, k: int):
    """(op suite, case, world) of DispatchV2, then of each of ``w.combines`` on its reference outputs."""
    from opgen.harness import testkit
    from opgen.sim.real_world import Inputs

    dref, dcases = suite(DISPATCH)
    case = dispatch_case(w, bs, h, k)
    world = testkit.build_world(dref, case)
    yield (dref, dcases), case, world
    base = dict(case, attrs=dict(case["attrs"], quantMode=0))  # the combine's rows: unquantised expert outputs
    dispatched = testkit.run(dref, base, world)
    for snake in w.combines:
        cref, ccases = suite(snake)
        cin, cattrs = testkit.combine_inputs(dref, base, world, dispatched, cref)
        attrs = {n: v for n, v in cattrs.items() if n in cref.ATTRS}
        attrs[cref.INFO.quant_by] = w.quant
        ccase = {"id": f"{case['id']}-{snake}", "world": w.ep, "product": w.product, "attrs": attrs,
                 "env": {**dict(w.env), **{n: v for n, v in cattrs.items() if n in cref.ENV}}}
        yield (cref, ccases), ccase, Inputs(cin)


def suite(snake: str):
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


def cell(real, gen) -> str:
    return f"| {real:,} | {gen:,} | {gen / real:.2f}x |" if real else f"| {real:,} | {gen:,} | - |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="BS 8, H 1024: check the script, not the costs")
    parser.add_argument("--world", default="", help="only the worlds whose title contains this text")
    args = parser.parse_args()
    h, k = (1024, 8) if args.smoke else (7168, 8)
    sys.path[:0] = [str(ROOT), str(GENERATED)]
    from opgen.sim import real_fixes, real_tiling
    from opgen.sim.build import cache_dir

    if not SHARED_CANN.is_dir():
        raise SystemExit(f"{SHARED_CANN} not found: the real ops come from the real CANN beside the clone")
    tree = real_tiling.unpack(SHARED_CANN, Path(os.environ.get("OPGEN_CANN_CACHE") or cache_dir() / "cann"))
    print(f"H = {h}, K = {k}, BF16, one MoE expert per rank; real | generated | generated / real")
    with tempfile.TemporaryDirectory() as tmp:
        for w in (w for w in WORLDS if args.world in w.title):
            bs = 8 if args.smoke else w.bs
            print(f"\n{w.title} (BS = {bs})\n\n| op | figure | real | generated | generated / real |\n"
                  "| --- | --- | --- | --- | --- |", flush=True)
            notes = []
            for (ref, cases), case, world in worlds_of(w, bs, h, k):
                work = Path(tmp) / case["id"]
                gen = run_op("generated", tree, ref, cases, case, world, work / "generated")
                fix = dict(w.real_fixed).get(Path(ref.__file__).parent.name)
                root = getattr(real_fixes, fix)(tree.ops, work / "ops") if fix else None
                if fix:
                    notes.append(f"The real {ref.OP} ran with its findings fixed in a temp copy "
                                 f"(opgen.sim.real_fixes.{fix}).")
                real = run_op("real", tree, ref, cases, case, world, work / "real", root)
                for label, figure in PATHS:
                    print(f"| {ref.OP} | {label} {cell(figure(real), figure(gen))}")
                sys.stdout.flush()
            if notes:
                print("\n" + "\n".join(notes), flush=True)


if __name__ == "__main__":
    main()
