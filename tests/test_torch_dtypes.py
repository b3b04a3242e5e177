"""The NPU mode's dtype table (opgen.harness.torch_dtypes): every spec dtype crosses to torch and back bit for bit,
and the dtype keywords are the numbers torch_npu reads (a c10::ScalarType, or 256 + aclDataType)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from opgen.core.dtypes import DTYPES
from opgen.harness import torch_dtypes
from opgen.runtime import codecs
from opgen.runtime.dtypes import np_dtype

from .conftest import skip_without_torch

skip_without_torch()
import torch  # noqa: E402


def _scalar_type(d) -> int:
    """The c10::ScalarType number of a torch dtype: TorchScript keeps a dtype as that number."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.script is deprecated, and the one way
        return torch.jit.script(_as_int)(d)


def _as_int(d: torch.dtype) -> int:
    return d


def test_the_table_covers_every_spec_dtype():
    assert set(torch_dtypes.TORCH_DTYPES) == set(DTYPES)


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_keywords_are_what_torch_npu_reads(name):
    row = torch_dtypes.TORCH_DTYPES[name]
    if row.npu_name:  # torch_npu's own dtypes: c10_npu::DType = 256 + aclDataType
        assert row.keyword == 256 + DTYPES[name].acl_value
    else:
        assert row.keyword == _scalar_type(getattr(torch, row.carrier))
    assert torch_dtypes.from_keyword(row.keyword) == name


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_every_bit_survives_the_round_trip(name):
    storage = np_dtype(name)
    if name == "BOOL":
        a = np.array([[True, False, True, True]])
    elif name in ("FLOAT4_E2M1", "FLOAT4_E1M2"):
        a = codecs.unpack_fp4(np.arange(256, dtype=np.uint8).reshape(4, 64), name)  # every nibble pair
    else:
        bits = np.arange(256 * storage.itemsize, dtype=np.uint8).view(f"u{storage.itemsize}")
        a = bits.view(storage).reshape(4, -1)
    t = torch_dtypes.to_torch(a, name)
    assert t.dtype == torch_dtypes.torch_dtype(name)
    if torch_dtypes.TORCH_DTYPES[name].packed:
        assert tuple(t.shape) == (4, a.shape[1] // 2)  # two values a byte, as torch_npu sizes FP4 tensors
    back = torch_dtypes.from_torch(t, name)
    assert back.dtype == storage and back.shape == a.shape
    assert back.tobytes() == np.ascontiguousarray(a).tobytes()


def test_an_unknown_keyword_names_the_known_ones():
    with pytest.raises(ValueError, match=r"^28 names no dtype; expected one of 0 \(UINT8\), 1 \(INT8\)"):
        torch_dtypes.from_keyword(28)  # a ge::DataType number where torch_npu reads a ScalarType
