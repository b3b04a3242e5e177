"""Speed of the generated DispatchV2 reference against a plain numpy copy of the same bytes.

Setting (issue 3): ascend910_93, W = 16, BS = 256, H = 7168, K = 8, E = 64, bf16 tokens; quant
modes 0 and 2, and mode 4 on ascend950.  The baseline gathers, for every rank, the rows that rank
receives into a new array (``x_world[idx]``): exactly the bytes the dispatch moves, no more.
The ratio reference / copy is what this file reports; absolute times vary with the machine.
Usage: python benchmarks/bench_reference.py [--quick]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import build_reference  # noqa: E402  (the same build the tests use)


def world(W: int, BS: int, H: int, K: int, E: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    inputs = []
    for _ in range(W):
        ids = np.argsort(rng.random((BS, E)), axis=1)[:, :K].astype(np.int32)
        x = rng.standard_normal((BS, H), dtype=np.float32).astype(ml_dtypes.bfloat16)
        inputs.append({"x": x, "expertIds": ids})
    return inputs


def copy_baseline(inputs, W: int, E: int) -> float:
    """Gather every rank's received rows (grouped by destination) from the stacked world."""
    x_world = np.concatenate([i["x"] for i in inputs])
    BS, K = inputs[0]["expertIds"].shape
    ids = np.concatenate([i["expertIds"] for i in inputs]).reshape(-1)
    dest = ids // (E // W)
    order = np.argsort(dest, kind="stable")
    bounds = np.searchsorted(dest[order], np.arange(W + 1))
    rows = order // K
    t0 = time.perf_counter()
    for d in range(W):
        x_world[rows[bounds[d]:bounds[d + 1]]]
    return time.perf_counter() - t0


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        ref = build_reference("dispatch_v2.spec", Path(tmp))
        W, BS, H, K, E = (8, 64, 2048, 8, 32) if quick else (16, 256, 7168, 8, 64)
        inputs = world(W, BS, H, K, E)
        base = min(copy_baseline(inputs, W, E) for _ in range(3))
        print(f"W={W} BS={BS} H={H} K={K} E={E} bf16; copy of the dispatched rows: {base * 1e3:.1f} ms")
        attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E, "HCCL_BUFFSIZE": 8192}
        cases = [("ascend910_93", 0), ("ascend910_93", 2), ("ascend950", 4)]
        for product, mode in cases:
            t = min(timed(lambda: ref.run_world(inputs, dict(attrs, quantMode=mode), product)) for _ in range(2))
            print(f"  {product:13s} quantMode {mode}: {t * 1e3:8.1f} ms  = {t / base:5.2f} x copy")
        print("scaling, ascend910_93 quantMode 0 (BS=256 per rank):")
        for w in ((8, 16) if quick else (8, 16, 32, 64)):
            e = 4 * w
            inp = world(w, BS, H, K, e)
            b = min(copy_baseline(inp, w, e) for _ in range(2))
            t = min(timed(lambda: ref.run_world(inp, dict(attrs, epWorldSize=w, moeExpertNum=e, quantMode=0),
                                                "ascend910_93")) for _ in range(2))
            print(f"  W={w:3d}: reference {t * 1e3:8.1f} ms, copy {b * 1e3:7.1f} ms, ratio {t / b:5.2f}")


if __name__ == "__main__":
    main()
