"""The generated MoeDistributeDispatchV2 reference against independent oracles.

* quantised rows: tests/oracles/quant_loops.py (formats.md §2–4, per row / per block),
  applied to the rows tests/oracles/moe_loops.py (semantics.md §2) routes to each rank;
* known values: formats.md's MX example and a hand-computed INT8 per-token row;
* validation: one constraint broken at a time, exact code / param / check id;
* output contract: capacity shapes, storage dtypes, zeroed tails.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from opgen.runtime import OpError
from opgen.runtime.scope import Typed
from tests.oracles import moe_loops
from tests.oracles import quant_loops as ql

# Storage dtype of each CANN dtype, written out by hand (formats.md §1.1; uint8 codes where numpy has none).
STORAGE = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16, "INT8": np.int8,
    "INT32": np.int32, "INT64": np.int64, "HIFLOAT8": np.uint8, "FLOAT4_E1M2": np.uint8,
    "FLOAT8_E4M3FN": ml_dtypes.float8_e4m3fn, "FLOAT8_E5M2": ml_dtypes.float8_e5m2,
    "FLOAT8_E8M0": ml_dtypes.float8_e8m0fnu, "FLOAT4_E2M1": ml_dtypes.float4_e2m1fn,
}
TYPED = ("HIFLOAT8", "FLOAT4_E1M2")
ROW_OUTPUTS = ("expandXOut", "dynamicScalesOut", "expandScalesOut")


def as_bytes(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a)).view(np.uint8)


def raw(t):
    return t.data if isinstance(t, Typed) else np.asarray(t)


# =========================================================================== random worlds

@dataclass(frozen=True)
class World:
    name: str
    product: str
    W: int
    H: int
    K: int
    E: int
    bs: tuple = (4,)                 # one entry per rank, or one entry for all
    Rs: int = 0
    S: int = 1
    x: str = "BFLOAT16"
    mode: int = 0
    out: str | None = None           # expandXOut dtype through out_dtypes (None: the spec default)
    smooth: bool = False             # scalesOptional as smooth scales (modes 2 and 3)
    static: tuple | None = None      # scalesOptional shape for mode 1: (1,) or (H,)
    prequant_cols: int = 0           # mode 0 with pre-quantised x: scalesOptional (BS, cols)
    scale_dtype: str = "FLOAT32"
    mask: str | None = None          # None, "1d" or "2d"
    global_bs: bool = False
    ent: int = 1                     # expertTokenNumsType
    zero: int = 0                    # zeroExpertNum
    expert_scales: bool = True
    integer_x: bool = False          # integer-valued x (ties after a 0.5 static scale)
    seed: int = 0

    @property
    def bs_list(self):
        return list(self.bs) if len(self.bs) == self.W else [self.bs[0]] * self.W

    @property
    def S_eff(self):
        return 0 if self.Rs == 0 and self.S == 1 else self.S

    @property
    def out_dtype(self):
        if self.out is not None:
            return self.out
        return {0: self.x, 1: "INT8", 2: "INT8", 3: "FLOAT8_E4M3FN", 4: "FLOAT8_E4M3FN"}[self.mode]


def _x_values(rng, w: World, bs: int) -> np.ndarray:
    if w.integer_x:
        return rng.integers(-300, 301, size=(bs, w.H)).astype(np.float32)
    v = rng.standard_normal((bs, w.H)).astype(np.float32) * np.float32(8)
    if w.mode == 4:  # a different binade per 32-block, so the E8M0 codes vary
        nblk = -(-w.H // 32)
        shift = rng.integers(-12, 8, size=(bs, nblk))  # fp16 stays finite
        v = v * np.repeat(np.ldexp(np.float32(1), shift), 32, axis=1)[:, :w.H].astype(np.float32)
    return v


def _make_x(rng, w: World, bs: int):
    v = _x_values(rng, w, bs)
    if w.x == "FLOAT16":
        return v.astype(np.float16)
    if w.x == "BFLOAT16":
        return v.astype(ml_dtypes.bfloat16)
    if w.x in TYPED:
        return Typed(rng.integers(0, 256 if w.x == "HIFLOAT8" else 16, size=(bs, w.H), dtype=np.uint8), w.x)
    return (v * np.float32(4)).astype(STORAGE[w.x])


def _make_scales(rng, w: World, bs: int):
    if w.smooth:
        rows = w.E + w.S if w.Rs else w.E
        return rng.uniform(0.5, 1.5, size=(rows, w.H)).astype(np.float32)
    if w.static is not None:
        if w.integer_x:
            return np.full(w.static, 0.5, dtype=np.float32)
        return rng.uniform(0.25, 4.0, size=w.static).astype(np.float32)
    if w.prequant_cols:
        if w.scale_dtype == "FLOAT8_E8M0":
            return rng.integers(100, 150, size=(bs, w.prequant_cols), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
        return rng.uniform(0.01, 2.0, size=(bs, w.prequant_cols)).astype(np.float32)
    return None


def _make_ids(rng, w: World, bs: int) -> np.ndarray:
    pool = w.E + w.zero
    return np.stack([rng.permutation(pool)[:w.K] for _ in range(bs)]).astype(np.int32).reshape(bs, w.K)


def _make_mask(rng, w: World, bs: int):
    if w.mask == "1d":
        n = int(rng.integers(1, bs + 1))
        return np.arange(bs) < n
    if w.mask == "2d":
        m = rng.random((bs, w.K)) < 0.7
        m[0, :] = False  # one token sends nothing at all
        return m
    return None


def make_world(w: World):
    rng = np.random.default_rng(w.seed)
    inputs = []
    for bs in w.bs_list:
        d = {"x": _make_x(rng, w, bs), "expertIds": _make_ids(rng, w, bs)}
        s = _make_scales(rng, w, bs)
        if s is not None:
            d["scalesOptional"] = s
        m = _make_mask(rng, w, bs)
        if m is not None:
            d["xActiveMaskOptional"] = m
        if w.expert_scales:
            d["expertScalesOptional"] = rng.uniform(0, 1, size=(bs, w.K)).astype(np.float32)
        inputs.append(d)
    attrs = {"groupEp": "ep", "epWorldSize": w.W, "moeExpertNum": w.E, "quantMode": w.mode,
             "expertTokenNumsType": w.ent}
    if w.Rs:
        attrs.update(sharedExpertRankNum=w.Rs, sharedExpertNum=w.S)
    if w.global_bs:
        attrs["globalBS"] = max(w.bs_list) * w.W
    if w.zero:
        attrs["zeroExpertNum"] = w.zero
    out_dtypes = {"expandXOut": w.out} if w.out else None
    return inputs, attrs, out_dtypes


# --------------------------------------------------------------------------- expected rows

def expected_row(w: World, inputs, r: int, t: int, smooth_row: int):
    """(expandX row, dynamicScales row or None) of token t of rank r per quant_loops."""
    x_row = raw(inputs[r]["x"])[t]
    scales = inputs[r].get("scalesOptional")
    dt = w.out_dtype
    if w.mode == 0:
        q = ql.passthrough(x_row, w.x, dt)
        return q, (np.asarray(scales)[t] if scales is not None else None)
    if w.mode == 1:
        return ql.static(x_row, scales, dt), None
    smooth = np.asarray(scales)[smooth_row] if scales is not None else None
    if w.mode == 2:
        return ql.per_token(x_row, smooth, dt)
    if w.mode == 3:
        return ql.per_group(x_row, smooth, dt)
    return ql.mx(x_row, dt)


def routing(w: World, inputs):
    ids = [d["expertIds"] for d in inputs]
    masks = [d.get("xActiveMaskOptional") for d in inputs] if w.mask else None
    return moe_loops.dispatch_oracle(ids, masks, W=w.W, Rs=w.Rs, S=w.S, E=w.E, K=w.K)


def capacity(w: World, rank: int) -> int:
    """A by hand: shared rank maxBS * ceil(W / (Rs / S)), MoE rank globalBS * min(L, K)."""
    max_bs = max(w.bs_list) if w.global_bs else w.bs_list[rank]
    if rank < w.Rs:
        return max_bs * math.ceil(w.W / (w.Rs // w.S))
    L = w.E // (w.W - w.Rs)
    return max_bs * w.W * min(L, w.K)


def scale_shape(w: World, A: int):
    if w.mode == 3:
        return (A, -(-w.H // 128))
    if w.mode == 4:
        n = -(-w.H // 32)
        return (A, n + n % 2)
    if w.mode == 0 and w.prequant_cols:
        return (A, w.prequant_cols)
    return (A,)


def scale_dtype(w: World) -> str:
    if w.mode == 4:
        return "FLOAT8_E8M0"
    if w.mode == 0 and w.prequant_cols:
        return w.scale_dtype
    return "FLOAT32"


# --------------------------------------------------------------------------- the worlds

A2, A3, A5 = "ascend910b", "ascend910_93", "ascend950"
WORLDS = [
    # Atlas A2: quantMode 0 / 2, INT8 out, H a multiple of 32, no shared experts
    World("a2-m0-fp16", A2, W=4, H=256, K=3, E=8, x="FLOAT16", seed=1),
    World("a2-m0-bf16-mask2d-ent0", A2, W=3, H=160, K=2, E=6, mask="2d", ent=0, seed=2),
    World("a2-m2-bf16-smooth-mask1d", A2, W=4, H=256, K=3, E=8, mode=2, smooth=True, mask="1d", seed=3),
    World("a2-m2-fp16-uneven", A2, W=4, H=96, K=2, E=4, x="FLOAT16", mode=2, bs=(3, 5, 2, 4),
          global_bs=True, ent=0, seed=4),
    World("a2-m2-bf16-smooth-mask2d", A2, W=2, H=160, K=4, E=6, mode=2, smooth=True, mask="2d", seed=5),
    # Atlas A3: quantMode 0 / 2, shared experts
    World("a3-m0-bf16-shared", A3, W=4, H=1024, K=2, E=6, Rs=1, S=1, seed=6),
    World("a3-m2-bf16-smooth-shared2", A3, W=5, H=1024, K=3, E=6, Rs=2, S=2, mode=2, smooth=True, seed=7),
    World("a3-m2-fp16-smooth-mask1d-ent0", A3, W=2, H=2048, K=2, E=4, x="FLOAT16", mode=2, smooth=True,
          mask="1d", ent=0, seed=8),
    World("a3-m2-bf16-uneven-shared", A3, W=4, H=1024, K=2, E=6, Rs=2, S=1, mode=2, bs=(2, 4, 3, 1),
          global_bs=True, seed=9),
    World("a3-m2-bf16-mask2d-shared-smooth", A3, W=4, H=1024, K=3, E=6, Rs=1, S=1, mode=2, smooth=True,
          mask="2d", seed=10),
    World("a3-m2-fp16-zero-experts", A3, W=2, H=1024, K=3, E=4, x="FLOAT16", mode=2, zero=2, seed=11),
    # Ascend 950: quantMode 0 (pass-through, ->HIFLOAT8, pre-quantised x), 1, 2, 3, 4
    World("a5-m0-bf16", A5, W=2, H=1024, K=2, E=4, seed=12),
    World("a5-m0-bf16-hif8", A5, W=3, H=1024, K=2, E=6, out="HIFLOAT8", mask="2d", seed=13),
    World("a5-m0-fp16-hif8-shared", A5, W=4, H=1024, K=2, E=6, Rs=1, S=1, x="FLOAT16", out="HIFLOAT8", seed=14),
    World("a5-m0-e4m3-prequant", A5, W=2, H=1024, K=2, E=4, x="FLOAT8_E4M3FN", prequant_cols=8, seed=15),
    World("a5-m0-e5m2-prequant-e8m0", A5, W=2, H=1056, K=2, E=4, x="FLOAT8_E5M2", prequant_cols=34,
          scale_dtype="FLOAT8_E8M0", seed=16),
    World("a5-m0-hif8-prequant-shared", A5, W=3, H=1024, K=2, E=4, Rs=1, S=1, x="HIFLOAT8", prequant_cols=1,
          seed=17),
    World("a5-m0-e2m1-prequant", A5, W=2, H=1024, K=2, E=4, x="FLOAT4_E2M1", prequant_cols=16,
          scale_dtype="FLOAT8_E8M0", seed=18),
    World("a5-m0-e1m2-prequant-mask1d", A5, W=2, H=1024, K=2, E=4, x="FLOAT4_E1M2", prequant_cols=16,
          scale_dtype="FLOAT8_E8M0", mask="1d", seed=19),
    World("a5-m1-int8-vec", A5, W=2, H=1024, K=2, E=4, mode=1, static=(1024,), seed=20),
    World("a5-m1-int8-ties-sat", A5, W=3, H=1024, K=2, E=6, mode=1, static=(1,), integer_x=True, seed=21),
    World("a5-m1-hif8-shared", A5, W=3, H=1024, K=2, E=4, Rs=1, S=1, mode=1, out="HIFLOAT8", static=(1,),
          x="FLOAT16", seed=22),
    World("a5-m2-int8-smooth-shared", A5, W=4, H=1024, K=3, E=6, Rs=2, S=2, mode=2, smooth=True, seed=23),
    World("a5-m2-e4m3", A5, W=2, H=1056, K=2, E=4, mode=2, out="FLOAT8_E4M3FN", mask="2d", seed=24),
    World("a5-m2-e5m2-smooth-uneven", A5, W=3, H=1024, K=2, E=6, x="FLOAT16", mode=2, out="FLOAT8_E5M2",
          smooth=True, bs=(2, 5, 3), global_bs=True, ent=0, seed=25),
    World("a5-m3-e4m3", A5, W=2, H=1056, K=2, E=4, mode=3, seed=26),
    World("a5-m3-e5m2-smooth-shared", A5, W=4, H=1056, K=2, E=6, Rs=1, S=1, mode=3, out="FLOAT8_E5M2",
          smooth=True, mask="1d", seed=27),
    World("a5-m3-e4m3-fp16-smooth", A5, W=2, H=1024, K=3, E=4, x="FLOAT16", mode=3, smooth=True, seed=28),
    World("a5-m4-e4m3-bf16", A5, W=2, H=1056, K=2, E=4, mode=4, seed=29),
    World("a5-m4-e5m2-fp16-shared", A5, W=4, H=1024, K=2, E=6, Rs=2, S=2, x="FLOAT16", mode=4,
          out="FLOAT8_E5M2", seed=30),
    World("a5-m4-e2m1-fp16", A5, W=2, H=1056, K=2, E=4, x="FLOAT16", mode=4, out="FLOAT4_E2M1", mask="2d",
          seed=31),
    World("a5-m4-e1m2-bf16", A5, W=3, H=1056, K=2, E=6, mode=4, out="FLOAT4_E1M2", ent=0, seed=32),
]


def test_worlds_cover_every_product_mode_and_dtype():
    """The table above reaches every (product, quant mode, expandX dtype) the spec allows."""
    seen = {(w.product, w.mode, w.out_dtype) for w in WORLDS}
    want = {(A2, 0, "FLOAT16"), (A2, 0, "BFLOAT16"), (A2, 2, "INT8"),
            (A3, 0, "BFLOAT16"), (A3, 2, "INT8"),
            (A5, 0, "BFLOAT16"), (A5, 0, "HIFLOAT8"), (A5, 0, "FLOAT8_E4M3FN"), (A5, 0, "FLOAT8_E5M2"),
            (A5, 0, "FLOAT4_E2M1"), (A5, 0, "FLOAT4_E1M2"),
            (A5, 1, "INT8"), (A5, 1, "HIFLOAT8"), (A5, 2, "INT8"), (A5, 2, "FLOAT8_E4M3FN"),
            (A5, 2, "FLOAT8_E5M2"), (A5, 3, "FLOAT8_E4M3FN"), (A5, 3, "FLOAT8_E5M2"),
            (A5, 4, "FLOAT8_E4M3FN"), (A5, 4, "FLOAT8_E5M2"), (A5, 4, "FLOAT4_E2M1"), (A5, 4, "FLOAT4_E1M2")}
    assert want <= seen


@pytest.mark.parametrize("w", WORLDS, ids=lambda w: w.name)
def test_quantised_rows_match_oracle(dispatch_ref, w: World):
    inputs, attrs, out_dtypes = make_world(w)
    outs = dispatch_ref.run_world(inputs, attrs, w.product, out_dtypes)
    plan = routing(w, inputs)
    assert len(outs) == w.W
    total_rows = 0
    for d, (out, info) in enumerate(zip(outs, plan)):
        rows = info["rows"]
        n = len(rows)
        total_rows += n
        A = capacity(w, d)
        # ---- output contract: capacity shapes and storage dtypes
        assert out["expandXOut"].shape == (A, w.H)
        assert out["expandXOut"].dtype == np.dtype(STORAGE[w.out_dtype])
        assert out["dynamicScalesOut"].shape == scale_shape(w, A)
        assert out["dynamicScalesOut"].dtype == np.dtype(STORAGE[scale_dtype(w)])
        assert n <= A
        # ---- rows: bit-exact against the oracle, tails zero
        exp_x, exp_s = [], []
        for (r, t, _k, smooth_row) in rows:
            q, s = expected_row(w, inputs, r, t, smooth_row)
            exp_x.append(as_bytes(q))
            exp_s.append(None if s is None else as_bytes(np.asarray(s).reshape(-1)))
        got_x = as_bytes(out["expandXOut"])
        for i, want in enumerate(exp_x):
            assert np.array_equal(got_x[i], want), \
                f"{w.name}: rank {d} row {i} (src {rows[i][:3]}) expandXOut differs at " \
                f"{np.flatnonzero(got_x[i] != want)[:8]}"
        assert not got_x[n:].any(), f"{w.name}: rank {d} expandXOut rows beyond {n} are not zero"
        got_s = as_bytes(out["dynamicScalesOut"].reshape(A, -1))
        for i, want in enumerate(exp_s):
            if want is not None:
                assert np.array_equal(got_s[i], want), f"{w.name}: rank {d} row {i} dynamicScalesOut differs"
        if all(s is None for s in exp_s):
            assert not got_s.any(), f"{w.name}: rank {d} dynamicScalesOut written without a scale formula"
        else:
            assert not got_s[n:].any(), f"{w.name}: rank {d} dynamicScalesOut rows beyond {n} are not zero"
        # ---- routing outputs against moe_loops
        counts = info["counts"]
        L = len(counts)
        assert out["expertTokenNumsOut"].tolist() == moe_loops.expert_token_nums(counts, w.ent)
        assert out["epRecvCountsOut"][:w.W * L].tolist() == moe_loops.ep_recv_counts(counts)
        if w.product == A2:
            assert out["assistInfoForCombineOut"][:w.bs_list[d] * w.K].tolist() == moe_loops.a2_expand_idx(
                inputs[d]["expertIds"], inputs[d].get("xActiveMaskOptional"), w.E)
        else:
            assert out["assistInfoForCombineOut"].tolist() == moe_loops.assist_triples(rows, A)
        if w.product == A3:
            exp_es = moe_loops.expand_scales(rows, [i["expertScalesOptional"] for i in inputs], w.K, A)
            assert as_bytes(out["expandScalesOut"]).tobytes() == as_bytes(np.array(exp_es, np.float32)).tobytes()
    assert total_rows > 0


# =========================================================================== run_rank == run_world

@pytest.mark.parametrize("name", ["a3-m2-bf16-uneven-shared", "a5-m4-e1m2-bf16", "a5-m3-e5m2-smooth-shared",
                                  "a2-m2-bf16-smooth-mask1d"])
def test_run_rank_equals_run_world(dispatch_ref, name):
    w = next(x for x in WORLDS if x.name == name)
    inputs, attrs, out_dtypes = make_world(w)
    world = dispatch_ref.run_world(inputs, attrs, w.product, out_dtypes)
    for r in range(w.W):
        one = dispatch_ref.run_rank(r, inputs, attrs, w.product, out_dtypes)
        assert one.keys() == world[r].keys()
        for k in one:
            assert one[k].dtype == world[r][k].dtype and one[k].shape == world[r][k].shape, (r, k)
            assert as_bytes(one[k]).tobytes() == as_bytes(world[r][k]).tobytes(), (r, k)


def test_infer_matches_run_world(dispatch_ref):
    """infer() gives the (shape, dtype) of every output run_world returns, per rank."""
    for name in ("a3-m2-bf16-uneven-shared", "a5-m4-e1m2-bf16", "a5-m0-bf16-hif8", "a2-m0-fp16",
                 "a5-m0-e5m2-prequant-e8m0"):
        w = next(x for x in WORLDS if x.name == name)
        inputs, attrs, out_dtypes = make_world(w)
        outs = dispatch_ref.run_world(inputs, attrs, w.product, out_dtypes)
        for r in range(w.W):
            inferred = dispatch_ref.infer(inputs[r], dict(attrs, epRankId=r), w.product, out_dtypes)
            assert set(inferred) == set(outs[r])
            for k, (shape, dtype) in inferred.items():
                assert outs[r][k].shape == tuple(shape), (name, r, k)
                assert outs[r][k].dtype == np.dtype(STORAGE[dtype]), (name, r, k)
            assert inferred["expandXOut"][0] == (capacity(w, r), w.H)
            assert inferred["expertTokenNumsOut"][0] == (1 if r < w.Rs else w.E // (w.W - w.Rs),)


def test_tails_beyond_received_rows_are_zero(dispatch_ref):
    w = next(x for x in WORLDS if x.name == "a3-m2-bf16-mask2d-shared-smooth")
    inputs, attrs, out_dtypes = make_world(w)
    outs = dispatch_ref.run_world(inputs, attrs, w.product, out_dtypes)
    for d, info in enumerate(routing(w, inputs)):
        n = len(info["rows"])
        assert n < capacity(w, d)  # the mask leaves room, so the tail is really tested
        for name in ROW_OUTPUTS:
            assert not as_bytes(outs[d][name][n:]).any(), (d, name)
        assert not outs[d]["assistInfoForCombineOut"][3 * n:].any()


def test_tp_allgather_appends_the_peer_rows_a3(seed_era_dispatch):
    """tpWorldSize 2 (A3 of the seed era, L = 1): world rank i = (ep i // 2, tp i % 2); each tp slice is an EP
    group and rank i's outputs are its own rows then its TP peer's (semantics.md §2.4), in tpWorldSize * A rows.
    The current documents removed TP (TP域通信不再支持; test_one_broken_constraint rejects tpWorldSize 2); the
    runtime's TP path stays tested here for as long as it exists."""
    dispatch_ref = seed_era_dispatch[0]
    W, T, BS, H, K, E = 2, 2, 3, 1024, 2, 2
    rng = np.random.default_rng(40)
    inputs = [{"x": (rng.standard_normal((BS, H)) * 4).astype(ml_dtypes.bfloat16),
               "expertIds": np.stack([rng.permutation(E)[:K] for _ in range(BS)]).astype(np.int32),
               "scalesOptional": rng.uniform(0.5, 1.5, size=(E, H)).astype(np.float32)} for _ in range(W * T)]
    attrs = {"groupEp": "ep", "groupTp": "tp", "epWorldSize": W, "tpWorldSize": T, "moeExpertNum": E,
             "quantMode": 2}
    outs = dispatch_ref.run_world(inputs, attrs, A3)
    A = BS * W * min(E // W, K)
    plans = [moe_loops.dispatch_oracle([inputs[ep * T + tp]["expertIds"] for ep in range(W)], None,
                                       W=W, Rs=0, S=1, E=E, K=K) for tp in range(T)]
    for i, out in enumerate(outs):
        ep, tp = divmod(i, T)
        assert out["expandXOut"].shape == (T * A, H) and out["dynamicScalesOut"].shape == (T * A,)
        rows = [(r * T + sl, t, srow) for sl in (tp, 1 - tp) for (r, t, _k, srow) in plans[sl][ep]["rows"]]
        for j, (src, t, srow) in enumerate(rows):
            q, sc = ql.per_token(inputs[src]["x"][t], inputs[src]["scalesOptional"][srow], "INT8")
            assert np.array_equal(out["expandXOut"][j], q), (i, j)
            assert as_bytes(out["dynamicScalesOut"][j]).tobytes() == as_bytes(sc).tobytes(), (i, j)
        assert not out["expandXOut"][len(rows):].any()
        own, peer = (len(plans[sl][ep]["rows"]) for sl in (tp, 1 - tp))
        want_tp = [0, 0]
        want_tp[tp], want_tp[1 - tp] = own, peer
        assert out["tpRecvCountsOut"].tolist() == want_tp
        assert out["expertTokenNumsOut"].tolist() == [own + peer]
        assert out["epRecvCountsOut"].tolist() == (moe_loops.ep_recv_counts(plans[tp][ep]["counts"])
                                                   + moe_loops.ep_recv_counts(plans[1 - tp][ep]["counts"]))


# =========================================================================== known values

def _one_token_world(product, H, row, x_dtype, E=2):
    """W=2, K=1: rank 0's single token goes to expert 1 (rank 1); rank 1's goes to expert 0."""
    x0 = np.asarray(row, dtype=np.float32).reshape(1, H).astype(x_dtype)
    x1 = np.ones((1, H), dtype=np.float32).astype(x_dtype)
    return [{"x": x0, "expertIds": np.array([[1]], np.int32)},
            {"x": x1, "expertIds": np.array([[0]], np.int32)}]


def test_mx_known_values_from_formats_md(dispatch_ref):
    """formats.md §3.3: bf16 (0, 8, 64, 512) + zeros -> e4m3 bytes (0, 72, 96, 120), scale code 128, pad 0."""
    H = 1056  # 33 blocks of 32: the 34th scale is the padding
    row = np.zeros(H, np.float32)
    row[:4] = (0, 8, 64, 512)
    inputs = _one_token_world(A5, H, row, ml_dtypes.bfloat16)
    attrs = {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 2, "quantMode": 4}
    outs = dispatch_ref.run_world(inputs, attrs, A5)
    got = outs[1]
    assert got["expandXOut"].dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert as_bytes(got["expandXOut"][0]).tolist() == [0, 72, 96, 120] + [0] * (H - 4)
    codes = as_bytes(got["dynamicScalesOut"][0]).tolist()
    assert got["dynamicScalesOut"].shape == (2, 34)
    assert got["dynamicScalesOut"].dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
    assert codes == [128] + [0] * 33
    assert got["dynamicScalesOut"][0, 0].astype(np.float32) == 2.0  # 2^(128-127)
    # rank 0 received rank 1's all-ones row: e = 127 everywhere -> code 119, data 1 * 2^8 = 256 (0x78)
    ones = outs[0]
    assert as_bytes(ones["expandXOut"][0]).tolist() == [120] * H
    assert as_bytes(ones["dynamicScalesOut"][0]).tolist() == [119] * 33 + [0]
    # and the oracle agrees with the document
    q, c = ql.mx(row.astype(ml_dtypes.bfloat16), "FLOAT8_E4M3FN")
    assert as_bytes(q)[:4].tolist() == [0, 72, 96, 120] and as_bytes(c).tolist() == [128] + [0] * 33


def test_int8_per_token_known_row(dispatch_ref):
    """amax 254 -> ds = 127/254 = 0.5 exactly; q = rint(x/2) half-to-even; scale 1/ds = 2."""
    H = 1024
    row = np.zeros(H, np.float32)
    row[:10] = (1, -2, 0.5, 254, 3, 5, -3, -254, 7, 0.75)
    want = [0, -1, 0, 127, 2, 2, -2, -127, 4, 0]
    inputs = _one_token_world(A3, H, row, ml_dtypes.bfloat16)
    attrs = {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 2, "quantMode": 2}
    outs = dispatch_ref.run_world(inputs, attrs, A3)
    got = outs[1]
    assert got["expandXOut"].dtype == np.int8
    assert got["expandXOut"][0, :10].tolist() == want
    assert not got["expandXOut"][0, 10:].any() and not got["expandXOut"][1:].any()
    assert got["dynamicScalesOut"][0] == np.float32(2.0)
    assert not got["dynamicScalesOut"][1:].any()
    # the all-ones row of rank 1: ds = 127, q = 127 everywhere, scale fl32(1/127)
    assert (outs[0]["expandXOut"][0] == 127).all()
    assert outs[0]["dynamicScalesOut"][0] == np.float32(1) / np.float32(127)
    q, s = ql.per_token(row.astype(ml_dtypes.bfloat16), None, "INT8")
    assert q[:10].tolist() == want and s == np.float32(2.0)


def test_static_hif8_known_values(dispatch_ref):
    """Mode 1 HIFLOAT8: t = x * 2, TA rounding: 1.0625*2 = 2.125 is a tie at 2 bits -> 2.25 (0x11)."""
    H = 1024
    row = np.zeros(H, np.float32)
    row[:5] = (1.0, 1.0625, -0.5, 3.0, 12288.0)
    # 2 -> 0x10; 2.125 -> 2.25 = 0x11 (tie away); -1 -> 0x88; 6 -> 0x24 (4 * 1.5); 24576 = 1.5 * 2^14 -> 0x6D
    want = [0x10, 0x11, 0x88, 0x24, 0x6D]
    inputs = _one_token_world(A5, H, row, ml_dtypes.bfloat16)
    for d in inputs:
        d["scalesOptional"] = np.array([2.0], np.float32)
    attrs = {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 2, "quantMode": 1}
    outs = dispatch_ref.run_world(inputs, attrs, A5, {"expandXOut": "HIFLOAT8"})
    got = outs[1]["expandXOut"]
    assert got.dtype == np.uint8
    assert got[0, :5].tolist() == want
    assert not got[0, 5:].any()
    assert ql.static(row.astype(ml_dtypes.bfloat16), np.array([2.0], np.float32), "HIFLOAT8")[:5].tolist() == want


def test_per_group_known_values(dispatch_ref):
    """Mode 3 e4m3: group amax 448 -> dyn 1, scale 1 / 1; group amax 1 -> dyn 448, scale fl32(1 / 448) (the real
    kernel writes 1 / dyn: quantize_functions.h ComputePerTileDynamic)."""
    H = 1056
    row = np.zeros(H, np.float32)
    row[0], row[1] = 448, -1.5
    row[128:256] = 1.0
    row[1024:1056] = -0.25  # the partial 9th group: amax 0.25 -> dyn 1792, data -448 (0xFE)
    row[256:1024] = 2.0     # no all-zero group (0 * Inf = NaN is formats.md §4.1's open point)
    row[256:384] = 3.0      # group 2: amax 3, where 1 / (448 / 3) and 3 * fl32(1 / 448) differ by 1 ulp
    inputs = _one_token_world(A5, H, row, ml_dtypes.bfloat16)
    attrs = {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 2, "quantMode": 3}
    got = dispatch_ref.run_world(inputs, attrs, A5)[1]
    xq = as_bytes(got["expandXOut"][0])
    assert xq[0] == 0x7E and xq[1] == 0xBC  # 448 = S.1111.110, -1.5 = 1.0111.100
    assert (xq[128:256] == 0x7E).all()      # 1 * 448
    assert (xq[1024:] == 0xFE).all()        # -0.25 * 1792 = -448
    one = np.float32(1)
    s = got["dynamicScalesOut"][0]
    assert s.shape == (9,)
    assert s[0] == one and s[1] == one / np.float32(448) and s[8] == one / np.float32(1792)
    three = np.float32(3)
    assert s[2] == one / (np.float32(448) / three) and s[2] != three * (one / np.float32(448))
    assert (xq[256:384] == 0x7E).all()      # 3 * fl32(448 / 3) rounds to 448


# =========================================================================== validation

BASE = {
    A2: dict(W=2, BS=4, H=256, K=2, E=360),
    A3: dict(W=4, BS=4, H=1024, K=3, E=24),
    A5: dict(W=4, BS=4, H=1024, K=3, E=24),
}


def case_inputs(c: dict):
    """One rank's (inputs, attrs, out_dtypes) for a validation case description."""
    rng = np.random.default_rng(0)
    bs, H, K, W = c["BS"], c["H"], c["K"], c["W"]
    x_dtype = c.get("x_dtype", "BFLOAT16")
    inputs = {}
    if x_dtype is not None:
        v = rng.standard_normal((bs, H)).astype(np.float32)
        inputs["x"] = Typed(np.zeros((bs, H), np.uint8), x_dtype) if x_dtype in TYPED else v.astype(STORAGE[x_dtype])
    ids_dtype = c.get("ids_dtype", "INT32")
    if ids_dtype is not None:
        inputs["expertIds"] = np.zeros((bs, K), dtype=STORAGE[ids_dtype])
    if c.get("scales") is not None:
        shape, dt = c["scales"]
        inputs["scalesOptional"] = np.ones(shape, np.float32).astype(STORAGE[dt])
    if c.get("mask") is not None:
        inputs["xActiveMaskOptional"] = np.asarray(c["mask"], dtype=bool)
    if c.get("expert_scales") is not None:
        inputs["expertScalesOptional"] = np.ones(c["expert_scales"], np.float32)
    if c.get("elastic"):
        inputs["elasticInfoOptional"] = np.zeros((4 + 2 * W,), np.float32)
    if c.get("perf") is not None:
        inputs["performanceInfoOptional"] = np.zeros(c["perf"], np.int64)
    attrs = {"groupEp": "ep", "epWorldSize": W, "epRankId": 0, "moeExpertNum": c["E"]}
    attrs.update(c.get("attrs", {}))
    out = c.get("out")
    return inputs, attrs, out


def variant(product, base=None, **change):
    """BASE[product] + ``base`` (still valid) + ``change`` (the one broken parameter)."""
    c = dict(BASE[product])
    for part in (base or {}, change):
        for k, v in part.items():
            if k == "attrs":
                c["attrs"] = dict(c.get("attrs", {}), **v)
            else:
                c[k] = v
    return c


HIER_A2 = dict(W=16, E=32, attrs={"commAlg": "hierarchy"}, expert_scales=(4, 2))
# the hierarchy window: moeExpertNum * maxBS * (2H + 3 * Align8(K) * 4 + 64) + 404 MB (aclnnMoeDistributeDispatchV4.md)
HIER_A3 = dict(W=16, E=240, attrs={"commAlg": "hierarchy", "HCCL_BUFFSIZE": 512}, expert_scales=(4, 3))
FM2_A3 = dict(attrs={"commAlg": "fullmesh_v2"})
Q2 = dict(attrs={"quantMode": 2})
M1 = dict(attrs={"quantMode": 1}, scales=((1,), "FLOAT32"))
M4 = dict(attrs={"quantMode": 4})
PREQ = dict(x_dtype="FLOAT8_E4M3FN", scales=((4, 8), "FLOAT32"))
BIGH = dict(H=8192)

# (product, base, change, code, param, check id, the bad value as the message shows it)
CASES = [
    # ---- Atlas A2
    (A2, None, dict(x_dtype=None), 161001, "x", "null.x", "nullptr"),
    (A2, None, dict(ids_dtype=None), 161001, "expertIds", "null.expertIds", "nullptr"),
    (A2, None, dict(x_dtype="FLOAT32"), 161002, "x", "dtype.x", '"FLOAT32"'),
    (A2, None, dict(ids_dtype="INT64"), 161002, "expertIds", "dtype.expertIds", '"INT64"'),
    (A2, None, dict(H=1000), 561002, "x", "ascend910b.x", "1000"),
    (A2, None, dict(W=9), 561002, "epWorldSize", "ascend910b.epWorldSize", "9"),
    (A2, None, dict(E=1080), 561002, "moeExpertNum", "ascend910b.moeExpertNum", "1080"),
    (A2, None, dict(BS=257), 561002, "x", "ascend910b.x.2", "257"),
    (A2, None, dict(attrs={"constExpertNum": 1}), 561002, "constExpertNum", "unsupported.constExpertNum", "1"),
    # tpWorldSize 0 and 1 both mean no TP ("传0即可"): only a real TP domain (2) is refused here
    (A2, None, dict(attrs={"tpWorldSize": 2}), 561002, "tpWorldSize", "domain.tpWorldSize", "2"),
    (A2, None, dict(attrs={"quantMode": 1}), 561002, "quantMode", "quant_mode.quantMode", "1"),
    (A2, None, dict(attrs={"quantMode": 4}), 561002, "quantMode", "quant_mode.quantMode", "4"),
    (A2, None, dict(scales=((360, 256), "FLOAT32")), 561002, "scalesOptional", "ascend910b.scalesOptional.2",
     "(360, 256)"),
    (A2, Q2, dict(scales=((360, 288), "FLOAT32")), 561002, "scalesOptional", "op.scalesOptional", "(360, 288)"),
    (A2, None, dict(expert_scales=(4, 3)), 561002, "expertScalesOptional", "shape.expertScalesOptional",
     "(4, 3)"),
    (A2, None, dict(elastic=True), 561002, "elasticInfoOptional", "unsupported.elasticInfoOptional", "(8,)"),
    (A2, None, dict(perf=(3,)), 561002, "performanceInfoOptional", "shape.performanceInfoOptional", "(3,)"),
    (A2, HIER_A2, dict(mask=[True] * 4), 561002, "xActiveMaskOptional", "ascend910b.xActiveMaskOptional", "(4,)"),
    (A2, HIER_A2, dict(attrs={"copyExpertNum": 1}), 561002, "copyExpertNum", "ascend910b.copyExpertNum", "1"),
    (A2, HIER_A2, dict(expert_scales=None), 561002, "expertScalesOptional",
     "ascend910b.expertScalesOptional", "nullptr"),
    (A2, HIER_A2, dict(W=8), 561002, "epWorldSize", "ascend910b.epWorldSize.2", "8"),
    (A2, HIER_A2, dict(E=544), 561002, "moeExpertNum", "ascend910b.moeExpertNum.2", "544"),
    # ---- Atlas A3
    (A3, None, dict(W=1), 561002, "epWorldSize", "domain.epWorldSize", "1"),
    (A3, None, dict(E=26), 561002, "moeExpertNum", "op.moeExpertNum", "26"),
    (A3, dict(E=32), dict(K=17), 561002, "expertIds", "op.expertIds", "17"),
    (A3, dict(W=2, E=4), dict(E=2), 561002, "expertIds", "op.expertIds.2", "3"),
    (A3, None, dict(mask=[True, False, True, True]), 161002, "xActiveMaskOptional", "op.xActiveMaskOptional",
     "(4,)"),
    (A3, dict(mask=[True, True, True, False]), dict(attrs={"globalBS": 20}), 161002, "xActiveMaskOptional",
     "op.xActiveMaskOptional.2", "(4,)"),
    (A3, None, dict(attrs={"globalBS": 18}), 561002, "globalBS", "op.globalBS", "18"),
    (A3, None, dict(attrs={"globalBS": 12}), 561002, "globalBS", "op.globalBS", "12"),
    (A3, None, dict(attrs={"sharedExpertNum": 2}), 561002, "sharedExpertNum", "op.sharedExpertNum", "2"),
    (A3, None, dict(attrs={"sharedExpertNum": 5}), 561002, "sharedExpertNum", "domain.sharedExpertNum", "5"),
    (A3, None, dict(attrs={"sharedExpertRankNum": 4}), 561002, "sharedExpertRankNum", "op.sharedExpertRankNum",
     "4"),
    (A3, dict(attrs={"sharedExpertRankNum": 2, "sharedExpertNum": 2}), dict(attrs={"sharedExpertRankNum": 3}), 561002,
     "sharedExpertRankNum", "op.sharedExpertRankNum.2", "3"),
    # the current documents: TP域通信不再支持 (tpWorldSize 0 or 1, tpRankId 0) on every product
    (A3, None, dict(attrs={"tpWorldSize": 2}), 561002, "tpWorldSize", "domain.tpWorldSize", "2"),
    (A3, None, dict(attrs={"tpRankId": 1}), 561002, "tpRankId", "domain.tpRankId", "1"),
    (A3, None, dict(attrs={"epRankId": 4}), 561002, "epRankId", "op.epRankId", "4"),
    (A3, None, dict(attrs={"groupEp": ""}), 161002, "groupEp", "len.groupEp", "0"),
    (A3, None, dict(attrs={"expertTokenNumsType": 2}), 561002, "expertTokenNumsType",
     "domain.expertTokenNumsType", "2"),
    (A3, None, dict(H=512), 561002, "x", "ascend910_93.x", "512"),
    (A3, None, dict(BS=513), 561002, "x", "ascend910_93.bs_range", "513"),
    (A3, None, dict(attrs={"quantMode": 3}), 561002, "quantMode", "quant_mode.quantMode", "3"),
    (A3, None, dict(attrs={"quantMode": 4}), 561002, "quantMode", "quant_mode.quantMode", "4"),
    (A3, None, dict(attrs={"quantMode": 3}, out={"expandXOut": "INT8"}), 561002, "quantMode",
     "quant_mode.quantMode", "3"),
    (A3, None, dict(scales=((24, 1024), "FLOAT32")), 561002, "scalesOptional", "ascend910_93.scales_quant",
     "(24, 1024)"),
    (A3, None, dict(out={"expandXOut": "FLOAT8_E4M3FN"}), 161002, "expandXOut", "dtype.expandXOut",
     '"FLOAT8_E4M3FN"'),
    (A3, None, dict(perf=(4,)), 561002, "performanceInfoOptional", "unsupported.performanceInfoOptional", "(4,)"),
    (A3, FM2_A3, dict(mask=[True] * 4), 561002, "xActiveMaskOptional", "ascend910_93.xActiveMaskOptional",
     "(4,)"),
    (A3, FM2_A3, dict(attrs={"globalBS": 32}), 561002, "globalBS", "ascend910_93.globalBS", "32"),
    (A3, FM2_A3, dict(attrs={"zeroExpertNum": 1}), 561002, "zeroExpertNum", "ascend910_93.zeroExpertNum", "1"),
    (A3, HIER_A3, dict(W=8), 561002, "epWorldSize", "ascend910_93.epWorldSize", "8"),
    (A3, HIER_A3, dict(E=720), 561002, "moeExpertNum", "ascend910_93.moeExpertNum.2", "720"),
    (A3, HIER_A3, dict(attrs={"sharedExpertRankNum": 1}), 561002, "sharedExpertRankNum",
     "ascend910_93.sharedExpertRankNum", "1"),
    (A3, HIER_A3, dict(mask=np.ones((4, 3), bool)), 561002, "xActiveMaskOptional",
     "ascend910_93.xActiveMaskOptional.2", "(4, 3)"),
    (A3, HIER_A3, dict(expert_scales=None), 561002, "expertScalesOptional", "ascend910_93.expertScalesOptional",
     "nullptr"),
    (A3, HIER_A3, dict(attrs={"globalBS": 128}), 561002, "globalBS", "ascend910_93.globalBS.2", "128"),
    (A3, None, dict(attrs={"HCCL_BUFFSIZE": 1}), 561002, "HCCL_BUFFSIZE", "buffer.window_min", "1"),
    (A3, BIGH, dict(attrs={"HCCL_BUFFSIZE": 3}), 561002, "HCCL_BUFFSIZE", "buffer.window", "3"),
    # ---- Ascend 950
    (A5, None, dict(attrs={"tpWorldSize": 2}), 561002, "tpWorldSize", "domain.tpWorldSize", "2"),
    (A5, None, dict(attrs={"groupTp": "tp"}), 561002, "groupTp", "unsupported.groupTp", '"tp"'),
    (A5, None, dict(elastic=True), 561002, "elasticInfoOptional", "unsupported.elasticInfoOptional", "(12,)"),
    (A5, None, dict(attrs={"commAlg": "hierarchy"}), 561002, "commAlg", "domain.commAlg", '"hierarchy"'),
    (A5, None, dict(attrs={"quantMode": 5}), 561002, "quantMode", "quant_mode.quantMode", "5"),
    (A5, FM2_A3, dict(BS=513), 561002, "x", "ascend950.bs_range", "513"),  # (0, 512] for every commAlg now
    (A5, None, dict(attrs={"HCCL_BUFFSIZE": 1}), 561002, "HCCL_BUFFSIZE", "buffer.window_min", "1"),
    (A5, None, dict(out={"expandXOut": "INT8"}), 161002, "expandXOut", "ascend950.expandXOut", '"INT8"'),
    (A5, PREQ, dict(out={"expandXOut": "HIFLOAT8"}), 161002, "expandXOut", "ascend950.expandXOut", '"HIFLOAT8"'),
    (A5, Q2, dict(x_dtype="FLOAT8_E4M3FN"), 161002, "x", "ascend950.x", '"FLOAT8_E4M3FN"'),
    (A5, M1, dict(out={"expandXOut": "FLOAT8_E4M3FN"}), 161002, "expandXOut", "ascend950.expandXOut.2",
     '"FLOAT8_E4M3FN"'),
    (A5, M1, dict(scales=None), 561002, "scalesOptional", "ascend950.scalesOptional", "nullptr"),
    (A5, Q2, dict(out={"expandXOut": "FLOAT4_E2M1"}), 161002, "expandXOut", "ascend950.expandXOut.3",
     '"FLOAT4_E2M1"'),
    (A5, Q2, dict(out={"expandXOut": "HIFLOAT8"}), 161002, "expandXOut", "ascend950.expandXOut.3", '"HIFLOAT8"'),
    (A5, dict(attrs={"quantMode": 3}), dict(out={"expandXOut": "INT8"}), 161002, "expandXOut",
     "ascend950.expandXOut.4", '"INT8"'),
    (A5, M4, dict(out={"expandXOut": "HIFLOAT8"}), 161002, "expandXOut", "ascend950.expandXOut.5", '"HIFLOAT8"'),
    (A5, M4, dict(scales=((24, 1024), "FLOAT32")), 561002, "scalesOptional", "ascend950.scalesOptional.2",
     "(24, 1024)"),
    (A5, dict(M4, out={"expandXOut": "FLOAT4_E2M1"}), dict(H=1025), 561002, "x", "ascend950.x.2", "1025"),
    (A5, M4, dict(out={"dynamicScalesOut": "FLOAT32"}), 161002, "dynamicScalesOut", "ascend950.dynamicScalesOut",
     '"FLOAT32"'),
    (A5, Q2, dict(out={"dynamicScalesOut": "FLOAT8_E8M0"}), 161002, "dynamicScalesOut",
     "ascend950.dynamicScalesOut.2", '"FLOAT8_E8M0"'),
    (A5, dict(M1, out={"expandXOut": "HIFLOAT8"}), dict(scales=((1024,), "FLOAT32")), 561002, "scalesOptional",
     "ascend950.scalesOptional.3", "(1024,)"),
    (A5, M1, dict(scales=((1024, 1), "FLOAT32")), 561002, "scalesOptional", "ascend950.scalesOptional.3",
     "(1024, 1)"),
    (A5, None, dict(x_dtype="FLOAT8_E5M2"), 561002, "scalesOptional", "ascend950.scales_quant", "nullptr"),
    (A5, PREQ, dict(scales=((4, 1025), "FLOAT32")), 561002, "scalesOptional", "ascend950.scalesOptional.4",
     "(4, 1025)"),
    (A5, PREQ, dict(out={"dynamicScalesOut": "FLOAT8_E8M0"}), 161002, "dynamicScalesOut",
     "ascend950.dynamicScalesOut.3", '"FLOAT8_E8M0"'),
    (A5, Q2, dict(scales=((24, 1024), "INT32")), 161002, "scalesOptional", "dtype.scalesOptional", '"INT32"'),
    (A5, Q2, dict(scales=((25, 1024), "FLOAT32")), 561002, "scalesOptional", "op.scalesOptional", "(25, 1024)"),
    (A5, dict(attrs={"quantMode": 3}), dict(scales=((24, 1056), "FLOAT32")), 561002, "scalesOptional",
     "op.scalesOptional", "(24, 1056)"),
    (A5, dict(attrs={"quantMode": 3}), dict(scales=((1024,), "FLOAT32")), 561002, "scalesOptional",
     "op.scalesOptional", "(1024,)"),
]


def _generator_limit(e) -> bool:
    """The generated kernels' own limits (a kernel-path check, opgen/model/kernel_paths.py: they implement fullmesh
    only, so the A2 and A3 products reject commAlg hierarchy, "... not built by opgen"), not the documents' rules."""
    return "is not built by opgen" in e.message


def _run_validate(ref, c):
    """Validate one case against the op's rules. The generated kernels' own limit rejects every hierarchy call,
    whose documented rules these cases still check, so its error is left out."""
    inputs, attrs, out = case_inputs(c)
    errors = [e for e in ref.validate(inputs, attrs, c["product"], out, all_errors=True) if not _generator_limit(e)]
    if errors:
        raise errors[0]


@pytest.mark.parametrize("product, base, change, code, param, check_id, shown", CASES,
                         ids=[f"{c[0]}-{c[5]}-{i}" for i, c in enumerate(CASES)])
def test_one_broken_constraint(dispatch_ref, product, base, change, code, param, check_id, shown):
    good = dict(variant(product, base), product=product)
    _run_validate(dispatch_ref, good)  # the base is valid, so the change alone breaks the check
    bad = dict(variant(product, base, **change), product=product)
    with pytest.raises(OpError) as info:
        _run_validate(dispatch_ref, bad)
    err = info.value
    assert (err.code, err.param) == (code, param), err.message
    m = re.search(r"\[([\w.]+)\]$", err.message)
    assert m and m.group(1) == check_id, err.message
    assert f"Parameter {param} " in err.message, err.message
    assert f"has incorrect value {shown}." in err.message, err.message
    assert "It should be " in err.message


def test_validation_covers_thirty_distinct_constraints():
    assert len({c[5] for c in CASES}) >= 30
    assert {c[0] for c in CASES} == {A2, A3, A5}


def test_messages_state_the_expectation(dispatch_ref):
    cases = {
        "HCCL_BUFFSIZE >= 2MB": variant(A3, attrs={"HCCL_BUFFSIZE": 1}),
        "divisible by (epWorldSize - sharedExpertRankNum)": variant(A3, E=26),
        "K in (0, 16]": variant(A3, dict(E=32), K=17),
        "a 1-D mask whose true values all precede the false ones": variant(A3, mask=[True, False, True, True]),
        "one of 0, 2": variant(A3, attrs={"quantMode": 3}),
        "FLOAT8_E5M2 or FLOAT8_E4M3FN when quantMode is 3": variant(A5, attrs={"quantMode": 3},
                                                                    out={"expandXOut": "INT8"}),
    }
    for text, c in cases.items():
        product = A5 if "quantMode is 3" in text else A3
        with pytest.raises(OpError) as info:
            _run_validate(dispatch_ref, dict(c, product=product))
        assert f"It should be {text}" in info.value.message, info.value.message


def test_a2_buffer_rule_is_only_a_warning(dispatch_ref):
    """A2's documented window sizes are `warn` rules: HCCL_BUFFSIZE=1 passes them (logged by the device); what
    rejects it is the generated kernels' own layout (window.ep), which no A2 documented rule would."""
    for v in (variant(A2, attrs={"HCCL_BUFFSIZE": 1}), variant(A2, HIER_A2, attrs={"HCCL_BUFFSIZE": 1})):
        with pytest.raises(OpError) as info:
            _run_validate(dispatch_ref, dict(v, product=A2))
        assert (info.value.code, info.value.param) == (561002, "HCCL_BUFFSIZE") and "[window.ep]" in str(info.value)
    _run_validate(dispatch_ref, dict(variant(A2, attrs={"HCCL_BUFFSIZE": 16}), product=A2))  # 2MB status + the rows


def test_missing_required_attribute_and_unknown_names(dispatch_ref):
    inputs, attrs, _ = case_inputs(variant(A3))
    del attrs["moeExpertNum"]
    with pytest.raises(OpError) as info:
        dispatch_ref.validate(inputs, attrs, A3)
    assert (info.value.code, info.value.param) == (161002, "moeExpertNum")
    assert "required" in info.value.message
    inputs, attrs, _ = case_inputs(variant(A3))
    with pytest.raises(OpError) as info:
        dispatch_ref.validate(inputs, dict(attrs, epWorldSzie=4), A3)
    assert info.value.param == "epWorldSzie"
    with pytest.raises(OpError) as info:
        dispatch_ref.validate(inputs, attrs, "ascend310p")
    assert info.value.param == "product"


def test_run_world_validates_every_rank(dispatch_ref):
    """A constraint broken on one rank only (its 1-D mask) fails the whole world."""
    w = next(x for x in WORLDS if x.name == "a3-m0-bf16-shared")
    inputs, attrs, out_dtypes = make_world(w)
    inputs[2]["xActiveMaskOptional"] = np.array([True, False, True, True])
    with pytest.raises(OpError) as info:
        dispatch_ref.run_world(inputs, attrs, w.product, out_dtypes)
    assert info.value.message.endswith("[op.xActiveMaskOptional]")
