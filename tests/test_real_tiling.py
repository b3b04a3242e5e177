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

from opgen.core.diagnostics import Diagnostics
from opgen.frontend.loader import load
from opgen.harness import testkit, testworld
from opgen.runtime import OpError
from opgen.runtime.calls import call_args
from opgen.sim import real_tiling

from .conftest import ROOT

SHARED_CANN = ROOT.parent / "shared" / "cann"
GENERATED = ROOT / "generated"
OPS = {"MoeDistributeDispatchV2": "moe_distribute_dispatch_v2", "MoeDistributeCombineV2": "moe_distribute_combine_v2",
       "MoeDistributeCombineAddRmsNorm": "moe_distribute_combine_add_rms_norm"}
SPECS = {"MoeDistributeDispatchV2": "dispatch_v2.spec", "MoeDistributeCombineV2": "combine_v2.spec",
         "MoeDistributeCombineAddRmsNorm": "combine_add_rms_norm.spec"}
NEGATIVES_PER_PRODUCT = 3
# The platform's vector cores: an Atlas A2 / A3 die's 48 (24 AI cores of two vector cores each). The real layered
# (hierarchy) tilings refuse fewer than 17 ("Layered should use aiv num greater than 16 and 2 * serverNum"), so
# the twin's default of 4 would reject every hierarchy world for a reason no device has.
AIV = 48
TILING_CHECKS = ("domain.", "op.", "quant_mode.", "window.")

pytestmark = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(),
                       reason="../shared/cann not found: the real op tilings come from its ops-transformer.tar.gz"),
    pytest.mark.skipif(shutil.which("g++") is None or shutil.which("tar") is None,
                       reason="the real op tilings need g++ and tar"),
]

# Positive worlds of the generated suites the real tiling rejects: (op, case id) -> the real code's reason.  None
# today: each one found was fixed on the generated side (specs/dispatch_v2.spec, specs/combine_v2.spec, with the
# real code cited there).
KNOWN: dict = {}

# Negative calls the real tiling accepts: none but the checks a product marks `narrower` (the documents' domain,
# narrower than the op's), which test_the_real_tiling_accepts_a_documented_narrowing holds to the code's range.
KNOWN_NEG: dict = {}


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
    return real_tiling.tile(exe, ref, case, testkit.build_world(ref, case), tmp_path / "job", aiv=AIV)


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


def _narrowed(op: str) -> dict:
    """(product, check id) -> the code's range, for each check the op's spec marks ``narrower`` (the documents'
    domain kept where the real op accepts more)."""
    model = load(ROOT / "specs" / SPECS[op], Diagnostics())
    return {(soc, n.check.id): n.mark.accepts for soc, v in model.views.items() for n in v.narrowings}


NARROWED = {op: _narrowed(op) for op in OPS}


def _negatives(op):
    ref, cases = SUITES[op]
    out, count = [], {}
    for neg in cases.NEGATIVE:
        if neg["data_check"] or neg["code"] == 0 or count.get(neg["product"], 0) >= NEGATIVES_PER_PRODUCT:
            continue
        if (neg["product"], neg["check"]) in NARROWED[op]:  # test_the_real_tiling_takes_a_documented_narrowing
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


def _tile_call(exes, op, neg, tmp_path) -> real_tiling.RealTilingResult:
    """The negative call ``neg`` (which the reference rejects with its check) tiled by the real tiling (in the op's
    default environment on the twin's default platform; a kernel-path call in PATH_CALL_WINDOW with that window,
    on the AIV cores a layered tiling asks for)."""
    ref, _ = SUITES[op]
    testkit.reject(ref, neg)  # the reference rejects it with its check
    attrs, _ = call_args(ref, neg)
    full = ref.reference.normalize_attrs(ref.INFO, attrs)
    metas = {n: (None if m is None else (m[0], tuple(m[1]), m[2] if len(m) > 2 else "ND"))
             for n, m in neg["inputs"].items()}
    window = PATH_CALL_WINDOW.get((op, neg["id"]))
    if window is None:
        real_tiling.write_call_job(ref, neg["product"], full, metas, _outputs(ref, neg), tmp_path / "job")
    else:
        real_tiling.write_call_job(ref, neg["product"], full, metas, _outputs(ref, neg), tmp_path / "job",
                                   env=dict(ref.ENV, HCCL_BUFFSIZE=window), aiv=AIV)
    result = real_tiling.run_tiling(exes(op, real_tiling.arch_of(ref, neg["product"])), tmp_path / "job")
    assert not result.faults, f"the twin faulted: {result.faults}"
    return result


# Negative calls of the kernel-path checks (opgen/model/kernel_paths.py: a configuration the generated kernels have
# no path for, rejected with "... not built by opgen") the real tiling accepts, because the real op runs a path opgen
# does not build: (op, case id) -> the real path. Strict: a real tiling that rejects one of them fails the test.
_LAYERED = ("the real {which} tiling accepts commAlg \"hierarchy\" and selects its layered kernel ({code}); opgen "
            "does not build that path and rejects the call")
_A2_LAYERED = ("the real A2 tiling accepts commAlg \"hierarchy\" past one server and selects its layered kernel "
               "({code}); opgen does not build that path and rejects the call")
_MTE_PAST_64 = ("the real arch35 tiling accepts epWorldSize up to 1024 with commAlg \"\" ({code}: "
                "MAX_EP_WORLD_SIZE_V2), though its MTE kernels read windowsIn[] of an HCCL context listing HCCL_MTE_MAX_RANK_NUM = 64 ranks "
                "(mc2/common/op_kernel/moe_distribute_comm_ctx.h); larger worlds are its CCU path (commAlg \"ccu\"), "
                "which opgen does not build: the generated tiling rejects the call")
KNOWN_PATHS = {
    ("MoeDistributeDispatchV2", "ascend910_93-ascend910_93.comm_path"): _LAYERED.format(
        which="A3", code="mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_v2_a3.cpp, "
                         "TILINGKEY_ENABLE_HIERARCHY: MoeDistributeDispatchV2Layered"),
    ("MoeDistributeCombineV2", "ascend910_93-ascend910_93.comm_path"): _LAYERED.format(
        which="A3", code="mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2_a3.cpp, the "
                         "layered kernel of moe_distribute_combine_v2_layered.h"),
    ("MoeDistributeDispatchV2", "ascend910b-ascend910b.commAlg"): _A2_LAYERED.format(
        code="mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2_layered.h"),
    ("MoeDistributeCombineV2", "ascend910b-ascend910b.commAlg"): _A2_LAYERED.format(
        code="mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2_layered.h"),
    ("MoeDistributeDispatchV2", "ascend950-transport.epWorldSize"): _MTE_PAST_64.format(
        code="mc2/moe_distribute_dispatch_v2/op_host/op_tiling/arch35/moe_distribute_dispatch_v2_tiling_arch35.cpp"),
    ("MoeDistributeCombineV2", "ascend950-transport.epWorldSize"): _MTE_PAST_64.format(
        code="mc2/moe_distribute_combine_v2/op_host/op_tiling/arch35/moe_distribute_combine_tiling_arch35.cpp"),
    ("MoeDistributeCombineAddRmsNorm", "ascend950-transport.epWorldSize"): _MTE_PAST_64.format(
        code="mc2/moe_distribute_combine_add_rms_norm/op_host/op_tiling/arch35 (CombineV2's arch35 tiling)"),
}
# A kernel-path check comes before the buffer rules, so its negative call keeps the window of the accepted call it
# changed; the layered path asks more (the A3 hierarchy rule buffer.hierarchy_window: 404MB and up) and more vector
# cores (AIV, above). The real tiling is given the window its path asks for, on AIV cores, so that only the path
# decides: (op, case id) -> HCCL_BUFFSIZE (MB).
PATH_CALL_WINDOW = {("MoeDistributeDispatchV2", "ascend910_93-ascend910_93.comm_path"): 1024,
                    ("MoeDistributeCombineV2", "ascend910_93-ascend910_93.comm_path"): 1024}


def _path_checks(op: str) -> set:
    """(product, check id) of the op's kernel-path checks: the ones rejecting what the generated kernels have no
    path for (opgen/model/kernel_paths.py), each saying it is not built by opgen."""
    model = load(ROOT / "specs" / SPECS[op], Diagnostics())
    return {(soc, c.id) for soc, v in model.views.items() for c in v.checks if "not built by opgen" in c.message}


def _path_negatives(op):
    _, cases = SUITES[op]
    checks = _path_checks(op)
    out = []
    for neg in cases.NEGATIVE:
        if (neg["product"], neg["check"]) in checks:
            reason = KNOWN_PATHS.get((op, neg["id"]))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(op, neg, marks=marks, id=f"{op}-{neg['id']}"))
    return out


def test_every_kernel_path_check_has_a_negative_call():
    """No hollow list: each op's kernel-path checks are compared with the real tiling on a negative call (where one
    can trip: an inherited check the product's domain keeps from tripping is listed unreachable)."""
    for op in OPS:
        _, cases = SUITES[op]
        negs = {(n["product"], n["check"]) for n in cases.NEGATIVE}
        unreachable = {(u["product"], u["check"]) for u in cases.UNREACHABLE}
        assert _path_checks(op) and _path_checks(op) <= negs | unreachable, op
        assert _path_checks(op) & negs, op


@pytest.mark.parametrize("op,neg", [p for op in OPS for p in _negatives(op) + _path_negatives(op)])
def test_the_real_tiling_rejects_a_negative_call(exes, op, neg, tmp_path):
    result = _tile_call(exes, op, neg, tmp_path)
    assert result.status == "tiling" and not result.tilings[0].ok, \
        f"the real tiling accepted what {neg['check']} rejects ({neg['change']}); it logged {result.errors_logged(0)}"


# Negative calls of a narrowed check whose value lies outside the code's range too: (op, case id) -> why.
_CCU = ("commAlg \"ep\" is outside the code's range too: the arch35 tiling takes \"ccu\" besides the documented "
        "values ({fn}: {msg})")
NARROWED_OUTSIDE = {
    ("MoeDistributeDispatchV2", "ascend950-domain.commAlg"): _CCU.format(
        fn="moe_distribute_dispatch_v2_tiling_arch35.cpp MoeDistributeDispatchTilingFuncImpl",
        msg="'Invalid parameter: 'commAlg'... Only 'fullmesh_v1' and 'fullmesh_v2' are supported'"),
    ("MoeDistributeCombineV2", "ascend950-domain.commAlg"): _CCU.format(
        fn="moe_distribute_combine_tiling_arch35.cpp MoeDistributeCombineTilingFuncImpl",
        msg="'only nullptr (or empty char*) or \"ccu\" is supported on this SoC version'"),
}


def _narrowings():
    out = []
    for op in OPS:
        ref, cases = SUITES[op]
        for neg in cases.NEGATIVE:
            if (neg["product"], neg["check"]) in NARROWED[op] and not neg["data_check"]:
                out.append(pytest.param(op, neg, id=f"{op}-{neg['id']}"))
    return out


@pytest.mark.parametrize("op,neg", _narrowings())
def test_the_real_tiling_takes_a_documented_narrowing(exes, op, neg, tmp_path):
    """A check marked `narrower` keeps the documents' domain where the real op accepts more: the real tiling
    accepts its negative call (with no error logged), unless the value is outside the code's range too."""
    result = _tile_call(exes, op, neg, tmp_path)
    accepted = result.status == "ok" and result.tilings[0].ok and not result.errors_logged(0)
    outside = NARROWED_OUTSIDE.get((op, neg["id"]))
    assert accepted == (outside is None), (
        f"{neg['check']} ({neg['change']}): the real tiling {'accepted' if accepted else 'rejected'} it; the mark says "
        f"the code accepts {NARROWED[op][(neg['product'], neg['check'])]}" + (f"; listed outside: {outside}" if outside else ""))


def test_the_real_a3_combine_tiling_logs_a_bad_h_and_tiles_it(exes, tmp_path):
    """A real defect the generated op does not follow: CheckTensorShape (mc2/moe_distribute_combine_v2/op_host/
    op_tiling/moe_distribute_combine_v2_tiling.cpp) is a `bool` function whose failed inner checks
    `return ge::GRAPH_FAILED` (0xFFFFFFFF, i.e. true), so the A3 tiling logs "expandX(H) ... should be in [1024, 8192]"
    and tiles H 1; the documents (H in [1024, 8192]) and the generated op reject it."""
    op = "MoeDistributeCombineV2"
    _, cases = SUITES[op]
    neg = next(n for n in cases.NEGATIVE if n["id"] == "ascend910_93-ascend910_93.expandX")
    assert neg["change"] == "H 1024 -> 1"
    result = _tile_call(exes, op, neg, tmp_path)
    assert result.status == "ok" and result.tilings[0].ok
    errors = result.errors_logged(0)
    assert any("expandX(H)" in e and "should be in [1024, 8192]" in e for e in errors), errors
    assert any("From dispatch's param dim check failed" in e for e in errors), errors


# ---- what the two tilings size alike (#32 compare) ------------------------------------------------------------
# The real workspaces (code, per op and arch folder), SYSTEM_NEED_WORKSPACE (16 MiB) + the user part:
#   DispatchV2 A3 / 950 MTE: 512 * aiv^2 (moe_distribute_dispatch_v2_tiling.cpp:1747, WORKSPACE_ELEMENT_OFFSET)
#   DispatchV2 A2: 1 MiB (arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp:607, USER_WORKSPACE_A2)
#   CombineV2 A3 / 950 MTE: aiv * 10240 (moe_distribute_combine_v2_tiling.cpp:1596, MASK_CALC_NEED_WORKSPACE); the
#   same for CombineAddRmsNorm, whose tiling calls CombineV2's (mc2/moe_distribute_combine_add_rms_norm/op_host/
#   op_tiling/arch22/moe_distribute_combine_add_rms_norm_tiling_a2a3.cpp, arch35/..._tiling_a5.cpp)
#   CombineV2 A2: moeExpertNum * 8 (arch22/moe_distribute_combine_tiling_arch22.cpp:627)
# The generated ones (generated/<op>/op_host/op_tiling/<op>_tiling.cpp, the lines after "userWorkspace"; the
# formula tests/test_sim_tiling.py holds them to): 512 * aiv^2, + aiv * Align32(4 * moeExpertNum) for DispatchV2's
# per-core slot counts, + 64 * (moeExpertNum + epWorldSize) of BatchWrite items on Atlas A2. Only the 512 * aiv^2
# term is the real ops' reason too (DispatchV2 A3/950); the rest is each kernel's own layout, a kernel-protocol
# difference (the kernel issue), not a host decision.
MIB = 1 << 20


def _real_workspace(op: str, product: str, attrs: dict) -> int:
    e = attrs["moeExpertNum"]
    if op == "MoeDistributeDispatchV2":
        return 16 * MIB + (MIB if product == "ascend910b" else 512 * AIV * AIV)
    return 16 * MIB + (e * 8 if product == "ascend910b" else AIV * 10240)


def _generated_workspace(op: str, product: str, attrs: dict) -> int:
    e, w = attrs["moeExpertNum"], attrs["epWorldSize"]
    size = 16 * MIB + 512 * AIV * AIV
    if op == "MoeDistributeDispatchV2":
        size += AIV * -(-e * 4 // 32) * 32
    if product == "ascend910b":
        size += 2 * 32 * (e + w)
    return size


@pytest.mark.parametrize("op,case", [p for p in _params(slow=False) if "hierarchy" not in p.values[1]["id"]])
def test_the_real_and_generated_tilings_size_alike(exes, op, case, tmp_path):
    """Block dim: both tilings launch every vector core (CalcTschBlockDim(aiv, 0, aiv)). Workspace: the real one
    is its code's formula above, exactly; the generated one differs by its kernel's own parts only."""
    result = _tile_world(exes, op, case, tmp_path)
    _check_accepted(result, case)
    attrs = case["attrs"]  # moeExpertNum and epWorldSize: required, the same on every rank
    real = _real_workspace(op, case["product"], attrs)
    for r, t in result.tilings.items():
        assert t.block_dim == AIV, f"rank {r}"
        assert t.workspace == real, f"rank {r}: the real workspace {t.workspace}, its code's formula {real}"
    diff = _generated_workspace(op, case["product"], attrs) - real
    if op == "MoeDistributeDispatchV2" and case["product"] != "ascend910b":
        # the shared reason matches: only the generated kernel's per-core slot counts are added
        assert diff == AIV * -(-attrs["moeExpertNum"] * 4 // 32) * 32
    else:
        assert diff != 0  # a layout of the generated kernel's own (the README's table)
