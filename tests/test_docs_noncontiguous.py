"""The 非连续Tensor column of the generated parameter tables is the real documents' column.

The real documents (../shared/cann/docs/current/aclnn*.md) write their parameter tables in HTML; the column is
the last one, headed 非连续Tensor (非连续 in the CombineAddRmsNorm documents), √ where the API takes the tensor
non-contiguous, - elsewhere (attributes, workspaceSize, executor, and some tensors).  The specs say it per tensor
(`noncontiguous`); the generated documents render it.  Every row of every such table of a real document is
compared with the row of the same parameter in the generated document of the same name; where they differ, the
difference is listed below with its reason, and any other difference, or a listed one that no longer occurs, fails.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT, load_ok, load_src

REAL_DOCS = ROOT.parent / "shared" / "cann" / "docs" / "current"
GENERATED = ROOT / "generated"
HEADS = ("非连续Tensor", "非连续")

# The same tensor, one value per op: the spec declares it once, so a document that says otherwise for it than its
# op's other documents differs.
DIFFERENCES = {
    # DispatchV3 / DispatchV4 (the same op's later entry points) and every other Dispatch document write √
    ("aclnnMoeDistributeDispatchV2.md", "x"): ("-", "√", "V3 / V4 of the same op say √"),
    ("aclnnMoeDistributeDispatchV2.md", "expertIds"): ("-", "√", "V3 / V4 of the same op say √"),
    # an attribute: a row of an int64 scalar cannot take a tensor's non-contiguous layout (V3 / V4 say -)
    ("aclnnMoeDistributeDispatchV2.md", "expertTokenNumsType"): ("√", "-", "an int64 attribute; V3 / V4 say -"),
    # a misspelt row (None: the generated document has no row of that name): the generated one names the output
    # size assistInfoForCombineOutSize, as the document's own prototype and the op's output do
    ("aclnnMoeDistributeDispatchSetup.md", "assisInfoForCombineOutSize"): ("-", None, "the document misspells it"),
}


def _cells(row: str, tag: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", row, re.S)]


def real_column(text: str) -> list[tuple[str, str]]:
    """(parameter, 非连续 cell) of every row of every HTML table whose last header is the column.  A row is named
    by its first cell up to a full-width parenthesis (``expandX（aclTensor*）``); the cell is the row's last (one
    row of the DispatchV2 document lacks a middle cell, its last is still the column's)."""
    rows = []
    for table in re.findall(r"<table.*?</table>", text, re.S):
        heads = _cells(table, "th")
        if not heads or heads[-1] not in HEADS:
            continue
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S):
            cells = _cells(row, "td")
            if cells:
                rows.append((cells[0].split("（")[0].strip(), cells[-1]))
    return rows


def generated_column(text: str) -> list[tuple[str, str]]:
    """The same from a generated document's Markdown tables."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("| 参数名 |"):
            inside = line.rstrip(" |").endswith(HEADS)
            continue
        if not line.startswith("|"):
            inside = False
        elif inside and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append((cells[0], cells[-1]))
    return rows


def _pairs() -> list[tuple[Path, Path]]:
    docs = {p.name: p for p in GENERATED.glob("*/docs/aclnn*.md")}
    return [(real, docs[real.name]) for real in sorted(REAL_DOCS.glob("aclnn*.md")) if real.name in docs]


@pytest.mark.skipif(not REAL_DOCS.is_dir(), reason="the real documents (../shared/cann/docs/current) are absent")
def test_the_column_is_the_real_documents_column():
    pairs = _pairs()
    assert len(pairs) == 12  # every real aclnn document but none has a generated counterpart
    found, rows = {}, 0
    for real, gen in pairs:
        want = real_column(real.read_text(encoding="utf-8"))
        got = dict(generated_column(gen.read_text(encoding="utf-8")))
        assert want, real.name
        for name, value in want:
            rows += 1
            if got.get(name) != value:
                found[(real.name, name)] = (value, got.get(name))
    assert rows > 300
    assert found == {k: v[:2] for k, v in DIFFERENCES.items()}


def test_the_parser_reads_the_column():
    real = ("<table><thead><tr><th>参数名</th><th>非连续Tensor</th></tr></thead><tbody><tr><td>x（aclTensor*）</td>"
            "<td>√</td></tr><tr><td>groupEp</td><td>-</td></tr></tbody></table>")
    assert real_column(real) == [("x", "√"), ("groupEp", "-")]
    gen = "| 参数名 | 描述 | 非连续Tensor |\n| --- | --- | --- |\n| x | a | √ |\n| groupEp | b | - |\n\ntext\n"
    assert generated_column(gen) == [("x", "√"), ("groupEp", "-")]


def test_the_clause_is_a_tensor_fact():
    """`noncontiguous` sets the tensor's flag and prints back; a tensor without it has none."""
    from opgen.model.printer import print_op
    text = (ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
    op = load_ok(ROOT / "specs" / "combine_setup.spec")
    assert [t.noncontiguous for t in op.inputs + op.outputs] == [True] * 5
    again, d = load_src(print_op(op))
    assert again is not None, d.render()
    assert [t.noncontiguous for t in again.inputs + again.outputs] == [True] * 5
    decl = "input expandX: FLOAT16 | BFLOAT16 format ND noncontiguous"
    assert decl in text
    plain, d = load_src(text.replace(decl, decl.removesuffix(" noncontiguous")))
    assert plain is not None, d.render()
    assert [t.noncontiguous for t in plain.inputs + plain.outputs] == [False] + [True] * 4
    assert "noncontiguous" not in print_op(plain).split("input expandX")[1].split(";")[0]


@pytest.mark.parametrize("spec", sorted((ROOT / "specs").glob("*.spec")), ids=lambda p: p.stem)
def test_generated_rows_follow_the_spec(spec):
    """Every generated row of a tensor shows √ exactly when its spec declares it noncontiguous; others show -."""
    op = load_ok(spec)
    flags = {t.name: t.noncontiguous for t in op.inputs + op.outputs}
    for doc in (GENERATED / op.snake_name / "docs").glob("*.md"):
        rows = generated_column(doc.read_text(encoding="utf-8"))
        assert rows, doc
        for name, value in rows:
            tensor = next((t for t in op.inputs + op.outputs if t.name == name or
                           name in (c.c_name for e in op.entries for c in e.params if c.name == t.name)), None)
            assert value == ("√" if tensor is not None and flags[tensor.name] else "-"), (doc.name, name)
