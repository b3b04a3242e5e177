"""numpy side of the CANN dtype table (``opgen.dtypes`` holds the pure data).

Storage conventions: every element takes one numpy element.  HIFLOAT8 and
FLOAT4_E1M2 have no numpy/ml_dtypes type, so they are stored as uint8 codes;
FLOAT4_E2M1 uses ml_dtypes.float4_e2m1fn, one value per byte (unpacked).
"""
from __future__ import annotations

import numpy as np

from opgen.core.dtypes import DTYPES, DTypeInfo
from opgen.runtime.lazy import ml_dtypes

_NP_DTYPES: dict[str, np.dtype] = {
    "FLOAT32": np.dtype(np.float32),
    "FLOAT16": np.dtype(np.float16),
    "INT8": np.dtype(np.int8),
    "UINT8": np.dtype(np.uint8),
    "INT32": np.dtype(np.int32),
    "INT64": np.dtype(np.int64),
    "BOOL": np.dtype(np.bool_),
    "HIFLOAT8": np.dtype(np.uint8),
    "FLOAT4_E1M2": np.dtype(np.uint8),
}
# Stored as ml_dtypes types: looked up (and ml_dtypes imported) on first use.
_ML_DTYPES = {
    "BFLOAT16": "bfloat16",
    "FLOAT8_E5M2": "float8_e5m2",
    "FLOAT8_E4M3FN": "float8_e4m3fn",
    "FLOAT8_E8M0": "float8_e8m0fnu",
    "FLOAT4_E2M1": "float4_e2m1fn",
}

# Largest finite value.  HIFLOAT8 32768 is CANN's HIFP8_MAX_VALUE
# (mc2/common/op_kernel/quantize_functions.h); E1M2 1.75 per opbase float4_e1m2.h.
_QMAX: dict[str, float] = {
    "FLOAT32": float(np.finfo(np.float32).max),
    "FLOAT16": 65504.0,
    "BFLOAT16": (2 - 2.0**-7) * 2.0**127,  # == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    "INT8": 127.0,
    "UINT8": 255.0,
    "INT32": float(2**31 - 1),
    "INT64": float(2**63 - 1),
    "HIFLOAT8": 32768.0,
    "FLOAT8_E5M2": 57344.0,
    "FLOAT8_E4M3FN": 448.0,
    "FLOAT8_E8M0": 2.0**127,
    "FLOAT4_E2M1": 6.0,
    "FLOAT4_E1M2": 1.75,
}

# OCP MX emax_elem (exponent of the largest normal); E1M2 is Ascend's addition.
_EMAX: dict[str, int] = {
    "FLOAT8_E4M3FN": 8,
    "FLOAT8_E5M2": 15,
    "FLOAT4_E2M1": 2,
    "FLOAT4_E1M2": 0,
}


def info(name: str) -> DTypeInfo:
    """The ``opgen.dtypes`` row for a CANN dtype name such as ``"BFLOAT16"``."""
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dtype {name!r}; known: {', '.join(sorted(DTYPES))}") from None


def np_dtype(name: str) -> np.dtype:
    """The numpy storage dtype of a CANN dtype (uint8 codes for HIFLOAT8 / FLOAT4_E1M2)."""
    info(name)
    if name not in _NP_DTYPES:
        _NP_DTYPES[name] = np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))
    return _NP_DTYPES[name]


def qmax(name: str) -> float:
    """Largest finite value of ``name`` (the quantisation ``dtypeMax``)."""
    info(name)
    if name not in _QMAX:
        raise ValueError(f"dtype {name} has no numeric maximum")
    return _QMAX[name]


def emax(name: str) -> int:
    """MX element emax of ``name``; only the four MX element types have one."""
    info(name)
    if name not in _EMAX:
        raise ValueError(f"dtype {name} is not an MX element type ({', '.join(_EMAX)})")
    return _EMAX[name]
