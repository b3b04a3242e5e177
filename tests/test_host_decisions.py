"""Host decisions as the real ops make them (issue 36), in the generated reference and the C++ check core.

Each call below is one the real tiling decides (the source is cited at each test); the expected verdict is
written here, and both validators must reach it: ``validate(..., all_errors=True)`` of the committed
reference and the check core compiled with the committed suite's driver.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from opgen.harness import testkit
from opgen.harness.testworld import meta

from .conftest import ROOT

GENERATED = ROOT / "generated"
A2, A3, A950 = "ascend910b", "ascend910_93", "ascend950"
MB = 1024 * 1024


def _module(snake: str, name: str):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{snake}.{name}")


class Both:
    """One op's reference and its check core; ``ids`` runs calls through both and returns their verdicts."""

    def __init__(self, snake: str, work):
        self.ref = _module(snake, "reference")
        cases = _module(snake, "tests.cases")
        try:
            self.core = testkit.CheckCore.build(GENERATED / snake, snake, cases.FIELDS, cases.OUTPUTS, work,
                                                cases.SIZE_FNS)
        except FileNotFoundError as err:
            pytest.skip(f"no C++ compiler here: {err}")

    def ids(self, soc: str, inputs: dict, attrs: dict, env: dict | None = None, out_dtypes: dict | None = None,
            out_shapes: dict | None = None, out_formats: dict | None = None) -> tuple[list[str], str]:
        """(the ids of every check the reference rejects the call with, the check core's first failing id)."""
        metas = {n: meta(m) for n, m in inputs.items()}
        errors = self.ref.validate(metas, dict(attrs, **(env or {})), soc, out_dtypes, all_errors=True,
                                   out_shapes=out_shapes, out_formats=out_formats)
        py = [e.message.rsplit("[", 1)[-1].rstrip("]") for e in errors]
        full = self.ref.reference.normalize_attrs(self.ref.INFO, attrs)
        full.update(self.ref.ENV)
        full.update(env or {})
        line = self.core.encode(inputs, full, out_dtypes or {}, out_shapes, out_formats)
        (got,) = self.core.run(soc, [line])
        return py, got["id"]


@pytest.fixture(scope="module")
def dispatch(tmp_path_factory):
    return Both("moe_distribute_dispatch_v2", tmp_path_factory.mktemp("dispatch"))


@pytest.fixture(scope="module")
def combine(tmp_path_factory):
    return Both("moe_distribute_combine_v2", tmp_path_factory.mktemp("combine"))


@pytest.fixture(scope="module")
def teardown(tmp_path_factory):
    return Both("moe_distribute_dispatch_teardown", tmp_path_factory.mktemp("teardown"))


DISPATCH = ({"x": ("FLOAT16", (4, 1024)), "expertIds": ("INT32", (4, 2))},
            {"groupEp": "ep", "epWorldSize": 2, "epRankId": 0, "moeExpertNum": 2})


# ---- output formats ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("soc", [A2, A3, A950])
def test_dispatch_output_formats_are_checked(dispatch, soc):
    """code: moe_distribute_dispatch_v2_tiling.cpp CheckTensorFormat (A3/950) rejects a FRACTAL_NZ output with a
    tiling failure, ND passes. A2: the documents' 数据格式 column (ND) decides; the arch22 tiling reads no format,
    so the check is the spec's declaration, as for the inputs."""
    inputs, attrs = DISPATCH
    assert dispatch.ids(soc, inputs, attrs, out_formats={"expandXOut": "ND"}) == ([], "")
    for out in ("expandXOut", "assistInfoForCombineOut", "epRecvCountsOut"):
        assert dispatch.ids(soc, inputs, attrs, out_formats={out: "FRACTAL_NZ"}) == ([f"format.{out}"],
                                                                                      f"format.{out}")


@pytest.mark.parametrize("soc", [A3, A950])
def test_combine_output_format_is_checked(combine, soc):
    """code: moe_distribute_combine_v2_tiling.cpp CheckTensorFormat: "x" (the output) not FRACTAL_NZ."""
    inputs, attrs = COMBINE_A3
    assert combine.ids(soc, inputs, attrs, out_formats={"xOut": "FRACTAL_NZ"}) == (["format.xOut"], "format.xOut")
    assert combine.ids(soc, inputs, attrs, out_formats={"xOut": "ND"}) == ([], "")


# ---- DispatchV2 tpRecvCountsOut ---------------------------------------------------------------------------

@pytest.mark.parametrize("soc", [A2, A3, A950])
def test_tp_recv_counts_takes_the_one_element_buffer_callers_pass(dispatch, soc):
    """code: the A3/950 tiling checks only that tpRecvCounts is 1-D (moe_distribute_dispatch_v2_tiling.cpp
    CheckTensorDim), the A2 tiling never reads it; callers pass (1,) with tpWorldSize 0."""
    inputs, attrs = DISPATCH
    assert dispatch.ids(soc, inputs, attrs, out_shapes={"tpRecvCountsOut": (1,)}) == ([], "")
    assert dispatch.ids(soc, inputs, attrs, out_shapes={"tpRecvCountsOut": (0,)}) == ([], "")
    assert dispatch.ids(soc, inputs, attrs, out_shapes={"tpRecvCountsOut": (1, 1)}) == (
        ["shape.tpRecvCountsOut"], "shape.tpRecvCountsOut")
    # the inferred shape stays the real infershape's (tpWorldSize,)
    metas = {n: meta(m) for n, m in inputs.items()}
    assert dispatch.ref.infer(metas, dict(attrs, tpWorldSize=1), soc)["tpRecvCountsOut"][0] == (1,)


# ---- CombineV2 ---------------------------------------------------------------------------------------------

COMBINE_A2 = ({"expandX": ("FLOAT16", (4, 32)), "expertIds": ("INT32", (2, 1)),
               "assistInfoForCombine": ("INT32", (512,)), "epSendCounts": ("INT32", (10,)),
               "expertScales": ("FLOAT32", (2, 1))},
              {"groupEp": "ep", "epWorldSize": 2, "epRankId": 0, "moeExpertNum": 2})


COMBINE_A3 = ({"expandX": ("FLOAT16", (4, 1024)), "expertIds": ("INT32", (2, 2)),
               "assistInfoForCombine": ("INT32", (512,)), "epSendCounts": ("INT32", (2,)),
               "expertScales": ("FLOAT32", (2, 2))},
              {"groupEp": "ep", "epWorldSize": 2, "epRankId": 0, "moeExpertNum": 2})


def _hierarchy(e: int, bs: int, h: int, k: int, w: int = 16) -> tuple[dict, dict]:
    """An A3 hierarchy call on a MoE rank: every rank BS tokens, so maxBS = BS."""
    local = e // w
    a = bs * w * min(local, k)
    inputs = {"expandX": ("BFLOAT16", (a, h)), "expertIds": ("INT32", (bs, k)),
              "assistInfoForCombine": ("INT32", (a * 128,)),
              # the layered meta area after the counts (CheckSendCountTensorShape, isLayered; its k is a bool: 1)
              "epSendCounts": ("INT32", (w * local + bs * w * 2 * w // 8,)),
              "expertScales": ("FLOAT32", (bs, k)), "expandScalesOptional": ("FLOAT32", (a,))}
    return inputs, {"groupEp": "ep", "epWorldSize": w, "epRankId": 0, "moeExpertNum": e, "commAlg": "hierarchy"}


@pytest.mark.parametrize("e, bs, h, k, least_mb", [
    # moeExpertNum * maxBS * (2H + (3 * (K + 7) / 8 * 8) * 4 + 64) + 404MB, "/" C integer division
    (16, 2, 7168, 8, 405),        # 16 * 2 * 14560 = 465920 B: 404MB is 455 KiB short
    (512, 256, 7168, 8, 2224),    # 131072 * 14560 B = 1820MB exactly; 3 * Align8(K) would give 2216MB
    (512, 256, 4096, 6, 1452),    # 131072 * (8192 + 39 / 8 * 8 * 4 = 128, + 64) = 1048MB, + 404
])
def test_combine_a3_hierarchy_window(combine, e, bs, h, k, least_mb):
    """doc: aclnnMoeDistributeCombineV4.md 环境变量约束 (A3, commAlg "hierarchy"); code: moe_distribute_check_win_
    size.h CheckActualWinSize (isLayered) against the whole HCCL_BUFFSIZE."""
    need = e * bs * (2 * h + (3 * (k + 7) // 8 * 8) * 4 + 64) + 404 * MB
    assert (least_mb - 1) * MB < need <= least_mb * MB
    inputs, attrs = _hierarchy(e, bs, h, k)
    # the generated op rejects hierarchy first (ascend910_93.comm_path: the layered template is not built by opgen,
    # tests/test_kernel_paths.py); the documents' window rule after it is still checked
    no_path = "ascend910_93.comm_path"
    assert combine.ids(A3, inputs, attrs, env={"HCCL_BUFFSIZE": least_mb}) == ([no_path], no_path)
    assert combine.ids(A3, inputs, attrs, env={"HCCL_BUFFSIZE": least_mb - 1}) == (
        [no_path, "buffer.hierarchy_window"], no_path)


def test_combine_a3_takes_performance_info(combine):
    """doc: aclnnMoeDistributeCombineV4.md (A3): performanceInfoOptional 1-D (epWorldSize,), int64, ND; not with
    hierarchy. code: moe_distribute_combine_v2_tiling.cpp (dim0 == epWorldSize; CheckCommAlgAttrs)."""
    inputs, attrs = COMBINE_A3
    for soc in (A3, A950):
        assert combine.ids(soc, dict(inputs, performanceInfoOptional=("INT64", (2,))), attrs) == ([], "")
        assert combine.ids(soc, dict(inputs, performanceInfoOptional=("INT64", (3,))), attrs) == (
            ["shape.performanceInfoOptional"], "shape.performanceInfoOptional")
    h_inputs, h_attrs = _hierarchy(16, 2, 1024, 2)
    py, cpp = combine.ids(A3, dict(h_inputs, performanceInfoOptional=("INT64", (16,))), h_attrs,
                          env={"HCCL_BUFFSIZE": 405})
    assert (py, cpp) == (["ascend910_93.performanceInfoOptional", "ascend910_93.comm_path"],
                         "ascend910_93.performanceInfoOptional")


def test_combine_a2_hierarchy_does_not_forbid_performance_info(combine):
    """doc: the A2 items of aclnnMoeDistributeCombineV4.md limit hierarchy without naming performanceInfo; code:
    op_tiling/arch22 reads no such rule. (A2 hierarchy itself is refused: the generated kernels lack it.)"""
    inputs, attrs = COMBINE_A2
    call = dict(inputs, performanceInfoOptional=("INT64", (2,)))
    py, cpp = combine.ids(A2, call, dict(attrs, commAlg="hierarchy"))
    assert not any("performanceInfo" in i for i in py), py
    assert "performanceInfo" not in cpp
    assert combine.ids(A2, call, attrs) == ([], "")


# ---- Atlas A2: the env variables that select the layered template ------------------------------------------

LAYERED_ENV = {"HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "0"}
ENV_LAYERED_MESSAGE = ('"fullmesh", or "" without HCCL_INTRA_PCIE_ENABLE=1 and HCCL_INTRA_ROCE_ENABLE=0: with them, '
                       '"" past 8 ranks (epWorldSize > 8, more than one Atlas A2 server) selects the layered '
                       '(hierarchy) template, which is not built by opgen')


def _a2_two_servers(op: str) -> tuple[dict, dict]:
    """An accepted Atlas A2 call of 16 ranks (two servers), one MoE expert per rank, commAlg ""."""
    attrs = {"groupEp": "ep", "epWorldSize": 16, "epRankId": 0, "moeExpertNum": 16}
    if op == "dispatch":
        return {"x": ("FLOAT16", (4, 1024)), "expertIds": ("INT32", (4, 2))}, attrs
    # A = BS * epWorldSize * min(localExpertNum, K) rows; epSendCounts moeExpertNum + 2 * BS * epWorldSize * K *
    # serverNum (globalBS 0)
    return {"expandX": ("FLOAT16", (64, 1024)), "expertIds": ("INT32", (4, 2)),
            "assistInfoForCombine": ("INT32", (64 * 128,)), "epSendCounts": ("INT32", (16 + 2 * 64 * 2 * 2,)),
            "expertScales": ("FLOAT32", (4, 2))}, attrs


@pytest.mark.parametrize("op", ["dispatch", "combine"])
def test_a2_env_selected_hierarchy_is_rejected(op, dispatch, combine):
    """code: mc2/moe_distribute_{dispatch_v2,combine_v2}/op_host/op_tiling/arch22 CheckCommAlg: past 8 ranks,
    commAlg "" with HCCL_INTRA_PCIE_ENABLE "1" and HCCL_INTRA_ROCE_ENABLE "0" runs the layered template, which the
    generated kernels lack (ascend910b.commAlg.2, issue 33); within one server, with "fullmesh", or with either
    variable otherwise, the real op runs fullmesh and the call is accepted."""
    both = dispatch if op == "dispatch" else combine
    inputs, attrs = _a2_two_servers(op)
    rule = "ascend910b.commAlg.2"
    assert both.ids(A2, inputs, attrs) == ([], "")
    assert both.ids(A2, inputs, attrs, env=LAYERED_ENV) == ([rule], rule)
    assert both.ids(A2, inputs, dict(attrs, commAlg="fullmesh"), env=LAYERED_ENV) == ([], "")
    for other in ({"HCCL_INTRA_PCIE_ENABLE": "1"}, {"HCCL_INTRA_ROCE_ENABLE": "0"},
                  {"HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "1"}):
        assert both.ids(A2, inputs, attrs, env=other) == ([], ""), other
    (err,) = both.ref.validate({n: meta(m) for n, m in inputs.items()}, attrs, A2, env=LAYERED_ENV,
                               all_errors=True)
    assert err.message == (f"Parameter commAlg of operator {both.ref.INFO.name} has incorrect value \"\". It should "
                           f"be {ENV_LAYERED_MESSAGE}. [{rule}]")


def test_a2_env_selects_nothing_within_one_server(dispatch):
    """code (arch22 CheckCommAlg): epWorldSize <= 8 returns fullmesh before the env variables are read."""
    inputs, attrs = DISPATCH
    assert dispatch.ids(A2, inputs, attrs, env=LAYERED_ENV) == ([], "")


# ---- DispatchTeardown ------------------------------------------------------------------------------------

@pytest.mark.parametrize("y", ["FLOAT16", "BFLOAT16", "INT8", "HIFLOAT8", "FLOAT8_E5M2", "FLOAT8_E4M3FN"])
def test_teardown_mx_does_not_tie_y_to_fp8(teardown, y):
    """doc: y's dtypes are its list whatever quantMode; code: moe_distribute_dispatch_teardown_tiling_base.cpp
    checks y against the list and only dynamicScalesOut's dtype against quantMode 4 (FP8_E8M0)."""
    inputs = {"x": ("FLOAT16", (8, 4096)), "y": (y, (56, 4608)), "expertIds": ("INT32", (8, 6)),
              "commCmdInfo": ("INT32", (1408,))}
    attrs = {"groupEp": "ep", "epWorldSize": 2, "epRankId": 0, "moeExpertNum": 32, "quantMode": 4, "commType": 2}
    assert teardown.ids(A950, inputs, attrs) == ([], "")
    assert teardown.ids(A950, inputs, attrs, out_dtypes={"dynamicScalesOut": "FLOAT32"}) == (
        ["ascend950.dynamicScalesOut"], "ascend950.dynamicScalesOut")


# ---- documented narrower than the op ---------------------------------------------------------------------

def test_products_show_the_documented_narrowings():
    """The Setup/Teardown "当前仅支持" lists keep the documents' domain, and opgen products says what the code
    accepts, in every format."""
    import json

    from opgen.tools.products import product_matrix, render_json, render_md, render_text
    from .conftest import load_ok
    op = load_ok(ROOT / "specs" / "dispatch_teardown.spec")
    rows = product_matrix(op)
    narrowed = {r.label: r.cell(op, A950) for r in rows if r.section == "documented narrower than the op"}
    src = "mc2/moe_distribute_dispatch_teardown/op_host/op_tiling/moe_distribute_dispatch_teardown_tiling_base.cpp"
    assert narrowed["op.h_current"] == ("documented narrower than the op: H = 4096 or 7168 (the H currently "
                                        f"supported); the code accepts H in [1024, 8192] (code: {src}) (own)")
    assert set(narrowed) == {"op.h_current", "op.bs_current", "op.k_current", "domain.epWorldSize",
                             "domain.moeExpertNum"}
    doc = json.loads(render_json(op, rows))
    cells = [r["cells"][A950]["text"] for r in doc["rows"] if r["section"] == "documented narrower than the op"]
    assert len(cells) == 5 and all("the code accepts" in c for c in cells)
    assert "| documented narrower than the op |" in render_md(op, rows)
    assert "documented narrower than the op" in render_text(op, rows)
    # the checks themselves keep the documents' domain: H 1024 is still refused
    ref = _module("moe_distribute_dispatch_teardown", "reference")
    assert "op.h_current" in [c.id for c in ref.INFO.checks[A950]]


def test_docs_say_where_the_documents_are_narrower():
    text = (GENERATED / "moe_distribute_dispatch_v2" / "docs" / "aclnnMoeDistributeDispatchV2.md").read_text(
        encoding="utf-8")
    assert ("- 文档范围窄于算子实现：commAlg按文档要求满足$\\mathrm{commAlg} \\in \\{\\text{\"\"}, \\text{\"fullmesh\\_v1\"}, "
            "\\text{\"fullmesh\\_v2\"}\\}$；算子实现接受\"\", \"fullmesh_v1\", \"fullmesh_v2\", \"ccu\"（code: "
            "`mc2/moe_distribute_dispatch_v2/op_host/op_tiling/arch35/moe_distribute_dispatch_v2_tiling_arch35.cpp`）。"
            ) in text
