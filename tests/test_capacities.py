""">= shapes (capacities) and output buffer checks, in the reference and in the C++ check core.

CombineV2 takes expandX with at least A rows (doc "A >= …"; the real tiling checks dim0 >= A * tpWorldSize), so
a larger buffer is a valid call; DispatchV2 writes expandXOut rows up to its capacity, so an output buffer with
fewer rows is refused and a larger one accepted. The expected verdicts are written here, not read from a spec.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from opgen.harness import testkit
from opgen.runtime import OpError
from opgen.runtime.scope import Meta

from .conftest import ROOT

GENERATED = ROOT / "generated"
A3 = "ascend910_93"
W, BS, H, K, E = 4, 8, 1024, 2, 8           # epWorldSize, tokens, hidden, top-k, MoE experts
A = BS * W * min(E // W, K)                  # the rows a rank may receive (globalBs = BS * W)


def _module(snake: str, name: str):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{snake}.{name}")


@pytest.fixture(scope="module")
def combine():
    return _module("moe_distribute_combine_v2", "reference")


@pytest.fixture(scope="module")
def dispatch():
    return _module("moe_distribute_dispatch_v2", "reference")


def combine_call(rows: int, assist: int):
    inputs = {"expandX": Meta((rows, H), "BFLOAT16"), "expertIds": Meta((BS, K), "INT32"),
              "assistInfoForCombine": Meta((assist,), "INT32"), "epSendCounts": Meta((W * (E // W),), "INT32"),
              "expertScales": Meta((BS, K), "FLOAT32")}
    return inputs, dict(groupEp="ep", epWorldSize=W, epRankId=0, moeExpertNum=E)


def dispatch_call():
    return ({"x": Meta((BS, H), "BFLOAT16"), "expertIds": Meta((BS, K), "INT32")},
            dict(groupEp="ep", epWorldSize=W, epRankId=0, moeExpertNum=E))


@pytest.mark.parametrize("rows, assist, failing", [
    (A, A * 128, None),                       # exactly the capacity
    (A + 5, A * 128 + 7, None),               # larger buffers: valid
    (A - 1, A * 128, "shape.expandX"),        # one row short
    (A, A * 128 - 1, "shape.assistInfoForCombine"),
])
def test_combine_inputs_are_capacities(combine, rows, assist, failing):
    inputs, attrs = combine_call(rows, assist)
    errors = combine.validate(inputs, attrs, A3, all_errors=True)
    assert [e.message.rsplit("[", 1)[-1].rstrip("]") for e in errors] == ([failing] if failing else [])


def test_dispatch_output_buffers_are_checked_when_given(dispatch):
    inputs, attrs = dispatch_call()
    inferred = dispatch.infer(inputs, attrs, A3)
    rows, h = inferred["expandXOut"][0]
    assert (rows, h) == (A, H)  # the capacity, as the real infershape sets it
    dispatch.validate(inputs, attrs, A3)  # no buffers given: nothing to compare
    dispatch.validate(inputs, attrs, A3, out_shapes={"expandXOut": (rows + 3, h)})  # larger: fine
    for shape in ((rows - 1, h), (rows, h + 1), (rows,)):
        with pytest.raises(OpError) as err:
            dispatch.validate(inputs, attrs, A3, out_shapes={"expandXOut": shape})
        assert (err.value.code, err.value.param) == (561002, "expandXOut")
        assert err.value.message.endswith("[shape.expandXOut]")


@pytest.fixture(scope="module")
def dispatch_core(tmp_path_factory):
    cases = _module("moe_distribute_dispatch_v2", "tests.cases")
    try:
        return testkit.CheckCore.build(GENERATED / "moe_distribute_dispatch_v2", "moe_distribute_dispatch_v2",
                                       cases.FIELDS, cases.OUTPUTS, tmp_path_factory.mktemp("capacity"),
                                       cases.SIZE_FNS)
    except FileNotFoundError as err:
        pytest.skip(f"no C++ compiler here: {err}")


def test_the_check_core_reads_output_buffers(dispatch, dispatch_core):
    inputs, attrs = dispatch_call()
    full = dispatch.reference.normalize_attrs(dispatch.INFO, attrs)
    full.update(dispatch.ENV)
    metas = {n: (m.dtype, m.shape) for n, m in inputs.items()}
    shapes = [None, (A + 3, H), (A - 1, H), (A, H + 1)]
    lines = [dispatch_core.encode(metas, full, {}, None if s is None else {"expandXOut": s}) for s in shapes]
    got = [(r["code"], r["id"]) for r in dispatch_core.run(A3, lines)]
    assert got == [(0, ""), (0, ""), (561002, "shape.expandXOut"), (561002, "shape.expandXOut")]


def test_combine_setup_takes_a_from_the_rows_of_expand_x():
    """CombineSetup's A is expandX's dim 0 (the real tiling and infershape): at least the seed's bound on a MoE
    rank, and every shape that follows A (assistInfoForCombine, quantExpandXOut, commCmdInfoOut) follows it."""
    ref = _module("moe_distribute_combine_setup", "reference")
    attrs = {"groupEp": "ep", "epWorldSize": 2, "epRankId": 0, "moeExpertNum": 32, "sharedExpertNum": 0,
             "commType": 2}
    bs, k, h = 16, 6, 4096
    least = bs * 2 * min(16, k)  # globalBs * min(localExpertNum, K) = 192
    msg = 6144                   # Align512(Align32(H) + Align8(H) / 8 * 4) = Align512(4096 + 2048) for H = 4096
    for a in (least, least + 8):
        inputs = {"expandX": Meta((a, h), "FLOAT16"), "expertIds": Meta((bs, k), "INT32"),
                  "assistInfoForCombine": Meta((a * 128,), "INT32")}
        shapes = {name: shape for name, (shape, _) in ref.infer(inputs, attrs, "ascend950").items()}
        assert shapes == {"quantExpandXOut": (a, msg), "commCmdInfoOut": ((a + 2) * 16,)}
    inputs = {"expandX": Meta((least - 1, h), "FLOAT16"), "expertIds": Meta((bs, k), "INT32"),
              "assistInfoForCombine": Meta(((least - 1) * 128,), "INT32")}
    with pytest.raises(OpError) as err:
        ref.validate(inputs, attrs, "ascend950")
    assert (err.value.code, err.value.param) == (561002, "expandX") and "[op.a_rows]" in err.value.message
