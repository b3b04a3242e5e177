"""HCCL communication groups and their tilings: `comm <domain> <attr> [when <condition>];`.

The host tiling builds the HCCL tilings as the real MoE tilings do (AscendC::Mc2CcTilingConfig): the init tiling,
then one cc tiling per group in use, the first group always, a later group only where its `when` holds (the
real CombineV2 tiling builds its TP cc tiling only `if (tpWorldSize > 1)`) and never on a product that ignores or
rejects the group's name.  The kernels hand them to Hccl::InitV2 / SetCcTilingV2.  What the twin's tiling writes
is checked field by field in test_sim_tiling; the contract the twin's Hccl enforces in test_sim_twin.
"""
from __future__ import annotations

import re
from dataclasses import replace

from opgen.emit.pipeline import emit
from opgen.emit.tiling_layout import tiling_fields
from opgen.lang.expr import to_spec
from opgen.model.printer import print_op
from opgen.tools.diff import BEHAVIOUR, diff_ops

from .conftest import ROOT, load_ok, load_src


def _host_tiling(op) -> str:
    files = {a.path: a.content for a in emit(op)}
    return files[f"op_host/op_tiling/{op.snake_name}_tiling.cpp"]


def _uses_group(text: str) -> dict[str, str]:
    """Per product evaluator class: the body of UsesGroup1()."""
    out = {}
    for cls, body in re.findall(r"^class (\w+)Tiling : public Eval \{\n(.*?)^\};", text, re.S | re.M):
        m = re.search(r"bool UsesGroup1\(\)\s*\{\s*return (.*?);\s*\}", body)
        out[cls] = m.group(1) if m else None
    return out


def test_the_tp_group_is_in_use_only_with_tp():
    for path in ("specs/dispatch_v2.spec", "specs/combine_v2.spec", "specs/history/dispatch_v2_2026_05.spec"):
        op = load_ok(ROOT / path)
        ep, tp = op.comm_groups
        assert (ep.domain, ep.attr, ep.when) == ("ep", "groupEp", None)
        assert (tp.domain, tp.attr, to_spec(tp.when)) == ("tp", "groupTp", "tpWorldSize > 1")
        assert "comm tp groupTp when tpWorldSize > 1;" in print_op(op)


def test_host_builds_a_later_groups_cc_tiling_where_it_is_in_use():
    # current release: A2 ignores groupTp, 950 rejects it, A3 reads it (a reserved name) and tpWorldSize <= 1
    current = _uses_group(_host_tiling(load_ok(ROOT / "specs" / "dispatch_v2.spec")))
    assert current == {"Ascend910b": "false", "Ascend910_93": "p.tpWorldSize > 1", "Ascend950": "false"}
    text = _host_tiling(load_ok(ROOT / "specs" / "dispatch_v2.spec"))
    fill = text[text.index("ge::graphStatus FillHcclTiling("):]
    fill = fill[:fill.index("\n}\n")]
    assert "AscendC::Mc2CcTilingConfig config(p.groupEp, opType, algConfig);" in fill
    assert fill.index("GetTiling(tiling->mc2InitTiling)") < fill.index("GetTiling(tiling->mc2CcTiling1)") \
        < fill.index("if (inUse[1])") < fill.index("SetGroupName(p.groupTp)")
    # per product: the HcclCMDType and algorithm of the real tilings, AIV_ENGINE where no AICPU is launched
    cases = re.findall(r"case check::Soc::(\w+):\s*\{\n(.*?)break;", fill, re.S)
    got = {soc: (re.search(r"opType = (\d+)U;", b).group(1), re.search(r'algConfig = "(.*?)";', b).group(1),
                 "mc2tiling::AIV_ENGINE" in b) for soc, b in cases}
    assert got == {"kAscend910b": ("18", "BatchWrite=level1:fullmesh", False),
                   "kAscend910_93": ("8", "AlltoAll=level0:fullmesh;level1:pairwise", True),
                   "kAscend950": ("8", "AlltoAll=level0:fullmesh;level1:pairwise", True)}


def test_a_group_without_condition_is_in_use_where_its_name_is_set():
    text = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    text = text.replace("comm tp groupTp when tpWorldSize > 1;", "comm tp groupTp;")
    op, d = load_src(text, "dispatch_v2.spec")
    assert op is not None, d.render()
    assert _uses_group(_host_tiling(op))["Ascend910_93"] == "!p.groupTp.empty()"
    change = [c for c in diff_ops(load_ok(ROOT / "specs" / "dispatch_v2.spec"), op).changes if c.kind == "comm.when"]
    assert [(c.group, c.subject, c.old, c.new) for c in change] == \
        [(BEHAVIOUR, "comm tp", "tpWorldSize > 1", "its name is set")]


def test_only_an_op_that_communicates_carries_hccl_tilings():
    op = load_ok(ROOT / "specs" / "dispatch_setup.spec")
    hccl = [(f.ctype, f.name) for f in tiling_fields(op) if f.source == "hccl"]
    assert hccl == [("Mc2InitTiling", "mc2InitTiling"), ("Mc2CcTiling", "mc2CcTiling1")]
    assert tiling_fields(op)[:2] == [f for f in tiling_fields(op) if f.source == "hccl"]  # the init tiling first
    assert not [f for f in tiling_fields(replace(op, comm_groups=())) if f.source == "hccl"]
