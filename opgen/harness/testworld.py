"""Test worlds for generated suites: per-rank input data, and what the outputs must satisfy.

A generated suite knows each case by shapes, dtypes, attributes and data recipes (``tests/cases.py``);
this module holds what the op families' world builders (the ``world`` part of each family folder,
``opgen/families/<name>/world.py``) are made of, and turns a case into tensors.  Inputs an op receives from a partner
(assist info, counts, staged rows) are produced by routing the case's own tokens with
``opgen.runtime.moe`` and sending them through identity experts, so the expected results are known in
closed form: ``x * sum(weights)`` for a combine (computed here by plain fp32 loops in k order), the
token's own rows for a dispatch.  All data comes from ``opgen.harness.testdata``: the same bytes on
every machine.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from opgen.core.dtypes import DTYPES
from opgen.core.families import FAMILIES
from opgen.core.products import ProductFacts
from opgen.runtime import codecs
from opgen.runtime import moe
from opgen.harness import testdata
from opgen.runtime.calls import call_args
from opgen.runtime.dtypes import np_dtype
from opgen.runtime.rowbatch import RowBatch
from opgen.runtime.scope import Meta, Typed, cann_dtype, data


@dataclass
class World:
    """Per-rank inputs of one case, plus what the builder knows about them (the tokens behind them)."""
    inputs: list[dict]
    tokens: list | None = None            # the tokens x of each rank (dispatched, or sent to identity experts)
    expert_ids: list | None = None
    masks: list | None = None
    weights: list | None = None
    extra: dict = field(default_factory=dict)
    # the spec's special experts in this world: (name, first id, end id) in id order after the MoE experts
    specials: tuple[tuple[str, int, int], ...] = ()
    # the family's parameters the op names differently: role -> the op's name (opgen.runtime.roles)
    roles: dict = field(default_factory=dict)


def key(case_id: str, rank, name: str) -> str:
    """The data key of one tensor: "<case id>/<rank>/<name>" (no rank for a single call)."""
    return f"{case_id}/{name}" if rank is None else f"{case_id}/{rank}/{name}"


def rank_metas(case: dict) -> dict:
    """{rank: {input: (dtype, shape)}} of a world case (for a large world: of the ranks it lists)."""
    out = {}
    for r in case.get("ranks", range(case["world"])):
        metas = dict(case["inputs"])
        for name, shape in case.get("rank_shapes", {}).get(r, {}).items():
            metas[name] = (metas[name][0], shape)
        out[r] = metas
    return out


def meta_inputs(case: dict, rank=None, metas: dict | None = None) -> dict:
    """Inputs as tiling sees them: Meta tensors, except BOOL ones, built by recipe (data checks read them)."""
    metas = case["inputs"] if metas is None else metas
    out = {}
    for name, m in metas.items():
        if m is None:
            out[name] = None
        elif m[0] == "BOOL" and len(m) == 2:
            out[name] = testdata.mask(key(case["id"], rank, name), m[1], case.get("data", {}).get(name, "all_true"))
        else:  # a third item: a format other than ND (an array would be ND)
            out[name] = meta(m)
    return out


def meta(m) -> Meta:
    """A case's (dtype, shape[, format]) as a Meta tensor."""
    return Meta(tuple(m[1]), m[0], m[2] if len(m) > 2 else "ND")


# ---- builders -------------------------------------------------------------------------------------------

def values(case, rank, name, meta, lo=-4.0, hi=4.0):
    dtype, shape = meta
    if dtype == "BOOL":
        return testdata.mask(key(case["id"], rank, name), shape, case.get("data", {}).get(name, "all_true"))
    return testdata.values(key(case["id"], rank, name), dtype, shape, lo, hi)


# Tokens carry exact rounding ties for the int8 quant modes: every 128-element group starts with 127/32, the
# largest magnitude of its row and group, so per-token and per-group scales are exactly 1/32, and a few
# elements per group are odd multiples of 1/64, which quantise to k + 0.5 (RINT and ROUND disagree there).
# Both values are exact in FLOAT16, BFLOAT16 and FLOAT32; the other elements stay uniform in [-3.9, 3.9).
_TIE_AMAX = 127.0 / 32.0
_TIES_PER_GROUP = 4


def tokens(case, rank, meta):
    dtype, shape = meta
    if dtype not in ("FLOAT16", "BFLOAT16", "FLOAT32") or len(shape) != 2:
        return values(case, rank, "x", meta)
    x = testdata.uniform(key(case["id"], rank, "x"), shape, -3.9, 3.9)
    bs, h = (int(d) for d in shape)
    odd = testdata.integers(key(case["id"], rank, "x/ties"), (bs, h), -127, 127) * 2 + 1  # odd multiples of 1/64
    for g in range(0, h, 128):
        x[:, g] = _TIE_AMAX
        ties = slice(g + 1, min(g + 1 + _TIES_PER_GROUP, h))
        x[:, ties] = odd[:, ties] / 64.0
    return x.astype(np_dtype(dtype))


def zeros(meta):
    dtype, shape = meta
    z = np.zeros(tuple(shape), dtype=np_dtype(dtype))
    return Typed(z, dtype) if DTYPES[dtype].coded else z  # uint8 codes carry their dtype


def special_ranges(specials, attrs: dict) -> tuple[tuple[str, int, int], ...]:
    """The id range [lo, hi) of each special expert the spec declares ((name, count attribute, ...) in id order,
    the reference's ``INFO.specials``), after the attrs' MoE experts."""
    out, lo = [], int(attrs["moeExpertNum"])
    for name, count_attr, *_ in specials:
        n = int(attrs.get(count_attr, 0) or 0)
        out.append((name, lo, lo + n))
        lo += n
    return tuple(out)


def _pool(attrs: dict, specials: tuple) -> int:
    """How many expert ids the routes draw from: the MoE experts, then the special experts' ranges."""
    return specials[-1][2] if specials else int(attrs["moeExpertNum"])


def topology(attrs: dict) -> dict:
    """W, Rs, S, E as the runtime routing takes them (defaults of the MoE family's attributes)."""
    return dict(W=int(attrs["epWorldSize"]), Rs=int(attrs.get("sharedExpertRankNum", 0) or 0),
                S=int(attrs.get("sharedExpertNum", 1) if attrs.get("sharedExpertNum") is not None else 1),
                E=int(attrs["moeExpertNum"]))


def senders(case: dict, attrs: dict, metas: list[dict], x_name: str, x_meta=None, specials=()) -> World:
    """Tokens, routes, masks and weights of every rank, from the case's own inputs where it has them; routes
    reach the special experts' ids too (``specials``: :func:`special_ranges`)."""
    world = World(inputs=[{} for _ in metas], tokens=[], expert_ids=[], masks=[], weights=[], specials=specials)
    for r, m in metas.items():
        bs, k = m["expertIds"][1]
        xm = m.get(x_name) if x_meta is None else x_meta(m)
        world.tokens.append(tokens(case, r, xm))
        world.expert_ids.append(testdata.distinct_rows(key(case["id"], r, "expertIds"), bs, k,
                                                       _pool(attrs, specials)))
        mask_name = "xActiveMaskOptional"
        world.masks.append(values(case, r, mask_name, m[mask_name]) if m.get(mask_name) is not None else None)
        world.weights.append(testdata.uniform(key(case["id"], r, "expertScales"), (bs, k), 0.0, 1.0))
    return world


def token_world(case: dict, attrs: dict, facts: ProductFacts, specials: tuple = ()) -> World:
    """DispatchV2 and DispatchSetup: tokens, distinct routes per token, smooth scales, masks, weights."""
    metas = rank_metas(case)
    world = senders(case, attrs, metas, "x", specials=specials)
    for r, m in metas.items():
        inp = world.inputs[r]
        for name, meta in m.items():
            if meta is None:
                inp[name] = None
            elif name == "x":
                inp[name] = world.tokens[r]
            elif name == "expertIds":
                inp[name] = world.expert_ids[r]
            elif name == "xActiveMaskOptional":
                inp[name] = world.masks[r]
            elif name == "expertScalesOptional":
                inp[name] = world.weights[r]
            elif name == "scalesOptional":
                inp[name] = values(case, r, name, meta, 0.5, 1.5)
            elif name in ("elasticInfoOptional", "performanceInfoOptional"):
                inp[name] = zeros(meta)
            else:
                inp[name] = values(case, r, name, meta)
    return world


def put(meta, rows) -> np.ndarray:
    """A zero tensor of ``meta`` with ``rows`` in its leading elements (what fits)."""
    out = zeros(meta)
    flat = data(out).reshape(-1)
    v = np.asarray(rows).reshape(-1)[:flat.size]
    flat[:v.size] = v
    return out


def expert_rows(world: World, attrs: dict, product: str, metas: list[dict]):
    """Each rank's dispatch plan and the rows identity experts return (the routed tokens, in plan order)."""
    topo = topology(attrs)
    plans = moe.plan_dispatch_world(world.expert_ids, world.masks, **topo)
    rows = [moe.gather_rows(world.tokens, p) if p.num_rows else None for p in plans]
    return plans, rows


def formula_outputs(ref, case: dict, inputs: dict, rank: int) -> frozenset:
    """The outputs the rank's quant formula assigns (its `when` branches decide), found on one token row."""
    attrs, out_dtypes = call_args(ref, case, rank)
    s = ref.reference.make_scope(ref.INFO, inputs, attrs, case["product"], out_dtypes or None)
    one = np.zeros(1, dtype=np.int64)  # token 0, smooth-scale row 0
    names = frozenset(ref.INFO.quant[s.attr(ref.INFO.quant_by)](RowBatch(s, s, one, one, s.dim("x", 1))))
    return names | {r for r, n in ref.INFO.roles.items() if n in names}  # and their role names



# ---- what the reference cannot run (cases the suite then validates and shape-checks only) -----------------

def reference_limit(semantics: str, attrs: dict) -> str | None:
    """Why the numpy reference has no data path for these attributes (None: it has one)."""
    family = FAMILIES.get(semantics)
    if family is not None and int(attrs.get("tpWorldSize", 0) or 0) > 1:
        return family.no_tp_reference
    return None


# ---- expected results ---------------------------------------------------------------------------------------

def _active(ids: np.ndarray, mask) -> tuple[np.ndarray, np.ndarray]:
    """(pairs, tokens) a mask selects: 1-D counts its trues (a prefix), 2-D selects pairs."""
    bs, k = ids.shape
    if mask is None:
        return np.ones((bs, k), bool), np.ones(bs, bool)
    m = np.asarray(mask, bool)
    if m.ndim == 1:
        tokens = np.arange(bs) < int(m.sum())
        return np.repeat(tokens[:, None], k, axis=1), tokens
    return m, m.any(axis=1)


def weighted_sum(world: World, attrs: dict, rank: int, *, shared_rows: int, shared_x=None, ori_x=None,
                 out_dtype) -> np.ndarray | None:
    """x * sum(weights) of one owner by plain loops: fp32 products summed in k order, one final cast.

    Special experts come from ``world.specials`` (the spec's id ranges), valued as the documents define the kinds
    by hand: ``zero`` adds nothing, ``copy`` adds w * oriX; shared-expert rows and sharedExpertX are added
    unweighted; inactive tokens stay 0.  None when an expert of another kind is routed (const: its rows come from
    the const inputs, which tests/test_special_experts.py checks with loops of its own).
    """
    ids = np.asarray(world.expert_ids[rank])
    x32 = codecs.to_f32(data(world.tokens[rank]), cann_dtype(world.tokens[rank]))
    w = np.asarray(world.weights[rank], dtype=np.float32)
    E = int(attrs["moeExpertNum"])
    pairs, tokens = _active(ids, world.masks[rank])
    bs, K = ids.shape
    out = np.zeros(x32.shape, dtype=np.float32)
    for t in range(bs):
        if not tokens[t]:
            continue
        acc = np.zeros(x32.shape[1], dtype=np.float32)
        for k in range(K):
            if not pairs[t, k]:
                continue
            e = int(ids[t, k])
            kind = "moe" if e < E else next((n for n, lo, hi in world.specials if lo <= e < hi), None)
            if kind == "moe":
                acc = (acc + (x32[t] * w[t, k]).astype(np.float32)).astype(np.float32)
            elif kind == "zero":
                continue
            elif kind == "copy":
                ori = codecs.to_f32(data(ori_x), cann_dtype(ori_x))[t]
                acc = (acc + (ori * w[t, k]).astype(np.float32)).astype(np.float32)
            else:
                return None
        for _ in range(shared_rows):
            acc = (acc + x32[t]).astype(np.float32)
        if shared_x is not None:
            acc = (acc + codecs.to_f32(data(shared_x), cann_dtype(shared_x)).reshape(bs, -1)[t]).astype(np.float32)
        out[t] = acc
    return out.astype(out_dtype)


def shared_rows(attrs: dict) -> int:
    """Shared-expert rows a token gets back: S, except that Rs = 0 with S = 1 means none (the tiling's rule)."""
    rs = int(attrs.get("sharedExpertRankNum", 0) or 0)
    s = int(attrs.get("sharedExpertNum", 1) if attrs.get("sharedExpertNum") is not None else 1)
    return 0 if rs == 0 else s
