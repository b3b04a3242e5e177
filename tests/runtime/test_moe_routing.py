"""opgen.runtime.moe against loop oracles (tests/oracles/moe_loops.py) and hand-computed cases."""
from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from opgen.core.products import ASSIST_LAYOUTS, EXPAND_IDX, TRIPLE
from opgen.runtime import moe
from tests.oracles import moe_loops as oracle

F32 = np.float32
BF16 = ml_dtypes.bfloat16

# (W, Rs, S, E): no shared experts (incl. the Rs=0, S=1 normalisation), P | W and P not | W
TOPOLOGIES = [
    (2, 0, 0, 4), (2, 1, 1, 2), (3, 0, 1, 6), (3, 1, 1, 4), (3, 2, 2, 2),
    (4, 0, 0, 8), (4, 2, 1, 4), (4, 2, 2, 6), (8, 0, 0, 16), (8, 2, 2, 12),
    (8, 4, 2, 8), (8, 3, 1, 5),
]
MASK_KINDS = ["none", "1d", "2d", "uneven"]


# --------------------------------------------------------------------------- worlds

@dataclass
class World:
    W: int
    Rs: int
    S: int
    E: int
    K: int
    ids: list
    masks: list | None
    scales: list
    xs: list
    zero: int = 0
    copy: int = 0
    const: int = 0

    @property
    def topo(self):
        return dict(W=self.W, Rs=self.Rs, S=self.S, E=self.E)

    @property
    def S_eff(self):
        return oracle.layout(self.W, self.Rs, self.S, self.E)[0]

    def capacity(self, d):
        """A per the infershape: MoE globalBS*min(L,K), shared maxBS*ceil(W/P).

        The seed's shared formula BS*W*S/Rs (integer division) agrees only when P | W; for
        (8, 3, 1, 5) it gives 13 < 15 rows that shared rank 0 can receive.
        """
        S, L, P = oracle.layout(self.W, self.Rs, self.S, self.E)
        max_bs = max(len(i) for i in self.ids)
        if d < self.Rs:
            return max_bs * -(-self.W // P)
        return max_bs * self.W * min(L, self.K)


def make_world(rng, W, Rs, S, E, *, K=3, masks="none", zero=0, copy=0, const=0, H=16,
               dtype=np.float16, max_bs=5) -> World:
    n_ids = E + zero + copy + const
    K = min(K, n_ids)
    sizes = rng.integers(1, max_bs + 1, W) if masks == "uneven" else [max_bs] * W
    ids, mask_list, scales, xs = [], [], [], []
    for bs in sizes:
        # distinct experts per token, like a real top-k
        ids.append(np.argsort(rng.random((bs, n_ids)), axis=1)[:, :K].astype(np.int32))
        if masks == "1d":
            mask_list.append(np.arange(bs) < rng.integers(0, bs + 1))
        elif masks == "2d":
            m = rng.random((bs, K)) < 0.6
            m[rng.random(bs) < 0.25] = False
            mask_list.append(m)
        scales.append(rng.random((bs, K)).astype(F32))
        xs.append(rng.standard_normal((bs, H)).astype(dtype))
    return World(W, Rs, S, E, K, ids, mask_list if masks in ("1d", "2d") else None,
                 scales, xs, zero, copy, const)


def seed_of(*parts) -> int:
    """Deterministic per-case seed (str hashing is randomised per process)."""
    return zlib.crc32(repr(parts).encode())


def worlds(seed, count=4, **kw):
    rng = np.random.default_rng(seed)
    return [make_world(rng, **kw) for _ in range(count)]


def plan_rows(plan):
    return list(zip(plan.src_rank.tolist(), plan.token.tolist(), plan.k.tolist(),
                    plan.expert.tolist()))


def identity_experts(world, plans):
    """Each expert rank returns exactly the rows it received (x dtype)."""
    return [moe.gather_rows(world.xs, p) for p in plans]


# --------------------------------------------------------------------------- dispatch

@pytest.mark.parametrize("mask_kind", MASK_KINDS)
@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_dispatch_matches_oracle(topology, mask_kind):
    W, Rs, S, E = topology
    seed = seed_of(topology, mask_kind)
    for world in worlds(seed, W=W, Rs=Rs, S=S, E=E, masks=mask_kind, zero=1, copy=1):
        plans = moe.plan_dispatch_world(world.ids, world.masks, **world.topo)
        expected = oracle.dispatch_oracle(world.ids, world.masks, K=world.K, **world.topo)
        for d in range(W):
            plan, want = plans[d], expected[d]
            assert plan_rows(plan) == want["rows"]
            assert plan.counts.tolist() == want["counts"]
            assert plan.is_shared_rank == want["shared"] and plan.dst_rank == d
            assert plan == moe.plan_dispatch(world.ids, world.masks, d, **world.topo)
            got = moe.gather_rows(world.xs, plan)
            assert got.dtype == world.xs[0].dtype
            np.testing.assert_array_equal(got, np.array(oracle.gather(world.xs, want["rows"]))
                                          .reshape(got.shape))
            _check_outputs(world, plan, want, d)


def _check_outputs(world, plan, want, d):
    A = world.capacity(d)
    L = len(want["counts"])
    for layout in ASSIST_LAYOUTS:
        for kind in (0, 1):
            a2 = moe.a2_expand_idx(world.ids[d], None if world.masks is None else world.masks[d],
                                   world.E)
            out = moe.dispatch_outputs(plan, W=world.W, K=world.K, layout=layout,
                                       expert_token_nums_type=kind, capacity_A=A,
                                       local_expert_num=L, expert_scales=world.scales,
                                       a2_expand_idx=a2)
            assert out["epRecvCountsOut"].dtype == np.int32
            assert out["epRecvCountsOut"].tolist() == oracle.ep_recv_counts(want["counts"])
            assert out["expertTokenNumsOut"].dtype == np.int64
            assert out["expertTokenNumsOut"].tolist() == oracle.expert_token_nums(want["counts"], kind)
            assist = out["assistInfoForCombineOut"]
            assert assist.dtype == np.int32 and assist.shape == (A * 128,)
            if layout == EXPAND_IDX:
                mask = None if world.masks is None else world.masks[d]
                head = oracle.a2_expand_idx(world.ids[d], mask, world.E)
                assert assist.tolist() == head + [0] * (A * 128 - len(head))
            else:
                assert assist.tolist() == oracle.assist_triples(want["rows"], A)
            scales = out["expandScalesOut"]
            assert scales.dtype == np.float32 and scales.shape == (A,)
            np.testing.assert_array_equal(
                scales, np.array(oracle.expand_scales(want["rows"], world.scales, world.K, A)))
    no_scales = moe.dispatch_outputs(plan, W=world.W, K=world.K, layout=TRIPLE,
                                     expert_token_nums_type=1, capacity_A=A,
                                     local_expert_num=L, expert_scales=None)
    assert not no_scales["expandScalesOut"].any()


def test_a2_expand_idx_matches_oracle():
    rng = np.random.default_rng(7)
    for kind in ("none", "1d", "2d"):
        for world in [make_world(rng, 4, 0, 0, 8, K=4, masks=kind, zero=2) for _ in range(5)]:
            for r in range(world.W):
                mask = None if world.masks is None else world.masks[r]
                got = moe.a2_expand_idx(world.ids[r], mask, world.E)
                assert got.dtype == np.int32
                assert got.tolist() == oracle.a2_expand_idx(world.ids[r], mask, world.E)


def test_known_tiny_world_without_shared_experts():
    # W=2, E=4, L=2, K=2.  rank0 sends (t,k)->e: (0,0)1 (0,1)2 (1,0)0 (1,1)1 (2,0)3 (2,1)1;
    # rank1: (0,0)2 (0,1)0 (1,0)1 (1,1)3.
    ids = [np.array([[1, 2], [0, 1], [3, 1]], np.int32), np.array([[2, 0], [1, 3]], np.int32)]
    plans = moe.plan_dispatch_world(ids, None, W=2, Rs=0, S=0, E=4)
    # rank 0: expert 0 (from r0 t1k0, r1 t0k1), then expert 1 (r0 t0k0, t1k1, t2k1; r1 t1k0)
    assert plan_rows(plans[0]) == [(0, 1, 0, 0), (1, 0, 1, 0),
                                   (0, 0, 0, 1), (0, 1, 1, 1), (0, 2, 1, 1), (1, 1, 0, 1)]
    assert plans[0].counts.tolist() == [[1, 1], [3, 1]]
    # rank 1: expert 2 (r0 t0k1, r1 t0k0), expert 3 (r0 t2k0, r1 t1k1)
    assert plan_rows(plans[1]) == [(0, 0, 1, 2), (1, 0, 0, 2), (0, 2, 0, 3), (1, 1, 1, 3)]
    out = moe.dispatch_outputs(plans[0], W=2, K=2, layout=TRIPLE,
                               expert_token_nums_type=1, capacity_A=6, local_expert_num=2)
    assert out["assistInfoForCombineOut"][:18].tolist() == [0, 1, 0, 1, 0, 1, 0, 0, 0,
                                                          0, 1, 1, 0, 2, 1, 1, 1, 0]
    assert not out["assistInfoForCombineOut"][18:].any()
    assert out["epRecvCountsOut"].tolist() == [1, 2, 5, 6]
    assert out["expertTokenNumsOut"].tolist() == [2, 4]
    type0 = moe.dispatch_outputs(plans[0], W=2, K=2, layout=TRIPLE,
                                 expert_token_nums_type=0, capacity_A=6, local_expert_num=2)
    assert type0["expertTokenNumsOut"].tolist() == [2, 6]
    out1 = moe.dispatch_outputs(plans[1], W=2, K=2, layout=TRIPLE,
                                expert_token_nums_type=1, capacity_A=4, local_expert_num=2)
    assert out1["epRecvCountsOut"].tolist() == [1, 2, 3, 4]
    assert out1["expertTokenNumsOut"].tolist() == [2, 2]
    # A2: each sender's slot inside its expert's block, flattened order
    assert moe.a2_expand_idx(ids[0], None, 4).tolist() == [0, 0, 0, 1, 0, 2]
    assert moe.a2_expand_idx(ids[1], None, 4).tolist() == [0, 0, 0, 0]
    a2 = moe.dispatch_outputs(plans[0], W=2, K=2, layout=EXPAND_IDX, expert_token_nums_type=1,
                              capacity_A=6, local_expert_num=2,
                              a2_expand_idx=moe.a2_expand_idx(ids[0], None, 4))
    assert a2["assistInfoForCombineOut"][:7].tolist() == [0, 0, 0, 1, 0, 2, 0]


def test_known_tiny_world_with_shared_experts():
    # W=4, Rs=2, S=1 -> P=2, E=4 over ranks 2,3 (L=2), K=1; rank r has ids [[r%4], [(r+1)%4]]
    # and rank 2 masks out its token 1.
    ids = [np.array([[r % 4], [(r + 1) % 4]], np.int32) for r in range(4)]
    masks = [None, None, np.array([True, False]), None]
    plans = moe.plan_dispatch_world(ids, masks, W=4, Rs=2, S=1, E=4)
    # shared rank 0 hears ranks 0 and 2 (r % 2 == 0); k = K + 0 = 1, smooth row s = 0
    assert plan_rows(plans[0]) == [(0, 0, 1, 0), (0, 1, 1, 0), (2, 0, 1, 0)]
    assert plans[0].counts.tolist() == [[2, 0, 1, 0]] and plans[0].is_shared_rank
    assert plan_rows(plans[1]) == [(1, 0, 1, 0), (1, 1, 1, 0), (3, 0, 1, 0), (3, 1, 1, 0)]
    # MoE rank 2 holds experts 0,1: e0 from r0 t0, r3 t1; e1 from r0 t1, r1 t0; smooth row e+S
    assert plan_rows(plans[2]) == [(0, 0, 0, 1), (3, 1, 0, 1), (0, 1, 0, 2), (1, 0, 0, 2)]
    assert plans[2].counts.tolist() == [[1, 0, 0, 1], [1, 1, 0, 0]]
    out = moe.dispatch_outputs(plans[2], W=4, K=1, layout=TRIPLE,
                               expert_token_nums_type=1, capacity_A=8, local_expert_num=2)
    assert out["epRecvCountsOut"].tolist() == [1, 1, 1, 2, 3, 4, 4, 4]
    assert out["expertTokenNumsOut"].tolist() == [2, 2]
    shared = moe.dispatch_outputs(plans[0], W=4, K=1, layout=TRIPLE,
                                  expert_token_nums_type=1, capacity_A=4, local_expert_num=1,
                                  expert_scales=[np.full((2, 1), 0.5, F32)] * 4)
    assert shared["epRecvCountsOut"].tolist() == [2, 2, 3, 3]
    assert shared["expertTokenNumsOut"].tolist() == [3]
    assert shared["assistInfoForCombineOut"][:9].tolist() == [0, 0, 1, 0, 1, 1, 2, 0, 1]
    assert not shared["expandScalesOut"].any()     # shared copies carry no expert scale


def test_plan_is_read_only_and_rejects_bad_shapes():
    ids = [np.zeros((2, 2), np.int32)] * 2
    plan = moe.plan_dispatch(ids, None, 0, W=2, Rs=0, S=1, E=2)
    with pytest.raises(ValueError):
        plan.token[0] = 1
    with pytest.raises(ValueError):
        moe.plan_dispatch(ids, [np.ones(3, bool), None], 0, W=2, Rs=0, S=0, E=2)
    with pytest.raises(ValueError):
        moe.plan_dispatch_world(ids, None, W=2, Rs=1, S=0, E=2)
    with pytest.raises(ValueError):
        moe.plan_dispatch_world(ids, None, W=2, Rs=0, S=0, E=3)
    with pytest.raises(ValueError):
        moe.plan_dispatch_world([ids[0], np.zeros((2, 3), np.int32)], None, W=2, Rs=0, S=0, E=2)
    for bad in (dict(layout=EXPAND_IDX), dict(layout="ascend310"),
                dict(layout=TRIPLE, capacity_A=1)):
        kw = dict(W=2, K=2, layout=TRIPLE, expert_token_nums_type=1, capacity_A=8,
                  local_expert_num=1) | bad
        with pytest.raises(ValueError):
            moe.dispatch_outputs(plan, **kw)


# --------------------------------------------------------------------------- combine

def hand_round_trip(world, rank, out_dtype, shared_x=None):
    """Identity experts: x[t] = RINT(sum_k fl(w*x) + S*x [+ sharedX]) in fp32, k order."""
    x32 = world.xs[rank].astype(F32)
    ids, scales = world.ids[rank], world.scales[rank]
    mask = None if world.masks is None else world.masks[rank]
    out = np.zeros(x32.shape, out_dtype)
    for t in oracle.active_tokens(mask, len(ids)):
        acc = np.zeros(x32.shape[1], F32)
        for k in range(world.K):
            if mask is not None and mask.ndim == 2 and not mask[t, k]:
                continue
            if ids[t, k] < world.E + world.zero and ids[t, k] >= world.E:
                continue                                  # zero expert
            acc = acc + F32(scales[t, k]) * x32[t]        # MoE and copy experts alike
        for _ in range(world.S_eff):
            acc = acc + x32[t]
        if shared_x is not None:
            acc = acc + shared_x[t].astype(F32)
        out[t] = acc.astype(out_dtype)
    return out


@pytest.mark.parametrize("mask_kind", MASK_KINDS)
@pytest.mark.parametrize("topology", [(2, 0, 0, 4), (3, 1, 1, 4), (4, 2, 2, 6), (8, 4, 2, 8),
                                      (8, 3, 1, 5)])
def test_round_trip_identity_experts(topology, mask_kind):
    W, Rs, S, E = topology
    seed = seed_of("rt", topology, mask_kind)
    for dtype in (np.float16, BF16):
        for world in worlds(seed, count=2, W=W, Rs=Rs, S=S, E=E, masks=mask_kind,
                            zero=1, copy=1, dtype=dtype):
            plans = moe.plan_dispatch_world(world.ids, world.masks, **world.topo)
            outs = moe.combine_world(
                expert_outputs_per_rank=identity_experts(world, plans), plans=plans,
                expert_ids=world.ids, expert_scales=world.scales, masks=world.masks,
                K=world.K, specials=[_specials(E, x)[:2] for x in world.xs], out_dtype=dtype, **world.topo)
            for r in range(W):
                want = hand_round_trip(world, r, dtype)
                assert outs[r].dtype == dtype
                np.testing.assert_array_equal(outs[r].view(np.uint16), want.view(np.uint16))
                if world.masks is None:  # sanity: within an output rounding of x*(sum w + S)
                    weighted = (world.ids[r] < E) | (world.ids[r] > E)   # all but the zero expert
                    total = (world.scales[r] * weighted).sum(1, keepdims=True) + world.S_eff
                    np.testing.assert_allclose(outs[r].astype(F32),
                                               world.xs[r].astype(F32) * total,
                                               rtol=2e-2, atol=2e-2)


def test_combine_matches_oracle_with_shared_x_no_scales_and_comm_quant():
    rng = np.random.default_rng(11)
    for kind in ("none", "2d"):
        world = make_world(rng, 4, 2, 1, 4, K=2, masks=kind, H=20)
        plans = moe.plan_dispatch_world(world.ids, world.masks, **world.topo)
        # non-identity experts so that returned rows differ from x
        outputs = [(moe.gather_rows(world.xs, p).astype(F32) * F32(d + 2)).astype(np.float16)
                   for d, p in enumerate(plans)]
        shared_x = [rng.standard_normal(x.shape).astype(np.float16) for x in world.xs]
        dispatch = oracle.dispatch_oracle(world.ids, world.masks, K=world.K, **world.topo)
        quant = functools.partial(moe.comm_quant_int8_round_trip, x_dtype=np.float16)
        loop_quant = functools.partial(oracle.comm_quant_round_trip, x_dtype=np.float16)
        for scales, cq, loop_cq in ((world.scales, None, None), (None, quant, loop_quant)):
            for r in range(world.W):
                mask = None if world.masks is None else world.masks[r]
                got = moe.combine_rank(
                    r, expert_outputs_per_rank=outputs, plans=plans, expert_ids=world.ids[r],
                    expert_scales=None if scales is None else scales[r], mask=mask, K=world.K,
                    shared_expert_x=shared_x[r], out_dtype=np.float16, comm_quant=cq,
                    **world.topo)
                want = oracle.combine_oracle(
                    r, dispatch=dispatch, expert_outputs=outputs, ids=world.ids[r],
                    scales=None if scales is None else scales[r], mask=mask, K=world.K,
                    S=world.S_eff, E=world.E, shared_x=shared_x[r], comm_quant=loop_cq)
                np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_combine_rounds_product_and_sum_separately():
    # One token on each of 2 ranks, K=2, expert k on rank k.  Owner 0 gets back -1 from
    # expert 0 and 1+2^-7 from expert 1, with weights w0 = 1+2^-7+2^-23, w1 = 1+2^-17.
    # fl(w1*(1+2^-7)) drops the 2^-24 tail (tie to even), so the fp32 sum is 2^-17-2^-23;
    # an FMA or a float64 accumulation would give 2^-17-2^-24 (also exact in bf16).
    ids = [np.array([[0, 1]], np.int32)] * 2
    plans = moe.plan_dispatch_world(ids, None, W=2, Rs=0, S=0, E=2)
    outputs = [np.array([[-1.0], [0.0]], BF16), np.array([[1 + 2**-7], [0.0]], BF16)]
    w = np.array([[1 + 2**-7 + 2**-23, 1 + 2**-17]], F32)
    got = moe.combine_rank(0, expert_outputs_per_rank=outputs, plans=plans, expert_ids=ids[0],
                           expert_scales=w, mask=None, W=2, Rs=0, S=0, E=2, K=2, out_dtype=BF16)
    assert got.astype(F32)[0, 0] == F32(2**-17 - 2**-23)
    assert F32(BF16(2**-17 - 2**-24)) != F32(2**-17 - 2**-23)


def _owner0_rows(plans, values):
    """Expert outputs where the row each expert rank returns to owner 0 holds values[d]."""
    outputs = []
    for plan, value in zip(plans, values):
        rows = np.zeros((plan.num_rows, 1), BF16)
        rows[plan.src_rank == 0] = value
        outputs.append(rows)
    return outputs


def test_combine_accumulates_in_k_order_then_shared():
    big = 2.0**30                                   # big + 1 rounds back to big in fp32
    ids = [np.array([[0, 1, 2]], np.int32)] * 3     # expert k lives on rank k
    plans = moe.plan_dispatch_world(ids, None, W=3, Rs=0, S=0, E=3)
    got = moe.combine_rank(0, expert_outputs_per_rank=_owner0_rows(plans, [big, -big, 1.0]),
                           plans=plans, expert_ids=ids[0], expert_scales=None, mask=None,
                           W=3, Rs=0, S=0, E=3, K=3, out_dtype=BF16)
    assert got.astype(F32).tolist() == [[1.0]]      # (big - big) + 1; reversed order gives 0
    # shared rank 0, experts 0/1 on ranks 1/2: (big + 1) - big = 0; shared-first would give 1
    ids = [np.array([[0, 1]], np.int32)] * 3
    plans = moe.plan_dispatch_world(ids, None, W=3, Rs=1, S=1, E=2)
    got = moe.combine_rank(0, expert_outputs_per_rank=_owner0_rows(plans, [-big, big, 1.0]),
                           plans=plans, expert_ids=ids[0], expert_scales=None, mask=None,
                           W=3, Rs=1, S=1, E=2, K=2, out_dtype=BF16)
    assert got.astype(F32).tolist() == [[0.0]]


def _const_world(rng, exact):
    world = make_world(rng, 2, 0, 0, 4, K=3, zero=1, copy=1, const=2, H=8, dtype=BF16)
    if exact:
        # small dyadic values: dot products are exact in any summation order
        world.xs = [rng.integers(-4, 5, x.shape).astype(BF16) for x in world.xs]
        world.scales = [(rng.integers(1, 8, s.shape) / 8).astype(F32) for s in world.scales]
        alpha = [(rng.integers(-3, 4, (2, 8)) / 4).astype(BF16) for _ in range(2)]
    else:
        alpha = [(rng.standard_normal((2, 8)) / 4).astype(BF16) for _ in range(2)]
    const_v = rng.standard_normal((2, 8)).astype(BF16)
    return world, alpha[0], alpha[1], const_v


def _specials(E, ori_x, alpha1=None, alpha2=None, const_v=None):
    """One zero, one copy and two const experts after the E MoE experts. The runtime's combine takes each term as
    a function (the spec's formula, tested against loops in tests/test_reference_roundtrip.py); here the const
    term is the oracle's own, so what is checked is how the combine routes, weights and sums the terms."""
    x32 = np.asarray(ori_x).astype(F32)
    return (moe.SpecialTerm(E, E + 1, None), moe.SpecialTerm(E + 1, E + 2, lambda t, c: x32[t]),
            moe.SpecialTerm(E + 2, E + 4, lambda ts, cs: np.array(
                [oracle.const_value(x32[t], alpha1[c], alpha2[c], const_v[c]) for t, c in zip(ts, cs)], F32)))


@pytest.mark.parametrize("exact", [True, False])
def test_combine_special_experts_match_oracle(exact):
    rng = np.random.default_rng(5 if exact else 6)
    for _ in range(4):
        world, alpha1, alpha2, const_v = _const_world(rng, exact)
        plans = moe.plan_dispatch_world(world.ids, world.masks, **world.topo)
        outputs = identity_experts(world, plans)
        dispatch = oracle.dispatch_oracle(world.ids, world.masks, K=world.K, **world.topo)
        outs = moe.combine_world(
            expert_outputs_per_rank=outputs, plans=plans, expert_ids=world.ids,
            expert_scales=world.scales, masks=None, K=world.K,
            specials=[_specials(world.E, x, alpha1, alpha2, const_v) for x in world.xs], out_dtype=BF16,
            **world.topo)
        for r in range(world.W):
            want = oracle.combine_oracle(
                r, dispatch=dispatch, expert_outputs=outputs, ids=world.ids[r],
                scales=world.scales[r], mask=None, K=world.K, S=0, E=world.E, zero=1, copy=1,
                ori_x=world.xs[r], alpha1=alpha1, alpha2=alpha2, const_v=const_v,
                out_dtype=BF16)
            # the same terms, weighted and summed in k order in fp32: bit-exact for any values
            np.testing.assert_array_equal(outs[r].view(np.uint16), want.view(np.uint16))


def test_combine_rejects_ids_past_the_experts_and_short_outputs():
    # (a copy expert without oriX is the spec's check: `require present(oriXOptional)` when copyExpertNum > 0)
    ids = [np.array([[0, 2]], np.int32), np.array([[1, 0]], np.int32)]
    xs = [np.ones((1, 8), np.float16)] * 2
    plans = moe.plan_dispatch_world(ids, None, W=2, Rs=0, S=0, E=2)
    outputs = [moe.gather_rows(xs, p) for p in plans]
    kw = dict(plans=plans, expert_scales=None, mask=None, W=2, Rs=0, S=0, E=2, K=2, out_dtype=np.float16)
    with pytest.raises(ValueError):
        moe.combine_rank(0, expert_outputs_per_rank=outputs, expert_ids=ids[0], **kw)
    with pytest.raises(ValueError):
        moe.combine_rank(1, expert_outputs_per_rank=[o[:0] for o in outputs],
                         expert_ids=ids[1], **kw)


# --------------------------------------------------------------------------- comm quant

@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_comm_quant_round_trip_matches_loop(dtype):
    rng = np.random.default_rng(3)
    rows = (rng.standard_normal((5, 21)) * rng.choice([1e-3, 1.0, 300.0], (5, 1))).astype(dtype)
    rows[1, 8:16] = 0                                 # an all-zero block
    got = moe.comm_quant_int8_round_trip(rows, dtype)
    assert got.dtype == dtype and got.shape == rows.shape
    want = oracle.comm_quant_round_trip(rows, dtype)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    assert not got[1, 8:16].astype(F32).any()
    np.testing.assert_allclose(got.astype(F32), rows.astype(F32), rtol=0.05,
                               atol=np.abs(rows.astype(F32)).max() / 100)


def test_comm_quant_known_values():
    # block max 127 -> s = 127*fp32(1/127) = 1.0 exactly; 1.5 -> fp16 1.5 -> RINT 2; -2.5 -> -2
    row = np.array([[127, 1.5, -2.5, 0.5, 3, 0, -127, 64]], np.float16)
    got = moe.comm_quant_int8_round_trip(row, np.float16)
    assert got.tolist() == [[127, 2, -2, 0, 3, 0, -127, 64]]


# --------------------------------------------------------------------------- setup family

def _setup_world(rng, mask_kind, W=4, Rs=0, S=0, E=8):
    return make_world(rng, W, Rs, S, E, K=3, masks=mask_kind, H=8)


@pytest.mark.parametrize("mask_kind", ["none", "1d"])
@pytest.mark.parametrize("topology", [(4, 0, 0, 8), (4, 2, 1, 4), (8, 2, 2, 12)])
def test_dispatch_setup_teardown_match_oracle(topology, mask_kind):
    W, Rs, S, E = topology
    rng = np.random.default_rng(seed_of("st", topology, mask_kind))

    def quantize(rows, experts):  # tags each row with its smooth-scale row
        return rows.astype(F32) * (experts[:, None] + 1), experts.astype(F32)

    for _ in range(3):
        world = _setup_world(rng, mask_kind, W, Rs, S, E)
        masks = world.masks or [None] * W
        setups = [moe.dispatch_setup_rank(x=world.xs[r], expert_ids=world.ids[r], mask=masks[r],
                                          quantize=quantize, **world.topo) for r in range(W)]
        for r in range(W):
            staged, idx = oracle.dispatch_setup_oracle(world.ids[r], masks[r], S=world.S_eff, E=E)
            assert setups[r]["expand_idx"].tolist() == idx
            y = setups[r]["y"]
            assert y.shape[0] == len(world.ids[r]) * (world.K + world.S_eff)
            for row in range(len(y)):
                if row in staged:
                    t, k = staged[row]
                    smooth = world.ids[r][t, k] + world.S_eff if k < world.K else k - world.K
                    np.testing.assert_array_equal(y[row], world.xs[r][t].astype(F32) * (smooth + 1))
                    assert setups[r]["y_scales"][row] == smooth
                else:
                    assert not y[row].any()
        expected = oracle.dispatch_oracle(world.ids, world.masks, K=world.K, **world.topo)
        plans = moe.plan_dispatch_world(world.ids, world.masks, **world.topo)
        for d in range(W):
            A = world.capacity(d)
            got = moe.dispatch_teardown_rank(plan=plans[d], setups=setups, W=W,
                                             expert_token_nums_type=1, capacity_A=A)
            rows = oracle.dispatch_teardown_oracle(
                expected[d], lambda r, t, smooth: world.xs[r][t].astype(F32) * (smooth + 1))
            n = len(rows)
            np.testing.assert_array_equal(got["expand_x"][:n], np.array(rows).reshape(n, -1))
            assert not got["expand_x"][n:].any() and got["expand_x"].shape[0] == A
            assert got["dynamic_scales"][:n].tolist() == [s for *_, s in expected[d]["rows"]]
            cum = oracle.ep_recv_counts(expected[d]["counts"])
            assist = got["assist_info_for_combine"]
            assert assist.tolist() == cum + [0] * (A * 128 - len(cum))
            assert got["expert_token_nums"].tolist() == oracle.expert_token_nums(
                expected[d]["counts"], 1)


@pytest.mark.parametrize("mask_kind", ["none", "1d"])
def test_setup_family_round_trip_matches_oracle(mask_kind):
    rng = np.random.default_rng(21 if mask_kind == "none" else 22)
    for W in (2, 4, 8):
        world = _setup_world(rng, mask_kind, W=W, E=2 * W)
        masks = world.masks or [None] * W
        setups = [moe.dispatch_setup_rank(x=world.xs[r], expert_ids=world.ids[r], mask=masks[r],
                                          **world.topo) for r in range(W)]
        plans = moe.plan_dispatch_world(world.ids, world.masks, **world.topo)
        dispatch = oracle.dispatch_oracle(world.ids, world.masks, K=world.K, **world.topo)
        windows = [dict() for _ in range(W)]
        outputs = []
        for d in range(W):
            td = moe.dispatch_teardown_rank(plan=plans[d], setups=setups, W=W,
                                            expert_token_nums_type=1,
                                            capacity_A=world.capacity(d))
            expert_out = (td["expand_x"].astype(F32) * F32(-0.5 - d)).astype(np.float16)
            outputs.append(expert_out[:plans[d].num_rows])
            sent = moe.combine_setup_rank(rank=d, expand_x=expert_out,
                                          assist_info_for_combine=td["assist_info_for_combine"],
                                          W=W, E=world.E)
            for owner, blocks in sent.items():
                windows[owner].update(blocks)
        for r in range(W):
            got = moe.combine_teardown_rank(window=windows[r], expert_ids=world.ids[r],
                                            expand_idx=setups[r]["expand_idx"],
                                            expert_scales=world.scales[r], mask=masks[r],
                                            E=world.E, H=8, out_dtype=np.float16)
            want = oracle.combine_teardown_oracle(
                r, dispatch=dispatch, expert_outputs=outputs, ids=world.ids[r],
                expand_idx=setups[r]["expand_idx"].tolist(), scales=world.scales[r],
                mask=masks[r])
            np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
