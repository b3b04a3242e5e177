"""Paired ops agree on what they share: the documents require every shared parameter to take the same value on
every card and in the paired op ("且和CombineV2系列算子对应参数也保持一致"), so a value one op of a pair accepts
and the other rejects is a call sequence no caller can make. For every pair (`pairs_with`) and every product
both support: each attribute both declare has the same domain, each tensor both declare the same dtypes.

The differences left are listed here with the statement behind them; the test fails on any other difference
and on a listed one that is gone (then remove it from the list).
"""
from __future__ import annotations

import itertools
import re
from pathlib import Path

from opgen.core.diagnostics import Diagnostics
from opgen.frontend.loader import load
from opgen.frontend.pairs import op_pairs
from opgen.model.spec_text import domain_text

ROOT = Path(__file__).resolve().parent.parent
OPS = {op.name: op for op in (load(p, Diagnostics()) for p in sorted((ROOT / "specs").glob("*.spec")))}

# (op, op, product, parameter): why the two ops differ there. The current Setup/Teardown documents agree on
# H, BS, K, moeExpertNum and epWorldSize; on shared experts the Dispatch documents contradict themselves (the
# Ascend 950DT list: sharedExpertNum [0, 4]; 约束说明: only 0), so the Dispatch specs follow the real code there
# ([0, 4]), while the Combine documents and code allow none.
_SHARED = "the Combine ops support no shared experts (document and code); the Dispatch documents contradict " \
          "themselves and the real Dispatch tilings accept [0, 4]"
_ARN = "MoeDistributeCombineAddRmsNorm", "MoeDistributeDispatchV2"
_ARN_NARROWER = "the CombineAddRmsNorm documents accept a subset of DispatchV2's values (a caller of the pair uses " \
                "the intersection)"
KNOWN = {
    (*_ARN, "ascend910_93", "commAlg"): f"{_ARN_NARROWER}: commAlg 预留字段，当前版本不支持，传入空指针即可",
    (*_ARN, "ascend950", "commAlg"): f"{_ARN_NARROWER}: commAlg 预留字段，当前版本不支持，传入空指针即可",
    (*_ARN, "ascend910_93", "sharedExpertNum"): f"{_ARN_NARROWER}: sharedExpertNum 当前版本不支持，仅支持传入0",
    (*_ARN, "ascend950", "sharedExpertNum"): f"{_ARN_NARROWER}: sharedExpertNum 当前版本不支持，仅支持传入0",
    (*_ARN, "ascend910_93", "sharedExpertRankNum"): f"{_ARN_NARROWER}: sharedExpertRankNum 仅支持传入0",
    (*_ARN, "ascend950", "sharedExpertRankNum"): f"{_ARN_NARROWER}: sharedExpertRankNum 仅支持传入0",
    (*_ARN, "ascend950", "epWorldSize"): f"{_ARN_NARROWER}: epWorldSize (1, 768] (aclnnMoeDistributeCombineAddRmsNormV2.md) "
                                          "where DispatchV2's current Ascend 950 documents give [2, 1024]",
    ("MoeDistributeCombineV2", "MoeDistributeDispatchV2", "ascend950", "commAlg"):
        "the current CombineV2 documents take no commAlg on Ascend 950DT (commAlg当前版本不支持，传空指针即可) and its "
        "arch35 tiling rejects fullmesh_v1 / fullmesh_v2 ('' or 'ccu' only); DispatchV2's list \"\", fullmesh_v1, "
        "fullmesh_v2 (a caller of the pair uses \"\")",
    ("MoeDistributeCombineSetup", "MoeDistributeCombineTeardown", "ascend950", "commQuantMode"):
        "CombineSetup declares commQuantMode without a domain (its quant_modes 0 decide); Teardown in [0, 2]",
    ("MoeDistributeCombineSetup", "MoeDistributeDispatchSetup", "ascend950", "sharedExpertNum"): _SHARED,
    ("MoeDistributeCombineSetup", "MoeDistributeDispatchTeardown", "ascend950", "sharedExpertNum"): _SHARED,
    ("MoeDistributeCombineTeardown", "MoeDistributeDispatchSetup", "ascend950", "sharedExpertNum"): _SHARED,
    ("MoeDistributeCombineTeardown", "MoeDistributeDispatchTeardown", "ascend950", "sharedExpertNum"): _SHARED,
}


def pairs():
    yield from op_pairs(list(OPS.values()))


def differences() -> dict:
    out = {}
    for a, b in pairs():
        for soc in sorted(set(a.views) & set(b.views)):
            va, vb = a.views[soc], b.views[soc]
            attrs_a, attrs_b = {x.name: x for x in va.attrs}, {x.name: x for x in vb.attrs}
            for name in sorted(set(attrs_a) & set(attrs_b)):
                da, db = (domain_text(x.domain) if x.domain else "any" for x in (attrs_a[name], attrs_b[name]))
                if da != db:
                    out[(a.name, b.name, soc, name)] = f"{da} | {db}"
            tensors_a = {t.name: t for t in va.inputs + va.outputs}
            tensors_b = {t.name: t for t in vb.inputs + vb.outputs}
            for name in sorted(set(tensors_a) & set(tensors_b)):
                if tensors_a[name].dtypes != tensors_b[name].dtypes:
                    out[(a.name, b.name, soc, name)] = f"{tensors_a[name].dtypes} | {tensors_b[name].dtypes}"
    return out


def test_the_pairs_are_found():
    found = {(a.name, b.name) for a, b in pairs()}
    assert ("MoeDistributeCombineV2", "MoeDistributeDispatchV2") in found
    assert ("MoeDistributeCombineAddRmsNorm", "MoeDistributeDispatchV2") in found
    assert ("MoeDistributeCombineV3", "MoeDistributeDispatchV3") in found
    # the two V2 pairs, the V3 pair; the Setup/Teardown four
    assert len(found) == 3 + len(list(itertools.combinations(range(4), 2)))


def test_paired_ops_share_domains_and_dtypes():
    got = differences()
    unexplained = {k: v for k, v in got.items() if k not in KNOWN}
    assert not unexplained, unexplained
    gone = sorted(set(KNOWN) - set(got))
    assert not gone, f"no longer different, remove from KNOWN: {gone}"


def test_paired_ops_give_special_experts_the_same_id_ranges():
    """A dispatch leaves the ids of its special experts unsent and its combine computes them: the two must cut the
    ids after the MoE experts into the same ranges (same kinds, same count attributes, same order), or a route
    the dispatch keeps home is one the combine reads as another kind (the current documents give the ranges on
    both sides: "合法的零专家的ID的值是[moeExpertNum, moeExpertNum + zeroExpertNum)" ...)."""
    checked = 0
    for a, b in pairs():
        ranges_a, ranges_b = ([(s.name, s.count) for s in op.specials] for op in (a, b))
        if ranges_a or ranges_b:
            assert ranges_a == ranges_b, (a.name, b.name, ranges_a, ranges_b)
            assert {s.body is None for s in a.specials} != {s.body is None for s in b.specials}, \
                "one op of the pair leaves the ids unsent, the other computes them"
            checked += 1
    assert checked == 3  # DispatchV2 with CombineV2 and with CombineAddRmsNorm, DispatchV3 with CombineV3


def test_opgen_check_of_a_pair_warns_at_both_domains(capsys, monkeypatch):
    """`opgen check` of two paired specs reports each shared attribute whose domain differs per product, as a
    warning at the domain in both specs (exit 0); the known differences above are exactly these."""
    from opgen import cli
    monkeypatch.chdir(ROOT)  # the messages name the specs as given
    code = cli.main(["check", "specs/dispatch_v2.spec", "specs/combine_add_rms_norm.spec"])
    err = capsys.readouterr().err
    assert code == 0, err
    heads = re.findall(r"^(\S+):\d+:\d+: warning\[E134\]: paired ops (\w+) and (\w+) disagree on (\w+) on (\w+)", err,
                       re.M)
    assert {(a, b, soc, p) for _, a, b, p, soc in heads} == \
        {k for k in KNOWN if k[:2] == _ARN}
    assert {f for f, *_ in heads} == {"specs/dispatch_v2.spec", "specs/combine_add_rms_norm.spec"}
    # the epWorldSize domain of CombineAddRmsNorm, found in the spec as DispatchV2's below
    arn = (ROOT / "specs" / "combine_add_rms_norm.spec").read_text(encoding="utf-8").splitlines()
    arn_line = next(i for i, l in enumerate(arn, 1) if l.startswith("    attr epWorldSize: int64 in [2, 768]"))
    assert (f"specs/combine_add_rms_norm.spec:{arn_line}:5: warning[E134]: paired ops MoeDistributeCombineAddRmsNorm "
            "and MoeDistributeDispatchV2 disagree on epWorldSize on ascend950: MoeDistributeCombineAddRmsNorm accepts "
            "in [2, 768], MoeDistributeDispatchV2 in [2, 1024]\n") in err
    # the 950 domain of DispatchV2 (found in the spec, so an edit above it does not move the expectation)
    lines = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8").splitlines()
    line = next(i for i, l in enumerate(lines, 1) if l.strip() == "attr epWorldSize in [2, 1024];")
    assert f"      = help: the other side is declared at specs/dispatch_v2.spec:{line}:14\n" in err


def test_opgen_check_of_a_pair_no_world_can_satisfy_is_an_error(tmp_path, capsys):
    from opgen import cli
    src = (ROOT / "specs" / "combine_v2.spec").read_text(encoding="utf-8")
    assert src.count("        attr epWorldSize in [2, 768];") == 1
    bad = tmp_path / "combine_v2.spec"
    bad.write_text(src.replace("        attr epWorldSize in [2, 768];", "        attr epWorldSize in [1000, 2000];"),
                   encoding="utf-8")
    code = cli.main(["check", str(ROOT / "specs" / "dispatch_v2.spec"), str(bad)])
    err = capsys.readouterr().err
    assert code == 1, err
    errors = [l for l in err.splitlines() if "error[E134]" in l]
    assert len(errors) == 2 and all("disagree on epWorldSize on ascend910_93" in l and
                                    "no value is accepted by both" in l for l in errors), err
    assert "Traceback" not in err
