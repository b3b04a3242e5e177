"""`opgen diff`: the V1 -> V2 change list of the DispatchV2 seed, every change category on small spec pairs,
exit codes, output formats, `--rev` against git, `--generated`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from opgen.cli import main
from opgen.tools.diff import ABI, BEHAVIOUR, DOCS, LIMITS, diff_ops, render_md

from .conftest import ROOT, load_ok, load_src

V1 = ROOT / "specs" / "history" / "dispatch_v1.spec"
V2 = ROOT / "specs" / "history" / "dispatch_v2_2026_05.spec"  # the seed-era V2, V1's successor
SIG = "<signature>"  # an entry point's C parameters, written so in the ABI lists below

BASE = '''op Toy {
    version 1;
    doc "玩具算子。";
    note "first note";
    env HCCL_BUFFSIZE: int64 = 200 unit "MB";
    input x: FLOAT16 | BFLOAT16 format ND shape (BS, H) doc "tokens";
    optional input maskOptional: BOOL shape (BS,) doc "mask";
    attr groupEp: string len [1, 128) doc "group";
    attr worldSize: int64 in [2, 64] doc "world size";
    optional attr mode: int64 = 0 doc "quant mode";
    optional attr alpha: float = 1.0 doc "scale";
    optional attr flag: bool = false doc "flag";
    output y: FLOAT16 | BFLOAT16 | INT8 shape (BS, H) dtype = if mode == 0 then dtype(x) else INT8 doc "out";
    output countsOut: INT32 shape (worldSize,) doc "counts";
    quant_by mode;
    quant 0 none "copy" {
        y = x;
    }
    quant 1 static "static" {
        y = cast(cast(x, FLOAT32) * alpha, INT8, round=rint, sat=true);
    }
    require bs: BS in [1, 256] else tiling x(BS) "BS in [1, 256]";
    product ascend910_93 "Atlas A3" {
        quant_modes 0;
        require worldSize % 2 == 0 else tiling worldSize "an even number";
        buffer window: HCCL_BUFFSIZE >= BS * H * 2 else tiling "HCCL_BUFFSIZE >= BS * H * 2";
    }
    product ascend950 "Ascend 950" extends ascend910_93 {
        attr worldSize in [2, 32];
    }
}
'''
BOTH = ()  # a change on every product is reported once, for the whole op


def toy(*edits: tuple[str, str]) -> str:
    text = BASE
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def model(text: str):
    op, d = load_src(text)
    assert op is not None, d.render()
    return op


def changes(old_text: str, new_text: str, group: str | None = None):
    d = diff_ops(model(old_text), model(new_text))
    return [(c.kind, c.subject, c.products) for c in d.changes if group is None or c.group == group], d


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- the seed's change list: MoeDistributeDispatch -> MoeDistributeDispatchV2 ------------------------

@pytest.fixture(scope="module")
def v1_v2():
    return diff_ops(load_ok(V1), load_ok(V2))


def test_history_spec_is_valid_and_outside_the_build_glob(capsys):
    code, out, _ = run(["check", V1], capsys)
    assert code == 0 and "ok (MoeDistributeDispatch, 3 products" in out
    assert V1 not in ROOT.joinpath("specs").glob("*.spec")


def test_v1_v2_abi_is_exactly_the_seed_list(v1_v2):
    abi = [(c.kind, c.subject, SIG if c.kind.startswith("entry.") and c.old else c.old,
            SIG if c.kind.startswith("entry.") and c.new else c.new) for c in v1_v2.group(ABI)]
    assert abi == [
        ("op.new", "op", "MoeDistributeDispatch", "MoeDistributeDispatchV2"),
        # entry points by name: the V1 op's one default entry point is gone, the documents' three are new
        ("entry.added", "aclnn aclnnMoeDistributeDispatchV2", None, SIG),
        ("entry.added", "aclnn aclnnMoeDistributeDispatchV3", None, SIG),
        ("entry.added", "aclnn aclnnMoeDistributeDispatchV4", None, SIG),
        ("entry.removed", "aclnn aclnnMoeDistributeDispatch", SIG, None),
        ("param.added", "attr commAlg", None, 'optional attr commAlg: string = ""'),
        # not in the seed's list: the IR-only y_dtype of the real V2 OpDef, which the V1 OpDef does not have
        # (hicann/ops-transformer mc2/moe_distribute_dispatch{,_v2}/op_host/*_def.cpp)
        ("param.added", "attr yDtype", None, 'optional attr yDtype: int64 = 28'),
        ("param.renamed", "output assistInfoForCombineOut", "expandIdxOut", "assistInfoForCombineOut"),
        ("param.shape", "output assistInfoForCombineOut", "(BS * K,)", "(>= A * 128,)"),
    ]
    texts = [c.text for c in v1_v2.group(ABI)]
    assert texts[5].endswith("replaces env HCCL_INTRA_PCIE_ENABLE, HCCL_INTRA_ROCE_ENABLE")
    assert "IR name \"expand_idx\" -> \"assist_info_for_combine\"" in texts[7]
    assert v1_v2.replaces == {"commAlg": ("HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE")}
    assert not v1_v2.same_op and v1_v2.abi_break


def test_v1_v2_behaviour_is_the_commalg_switch_and_nothing_else(v1_v2):
    items = {(c.kind, c.subject, c.products): c for c in v1_v2.group(BEHAVIOUR)}
    assert items[("env.removed", "env HCCL_INTRA_PCIE_ENABLE", BOTH)].text == \
        "env HCCL_INTRA_PCIE_ENABLE removed (replaced by attr commAlg)"
    assert ("env.removed", "env HCCL_INTRA_ROCE_ENABLE", BOTH) in items
    assert items[("domain.added", "attr commAlg", ("ascend910b",))].new == '{"", "fullmesh", "hierarchy"}'
    assert items[("domain.added", "attr commAlg", ("ascend910_93",))].new == \
        '{"", "fullmesh_v1", "fullmesh_v2", "hierarchy"}'
    assert items[("domain.added", "attr commAlg", ("ascend950",))].new == '{"", "fullmesh_v1", "fullmesh_v2"}'
    # A2's algorithm switch moved from the env vars (through envHierarchy) to commAlg, same checks otherwise
    a2 = items[("constraint.changed", "check ascend910b.epWorldSize.2", ("ascend910b",))]
    assert a2.text == 'check ascend910b.epWorldSize.2: condition envHierarchy -> commAlg == "hierarchy"'
    assert items[("buffer.changed", "buffer fullmesh_window", ("ascend910b",))].text == \
        'buffer fullmesh_window: condition not envHierarchy -> commAlg != "hierarchy"'
    # the generated kernels' rejection of A2's hierarchy template follows the switch (the env rule becomes a
    # commAlg one), but it is opgen's `limit`, not the documents': listed apart, not as a behaviour change
    limits = [(c.kind, c.subject, c.products) for c in v1_v2.group(LIMITS)]
    assert limits == [("constraint.added", "check ascend910b.commAlg", ("ascend910b",)),
                      ("constraint.removed", "check ascend910b.HCCL_INTRA_PCIE_ENABLE", ("ascend910b",))]
    # the fullmesh_v2 / hierarchy templates of A3 are new, and Ascend 950 inherits them
    added = [s for k, s, p in items if k == "constraint.added" and p != ("ascend910b",)]
    assert all(p == ("ascend910_93", "ascend950") for k, s, p in items if k == "constraint.added" and s in added)
    assert len(added) == 12 and "check ascend910_93.expertScalesOptional" in added
    assert items[("pairs.changed", "pairs_with", ("ascend910b",))].new == ("MoeDistributeCombineV2",)
    # Everything else is identical: every behaviour change is about commAlg, the env switch or the partner op.
    # (When this fails, specs/dispatch_v2.spec changed without specs/history/dispatch_v1.spec: port the change.)
    about = ("commAlg", "envHierarchy", "HCCL_INTRA_", "MoeDistributeCombine", "yDtype")
    assert [c.text for c in v1_v2.group(BEHAVIOUR) if not any(w in c.text for w in about)] == []


def test_v1_v2_docs_only_cover_text(v1_v2):
    docs = v1_v2.group(DOCS)
    assert docs and {c.kind for c in docs} <= {"note.added", "note.changed", "note.removed", "doc.changed"}
    assert any(c.kind == "note.added" and c.new.startswith("相较于MoeDistributeDispatch算子") for c in docs)


def test_v1_v2_markdown_reproduces_the_seed_sentences(capsys):
    code, out, _ = run(["diff", V1, V2, "--format", "md", "--allow-abi-break"], capsys)
    assert code == 0
    assert "相较于MoeDistributeDispatch算子，该算子（MoeDistributeDispatchV2）变更如下：" in out
    # (the documents write a capacity by its bound: "(A * 128,)" where the spec has "(>= A * 128,)")
    assert "- 新增接口aclnnMoeDistributeDispatchV2（26个参数）；" in out and "- 删除接口aclnnMoeDistributeDispatch；" in out
    assert "- 原算子中shape为(BS * K,)的expandIdxOut出参替换为shape为(A * 128,)的assistInfoForCombineOut参数；" in out
    assert "代替HCCL_INTRA_PCIE_ENABLE和HCCL_INTRA_ROCE_ENABLE环境变量；" in out
    assert out.index("## 接口变更") < out.index("## 参数变更") < out.index("## 算子变更") < \
        out.index("## 产品变更") < out.index("## 文档变更")


def test_v1_v2_text_output(capsys):
    code, out, err = run(["diff", V1, V2], capsys)
    assert code == 3 and "--allow-abi-break" in err
    assert out.startswith("MoeDistributeDispatch version 1 (")
    assert "different operators: MoeDistributeDispatchV2 is compared as the successor of MoeDistributeDispatch" in out
    assert "ABI (aclnn signature / OpDef) - 9 changes: ABI break" in out
    assert "  + new IR op MoeDistributeDispatchV2 (the successor of MoeDistributeDispatch, which it does not " \
           "register)\n  + aclnn entry point aclnnMoeDistributeDispatchV2 added\n" in out
    assert "  - aclnn entry point aclnnMoeDistributeDispatch removed\n" in out
    assert "  ~ output assistInfoForCombineOut: shape (BS * K,) -> (>= A * 128,)\n" in out
    assert out.index("ABI (") < out.index("Behaviour - ") < out.index("Docs only - ")


# ---- ABI categories ----------------------------------------------------------------------------------

@pytest.mark.parametrize("edits, expected", [
    ([('    optional attr flag: bool = false doc "flag";\n',
       '    optional attr flag: bool = false doc "flag";\n    optional attr beta: int64 = 0;\n')],
     [("param.added", "attr beta", BOTH)]),
    ([('    optional input maskOptional: BOOL shape (BS,) doc "mask";\n', "")],
     [("param.removed", "input maskOptional", BOTH)]),
    ([("optional attr alpha: float", "optional attr gamma: float"), ("* alpha,", "* gamma,")],
     [("param.renamed", "attr gamma", BOTH)]),
    ([('    attr groupEp: string len [1, 128) doc "group";\n    attr worldSize: int64 in [2, 64] doc "world size";\n',
       '    attr worldSize: int64 in [2, 64] doc "world size";\n    attr groupEp: string len [1, 128) doc "group";\n')],
     [("param.reordered", "attr worldSize", BOTH)]),
    ([("optional attr flag: bool = false", "optional attr flag: int64 = 0")],
     [("param.type", "attr flag", BOTH), ("param.default", "attr flag", BOTH)]),
    ([("input x: FLOAT16 | BFLOAT16 format", "input x: FLOAT16 | BFLOAT16 | FLOAT32 format")],
     [("param.dtypes", "input x", BOTH)]),
    ([("optional attr alpha: float = 1.0", "optional attr alpha: float = 2.0")],
     [("param.default", "attr alpha", BOTH)]),
    ([("output countsOut: INT32 shape (worldSize,)", "output countsOut: INT32 shape (worldSize * 2,)")],
     [("param.shape", "output countsOut", BOTH)]),
    ([('output countsOut: INT32 shape (worldSize,) doc', 'output countsOut: INT32 shape (worldSize,) ir "count_out" doc')],
     [("param.ir_name", "output countsOut", BOTH)]),
    ([("optional input maskOptional", "input maskOptional")],
     [("param.optional", "input maskOptional", BOTH)]),
])
def test_abi_categories(edits, expected):
    got, d = changes(BASE, toy(*edits), ABI)
    assert got == expected
    assert d.abi_break


def test_rename_needs_same_slot_and_type():
    # a removed float and an added int64 in the same slot are not a rename
    got, _ = changes(BASE, toy(("optional attr alpha: float = 1.0", "optional attr gamma: int64 = 1"),
                               ("* alpha,", "* 2.0,")), ABI)
    assert got == [("param.added", "attr gamma", BOTH), ("param.removed", "attr alpha", BOTH)]


def test_rename_text_and_reorder_positions():
    _, d = changes(BASE, toy(("optional attr alpha: float", "optional attr gamma: float"), ("* alpha,", "* gamma,")))
    assert d.group(ABI)[0].text == 'attr alpha renamed to gamma (attr 4 of 5, IR name "alpha" -> "gamma")'
    _, d = changes(BASE, toy(('    attr groupEp: string len [1, 128) doc "group";\n    attr worldSize: int64 in [2, 64] doc "world size";\n',
                              '    attr worldSize: int64 in [2, 64] doc "world size";\n    attr groupEp: string len [1, 128) doc "group";\n')))
    assert d.group(ABI)[0].text == "attr worldSize moved: attr 2 of 5 -> 1 of 5"


# ---- behaviour categories ------------------------------------------------------------------------------

def test_range_widened_and_narrowed_show_both_ranges():
    got, d = changes(BASE, toy(("attr worldSize in [2, 32];", "attr worldSize in [2, 48];")), BEHAVIOUR)
    assert got == [("range.widened", "attr worldSize", ("ascend950",))]
    assert d.changes[0].text == "attr worldSize: range widened [2, 32] -> [2, 48]"
    got, d = changes(BASE, toy(("attr worldSize in [2, 32];", "attr worldSize in [2, 16];")), BEHAVIOUR)
    assert got == [("range.narrowed", "attr worldSize", ("ascend950",))]
    assert (d.changes[0].old, d.changes[0].new) == ("[2, 32]", "[2, 16]")
    # the same integers written differently: (1, 33) is [2, 32]
    got, d = changes(BASE, toy(("attr worldSize in [2, 32];", "attr worldSize in (1, 33);")), BEHAVIOUR)
    assert got == [("range.rewritten", "attr worldSize", ("ascend950",))]
    # an op-level range every product inherits: once, for all; integer ranges compare as integers
    got, d = changes(BASE, toy(("attr worldSize: int64 in [2, 64]", "attr worldSize: int64 in (1, 128)")), BEHAVIOUR)
    assert got == [("range.widened", "attr worldSize", ("ascend910_93",))]
    # a range check on a dim: the declared check widens
    got, d = changes(BASE, toy(('BS in [1, 256] else tiling x(BS) "BS in [1, 256]"',
                                'BS in [1, 512] else tiling x(BS) "BS in [1, 256]"')), BEHAVIOUR)
    assert got == [("range.widened", "check op.bs", BOTH)]
    assert d.changes[0].text == "check op.bs: range widened BS in [1, 256] -> BS in [1, 512]"


def test_set_domain_narrowed_lists_items():
    got, d = changes(toy(("attr worldSize in [2, 32];", "attr worldSize in {2, 4, 8};")),
                     toy(("attr worldSize in [2, 32];", "attr worldSize in {2, 4};")), BEHAVIOUR)
    assert got == [("range.narrowed", "attr worldSize", ("ascend950",))]
    assert d.changes[0].text == "attr worldSize: range narrowed {2, 4, 8} -> {2, 4} (-8)"


def test_dtype_added_and_removed_per_product():
    restricted = toy(("        quant_modes 0;\n", "        quant_modes 0;\n        input x: FLOAT16;\n"))
    got, d = changes(BASE, restricted, BEHAVIOUR)
    assert got == [("dtype.removed", "input x", BOTH)]
    assert d.changes[0].text == "input x: dtype BFLOAT16 removed (FLOAT16 | BFLOAT16 -> FLOAT16)"
    only_950 = toy(('        attr worldSize in [2, 32];\n', '        attr worldSize in [2, 32];\n        input x: FLOAT16;\n'))
    got, _ = changes(only_950, BASE, BEHAVIOUR)
    assert got == [("dtype.added", "input x", ("ascend950",))]
    assert changes(BASE, restricted, ABI)[0] == []  # the op's dtype set (the OpDef) is unchanged


def test_quant_mode_added_and_removed():
    got, d = changes(BASE, toy(("quant_modes 0;", "quant_modes 0, 1;")), BEHAVIOUR)
    assert got == [("quant_mode.added", "quant_mode 1", BOTH)]
    assert d.changes[0].text == "quant mode 1 (static) added (0 -> 0, 1)"
    got, _ = changes(toy(('        attr worldSize in [2, 32];\n', '        attr worldSize in [2, 32];\n        quant_modes 0, 1;\n')),
                     BASE, BEHAVIOUR)
    assert got == [("quant_mode.removed", "quant_mode 1", ("ascend950",))]


def test_constraints_added_removed_changed():
    extra = ('        attr worldSize in [2, 32];\n',
             '        attr worldSize in [2, 32];\n        require H % 16 == 0 else tiling x(H) "a multiple of 16";\n')
    got, _ = changes(BASE, toy(extra), BEHAVIOUR)
    assert got == [("constraint.added", "check ascend950.x", ("ascend950",))]
    got, _ = changes(toy(extra), BASE, BEHAVIOUR)
    assert got == [("constraint.removed", "check ascend950.x", ("ascend950",))]
    got, d = changes(BASE, toy(('else tiling worldSize "an even number"', 'else invalid worldSize "even"')), BEHAVIOUR)
    assert got == [("constraint.changed", "check ascend910_93.worldSize", BOTH)]
    assert d.changes[0].text == ('check ascend910_93.worldSize: class tiling -> invalid; '
                                 'message "an even number" -> "even"')
    got, d = changes(BASE, toy(("require worldSize % 2 == 0", "require worldSize % 4 == 0")), BEHAVIOUR)
    assert d.changes[0].text == "check ascend910_93.worldSize: worldSize % 2 == 0 -> worldSize % 4 == 0"


def test_checks_match_by_content_before_id():
    # inserting a check with the same blamed parameter shifts ids (.2): only the new one is reported
    old = toy(('        quant_modes 0;\n', '        quant_modes 0;\n        require H > 0 else tiling x(H) "positive";\n'))
    new = toy(('        quant_modes 0;\n', '        quant_modes 0;\n        require H < 65536 else tiling x(H) "small";\n'
               '        require H > 0 else tiling x(H) "positive";\n'))
    got, d = changes(old, new, BEHAVIOUR)
    assert got == [("constraint.added", "check ascend910_93.x", BOTH)]
    assert d.changes[0].new == 'H < 65536 else tiling x(H) "small"'


def test_product_added_and_removed():
    without = toy(('    product ascend950 "Ascend 950" extends ascend910_93 {\n        attr worldSize in [2, 32];\n    }\n', ""))
    got, d = changes(BASE, without, BEHAVIOUR)
    assert got == [("product.removed", "product ascend950", ("ascend950",))]
    got, d = changes(without, BASE, BEHAVIOUR)
    assert got == [("product.added", "product ascend950", ("ascend950",))]
    assert d.changes[0].text == "product ascend950 added (Ascend 950, extends ascend910_93; quant modes 0)"


def test_buffer_formula_changed():
    got, d = changes(BASE, toy(("HCCL_BUFFSIZE >= BS * H * 2 else", "HCCL_BUFFSIZE >= BS * H * 4 else")), BEHAVIOUR)
    assert got == [("buffer.changed", "buffer window", BOTH)]
    assert d.changes[0].text == "buffer window: formula HCCL_BUFFSIZE >= BS * H * 2 -> HCCL_BUFFSIZE >= BS * H * 4"


def test_unsupported_attr_and_input():
    got, _ = changes(BASE, toy(('        attr worldSize in [2, 32];\n',
                                '        attr worldSize in [2, 32];\n        attr alpha unsupported;\n'
                                '        input maskOptional unsupported;\n')), BEHAVIOUR)
    assert got == [("unsupported.added", "attr alpha", ("ascend950",)),
                   ("unsupported.added", "input maskOptional", ("ascend950",))]


def test_env_and_derived_quantities():
    got, _ = changes(BASE, toy(('    env HCCL_BUFFSIZE: int64 = 200 unit "MB";\n',
                                '    env HCCL_BUFFSIZE: int64 = 256 unit "MB";\n    env HCCL_OTHER: int64 = 0;\n')),
                     BEHAVIOUR)
    assert got == [("env.changed", "env HCCL_BUFFSIZE", BOTH), ("env.added", "env HCCL_OTHER", BOTH)]


# ---- opgen's own limits: not a change of the documents ---------------------------------------------------

A3_RULES = '        require worldSize % 2 == 0 else tiling worldSize "an even number";\n'
LIMITED = toy((A3_RULES, A3_RULES + '        limit built: worldSize in [2, 32] else tiling worldSize "at most 32: not built by opgen";\n'))


def test_a_limit_edit_is_no_release_change_and_a_document_rule_edit_is(tmp_path, capsys):
    """A `limit` (opgen's rule) added, changed or removed goes to the limits group, out of the md release list; the
    same edit of a `require` (the documents' rule) is a behaviour change the md lists."""
    widened = LIMITED.replace("worldSize in [2, 32] else", "worldSize in [2, 48] else")
    got, d = changes(LIMITED, widened)
    assert got == [("range.widened", "check ascend910_93.built", BOTH)] and d.changes[0].group == LIMITS
    assert changes(BASE, LIMITED, LIMITS)[0] == [("constraint.added", "check ascend910_93.built", BOTH)]
    assert changes(LIMITED, BASE, LIMITS)[0] == [("constraint.removed", "check ascend910_93.built", BOTH)]
    assert render_md(d, "old.spec", "new.spec").splitlines()[3:] == [
        "", "无语义变更（仅生成算子自身的限制变更，不属于发布变更）。"]
    rule = LIMITED.replace("limit built:", "require built:")
    got, d = changes(rule, rule.replace("worldSize in [2, 32] else", "worldSize in [2, 48] else"))
    assert got == [("range.widened", "check ascend910_93.built", BOTH)] and d.changes[0].group == BEHAVIOUR
    assert "## 参数变更" in render_md(d, "old.spec", "new.spec")
    # a rule that becomes opgen's limit (or stops being one) is a change of what the documents say
    got, d = changes(rule, LIMITED, BEHAVIOUR)
    assert got == [("constraint.changed", "check ascend910_93.built", BOTH)]
    assert d.changes[0].text == "check ascend910_93.built: now opgen's own limit (`limit`), not the documents' rule"
    old_p, new_p = tmp_path / "old.spec", tmp_path / "new.spec"
    old_p.write_text(LIMITED, encoding="utf-8")
    new_p.write_text(widened, encoding="utf-8")
    code, out, _ = run(["diff", old_p, new_p], capsys)
    assert code == 0 and out.splitlines()[1:] == [
        "", "opgen limits (the generated op's own rules, not a change of the documents) - 1 change",
        "  all products:", "    + check ascend910_93.built: range widened worldSize in [2, 32] -> worldSize in [2, 48]"]


def test_env_vars_and_lets_only_a_limit_reads_are_limits_too():
    """An env var (string, as the real tilings getenv / strcmp it) and a derived quantity read only by a `limit`
    are opgen's: added with it, they are no release change; read by a document rule too, they are one."""
    envs = ('    env HCCL_BUFFSIZE: int64 = 200 unit "MB";\n',
            '    env HCCL_BUFFSIZE: int64 = 200 unit "MB";\n    env LAYERED: string = "";\n')
    lets = (A3_RULES, A3_RULES + '        let layered = LAYERED == "1";\n'
                                 '        limit layer: not layered else tiling worldSize "no layered path: not built by opgen";\n')
    d = diff_ops(model(BASE), model(toy(envs, lets)))
    assert [(c.group, c.kind, c.subject) for c in d.changes] == [
        (LIMITS, "env.added", "env LAYERED"), (LIMITS, "let.added", "let layered"),
        (LIMITS, "constraint.added", "check ascend910_93.layer")] and not d.release
    rule = (lets[0], lets[1] + '        require worldSize <= 16 or not layered else tiling worldSize "at most 16";\n')
    d = diff_ops(model(BASE), model(toy(envs, rule)))
    assert [(c.group, c.subject) for c in d.changes] == [
        (BEHAVIOUR, "env LAYERED"), (BEHAVIOUR, "let layered"), (LIMITS, "check ascend910_93.layer"),
        (BEHAVIOUR, "check ascend910_93.worldSize.2")]


def test_an_attr_replaces_string_env_vars():
    """`replaces`: an added attribute takes over removed env vars (V1's HCCL_INTRA_PCIE_ENABLE /
    HCCL_INTRA_ROCE_ENABLE -> V2's commAlg) when a check reading them reads it instead, the env vars given as strings
    (the real A2 tilings getenv and strcmp them)."""
    v1 = toy(('    env HCCL_BUFFSIZE: int64 = 200 unit "MB";\n',
              '    env HCCL_BUFFSIZE: int64 = 200 unit "MB";\n    env HCCL_INTRA_PCIE_ENABLE: string = "";\n'
              '    env HCCL_INTRA_ROCE_ENABLE: string = "";\n'),
             ("    quant_by mode;\n", '    quant_by mode;\n    let envHierarchy = HCCL_INTRA_PCIE_ENABLE == "1" and '
                                    'HCCL_INTRA_ROCE_ENABLE == "0";\n'),
             (A3_RULES, A3_RULES + '        when envHierarchy {\n            require hier: worldSize % 16 == 0 else '
                                   'tiling worldSize "a multiple of 16 for hierarchy";\n        }\n'))
    v2 = toy(('    optional attr flag: bool = false doc "flag";\n',
              '    optional attr flag: bool = false doc "flag";\n    optional attr commAlg: string = "" doc "algorithm";\n'),
             (A3_RULES, A3_RULES + '        when commAlg == "hierarchy" {\n            require hier: worldSize % 16 == 0 '
                                   'else tiling worldSize "a multiple of 16 for hierarchy";\n        }\n'))
    d = diff_ops(model(v1), model(v2))
    assert d.replaces == {"commAlg": ("HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE")}
    (added,) = [c for c in d.group(ABI) if c.kind == "param.added"]
    assert added.text.endswith("replaces env HCCL_INTRA_PCIE_ENABLE, HCCL_INTRA_ROCE_ENABLE")
    removed = [c for c in d.changes if c.kind == "env.removed"]
    assert [(c.group, c.text) for c in removed] == [
        (BEHAVIOUR, "env HCCL_INTRA_PCIE_ENABLE removed (replaced by attr commAlg)"),
        (BEHAVIOUR, "env HCCL_INTRA_ROCE_ENABLE removed (replaced by attr commAlg)")]
    assert "代替HCCL_INTRA_PCIE_ENABLE和HCCL_INTRA_ROCE_ENABLE环境变量；" in render_md(d, "v1.spec", "v2.spec")


def test_docs_only_change_is_not_abi_or_behaviour(capsys, tmp_path):
    new = toy(('doc "玩具算子。"', 'doc "玩具算子（新）。"'), ('note "first note";', 'note "first note, reworded";'),
              ('doc "tokens"', 'doc "input tokens"'))
    got, d = changes(BASE, new)
    assert got == [("doc.changed", "op", BOTH), ("note.changed", "op notes", BOTH),
                   ("doc.changed", "input x", BOTH)]
    assert not d.abi_break
    old_p, new_p = tmp_path / "old.spec", tmp_path / "new.spec"
    old_p.write_text(BASE, encoding="utf-8")
    new_p.write_text(new, encoding="utf-8")
    code, out, _ = run(["diff", old_p, new_p], capsys)
    assert code == 0 and "Docs only - 3 changes" in out and "ABI" not in out and "Behaviour" not in out


def test_identical_models_report_nothing(tmp_path, capsys):
    reformatted = BASE.replace("    ", "  ").replace('doc "tokens";', 'doc "tokens";  # a comment')
    got, _ = changes(BASE, reformatted)
    assert got == []
    a, b = tmp_path / "a.spec", tmp_path / "b.spec"
    a.write_text(BASE, encoding="utf-8")
    b.write_text(reformatted, encoding="utf-8")
    code, out, _ = run(["diff", a, b], capsys)
    assert code == 0 and "no semantic changes" in out


# ---- exit codes, formats ----------------------------------------------------------------------------

@pytest.fixture
def pair(tmp_path):
    old_p, new_p = tmp_path / "old.spec", tmp_path / "new.spec"
    old_p.write_text(BASE, encoding="utf-8")
    new_p.write_text(toy(("optional attr alpha: float = 1.0", "optional attr alpha: float = 2.0"),
                         ("attr worldSize in [2, 32];", "attr worldSize in [2, 48];")), encoding="utf-8")
    return old_p, new_p


def test_exit_codes(pair, tmp_path, capsys):
    old_p, new_p = pair
    assert run(["diff", old_p, new_p], capsys)[0] == 3
    assert run(["diff", old_p, new_p, "--allow-abi-break"], capsys)[0] == 0
    bad = tmp_path / "bad.spec"
    bad.write_text(BASE.replace("attr worldSize: int64", "attr worldSize: int46"), encoding="utf-8")
    code, _, err = run(["diff", old_p, bad], capsys)
    assert code == 1 and "error[E113]" in err
    assert run(["diff", old_p], capsys)[0] == 2
    assert run(["diff", old_p, new_p, "--rev", "HEAD"], capsys)[0] == 2
    with pytest.raises(SystemExit) as exc:
        main(["diff", str(old_p), str(new_p), "--format", "yaml"])
    assert exc.value.code == 2


def test_json_output_parses_and_is_deterministic(pair, capsys):
    old_p, new_p = pair
    code, out, _ = run(["diff", old_p, new_p, "--format", "json"], capsys)
    assert code == 3
    doc = json.loads(out)
    assert doc["abi_break"] is True and doc["same_op"] is True
    assert list(doc) == sorted(doc) and list(doc["changes"]) == ["abi", "behaviour", "docs", "limits"]
    assert doc["changes"]["abi"] == [{"group": "abi", "kind": "param.default", "new": "2.0", "old": "1.0",
                                      "products": [], "subject": "attr alpha",
                                      "text": "attr alpha: default 1.0 -> 2.0"}]
    assert [c["kind"] for c in doc["changes"]["behaviour"]] == ["range.widened"]
    assert doc["changes"]["behaviour"][0]["products"] == ["ascend950"]
    env = dict(os.environ, PYTHONHASHSEED="4242")
    other = subprocess.run([sys.executable, "-m", "opgen", "diff", str(old_p), str(new_p), "--format", "json"],
                           capture_output=True, text=True, env=env, cwd=str(ROOT))
    assert other.returncode == 3 and other.stdout == out


def test_markdown_output(pair, capsys):
    old_p, new_p = pair
    code, out, _ = run(["diff", old_p, new_p, "--format", "md", "--allow-abi-break"], capsys)
    assert code == 0
    assert out.startswith("# Toy 变更说明\n")
    assert "- alpha入参的默认值由1.0变更为2.0；" in out
    assert "## 参数变更\n\n### worldSize\n\n- worldSize（Ascend 950）取值范围由[2, 32]变更为[2, 48]。\n" in out


# ---- --rev and --generated ----------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_rev_head_compares_with_the_committed_spec(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    spec = repo / "specs" / "toy.spec"
    spec.write_text(BASE, encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(git + ["add", "specs/toy.spec"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "toy"], check=True)
    spec.write_text(toy(("attr worldSize in [2, 32];", "attr worldSize in [2, 16];")), encoding="utf-8")
    monkeypatch.chdir(repo / "specs")  # any directory inside the repository; the path is relative to it
    code, out, _ = run(["diff", "--rev", "HEAD", "toy.spec"], capsys)
    assert code == 0
    assert out.startswith("Toy version 1 (HEAD:specs/toy.spec) -> Toy version 1 (toy.spec)\n")
    assert "- attr worldSize: range narrowed [2, 32] -> [2, 16]" in out
    code, _, err = run(["diff", "--rev", "no-such-rev", "toy.spec"], capsys)
    assert code == 2 and "cannot read specs/toy.spec at no-such-rev" in err
    outside = tmp_path / "outside.spec"
    outside.write_text(BASE, encoding="utf-8")
    code, _, err = run(["diff", "--rev", "HEAD", outside], capsys)
    assert code == 2 and "not inside a git repository" in err


def test_generated_lists_changed_files_with_line_counts(tmp_path, capsys, monkeypatch):
    old_p, new_p = tmp_path / "old.spec", tmp_path / "new.spec"
    old_p.write_text(BASE, encoding="utf-8")
    new_p.write_text(toy(('doc "tokens"', 'doc "input tokens"')), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["diff", old_p, new_p, "--generated"], capsys)
    assert code == 0
    section = out[out.index("Generated files - "):]
    assert "  changed  toy/docs/aclnnToy.md: +1 -1\n" in section
    for line in section.splitlines()[1:]:
        status, rest = line.split(None, 1)
        plus, minus = rest.rsplit(": ", 1)[1].split()
        assert status == "changed" and int(plus[1:]) + int(minus[1:]) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.spec", "old.spec"]  # nothing written
    code, out, _ = run(["diff", old_p, new_p, "--generated", "--format", "json"], capsys)
    files = json.loads(out)["generated"]["files"]
    assert {"added": 1, "new": "toy/docs/aclnnToy.md", "old": "toy/docs/aclnnToy.md", "removed": 1,
            "status": "changed"} in files


@pytest.mark.slow
def test_generated_files_of_a_new_op_are_added_not_paired_with_its_predecessors(capsys):
    """A different op name is a new op (issue 35): its files go to a folder of their own, so each is `added`;
    none is paired with a file of the op it succeeds, whose folder the build leaves alone."""
    code, out, _ = run(["diff", V1, V2, "--generated", "--allow-abi-break"], capsys)
    assert code == 0
    files = out[out.index("Generated files"):].splitlines()[1:]
    assert "  added    moe_distribute_dispatch_v2/docs/aclnnMoeDistributeDispatchV2.md: +" in out
    assert files and all(line.startswith("  added    moe_distribute_dispatch_v2/") for line in files), files


# ---- aclnn entry points ----------------------------------------------------------------------------------

_ENTRY_V1 = "    output countsOut: INT32 shape (worldSize,) doc \"counts\";\n"
_TWO = _ENTRY_V1 + ("    aclnn aclnnToy(x, groupEp, worldSize, y, countsOut);\n"
                    "    aclnn aclnnToyV2(x, maskOptional, groupEp, worldSize, mode, y, countsOut);\n")


def test_a_new_entry_point_is_not_an_abi_break(capsys, tmp_path):
    one = toy((_ENTRY_V1, _ENTRY_V1 + "    aclnn aclnnToy(x, groupEp, worldSize, y, countsOut);\n"))
    got, d = changes(one, toy((_ENTRY_V1, _TWO)), ABI)
    assert got == [("entry.added", "aclnn aclnnToyV2", ())]
    assert not d.abi_break
    (tmp_path / "old.spec").write_text(one, encoding="utf-8")
    (tmp_path / "new.spec").write_text(toy((_ENTRY_V1, _TWO)), encoding="utf-8")
    code, out, _ = run(["diff", tmp_path / "old.spec", tmp_path / "new.spec", "--format", "md"], capsys)
    assert code == 0, out
    assert "- 新增接口aclnnToyV2（7个参数）；" in out


def test_a_removed_or_changed_entry_point_is_an_abi_break():
    got, d = changes(toy((_ENTRY_V1, _TWO)),
                     toy((_ENTRY_V1, _ENTRY_V1 + "    aclnn aclnnToy(x, maskOptional, groupEp, worldSize, y, "
                                                 "countsOut);\n")), ABI)
    assert got == [("entry.changed", "aclnn aclnnToy", ()), ("entry.removed", "aclnn aclnnToyV2", ())]
    assert d.abi_break
    changed = d.changes[0]
    assert "added `const aclTensor *maskOptional`" in changed.text


def test_a_successor_op_lists_its_entry_points_by_name_in_every_format(capsys, tmp_path):
    """A new op name is a new IR op: the old op's entry points are removed, the new op's added, an entry point of
    the same name compared, never "renamed" (DispatchV2 -> DispatchV3: V2/V3/V4 gone, V5 new)."""
    successor = toy((_ENTRY_V1, _ENTRY_V1 + "    aclnn aclnnToyV2(x, maskOptional, groupEp, worldSize, mode, y, "
                                            "countsOut);\n    aclnn aclnnToyV5(x, groupEp, worldSize, y, countsOut);\n"),
                    ("op Toy {", "op ToyV3 {"))
    got, d = changes(toy((_ENTRY_V1, _TWO)), successor, ABI)
    assert got == [("op.new", "op", ()), ("entry.added", "aclnn aclnnToyV5", ()),
                   ("entry.removed", "aclnn aclnnToy", ())]
    assert not d.same_op and d.abi_break
    (tmp_path / "old.spec").write_text(toy((_ENTRY_V1, _TWO)), encoding="utf-8")
    (tmp_path / "new.spec").write_text(successor, encoding="utf-8")
    args = ["diff", tmp_path / "old.spec", tmp_path / "new.spec", "--allow-abi-break"]
    code, text, _ = run(args, capsys)
    assert code == 0 and "renamed" not in text
    assert "  + new IR op ToyV3 (the successor of Toy, which it does not register)\n" \
           "  + aclnn entry point aclnnToyV5 added\n  - aclnn entry point aclnnToy removed\n" in text
    code, md, _ = run(args + ["--format", "md"], capsys)
    assert "- 新增接口aclnnToyV5（5个参数）；\n- 删除接口aclnnToy；\n" in md
    code, js, _ = run(args + ["--format", "json"], capsys)
    abi = [(c["kind"], c["subject"]) for c in json.loads(js)["changes"]["abi"]]
    assert abi == [("op.new", "op"), ("entry.added", "aclnn aclnnToyV5"), ("entry.removed", "aclnn aclnnToy")]


def test_declaring_the_default_entry_point_changes_nothing():
    # no `aclnn`: one entry point aclnn<Op> over every parameter, which is what this declares
    explicit = toy((_ENTRY_V1, _ENTRY_V1 + "    aclnn aclnnToy(x, maskOptional, groupEp, worldSize, mode, alpha, "
                                           "flag, y, countsOut);\n"))
    got, _ = changes(BASE, explicit, ABI)
    assert got == []


def test_the_reason_an_output_is_unspecified_is_a_docs_change():
    src = (ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
    old_reason = "commQuantMode仅支持0（不量化），通信量化暂存区无有效内容"
    assert src.count(old_reason) == 1
    new_src = src.replace(old_reason, "通信量化暂存区，commQuantMode为0时无有效内容")
    old, new = load_src(src, "old.spec")[0], load_src(new_src, "new.spec")[0]
    d = diff_ops(old, new)
    got = [(c.group, c.kind, c.subject, c.products, c.old, c.new) for c in d.changes]
    assert got == [(DOCS, "unspecified.reason", "output quantExpandXOut", ("ascend950",), old_reason,
                    "通信量化暂存区，commQuantMode为0时无有效内容")]
    assert not d.abi_break


def test_an_unreachable_mark_is_a_docs_change():
    src = (ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
    mark = src[src.index("        unreachable op.expertIds "):]
    mark = mark[:mark.index("\n") + 1]
    old, new = load_src(src.replace(mark, ""), "old.spec")[0], load_src(src, "new.spec")[0]
    got = [(c.group, c.kind, c.subject, c.products, c.old) for c in diff_ops(old, new).changes]
    assert got == [(DOCS, "unreachable.added", "check op.expertIds", ("ascend950",), None)]
    back = [(c.kind, c.new) for c in diff_ops(new, old).changes]
    assert back == [("unreachable.removed", None)]


def test_a_special_expert_formula_change_is_a_behaviour_change():
    src = (ROOT / "specs" / "combine_v2.spec").read_text(encoding="utf-8")
    old_f = "Moe = cast(oriXOptional, FLOAT32);"
    assert src.count(old_f) == 1
    new_src = src.replace(old_f, "Moe = cast(oriXOptional, FLOAT32) * 2.0;")
    old, new = load_src(src, "old.spec")[0], load_src(new_src, "new.spec")[0]
    got = [(c.group, c.kind, c.subject) for c in diff_ops(old, new).changes]
    assert got == [(BEHAVIOUR, "special.changed", "special copy")]
    dropped = load_src(src.replace("    special zero: zeroExpertNum \"零专家\" {\n        Moe = 0;\n    }\n", ""),
                       "dropped.spec")[0]
    kinds = sorted(c.kind for c in diff_ops(old, dropped).changes)
    assert "special.removed" in kinds


def test_a_post_stage_change_is_a_behaviour_change():
    src = (ROOT / "specs" / "combine_add_rms_norm.spec").read_text(encoding="utf-8")
    old_f = "xOut = cast(x, dtype(xOut));"
    assert src.count(old_f) == 1
    new_src = src.replace(old_f, "xOut = cast(x, dtype(xOut), round=trunc);")
    old, new = load_src(src, "old.spec")[0], load_src(new_src, "new.spec")[0]
    got = [(c.group, c.kind, c.subject) for c in diff_ops(old, new).changes]
    assert got == [(BEHAVIOUR, "post.changed", "post")]
    assert "round=trunc" in diff_ops(old, new).changes[0].new


def test_a_dispatch_sides_special_expert_range_is_a_docs_change():
    """DispatchV2 declares the ranges alone (it sends nothing to them either way): adding, re-counting or dropping
    one changes the documents, not what the op computes."""
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    decl = '    special copy: copyExpertNum "copy专家";\n'
    assert src.count(decl) == 1
    old, new = load_src(src.replace(decl, ""), "old.spec")[0], load_src(src, "new.spec")[0]
    got = [(c.group, c.kind, c.subject) for c in diff_ops(old, new).changes]
    assert got == [(DOCS, "special.added", "special copy")]
    assert [(c.group, c.kind) for c in diff_ops(new, old).changes] == [(DOCS, "special.removed")]


def test_a_products_opdef_config_change_is_reported_per_product_and_kept_out_of_the_md(capsys):
    """The seed-era DispatchV2 built one kernel entry for every SoC; the current one gives each SoC its own and A2
    jitCompile.flag "static_false": behaviour changes per product (the generated tree and the op build change),
    not an ABI break, and no sentence of the Chinese change list (CANN's lists never mention them)."""
    d = diff_ops(load_ok(ROOT / "specs" / "history" / "dispatch_v2_2026_05.spec"),
                 load_ok(ROOT / "specs" / "dispatch_v2.spec"))
    got = sorted((c.kind, c.products, c.old, c.new) for c in d.group(BEHAVIOUR) if c.kind.startswith("opdef."))
    one = "op_kernel/moe_distribute_dispatch_v2.cpp"
    assert got == [
        ("opdef.jit_compile", ("ascend910b",), "static_true", "static_false"),
        ("opdef.op_file", ("ascend910_93",), one, "op_kernel/arch22/moe_distribute_dispatch_v2_a3.cpp"),
        ("opdef.op_file", ("ascend910b",), one, "op_kernel/arch22/moe_distribute_dispatch_v2_a2.cpp"),
        ("opdef.op_file", ("ascend950",), one, "op_kernel/arch35/moe_distribute_dispatch_v2_apt.cpp"),
    ]
    assert all(c.zh == "" for c in d.group(BEHAVIOUR) if c.kind.startswith("opdef."))
    code, out, _ = run(["diff", ROOT / "specs" / "history" / "dispatch_v2_2026_05.spec",
                        ROOT / "specs" / "dispatch_v2.spec", "--format", "md", "--allow-abi-break"], capsys)
    assert code == 0 and "opFile" not in out and "jitCompile" not in out and "op_kernel" not in out


def test_a_narrower_mark_is_a_docs_change():
    """`narrower ID "RANGE" code "SOURCE";` changes no check: added, removed or edited it is docs only."""
    src = (ROOT / "specs" / "dispatch_teardown.spec").read_text(encoding="utf-8")
    mark = src[src.index("        narrower op.h_current "):]
    mark = mark[:mark.index("\n") + 1]
    old, new = load_src(src.replace(mark, ""), "old.spec")[0], load_src(src, "new.spec")[0]
    got = [(c.group, c.kind, c.subject, c.products, c.new) for c in diff_ops(old, new).changes]
    assert got == [(DOCS, "narrower.added", "check op.h_current", ("ascend950",), "H in [1024, 8192]")]
    assert [c.zh for c in diff_ops(old, new).changes] == [
        "x的文档范围窄于算子实现，算子实现接受H in [1024, 8192]"]  # the parameter, not the check id
    assert [(c.group, c.kind) for c in diff_ops(new, old).changes] == [(DOCS, "narrower.removed")]
    edited = load_src(src.replace(mark, mark.replace('"H in [1024, 8192]"', '"H in [512, 8192]"')), "edited.spec")[0]
    assert [(c.group, c.kind, c.old, c.new) for c in diff_ops(new, edited).changes] == [
        (DOCS, "narrower.changed", "H in [1024, 8192]", "H in [512, 8192]")]


# ---- a tensor's non-contiguous support (the documents' 非连续Tensor column) ---------------------------------------

NONCONTIGUOUS_X = ("input x: FLOAT16 | BFLOAT16 format ND shape",
                   "input x: FLOAT16 | BFLOAT16 format ND noncontiguous shape")


def test_a_tensors_noncontiguous_support_is_one_behaviour_change_and_no_abi_break(tmp_path, capsys):
    """The aclnn signature and the OpDef do not change with it: one behaviour item for all products, exit 0."""
    new = toy(NONCONTIGUOUS_X)
    got, d = changes(BASE, new)
    assert got == [("noncontiguous.added", "input x", BOTH)]
    (c,) = d.changes
    assert (c.group, c.old, c.new, c.param) == (BEHAVIOUR, "-", "√", "x") and not d.abi_break
    old_p, new_p = tmp_path / "old.spec", tmp_path / "new.spec"
    old_p.write_text(BASE, encoding="utf-8")
    new_p.write_text(new, encoding="utf-8")
    code, out, _ = run(["diff", old_p, new_p], capsys)
    assert code == 0
    assert out.splitlines()[1:] == ["", "Behaviour - 1 change", "  all products:",
                                    "    + input x: accepted non-contiguous (非连续Tensor - -> √)"]
    code, out, _ = run(["diff", old_p, new_p, "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["abi_break"] is False
    assert doc["changes"] == {"abi": [], "docs": [], "limits": [], "behaviour": [
        {"group": "behaviour", "kind": "noncontiguous.added", "subject": "input x", "products": [], "old": "-",
         "new": "√", "text": "input x: accepted non-contiguous (非连续Tensor - -> √)"}]}
    code, out, _ = run(["diff", old_p, new_p, "--format", "md"], capsys)
    assert code == 0
    assert out.split("变更如下：\n", 1)[1] == \
        "\n## 参数变更\n\n### x\n\n- x（所有产品）由不支持非连续Tensor变更为支持非连续Tensor。\n"


def test_a_tensor_no_longer_noncontiguous_and_a_renamed_one():
    with_counts = toy(("output countsOut: INT32 shape", "output countsOut: INT32 noncontiguous shape"))
    got, d = changes(with_counts, BASE)
    assert got == [("noncontiguous.removed", "output countsOut", BOTH)] and not d.abi_break
    assert [c.text for c in d.changes] == ["output countsOut: no longer accepted non-contiguous (非连续Tensor √ -> -)"]
    assert [c.zh for c in d.changes] == ["由支持非连续Tensor变更为不支持非连续Tensor"]
    # a renamed tensor is compared with its old self: the rename (ABI) and the support (behaviour)
    got, _ = changes(BASE, toy(("output countsOut: INT32 shape", "output recvOut: INT32 noncontiguous shape")))
    assert got == [("param.renamed", "output recvOut", BOTH), ("noncontiguous.added", "output recvOut", BOTH)]


SEED_ERA = ROOT.parent / "shared" / "cann" / "docs" / "seed_era"
_HISTORY = ROOT / "specs" / "history"


@pytest.mark.parametrize("old, new", [
    (V1, V2), (V2, ROOT / "specs" / "dispatch_v2.spec"),
    (_HISTORY / "combine_v2_2026_05.spec", ROOT / "specs" / "combine_v2.spec"),
    (_HISTORY / "combine_setup_2026_05.spec", ROOT / "specs" / "combine_setup.spec"),
], ids=["v1-v2", "dispatch_v2", "combine_v2", "combine_setup"])
def test_history_specs_report_no_noncontiguous_change_no_document_shows(old, new):
    """The seed-era DispatchV2 / CombineV2 READMEs have no 非连续Tensor column and the CombineSetup document's agrees
    with today's: no pair of the history reports a change of it (each history spec declares it; see its comment)."""
    a, b = load_ok(old), load_ok(new)
    assert [c.text for c in diff_ops(a, b).changes if c.kind.startswith("noncontiguous.")] == []
    assert any(t.noncontiguous for t in a.inputs + a.outputs)


def test_history_combine_v2_keeps_the_documents_contiguous_tensors():
    op = load_ok(_HISTORY / "combine_v2_2026_05.spec")
    assert [t.name for t in op.inputs + op.outputs if not t.noncontiguous] == [
        "activationScaleOptional", "weightScaleOptional", "groupListOptional", "xOut"]


@pytest.mark.skipif(not SEED_ERA.is_dir(), reason="the seed-era documents (../shared/cann/docs/seed_era) are absent")
def test_history_combine_setup_follows_the_seed_era_documents_column():
    from .test_docs_noncontiguous import real_column
    rows = dict(real_column((SEED_ERA / "aclnnMoeDistributeCombineSetup.md").read_text(encoding="utf-8")))
    op = load_ok(_HISTORY / "combine_setup_2026_05.spec")
    assert {t.name: "√" if t.noncontiguous else "-" for t in op.inputs + op.outputs} == \
        {t.name: rows[t.name] for t in op.inputs + op.outputs}
    assert set(rows[t.name] for t in op.inputs + op.outputs) == {"√"}
    # the two READMEs of the era have no such column (so the DispatchV2 / CombineV2 history specs take today's values)
    for readme in ("moe_distribute_dispatch_v2_README.md", "moe_distribute_combine_v2_README.md"):
        assert "非连续" not in (SEED_ERA / readme).read_text(encoding="utf-8")
