"""The CANN dtype table: one row per dtype name a spec may use.

Pure data (no numpy) so the compiler front end can import it cheaply; the numpy
side lives in ``opgen.runtime.dtypes``.  Enum values are CANN's own:
``ge::DataType`` from ``graph/types.h`` and ``aclDataType`` from
``acl/acl_base.h`` (for the dtypes used here the two enums coincide).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DTypeInfo:
    name: str          # spec / doc spelling, e.g. "BFLOAT16"
    ge_enum: str       # ge::DataType enumerator, e.g. "DT_BF16"
    ge_value: int      # its value in graph/types.h
    acl_enum: str      # aclDataType enumerator, e.g. "ACL_BF16"
    acl_value: int     # its value in acl/acl_base.h
    bits: int          # storage bits per element (4 for FP4)
    kind: str          # "float", "int", "bool"


# Values checked against CANN's headers (all match):
#   ge::DataType  - hicann/metadef: inc/external/graph/types.h, whose enumerators are
#                   defined from C_DT_* in hicann/metadef: inc/external/graph/c_types.h
#                   (DT_HIFLOAT8 34, DT_FLOAT8_E5M2 35, DT_FLOAT8_E4M3FN 36,
#                   DT_FLOAT8_E8M0 37, DT_FLOAT4_E2M1 40, DT_FLOAT4_E1M2 41);
#   aclDataType   - Ascend/pytorch: third_party/acl/inc/acl/acl_base.h
#                   (ACL_HIFLOAT8 34 ... ACL_FLOAT4_E1M2 41, same numbers).
_ROWS = (
    # name             ge enum              ge  acl enum               acl bits kind
    ("FLOAT32",        "DT_FLOAT",           0, "ACL_FLOAT",             0, 32, "float"),
    ("FLOAT16",        "DT_FLOAT16",         1, "ACL_FLOAT16",           1, 16, "float"),
    ("INT8",           "DT_INT8",            2, "ACL_INT8",              2, 8,  "int"),
    ("INT32",          "DT_INT32",           3, "ACL_INT32",             3, 32, "int"),
    ("UINT8",          "DT_UINT8",           4, "ACL_UINT8",             4, 8,  "int"),
    ("INT64",          "DT_INT64",           9, "ACL_INT64",             9, 64, "int"),
    ("BOOL",           "DT_BOOL",           12, "ACL_BOOL",             12, 8,  "bool"),
    ("BFLOAT16",       "DT_BF16",           27, "ACL_BF16",             27, 16, "float"),
    ("HIFLOAT8",       "DT_HIFLOAT8",       34, "ACL_HIFLOAT8",         34, 8,  "float"),
    ("FLOAT8_E5M2",    "DT_FLOAT8_E5M2",    35, "ACL_FLOAT8_E5M2",      35, 8,  "float"),
    ("FLOAT8_E4M3FN",  "DT_FLOAT8_E4M3FN",  36, "ACL_FLOAT8_E4M3FN",    36, 8,  "float"),
    ("FLOAT8_E8M0",    "DT_FLOAT8_E8M0",    37, "ACL_FLOAT8_E8M0",      37, 8,  "float"),
    ("FLOAT4_E2M1",    "DT_FLOAT4_E2M1",    40, "ACL_FLOAT4_E2M1",      40, 4,  "float"),
    ("FLOAT4_E1M2",    "DT_FLOAT4_E1M2",    41, "ACL_FLOAT4_E1M2",      41, 4,  "float"),
)

DTYPES: dict[str, DTypeInfo] = {r[0]: DTypeInfo(*r) for r in _ROWS}
DTYPE_NAMES: tuple[str, ...] = tuple(sorted(DTYPES))

# Formats a spec may name (ge::Format enumerators without the FORMAT_ prefix).
FORMATS: tuple[str, ...] = ("ND", "NCHW", "NHWC", "FRACTAL_NZ")
