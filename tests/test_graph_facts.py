"""`graph input|output|attr NAME ...;`: the REG_OP proto's own facts where the real proto differs from the OpDef.

The generated protos are compared with the real ones in tests/test_op_folder_dropin.py; here: what the facts do to
the proto (and nothing else), and that a bad fact is a located diagnostic."""
from __future__ import annotations

from opgen.emit.host import graph_proto_context, opdef_context
from opgen.model.printer import print_op
from .conftest import ROOT, load_src

SPEC = ROOT / "specs" / "combine_add_rms_norm.spec"
FACTS = '    graph output rstdOut ir "rstd";\n    graph attr sharedExpertNum = 1;\n'


def _load(text: str, tmp_path):
    return load_src(text, str(tmp_path / "combine_add_rms_norm.spec"))


def test_facts_change_the_proto_only(tmp_path):
    src = SPEC.read_text(encoding="utf-8")
    assert FACTS in src
    op, diags = _load(src, tmp_path)
    assert op is not None, diags.render()
    bare, diags = _load(src.replace(FACTS, ""), tmp_path)
    assert bare is not None, diags.render()
    proto, plain = graph_proto_context(op), graph_proto_context(bare)
    assert [t["name"] for t in proto["outputs"]] == ["y", "rstd", "x"]
    assert [t["name"] for t in plain["outputs"]] == ["y", "rstdOut", "x"]
    assert next(a for a in proto["attrs"] if a["name"] == "shared_expert_num")["default"] == "1"
    assert next(a for a in plain["attrs"] if a["name"] == "shared_expert_num")["default"] == "0"
    # the OpDef keeps its own name and default
    strip = lambda ctx: {k: v for k, v in ctx.items() if k != "op"}  # noqa: E731 - the model differs by the facts
    assert strip(opdef_context(op)) == strip(opdef_context(bare))


def test_dtypes_and_place(tmp_path):
    src = (ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
    src = src.replace("    graph attr commQuantMode after sharedExpertRankNum;\n",
                      "    graph attr commQuantMode after sharedExpertRankNum;\n"
                      "    graph input expandX: INT32 | BFLOAT16;\n")
    op, diags = load_src(src, str(tmp_path / "combine_setup.spec"))
    assert op is not None, diags.render()
    proto = graph_proto_context(op)
    names = [a["name"] for a in proto["attrs"]]
    assert names[names.index("shared_expert_rank_num") + 1] == "comm_quant_mode"
    assert names.index("comm_quant_mode") < names.index("global_bs")
    assert proto["inputs"][0]["dtypes"] == "DT_INT32, DT_BF16"  # the proto's order


def test_facts_print_and_reload(tmp_path):
    op, diags = _load(SPEC.read_text(encoding="utf-8"), tmp_path)
    assert op is not None, diags.render()
    again, diags = _load(print_op(op), tmp_path)
    assert again is not None, diags.render()
    assert again.graph == op.graph and len(op.graph) == 2


def test_bad_facts_are_located_diagnostics(tmp_path):
    src = SPEC.read_text(encoding="utf-8")
    bad = src.replace(FACTS, '    graph output rstdOt ir "rstd";\n'
                             '    graph attr sharedExpertNum = "one";\n'
                             '    graph attr epWorldSize = 2;\n'
                             '    graph input expandX: BFLOAT61;\n'
                             '    graph attr normEps after epRankId;\n'
                             '    graph input gamma ir "x";\n'
                             '    graph input residualX ir "residual-x" = 1;\n')
    op, diags = _load(bad, tmp_path)
    text = diags.render()
    assert op is None
    for message in ("error[E135]: unknown output 'rstdOt'",
                    "did you mean 'rstdOut'?",
                    "error[E107]: proto default \"one\" of attribute 'sharedExpertNum' is not an int64",
                    "error[E135]: required attribute 'epWorldSize' has no default in the proto either",
                    "error[E103]: unknown dtype 'BFLOAT61'",
                    "error[E135]: attribute 'normEps' can only follow another optional attribute",
                    "error[E135]: two parameters of the proto are named 'x'",
                    "error[E135]: proto name 'residual-x' of input 'residualX' is not a C identifier",
                    "error[E135]: input 'residualX' has no default or attribute place"):
        assert message in text, text
    assert "combine_add_rms_norm.spec:" in text  # located
