"""`empty_absent`: an input passed as an empty tensor means what passing none means, as the current documents say
for DispatchV2's expertScalesOptional (Atlas A3 and Ascend 950DT: "传空指针或空Tensor时expertScalesOptional无效")
and CombineV2's expertScales (every product: "传入空Tensor时不进行加权，直接对专家输出求和").

The expected values come from the hand-written loop oracle of test_reference_roundtrip (weights of 1.0 are the
unweighted sum: a product with 1.0 is exact), and from the same world run with the input left out; the generated
suites run the C++ check core and the CPU twin on the "-empty" positive cases.
"""
from __future__ import annotations

import numpy as np
import pytest

from opgen.runtime import OpError

from .conftest import ROOT, build_reference, load_ok
from .test_reference_roundtrip import BF16, expected_combine, world

EMPTY = np.zeros((0,), dtype=np.float32)


@pytest.fixture(scope="module")
def refs(generated_dir):
    return {n: build_reference(f"{n}.spec", generated_dir) for n in ("dispatch_v2", "combine_v2")}


@pytest.fixture(scope="module")
def combine_v2():
    return load_ok(ROOT / "specs" / "combine_v2.spec")


def _attrs(W, E, **more):
    return {"groupEp": "ep", "epWorldSize": W, "epRankId": 0, "moeExpertNum": E, **more}


def test_model_marks_the_documented_inputs(dispatch_v2, combine_v2):
    assert [v.empty_absent_inputs for v in dispatch_v2.views.values()] == \
        [(), ("expertScalesOptional",), ("expertScalesOptional",)]  # A2, A3, Ascend 950 (inherited from A3)
    assert all(v.empty_absent_inputs == ("expertScales",) for v in combine_v2.views.values())
    # the null check of a required empty_absent input asks for the pointer, every other check for contents
    null = next(c for c in combine_v2.views["ascend910b"].checks if c.id == "null.expertScales")
    assert null.expr.fn == "passed"
    shape = next(c for c in combine_v2.views["ascend910b"].checks if c.id == "shape.expertScales")
    assert [c.fn for c in shape.conditions] == ["present"]


@pytest.mark.parametrize("product", ["ascend910_93", "ascend950"])
def test_dispatch_empty_expert_scales_is_no_expert_scales(refs, product):
    rng = np.random.default_rng(11)
    W, BS, H, K, E = 2, 4, 1024, 2, 4
    absent = world(rng, W, BS, H, K, E)
    for r in absent:
        del r["expertScalesOptional"]
    empty = [dict(r, expertScalesOptional=EMPTY) for r in absent]
    want = refs["dispatch_v2"].run_world(absent, _attrs(W, E), product)
    got = refs["dispatch_v2"].run_world(empty, _attrs(W, E), product)
    for r in range(W):
        assert sorted(got[r]) == sorted(want[r])
        for name in want[r]:
            assert np.asarray(got[r][name]).tobytes() == np.asarray(want[r][name]).tobytes(), (r, name)


def test_dispatch_empty_expert_scales_elsewhere_is_a_wrong_shape(refs):
    ref = refs["dispatch_v2"]
    x = np.zeros((4, 32), dtype=BF16)
    ids = np.array([[0], [1], [2], [3]], dtype=np.int32)
    # Atlas A2: the documents say nothing of empty tensors, so an empty one is a (BS, K) tensor of the wrong shape
    with pytest.raises(OpError) as err:
        ref.validate({"x": x, "expertIds": ids, "expertScalesOptional": EMPTY}, _attrs(2, 4), "ascend910b")
    assert (err.value.code, err.value.param) == (561002, "expertScalesOptional")
    # Atlas A3 hierarchy 要求为2D Tensor: an empty one is absent, which hierarchy rejects
    x = np.zeros((4, 1024), dtype=BF16)
    with pytest.raises(OpError) as err:
        ref.validate({"x": x, "expertIds": ids, "expertScalesOptional": EMPTY},
                     _attrs(16, 16, commAlg="hierarchy"), "ascend910_93")
    assert (err.value.code, err.value.param) == (561002, "expertScalesOptional")
    assert "hierarchy" in err.value.message


@pytest.mark.parametrize("product", ["ascend910b", "ascend910_93", "ascend950"])
@pytest.mark.parametrize("empty", [EMPTY, np.zeros((4, 0), dtype=np.float32)], ids=["0", "4x0"])
def test_combine_empty_expert_scales_sums_unweighted(refs, product, empty):
    rng = np.random.default_rng(5)
    W, BS, H, K, E = 2, 4, 1024, 2, 4
    inputs = world(rng, W, BS, H, K, E)
    attrs = _attrs(W, E)
    d = refs["dispatch_v2"].run_world(inputs, attrs, product)
    cin = [{"expandX": d[r]["expandXOut"], "expertIds": inputs[r]["expertIds"],
            "assistInfoForCombine": d[r]["assistInfoForCombineOut"], "epSendCounts": d[r]["epRecvCountsOut"],
            "expertScales": empty} for r in range(W)]
    out = refs["combine_v2"].run_world(cin, attrs, product)
    for r in range(W):
        ones = np.ones((BS, K), dtype=np.float32)
        want = expected_combine(inputs[r]["x"], ones, inputs[r]["expertIds"], E)
        assert out[r]["xOut"].tobytes() == want.tobytes(), f"rank {r}"


def test_combine_null_expert_scales_is_still_a_null_pointer(refs):
    ref = refs["combine_v2"]
    # W 2, E 4, BS 4, K 2: A = BS * W * min(localExpertNum, K) = 16
    inputs = {"expandX": np.zeros((16, 1024), dtype=BF16), "expertIds": np.zeros((4, 2), dtype=np.int32),
              "assistInfoForCombine": np.zeros((16 * 128,), dtype=np.int32),
              "epSendCounts": np.zeros((4,), dtype=np.int32)}
    with pytest.raises(OpError) as err:
        ref.validate(inputs, _attrs(2, 4), "ascend910_93")
    assert (err.value.code, err.value.param) == (161001, "expertScales")
    ref.validate(dict(inputs, expertScales=EMPTY), _attrs(2, 4), "ascend910_93")  # empty: accepted


def test_docs_say_it(dispatch_v2, combine_v2):
    from opgen.emit.pipeline import emit
    doc = next(a for a in emit(combine_v2) if a.path == "docs/aclnnMoeDistributeCombineV2.md").content
    assert doc.count("expertScales的数据类型支持FLOAT32，shape为$(\\mathrm{BS}, \\mathrm{K})$；传入空Tensor（任一维为0）时视为"
                     "未传入。") == 3
    doc = next(a for a in emit(dispatch_v2) if a.path == "docs/aclnnMoeDistributeDispatchV2.md").content
    assert doc.count("expertScalesOptional的数据类型支持FLOAT32，shape为$(\\mathrm{BS}, \\mathrm{K})$；传入空Tensor（任一维为"
                     "0）时视为未传入。") == 2
