"""The docs emitter against the seed document it must reproduce."""
from __future__ import annotations

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
    doc = next(a for a in emit(op) if a.path == f"docs/{entry}.md").content
    table = doc.split("- **参数说明**", 1)[1].split("- **返回值**", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 5 and cells[0] not in ("参数名", "---", "workspaceSize", "executor"):
            rows.append((cells[0], cells[1], cells[3]))
    return rows


def test_dispatch_v2_parameter_table_matches_seed(dispatch_v2):
    seed = seed_parameter_table()
    assert len(seed) == 31
    # The seed documents the IR operator, every parameter: the entry point that takes them all is V4. One row
    # moved on: elasticInfoOptional is INT32 in the current aclnnMoeDistributeDispatchV3/V4.md (and the real
    # OpDef); the seed wrote FLOAT32.
    current = [(n, r, "INT32" if n == "elasticInfoOptional" else d) for n, r, d in seed]
    assert ("elasticInfoOptional", "可选输入", "FLOAT32") in seed
    assert generated_parameter_table(dispatch_v2, "aclnnMoeDistributeDispatchV4") == current
    v2 = generated_parameter_table(dispatch_v2, "aclnnMoeDistributeDispatchV2")
    assert [r[0] for r in v2] == [p.name for p in dispatch_v2.entries[0].params]


def test_docs_list_every_product_and_check(dispatch_v2):
    doc = next(a for a in emit(dispatch_v2) if a.path.startswith("docs/")).content
    for soc in ("ascend910b", "ascend910_93", "ascend950"):
        assert f"`{soc}`" in doc
        for check in dispatch_v2.view(soc).checks:
            assert f"`{check.id}`" in doc
    # product support table: three supported, three unsupported, as in the seed
    assert doc.count("| √ |") == 3 and doc.count("| × |") == 3
    # HCCL_BUFFSIZE formulas per product and comm algorithm are documented
    assert "Align512(maxBS * (H * 2 + 16 * Align8(K)))" in doc
    assert "Align512(Align32(2 * H) + 64)" in doc
