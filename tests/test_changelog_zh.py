"""`opgen diff --format md` in the register of CANN's change lists (opgen/tools/changelog_zh.py): formulas as the
documents write them, one Chinese sentence per change grouped by parameter and product, and no English: every
ASCII word of the real change lists is a name of the specs or a word of the documents themselves."""
from __future__ import annotations

import dataclasses
import re

import pytest

from opgen.cli import main
from opgen.core.builtins import BUILTINS, CONSTANTS, ROUND_MODES
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Bool, Call, Name, Str, walk
from opgen.tools.changelog_zh import expr_zh
from opgen.tools.diff import diff_ops, render_md

from .conftest import ROOT, load_ok
from .test_diff import BASE, NONCONTIGUOUS_X, model, toy

HISTORY = ROOT / "specs" / "history"
PAIRS = [(HISTORY / "dispatch_v1.spec", HISTORY / "dispatch_v2_2026_05.spec"),
         (HISTORY / "dispatch_v2_2026_05.spec", ROOT / "specs" / "dispatch_v2.spec"),
         (HISTORY / "combine_setup_2026_05.spec", ROOT / "specs" / "combine_setup.spec")]
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# ---- formulas ---------------------------------------------------------------------------------------------

EXPRS = [
    ("(BS + 1) // 2 * H", "(BS + 1) / 2 * H"),                      # the documents' "/" is integer division
    ("worldSize != 0 and mode <= 1", "worldSize ≠ 0且mode ≤ 1"),
    ("worldSize in [2, 64)", "worldSize取值范围为[2, 64)"),
    ("mode in {0, 1, 2}", "mode取值为0、1或2"),
    ("mode not in {0, 1}", "mode不为0或1"),
    ("not present(maskOptional)", "maskOptional为空指针"),
    ("present(maskOptional) or rank(x) == 2", "maskOptional为有效Tensor或x的维数 = 2"),
    ("dim(x, 1) >= 16", "x的第二维 ≥ 16"),
    ("if mode == 0 then BS else if mode == 1 then H else 0", "mode = 0时为BS，mode = 1时为H，否则为0"),
    ("max(BS, 2) + (if flag then 1 else 0)", "max(BS, 2) + (flag时为1，否则为0)"),
    ("dtype(x) == FLOAT16", "x的数据类型 = FLOAT16"),
    ("not (worldSize > 2 and mode == 1)", "不满足（worldSize > 2且mode = 1）"),
    ("len(groupEp) < 128 and (mode == 0 or flag)", "groupEp的长度 < 128且(mode = 0或flag)"),
    ('groupEp == "ep"', 'groupEp = "ep"'),
    ("-alpha * 2.5", "-alpha * 2.5"),
    ("ceil_div(BS, 8) % 2", "ceil_div(BS, 8) % 2"),
    ("not flag", "flag为false"),
    ("BS in [1, if flag then 256 else 512]", "BS取值范围为[1, (flag时为256，否则为512)]"),
    ("worldSize - (BS - 1)", "worldSize - (BS - 1)"),
    ("dim(maskOptional, 0) in {1, H}", "maskOptional的第一维取值为1或H"),
    ("(mode == 1) == present(maskOptional)", "(mode = 1) = (maskOptional为有效Tensor)"),
    ('format(x) == "ND"', 'x的数据格式 = "ND"'),
    ("MAX_INT32 - align(H, 32)", "MAX_INT32 - align(H, 32)"),
]


@pytest.fixture(scope="module")
def parsed():
    """Each expression of EXPRS as the front end builds it: a derived quantity of the toy op."""
    lets = "".join(f"    let e{i} = {text};\n" for i, (text, _) in enumerate(EXPRS))
    op = model(toy(("    quant_by mode;\n", "    quant_by mode;\n" + lets)))
    return {l.name: l.expr for l in op.lets}


@pytest.mark.parametrize("i", range(len(EXPRS)), ids=[t for t, _ in EXPRS])
def test_expr_zh(parsed, i):
    assert expr_zh(parsed[f"e{i}"]) == EXPRS[i][1]


def test_expr_zh_nodes_without_spec_text():
    assert expr_zh(Call("shape", (Name("x"),))) == "x的shape"
    assert expr_zh(Bool(True)) == "true"
    assert expr_zh(Str('a"b')) == '"a\\"b"'


# ---- change lists of small spec pairs -------------------------------------------------------------------

def md(old_text: str, new_text: str) -> str:
    return render_md(diff_ops(model(old_text), model(new_text)), "old.spec", "new.spec")


def body(text: str) -> str:
    """The md after its title and lead line."""
    head = "# Toy 变更说明\n\n相较于版本1（old.spec），Toy（版本1）变更如下：\n"
    assert text.startswith(head)
    return text[len(head):]


def test_range_widened_on_one_product():
    out = md(BASE, toy(("attr worldSize in [2, 32];", "attr worldSize in [2, 48];")))
    assert body(out) == "\n## 参数变更\n\n### worldSize\n\n- worldSize（Ascend 950）取值范围由[2, 32]变更为[2, 48]。\n"


def test_check_added_under_a_when_is_listed_under_the_dim_it_blames():
    out = md(BASE, toy(('        attr worldSize in [2, 32];\n',
                        '        attr worldSize in [2, 32];\n        when mode == 1 {\n'
                        '            require H % 16 == 0 else tiling x(H) "a multiple of 16";\n        }\n')))
    assert body(out) == "\n## 参数变更\n\n### H\n\n- H（Ascend 950）新增约束：当mode = 1时，要求H % 16 = 0。\n"


def test_dtype_added_on_one_product():
    only_950 = toy(('        attr worldSize in [2, 32];\n',
                    '        attr worldSize in [2, 32];\n        input x: FLOAT16;\n'))
    assert body(md(only_950, BASE)) == "\n## 参数变更\n\n### x\n\n- x（Ascend 950）新增支持数据类型BFLOAT16。\n"


def test_notes_and_display_name():
    out = md(BASE, toy(('note "first note";', 'note "first note, reworded";'),
                       ('product ascend950 "Ascend 950" extends ascend910_93 {\n',
                        'product ascend950 "Ascend 950DT" extends ascend910_93 {\n        note "仅支持EP域。";\n')))
    assert body(out) == ("\n## 产品变更\n\n- 产品名称由「Ascend 950」变更为「Ascend 950DT」。\n"
                         "\n## 文档变更\n\n- 约束说明由「first note」变更为「first note, reworded」。\n"
                         "- Ascend 950DT：约束说明新增「仅支持EP域。」。\n")


def test_error_class_shown_as_codes_and_a_message_alone_not_at_all():
    out = md(BASE, toy(('else tiling worldSize "an even number"', 'else invalid worldSize "even"')))
    assert body(out) == "\n## 参数变更\n\n### worldSize\n\n- worldSize（所有产品）报错码由561002变更为161002。\n"
    out = md(BASE, toy(('else tiling worldSize "an even number"', 'else tiling worldSize "even"')))
    assert body(out) == "\n仅报错信息变更。\n"


def test_constraint_changed_and_removed():
    out = md(BASE, toy(("require worldSize % 2 == 0", "when flag {\n            require worldSize % 4 == 0"),
                       ('"an even number";\n', '"an even number";\n        }\n'),
                       ('    require bs: BS in [1, 256] else tiling x(BS) "BS in [1, 256]";\n', "")))
    assert body(out) == (
        "\n## 参数变更\n\n### worldSize\n\n"
        "- worldSize（所有产品）约束变更：由「要求worldSize % 2 = 0」变更为「当flag为true时，要求worldSize % 4 = 0」。\n"
        "\n### BS\n\n- BS（所有产品）删除约束：要求BS取值范围为[1, 256]。\n")


def test_the_same_sentence_on_several_products_is_one_bullet():
    three = toy(('    product ascend950 "Ascend 950" extends ascend910_93 {\n',
                 '    product ascend910b "Atlas A2" {\n        quant_modes 0;\n    }\n'
                 '    product ascend950 "Ascend 950" extends ascend910_93 {\n'))
    check = '        require H <= 8192 else tiling x(H) "at most 8192";\n'
    on_a3 = ('        quant_modes 0;\n        require worldSize',
             '        quant_modes 0;\n' + check + '        require worldSize')
    on_a2 = ('        quant_modes 0;\n    }\n', '        quant_modes 0;\n' + check + '    }\n')
    new = three.replace(*on_a3, 1)
    assert new.count(on_a2[0]) == 1
    # A3 (and Ascend 950, which inherits it) and A2 declare the same check: every product, one bullet
    assert body(md(three, new.replace(*on_a2))) == \
        "\n## 参数变更\n\n### H\n\n- H（所有产品）新增约束：要求H ≤ 8192。\n"
    # A3 and Ascend 950 only: named in the new spec's product order
    assert body(md(three, new)) == \
        "\n## 参数变更\n\n### H\n\n- H（Atlas A3、Ascend 950）新增约束：要求H ≤ 8192。\n"


def test_op_wide_changes():
    with_let = toy(("    quant_by mode;\n", "    quant_by mode;\n    let rows = BS * max(worldSize, 1);\n"))
    out = md(with_let, toy(("    quant_by mode;\n", "    quant_by mode;\n    let rows = BS;\n"),
                           ('    env HCCL_BUFFSIZE: int64 = 200 unit "MB";\n',
                            '    env HCCL_BUFFSIZE: int64 = 256 unit "MB";\n'),
                           ("quant_modes 0;", "quant_modes 0, 1;")))
    assert body(out) == (
        "\n## 参数变更\n\n### mode\n\n- mode（所有产品）新增支持量化模式1（static）。\n"
        "\n## 算子变更\n\n"
        "- 环境变量HCCL_BUFFSIZE由「int64类型，默认值为200MB」变更为「int64类型，默认值为256MB」。\n"
        "- 派生量rows由BS * max(worldSize, 1)变更为BS。\n")


def test_unsupported_and_buffer():
    out = md(BASE, toy(('        attr worldSize in [2, 32];\n',
                        '        attr worldSize in [2, 32];\n        attr alpha unsupported;\n'),
                       ("HCCL_BUFFSIZE >= BS * H * 2 else", "HCCL_BUFFSIZE >= BS * H * 4 else")))
    assert body(out) == (
        "\n## 参数变更\n\n### alpha\n\n- alpha（Ascend 950）当前版本不支持（预留参数）。\n"
        "\n### HCCL_BUFFSIZE\n\n- HCCL_BUFFSIZE（所有产品）约束变更：由「要求HCCL_BUFFSIZE ≥ BS * H * 2」变更为"
        "「要求HCCL_BUFFSIZE ≥ BS * H * 4」。\n")



def test_noncontiguous_support_listed_under_its_tensor_for_all_products():
    """The 非连续Tensor column's change, as a parameter's change (never an 接口变更: the prototype is the same)."""
    both = toy(NONCONTIGUOUS_X, ("output countsOut: INT32 shape", "output countsOut: INT32 noncontiguous shape"))
    assert body(md(BASE, both)) == (
        "\n## 参数变更\n\n### x\n\n- x（所有产品）由不支持非连续Tensor变更为支持非连续Tensor。\n"
        "\n### countsOut\n\n- countsOut（所有产品）由不支持非连续Tensor变更为支持非连续Tensor。\n")
    assert body(md(both, BASE)) == (
        "\n## 参数变更\n\n### x\n\n- x（所有产品）由支持非连续Tensor变更为不支持非连续Tensor。\n"
        "\n### countsOut\n\n- countsOut（所有产品）由支持非连续Tensor变更为不支持非连续Tensor。\n")


@pytest.mark.parametrize("edits, lines", [
    ([('    optional attr flag: bool = false doc "flag";\n',
       '    optional attr flag: bool = false doc "flag";\n    optional attr beta: int64 = 0;\n')],
     ["新增beta入参（可选属性，INT64，默认值为0）；"]),
    ([('    optional input maskOptional: BOOL shape (BS,) doc "mask";\n', "")],
     ["删除maskOptional入参（可选输入，BOOL，shape为(BS,)）；"]),
    ([("optional attr alpha: float", "optional attr gamma: float"), ("* alpha,", "* gamma,")],
     ["原算子中的alpha入参更名为gamma；"]),
    ([("optional attr flag: bool = false", "optional attr flag: int64 = 0")],
     ["flag入参的数据类型由BOOL变更为INT64；", "flag入参的默认值由false变更为0；"]),
    ([("input x: FLOAT16 | BFLOAT16 format", "input x: FLOAT16 | BFLOAT16 | FLOAT32 format")],
     ["x入参支持的数据类型由FLOAT16、BFLOAT16变更为FLOAT16、BFLOAT16、FLOAT32；"]),
    ([('output countsOut: INT32 shape (worldSize,) doc',
       'output countsOut: INT32 shape (worldSize,) ir "count_out" doc')],
     ['countsOut出参在算子原型中的名称由"counts"变更为"count_out"；']),
    ([("optional input maskOptional", "input maskOptional")], ["maskOptional入参由可选变更为必选；"]),
    ([("output countsOut: INT32 shape (worldSize,)", "output countsOut: INT32 shape (>= worldSize,)")],
     ["countsOut出参的shape(worldSize,)改为容量下限（可传更大的Tensor）；"]),
])
def test_abi_items(edits, lines):
    abi = body(md(BASE, toy(*edits))).split("\n\n## ")[0].rstrip("\n")  # (renaming alpha changes quant 1 too)
    assert abi == "\n## 接口变更\n\n" + "\n".join(f"- {line}" for line in lines)


# ---- the real change lists: Chinese, no check ids, no English ---------------------------------------------

def _identifiers(op) -> set[str]:
    """Every name an md may quote from a spec: declarations, the products' display names, and what its
    expressions name (names, string literals, builtin calls and their keywords)."""
    out = {op.name, *op.pairs_with, *(p.name for p in op.params), *(l.name for l in op.lets),
           *(e.name for e in op.envs)}
    for display in [p.display for p in op.products] + list(op.unsupported_products):
        out.update(_WORD.findall(display))
    for d in op.defs:
        out |= {d.name, *d.params}
    for e in op.entries:
        out |= {e.name, *(p.name for p in e.params), *(s.name for s in e.sizes)}
    for q in op.quant_modes:
        out |= {s.name for s in q.body}
    for v in op.views.values():
        out |= {l.name for l in v.lets} | set(v.pairs_with)
    seen: set[int] = set()

    def visit(x):
        if id(x) in seen:
            return
        seen.add(id(x))
        if type(x).__module__ == "opgen.lang.expr":  # an expression node
            for node in walk(x):
                if isinstance(node, Name):
                    out.add(node.id)
                elif isinstance(node, Str):
                    out.update(_WORD.findall(node.value))
                elif isinstance(node, Call):
                    out.add(node.fn)
                    out.update(k for k, _ in node.kwargs)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                if f.name not in ("op", "span", "source"):
                    visit(getattr(x, f.name))
        elif isinstance(x, (tuple, list)):
            for item in x:
                visit(item)

    visit(op)
    for v in op.views.values():
        visit(v)
    return out


@pytest.fixture(scope="module")
def document_words() -> set[str]:
    """The ASCII words of CANN's own documents that the specs encode: the current release's
    (specs/sources/current) and the May 2026 revision the history specs quote (specs/sources/*.txt)."""
    words: set[str] = set()
    sources = ROOT / "specs" / "sources"
    for path in sorted(sources.glob("current/*.md")) + sorted(sources.glob("*.txt")):
        words.update(_WORD.findall(path.read_text(encoding="utf-8")))
    return words


def _md(capsys, old, new) -> str:
    code = main(["diff", str(old), str(new), "--format", "md", "--allow-abi-break"])
    out, _ = capsys.readouterr()
    assert code == 0
    return out


@pytest.mark.parametrize("old, new", PAIRS, ids=["v1-v2", "v2_2026_05-current", "combine_setup_2026_05-current"])
def test_real_change_lists_have_no_english(capsys, document_words, old, new):
    out = _md(capsys, old, new)
    a, b = load_ok(old), load_ok(new)
    # a `narrower` line quotes the range the real op's code accepts, which the documents do not list
    code_ranges = {w for m in (p for p in a.products + b.products) for n in m.narrower for w in _WORD.findall(n.accepts)}
    allowed = document_words | _identifiers(a) | _identifiers(b) | set(DTYPES) | set(BUILTINS) | set(CONSTANTS) | \
        set(ROUND_MODES) | code_ranges
    text = out.replace(str(old), "").replace(str(new), "")  # the lead line names the files compared
    assert sorted(set(_WORD.findall(text)) - allowed) == []
    for soc in {p.soc for p in a.products} | {p.soc for p in b.products}:
        assert soc not in text  # products by their display names, never a check id "ascend910_93.x"
    assert "check " not in text and " -> " not in text


def test_v2_release_change_list_reads_like_the_documents(capsys):
    out = _md(capsys, *PAIRS[1])
    assert "\n### epWorldSize\n\n" in out
    assert "- epWorldSize（Ascend 950DT）取值范围由[2, 768]变更为[2, 1024]。\n" in out
    sections = [line for line in out.splitlines() if line.startswith("## ")]
    assert sections == sorted(sections, key=["## 接口变更", "## 参数变更", "## 算子变更", "## 产品变更",
                                             "## 文档变更"].index)


def test_v2_release_change_list_is_pinned(capsys, monkeypatch):
    """The whole change list of the current release against the seed era, as `opgen diff --format md` prints it.
    After an intended change to a spec or to the sentences, rewrite the file with
    `opgen diff specs/history/dispatch_v2_2026_05.spec specs/dispatch_v2.spec --format md --allow-abi-break >
    tests/golden/dispatch_v2_2026_05_to_current.md` and read its git diff: every changed line must be a real
    change of the documents (or a better sentence)."""
    monkeypatch.chdir(ROOT)
    out = _md(capsys, "specs/history/dispatch_v2_2026_05.spec", "specs/dispatch_v2.spec")
    assert out == (ROOT / "tests" / "golden" / "dispatch_v2_2026_05_to_current.md").read_text(encoding="utf-8")
    # what the documents changed, sentence by sentence (docs/seed_era -> docs/current)
    for line in ("- epWorldSize（Ascend 950DT）取值范围由[2, 768]变更为[2, 1024]。",
                 "- tpWorldSize（Atlas A3 训练系列产品/Atlas A3 推理系列产品）取值约束由「取值范围为[0, 2]」变更为「取值为0或1」。",
                 "- expandScalesOut（Ascend 950DT）输出内容变更为有效。",
                 "- 产品名称由「Ascend 950PR/Ascend 950DT」变更为「Ascend 950DT」。",
                 "- expertScalesOptional（Atlas A3 训练系列产品/Atlas A3 推理系列产品、Ascend 950DT）支持传入空Tensor，"
                 "传入空Tensor时视为未传入。"):
        assert line + "\n" in out, line


def test_combine_setup_release_changes(capsys, monkeypatch):
    """CombineSetup, seed era (seed 002 / docs/seed_era) -> current: every "当前仅支持" list the release widened,
    the 950DT HCCL_BUFFSIZE factor, the product's new name and the URMA-only statement — and nothing about A3,
    which both revisions' product tables mark ×."""
    monkeypatch.chdir(ROOT)
    out = _md(capsys, "specs/history/combine_setup_2026_05.spec", "specs/combine_setup.spec")
    for line in ("- H（所有产品）约束变更：由「要求H = 4096」变更为「要求H取值为4096或7168」。",
                 "- BS（所有产品）约束变更：由「要求BS = 16」变更为「要求BS取值为8、16或256」。",
                 "- K（所有产品）约束变更：由「要求K = 6」变更为「要求K取值为6或8」。",
                 "- moeExpertNum（所有产品）取值约束由「取值范围为(0, 512]」变更为「取值为32」。",
                 "- moeExpertNum（所有产品）删除约束：要求isSharedRank或localMoeExpertNum = 16。",
                 "- 产品名称由「Ascend 950PR/Ascend 950DT」变更为「Ascend 950DT」。",
                 "- 约束说明新增「通信方式约束：仅支持URMA通信。」。"):
        assert line + "\n" in out, line
    assert "HCCL_BUFFSIZE ≥ 2 * (" in out and "变更为「要求HCCL_BUFFSIZE ≥ 4 * (" in out
    assert "A3" not in out and "接口变更" not in out  # same entry points, same products
