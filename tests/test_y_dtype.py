"""DispatchV2's y_dtype, as the real op has it (hicann/ops-transformer mc2/moe_distribute_dispatch_v2):

- the OpDef's last attribute, `Attr("y_dtype").AttrType(OPTIONAL).Int(ge::DT_UNDEFINED)` (DT_UNDEFINED = 28);
- no aclnn entry point takes it: the op_api base passes expandXOut's dtype (`expandXOut->GetDataType()`);
- only Ascend 950's InferDataType reads it: a value other than DT_UNDEFINED is expandXOut's dtype (graph mode's
  way to choose it, e.g. HIFLOAT8 without quantisation), and the per-quantMode dtype lists then apply.

The expected dtypes are the ge::DataType values of graph/types.h, written out here (not read from the dtype
table the spec is lowered with).
"""
from __future__ import annotations

import numpy as np
import pytest

from opgen.emit.pipeline import emit
from opgen.runtime import OpError

from .conftest import build_reference
from .test_reference_roundtrip import BF16

GE = {"FLOAT16": 1, "INT8": 2, "BFLOAT16": 27, "UNDEFINED": 28, "HIFLOAT8": 34, "FLOAT8_E5M2": 35,
      "FLOAT8_E4M3FN": 36}


@pytest.fixture(scope="module")
def ref(generated_dir):
    return build_reference("dispatch_v2.spec", generated_dir)


def _call(quant_mode=0, **attrs):
    rng = np.random.default_rng(3)
    inputs = {"x": rng.standard_normal((4, 1024)).astype(BF16),
              "expertIds": np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=np.int32)}
    return inputs, {"groupEp": "ep", "epWorldSize": 2, "epRankId": 0, "moeExpertNum": 2, "quantMode": quant_mode,
                    **attrs}


def _expand_dtype(ref, product, **attrs):
    inputs, a = _call(**attrs)
    return ref.infer(inputs, a, product)["expandXOut"][1]


def test_the_opdef_declares_it_last_and_the_entry_points_pass_expand_x_out_dtype(dispatch_v2):
    files = {a.path: a.content for a in emit(dispatch_v2)}
    opdef = files["op_host/moe_distribute_dispatch_v2_def.cpp"]
    attrs = [line.strip() for line in opdef.splitlines() if "this->Attr(" in line]
    assert attrs[-1] == 'this->Attr("y_dtype").AttrType(OPTIONAL).Int(28);'
    assert len([a for a in attrs if '"y_dtype"' in a]) == 1
    for v in ("v2", "v3", "v4"):
        name = "op_api/aclnn_moe_distribute_dispatch_v2.cpp" if v == "v2" else \
            f"op_api/aclnn_moe_distribute_dispatch_{v}.cpp"
        body = files[name]
        assert "(expandXOut != nullptr ? static_cast<int64_t>(expandXOut->GetDataType()) : 28) /* yDtype */" in body
        assert '#include "opdev/common_types.h"' in body
        header = files[name.replace(".cpp", ".h")]
        decl = header[header.index("ACLNN_API aclnnStatus"):header.index(");", header.index("ACLNN_API"))]
        assert "yDtype" not in decl  # no document's signature has it


def test_only_ascend_950_reads_it(ref):
    assert _expand_dtype(ref, "ascend950") == "BFLOAT16"  # DT_UNDEFINED: the quantMode rule (x's dtype)
    assert _expand_dtype(ref, "ascend950", yDtype=GE["HIFLOAT8"]) == "HIFLOAT8"
    assert _expand_dtype(ref, "ascend950", quant_mode=2, yDtype=GE["FLOAT8_E4M3FN"]) == "FLOAT8_E4M3FN"
    for product in ("ascend910b", "ascend910_93"):
        assert _expand_dtype(ref, product, yDtype=GE["HIFLOAT8"]) == "BFLOAT16"
        assert _expand_dtype(ref, product, quant_mode=2, yDtype=GE["FLOAT8_E4M3FN"]) == "INT8"


def test_graph_mode_hifloat8_is_the_aclnn_call_with_a_hifloat8_output(ref):
    """quantMode 0 with y_dtype HIFLOAT8 on Ascend 950: the rows the call with a HIFLOAT8 expandXOut gives."""
    inputs, a = _call()
    world = [inputs, dict(inputs, expertIds=inputs["expertIds"][::-1].copy())]
    by_attr = ref.run_world(world, dict(a, yDtype=GE["HIFLOAT8"]), "ascend950")
    by_output = ref.run_world(world, a, "ascend950", {"expandXOut": "HIFLOAT8"})
    for r in range(2):
        assert np.asarray(by_attr[r]["expandXOut"]).tobytes() == np.asarray(by_output[r]["expandXOut"]).tobytes()


@pytest.mark.parametrize("quant_mode, y, shown", [(3, GE["INT8"], '"INT8"'), (0, 99, "(undefined)")])
def test_a_dtype_the_mode_does_not_take_is_rejected_on_ascend_950(ref, quant_mode, y, shown):
    inputs, a = _call(quant_mode=quant_mode, yDtype=y)
    with pytest.raises(OpError) as err:
        ref.validate(inputs, a, "ascend950")
    assert (err.value.code, err.value.param) == (161002, "expandXOut")
    assert f"has incorrect value {shown}" in str(err.value)
    if quant_mode == 0:
        ref.validate(inputs, a, "ascend910_93")  # not read there
