"""Quantization oracles for MoeDistributeDispatchV2, written from shared/reference/formats.md §2–4.

One token row at a time, one block at a time, every float operation on float32
scalars or float32 rows (IEEE single rounding, as the kernel's vector units do).
Nothing here reads ``opgen.runtime`` except the scalar HiF8 TA encoder
``hif8_encode_reference`` (formats.md §2.3), which is itself checked against the
hicann/ge golden vectors in tests/runtime/test_codecs.py.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from opgen.runtime.codecs import hif8_encode_reference

F32 = np.float32

# formats.md §0.3 / §4.2: dtypeMax per quantised expandX dtype.
QMAX = {"INT8": 127.0, "FLOAT8_E4M3FN": 448.0, "FLOAT8_E5M2": 57344.0}
# formats.md §3.1 / §2.4: emax of the MX element types.
EMAX = {"FLOAT8_E4M3FN": 8, "FLOAT8_E5M2": 15, "FLOAT4_E2M1": 2, "FLOAT4_E1M2": 0}
# Largest finite magnitude, for the saturating MX cast (§3.3 SatMode::SAT).
MAXNORM = {"FLOAT8_E4M3FN": 448.0, "FLOAT8_E5M2": 57344.0, "FLOAT4_E2M1": 6.0, "FLOAT4_E1M2": 1.75}
ML = {"FLOAT8_E4M3FN": ml_dtypes.float8_e4m3fn, "FLOAT8_E5M2": ml_dtypes.float8_e5m2,
      "FLOAT4_E2M1": ml_dtypes.float4_e2m1fn}


# --------------------------------------------------------------------------- element casts

def int8_rint_sat(values) -> np.ndarray:
    """formats.md §1.2: np.rint (half to even) then clip to [-128, 127]; never ``astype`` alone."""
    v = np.asarray(values, dtype=np.float32)
    return np.clip(np.rint(v), -128, 127).astype(np.int8)


def e1m2_rne(v: float) -> int:
    """FLOAT4_E1M2 (§2.4): magnitudes 0, .25, ..., 1.75 in code order, RNE, saturating, sign in bit 3."""
    f = float(v)
    if f != f:
        return 0
    mag = min(int(np.rint(abs(f) * 4.0)), 7) if abs(f) < 8 else 7
    return (8 if np.signbit(f) else 0) | mag


def float_cast(row_f32: np.ndarray, dtype: str, *, sat: bool) -> np.ndarray:
    """RNE cast of a float32 row to an 8/4-bit float; ``sat`` clips to ±max first (NaN stays NaN)."""
    row = np.asarray(row_f32, dtype=np.float32)
    if sat:
        row = np.clip(row, -MAXNORM[dtype], MAXNORM[dtype])
    if dtype == "FLOAT4_E1M2":
        return np.array([e1m2_rne(v) for v in row], dtype=np.uint8)
    return row.astype(ML[dtype])


def hif8_ta(row_f32) -> np.ndarray:
    """f32 -> HiF8 codes, one element at a time through the scalar TA encoder (§2.3)."""
    bits = np.asarray(row_f32, dtype=np.float32).reshape(-1).view(np.uint32)
    return np.array([hif8_encode_reference(int(b)) for b in bits], dtype=np.uint8)


# --------------------------------------------------------------------------- quant modes, one row

def smooth_row(x_row, smooth) -> np.ndarray:
    """t = x_f32 · smooth (fp32 multiply); ``smooth`` None means no smooth scales."""
    t = np.asarray(x_row).astype(np.float32)
    if smooth is not None:
        t = t * np.asarray(smooth, dtype=np.float32)
    return t


def per_token(x_row, smooth, dtype: str):
    """Mode 2 (§4.2): s = dtypeMax / amax (scalar fp32 divide); q = RINT(t·s) saturating; scale 1/s."""
    t = smooth_row(x_row, smooth)
    amax = F32(0)
    for v in t:
        amax = max(amax, F32(abs(v)))
    s = F32(QMAX[dtype]) / amax
    y = t * s
    q = int8_rint_sat(y) if dtype == "INT8" else float_cast(y, dtype, sat=True)
    return q, F32(F32(1) / s)


def per_group(x_row, smooth, dtype: str, group: int = 128):
    """Mode 3 (§4.1): per 128-element group, dyn = dtypeMax / amax_g, q = cast(t·dyn) RNE no-sat,
    scale = fl32(1 / dyn) (code: quantize_functions.h ComputePerTileDynamic, ``Div(vDynScale, vOneVal, vDynScale)``;
    formats.md §4.1's amax_g × fl32(1/dtypeMax) is 1 ulp off for some amax, measured with the real kernel on the
    twin).  A partial last group is zero-padded (padding never wins the max)."""
    t = smooth_row(x_row, smooth)
    h = t.shape[0]
    ngroups = -(-h // group)
    padded = np.zeros(ngroups * group, dtype=np.float32)
    padded[:h] = t
    q = np.empty(ngroups * group, dtype=ML[dtype])
    scales = np.empty(ngroups, dtype=np.float32)
    for g in range(ngroups):
        blk = padded[g * group:(g + 1) * group]
        amax = F32(np.max(np.abs(blk)))
        dyn = F32(QMAX[dtype]) / amax
        q[g * group:(g + 1) * group] = float_cast(blk * dyn, dtype, sat=False)
        scales[g] = F32(F32(1) / dyn)
    return q[:h], scales


def bf16_exponent_field(v) -> int:
    """Biased 8-bit exponent of the bf16 image of a fp16/bf16 value (§3.3 ComputeMaxExp).

    bf16 and fp32 share the 8-bit exponent field, and fp16 -> bf16 (CAST_TRUNC) keeps the
    exponent exact, so the float32 bit pattern's exponent field is the bf16 one.
    """
    bits = int(np.array([v], dtype=np.float32).view(np.uint32)[0])
    return (bits >> 23) & 0xFF


def mx(x_row, dtype: str, block: int = 32):
    """Mode 4 (§3.3): per 32-block, e = max exponent field, code = 255 if e == 255 else
    max(e, emax) - emax; data = cast(x_f32 · 2^(127-code)) RNE+SAT; scale codes padded to even with 0."""
    x32 = np.asarray(x_row).astype(np.float32)
    h = x32.shape[0]
    nblk = -(-h // block)
    nscale = nblk + (nblk % 2)
    codes = np.zeros(nscale, dtype=np.uint8)
    out = []
    for b in range(nblk):
        blk = x32[b * block:min((b + 1) * block, h)]
        e = max(bf16_exponent_field(v) for v in blk)
        code = 255 if e == 255 else max(e, EMAX[dtype]) - EMAX[dtype]
        codes[b] = code
        inv = F32(np.nan) if code == 255 else F32(2.0 ** (127 - code))
        out.append(float_cast(blk * inv, dtype, sat=True))
    return np.concatenate(out), codes.view(ml_dtypes.float8_e8m0fnu)


def static(x_row, scales, dtype: str):
    """Mode 1 (§4.3): t = x_f32 · scales ((1,) or (H,)); INT8 RINT saturating, HIFLOAT8 TA."""
    t = np.asarray(x_row).astype(np.float32) * np.asarray(scales, dtype=np.float32)
    if dtype == "INT8":
        return int8_rint_sat(t)
    return hif8_ta(t)


def passthrough(x_row, dtype_in: str, dtype_out: str):
    """Mode 0: the row unchanged, or bf16/fp16 -> HIFLOAT8 through fp32 with TA (§4.5)."""
    if dtype_out == dtype_in:
        return np.asarray(x_row)
    assert dtype_out == "HIFLOAT8"
    return hif8_ta(np.asarray(x_row).astype(np.float32))
