"""The generated reference as an API for tools: env apart from attrs, every failing check at once, the op_api
stage, infer() without validation, the exported name maps; the old calls keep working. Bad calls: expert ids
outside the documents' range, shapes told as concrete numbers, a world given as a dict, numpy dtypes for dtype
names; and no numpy warning where the semantics define the result (this module runs with warnings as errors)."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from opgen.runtime import OpError
from opgen.runtime.scope import Meta

pytestmark = pytest.mark.filterwarnings("error")

A3 = "ascend910_93"
OP = "MoeDistributeDispatchV2"


def call(bs=8, h=7168, k=8):
    inputs = {"x": Meta((bs, h), "BFLOAT16"), "expertIds": Meta((bs, k), "INT32")}
    attrs = dict(groupEp="ep", epWorldSize=16, epRankId=0, moeExpertNum=16)
    return inputs, attrs


def test_env_is_kept_apart_from_attrs(dispatch_ref):
    inputs, attrs = call()
    dispatch_ref.validate(inputs, attrs, A3, env={"HCCL_BUFFSIZE": 400})
    errors = dispatch_ref.validate(inputs, attrs, A3, env={"HCCL_BUFFSIZE": 1}, all_errors=True)
    assert errors and {e.param for e in errors} == {"HCCL_BUFFSIZE"}  # the window checks, nothing else
    with pytest.raises(OpError, match="reads no environment variable 'HCCL_BUFSIZE'"):
        dispatch_ref.validate(inputs, attrs, A3, env={"HCCL_BUFSIZE": 400})
    with pytest.raises(OpError, match="given twice"):
        dispatch_ref.validate(inputs, dict(attrs, HCCL_BUFFSIZE=300), A3, env={"HCCL_BUFFSIZE": 400})


def test_all_errors_lists_every_failing_check_in_order(dispatch_ref):
    inputs, attrs = call(k=20)
    attrs.update(epRankId=99, moeExpertNum=15)
    errors = dispatch_ref.validate(inputs, attrs, A3, all_errors=True)
    ids = [e.message.rsplit("[", 1)[-1].rstrip("]") for e in errors]
    assert len(ids) >= 3 and ids == sorted(ids, key=[c.id for c in dispatch_ref.INFO.checks[A3]].index)
    assert {"epRankId", "moeExpertNum"} <= {e.param for e in errors}
    with pytest.raises(OpError) as first:  # the first of them is what validate() raises
        dispatch_ref.validate(inputs, attrs, A3)
    assert first.value.message == errors[0].message
    assert dispatch_ref.validate(*call(), A3, all_errors=True) == []


def test_the_op_api_stage_leaves_tiling_checks_to_tiling(dispatch_ref):
    inputs, attrs = call()
    attrs["moeExpertNum"] = 15  # not a multiple of the MoE ranks: a tiling check
    with pytest.raises(OpError) as err:
        dispatch_ref.validate(inputs, attrs, A3)
    assert err.value.code == 561002
    dispatch_ref.validate(inputs, attrs, A3, stage="op_api")  # GetWorkspaceSize passes it on
    inputs["x"] = Meta((8, 7168), "INT32")  # a dtype: the op_api stage rejects it, with 161002
    with pytest.raises(OpError) as err:
        dispatch_ref.validate(inputs, attrs, A3, stage="op_api")
    assert (err.value.code, err.value.param) == (161002, "x")
    with pytest.raises(ValueError, match="stage 'opapi'"):
        dispatch_ref.validate(inputs, attrs, A3, stage="opapi")


def test_infer_without_validation(dispatch_ref):
    inputs, attrs = call()
    attrs["moeExpertNum"] = 15
    with pytest.raises(OpError):
        dispatch_ref.infer(inputs, attrs, A3)
    shapes = dispatch_ref.infer(inputs, attrs, A3, validate=False)
    assert shapes["expandXOut"][0][1] == 7168 and shapes["expandXOut"][1] == "BFLOAT16"


def test_name_maps(dispatch_ref):
    assert dispatch_ref.IR_NAMES["epWorldSize"] == "ep_world_size"
    assert dispatch_ref.IR_NAMES["scalesOptional"] == "scales"
    assert set(dispatch_ref.IR_NAMES) == set(dispatch_ref.INPUTS) | set(dispatch_ref.ATTRS) | set(dispatch_ref.OUTPUTS)
    assert dispatch_ref.SOC_NAMES == {"Ascend950": "ascend950", "Ascend910_93": "ascend910_93",
                                      "Ascend910B": "ascend910b"}


# ---- bad calls: exact messages --------------------------------------------------------------------------------

W, BS, H, K, E = 2, 4, 1024, 2, 4
IDS = [[0, 1], [2, 3], [1, 2], [3, 0]]
WORLD_ATTRS = dict(groupEp="ep", epWorldSize=W, moeExpertNum=E)


def world(ids=IDS, x=None):
    rng = np.random.default_rng(7)
    return [{"x": (rng.standard_normal((BS, H)) if x is None else x).astype(np.float16),
             "expertIds": np.array(ids, dtype=np.int32)} for _ in range(W)]


def exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def ids_message(value, t, k) -> str:
    return (f"Parameter expertIds of operator {OP} has incorrect value {value} at expertIds[{t}][{k}]. It should be "
            f"an expert id in [0, 4) = [0, moeExpertNum + zeroExpertNum + copyExpertNum + constExpertNum) with "
            f"moeExpertNum=4, zeroExpertNum=0, copyExpertNum=0, constExpertNum=0.")


@pytest.mark.parametrize("bad", [99, 4, -1])
def test_expert_ids_outside_the_documented_range(dispatch_ref, bad):
    ids = [[0, 1], [2, 3], [1, bad], [3, 0]]
    with pytest.raises(OpError, match=exact(ids_message(bad, 2, 1))) as err:
        dispatch_ref.run_world(world(ids), WORLD_ATTRS, A3)
    assert (err.value.code, err.value.param) == (161002, "expertIds")
    with pytest.raises(OpError, match=exact(ids_message(bad, 2, 1))):  # validate() reads the data it is given
        dispatch_ref.validate(world(ids)[0], dict(WORLD_ATTRS, epRankId=0), A3)
    assert dispatch_ref.validate(world(ids)[0], dict(WORLD_ATTRS, epRankId=0), A3, all_errors=True)[0].message == \
        ids_message(bad, 2, 1)


def test_special_expert_ids_widen_the_range_and_masked_pairs_are_not_read(dispatch_ref):
    ids = [[0, 1], [2, 3], [1, 4], [3, 0]]  # 4 is the first zero expert's id
    dispatch_ref.run_world(world(ids), dict(WORLD_ATTRS, zeroExpertNum=1), A3)
    with pytest.raises(OpError, match=re.escape("incorrect value 5 at expertIds[2][1]. It should be an expert id "
                                                "in [0, 5) = [0, moeExpertNum + zeroExpertNum + copyExpertNum + "
                                                "constExpertNum) with moeExpertNum=4, zeroExpertNum=1, ")):
        dispatch_ref.run_world(world([[0, 1], [2, 3], [1, 5], [3, 0]]), dict(WORLD_ATTRS, zeroExpertNum=1), A3)
    masked = world([[0, 1], [2, 3], [1, 99], [3, 0]])
    for r in masked:  # the pair holding 99 is masked out: the op never routes it
        r["xActiveMaskOptional"] = np.array([[1, 1], [1, 1], [1, 0], [1, 1]], dtype=bool)
    dispatch_ref.run_world(masked, WORLD_ATTRS, A3)


def test_shape_errors_state_the_concrete_shape(dispatch_ref):
    bad = [dict(r, expertIds=r["expertIds"][:3]) for r in world()]
    with pytest.raises(OpError, match=exact(
            f"Parameter expertIds of operator {OP} has incorrect value (3, 2). It should be shape (4, K) = (BS, K) "
            f"with BS=4. [shape.expertIds]")):
        dispatch_ref.run_world(bad, WORLD_ATTRS, A3)
    inputs = dict(world()[0], expertScalesOptional=np.ones((4, 3), np.float32))
    with pytest.raises(OpError, match=exact(
            f"Parameter expertScalesOptional of operator {OP} has incorrect value (4, 3). It should be shape (4, 2) "
            f"= (BS, K) with BS=4, K=2. [shape.expertScalesOptional]")):
        dispatch_ref.validate(inputs, dict(WORLD_ATTRS, epRankId=0), A3)
    # a conditional shape states the branch the call takes, never the rule's if … then … else
    with pytest.raises(OpError, match=exact(
            f"Parameter dynamicScalesOut of operator {OP} has incorrect value (8, 8). It should be shape (16,) = (A,) "
            f"with quantMode=2, A=16. [shape.dynamicScalesOut]")):
        dispatch_ref.validate(world()[0], dict(WORLD_ATTRS, epRankId=0, quantMode=2), A3,
                              out_shapes={"dynamicScalesOut": (8, 8)})
    with pytest.raises(OpError, match=exact(
            f"Parameter expandXOut of operator {OP} has incorrect value (15, 1024). It should be shape (>= 16, 1024) "
            f"= (>= A, H) with A=16, H=1024. [shape.expandXOut]")):  # A = BS * epWorldSize * min(localExpertNum, K)
        dispatch_ref.validate(world()[0], dict(WORLD_ATTRS, epRankId=0), A3, out_shapes={"expandXOut": (15, 1024)})


def test_a_world_is_a_list_of_ranks(dispatch_ref):
    ranks = world()
    with pytest.raises(OpError, match=exact(f"inputs of {OP} must be a list with one mapping per rank (rank i at "
                                            f"index i), got dict")) as err:
        dispatch_ref.run_world(dict(enumerate(ranks)), WORLD_ATTRS, A3)
    assert (err.value.code, err.value.param) == (161002, "inputs")
    with pytest.raises(OpError, match=exact(f"inputs[1] of {OP} must be a mapping (name -> value), got ndarray")):
        dispatch_ref.run_world([ranks[0], ranks[1]["x"]], WORLD_ATTRS, A3)
    with pytest.raises(OpError, match=exact(f"attrs of {OP} must be a list with one mapping per rank (rank i at "
                                            f"index i), got str")):
        dispatch_ref.run_rank(0, ranks, "ep", A3)


@pytest.mark.parametrize("dtype", [np.int8, np.dtype("int8"), "INT8"], ids=["type", "dtype", "name"])
def test_numpy_dtypes_name_cann_dtypes(dispatch_ref, dtype):
    attrs = dict(WORLD_ATTRS, quantMode=2)
    want = dispatch_ref.run_world(world(), attrs, A3, out_dtypes={"expandXOut": "INT8"})
    got = dispatch_ref.run_world(world(), attrs, A3, out_dtypes={"expandXOut": dtype})
    for g, w in zip(got, want):
        assert all(np.array_equal(g[n], w[n]) for n in w) and g["expandXOut"].dtype == np.int8
    shapes = dispatch_ref.infer({"x": Meta((8, 7168), ml_dtypes.bfloat16), "expertIds": Meta((8, 8), np.int32)},
                                dict(groupEp="ep", epWorldSize=16, epRankId=0, moeExpertNum=16), A3)
    assert shapes["expandXOut"][1] == "BFLOAT16"


def test_a_dtype_no_cann_dtype_names(dispatch_ref):
    with pytest.raises(OpError, match=exact(
            f"out_dtypes['expandXOut'] of {OP}: complex64 is no CANN dtype; give a CANN name (BFLOAT16, BOOL, "
            "FLOAT16, FLOAT32, FLOAT4_E1M2, FLOAT4_E2M1, FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT8_E8M0, HIFLOAT8, INT32, "
            "INT64, INT8, UINT8) or one of the numpy dtypes float16, float32, int8, int32, int64, uint8, bool, "
            "bfloat16, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn")) as err:
        dispatch_ref.run_world(world(), WORLD_ATTRS, A3, out_dtypes={"expandXOut": np.complex64})
    assert err.value.param == "expandXOut"


# ---- defined results without numpy warnings (pytestmark: warnings are errors) ----------------------------------

def _rows_of(out, src_rank, token, k):
    """expandXOut rows and scales a rank received from (src_rank, token, k), by the triples of A3's assistInfo."""
    triples = out["assistInfoForCombineOut"][:3 * len(out["dynamicScalesOut"])].reshape(-1, 3)
    n = int(out["epRecvCountsOut"][-1])
    return [i for i in range(n) if tuple(triples[i]) == (src_rank, token, k)]


def test_pertoken_quant_of_an_all_zero_row(dispatch_ref):
    """quantMode 2 of a padding row of zeros: the kernel's ds = 127 / 0 = inf (a scalar fp32 divide), x * ds =
    0 * inf = NaN, cast to INT8 (RINT, saturating: NaN -> 0) = 0, scale 1 / inf = 0 (formats.md §4.2; code:
    mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2_quant.h QuantDynamicPerToken)."""
    x = np.random.default_rng(3).standard_normal((BS, H))
    x[1] = 0
    out = dispatch_ref.run_world(world(x=x), dict(WORLD_ATTRS, quantMode=2), A3)
    for k, e in enumerate(IDS[1]):  # token 1 goes to experts 2 and 3: rank 1
        (row,) = _rows_of(out[e // 2], 0, 1, k)
        assert not out[e // 2]["expandXOut"][row].any() and out[e // 2]["dynamicScalesOut"][row] == 0.0
    (row,) = _rows_of(out[0], 0, 0, 0)
    assert np.abs(out[0]["expandXOut"][row]).max() == 127  # a non-zero row keeps its amax at 127


def test_pertoken_quant_of_nan_and_inf_rows(dispatch_ref):
    """IEEE fp32 as on the device: a NaN element makes amax NaN, so ds, the scale and every x * ds are NaN (INT8:
    0); an inf element gives ds = 127 / inf = 0, scale 1 / 0 = inf and x * 0 = 0 (inf * 0 = NaN -> 0)."""
    x = np.random.default_rng(4).standard_normal((BS, H))
    x[2, 5], x[3, 6] = np.nan, np.inf
    out = dispatch_ref.run_world(world(x=x), dict(WORLD_ATTRS, quantMode=2), A3)
    for token, scale in ((2, np.nan), (3, np.inf)):
        for k, e in enumerate(IDS[token]):
            (row,) = _rows_of(out[e // 2], 1, token, k)
            assert not out[e // 2]["expandXOut"][row].any()
            np.testing.assert_equal(out[e // 2]["dynamicScalesOut"][row], np.float32(scale))
    copied = dispatch_ref.run_world(world(x=x), WORLD_ATTRS, A3)  # quantMode 0 moves NaN and inf unchanged
    (row,) = _rows_of(copied[1], 0, 2, 1)
    assert np.isnan(copied[1]["expandXOut"][row][5])
