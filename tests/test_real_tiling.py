"""The hand-written ops' real op_host tilings (../shared/cann/ops-transformer.tar.gz, unmodified) on the twin's host
runtime (opgen/sim/real_host), judged against the generated suites.

- positive worlds (generated/<op>/tests/cases.py): every rank must tile with the real tiling; the reference's
  ``validate`` accepts them by construction, and the generated tiling tiles them all (tests/test_sim_tiling.py), so a
  real rejection is a disagreement of the generated side with CANN.  Default tier: the first world of each product x
  quant mode; slow tier: all of them.
- negative calls: a handful per product, which the reference rejects (test_<op>.py test_rejected) and the
  generated tiling rejects (test_sim_tiling.py): the real tiling must reject them too.

Each known disagreement is an ``xfail(strict=True)`` with the real code as evidence; the README lists them.
The tarballs are unpacked into ``$OPGEN_CANN_CACHE`` (else the pytest tmp dir); executables and objects are cached
under ``$OPGEN_SIM_CACHE``.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from opgen.harness import testkit, testworld
from opgen.runtime import OpError
from opgen.runtime.calls import call_args
from opgen.sim import real_tiling

from .conftest import ROOT

SHARED_CANN = ROOT.parent / "shared" / "cann"
GENERATED = ROOT / "generated"
OPS = {"MoeDistributeDispatchV2": "moe_distribute_dispatch_v2", "MoeDistributeCombineV2": "moe_distribute_combine_v2"}
NEGATIVES_PER_PRODUCT = 3
TILING_CHECKS = ("domain.", "op.", "quant_mode.", "window.")

pytestmark = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(),
                       reason="../shared/cann not found: the real op tilings come from its ops-transformer.tar.gz"),
    pytest.mark.skipif(shutil.which("g++") is None or shutil.which("tar") is None,
                       reason="the real op tilings need g++ and tar"),
]

# Positive worlds of the generated suites the real tiling rejects: (op, case id) -> the real code's reason.
HIERARCHY_RECV = ("the real A3 tiling with commAlg hierarchy (layered) requires {what} dim 0 >= epWorldSize * "
                  "localMoeExpertNum + globalBs * 2 * k * epWorldSize / 8 (code: mc2/moe_distribute_{op}/op_host/"
                  "op_tiling/moe_distribute_{op}_tiling.cpp {fn}); the generated shape has no layered meta area")
KNOWN = {
    ("MoeDistributeDispatchV2", "ascend910_93-q0-bs4-h1024-k2-w16-moeExpertNum-16-commAlg-hierarchy-expertScales4x2"):
        HIERARCHY_RECV.format(what="epRecvCountsOut", op="dispatch_v2", fn="CheckRecvCountTensorShape"),
    ("MoeDistributeCombineV2", "ascend910_93-q0-bs2-h1024-k2-w16-moeExpertNum-16-commAlg-hierarchy-expandScales32"):
        HIERARCHY_RECV.format(what="epSendCounts", op="combine_v2", fn="CheckSendCountTensorShape"),
}
FP4_SCALES = ("Ascend 950 DispatchV2 with an FP4 x takes scales of FLOAT8_E8M0 only (code: mc2/moe_distribute_"
              "dispatch_v2/op_host/op_tiling/arch35/moe_distribute_dispatch_v2_tiling_arch35.cpp "
              "CheckTensorDataTypeNonQuant: 'scales datatype is invalid, datatype should be e8m0'); the generated "
              "suite gives FLOAT32 scales")
for _id in ("ascend950-q0-bs2-h1024-k2-w2-x-float4_e2m1-scales2x1024",
            "ascend950-q0-bs2-h1024-k2-w2-x-float4_e1m2-scales2x1024",
            "ascend950-q0-bs2-h1024-k2-w2-x-float4_e2m1-scales2x1024-expandXOut-float4_e2m1",
            "ascend950-q0-bs2-h1024-k2-w2-x-float4_e1m2-scales2x1024-expandXOut-float4_e1m2"):
    KNOWN[("MoeDistributeDispatchV2", _id)] = FP4_SCALES
KNOWN[("MoeDistributeCombineV2", "ascend910b-q2-bs2-h32-k1-w2")] = (
    "Atlas A2 CombineV2 takes commQuantMode 0 only unless layered (commAlg hierarchy) (code: mc2/moe_distribute_"
    "combine_v2/op_host/op_tiling/arch22/moe_distribute_combine_tiling_arch22.cpp "
    "MoeDistributeCombineA2CheckAttrAndSetTiling: 'should be 0 (NON_QUANT) when not layered')")
for _id in ("ascend910b-q0-bs2-h32-k1-w2-constExpertAlpha10x32", "ascend910b-q0-bs2-h32-k1-w2-constExpertAlpha20x32",
            "ascend910b-q0-bs2-h32-k1-w2-constExpertV0x32",
            "ascend910b-q0-bs2-h32-k1-w2-expandX-bfloat16-constExpertAlpha10x32-constExpertAlpha1-bfloat16",
            "ascend910b-q0-bs2-h32-k1-w2-expandX-bfloat16-constExpertAlpha20x32-constExpertAlpha2-bfloat16",
            "ascend910b-q0-bs2-h32-k1-w2-expandX-bfloat16-constExpertV0x32-constExpertV-bfloat16"):
    KNOWN[("MoeDistributeCombineV2", _id)] = (
        "Atlas A2 CombineV2 rejects constExpertAlpha1/Alpha2/V (code: mc2/moe_distribute_combine_v2/op_host/"
        "op_tiling/arch22/moe_distribute_combine_tiling_arch22.cpp MoeDistributeCombineA2CheckShapeAndSetTiling: "
        "'current version does not support const_expert_alpha_1/alpha_2/v')")
for _id in ("ascend950-q0-bs2-h1024-k2-w2-commAlg-fullmesh_v1", "ascend950-q0-bs2-h1024-k2-w2-commAlg-fullmesh_v2"):
    KNOWN[("MoeDistributeCombineV2", _id)] = (
        "Ascend 950 CombineV2 takes commAlg '' or 'ccu' only (code: mc2/moe_distribute_combine_v2/op_host/op_tiling/"
        "arch35/moe_distribute_combine_tiling_arch35.cpp MoeDistributeCombineTilingFuncImpl: 'It should be only "
        "nullptr (or empty char*) or \"ccu\" is supported on this SoC version')")

# Negative calls of the generated suites the real tiling accepts (measured): the generated check is stricter than
# CANN's tiling.  (op, case id) -> what was measured.
KNOWN_NEG = {
    ("MoeDistributeDispatchV2", "ascend910b-domain.sharedExpertNum"): "the real A2 tiling tiles sharedExpertNum 2",
    ("MoeDistributeDispatchV2", "ascend910_93-domain.tpRankId"): "the real A3 tiling tiles tpRankId 1 with no TP group",
    ("MoeDistributeDispatchV2", "ascend950-domain.tpRankId"): "the real 950 tiling tiles tpRankId 1 with no TP group",
    ("MoeDistributeCombineV2", "ascend910b-domain.sharedExpertNum"): "the real A2 tiling tiles sharedExpertNum 2",
    ("MoeDistributeCombineV2", "ascend910b-domain.outDtype"): "the real A2 tiling tiles outDtype 1 (it reads no "
                                                               "outDtype: arch22 ATTR_OUT_DTYPE_INDEX is unused)",
}


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SUITES = {op: (_module(GENERATED / snake / "reference.py", f"_real_tiling_{snake}_ref"),
               _module(GENERATED / snake / "tests" / "cases.py", f"_real_tiling_{snake}_cases"))
          for op, snake in OPS.items()}


def _params(slow: bool):
    out = []
    for op, (_, cases) in SUITES.items():
        seen = set()
        for case in cases.POSITIVE:
            if "ranks" in case:  # the twin tiles whole worlds
                continue
            key = (case["product"], case["attrs"].get(cases.QUANT_BY, 0))
            first = key not in seen
            seen.add(key)
            if first == slow:
                continue
            marks = [pytest.mark.slow] if slow else []
            if (op, case["id"]) in KNOWN:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[(op, case["id"])]))
            out.append(pytest.param(op, case, marks=marks, id=f"{op}-{case['id']}"))
    return out


@pytest.fixture(scope="session")
def tree(tmp_path_factory):
    cache = os.environ.get("OPGEN_CANN_CACHE")
    return real_tiling.unpack(SHARED_CANN, Path(cache) if cache else tmp_path_factory.mktemp("cann"))


@pytest.fixture(scope="session")
def exes(tree):
    built = {}

    def get(op: str, arch: str) -> Path:
        if (op, arch) not in built:
            built[(op, arch)] = real_tiling.build_tiling(tree, op, arch)
        return built[(op, arch)]
    return get


def _tile_world(exes, op, case, tmp_path):
    ref, _ = SUITES[op]
    exe = exes(op, real_tiling.arch_of(ref, case["product"]))
    return real_tiling.tile(exe, ref, case, testkit.build_world(ref, case), tmp_path / "job")


def _check_accepted(result, case):
    assert not result.faults, f"the twin faulted: {result.faults}"
    rejected = {r: t.message for r, t in sorted(result.tilings.items()) if not t.ok}
    assert not rejected, f"the real tiling rejected {case['id']}: " + "; ".join(
        f"rank {r}: {m}" for r, m in list(rejected.items())[:2])
    assert result.status == "ok" and sorted(result.tilings) == list(range(case["world"]))
    for r, t in result.tilings.items():
        assert t.block_dim > 0 and len(result.data[r]) > 0, f"rank {r}: block dim {t.block_dim}, no tiling data"


@pytest.mark.parametrize("op,case", _params(slow=False))
def test_the_real_tiling_accepts_a_positive_world(exes, op, case, tmp_path):
    _check_accepted(_tile_world(exes, op, case, tmp_path), case)


@pytest.mark.parametrize("op,case", _params(slow=True))
def test_the_real_tiling_accepts_every_positive_world(exes, op, case, tmp_path):
    _check_accepted(_tile_world(exes, op, case, tmp_path), case)


def _negatives(op):
    ref, cases = SUITES[op]
    out, count = [], {}
    for neg in cases.NEGATIVE:
        if neg["data_check"] or neg["code"] == 0 or count.get(neg["product"], 0) >= NEGATIVES_PER_PRODUCT:
            continue
        # checks tiling makes; a dtype outside the OpDef's columns never reaches a real tiling (CANN selects the
        # op's binary by dtype first), so the real tilings do not all repeat the dtype checks
        if not neg["check"].startswith(TILING_CHECKS):
            continue
        try:  # a tiling call carries its outputs: only calls whose output shapes the reference can infer
            _outputs(ref, neg)
        except OpError:
            continue
        count[neg["product"]] = count.get(neg["product"], 0) + 1
        reason = KNOWN_NEG.get((op, neg["id"]))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(op, neg, marks=marks, id=f"{op}-{neg['id']}"))
    return out


def _outputs(ref, neg) -> dict:
    """name -> (dtype, shape) of the call's outputs, inferred without the checks."""
    attrs, out_dtypes = call_args(ref, neg)
    inferred = ref.infer(testworld.meta_inputs(neg), attrs, neg["product"], out_dtypes, validate=False)
    return {n: (dtype, shape) for n, (shape, dtype) in inferred.items()}


@pytest.mark.parametrize("op,neg", [p for op in OPS for p in _negatives(op)])
def test_the_real_tiling_rejects_a_negative_call(exes, op, neg, tmp_path):
    ref, _ = SUITES[op]
    testkit.reject(ref, neg)  # the reference rejects it with its check
    attrs, _ = call_args(ref, neg)
    full = ref.reference.normalize_attrs(ref.INFO, attrs)
    metas = {n: (None if m is None else (m[0], tuple(m[1]), m[2] if len(m) > 2 else "ND"))
             for n, m in neg["inputs"].items()}
    real_tiling.write_call_job(ref, neg["product"], full, metas, _outputs(ref, neg), tmp_path / "job")
    result = real_tiling.run_tiling(exes(op, real_tiling.arch_of(ref, neg["product"])), tmp_path / "job")
    assert not result.faults, f"the twin faulted: {result.faults}"
    assert result.status == "tiling" and not result.tilings[0].ok, \
        f"the real tiling accepted what {neg['check']} rejects ({neg['change']})"
