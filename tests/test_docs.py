"""The docs emitter against the seed document it must reproduce."""
from __future__ import annotations

import re

from opgen.emit.pipeline import emit

from .conftest import SEEDS


def seed_parameter_table() -> list[tuple[str, str, str]]:
    """(name, role, dtypes) of the seed's 参数说明 table, in order."""
    text = (SEEDS / "000_cb40903a2e9cd53b.txt").read_text(encoding="utf-8")
    lines = text.split("参数说明", 1)[1].splitlines()
    rows = []
    for line in lines:
        cells = line.split("\t")
        if len(cells) == 5 and cells[0] != "参数名":
            rows.append((cells[0].strip(), cells[1].strip(), cells[3].strip()))
        elif rows and len(cells) != 5:
            break
    return rows


def generated_parameter_table(op, entry: str) -> list[tuple[str, str, str]]:
    """(name, role, dtypes) of the 参数说明 table of one entry point's document (its first stage's parameters)."""
    return [(name, role, dtypes) for name, role, _, dtypes in generated_full_table(op, entry)]


def test_dispatch_v2_parameter_table_matches_seed(dispatch_v2):
    seed = seed_parameter_table()
    assert len(seed) == 31
    # The seed documents the IR operator, every parameter: the entry point that takes them all is V4. One row
    # moved on: elasticInfoOptional is INT32 in the current aclnnMoeDistributeDispatchV3/V4.md (and the real
    # OpDef); the seed wrote FLOAT32.
    current = [(n, ACLNN_ROLE.get(r, r), "INT32" if n == "elasticInfoOptional" else d) for n, r, d in seed]
    assert ("elasticInfoOptional", "可选输入", "FLOAT32") in seed
    assert generated_parameter_table(dispatch_v2, "aclnnMoeDistributeDispatchV4") == current
    v2 = generated_parameter_table(dispatch_v2, "aclnnMoeDistributeDispatchV2")
    assert [r[0] for r in v2] == [p.name for p in dispatch_v2.entries[0].params]


def test_docs_list_every_product_and_check(dispatch_v2):
    from opgen.lower.latex import Latex
    doc = next(a for a in emit(dispatch_v2) if a.path.startswith("docs/")).content
    for soc in ("ascend910b", "ascend910_93", "ascend950"):
        view = dispatch_v2.view(soc)
        assert f"### {view.product.display}\n" in doc
        L = Latex(view)
        for check in view.checks:  # each check's requirement, in LaTeX, under its parameter (never its id)
            assert f"| {check.param} | " in doc and f"| ${L(check.expr)}$ |" in doc, check.id
    # product support table: three supported, three unsupported, as in the seed
    support = doc.split("## 产品支持情况", 1)[1].split("## ", 1)[0]
    assert support.count("| √ |") == 3 and support.count("| × |") == 3
    # HCCL_BUFFSIZE formulas per product and comm algorithm are documented
    assert r"\mathrm{Align512}(\mathrm{maxBS} \times \left(\mathrm{H} \times 2 + 16 \times \mathrm{Align8}(\mathrm{K})" \
        r"\right))" in doc
    assert r"\mathrm{Align512}(\mathrm{Align32}(2 \times \mathrm{H}) + 64)" in doc


# The 输入/输出 column of an aclnn document: attributes and optional inputs are 输入 (aclnnMoeDistributeDispatchV4.md
# 参数说明); the op READMEs and the seed label them 属性 / 可选输入 / 可选属性.
ACLNN_ROLE = {"可选输入": "输入", "属性": "输入", "可选属性": "输入"}


def current_parameter_table(readme: str) -> list[tuple[str, str, str, str]]:
    """(name, role, description, dtypes) of the 参数说明 table of a current op README (an HTML table), in order."""
    import re
    text = (SEEDS / "current" / readme).read_text(encoding="utf-8")
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr, re.S)]
        rows.append((cells[0], cells[1], cells[2], cells[3]))
    return rows


def generated_full_table(op, entry: str) -> list[tuple[str, str, str, str]]:
    """(name, role, description, dtypes) of the 参数说明 table of one entry point's document (eight columns:
    参数名, 输入/输出, 描述, 使用说明, 数据类型, 数据格式, 维度(shape), 非连续Tensor)."""
    doc = next(a for a in emit(op) if a.path == f"docs/{entry}.md").content
    table = doc.split("- **参数说明**", 1)[1].split("- **返回值**", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 8 and cells[0] not in ("参数名", "---", "workspaceSize", "executor"):
            # the READMEs end an optional attribute's description with its default, which 使用说明 states
            default = re.search(r"默认值为(.*?)。", cells[3])
            doc = cells[2] + ("" if cells[2].endswith("。") else " ") + default.group(0) if default else cells[2]
            rows.append((cells[0], cells[1], doc, cells[4]))
    return rows


def test_parameter_tables_match_the_current_readmes(dispatch_v2):
    """Every row of the current op READMEs' 参数说明 tables, description included, as the full entry point (V4)
    documents it: the specs encode the current release (specs/sources/current/)."""
    from .conftest import ROOT, load_ok
    combine_v2 = load_ok(ROOT / "specs" / "combine_v2.spec")
    for op, readme, entry in ((dispatch_v2, "moe_distribute_dispatch_v2_README.md", "aclnnMoeDistributeDispatchV4"),
                              (combine_v2, "moe_distribute_combine_v2_README.md", "aclnnMoeDistributeCombineV4")):
        want = current_parameter_table(readme)
        # Rows the aclnn documents (the ABI) and the real OpDef overrule: elasticInfoOptional is INT32, and the
        # three reserved CombineV2 inputs the README types "-" have the OpDef's dtypes (semantics.md §1).
        opdef = {"elasticInfoOptional": "INT32", "activationScaleOptional": "FLOAT32",
                 "weightScaleOptional": "FLOAT32", "groupListOptional": "INT64"}
        want = [(n, ACLNN_ROLE.get(r, r), d, opdef.get(n, t)) for n, r, d, t in want]
        assert generated_full_table(op, entry) == want, readme


def test_combine_add_rms_norm_table_matches_its_readme():
    """The CombineAddRmsNorm README's 参数说明 table has eight columns (描述, then 使用说明, then 数据类型): every
    row, in order, is a row of the generated V1 document, whose description starts with the README's 描述 and
    whose dtype is the README's (where it gives one; "-" is a reserved input, typed by the real OpDef)."""
    import re

    from .conftest import ROOT, load_ok
    op = load_ok(ROOT / "specs" / "combine_add_rms_norm.spec")
    text = (SEEDS / "current" / "moe_distribute_combine_add_rms_norm_README.md").read_text(encoding="utf-8")
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    want = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", tr, re.S)]
        if cells[0] not in ("workspaceSize", "executor"):
            want.append((cells[0], cells[2], cells[4]))
    got = generated_full_table(op, "aclnnMoeDistributeCombineAddRmsNorm")
    assert [w[0] for w in want] == [g[0] for g in got]
    for (name, doc, dtype), (_, _, got_doc, got_dtype) in zip(want, got):
        assert got_doc.startswith(doc.rstrip("。")), (name, doc, got_doc)
        if dtype != "-":
            assert got_dtype == dtype, (name, dtype, got_dtype)
