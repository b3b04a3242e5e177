"""`ignored`: a parameter a product accepts whatever it is and never reads, as the documents' "当前版本不支持" /
"预留参数" mean it and the real tilings do it (where "unsupported" would reject a value the real op accepts).

- `input t ignored;` (optional inputs): no checks of it, present(t) false, the kernel never reads it. CombineV2's
  tpSendCountsOptional on every product (the real tilings read it only with TP, which no product has now).
- `attr a ignored;` (optional attributes): no domain / length checks, and the op (checks, formulas, tiling data,
  kernel) reads the default. DispatchV2's and CombineV2's groupTp, tpRankId, expertShardType and
  sharedExpertRankNum on Atlas A2 (the real A2 tilings never read groupTp / tpRankId and force expertShardType and
  sharedExpertRankNum to 0 after their null checks).

The expected values come from the hand-written loop oracle of test_reference_roundtrip and from the same world
run with the defaults; the generated suites run the C++ check core (and the twin) on the "-ignored" / non-default
positive cases the test generator adds.
"""
from __future__ import annotations

import numpy as np
import pytest

from opgen.runtime import OpError
from opgen.tools.diff import diff_ops

from .conftest import ROOT, build_reference, load_ok, load_src
from .test_reference_roundtrip import expected_combine, world

A2_IGNORED = {"groupTp": "tp", "tpRankId": 3, "expertShardType": 1, "sharedExpertRankNum": 1}


@pytest.fixture(scope="module")
def refs(generated_dir):
    return {n: build_reference(f"{n}.spec", generated_dir) for n in ("dispatch_v2", "combine_v2")}


def _attrs(W, E, **more):
    return {"groupEp": "ep", "epWorldSize": W, "epRankId": 0, "moeExpertNum": E, **more}


def _combine_inputs(inputs, d):
    return [{"expandX": d[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
             "assistInfoForCombine": d[r]["assistInfoForCombineOut"], "epSendCounts": d[r]["epRecvCountsOut"],
             "expertScales": inputs[r]["expertScalesOptional"]} for r in range(len(inputs))]


def test_the_model_marks_them_per_product():
    for name in ("dispatch_v2", "combine_v2"):
        op = load_ok(ROOT / "specs" / f"{name}.spec")
        assert op.views["ascend910b"].ignored_attrs == ("groupTp", "tpRankId", "expertShardType",
                                                        "sharedExpertRankNum")
        assert op.views["ascend910_93"].ignored_attrs == op.views["ascend950"].ignored_attrs == ()
        a2 = {c.id for c in op.views["ascend910b"].checks}
        assert "domain.tpRankId" not in a2 and not any(c.startswith("unsupported.groupTp") for c in a2)
        assert "domain.tpRankId" in {c.id for c in op.views["ascend910_93"].checks}
    combine = load_ok(ROOT / "specs" / "combine_v2.spec")
    assert all(v.ignored_inputs == ("tpSendCountsOptional",) for v in combine.views.values())


def test_ignored_attributes_are_read_as_their_default_on_a2(refs):
    """A2 DispatchV2 -> CombineV2 with non-default values of the ignored attributes: accepted, and every output
    is the one of the call with the defaults; the combined rows are the loop oracle's."""
    rng = np.random.default_rng(21)
    W, BS, H, K, E = 2, 4, 1024, 2, 4
    inputs = world(rng, W, BS, H, K, E)
    base = _attrs(W, E)
    odd = _attrs(W, E, **A2_IGNORED)
    want_d = refs["dispatch_v2"].run_world(inputs, base, "ascend910b")
    got_d = refs["dispatch_v2"].run_world(inputs, odd, "ascend910b")
    for r in range(W):
        assert sorted(got_d[r]) == sorted(want_d[r])
        for name in want_d[r]:
            assert np.asarray(got_d[r][name]).tobytes() == np.asarray(want_d[r][name]).tobytes(), (r, name)
    cin = _combine_inputs(inputs, got_d)
    got_c = refs["combine_v2"].run_world(cin, odd, "ascend910b")
    for r in range(W):
        want = expected_combine(inputs[r]["x"], inputs[r]["expertScalesOptional"], inputs[r]["expertIds"], E)
        assert got_c[r]["xOut"].tobytes() == want.tobytes()


@pytest.mark.parametrize("op", ["dispatch_v2", "combine_v2"])
def test_where_not_ignored_the_same_values_are_rejected(refs, op):
    """On Atlas A3 tpRankId keeps its documented domain {0} (current: 无TP域通信时传0即可; the real A3 combine
    tiling: "should be 0 in NoTp mode")."""
    rng = np.random.default_rng(5)
    W, BS, H, K, E = 2, 4, 1024, 2, 4
    x = world(rng, W, BS, H, K, E)

    def inputs(product):
        if op == "dispatch_v2":
            return x[0]
        return _combine_inputs(x, refs["dispatch_v2"].run_world(x, _attrs(W, E), product))[0]

    with pytest.raises(OpError) as err:
        refs[op].validate(inputs("ascend910_93"), _attrs(W, E, tpRankId=3), "ascend910_93")
    assert (err.value.code, err.value.param) == (561002, "tpRankId")
    refs[op].validate(inputs("ascend910b"), _attrs(W, E, tpRankId=3), "ascend910b")  # ignored there: accepted


def test_an_ignored_input_is_accepted_whatever_it_is_and_never_read(refs):
    """CombineV2's tpSendCountsOptional (current: 预留参数; code: read only when tpWorldSize is 2, which no product
    allows now): any tensor is accepted and the result is that of a call without it, on every product."""
    rng = np.random.default_rng(9)
    W, BS, H, K, E = 2, 4, 1024, 2, 4
    inputs = world(rng, W, BS, H, K, E)
    attrs = _attrs(W, E)
    odd = np.full((7, 3), -1.5, dtype=np.float32)  # neither the dtype nor the shape the parameter table gives
    for product in ("ascend910b", "ascend910_93"):
        cin = _combine_inputs(inputs, refs["dispatch_v2"].run_world(inputs, attrs, product))
        want = refs["combine_v2"].run_world(cin, attrs, product)
        got = refs["combine_v2"].run_world([dict(c, tpSendCountsOptional=odd) for c in cin], attrs, product)
        for r in range(W):
            assert got[r]["xOut"].tobytes() == want[r]["xOut"].tobytes(), product


def test_the_tiling_data_carries_the_default(dispatch_v2):
    """The C++ tiling copies the default into the tiling data, so the kernel cannot see the passed value."""
    from opgen.emit.pipeline import emit
    tiling = next(a for a in emit(dispatch_v2) if a.path.endswith("_tiling.cpp")).content
    a2 = tiling[tiling.index("class Ascend910bTiling"):tiling.index("class Ascend910_93Tiling")]
    a3 = tiling[tiling.index("class Ascend910_93Tiling"):]
    assert "tiling->tpRankId = 0;" in a2 and "tiling->expertShardType = 0;" in a2
    assert "tiling->tpRankId = p.tpRankId;" in a3


def test_docs_and_diff_say_it(dispatch_v2):
    from opgen.emit.pipeline import emit
    doc = next(a for a in emit(dispatch_v2) if a.path == "docs/aclnnMoeDistributeDispatchV2.md").content
    assert "- tpRankId：预留参数，传入任意值均不校验，按默认值0处理。" in doc
    assert '- groupTp：预留参数，传入任意值均不校验，按默认值""处理。' in doc
    # unsupported (must keep the default) -> ignored is one change, in both languages
    text = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    old_text = text.replace("        attr tpRankId ignored;\n", "        attr tpRankId unsupported;\n", 1)
    assert old_text != text
    old, d = load_src(old_text, "old.spec")
    assert old is not None, d.render()
    changes = [c for c in diff_ops(old, dispatch_v2).changes if "tpRankId" in c.subject]
    assert [(c.kind, c.subject, c.products, c.text, c.zh) for c in changes] == [
        ("ignored.added", "attr tpRankId", ("ascend910b",),
         "attr tpRankId was unsupported, is ignored here (any value accepted)",
         "由「当前版本不支持，需保持默认值」变更为「预留参数，传入任意值均不校验，按默认值处理」")]
