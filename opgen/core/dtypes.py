"""The CANN dtype table: one row per dtype name a spec may use, every per-dtype fact in it.

Pure data (no numpy) so the compiler front end can import it cheaply; ``opgen.runtime.dtypes`` turns the
storage names into numpy dtypes and ``opgen.lower.ascendc`` reads the Ascend C types, both from these rows.
Enum values are CANN's own: ``ge::DataType`` from ``graph/types.h`` and ``aclDataType`` from
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
    storage: str       # numpy storage dtype, "<module>.<name>" (module numpy or ml_dtypes), one element per value
    ascendc: str       # the Ascend C element type of kernel code
    archs: tuple[int, ...]  # the __NPU_ARCH__ values whose kernels have the type (opgen.core.products npu_arch)
    qmax: float | None      # largest finite value (None: BOOL has no numeric maximum)
    emax: int | None        # OCP MX emax_elem, exponent of the largest normal (None: not an MX element type)

    @property
    def coded(self) -> bool:
        """A float dtype with no numpy/ml_dtypes type: stored as uint8 codes (HIFLOAT8, FLOAT4_E1M2)."""
        return self.kind == "float" and self.storage == "numpy.uint8"


# ge / acl values checked against CANN's headers (all match):
#   ge::DataType  - hicann/metadef: inc/external/graph/types.h, whose enumerators are
#                   defined from C_DT_* in hicann/metadef: inc/external/graph/c_types.h
#                   (DT_HIFLOAT8 34, DT_FLOAT8_E5M2 35, DT_FLOAT8_E4M3FN 36,
#                   DT_FLOAT8_E8M0 37, DT_FLOAT4_E2M1 40, DT_FLOAT4_E1M2 41);
#   aclDataType   - Ascend/pytorch: third_party/acl/inc/acl/acl_base.h
#                   (ACL_HIFLOAT8 34 ... ACL_FLOAT4_E1M2 41, same numbers).
# storage: HIFLOAT8 and FLOAT4_E1M2 have no numpy/ml_dtypes type, so they are uint8 codes; FLOAT4_E2M1 is
#   ml_dtypes.float4_e2m1fn, one value per byte (unpacked; the twin packs two per byte).
# ascendc: the element types of the CANN kernel headers (fp4x2_*: two FP4 values per byte).
# archs: FP8, HiF8, FP4 and E8M0 exist only on arch35 (__NPU_ARCH__ 3510), reference/formats.md ("Every FP8,
#   HiF8 and FP4 path ... exist only on Ascend 950DT (arch35, __NPU_ARCH__==3510)"); the rest on 2201 and 3510.
# qmax: HIFLOAT8 32768 is CANN's HIFP8_MAX_VALUE (mc2/common/op_kernel/quantize_functions.h); E1M2 1.75 per
#   opbase float4_e1m2.h; the others are their formats' own (IEEE, OCP, two's complement).
# emax: OCP MX emax_elem (exponent of the largest normal); E1M2's is Ascend's addition.
_BOTH, _ARCH35 = (2201, 3510), (3510,)
_ROWS = (
    # name            ge enum             ge  acl enum             acl bits kind     storage
    #                 ascendc         archs    qmax                   emax
    ("FLOAT32",       "DT_FLOAT",          0, "ACL_FLOAT",           0, 32, "float", "numpy.float32",
                      "float",        _BOTH,   3.4028234663852886e38, None),
    ("FLOAT16",       "DT_FLOAT16",        1, "ACL_FLOAT16",         1, 16, "float", "numpy.float16",
                      "half",         _BOTH,   65504.0,               None),
    ("INT8",          "DT_INT8",           2, "ACL_INT8",            2, 8,  "int",   "numpy.int8",
                      "int8_t",       _BOTH,   127.0,                 None),
    ("INT32",         "DT_INT32",          3, "ACL_INT32",           3, 32, "int",   "numpy.int32",
                      "int32_t",      _BOTH,   float(2**31 - 1),      None),
    ("UINT8",         "DT_UINT8",          4, "ACL_UINT8",           4, 8,  "int",   "numpy.uint8",
                      "uint8_t",      _BOTH,   255.0,                 None),
    ("INT64",         "DT_INT64",          9, "ACL_INT64",           9, 64, "int",   "numpy.int64",
                      "int64_t",      _BOTH,   float(2**63 - 1),      None),
    ("BOOL",          "DT_BOOL",          12, "ACL_BOOL",           12, 8,  "bool",  "numpy.bool_",
                      "bool",         _BOTH,   None,                  None),
    ("BFLOAT16",      "DT_BF16",          27, "ACL_BF16",           27, 16, "float", "ml_dtypes.bfloat16",
                      "bfloat16_t",   _BOTH,   3.3895313892515355e38, None),
    ("HIFLOAT8",      "DT_HIFLOAT8",      34, "ACL_HIFLOAT8",       34, 8,  "float", "numpy.uint8",
                      "hifloat8_t",   _ARCH35, 32768.0,               None),
    ("FLOAT8_E5M2",   "DT_FLOAT8_E5M2",   35, "ACL_FLOAT8_E5M2",    35, 8,  "float", "ml_dtypes.float8_e5m2",
                      "fp8_e5m2_t",   _ARCH35, 57344.0,               15),
    ("FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FN", 36, "ACL_FLOAT8_E4M3FN",  36, 8,  "float", "ml_dtypes.float8_e4m3fn",
                      "fp8_e4m3fn_t", _ARCH35, 448.0,                 8),
    ("FLOAT8_E8M0",   "DT_FLOAT8_E8M0",   37, "ACL_FLOAT8_E8M0",    37, 8,  "float", "ml_dtypes.float8_e8m0fnu",
                      "fp8_e8m0_t",   _ARCH35, 2.0**127,              None),
    ("FLOAT4_E2M1",   "DT_FLOAT4_E2M1",   40, "ACL_FLOAT4_E2M1",    40, 4,  "float", "ml_dtypes.float4_e2m1fn",
                      "fp4x2_e2m1_t", _ARCH35, 6.0,                   2),
    ("FLOAT4_E1M2",   "DT_FLOAT4_E1M2",   41, "ACL_FLOAT4_E1M2",    41, 4,  "float", "numpy.uint8",
                      "fp4x2_e1m2_t", _ARCH35, 1.75,                  0),
)

DTYPES: dict[str, DTypeInfo] = {r[0]: DTypeInfo(*r) for r in _ROWS}
DTYPE_NAMES: tuple[str, ...] = tuple(sorted(DTYPES))

# ge::DataType values that name no element type but appear as attribute values: "not set" (graph/types.h:
# DT_UNDEFINED = 28, "Used to indicate a DataType field has not been set"), the default of y_dtype.
GE_SPECIAL: dict[int, str] = {28: "DT_UNDEFINED"}

# Formats a spec may name (ge::Format enumerators without the FORMAT_ prefix).
FORMATS: tuple[str, ...] = ("ND", "NCHW", "NHWC", "FRACTAL_NZ")
# The ge::Format value of each (hicann/metadef inc/external/graph/types.h, C_FORMAT_*); a tensor's format is
# its primary storage format (ge::GetPrimaryFormat), as the real tilings read it.
FORMAT_VALUES: dict[str, int] = {"NCHW": 0, "NHWC": 1, "ND": 2, "FRACTAL_NZ": 29}
