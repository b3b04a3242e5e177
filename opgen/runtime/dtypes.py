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


# numpy / ml_dtypes types -> CANN names: the storage types that name exactly one CANN dtype (uint8 stands for
# UINT8, not the HIFLOAT8 / FLOAT4_E1M2 codes it also stores). ml_dtypes types are added on first use.
_NP_TO_CANN: dict[np.dtype, str] = {
    np.dtype(np.float16): "FLOAT16", np.dtype(np.float32): "FLOAT32", np.dtype(np.int8): "INT8",
    np.dtype(np.int32): "INT32", np.dtype(np.int64): "INT64", np.dtype(np.uint8): "UINT8", np.dtype(np.bool_): "BOOL",
}
_ML_TO_CANN = (("bfloat16", "BFLOAT16"), ("float8_e4m3fn", "FLOAT8_E4M3FN"), ("float8_e5m2", "FLOAT8_E5M2"),
               ("float8_e8m0fnu", "FLOAT8_E8M0"), ("float4_e2m1fn", "FLOAT4_E2M1"))


def from_numpy(dt: np.dtype) -> str | None:
    """The CANN name of a numpy storage dtype (None: numpy has no CANN dtype of that name)."""
    name = _NP_TO_CANN.get(dt)
    if name is None and len(_NP_TO_CANN) < 7 + len(_ML_TO_CANN):
        _NP_TO_CANN.update((np.dtype(getattr(ml_dtypes, k)), v) for k, v in _ML_TO_CANN)
        name = _NP_TO_CANN.get(dt)
    return name


def dtype_name(dtype) -> str:
    """A dtype as a CANN name: a name ("INT8") as it is, a numpy dtype or type (``np.int8``,
    ``np.dtype("int8")``, ``ml_dtypes.bfloat16``) by the table above; ValueError for anything else."""
    if isinstance(dtype, str):
        info(dtype)
        return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    name = from_numpy(dt) if dt is not None and dtype is not None else None
    if name is None:
        shown = dt if dt is not None and dtype is not None else repr(dtype)
        raise ValueError(f"{shown} is no CANN dtype; give a CANN name ({', '.join(sorted(DTYPES))}) or one of "
                         f"the numpy dtypes {', '.join(str(d) for d in _numpy_names())}")
    return name


def _numpy_names() -> list[np.dtype]:
    from_numpy(np.dtype(np.float32))  # the ml_dtypes rows
    return list(_NP_TO_CANN)


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
