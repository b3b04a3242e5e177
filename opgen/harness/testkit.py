"""The op-independent half of every generated test suite (``generated/<op>/tests``).

A generated suite is data (``tests/cases.py``: the positive worlds and negative calls found from the
spec at build time, the spec's tolerances, the check list) plus thin tests calling these helpers:

* ``accept`` / ``outputs`` / ``round_trip``: a positive world is accepted on every rank; its outputs
  have the inferred shapes and dtypes, ``run_rank`` equals ``run_world``,
  the semantics' invariants hold (counts against rows, assist info against the inputs), and identity
  experts give back ``x * sum(weights)`` within the spec's tolerance (with the paired op's reference
  when the output directory has it);
* ``reject``: a negative call fails with exactly the expected check id, aclnn code and parameter;
* ``CheckCore``: the generated C++ check core, compiled once per session, fed the same calls;
* ``twin`` / ``output_problems``: a device's outputs (the CPU twin's, the NPU mode's) against the reference's,
  where the op writes them.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from opgen.core.dtypes import DTYPES, FORMAT_VALUES
from opgen.core.families import FAMILIES
from opgen.core.layout import shared_host_include
from opgen.core.products import TRIPLE, ProductFacts
from opgen.runtime import OpError
from opgen.runtime import codecs
from opgen.runtime.calls import call_args, rank_attrs, rank_ids  # noqa: F401 - generated suites call them here
from opgen.harness import family_worlds, testdata, testworld
from opgen.runtime.dtypes import np_dtype
from opgen.runtime.scope import data
from opgen import sim
from opgen.runtime.driving import post_stage
from opgen.runtime.reference import allocate
from opgen.runtime.roles import aliased
from opgen.runtime.scope import cann_dtype


def ids(case: dict) -> str:
    return case["id"]


def full_attrs(ref, case: dict) -> dict:
    """Every attribute of the case with its default filled in (rank ids: those of rank 0)."""
    attrs = dict(case["attrs"])
    if "world" in case:
        attrs.update(rank_ids(ref, case, 0))
    return ref.reference.normalize_attrs(ref.INFO, attrs)


def read_attrs(ref, case: dict) -> dict:
    """``full_attrs`` as the op reads them: an attribute the product ignores is its default, whatever the case
    passes (what the expected rows and the world's topology follow); it answers the family's role names too."""
    return aliased(ref.reference.read_attrs(ref.INFO, full_attrs(ref, case), case["product"]), ref.INFO.roles)


def named(ref, role: str) -> str:
    """The op's name of the parameter its family calls ``role`` (opgen.runtime.roles)."""
    return ref.INFO.roles.get(role, role)


def _role_names(ref, names) -> dict:
    """{role name: the op's name} of ``names`` (the op's names)."""
    back = {n: r for r, n in ref.INFO.roles.items()}
    return {back.get(n, n): n for n in names}


def world_attrs(case: dict) -> dict:
    attrs = dict(case["attrs"])
    attrs.update(case.get("env", {}))
    return attrs


# ---- positive worlds -----------------------------------------------------------------------------------

def accept(ref, case: dict, world: testworld.World | None = None, ranks=None) -> None:
    """Every rank of the world passes ``validate`` (tiling's view: shapes, dtypes, attributes, BOOL data)."""
    metas = testworld.rank_metas(case)
    for r in (case.get("ranks", range(case["world"])) if ranks is None else ranks):
        inputs = world.inputs[r] if world is not None else testworld.meta_inputs(case, r, metas[r])
        attrs, out_dtypes = call_args(ref, case, r)
        try:
            ref.validate(inputs, attrs, case["product"], out_dtypes)
        except OpError as err:
            raise AssertionError(f"rank {r} rejected: {err}") from None


def build_world(ref, case: dict) -> testworld.World:
    attrs = read_attrs(ref, case)
    return family_worlds.build(ref.INFO.semantics, case, attrs, facts(ref, case),
                               testworld.special_ranges(ref.INFO.specials, attrs), ref.INFO.roles)


def facts(ref, case: dict) -> ProductFacts:
    """The product-table facts of the case's product, as the generated reference carries them."""
    return ref.INFO.fact(case["product"])


def run(ref, case: dict, world: testworld.World) -> list[dict]:
    return ref.run_world(world.inputs, world_attrs(case), case["product"], case.get("out_dtypes") or None)


def outputs(ref, case: dict, world: testworld.World, results: list[dict], unspecified: tuple) -> None:
    """Shapes and storage dtypes are the inferred ones on every rank, and run_rank agrees with run_world.

    (Outputs the spec marks unspecified have no contents to check: the tests never read them.)"""
    assert len(results) == case["world"]
    for r, out in enumerate(results):
        attrs, out_dtypes = call_args(ref, case, r)
        inferred = ref.infer(world.inputs[r], attrs, case["product"], out_dtypes)
        assert set(out) == set(inferred), f"rank {r}: outputs {sorted(out)} != {sorted(inferred)}"
        for name, (shape, dtype) in inferred.items():
            got = out[name]
            assert tuple(got.shape) == tuple(shape), f"rank {r} {name}: shape {got.shape} != inferred {shape}"
            assert got.dtype == np_dtype(dtype), f"rank {r} {name}: storage {got.dtype} != {dtype}"
    last = case["world"] - 1
    one = ref.run_rank(last, world.inputs, world_attrs(case), case["product"], case.get("out_dtypes") or None)
    for name, value in one.items():
        assert np.asarray(value).tobytes() == np.asarray(results[last][name]).tobytes(), \
            f"run_rank({last}) {name} differs from run_world"


def compare(name: str, got, want, tolerance) -> None:
    """``tolerance`` is (exact, rtol, atol) from the spec; exact compares bytes."""
    exact, rtol, atol = tolerance
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if exact:
        bad = np.flatnonzero(got.reshape(-1).view(np.uint8) != want.reshape(-1).view(np.uint8)) \
            if got.dtype == want.dtype else None
        assert got.dtype == want.dtype and not len(bad), f"{name}: differs from the expected bytes at {bad[:8]}"
        return
    g, w = got.astype(np.float32), want.astype(np.float32)
    close = np.isclose(g, w, rtol=rtol, atol=atol) | (np.isnan(g) & np.isnan(w))
    assert close.all(), (f"{name}: {int((~close).sum())} of {close.size} values outside rtol={rtol} atol={atol}, "
                         f"first at {np.argwhere(~close)[:4].tolist()}")


# ---- semantics invariants ------------------------------------------------------------------------------------

def dispatch_invariants(case: dict, world: testworld.World, results: list[dict], attrs: dict,
                        unspecified: tuple, facts: ProductFacts) -> None:
    """DispatchV2: counts against rows, assist triples against the routes, rows against the tokens (``facts``: the
    case product's, :func:`facts`)."""
    topo = testworld.topology(attrs)
    on = world.roles.get
    if int(attrs.get("tpWorldSize", 0) or 0) > 1:
        return  # rows of TP worlds interleave both slices: checked against infer and run_rank only
    W, Rs, E = topo["W"], topo["Rs"], topo["E"]
    K = world.expert_ids[0].shape[1]
    ent = int(attrs.get("expertTokenNumsType", 1))
    for d, out in enumerate(results):
        L = 1 if d < Rs else E // (W - Rs)
        cum = out["epRecvCountsOut"].astype(np.int64)[:W * L]
        n = int(cum[-1]) if len(cum) else 0
        assert np.all(np.diff(cum) >= 0), f"rank {d}: epRecvCountsOut is not cumulative"
        tokens = out["expertTokenNumsOut"].astype(np.int64)
        assert (tokens.sum() if ent == 1 else tokens[-1]) == n, f"rank {d}: expertTokenNumsOut does not count {n} rows"
        assert not np.asarray(data(out["expandXOut"]))[n:].any(), f"rank {d}: expandXOut rows beyond {n} are not zero"
        if facts.assist_layout != TRIPLE or on("assistInfoForCombineOut", "assistInfoForCombineOut") in unspecified:
            continue
        triples = out["assistInfoForCombineOut"][:3 * n].reshape(n, 3).astype(np.int64)
        first = (d - Rs) * L
        same = out["expandXOut"].dtype == np.asarray(data(world.tokens[0])).dtype and \
            case.get("out_dtypes", {}).get(on("expandXOut", "expandXOut")) in (None, case["inputs"][on("x", "x")][0]) and \
            int(attrs.get("quantMode", 0)) == 0
        for i, (src, t, k) in enumerate(triples):
            if k < K:
                e = int(world.expert_ids[src][t, k])
                assert d >= Rs and first <= e < first + L, f"rank {d} row {i}: token ({src}, {t}, {k}) routed elsewhere"
                if on("expandScalesOut", "expandScalesOut") not in unspecified and \
                        world.inputs[src].get("expertScalesOptional") is not None:
                    assert out["expandScalesOut"][i] == world.weights[src][t, k], f"rank {d} row {i}: expandScales"
            else:
                assert d < Rs, f"rank {d} row {i}: a shared-expert copy on a MoE rank"
            if same:
                assert np.asarray(data(out["expandXOut"]))[i].tobytes() == \
                    np.asarray(data(world.tokens[src]))[t].tobytes(), f"rank {d} row {i}: not token ({src}, {t})"


# ---- quantised rows -------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def representable(dtype: str) -> np.ndarray:
    """Every finite value of a quantised dtype, sorted (decoded from all its codes)."""
    if DTYPES[dtype].kind == "int":
        info = np.iinfo(np_dtype(dtype))
        return np.arange(info.min, info.max + 1, dtype=np.float32)
    codes = np.arange(1 << DTYPES[dtype].bits, dtype=np.uint8)
    values = codecs.to_f32(codes, dtype)
    return np.unique(values[np.isfinite(values)])


def nearest_error(q: np.ndarray, y: np.ndarray, dtype: str) -> np.ndarray:
    """How much farther ``q`` lies from ``y`` than the representable value nearest ``y`` (0 when nearest)."""
    grid = representable(dtype)
    y = np.clip(y, grid[0], grid[-1])  # saturation: beyond the range the extreme value is the nearest
    hi = np.clip(np.searchsorted(grid, y), 0, len(grid) - 1)
    lo = np.clip(hi - 1, 0, len(grid) - 1)
    best = np.minimum(np.abs(grid[hi] - y), np.abs(grid[lo] - y))
    return np.abs(q - y) - best


def dispatch_quant_rows(ref, case: dict, world: testworld.World, results: list[dict], mode: str) -> str | None:
    """Each quantised row decodes, with its own scale, to the value nearest the token's (rint, saturating).

    ``mode`` is the spec's name of the quant mode: pertoken (one scale per row), pergroup (per 128
    elements), mx (an E8M0 power of two per 32), static (the smooth scales themselves). Rows are matched to
    their tokens through the assist triples (A3/Ascend 950). Returns why nothing was checked, or None.
    """
    attrs = read_attrs(ref, case)
    if mode not in ("pertoken", "pergroup", "mx", "static"):
        return f"quant mode {mode!r} has no scale layout known to the suite"
    if facts(ref, case).assist_layout != TRIPLE or int(attrs.get("tpWorldSize", 0) or 0) > 1:
        return "rows are matched to tokens through the assist triples of A3 / Ascend 950 without TP"
    if mode != "static" and any(w.get("scalesOptional") is not None for w in world.inputs):
        return "smooth scales select a row per destination expert: the routed rows are checked by the reference tests"
    for d, out in enumerate(results):
        attrs_d, out_dtypes = call_args(ref, case, d)
        inferred = ref.infer(world.inputs[d], attrs_d, case["product"], out_dtypes)
        dtype = inferred[named(ref, "expandXOut")][1]
        per_expert = len(out["expertTokenNumsOut"])
        n = int(out["epRecvCountsOut"][int(attrs["epWorldSize"]) * per_expert - 1])
        triples = out["assistInfoForCombineOut"][:3 * n].reshape(n, 3).astype(np.int64)
        if not n:
            continue
        x = np.stack([codecs.to_f32(data(world.tokens[src]), _cann(world.tokens[src]))[t] for src, t, _ in triples])
        q = codecs.to_f32(data(out["expandXOut"])[:n], dtype)
        H = x.shape[1]
        scales = out["dynamicScalesOut"]
        if mode == "static":
            smooth = np.stack([np.broadcast_to(codecs.to_f32(data(world.inputs[src]["scalesOptional"]), "FLOAT32")
                                               .reshape(-1), (H,)) for src, _, _ in triples])  # the sender's scales
            y = (x * smooth).astype(np.float32)
        elif mode == "pertoken":
            y = x / np.asarray(scales[:n], np.float32).reshape(n, 1)
        elif mode == "pergroup":
            s = np.repeat(np.asarray(scales[:n], np.float32), 128, axis=1)[:, :H]
            y = x / s
        else:
            codes = np.asarray(scales[:n]).view(np.uint8).astype(np.int64)
            s = np.repeat(np.ldexp(np.float32(1), codes - 127).astype(np.float32), 32, axis=1)[:, :H]
            y = np.where(np.repeat(codes, 32, axis=1)[:, :H] == 255, np.nan, x / s)
        finite = np.isfinite(y)
        err = nearest_error(q[finite], y[finite].astype(np.float32), dtype)
        slack = 1e-5 * np.abs(y[finite]) + 1e-6
        bad = np.flatnonzero(err > slack)
        assert not len(bad), (f"rank {d}: {len(bad)} of {err.size} {dtype} values are not the nearest to their token "
                              f"(first: got {q[finite][bad[0]]}, token/scale {y[finite][bad[0]]})")
    return None


def _cann(t) -> str:
    return cann_dtype(t)


# ---- round trips ------------------------------------------------------------------------------------------

def sibling(name: str):
    """The reference package of another op built into the same output directory (None when absent)."""
    try:
        return importlib.import_module(f"{name}.reference"), importlib.import_module(f"{name}.tests.cases")
    except ImportError:
        return None


def combine_expectation(world: testworld.World, attrs: dict, rank: int, out_dtype, *, with_shared: bool,
                        inputs: dict | None = None) -> np.ndarray | None:
    inp = world.inputs[rank] if inputs is None else inputs
    return testworld.weighted_sum(world, attrs, rank, shared_rows=testworld.shared_rows(attrs) if with_shared else 0,
                                  shared_x=inp.get("sharedExpertXOptional") if with_shared else None,
                                  ori_x=inp.get("oriXOptional"), out_dtype=out_dtype)


def _pairable(name: str, inputs_of_pair) -> str | None:
    """The partner input an output feeds: expandXOut -> expandX, epRecvCountsOut -> epSendCounts, ..."""
    base = name[:-3] if name.endswith("Out") else name
    for cand in (base, base + "Optional", base.replace("Recv", "Send"), base.replace("Recv", "Send") + "Optional"):
        if cand in inputs_of_pair:
            return cand
    return None


def _post_inputs(cref, case: dict, rank: int, inputs: dict, attrs: dict, dtype: str) -> dict:
    """Values for the inputs the partner's post stage reads that no dispatch output feeds (CombineAddRmsNorm's
    residualX and gamma): their declared shape on this rank, the tokens' dtype, data keyed by case, rank and op."""
    scope = cref.reference.make_scope(cref.INFO, inputs, attrs, case["product"], None)
    return {name: testdata.values(testworld.key(case["id"], rank, f"{cref.OP}/{name}"), dtype, shape(scope), -1.0, 1.0)
            for name, shape in cref.INFO.post_inputs.get(case["product"], {}).items() if name not in inputs}


def _float_dtype(a: np.ndarray) -> str:
    return next(k for k, v in DTYPES.items() if np_dtype(k) == a.dtype and v.kind == "float")


def _compare_post(ref, scope, reduced: np.ndarray, got: dict, tolerances: dict, rank: int) -> None:
    """The spec's post stage over the loop oracle's fp32 rows against what the op wrote: the data movement is
    checked independently here, the post stage's arithmetic by the hand-written oracles in tests/."""
    want = allocate(ref.INFO, scope)
    for name in post_stage(ref.INFO, scope, reduced, want):
        compare(f"rank {rank} {name}", got[name], want[name], tolerances[name][_float_dtype(got[name])])


def combine_inputs(ref, case: dict, world: testworld.World, results: list[dict], cref) -> tuple[list[dict], dict]:
    """The paired combine's per-rank inputs and attributes from DispatchV2's ``results`` through identity experts
    (each dispatch output feeds the partner input of its role; the world's routing, weights and masks)."""
    attrs = read_attrs(ref, case)
    partner = _role_names(cref, cref.INPUTS)  # the partner's inputs by role
    # the pair's attributes share their roles (and the env its names)
    mine = {n: r for r, n in _role_names(ref, ref.ATTRS).items()}
    theirs = _role_names(cref, cref.ATTRS)
    combine_attrs = {theirs.get(mine.get(k, k), k): v for k, v in world_attrs(case).items()}
    combine_attrs = aliased({k: v for k, v in combine_attrs.items() if k in cref.ATTRS or k in cref.ENV},
                            cref.INFO.roles)
    outputs = _role_names(ref, ref.OUTPUTS)
    unpaired = shared_inputs(ref, cref, world)
    cin = []
    for r, out in enumerate(results):
        c = aliased({}, cref.INFO.roles)  # keyed by the partner's names, filled by role
        for role, name in outputs.items():
            target = _pairable(role, partner)
            if target is not None:
                c[target] = out[name]
        for name in unpaired:  # an input neither family reads by role (an MC2 context) passes by its name
            c[name] = world.inputs[r][name]
        c["expertIds"] = world.expert_ids[r]
        c["expertScales"] = world.weights[r]
        if world.masks[r] is not None and "xActiveMaskOptional" in partner:
            c["xActiveMaskOptional"] = world.masks[r]
        if named(cref, "oriXOptional") in _special_reads(cref, combine_attrs):
            c["oriXOptional"] = world.tokens[r]  # the special experts' formulas read the tokens before the FFN
        for k in [k for k in c if k not in cref.INPUTS]:
            del c[k]
        if int(attrs.get("tpWorldSize", 0) or 0) < 2:
            c.pop("tpSendCountsOptional", None)
        if not _combine_wants_expand_scales(cref, combine_attrs, case["product"]):
            c.pop("expandScalesOptional", None)
        c.update(_post_inputs(cref, case, r, c, dict(combine_attrs, **rank_ids(cref, case, r)),
                              cann_dtype(world.tokens[r])))
        cin.append(c)
    return cin, combine_attrs


def dispatch_then_combine(ref, case: dict, world: testworld.World, results: list[dict], pair) -> str | None:
    """DispatchV2 -> identity experts -> a paired combine's reference (CombineV2, or CombineAddRmsNorm through its
    post stage); None when checked, else why not."""
    cref, cases = pair
    attrs = read_attrs(ref, case)
    if int(attrs.get(ref.INFO.quant_by, 0)) != 0 or any(r["expandXOut"].dtype != np.asarray(data(world.tokens[0])).dtype
                                                        for r in results):
        return "expandXOut is quantised: identity experts would need a dequantisation the spec does not declare"
    cin, combine_attrs = combine_inputs(ref, case, world, results, cref)
    try:
        combined = cref.run_world(cin, combine_attrs, case["product"])
    except OpError as err:
        return f"the paired {cref.OP} rejects this world: {err}"
    tolerances = cases.TOLERANCES[case["product"]]
    for r in range(case["world"]):
        scope = cref.reference.make_scope(cref.INFO, cin[r], dict(combine_attrs, **rank_ids(cref, case, r)),
                                          case["product"], None)
        if cref.INFO.post is not None:
            reduced = combine_expectation(world, attrs, r, np.float32, with_shared=True, inputs=cin[r])
            if reduced is None:
                return "a const expert is routed: its value has no closed form here"
            _compare_post(cref, scope, reduced, combined[r], tolerances, r)
            continue
        got = combined[r]["xOut"]
        want = combine_expectation(world, attrs, r, got.dtype, with_shared=True, inputs=cin[r])
        if want is None:
            return "a const expert is routed: its value has no closed form here"
        x_out = named(cref, "xOut")
        compare(f"rank {r} {x_out}", got, want, tolerances[x_out][cref.INFO.dtype_rules[x_out](scope)])
    return None


def shared_inputs(ref, cref, world: testworld.World) -> list[str]:
    """The inputs of this op outside its family's roles that the partner takes under the same name, outside its
    own family's roles too (the MC2 context of the V3 pair): the partner gets this rank's tensor as it is."""
    mine = set(_role_names(ref, ref.INPUTS)) - set(FAMILIES[ref.INFO.semantics].role_kinds)
    theirs = set(_role_names(cref, cref.INPUTS)) - set(FAMILIES[cref.INFO.semantics].role_kinds)
    return [n for n in ref.INPUTS if n in mine & theirs and all(n in inp for inp in world.inputs)]


def _special_reads(cref, attrs: dict) -> set:
    """The inputs the partner's special experts read in this world (those with at least one expert)."""
    ranges = testworld.special_ranges(cref.INFO.specials, attrs)  # one per INFO.specials entry, in its order
    return {t for (_, lo, hi), (*_, reads) in zip(ranges, cref.INFO.specials) if hi > lo for t in reads}


def _combine_wants_expand_scales(cref, attrs: dict, product: str) -> bool:
    """Whether the partner accepts expandScales here (its hierarchy path reads it, the others forbid it)."""
    return attrs.get("commAlg", "") == "hierarchy"


def combine_round_trip(ref, case: dict, world: testworld.World, results: list[dict], tolerances: dict,
                       *, with_shared: bool) -> str | None:
    """Combine-like ops fed identity-expert rows return x * sum(weights) (+ shared rows, sharedExpertX)."""
    attrs = read_attrs(ref, case)
    q = attrs.get(ref.INFO.quant_by, 0) if ref.INFO.quant_by else 0
    if q != 0:
        return f"{ref.INFO.quant_by} {q} quantises the returned rows: the spec's tolerance is for the exact path"
    for r, out in enumerate(results):
        if ref.INFO.post is not None:
            reduced = combine_expectation(world, attrs, r, np.float32, with_shared=with_shared)
            if reduced is None:
                return "a const expert is routed: its value has no closed form here"
            scope = ref.reference.make_scope(ref.INFO, world.inputs[r], dict(attrs, **rank_ids(ref, case, r)),
                                             case["product"], None)
            _compare_post(ref, scope, reduced, out, tolerances[case["product"]], r)
            continue
        got = out["xOut"]
        want = combine_expectation(world, attrs, r, got.dtype, with_shared=with_shared)
        if want is None:
            return "a const expert is routed: its value has no closed form here"
        x_out = named(ref, "xOut")
        compare(f"rank {r} {x_out}", got, want, tolerances[case["product"]][x_out][_float_dtype(got)])
    return None


# ---- negative calls -------------------------------------------------------------------------------------------

def reject(ref, neg: dict) -> None:
    """The call fails with exactly the check the case was built for (warn checks: it is accepted)."""
    inputs = testworld.meta_inputs(neg)
    attrs, out_dtypes = call_args(ref, neg)
    shapes = neg.get("out_shapes") or None  # the buffers the call gives, for the output shape checks
    formats = neg.get("out_formats") or None  # and their formats, for the output format checks
    if neg["code"] == 0:  # a warning never rejects
        ref.validate(inputs, attrs, neg["product"], out_dtypes, out_shapes=shapes, out_formats=formats)
        return
    try:
        ref.validate(inputs, attrs, neg["product"], out_dtypes, out_shapes=shapes, out_formats=formats)
    except OpError as err:
        got = (err.code, err.param, err.message.rsplit("[", 1)[-1].rstrip("]"))
        assert got == (neg["code"], neg["param"], neg["check"]), f"expected {neg['check']}, got {got}: {err}"
        return
    raise AssertionError(f"accepted, but {neg['check']} should reject it ({neg['change']})")


# ---- the C++ check core --------------------------------------------------------------------------------------

class CheckCore:
    """The generated check core compiled with the suite's driver; ``run`` sends calls, returns results."""

    def __init__(self, exe: Path, fields: tuple, outputs: tuple, size_fns: tuple = ()):
        self.exe = exe
        self.fields = fields
        self.outputs = outputs
        self.size_fns = tuple(size_fns)

    @classmethod
    def build(cls, op_dir: Path, snake: str, fields: tuple, outputs: tuple, work: Path,
              size_fns: tuple = ()) -> "CheckCore":
        cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")
        if cxx is None:
            raise FileNotFoundError("no C++ compiler (g++ or clang++, or $CXX)")
        exe = work / f"{snake}_check_driver"
        cmd = [cxx, "-std=c++17", "-O0", f"-I{op_dir / 'op_host' / 'op_tiling'}", f"-I{shared_host_include(op_dir)}",
               str(op_dir / "tests" / "check_core_driver.cpp"), "-o", str(exe)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[:4000]}")
        return cls(exe, fields, outputs, size_fns)

    def encode(self, inputs: dict, attrs: dict, out_dtypes: dict, out_shapes: dict | None = None,
               out_formats: dict | None = None) -> str:
        tokens = []
        for kind, name, typ in self.fields:
            if kind == "input":
                m = inputs.get(name)
                tokens.append("-" if m is None else f"{DTYPES[m[0]].ge_value}:" + ",".join(str(d) for d in m[1])
                              + (f":{FORMAT_VALUES[m[2]]}" if len(m) > 2 else ""))
            elif kind == "output":
                d = out_dtypes.get(name)
                shape = (out_shapes or {}).get(name)
                fmt = (out_formats or {}).get(name, "ND")
                tokens.append(("-" if d is None else str(DTYPES[d].ge_value))
                              + ("" if shape is None else ":" + ",".join(str(x) for x in shape))
                              + ("" if fmt == "ND" else f"@{FORMAT_VALUES[fmt]}"))
            else:
                tokens.append(_encode_value(attrs[name], typ))
        return " ".join(tokens)

    def run(self, product: str, lines: list[str]) -> list[dict]:
        proc = subprocess.run([str(self.exe), product], input="\n".join(lines) + "\n", capture_output=True,
                              text=True, check=True)
        out = [self._decode(line) for line in proc.stdout.splitlines()]
        assert len(out) == len(lines), f"{len(lines)} calls, {len(out)} results"
        return out

    def _decode(self, line: str) -> dict:
        tok = line.split(" ")

        def text(t: str) -> str:
            return bytes.fromhex(t[1:]).decode("utf-8")

        n_warn = int(tok[4])
        i = 5 + n_warn
        shapes = {}
        for k, name in enumerate(self.outputs):
            dims = tok[i + 1 + k]
            shapes[name] = () if dims == "_" else tuple(int(d) for d in dims.split(","))
        j = i + 1 + len(self.outputs)
        a = j + 1 + len(self.outputs)
        return dict(code=int(tok[0]), id=text(tok[1]), param=text(tok[2]), message=text(tok[3]),
                    warnings=[text(t) for t in tok[5:5 + n_warn]], shapes_ok=tok[i] == "S1", shapes=shapes,
                    dtypes_ok=tok[j] == "D1",
                    dtypes={name: int(tok[j + 1 + k]) for k, name in enumerate(self.outputs)},
                    op_api=(int(tok[a][1:]), text(tok[a + 1])),
                    sizes={name: (tok[a + 2 + 2 * k] == "Z1", tuple(int(v) for v in tok[a + 3 + 2 * k].split(",")))
                           for k, name in enumerate(self.size_fns)})


def _encode_value(v, typ: str) -> str:
    if typ.startswith("list<"):
        return "l" + ",".join(_encode_value(x, typ[5:-1]) for x in v)
    if typ == "int64":
        return str(int(v))
    if typ == "bool":
        return "1" if v else "0"
    if typ == "float":
        v = float(v)
        return "nan" if v != v else ("inf" if v == float("inf") else "-inf" if v == float("-inf") else v.hex())
    return "h" + str(v).encode("utf-8").hex()


def core_results(ref, core: CheckCore, positives, negatives) -> dict:
    """{(case id, rank or None): driver result} for every positive rank and every negative call."""
    per_product: dict[str, list] = {}
    for case in positives:
        metas = testworld.rank_metas(case)
        for r, m in metas.items():
            per_product.setdefault(case["product"], []).append(((case["id"], r), _line(ref, core, case, m, r)))
    for neg in negatives:
        per_product.setdefault(neg["product"], []).append(((neg["id"], None), _line(ref, core, neg, neg["inputs"], None)))
    results = {}
    for product, items in per_product.items():
        outs = core.run(product, [line for _, line in items])
        results.update({k: v for (k, _), v in zip(items, outs)})
    return results


def _line(ref, core: CheckCore, case: dict, metas: dict, rank) -> str:
    attrs, out_dtypes = call_args(ref, case, rank)
    full = dict(ref.reference.normalize_attrs(ref.INFO, {k: v for k, v in attrs.items() if k in ref.ATTRS}))
    for k, v in ref.ENV.items():
        full[k] = attrs.get(k, v)
    return core.encode(metas, full, out_dtypes, case.get("out_shapes"), case.get("out_formats"))


def op_api_outcome(ref, case: dict, inputs: dict, rank=None) -> tuple[int, str]:
    """(code, check id) of the reference's op_api stage on one call: what aclnn GetWorkspaceSize returns before
    tiling runs ((0, "") when it passes the call on)."""
    attrs, out_dtypes = call_args(ref, case, rank)
    try:
        ref.validate(inputs, attrs, case["product"], out_dtypes, stage="op_api",
                     out_shapes=case.get("out_shapes") or None, out_formats=case.get("out_formats") or None)
    except OpError as err:
        return err.code, err.message.rsplit("[", 1)[-1].rstrip("]")
    return 0, ""


def core_accepts(ref, case: dict, results: dict) -> None:
    """Every rank accepted by C++ (by the op_api stage too), with the reference's inferred shapes and ge dtypes."""
    metas = testworld.rank_metas(case)
    for r, m in metas.items():
        got = results[(case["id"], r)]
        assert got["code"] == 0, f"rank {r}: the C++ check core rejects it: {got['message']}"
        assert got["op_api"] == (0, ""), f"rank {r}: the C++ op_api stage rejects it: {got['op_api']}"
        for name, (ok, values) in got.get("sizes", {}).items():  # the aclnn size functions on this call
            want = ref.sizes(name, testworld.meta_inputs(case, r, m), call_args(ref, case, r)[0], case["product"])
            assert ok and values == tuple(want.values()), f"rank {r}: C++ {name} {values}, the reference's {want}"
        attrs, out_dtypes = call_args(ref, case, r)
        inferred = ref.infer(testworld.meta_inputs(case, r, m), attrs, case["product"], out_dtypes)
        shapes = {k: tuple(v[0]) for k, v in inferred.items()}
        dtypes = {k: DTYPES[v[1]].ge_value for k, v in inferred.items()}
        assert got["shapes_ok"] and got["shapes"] == shapes, f"rank {r}: C++ shapes {got['shapes']} != {shapes}"
        assert got["dtypes_ok"] and got["dtypes"] == dtypes, f"rank {r}: C++ dtypes {got['dtypes']} != {dtypes}"


def core_rejects(neg: dict, results: dict, ref=None) -> None:
    """C++ rejects the call with the case's check; its op_api stage returns what the reference's does (the case's
    check when its class runs there, else a null / invalid check the call also breaks, else nothing). ``ref``:
    the op's reference (suites generated before the op_api stage existed do not pass it)."""
    got = results[(neg["id"], None)]
    if ref is not None:  # GetWorkspaceSize sees shapes and dtypes, never tensor contents
        metas = {n: None if m is None else testworld.meta(m) for n, m in neg["inputs"].items()}
        want = op_api_outcome(ref, neg, metas)
        assert got["op_api"] == want, f"C++ op_api stage: {got['op_api']}, the reference's: {want}"
    if neg["code"] == 0:  # a warning: accepted, and reported
        assert got["code"] == 0, f"a warning rejected the call: {got['message']}"
        assert any(w.endswith(f"[{neg['check']}]") for w in got["warnings"]), \
            f"warning {neg['check']} not reported: {got['warnings']}"
        return
    if neg["data_check"]:  # tiling never sees tensor contents: the check core accepts what only data breaks
        assert got["code"] == 0, f"the C++ check core rejects a call only its data makes invalid: {got['message']}"
        return
    assert (got["code"], got["param"], got["id"]) == (neg["code"], neg["param"], neg["check"]), \
        f"C++: {got['code']} {got['param']} [{got['id']}] {got['message']}"


# ---- outputs of a device (the CPU twin, the NPU mode) against the reference ---------------------------------

def inferred_dtypes(ref, case: dict, inputs: dict, rank: int) -> dict:
    attrs, out_dtypes = call_args(ref, case, rank)
    return {name: dtype for name, (_, dtype) in ref.infer(inputs, attrs, case["product"], out_dtypes).items()}


def written(ref, case: dict, world: testworld.World, rank: int, name: str, expected: dict) -> np.ndarray:
    """Mask of the elements of output ``name`` the op writes on world rank ``rank``.

    Capacity-shaped outputs are written up to what the counts say, and only with what the semantics
    produce there; the reference zeroes the rest, a device leaves whatever was there (the twin poisons it
    with 0xA5).  ``expected`` is the reference's outputs of the rank."""
    mask = np.zeros(np.shape(data(expected[name])), dtype=bool)
    mask[_written_region(ref, case, world.inputs[rank], rank, name, expected)] = True
    return mask


def _written_region(ref, case, inputs, rank, name, expected):
    region = family_worlds.WRITTEN_REGIONS.get(ref.INFO.semantics)
    roles = ref.INFO.roles
    role = {n: r for r, n in roles.items()}.get(name, name)  # the family's region names outputs by role
    found = None if region is None else region(ref, case, aliased(inputs, roles), rank,
                                               aliased(rank_attrs(ref, case, rank), roles), role,
                                               aliased(expected, roles))
    return np.s_[...] if found is None else found


def _show(a: np.ndarray, idx: tuple, dtype: str) -> str:
    """One element as its value and its bits."""
    v = a[idx]
    bits = int(np.asarray(v).reshape(1).view(f"u{a.dtype.itemsize}")[0])
    if DTYPES[dtype].kind == "float":
        value = f"{float(codecs.to_f32(np.asarray(v).reshape(1), dtype)[0]):.9g}"
    else:
        value = str(int(v))
    return f"{value} (0x{bits:0{2 * a.dtype.itemsize}x})"


def output_problems(ref, cases, case: dict, world: testworld.World, rank: int, got: dict, expected: dict,
                    skip: tuple = ()) -> list[str]:
    """Every output of one rank that differs from the reference's ``expected``, with its first differences.

    Integer outputs and outputs the spec declares exact compare bits, the others the spec's tolerance;
    outputs the spec leaves unspecified (and ``skip``) are not compared, capacity-shaped ones only where
    the op writes (``written``)."""
    product = case["product"]
    dtypes = inferred_dtypes(ref, case, world.inputs[rank], rank)
    problems = []
    for name, expect in expected.items():
        if name in cases.UNSPECIFIED[product] or name in skip:
            continue
        want = np.asarray(data(expect))
        if name not in got:
            problems.append(f"rank {rank} {name}: not returned")
            continue
        have = np.asarray(data(got[name]))
        if have.size != want.size:
            problems.append(f"rank {rank} {name}: shape {have.shape}, expected {want.shape}")
            continue
        # storage dtypes may be named differently (torch has no FP8 / HiF8): same width reinterprets the bits
        have = have.reshape(want.shape)
        have = have.view(want.dtype) if have.dtype.itemsize == want.dtype.itemsize else have.astype(want.dtype)
        dtype = dtypes[name]
        mask = written(ref, case, world, rank, name, expected)
        exact, rtol, atol = cases.TOLERANCES.get(product, {}).get(name, {}).get(dtype, (True, 0.0, 0.0))
        if exact or DTYPES[dtype].kind != "float":
            u = f"u{want.dtype.itemsize}"
            differs = have.view(u) != want.view(u)
            how = "bits differ"
        else:
            g, w = codecs.to_f32(have, dtype), codecs.to_f32(want, dtype)
            differs = ~(np.isclose(g, w, rtol=rtol, atol=atol) | (np.isnan(g) & np.isnan(w)))
            how = f"outside rtol={rtol} atol={atol}"
        bad = np.argwhere(differs & mask)
        if len(bad):
            first = ", ".join(f"{tuple(int(i) for i in idx)}: {_show(have, tuple(idx), dtype)} != "
                              f"{_show(want, tuple(idx), dtype)}" for idx in bad[:4])
            problems.append(f"rank {rank} {name} ({dtype}): {len(bad)} of {int(mask.sum())} written elements "
                            f"{how}; first {first}")
    return problems


# A Teardown's kernel reads what its Setup left in the HCCL windows: the twin runs the Setup op (the prelude,
# by semantics) on the same windows first.  The Setup's outputs become the Teardown's inputs of the same
# name less "Out" (yOut -> y), so the reference sees exactly what the kernels do.
# family -> the family whose kernel runs first on the same HCCL windows (the families' prelude fact)
TWIN_PRELUDES = {f.name: f.prelude for f in FAMILIES.values() if f.prelude is not None}


def twin_prelude(op_dir: Path, semantics: str):
    """(reference, cases) of the op built next to ``op_dir`` that a world of ``semantics`` needs first on the
    twin; None when it needs none; LookupError when it needs one that is not built there."""
    wanted = TWIN_PRELUDES.get(semantics)
    if wanted is None:
        return None
    for d in sorted(p for p in Path(op_dir).parent.iterdir() if (p / "reference.py").is_file()):
        found = sibling(d.name)
        if found is not None and found[0].INFO.semantics == wanted:
            return found
    raise LookupError(f"the twin runs a {wanted} op first on the same HCCL windows: build one into "
                      f"{Path(op_dir).parent}")


def prelude_plan(ref, case: dict, world: testworld.World, pref):
    """The Setup op ``pref`` a Teardown world runs first on the same HCCL windows: (its case, its world, {its output:
    this op's input it feeds}, its reference outputs per rank), or why no Setup call produces this world's inputs."""
    pinputs = family_worlds.prelude_inputs(pref.INFO.semantics, world, read_attrs(ref, case), pref.INFO.roles)
    # the prelude's output OUT feeds this op's input of the role OUT less "Out" (yOut -> y)
    mine = _role_names(ref, ref.INPUTS)
    feeds = {o: mine.get(r[:-3] if r.endswith("Out") else r) for r, o in _role_names(pref, pref.OUTPUTS).items()}
    feeds = {o: t for o, t in feeds.items() if t is not None}
    dtypes = {o: _cann(world.inputs[0][t]) for o, t in feeds.items() if world.inputs[0].get(t) is not None}
    pcase = dict(case, id=f"{case['id']}.prelude", out_dtypes=dtypes,
                 attrs={k: v for k, v in case["attrs"].items() if k in pref.ATTRS})
    pworld = dataclasses.replace(world, inputs=pinputs)
    try:
        pexpected = pref.run_world(pinputs, world_attrs(pcase), case["product"], dtypes or None)
    except OpError as err:
        return f"no {pref.OP} call produces this world's inputs: it rejects them ({err})"
    return pcase, pworld, feeds, pexpected


def fed_inputs(world: testworld.World, feeds: dict, prelude_outputs: list[dict]) -> list[dict]:
    """Every rank's inputs with the prelude's outputs in the inputs they feed."""
    inputs = []
    for r, inp in enumerate(world.inputs):
        fed = dict(inp)
        for name, target in feeds.items():
            fed[target] = prelude_outputs[r][name]
        inputs.append(fed)
    return inputs


def twin(ref, cases, case: dict, world: testworld.World, results: list[dict], exe: Path, work: Path,
         prelude=None) -> str | None:
    """The world on the CPU twin ``exe`` (``opgen.sim.build``): every rank's outputs equal run_world's.

    ``exe`` (and the prelude's): the executable, or a function of the product giving the one built for its
    kernel arch (``opgen.sim.build_for``).
    ``prelude``: (reference, cases, exe) of the Setup op to run first on the same windows (``twin_prelude``);
    its outputs are checked too, and replace the world's inputs they feed.  Returns why the world cannot run
    (its prelude rejects it: no real pipeline reaches it; this host cannot map its memory: ``TwinHostLimit``), or
    None when it ran."""
    try:
        return _twin(ref, cases, case, world, results, exe, work, prelude)
    except sim.job.TwinHostLimit as err:
        return f"the CPU twin cannot host this world on this machine: {str(err).splitlines()[0]}"


def _twin(ref, cases, case: dict, world: testworld.World, results: list[dict], exe, work: Path,
          prelude) -> str | None:

    windows = None
    problems = []
    if prelude is not None:
        pref, pcases, pexe = prelude
        plan = prelude_plan(ref, case, world, pref)
        if isinstance(plan, str):
            return plan
        pcase, pworld, feeds, pexpected = plan
        pexe = pexe(case["product"]) if callable(pexe) else pexe
        pouts = sim.run(pexe, pref, pcase, pworld, work / "prelude", windows_out=True)
        for r, (got, expected) in enumerate(zip(pouts, pexpected)):
            problems += [f"prelude {pref.OP}: {p}" for p in output_problems(pref, pcases, pcase, pworld, r, got,
                                                                            expected)]
        inputs = fed_inputs(world, feeds, pexpected)
        world = dataclasses.replace(world, inputs=inputs)
        results = run(ref, case, world)
        windows = work / "prelude" / sim.job.WINDOWS_FILE
    exe = exe(case["product"]) if callable(exe) else exe
    outs = sim.run(exe, ref, case, world, work / "op", windows_in=windows)
    for r, (got, expected) in enumerate(zip(outs, results)):
        problems += output_problems(ref, cases, case, world, r, got, expected)
    assert not problems, "the CPU twin differs from run_world:\n" + "\n".join(problems)
    return None