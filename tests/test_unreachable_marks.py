"""Checks the negative search cannot trip (#14 item 5): what it proves, and the marks the specs give the rest.

The build refuses a check that no accepted call changed in one or two parameters reaches unless the product's
declarations switch it off or the spec marks it (`unreachable ID "why";`, E205; corpus bad_backend/012 and 013,
bad/081). These tests hold the search's proofs to hand-picked calls: a proof must not be circular (a domain
check is not proven by the domain it enforces), and a mark that says a check is reachable only past the
search's reach names a call that the check, and nothing before it, rejects.
"""
from __future__ import annotations

import importlib.util

import pytest

from opgen.runtime.scope import Meta

from .conftest import build_reference


@pytest.fixture(scope="module")
def combine_ref(generated_dir):
    return build_reference("combine_v2.spec", generated_dir)


def _cases(generated_dir, snake: str):
    spec = importlib.util.spec_from_file_location(f"marks_{snake}", generated_dir / snake / "tests" / "cases.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_ids(errors) -> list[str]:
    return [e.message.rsplit("[", 1)[-1].rstrip("]") for e in errors]


# epWorldSize 8 with 7 shared expert ranks leaves one MoE rank holding all 1024 experts: localExpertNum *
# epWorldSize = 8192 > 2048. With 4 shared ranks the product is exactly 2048 and the call passes.
SHARED_HEAVY = dict(groupEp="ep", epWorldSize=8, epRankId=7, moeExpertNum=1024, sharedExpertNum=1)


@pytest.mark.parametrize("soc", ["ascend910_93", "ascend950"])
def test_the_local_expert_limit_rejects_a_call_three_changes_away(dispatch_ref, combine_ref, soc):
    bs, h, k, ep = 8, 7168, 8, 8
    dispatch_in = {"x": Meta((bs, h), "BFLOAT16"), "expertIds": Meta((bs, k), "INT32")}
    a = bs * ep * k  # a MoE rank's rows: globalBS * min(localExpertNum, K)
    combine_in = {"expandX": Meta((a, h), "BFLOAT16"), "expertIds": Meta((bs, k), "INT32"),
                  "assistInfoForCombine": Meta((a * 128,), "INT32"), "epSendCounts": Meta((ep * 1024,), "INT32"),
                  "expertScales": Meta((bs, k), "FLOAT32")}
    env = {"HCCL_BUFFSIZE": 4096}
    for ref, inputs in ((dispatch_ref, dispatch_in), (combine_ref, combine_in)):
        errors = ref.validate(inputs, dict(SHARED_HEAVY, sharedExpertRankNum=7), soc, env=env, all_errors=True)
        assert _first_ids(errors) == ["ascend910_93.moeExpertNum"]
        assert errors[0].param == "moeExpertNum" and "1024" in errors[0].message
        assert ref.validate(inputs, dict(SHARED_HEAVY, sharedExpertRankNum=4), soc, env=env, all_errors=True) == []


def test_a_domain_check_keeps_its_negative_test(dispatch_ref, generated_dir):
    # epWorldSize in {2, 8} on Ascend 950 is what domain.epWorldSize enforces: the proof that a check holds for
    # every value the domains allow must not use the domain of the check itself
    cases = _cases(generated_dir, "moe_distribute_dispatch_v2")
    negative = {(n["product"], n["check"]): n for n in cases.NEGATIVE}
    for soc, check in (("ascend910_93", "domain.tpWorldSize"), ("ascend950", "domain.commAlg"),
                       ("ascend950", "unsupported.groupTp"), ("ascend910_93", "unsupported.performanceInfoOptional")):
        assert (soc, check) in negative, f"{soc} {check} lost its negative test"
    proven = {(u["product"], u["check"]): u for u in cases.UNREACHABLE}
    # tpRankId's domain {0} (checked first) makes the unsupported check's default 0 always hold: a real proof
    assert proven[("ascend950", "unsupported.tpRankId")]["declared"]
    assert "tpRankId in {0}" in proven[("ascend950", "unsupported.tpRankId")]["reason"]


def test_every_mark_is_in_the_suite_with_its_reason(dispatch_ref, generated_dir):
    cases = _cases(generated_dir, "moe_distribute_dispatch_v2")
    marked = {(u["product"], u["check"]): u["marked"] for u in cases.UNREACHABLE if u["marked"]}
    assert ("ascend910b", "buffer.hierarchy_window") in marked
    assert marked[("ascend950", "ascend910_93.moeExpertNum")].startswith("localExpertNum * epWorldSize")
    assert all(u["declared"] or u["marked"] for u in cases.UNREACHABLE)
