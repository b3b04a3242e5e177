"""What the generated DispatchV2 and CombineV2 kernels cost, counted by the CPU twin at a realistic shape.

One world per op on Atlas A3 (ep=16, BS=256, H=7168, K=8, one MoE expert per rank, BF16, no quantisation); the
twin counts per core the scalar-unit accesses of UB and GM and the bytes moved between UB and GM by where the GM
side lies (opgen/sim/README.md, `cost` lines).  Two ratios per op, against what the semantics need at least:

* communication bytes: the bytes the kernel writes into HCCL windows (its own and its peers'), over each row's
  bytes once per destination (dispatch: every received row; combine: every expanded row sent back);
* scalar accesses: the busiest core's, over BS*K / cores (the (token, k) pairs one core would own if the work
  were split): O(1) per pair is the goal; a per-core scan of every pair grows with the core count.

Both are exact counts of one run (no timing); the polls (repeated reads of a flag) are reported apart.
Usage: python benchmarks/bench_kernel_cost.py [aiv]   (vector cores per rank, default 8)
"""
from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
PRODUCT, EP, BS, H, K, MOE = "ascend910_93", 16, 256, 7168, 8, 16
ROW_BYTES = H * 2  # BF16
A = BS * EP * min(MOE // EP, K)  # expanded rows a rank can receive (the specs' A)

CASES = {
    "moe_distribute_dispatch_v2": {
        "attrs": {"groupEp": "ep", "epWorldSize": EP, "moeExpertNum": MOE},
        "inputs": {"x": ("BFLOAT16", (BS, H)), "expertIds": ("INT32", (BS, K))},
    },
    "moe_distribute_combine_v2": {
        "attrs": {"groupEp": "ep", "epWorldSize": EP, "moeExpertNum": MOE},
        "inputs": {"expandX": ("BFLOAT16", (A, H)), "expertIds": ("INT32", (BS, K)),
                   "assistInfoForCombine": ("INT32", (A * 128,)), "epSendCounts": ("INT32", (EP * (MOE // EP),)),
                   "expertScales": ("FLOAT32", (BS, K))},
    },
}


def _case(snake: str) -> dict:
    return {"id": f"cost-{PRODUCT}-bs{BS}-h{H}-k{K}-w{EP}", "product": PRODUCT, "world": EP, "env": {},
            "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None, **CASES[snake]}


def measure(snake: str, aiv: int, work: Path) -> dict:
    from opgen import sim
    from opgen.harness import testkit

    ref = importlib.import_module(f"{snake}.reference")
    case = _case(snake)
    world = testkit.build_world(ref, case)
    expected = testkit.run(ref, case, world)
    exe = sim.build_for(GENERATED / snake, ref, PRODUCT)
    job = work / snake
    sim.run(exe, ref, case, world, job, aiv=aiv, timeout=600.0)
    costs = sim.job.read_costs(job)
    # each row's bytes once per destination; both count arrays are cumulative over (rank, expert)
    if snake == "moe_distribute_dispatch_v2":  # every row a rank receives
        rows = sum(int(np.asarray(r["epRecvCountsOut"]).astype(np.int64)[-1]) for r in expected)
    else:  # every expanded row a rank holds goes back to its token's rank
        rows = sum(int(np.asarray(world.inputs[r]["epSendCounts"]).astype(np.int64)[-1]) for r in range(EP))
    moved = rows * ROW_BYTES
    window = sum(c["own_window_write"] + c["peer_window_write"] for c in costs.values())
    total = sum(sum(v for k, v in c.items() if k not in ("scalar", "poll_read", "poll_scalar")) for c in costs.values())
    busiest = max(c["scalar"] for c in costs.values())
    return dict(moved=moved, window=window, total=total, polls=sum(c["poll_read"] for c in costs.values()),
                busiest=busiest, per_pair=busiest / (BS * K / aiv))


def main() -> None:
    aiv = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    sys.path.insert(0, str(GENERATED))
    print(f"{PRODUCT}: ep={EP}, BS={BS}, H={H}, K={K}, moeExpertNum={MOE}, BF16, {aiv} vector cores per rank")
    print("| op | minimum bytes | window bytes | window / minimum | all UB<->GM bytes / minimum | poll bytes | "
          "busiest core's scalar accesses | per (BS*K / cores) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for snake in CASES:
            m = measure(snake, aiv, Path(tmp))
            print(f"| {snake} | {m['moved']:,} | {m['window']:,} | {m['window'] / m['moved']:.2f}x | "
                  f"{m['total'] / m['moved']:.2f}x | {m['polls']:,} | {m['busiest']:,} | {m['per_pair']:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
