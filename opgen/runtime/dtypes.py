"""numpy side of the CANN dtype table (``opgen.core.dtypes`` holds the pure data, these tables derive from it).

Storage conventions: every element takes one numpy element.  HIFLOAT8 and
FLOAT4_E1M2 have no numpy/ml_dtypes type, so they are stored as uint8 codes;
FLOAT4_E2M1 uses ml_dtypes.float4_e2m1fn, one value per byte (unpacked).
"""
from __future__ import annotations

import numpy as np

from opgen.core.dtypes import DTYPES, DTypeInfo
from opgen.runtime.lazy import ml_dtypes

_MODULES = {"numpy": np, "ml_dtypes": ml_dtypes}


def _storage(row: DTypeInfo) -> np.dtype:
    module, name = row.storage.split(".")
    return np.dtype(getattr(_MODULES[module], name))


# Derived from the rows of opgen.core.dtypes (one table; tests/test_dtype_table.py checks them against numpy).
# Storage dtypes are looked up on first use: an ml_dtypes attribute would import ml_dtypes (opgen.runtime.lazy).
_NP_DTYPES: dict[str, np.dtype] = {}
_QMAX: dict[str, float] = {n: r.qmax for n, r in DTYPES.items() if r.qmax is not None}
_EMAX: dict[str, int] = {n: r.emax for n, r in DTYPES.items() if r.emax is not None}


def info(name: str) -> DTypeInfo:
    """The ``opgen.dtypes`` row for a CANN dtype name such as ``"BFLOAT16"``."""
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dtype {name!r}; known: {', '.join(sorted(DTYPES))}") from None


def np_dtype(name: str) -> np.dtype:
    """The numpy storage dtype of a CANN dtype (uint8 codes for HIFLOAT8 / FLOAT4_E1M2)."""
    row = info(name)
    if name not in _NP_DTYPES:
        _NP_DTYPES[name] = _storage(row)
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
