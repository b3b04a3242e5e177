"""CANN dtypes in torch / torch_npu: the one table the NPU mode converts tensors and dtype keywords with.

Each spec dtype (``opgen.core.dtypes``) has
* a *carrier*: the torch dtype of the tensor that holds its bits on the way to and from torch_npu.  torch has
  BF16, FP8-E4M3FN and FP8-E5M2; for HIFLOAT8, FLOAT8_E8M0 and the FP4s torch_npu uses uint8 tensors (FP4 packed
  two per byte along the last axis, element 2i in the low nibble, as the CANN kernels store them) and learns the
  real dtype from a dtype keyword;
* a *keyword value*: the int a schema's ``int? <x>_dtype`` argument takes.  torch_npu turns it into an
  aclDataType with ``c10_npu::GetAclDataType``: a value below 256 is a ``c10::ScalarType`` (the torch dtype's own
  number), 256 + aclDataType names torch_npu's own dtypes (``torch_npu.hifloat8`` = 290, ``float4_e2m1`` = 296).
  # code: shared/cann/torch_npu/MoeDistributeDispatchV2KernelOpApi.cpp (GetAclDataType(y_dtype), the FLOAT4
  # checks on y_dtype), op_plugin_functions.moe_distribute.yaml (npu_add_rms_norm_dynamic_mx_quant
  # dst_type=296 = 256 + ACL_FLOAT4_E2M1); ScalarType numbers: c10/core/ScalarType.h (tests/test_torch_dtypes.py
  # checks them against the installed torch).

Conversion keeps every bit: numpy arrays go to torch through a same-width integer view (torch.from_numpy knows
no ml_dtypes type) and come back the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opgen.core.dtypes import DTYPES
from opgen.runtime import codecs
from opgen.runtime.dtypes import np_dtype

NPU_DTYPE_OFFSET = 256  # torch_npu's own dtypes: 256 + aclDataType (c10_npu::DType)


@dataclass(frozen=True)
class TorchDType:
    carrier: str         # the torch dtype (attribute of ``torch``) of the tensor holding the bits
    keyword: int         # the value of a schema ``int? *_dtype`` keyword naming this dtype
    packed: bool = False  # two values per carrier byte (FP4)
    npu_name: str = ""   # torch_npu's name of its own dtype (the keyword is its value)


TORCH_DTYPES: dict[str, TorchDType] = {
    "FLOAT32": TorchDType("float32", 6),
    "FLOAT16": TorchDType("float16", 5),
    "INT8": TorchDType("int8", 1),
    "INT32": TorchDType("int32", 3),
    "UINT8": TorchDType("uint8", 0),
    "INT64": TorchDType("int64", 4),
    "BOOL": TorchDType("bool", 11),
    "BFLOAT16": TorchDType("bfloat16", 15),
    "FLOAT8_E5M2": TorchDType("float8_e5m2", 23),
    "FLOAT8_E4M3FN": TorchDType("float8_e4m3fn", 24),
    "HIFLOAT8": TorchDType("uint8", NPU_DTYPE_OFFSET + DTYPES["HIFLOAT8"].acl_value, npu_name="hifloat8"),
    "FLOAT8_E8M0": TorchDType("uint8", NPU_DTYPE_OFFSET + DTYPES["FLOAT8_E8M0"].acl_value,
                              npu_name="float8_e8m0fnu"),
    "FLOAT4_E2M1": TorchDType("uint8", NPU_DTYPE_OFFSET + DTYPES["FLOAT4_E2M1"].acl_value, True, "float4_e2m1"),
    "FLOAT4_E1M2": TorchDType("uint8", NPU_DTYPE_OFFSET + DTYPES["FLOAT4_E1M2"].acl_value, True, "float4_e1m2"),
}
BY_KEYWORD: dict[int, str] = {row.keyword: name for name, row in TORCH_DTYPES.items()}


def torch_dtype(name: str):
    """The carrier torch dtype of CANN dtype ``name``."""
    import torch
    return getattr(torch, TORCH_DTYPES[name].carrier)


def keyword(name: str) -> int:
    """The schema ``int? *_dtype`` value naming CANN dtype ``name``."""
    return TORCH_DTYPES[name].keyword


def from_keyword(value: int) -> str:
    """The CANN dtype a schema dtype keyword value names (ValueError: none)."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in BY_KEYWORD:
        raise ValueError(f"{value!r} names no dtype; expected one of "
                         f"{', '.join(f'{v} ({n})' for v, n in sorted(BY_KEYWORD.items()))}")
    return BY_KEYWORD[value]


def from_carrier(carrier) -> str | None:
    """The CANN dtype a tensor of torch dtype ``carrier`` holds when no keyword says otherwise (uint8: UINT8)."""
    name = str(carrier).removeprefix("torch.")
    return next((n for n, row in TORCH_DTYPES.items() if row.carrier == name and not row.npu_name), None)


def to_torch(array, name: str):
    """A CPU torch tensor holding the bits of ``array`` (CANN dtype ``name``; FP4 packed two per byte)."""
    import torch
    row = TORCH_DTYPES[name]
    a = np.ascontiguousarray(np.asarray(array))
    if row.packed:
        a = codecs.pack_fp4(a, name)
    bits = a.view(f"u{a.dtype.itemsize}") if a.dtype.kind not in "biu" else a
    carrier = torch_dtype(name)
    t = torch.from_numpy(np.ascontiguousarray(bits).copy())
    return t if t.dtype == carrier else t.view(carrier)


def from_torch(tensor, name: str) -> np.ndarray:
    """The numpy storage array (``opgen.runtime.dtypes.np_dtype``) of a torch tensor holding CANN dtype ``name``."""
    import torch
    row = TORCH_DTYPES[name]
    t = tensor.detach().cpu().contiguous()
    if t.dtype == torch.bool:
        return t.numpy().copy()
    width = t.element_size()
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[width]
    bits = t.view(ints).numpy().copy()
    if row.packed:
        return codecs.unpack_fp4(bits, name)
    storage = np_dtype(name)
    return bits.view(storage) if bits.dtype.itemsize == storage.itemsize else bits.astype(storage)
