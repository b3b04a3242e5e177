"""The dtype table: CANN enum values, numpy storage, limits; and OpError."""
import importlib.util
import os
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from opgen.core.dtypes import DTYPES
from opgen.runtime import (
    ACLNN_ERR_INNER_TILING_ERROR,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    OpError,
    e1m2_decode,
    emax,
    hif8_decode,
    info,
    np_dtype,
    qmax,
)

# ge::DataType values as defined in hicann/metadef: inc/external/graph/c_types.h
# (C_DT_*, which inc/external/graph/types.h re-exports as DT_*).
GE_VALUES = {
    "DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT64": 9,
    "DT_BOOL": 12, "DT_BF16": 27, "DT_HIFLOAT8": 34, "DT_FLOAT8_E5M2": 35, "DT_FLOAT8_E4M3FN": 36,
    "DT_FLOAT8_E8M0": 37, "DT_FLOAT4_E2M1": 40, "DT_FLOAT4_E1M2": 41,
}
# aclDataType values from Ascend/pytorch: third_party/acl/inc/acl/acl_base.h.
ACL_VALUES = {
    "ACL_FLOAT": 0, "ACL_FLOAT16": 1, "ACL_INT8": 2, "ACL_INT32": 3, "ACL_UINT8": 4, "ACL_INT64": 9,
    "ACL_BOOL": 12, "ACL_BF16": 27, "ACL_HIFLOAT8": 34, "ACL_FLOAT8_E5M2": 35, "ACL_FLOAT8_E4M3FN": 36,
    "ACL_FLOAT8_E8M0": 37, "ACL_FLOAT4_E2M1": 40, "ACL_FLOAT4_E1M2": 41,
}


def test_enum_values_match_cann_headers():
    assert {d.ge_enum: d.ge_value for d in DTYPES.values()} == GE_VALUES
    assert {d.acl_enum: d.acl_value for d in DTYPES.values()} == ACL_VALUES


def test_every_dtype_has_a_storage_type():
    for name in DTYPES:
        assert isinstance(np_dtype(name), np.dtype)
        assert info(name).name == name


@pytest.mark.parametrize("name, storage", [
    ("FLOAT32", np.float32), ("FLOAT16", np.float16), ("BFLOAT16", ml_dtypes.bfloat16),
    ("INT8", np.int8), ("INT32", np.int32), ("INT64", np.int64), ("BOOL", np.bool_),
    ("FLOAT8_E4M3FN", ml_dtypes.float8_e4m3fn), ("FLOAT8_E5M2", ml_dtypes.float8_e5m2),
    ("FLOAT8_E8M0", ml_dtypes.float8_e8m0fnu), ("FLOAT4_E2M1", ml_dtypes.float4_e2m1fn),
    ("HIFLOAT8", np.uint8), ("FLOAT4_E1M2", np.uint8),
])
def test_np_dtype(name, storage):
    assert np_dtype(name) == np.dtype(storage)


@pytest.mark.parametrize("name, value", [
    ("INT8", 127), ("FLOAT8_E4M3FN", 448), ("FLOAT8_E5M2", 57344), ("HIFLOAT8", 32768),
    ("FLOAT4_E2M1", 6), ("FLOAT4_E1M2", 1.75), ("FLOAT16", 65504),
    ("BFLOAT16", float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
])
def test_qmax(name, value):
    assert qmax(name) == value


def test_qmax_matches_decoders():
    for name in ("FLOAT8_E4M3FN", "FLOAT8_E5M2", "FLOAT4_E2M1", "FLOAT16", "BFLOAT16"):
        assert qmax(name) == float(ml_dtypes.finfo(np_dtype(name)).max)
    hif8 = hif8_decode(np.arange(256, dtype=np.uint8))
    assert qmax("HIFLOAT8") == np.nanmax(hif8[np.isfinite(hif8)])
    assert qmax("FLOAT4_E1M2") == e1m2_decode(np.arange(16, dtype=np.uint8)).max()


def test_emax():
    assert [emax(n) for n in ("FLOAT8_E4M3FN", "FLOAT8_E5M2", "FLOAT4_E2M1", "FLOAT4_E1M2")] == [8, 15, 2, 0]
    with pytest.raises(ValueError):
        emax("INT8")


def test_unknown_names_raise():
    for fn in (info, np_dtype, qmax, emax):
        with pytest.raises(ValueError):
            fn("FLOAT8")
    with pytest.raises(ValueError):
        qmax("BOOL")


def test_op_error():
    e = OpError(ACLNN_ERR_PARAM_INVALID, "quantMode", "quantMode 7 is not supported")
    assert (e.code, e.param, e.message) == (161002, "quantMode", "quantMode 7 is not supported")
    assert str(e) == "quantMode 7 is not supported"
    assert isinstance(e, Exception)
    assert (ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_INNER_TILING_ERROR) == (161001, 561002)


# --------------------------------------------------------------------------- installed CANN headers

def _header_roots() -> list[Path]:
    roots = []
    spec = importlib.util.find_spec("torch_npu")  # locates the package without importing it
    if spec is not None and spec.origin:
        roots.append(Path(spec.origin).parent)
    for var in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]) / "include")
    return [r for r in roots if r.is_dir()]


def _enum_values(roots, suffix, block, entry):
    """Enumerator values from the ``block`` regex of every header path ending in ``suffix``.

    Only the named enum block is read: other headers (and other enums in the same
    file, e.g. the protobuf DataType) use different numbering.
    """
    values = {}
    for root in roots:
        for path in root.rglob(Path(suffix).name):
            if not path.as_posix().endswith(suffix):
                continue
            for body in re.findall(block, path.read_text(errors="replace"), flags=re.S):
                values.update({k: int(v) for k, v in re.findall(entry, body)})
    return values


def test_enum_values_match_installed_headers():
    roots = _header_roots()
    if not roots:
        pytest.skip("no torch_npu or CANN toolkit headers installed")
    acl = _enum_values(roots, "acl/acl_base.h", r"typedef enum\s*\{([^}]*)\}\s*aclDataType\s*;",
                       r"\b(ACL_[A-Z0-9_]+)\s*=\s*(-?\d+)")
    ge = _enum_values(roots, "graph/c_types.h", r"typedef enum\s*\{([^}]*)\}\s*C_DataType\s*;",
                      r"\bC_(DT_[A-Z0-9_]+)\s*=\s*(\d+)")
    ge.update(_enum_values(roots, "graph/types.h", r"enum DataType\s*\{([^}]*)\}",
                           r"\b(DT_[A-Z0-9_]+)\s*=\s*(\d+)"))
    if not acl and not ge:
        pytest.skip("installed packages ship no acl_base.h / graph type headers")
    for d in DTYPES.values():
        if d.acl_enum in acl:
            assert acl[d.acl_enum] == d.acl_value, d.acl_enum
        if d.ge_enum in ge:
            assert ge[d.ge_enum] == d.ge_value, d.ge_enum
