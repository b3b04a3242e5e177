"""Generated references chained as a model runs them: dispatch -> identity experts -> combine.

The expected values are computed here by plain loops (fp32 products rounded per term, summed in
k order, one final RNE cast), not by the runtime: a spec or driver bug cannot agree with them.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from .conftest import build_reference
from .oracles.moe_loops import const_value

BF16 = ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def refs(generated_dir):
    names = ("dispatch_v2", "combine_v2", "dispatch_setup", "dispatch_teardown", "combine_setup", "combine_teardown")
    return {n: build_reference(f"{n}.spec", generated_dir) for n in names}


def expected_combine(x, w, ids, E, shared=0, mask=None):
    """Loop oracle: RNE(sum_k fl32(w[t,k] * x[t]) (+ shared copies of x, unweighted)) for active tokens."""
    BS, K = ids.shape
    out = np.zeros(x.shape, dtype=x.dtype)
    x32 = x.astype(np.float32)
    for t in range(BS):
        if mask is not None and not mask[t]:
            continue
        acc = np.zeros(x.shape[1], dtype=np.float32)
        for k in range(K):
            if ids[t, k] < E:
                acc = acc + (x32[t] * np.float32(w[t, k])).astype(np.float32)
        for _ in range(shared):
            acc = acc + x32[t]
        out[t] = acc.astype(x.dtype)
    return out


def world(rng, W, BS, H, K, E, dtype=BF16):
    return [{"x": rng.standard_normal((BS, H)).astype(dtype),
             "expertIds": np.argsort(rng.random((BS, E)), axis=1)[:, :K].astype(np.int32),
             "expertScalesOptional": rng.random((BS, K)).astype(np.float32)} for _ in range(W)]


@pytest.mark.parametrize("product,shared,dtype", [
    ("ascend910b", False, BF16), ("ascend910_93", False, BF16), ("ascend910_93", True, np.float16),
    ("ascend950", False, np.float16), ("ascend950", True, BF16)])
def test_dispatch_then_combine_is_x_times_sum_of_weights(refs, product, shared, dtype):
    rng = np.random.default_rng(7)
    W, BS, H, K = 4, 6, 1024, 3
    Rs, S = (2, 1) if shared else (0, 1)
    E = 4 * (W - Rs)
    inputs = world(rng, W, BS, H, K, E, dtype)
    mask = np.arange(BS) < BS - 2  # a 1-D prefix mask on rank 1: its last two tokens stay home
    inputs[1]["xActiveMaskOptional"] = mask
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E, "sharedExpertRankNum": Rs, "sharedExpertNum": S}
    if product == "ascend910b":
        attrs.pop("sharedExpertRankNum"), attrs.pop("sharedExpertNum")
    d = refs["dispatch_v2"].run_world(inputs, attrs, product)
    cin = [{"expandX": d[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
            "assistInfoForCombine": d[r]["assistInfoForCombineOut"], "epSendCounts": d[r]["epRecvCountsOut"],
            "expertScales": inputs[r]["expertScalesOptional"], "xActiveMaskOptional": inputs[r].get("xActiveMaskOptional")}
           for r in range(W)]
    out = refs["combine_v2"].run_world(cin, attrs, product)
    for r in range(W):
        want = expected_combine(inputs[r]["x"], inputs[r]["expertScalesOptional"], inputs[r]["expertIds"], E,
                                shared=S if shared else 0, mask=mask if r == 1 else None)
        assert out[r]["xOut"].tobytes() == want.tobytes(), f"rank {r}"


def _combine_with_specials(refs, product, inputs, attrs, alpha1, alpha2, v):
    """DispatchV2 then CombineV2 (identity experts) with oriX = the tokens and the const experts' rows."""
    d = refs["dispatch_v2"].run_world(inputs, attrs, product)
    cin = [{"expandX": d[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
            "assistInfoForCombine": d[r]["assistInfoForCombineOut"], "epSendCounts": d[r]["epRecvCountsOut"],
            "expertScales": inputs[r]["expertScalesOptional"], "oriXOptional": inputs[r]["x"],
            "constExpertAlpha1Optional": alpha1, "constExpertAlpha2Optional": alpha2, "constExpertVOptional": v}
           for r in range(len(inputs))]
    return refs["combine_v2"].run_world(cin, attrs, product)


@pytest.mark.parametrize("product", ["ascend910_93", "ascend950"])
def test_const_experts_on_exact_values(refs, product):
    """Three const experts whose softmax is exact: equal logits (p = 1/2, 1/2), a logit gap of 200 either way
    (e^-200 is 0 in fp32: p = 1, 0 and 0, 1). Known rows, not from the spec or a loop oracle."""
    W, BS, H, K, E = 2, 3, 1024, 1, 2
    x = np.zeros((BS, H), BF16)
    x[:, 0], x[:, 1] = 1, 2                                  # every token: (1, 2, 0, ...)
    alpha1, alpha2, v = (np.zeros((3, H), BF16) for _ in range(3))
    alpha1[0, :2] = alpha2[0, :2] = 1                        # const 0: logits 3 and 3
    alpha1[1, 0], alpha2[1, 0] = 100, -100                   # const 1: logits 100 and -100
    alpha1[2, 0], alpha2[2, 0] = -100, 100                   # const 2: logits -100 and 100
    v[:, :3] = [4, -2, 6]
    ids = np.array([[E], [E + 1], [E + 2]], np.int32)        # token t to const expert t
    w = np.array([[1.0], [0.5], [0.25]], np.float32)
    inputs = [{"x": x, "expertIds": ids, "expertScalesOptional": w} for _ in range(W)]
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E, "constExpertNum": 3}
    out = _combine_with_specials(refs, product, inputs, attrs, alpha1, alpha2, v)
    want = np.zeros((BS, H), np.float32)
    want[0, :3] = [2.5, 0.0, 3.0]            # 1 * (x / 2 + v / 2)
    want[1, :3] = [0.5, 1.0, 0.0]            # 0.5 * x
    want[2, :3] = [1.0, -0.5, 1.5]           # 0.25 * v
    for r in range(W):
        assert out[r]["xOut"].astype(np.float32).tobytes() == want.tobytes(), f"rank {r}"


@pytest.mark.parametrize("product", ["ascend910_93", "ascend950"])
def test_special_experts_follow_the_real_kernel(refs, product):
    """Zero, copy and const experts (ids after the MoE experts, in that order): Moe(oriX) = 0, oriX and the real
    kernel's softmax mix of oriX and V (tests/oracles/moe_loops.py const_value), written here as loops (fp32 terms,
    the weight, the k-ordered sum, one RNE cast), not from the spec. x and the alphas are multiples of 1/32 with
    small numerators, so the logits are exact in any summation order and the result is bit-exact."""
    rng = np.random.default_rng(11)
    W, BS, H, K, E, zero, copy, const = 2, 5, 1024, 4, 4, 1, 1, 2
    specials = E + zero + copy + const
    inputs = [{"x": rng.integers(-2, 3, (BS, H)).astype(BF16),
               "expertIds": np.argsort(rng.random((BS, specials)), axis=1)[:, :K].astype(np.int32),
               "expertScalesOptional": rng.random((BS, K)).astype(np.float32)} for _ in range(W)]
    alpha1, alpha2 = ((rng.integers(-2, 3, (const, H)) / 32).astype(BF16) for _ in range(2))
    v = rng.standard_normal((const, H)).astype(BF16)
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E, "zeroExpertNum": zero, "copyExpertNum": copy,
             "constExpertNum": const}
    out = _combine_with_specials(refs, product, inputs, attrs, alpha1, alpha2, v)
    f32 = np.float32
    mixed = set()
    for r in range(W):
        x, ids, w = inputs[r]["x"].astype(f32), inputs[r]["expertIds"], inputs[r]["expertScalesOptional"]
        want = np.zeros((BS, H), BF16)
        for t in range(BS):
            acc = np.zeros(H, f32)
            for k in range(K):
                e = int(ids[t, k])
                if e < E:  # identity experts: the row comes back as sent
                    term = x[t]
                elif e < E + zero:
                    term = np.zeros(H, f32)
                elif e < E + zero + copy:
                    term = x[t]
                else:
                    c = e - E - zero - copy
                    term = const_value(x[t], alpha1[c], alpha2[c], v[c])
                    mixed.add(bool(np.any(term != x[t])) and bool(np.any(term != v[c].astype(f32))))
                acc = (acc + (term * f32(w[t, k])).astype(f32)).astype(f32)
            want[t] = acc.astype(BF16)
        assert out[r]["xOut"].tobytes() == want.tobytes(), f"rank {r}"
    assert mixed == {True}, "every routed const expert mixes x and v (neither weight is 0 or 1)"


def test_int8_comm_quant_round_trip_matches_block_oracle(refs):
    """commQuantMode 2: each returned row goes through 8-element int8 blocks (semantics §5), then the k-sum."""
    rng = np.random.default_rng(3)
    W, BS, H, K, E = 2, 4, 1024, 1, 2
    inputs = world(rng, W, BS, H, K, E)
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E}
    d = refs["dispatch_v2"].run_world(inputs, attrs, "ascend910_93")
    ones = [np.ones((BS, K), np.float32) for _ in range(W)]
    cin = [{"expandX": d[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
            "assistInfoForCombine": d[r]["assistInfoForCombineOut"], "epSendCounts": d[r]["epRecvCountsOut"],
            "expertScales": ones[r]} for r in range(W)]
    out = refs["combine_v2"].run_world(cin, dict(attrs, commQuantMode=2), "ascend910_93")
    for r in range(W):
        x = inputs[r]["x"].astype(np.float32)
        want = np.zeros((BS, H), np.float32)
        for t in range(BS):
            for b in range(0, H, 8):
                v = x[t, b:b + 8]
                s = np.float32(np.abs(v).max()) * (np.float32(1) / np.float32(127))
                stored = np.float32(BF16(s))
                q = np.clip(np.rint((v / s).astype(np.float16).astype(np.float32)), -128, 127).astype(np.int8)
                row = (q.astype(np.float16).astype(np.float32) * stored).astype(BF16).astype(np.float32)
                want[t, b:b + 8] = np.float32(0) + row * np.float32(1)  # the k-sum starts from +0.0
        assert out[r]["xOut"].astype(np.float32).tobytes() == want.astype(BF16).astype(np.float32).tobytes()


def test_setup_teardown_family_round_trip(refs):
    rng = np.random.default_rng(11)
    W, BS, H, K, E = 2, 16, 4096, 6, 32
    inputs = world(rng, W, BS, H, K, E)
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E, "commType": 2, "sharedExpertNum": 0}
    s = refs["dispatch_setup"].run_world([{k: v for k, v in i.items() if k in ("x", "expertIds")} for i in inputs],
                                         attrs, "ascend950")
    t = refs["dispatch_teardown"].run_world(
        [{"x": inputs[r]["x"], "y": s[r]["yOut"], "expertIds": inputs[r]["expertIds"],
          "commCmdInfo": s[r]["commCmdInfoOut"]} for r in range(W)], attrs, "ascend950")
    c = refs["combine_setup"].run_world(
        [{"expandX": t[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
          "assistInfoForCombine": t[r]["assistInfoForCombineOut"]} for r in range(W)], attrs, "ascend950")
    o = refs["combine_teardown"].run_world(
        [{"expandX": t[r]["expandXOut"], "quantExpandX": c[r]["quantExpandXOut"], "expertIds": inputs[r]["expertIds"],
          "expandIdx": s[r]["expandIdxOut"], "expertScales": inputs[r]["expertScalesOptional"],
          "commCmdInfo": c[r]["commCmdInfoOut"]} for r in range(W)], attrs, "ascend950")
    for r in range(W):
        want = expected_combine(inputs[r]["x"], inputs[r]["expertScalesOptional"], inputs[r]["expertIds"], E)
        assert o[r]["xOut"].tobytes() == want.tobytes()
    # DispatchTeardown delivers DispatchV2's rows in DispatchV2's order
    dv2 = refs["dispatch_v2"].run_world([{"x": i["x"], "expertIds": i["expertIds"]} for i in inputs],
                                        {k: v for k, v in attrs.items() if k != "commType"}, "ascend950")
    for r in range(W):
        n = int(dv2[r]["epRecvCountsOut"][-1])
        assert t[r]["expandXOut"][:n].tobytes() == dv2[r]["expandXOut"][:n].tobytes()
        assert np.array_equal(t[r]["assistInfoForCombineOut"][:len(dv2[r]["epRecvCountsOut"])],
                              dv2[r]["epRecvCountsOut"])


@pytest.mark.parametrize("name,product", [("dispatch_v2", "ascend910_93"), ("combine_v2", "ascend910_93")])
def test_run_rank_equals_run_world(refs, name, product):
    rng = np.random.default_rng(5)
    W, BS, H, K, E = 4, 5, 1024, 2, 8
    inputs = world(rng, W, BS, H, K, E)
    attrs = {"groupEp": "ep", "epWorldSize": W, "moeExpertNum": E}
    if name == "combine_v2":
        d = refs["dispatch_v2"].run_world(inputs, attrs, product)
        inputs = [{"expandX": d[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
                   "assistInfoForCombine": d[r]["assistInfoForCombineOut"], "epSendCounts": d[r]["epRecvCountsOut"],
                   "expertScales": inputs[r]["expertScalesOptional"]} for r in range(W)]
    ref = refs[name]
    everything = ref.run_world(inputs, attrs, product)
    for r in range(W):
        one = ref.run_rank(r, inputs, attrs, product)
        assert one.keys() == everything[r].keys()
        for key in one:
            assert one[key].tobytes() == everything[r][key].tobytes(), (r, key)
