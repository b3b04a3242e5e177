"""`opgen products`: the resolved per-product matrix of DispatchV2, with inheritance markers."""
from __future__ import annotations

import json

import pytest

from opgen.cli import main
from opgen.tools.products import product_matrix

from .conftest import ROOT

V2 = ROOT / "specs" / "dispatch_v2.spec"
SOCS = ("ascend910b", "ascend910_93", "ascend950")


@pytest.fixture(scope="module")
def matrix(dispatch_v2):
    return {(r.section, r.label): r for r in product_matrix(dispatch_v2)}


def cells(matrix, op, section, label):
    return tuple(matrix[(section, label)].cell(op, s) for s in SOCS)


def test_quant_modes(matrix, dispatch_v2):
    assert cells(matrix, dispatch_v2, "quant", "quant modes (quantMode)") == \
        ("0, 2 (own)", "0, 2 (own)", "0, 1, 2, 3, 4 (own)")


def test_opdef_configs(matrix, dispatch_v2):
    """Each product's kernel entry and jitCompile.flag, with where they come from (the default: unmarked)."""
    assert cells(matrix, dispatch_v2, "product", "kernel entry") == (
        "op_kernel/arch22/moe_distribute_dispatch_v2_a2.cpp (own)",
        "op_kernel/arch22/moe_distribute_dispatch_v2_a3.cpp (own)",
        "op_kernel/arch35/moe_distribute_dispatch_v2_apt.cpp (own)")
    assert cells(matrix, dispatch_v2, "product", "jitCompile.flag") == \
        ("static_false (own)", "static_true", "static_true")


def test_attribute_domains_inherited_and_overridden(matrix, dispatch_v2):
    assert cells(matrix, dispatch_v2, "attributes", "commAlg") == (
        '{"", "fullmesh", "hierarchy"} (own)',
        '{"", "fullmesh_v1", "fullmesh_v2", "hierarchy"} (own)',
        '{"", "fullmesh_v1", "fullmesh_v2"} (own)')
    assert cells(matrix, dispatch_v2, "attributes", "epWorldSize") == ("—", "[2, 768] (own)", "[2, 1024] (own)")
    # TP域通信当前版本不再支持: the op's own domain, on every product
    assert cells(matrix, dispatch_v2, "attributes", "tpWorldSize") == ("{0, 1}",) * 3
    assert cells(matrix, dispatch_v2, "attributes", "sharedExpertNum") == (
        "{0, 1} (own)", "[0, 4] (own)", "[0, 4] (from ascend910_93)")
    assert cells(matrix, dispatch_v2, "attributes", "groupEp") == ("length [1, 128)",) * 3


def test_tensors(matrix, dispatch_v2):
    assert cells(matrix, dispatch_v2, "inputs", "x") == (
        "FLOAT16, BFLOAT16 (own)", "FLOAT16, BFLOAT16 (own)",
        "FLOAT16, BFLOAT16, FLOAT8_E5M2, FLOAT8_E4M3FN, HIFLOAT8, FLOAT4_E2M1, FLOAT4_E1M2 (own)")
    assert cells(matrix, dispatch_v2, "inputs", "elasticInfoOptional") == (
        "unsupported, must be null (own)", "unsupported, must be null (own)",
        "unsupported, must be null (from ascend910_93)")
    assert cells(matrix, dispatch_v2, "inputs", "performanceInfoOptional")[0] == "INT64"
    assert cells(matrix, dispatch_v2, "outputs", "dynamicScalesOut") == (
        "FLOAT32 (own)", "FLOAT32 (own)", "FLOAT32, FLOAT8_E8M0 (own)")
    assert cells(matrix, dispatch_v2, "outputs", "epRecvCountsOut")[0] == \
        "INT32; shape (moeExpertNum + 2 * globalBSReal * K * serverNum,) (own)"
    # the current documents: supported on Ascend 950 too (the seed era: 不支持expandScalesOut)
    assert cells(matrix, dispatch_v2, "outputs", "expandScalesOut") == ("FLOAT32",) * 3


def test_shape_limits_from_range_checks(matrix, dispatch_v2):
    assert cells(matrix, dispatch_v2, "shape limits", "BS") == (
        'BS in (0, 256] when commAlg != "hierarchy" (own); BS in (0, 512] when commAlg == "hierarchy" (own)',
        'BS in [1, if commAlg == "fullmesh_v2" or commAlg == "hierarchy" then 256 else 512] (own)',
        "BS in [1, 512] (own)")
    assert cells(matrix, dispatch_v2, "shape limits", "H") == (
        "H in (0, 10240] and H % 32 == 0 (own)",
        'H in [1024, 8192] when commAlg != "hierarchy" (own); H in [1024, 7168] and H % 32 == 0 when commAlg == "hierarchy" (own)',
        'H in [1024, 8192] when commAlg != "hierarchy" (from ascend910_93); H in [1024, 7168] and H % 32 == 0 when commAlg == "hierarchy" (from ascend910_93)')
    assert cells(matrix, dispatch_v2, "shape limits", "K") == ("K in (0, 16]",) * 3


def test_buffers_and_derived_quantities(matrix, dispatch_v2):
    assert cells(matrix, dispatch_v2, "buffers", "window_min") == (
        "—", "HCCL_BUFFSIZE >= 2 * MB (own)", "HCCL_BUFFSIZE >= 2 * MB (from ascend910_93)")
    assert cells(matrix, dispatch_v2, "buffers", "hierarchy_window")[0].endswith('when commAlg == "hierarchy" (own)')
    assert cells(matrix, dispatch_v2, "derived quantities", "fp8Quant") == ("false", "false", "true (own)")
    assert cells(matrix, dispatch_v2, "product", "extends") == ("—", "—", "ascend910_93")
    assert cells(matrix, dispatch_v2, "product", "pairs with")[2] == \
        "MoeDistributeCombineV2, MoeDistributeCombineAddRmsNorm (from ascend910_93)"


def test_cli_text_table(capsys):
    assert main(["products", str(V2)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "MoeDistributeDispatchV2 (version 2): 3 products"
    header = next(l for l in lines if l.strip().startswith("ascend910b"))
    assert header.split() == list(SOCS)
    row = next(l for l in lines if l.startswith("  quant modes"))
    # columns line up: each product column starts where its header does
    assert row[header.index("ascend910_93"):].startswith("0, 2 (own)  ")
    assert row[header.index("ascend950"):] == "0, 1, 2, 3, 4 (own)"


def test_cli_json_and_md(capsys):
    assert main(["products", str(V2), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["soc"] for p in doc["products"]] == list(SOCS)
    row = next(r for r in doc["rows"] if r["label"] == "moeExpertNum")
    assert row["cells"]["ascend950"] == {"text": "(0, 1024] (from ascend910_93)",
                                         "parts": [{"text": "(0, 1024]", "from": "ascend910_93"}]}
    assert main(["products", str(V2), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| attributes | ascend910b | ascend910_93 | ascend950 |" in md
    assert '| commAlg | {"", "fullmesh", "hierarchy"} (own) |' in md


def test_cli_spec_error(tmp_path, capsys):
    bad = tmp_path / "bad.spec"
    bad.write_text(V2.read_text(encoding="utf-8").replace("attr epWorldSize: int64", "attr epWorldSize: int46"),
                   encoding="utf-8")
    assert main(["products", str(bad)]) == 1
    assert "error[E113]" in capsys.readouterr().err
