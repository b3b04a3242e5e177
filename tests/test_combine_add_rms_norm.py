"""MoeDistributeCombineAddRmsNorm (specs/combine_add_rms_norm.spec, #14 items 1-2) against a hand-written oracle.

The oracle below is written from the documents' formulas (moe_distribute_combine_add_rms_norm_README.md: x =
combineOut + residualX, y = x / RMS(x) * gamma, RMS(x) = sqrt(1/H * sum x_i^2 + normEps)) and the real kernel's
order of operations (CombineV2's kernel with HasAddRmsNorm: the k-ordered fp32 sum, the fp32 add, ReduceSum of
x * x * (1 / H), Sqrt then a divide, y = bf16(x * rstd) * gamma rounded again), as plain per-element loops: nothing
in it comes from the spec, so a spec or lowering bug cannot agree with it.

- The generated references chained as a model runs them: DispatchV2 -> identity experts -> CombineAddRmsNorm.
- The generated kernel on the CPU twin (per product), fed the same rows.
- The twin at the largest rows the products accept (UB: the post stage's slots beside the reduce's accumulator).

Every output is compared byte for byte: the oracle, the numpy reference (opgen/runtime/codecs.py
repeat_tree_sum) and the twin's ReduceSum add in the order the Ascend C documentation gives for Atlas A2 / A3.
"""
from __future__ import annotations

import importlib
import sys

import ml_dtypes
import numpy as np
import pytest

from .conftest import ROOT, build_reference

BF16 = ml_dtypes.bfloat16
EPS = 1e-6
GENERATED = ROOT / "generated"
OP = "moe_distribute_combine_add_rms_norm"


def device_sum(values):
    """ReduceSum's order (the Ascend C documentation, the count interface on Atlas A2 / A3, "方式二"): adjacent
    pairs, then pairs of those, ... inside each repeat of 64 floats, the repeats' sums added in order."""
    total = np.float32(0)
    for base in range(0, len(values), 64):
        lanes = list(values[base:base + 64]) + [np.float32(0)] * (64 - len(values[base:base + 64]))
        while len(lanes) > 1:
            lanes = [np.float32(lanes[i] + lanes[i + 1]) for i in range(0, len(lanes), 2)]
        total = np.float32(total + lanes[0])
    return total


def oracle(x, w, ids, E, residual, gamma, mask=None, shared_x=None, eps=EPS):
    """(xOut, rstdOut, yOut) of one rank's active tokens by loops; rows of inactive tokens are None."""
    BS, K = ids.shape
    H = x.shape[1]
    inv_h = np.float32(1) / np.float32(H)
    xs, rstds, ys = [], [], []
    for t in range(BS):
        if mask is not None and not mask[t]:
            xs.append(None), rstds.append(None), ys.append(None)
            continue
        acc = [np.float32(0)] * H
        for k in range(K):
            if ids[t, k] < E:
                wk = np.float32(w[t, k])
                acc = [np.float32(a + np.float32(np.float32(v) * wk)) for a, v in zip(acc, x[t])]
        if shared_x is not None:  # sharedExpertX is added unweighted (the real kernel)
            acc = [np.float32(a + np.float32(v)) for a, v in zip(acc, shared_x[t])]
        xr = [np.float32(a + np.float32(r)) for a, r in zip(acc, residual[t, 0])]
        sumsq = device_sum([np.float32(np.float32(v * v) * inv_h) for v in xr])
        rstd = np.float32(np.float32(1) / np.sqrt(np.float32(sumsq + np.float32(eps))))
        xs.append(np.array(xr, dtype=np.float32).astype(BF16))
        rstds.append(rstd)
        normed = np.array([np.float32(v * rstd) for v in xr], dtype=np.float32).astype(BF16).astype(np.float32)
        ys.append((normed * gamma.astype(np.float32)).astype(BF16))
    return xs, rstds, ys


def check_rank(out, want, label):
    xs, rstds, ys = want
    for t, (xw, rw, yw) in enumerate(zip(xs, rstds, ys)):
        if xw is None:
            continue  # the documents leave a masked token's rows open (the real kernel does not write them)
        assert out["xOut"][t, 0].tobytes() == xw.tobytes(), f"{label} xOut token {t}"
        assert out["rstdOut"][t, 0, 0].tobytes() == rw.tobytes(), f"{label} rstdOut token {t}"
        assert out["yOut"][t, 0].tobytes() == yw.tobytes(), f"{label} yOut token {t}"


def test_oracle_knows_a_value():
    """The oracle on one hand-computed row: H 4 ones summed twice with weights 0.5, residual 1: x = 2, RMS = 2."""
    x = np.ones((1, 4), dtype=BF16)
    ids = np.array([[0, 1]], dtype=np.int32)
    w = np.array([[0.5, 0.5]], dtype=np.float32)
    residual = np.ones((1, 1, 4), dtype=BF16)
    gamma = np.array([1, 2, 3, 4], dtype=BF16)
    xs, rstds, ys = oracle(x, w, ids, 2, residual, gamma, eps=0.0)
    assert xs[0].astype(np.float32).tolist() == [2.0] * 4
    assert rstds[0] == np.float32(0.5)
    assert ys[0].astype(np.float32).tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.fixture(scope="module")
def refs(generated_dir):
    return {n: build_reference(f"{n}.spec", generated_dir) for n in ("dispatch_v2", "combine_add_rms_norm")}


@pytest.mark.parametrize("product,shared", [("ascend910_93", False), ("ascend910_93", True), ("ascend950", False)])
def test_dispatch_then_combine_add_rms_norm(refs, product, shared):
    rng = np.random.default_rng(5)
    W, BS, H, K, E = 4, 5, 1024, 3, 8
    x = [rng.standard_normal((BS, H)).astype(BF16) for _ in range(W)]
    ids = [np.argsort(rng.random((BS, E)), axis=1)[:, :K].astype(np.int32) for _ in range(W)]
    w = [rng.random((BS, K)).astype(np.float32) for _ in range(W)]
    residual = [rng.standard_normal((BS, 1, H)).astype(BF16) for _ in range(W)]
    gamma = rng.standard_normal(H).astype(BF16)
    shared_x = [rng.standard_normal((BS, H)).astype(BF16) for _ in range(W)] if shared else None
    mask = np.arange(BS) < BS - 2  # rank 1 keeps its last two tokens home
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E, "sharedExpertNum": 0}
    dispatch_in = [{"x": x[r], "expertIds": ids[r], "expertScalesOptional": w[r]} for r in range(W)]
    dispatch_in[1]["xActiveMaskOptional"] = mask
    d = refs["dispatch_v2"].run_world(dispatch_in, attrs, product)
    cin = []
    for r in range(W):
        c = {"expandX": d[r]["expandXOut"], "expertIds": ids[r], "assistInfoForCombine": d[r]["assistInfoForCombineOut"],
             "epSendCounts": d[r]["epRecvCountsOut"], "expertScales": w[r], "residualX": residual[r], "gamma": gamma}
        if r == 1:
            c["xActiveMaskOptional"] = mask
        if shared:
            c["sharedExpertXOptional"] = shared_x[r]
        cin.append(c)
    out = refs["combine_add_rms_norm"].run_world(cin, attrs, product)
    for r in range(W):
        want = oracle(x[r], w[r], ids[r], E, residual[r], gamma, mask=mask if r == 1 else None,
                      shared_x=shared_x[r] if shared else None)
        check_rank(out[r], want, f"{product} rank {r}")


def _case(product, bs, h, k, ep, moe, mask_rank=0):
    L = moe // ep
    A = bs * ep * min(L, k)
    inputs = {"expandX": ("BFLOAT16", (A, h)), "expertIds": ("INT32", (bs, k)),
              "assistInfoForCombine": ("INT32", (A * 128,)), "epSendCounts": ("INT32", (ep * L,)),
              "expertScales": ("FLOAT32", (bs, k)), "residualX": ("BFLOAT16", (bs, 1, h)),
              "gamma": ("BFLOAT16", (h,))}
    data = {}
    if mask_rank:
        inputs["xActiveMaskOptional"] = ("BOOL", (bs, k) if mask_rank == 2 else (bs,))
        data["xActiveMaskOptional"] = "random"
    return {"id": f"{product}-arn-bs{bs}-h{h}-k{k}", "product": product, "world": ep,
            "attrs": {"groupEp": "ep", "epWorldSize": ep, "moeExpertNum": moe}, "env": {}, "inputs": inputs,
            "rank_shapes": {}, "out_dtypes": {}, "data": data, "run": None}


def _twin(product, case, tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref = importlib.import_module(f"{OP}.reference")
    try:
        exe = sim.build_for(GENERATED / OP, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    return ref, world, sim.run(exe, ref, case, world, tmp_path), testkit.run(ref, case, world)


@pytest.mark.cpu_twin
@pytest.mark.parametrize("product", ["ascend910_93", "ascend950"])
def test_twin_kernel_computes_add_rms_norm(product, tmp_path):
    """The generated kernel's post stage (Add, ReduceSum, Sqrt, the two casts of y) on the twin against the loops."""
    bs, h, k, ep, moe = 4, 1024, 2, 2, 4
    _, world, outs, _ = _twin(product, _case(product, bs, h, k, ep, moe), tmp_path)
    for r, out in enumerate(outs):
        inp = world.inputs[r]
        want = oracle(np.asarray(world.tokens[r]), world.weights[r], world.expert_ids[r], moe, inp["residualX"],
                      inp["gamma"])
        check_rank(out, want, f"{product} twin rank {r}")


@pytest.mark.cpu_twin
def test_twin_kernel_reads_gamma_once_per_core(tmp_path):
    """gamma is loaded (and cast to fp32) once by every core that has tokens, not once per token: each such core
    reads exactly H bf16 of it from GM, whatever its number of tokens (the twin's per-input GM reads)."""
    from opgen.sim import job

    product, bs, h, k, ep, moe = "ascend910_93", 10, 1024, 2, 2, 4
    _, world, outs, _ = _twin(product, _case(product, bs, h, k, ep, moe), tmp_path)
    for r, out in enumerate(outs):  # the outputs stay right
        inp = world.inputs[r]
        want = oracle(np.asarray(world.tokens[r]), world.weights[r], world.expert_ids[r], moe, inp["residualX"],
                      inp["gamma"])
        check_rank(out, want, f"{product} twin rank {r}")
    reads = job.read_input_reads(tmp_path)
    costs = job.read_costs(tmp_path)
    cores = job.DEFAULT_AIV
    assert sorted(costs) == [(r, c) for r in range(ep) for c in range(cores)]
    tokens = [bs // cores + (c < bs % cores) for c in range(cores)]  # SplitRange: 3, 3, 2, 2 tokens
    assert tokens == [3, 3, 2, 2]
    for r in range(ep):
        for c in range(cores):
            assert reads[(r, c)]["gamma"] == h * 2, (r, c)  # one (H,) bf16 row, for 2 or 3 tokens
            assert reads[(r, c)]["residualX"] == tokens[c] * h * 2, (r, c)  # the token rows: one each


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("product", ["ascend910_93", "ascend950"])
def test_twin_fits_the_ub_at_the_largest_rows(product, tmp_path):
    """BS 512, H 8192, K 16 and a 2-D mask: the reduce's accumulator and the post stage's slots in the product's UB
    (the twin faults any buffer past it), every output within the spec's tolerance of the reference."""
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    cases = importlib.import_module(f"{OP}.tests.cases")
    bs, h, k, ep, moe = 512, 8192, 16, 2, 16
    case = _case(product, bs, h, k, ep, moe, mask_rank=2)
    # the documents' window rule: 1024^2 * (HCCL_BUFFSIZE - 2) / 2 >= BS * 2 * (H + 128) * (ep * L + K + 1)
    need = 2 * bs * 2 * (h + 128) * (ep * (moe // ep) + k + 1)
    case["env"] = {"HCCL_BUFFSIZE": 2 + -(-need // 2 ** 20)}
    ref, world, outs, results = _twin(product, case, tmp_path)
    problems = [p for r, (got, want) in enumerate(zip(outs, results))
                for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
    assert not problems, "\n".join(problems)
