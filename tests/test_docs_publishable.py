"""The generated aclnn documents are publishable (issue #34 item 5): Chinese prose, LaTeX formulas, no internal
ids, no raw enum values, the parameter table of the real documents.

What counts as an English sentence (``english_runs``): three or more consecutive ASCII words (letters, digits,
underscores) separated only by blanks, in the prose of a document: fenced code blocks, inline code spans,
LaTeX (``$$ … $$`` and ``$ … $``), HTML tags and the English expansion of an abbreviation right after it
(``FFN（Feed-Forward Neural network）``, as the real documents write it) are not prose. Two-word names such as
product names (``Atlas A3``) and ``batch size`` are not sentences.
"""
from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path

import pytest

from opgen.frontend.loader import load
from opgen.core.diagnostics import Diagnostics
from opgen.lower.latex import Latex, dtype_attrs, product_flags

from .conftest import ROOT

GENERATED = ROOT / "generated"
SPECS = sorted((ROOT / "specs").glob("*.spec"))
REAL_DOCS = ROOT.parent / "shared" / "cann" / "docs" / "current"

_FENCE = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)
_DISPLAY = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE = re.compile(r"\$[^$\n]+\$")
_CODE = re.compile(r"`[^`\n]*`")
_TAG = re.compile(r"<[^>\n]+>")
_ABBREVIATION = re.compile(r"[A-Z]{2,}（[^）]*）")
_RUN = re.compile(r"[A-Za-z0-9_]+(?:[ \t]+[A-Za-z0-9_]+){2,}")


def prose(text: str) -> str:
    for pattern in (_FENCE, _DISPLAY, _INLINE, _CODE, _TAG, _ABBREVIATION):
        text = pattern.sub(" ", text)
    return text


def english_runs(text: str) -> list[str]:
    return _RUN.findall(prose(text))


def _docs(op) -> dict[str, str]:
    folder = GENERATED / op.snake_name / "docs"
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))}


def test_the_detector_catches_english_and_spares_what_is_not_prose():
    assert english_runs("quantMode 3/4 default to FLOAT8_E4M3FN outputs") == ["4 default to FLOAT8_E4M3FN outputs"]
    assert english_runs("null when commAlg is hierarchy") == ["null when commAlg is hierarchy"]
    assert english_runs("| x | 输入 | Atlas A3 训练系列产品 | EP（Expert Parallelism）域 | batch size大小 |") == []
    assert english_runs("FFN（Feed-Forward Neural network）的token数据") == []
    assert english_runs("`opgen build specs/a.spec` $\\mathrm{a} \\in \\text{one of these}$") == []
    assert english_runs("```cpp\nint main() { return a b c; }\n```\n") == []


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_generated_docs_are_publishable(spec: Path):
    op = load(spec, Diagnostics())
    docs = _docs(op)
    assert docs, f"{spec.name}: no generated document"
    views = [op.view(p.soc) for p in op.products]
    check_ids = {c.id for v in views for c in v.checks}
    flags = {n for v in views for n in product_flags(v.lets)} | set(product_flags(op.lets))
    enum_attrs = dtype_attrs(op)
    for name, text in docs.items():
        assert english_runs(text) == [], name
        # no diagnostic code, no check id (`op.expertIds.2`, `window.ep`), no generator switch
        assert re.findall(r"\bE\d{3}\b", text) == [], name
        assert [i for i in check_ids if re.search(rf"(?<![\w.]){re.escape(i)}(?![\w.])", text)] == [], name
        assert [f for f in flags if re.search(rf"\b{f}\b", text)] == [], name
        # a dtype attribute is never shown against a ge::DataType number (`yDtype = 28`)
        for a in enum_attrs:
            assert not re.search(rf"{a}\W{{0,12}}(=|\\neq|!=|默认值为)\W{{0,3}}\d", text), (name, a)
        assert "## 调用示例" in text and "GetWorkspaceSize(" in text, name


@functools.lru_cache(maxsize=1)
def _expr_parser():
    from lark import Lark
    grammar = resources.files("opgen.lang").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", start="expr")


def parse_expr(text: str):
    """One spec expression (the front end's own builder over the grammar's ``expr`` rule)."""
    from opgen.frontend.analyze import _Builder
    return _Builder("t.spec", Diagnostics()).expr(_expr_parser().parse(text))


@functools.lru_cache(maxsize=None)
def _op(spec: str):
    return load(ROOT / "specs" / spec, Diagnostics())


def _latex(spec: str, soc: str | None, text: str) -> str:
    op = _op(spec)
    return Latex(op.view(soc) if soc else op)(parse_expr(text))


@pytest.mark.parametrize("text, want", [
    ("moeExpertNum // (epWorldSize - sharedExpertRankNum)",
     r"\left\lfloor \frac{\mathrm{moeExpertNum}}{\mathrm{epWorldSize} - \mathrm{sharedExpertRankNum}} \right\rfloor"),
    ("ceil_div(H, 128)", r"\left\lceil \frac{\mathrm{H}}{128} \right\rceil"),
    ("align(ceil_div(H, 32), 2)",
     r"\left\lceil \frac{\left\lceil \frac{\mathrm{H}}{32} \right\rceil}{2} \right\rceil \times 2"),
    ("if globalBS == 0 then BS else globalBS // epWorldSize",
     r"\begin{cases}\mathrm{BS}, & \mathrm{globalBS} = 0 \\ \left\lfloor \frac{\mathrm{globalBS}}"
     r"{\mathrm{epWorldSize}} \right\rfloor, & \text{否则}\end{cases}"),
    ("HCCL_BUFFSIZE * MB >= 2 * (K + sharedExpertNum) * Align512(2 * H)",
     r"\mathrm{HCCL\_BUFFSIZE} \times \mathrm{MB} \geq 2 \times \left(\mathrm{K} + \mathrm{sharedExpertNum}\right)"
     r" \times \mathrm{Align512}(2 \times \mathrm{H})"),
    ("epWorldSize in [16, 256] and epWorldSize % 16 == 0",
     r"\mathrm{epWorldSize} \in [16, 256] \land \mathrm{epWorldSize} \bmod 16 = 0"),
    ('commAlg in {"", "fullmesh_v1"}', r'\mathrm{commAlg} \in \{\text{""}, \text{"fullmesh\_v1"}\}'),
    ("not present(scalesOptional) or quantMode != 0",
     r"\lnot \mathrm{present}(\mathrm{scalesOptional}) \lor \mathrm{quantMode} \neq 0"),
    ("cast(xf * ds, dtype(expandXOut), round=rint, sat=true)",
     r"\mathrm{cast}_{\mathrm{rint},\mathrm{sat}}(\mathrm{xf} \times \mathrm{ds}, \mathrm{dtype}(\mathrm{expandXOut}))"),
    ("qmax(dtype(expandXOut)) / reduce_max(abs(xf))",
     r"\frac{\mathrm{qmax}(\mathrm{dtype}(\mathrm{expandXOut}))}{\mathrm{reduce\_max}(\lvert \mathrm{xf} \rvert)}"),
    ("a - (b - c)", r"\mathrm{a} - \left(\mathrm{b} - \mathrm{c}\right)"),
    ("exp(a1 - m) / reduce_sum(xf * xf)",
     r"\frac{e^{\mathrm{a1} - \mathrm{m}}}{\sum_{h} \left( \mathrm{xf} \times \mathrm{xf} \right)}"),
])
def test_latex_lowering(text, want):
    assert _latex("dispatch_v2.spec", None, text) == want


def test_latex_folds_product_switches_and_names_dtype_enums():
    # castsUnquantised is false on A3 and true on Ascend 950: the condition folds away or to false
    assert _latex("dispatch_v2.spec", "ascend910_93", "quantMode == 0 and not castsUnquantised") == \
        r"\mathrm{quantMode} = 0"
    assert _latex("dispatch_v2.spec", "ascend950", "quantMode == 0 and not castsUnquantised") == r"\mathrm{false}"
    assert _latex("dispatch_v2.spec", "ascend950", "if fp8Quant then FLOAT8_E4M3FN else INT8") == \
        r"\mathrm{FLOAT8\_E4M3FN}"
    # the window layout's generated lets are written out: A3 keeps its status area in windowsExp (none of
    # HCCL_BUFFSIZE), two data halves, 512-aligned; the combine area counts sharedExpertNum as the real tiling
    # reads it (0 without shared-expert ranks)
    assert _latex("combine_v2.spec", "ascend910_93", "win_need <= win_half") == (
        r"\mathrm{maxBS} \times \left(\mathrm{K} + \left(\begin{cases}0, & \mathrm{sharedExpertRankNum} = 0 \\ "
        r"\mathrm{sharedExpertNum}, & \text{否则}\end{cases}\right)\right) \times \mathrm{Align512}(2 \times "
        r"\mathrm{H}) \leq \left\lfloor \frac{\left\lfloor \frac{\mathrm{HCCL\_BUFFSIZE} \times \mathrm{MB}}{2} "
        r"\right\rfloor}{512} \right\rfloor \times 512")
    # yDtype carries a ge::DataType: 28 is DT_UNDEFINED (graph/types.h)
    assert _latex("dispatch_v2.spec", "ascend950", "yDtype != 28") == r"\mathrm{yDtype} \neq \mathrm{DT\_UNDEFINED}"


def _real_row(doc: str, name: str) -> list[str]:
    text = (REAL_DOCS / doc).read_text(encoding="utf-8")
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr, re.S)]
        if cells[0] == name:
            return cells
    raise KeyError(name)


def _plain(cell: str) -> str:
    """A generated cell's LaTeX as the real documents' code text: (\\mathrm{BS}, \\mathrm{K}) -> (BS, K)."""
    return re.sub(r"\\mathrm\{([^}]*)\}", r"\1", cell).strip("$")


@pytest.mark.skipif(not REAL_DOCS.is_dir(), reason="the real documents (../shared/cann/docs/current) are absent")
def test_a_parameter_row_is_the_real_documents():
    """expertIds of aclnnMoeDistributeCombineV4: all eight columns as the real document writes them."""
    real = _real_row("aclnnMoeDistributeCombineV4.md", "expertIds")
    assert real == ["expertIds", "输入", "每个token的topK个专家索引。", "要求2D Tensor。", "INT32", "ND", "(BS, K)", "√"]
    text = (GENERATED / "moe_distribute_combine_v2" / "docs" / "aclnnMoeDistributeCombineV4.md").read_text(
        encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| expertIds | 输入 |"))
    cells = [c.strip() for c in row.strip().strip("|").split(" | ")]
    assert cells[:6] + [_plain(cells[6]), cells[7]] == real
    assert text.count("| 参数名 | 输入/输出 | 描述 | 使用说明 | 数据类型 | 数据格式 | 维度(shape) | 非连续Tensor |") == 1


def test_call_example_takes_the_example_files_world():
    """DispatchV4's 调用示例: the world of examples/test_aclnn_moe_distribute_dispatch_v2.cpp (the smallest world of
    the suite's positive cases whose ranks share their shapes: A2, BS 4, H 32, K 1, 2 ranks, moeExpertNum 2, no TP);
    its outputs as the reference infers them for rank 0: A = globalBSReal * min(localMoeExpertNum, K) = 8 * 1,
    assistInfoForCombineOut A * 128, epRecvCountsOut on A2 epWorldSize * localMoeExpertNum + globalBSReal * 2 * K *
    serverNum = 2 + 16 = 18."""
    from opgen.emit.doc_example import example_context
    from opgen.emit.plans import Plans
    op = _op("dispatch_v2.spec")
    entry = next(e for e in op.entries if e.name == "aclnnMoeDistributeDispatchV4")
    ex = example_context(op, entry, Plans(op))
    assert (ex["case"], ex["world"], ex["header"]) == (
        "ascend910b-q0-bs4-h32-k1-w2", 2, "aclnnop/aclnn_moe_distribute_dispatch_v4.h")
    assert [(t["name"], t["acl"], t["shape"]) for t in ex["tensors"]] == [
        ("x", "ACL_FLOAT16", "4, 32"), ("expertIds", "ACL_INT32", "4, 1"), ("expandXOut", "ACL_FLOAT16", "8, 32"),
        ("dynamicScalesOut", "ACL_FLOAT", "8"), ("assistInfoForCombineOut", "ACL_INT32", "1024"),
        ("expertTokenNumsOut", "ACL_INT64", "1"), ("epRecvCountsOut", "ACL_INT32", "18"),
        ("tpRecvCountsOut", "ACL_INT32", "0"), ("expandScalesOut", "ACL_FLOAT", "8")]
    assert ex["nulls"] == ["scalesOptional", "xActiveMaskOptional", "expertScalesOptional", "elasticInfoOptional",
                           "performanceInfoOptional"]
    scalars = {s["decl"]: s["value"] for s in ex["scalars"]}
    assert scalars["const char *groupEp"] == "group" and scalars["int64_t epRankId"] == "rank"
    assert scalars["int64_t tpWorldSize"] == "0" and scalars["const char *commAlg"] == '""'
    assert ex["args"] == [p.c_name for p in entry.params]


def test_npu_commands_span_servers_where_the_world_does():
    """An Atlas A2 server holds 8 NPUs: the 16-rank DispatchV2 world is one torchrun per server (2 nodes of 8), the
    2-rank world one standalone torchrun; no command starts more processes on a node than its server has NPUs."""
    doc = (GENERATED / "moe_distribute_dispatch_v2" / "docs" / "aclnnMoeDistributeDispatchV2.md").read_text()
    rows = {tuple(c.strip() for c in line.split("|")[1:4]): line for line in doc.splitlines()
            if line.startswith("| ascend910b |")}
    assert "`torchrun --nnodes=2 --node-rank=<i> --nproc-per-node=8 --rdzv-backend=c10d " \
           "--rdzv-endpoint=<主节点IP>:29500 -m opgen.harness.testnpu generated/moe_distribute_dispatch_v2 " \
           "--world-size 16`" in rows[("ascend910b", "16", "2")]
    assert "`torchrun --standalone --nproc-per-node=2 " in rows[("ascend910b", "2", "1")]
    for line in rows.values():
        assert not re.search(r"--nproc-per-node=(9|[1-9]\d)", line), line
