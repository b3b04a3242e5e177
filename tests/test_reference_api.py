"""The generated reference as an API for tools: env apart from attrs, every failing check at once, the op_api
stage, infer() without validation, the exported name maps; the old calls keep working."""
from __future__ import annotations

import pytest

from opgen.runtime import OpError
from opgen.runtime.scope import Meta

A3 = "ascend910_93"


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
