"""The torch_npu functions that call the shipped ops, and where their keywords differ from the aclnn parameters.

Pure data read by the test emitter (``opgen.emit.tests``): a generated suite's NPU mode calls
``torch_npu.<function>`` with one keyword per aclnn parameter, named by the rule of ``opgen.emit.tests.npu_kwarg``
(IR name, else snake_case without "Optional"), except where a row below says otherwise.  An op with no row has no
torch_npu function (its NPU mode skips the shipped op and says so).  The rehearsal (tests/test_npu_rehearsal.py)
checks every call these rows produce against torch_npu's real schema file.

* ``renames``: aclnn parameter -> the schema's keyword;
* ``fixed``: aclnn parameters the schema lacks -> the value torch_npu's wrapper passes the aclnn for them (a case
  with another value cannot go through the shipped op);
* ``dtype_keywords``: the schema's ``int? *_dtype`` keywords -> the tensor (input or output) whose CANN dtype
  they name (``opgen.harness.torch_dtypes``); ``carried``: aclnn attributes such a keyword replaces -> the tensor
  whose ge dtype they take (the wrapper passes the dtype on the tensor, not as an attribute).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TorchNpuFunction:
    renames: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    dtype_keywords: dict = field(default_factory=dict)
    carried: dict = field(default_factory=dict)


# code: shared/cann/torch_npu/op_plugin_functions.moe_distribute.yaml (the schemas) and *OpApi.cpp (the wrappers)
TORCH_NPU_FUNCTIONS: dict[str, TorchNpuFunction] = {
    # x_dtype / scales_dtype name what the tensors carry (HiF8, FP4 in uint8); y_dtype the expandX dtype
    # code: MoeDistributeDispatchV2KernelOpApi.cpp (x_wrapper, scales_wrapper, expand_x_wrapper)
    "npu_moe_distribute_dispatch_v2": TorchNpuFunction(
        dtype_keywords={"x_dtype": "x", "scales_dtype": "scalesOptional", "y_dtype": "expandXOut"},
        carried={"yDtype": "expandXOut"}),
    # the wrapper passes nullopt for activation/weight scales and group list, out_dtype 0, group_list_type 0
    # code: MoeDistributeCombineKernelV2OpApi.cpp (nulltensor x3, out_dtype = 0, group_list_type = 0)
    "npu_moe_distribute_combine_v2": TorchNpuFunction(
        fixed={"activationScaleOptional": None, "weightScaleOptional": None, "groupListOptional": None,
               "outDtype": 0, "groupListType": 0}),
    # code: MoeDistributeCombineAddRmsNormKernelOpApi.cpp (the assist info is the third tensor, expand_idx)
    "npu_moe_distribute_combine_add_rms_norm": TorchNpuFunction(renames={"assistInfoForCombine": "expand_idx"}),
    # gen_opapi: out_y_dtype is x's dtype unless y_dtype names another (yaml, npu_moe_distribute_dispatch_setup)
    "npu_moe_distribute_dispatch_setup": TorchNpuFunction(dtype_keywords={"y_dtype": "yOut"}),
    "npu_moe_distribute_dispatch_teardown": TorchNpuFunction(),
    "npu_moe_distribute_combine_setup": TorchNpuFunction(),
    "npu_moe_distribute_combine_teardown": TorchNpuFunction(),
}
