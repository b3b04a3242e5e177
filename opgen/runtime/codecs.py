"""Bit-exact numpy codecs for the CANN number formats.

The cast chains follow /work/shared/reference/formats.md: ml_dtypes gives RNE
for FP16/BF16/FP8/FP4-E2M1; HiFloat8 (TA rounding) and FLOAT4_E1M2 are coded
here because no installed library has them.  Everything is vectorised; the
only per-element Python code is the scalar HiF8 reference encoder, run once on
8192 table slots (and by the tests).
"""
from __future__ import annotations

import functools

import numpy as np

from opgen.core.dtypes import DTYPES
from opgen.runtime.dtypes import info, np_dtype, qmax
from opgen.runtime.lazy import ml_dtypes

ROUND_MODES = ("rint", "round", "trunc", "floor", "ceil", "none")

# from the dtype table: the integer dtypes' ranges, the 4-bit floats
_INT_RANGES = {n: (int(np.iinfo(np_dtype(n)).min), int(np.iinfo(np_dtype(n)).max))
               for n, r in DTYPES.items() if r.kind == "int"}
# the floats a plain ml_dtypes cast rounds as the device does (not E8M0, an exponent; not the uint8-coded ones)
_ML_FLOATS = ("FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT8_E4M3FN", "FLOAT8_E5M2", "FLOAT4_E2M1")
_FP4 = tuple(n for n, r in DTYPES.items() if r.kind == "float" and r.bits == 4)


# --------------------------------------------------------------------------- helpers

def _check_round(mode: str) -> None:
    if mode not in ROUND_MODES:
        raise ValueError(f"round must be one of {ROUND_MODES}, got {mode!r}")


def _numeric(x) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind in "OUSmM":
        raise TypeError(f"expected a numeric array, got dtype {a.dtype}")
    return a


def _as_f32(x) -> np.ndarray:
    """The input as float32: exact for fp16/bf16/fp8/fp4, RNE for float64 (overflow -> Inf)."""
    a = _numeric(x)
    if a.dtype == np.float32:
        return a
    with np.errstate(over="ignore"):
        return a.astype(np.float32)


def _round_f64(x: np.ndarray, mode: str) -> np.ndarray:
    """Round to integral values in float64 (exact for any float input)."""
    if mode in ("rint", "none"):
        return np.rint(x)
    if mode == "trunc":
        return np.trunc(x)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    # Half away from zero without the x + 0.5 rounding error.
    mag = np.abs(x)
    whole = np.floor(mag)
    with np.errstate(invalid="ignore"):  # inf - inf: the comparison is False and inf stays inf
        return np.copysign(whole + (mag - whole >= 0.5), x)


def _cast_int(x: np.ndarray, dst: str, mode: str) -> np.ndarray:
    """Round, then saturate to the integer range; NaN becomes 0.

    INT8 is CANN's RINT -> int32 -> fp16 -> int8 chain: every step after the
    rounding is exact or saturating, so the value is clip(round(x)).
    """
    a = _numeric(x)
    lo, hi = _INT_RANGES[dst]
    if dst in ("INT8", "UINT8") and a.dtype in (np.float32, np.float16):
        # Rounding a float32 to an integral value is exact in float32, and so are both 8-bit bounds:
        # the same result as the float64 path below at a quarter of the memory traffic.
        r = _round_f64(a, mode)
        return np.clip(np.where(np.isnan(r), 0, r), lo, hi).astype(np_dtype(dst))
    r = _round_f64(a if a.dtype == np.float64 else a.astype(np.float64), mode)
    out_t = np_dtype(dst)
    # float(INT64 max) is 2^63, outside int64: clip just below it, then patch.
    hi_f = float(hi) if float(hi) == hi else np.nextafter(float(hi), 0.0)
    safe = np.clip(np.where(np.isnan(r), 0.0, r), float(lo), hi_f).astype(out_t)
    return np.where(r >= float(hi) + 1.0, out_t.type(hi), safe).astype(out_t)


def _clip_sat(f: np.ndarray, limit: float) -> np.ndarray:
    """Clamp to +-limit before the cast; NaN stays NaN (np.clip keeps it)."""
    return np.clip(f, np.float32(-limit), np.float32(limit))


def _bf16_trunc(f: np.ndarray) -> np.ndarray:
    """f32 -> bf16 rounding toward zero (CAST_TRUNC): keep the high 16 bits."""
    hi = (f.view(np.uint32) >> 16).astype(np.uint16)
    # Truncating a NaN whose payload sits in the low bits would give Inf; keep it a quiet NaN.
    hi = np.where(np.isnan(f), (hi & 0x8000) | 0x7FC0, hi).astype(np.uint16)
    return hi.view(ml_dtypes.bfloat16)


# --------------------------------------------------------------------------- HiFloat8

# Tables of hicann/ge base/common/math/hif8_t.cc: mantissa width and dot code per |exponent|.
_HIF8_WIDTH = (3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)
_HIF8_DOT = (0b0001, 0b0010, 0b0100, 0b0100) + (0b1000,) * 4 + (0b1100,) * 8
_HIF8_NAN = 0x80
_HIF8_INF = 0x6F


def _hif8_pack(exp: int, mantissa: int) -> int:
    """EncodeHiF8: denormal band below 2^-15, else dot | sign-magnitude exponent | mantissa."""
    if exp <= -16:
        return exp + 23
    mag = abs(exp)
    em = 0
    if mag:
        top = mag.bit_length() - 1  # the implicit leading 1 is replaced by the exponent sign
        em = (mag & ~(1 << top)) | (int(exp < 0) << top)
    return (_HIF8_DOT[mag] << 3) | (em << _HIF8_WIDTH[mag]) | mantissa


def hif8_encode_reference(bits: int) -> int:
    """Scalar port of HiF8FromIeeeBits<8, 23> (TA rounding) for one f32 bit pattern."""
    bits &= 0xFFFFFFFF
    mag_bits = bits & 0x7FFFFFFF
    if mag_bits == 0:
        return 0  # +-0 share code 0x00
    sign = 0x80 if bits >> 31 else 0
    field, man = mag_bits >> 23, mag_bits & 0x7FFFFF
    if field == 0xFF:
        return _HIF8_NAN if man else sign | _HIF8_INF
    exp = field - 127
    if field == 0:  # f32 subnormal: normalise (always far below HiF8's range)
        shift = 23 - man.bit_length() + 1
        exp, man = -126 - shift, (man << shift) & 0x7FFFFF
    if exp < -23:
        return 0
    if exp > 15:
        return sign | _HIF8_INF
    if exp == -23:  # [2^-23, 2^-22) always rounds up to the smallest denormal 2^-22
        return sign | _hif8_pack(-22, 0)
    discard = 23 - _HIF8_WIDTH[abs(exp)]
    man += 1 << (discard - 1)  # TA: add half an ulp, then truncate
    if man >> 23:
        man &= 0x7FFFFF
        exp += 1
        if exp > 15:
            return sign | _HIF8_INF
    return sign | _hif8_pack(exp, man >> discard)


@functools.cache
def _hif8_encode_lut() -> np.ndarray:
    """f32 -> HiF8 by the top 13 bits (sign, exponent, 4 mantissa bits).

    TA's probe bit is never below f32 bit 19 (3 mantissa bits + round bit), and
    adding it only carries through bits at or above it, so one representative
    per 2^19-wide slot decides the whole slot (formats.md section 2.5).
    """
    reps = np.arange(1 << 13, dtype=np.uint64) << 19
    return np.array([hif8_encode_reference(int(b)) for b in reps], dtype=np.uint8)


@functools.cache
def _hif8_decode_lut() -> np.ndarray:
    """256 float32 values from the bit layout of formats.md section 2.2."""
    c = np.arange(256, dtype=np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    low = c & 0x7F
    prefix = low >> 3
    # Exponent width D per 4-bit prefix (0b0000 = denormal band, marked -1).
    d_tab = np.array([-1, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4])
    mw_tab = np.array([3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1])
    d, mw = d_tab[prefix], mw_tab[prefix]
    dd = np.maximum(d, 1)
    em = (low >> mw) & ((1 << dd) - 1)
    exp_mag = em | (1 << (dd - 1))
    exp = np.where(d == 0, 0, np.where(em & (1 << (dd - 1)), -exp_mag, exp_mag))
    frac = (low & ((1 << mw) - 1)) / (1 << mw)
    normal = sign * np.ldexp(1.0 + frac, exp)
    denorm = np.where(low & 7, sign * np.ldexp(1.0, (low & 7) - 23), 0.0)
    out = np.where(d < 0, denorm, normal)
    out[(low == _HIF8_INF)] = sign[(low == _HIF8_INF)] * np.inf
    out[_HIF8_NAN] = np.nan
    return out.astype(np.float32)


def hif8_encode(x) -> np.ndarray:
    """float -> HiF8 uint8 codes, TA rounding (CAST_ROUND), non-saturating (|x| >= 40960 -> Inf)."""
    f = _as_f32(x)
    out = np.asarray(_hif8_encode_lut()[f.view(np.uint32) >> 19])
    # NaNs whose payload lies only in the low 19 bits share a slot with Inf.
    nan = np.isnan(f)
    if nan.any():
        out[nan] = _HIF8_NAN
    return out


def hif8_decode(codes) -> np.ndarray:
    """HiF8 uint8 codes -> float32."""
    return np.asarray(_hif8_decode_lut()[_as_codes(codes, 256)])


# --------------------------------------------------------------------------- FLOAT4_E1M2

# Codes 0..7 are 0, 0.25, ..., 1.75 (a uniform grid); 8..15 the negatives (8 = -0).
_E1M2_POS = np.arange(8, dtype=np.float32) * np.float32(0.25)
_E1M2_VALUES = np.concatenate([_E1M2_POS, -_E1M2_POS])


def e1m2_encode(x) -> np.ndarray:
    """float -> E1M2 uint8 codes 0..15: RNE, saturating to +-1.75, NaN -> 0 (as en_dtypes)."""
    f = _as_f32(x)
    # The value grid is uniform with step 0.25, so RNE on the mantissa is rint on value*4.
    mag = np.minimum(np.rint(np.abs(f) * np.float32(4)), 7)
    code = np.where(np.signbit(f), mag + 8, mag)
    return np.where(np.isnan(f), 0, code).astype(np.uint8)


def e1m2_decode(codes) -> np.ndarray:
    """E1M2 uint8 codes -> float32."""
    return np.asarray(_E1M2_VALUES[_as_codes(codes, 16)])


# --------------------------------------------------------------------------- E8M0

@functools.cache
def _e8m0_decode_lut() -> np.ndarray:
    exps = np.arange(255) - 127  # code 0 is 2^-127, an f32 subnormal
    return np.append(np.ldexp(np.float32(1), exps), np.nan).astype(np.float32)


def e8m0_from_exponent(codes) -> np.ndarray:
    """E8M0 array from integer codes (biased exponents 0..255, 255 = NaN).

    Built by .view: ml_dtypes' float->e8m0 cast rounds ties up and maps 0 to NaN.
    """
    a = np.asarray(codes)
    if a.dtype.kind not in "iu":
        raise TypeError(f"E8M0 codes must be integers, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() > 255):
        raise ValueError("E8M0 codes must lie in [0, 255]")
    return a.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)


def biased_exponent(x, like: str) -> np.ndarray:
    """The 8-bit biased exponent field as BFLOAT16 sees each value, as int32.

    ``like`` names the input dtype.  BFLOAT16: its own field.  FLOAT16: the
    field after a TRUNC cast to bf16 (fp16 subnormals become bf16 normals,
    Inf/NaN give 255).  FLOAT32: the f32 field.  All three equal the field of
    the exact float32 value, since truncation never changes the exponent.
    """
    if like not in ("BFLOAT16", "FLOAT16", "FLOAT32"):
        raise ValueError(f"like must be BFLOAT16, FLOAT16 or FLOAT32, got {like!r}")
    a = np.asarray(x)
    if a.dtype.kind != "f" and a.dtype != np_dtype("BFLOAT16"):
        raise TypeError(f"expected a float array, got dtype {a.dtype}")
    if a.dtype.itemsize > 4:
        raise TypeError("float64 input has an 11-bit exponent; convert to the input dtype first")
    f = a.astype(np.float32)
    return ((f.view(np.uint32) >> 23) & 0xFF).astype(np.int32)


# --------------------------------------------------------------------------- FP4 packing

def _fp4_codes(values, dtype: str) -> np.ndarray:
    """Nibble codes 0..15 from uint8 codes, a float4_e2m1fn array, or plain floats (RNE)."""
    if dtype not in _FP4:
        raise ValueError(f"dtype must be one of {_FP4}, got {dtype!r}")
    a = np.asarray(values)
    if a.dtype == np.uint8:
        return _as_codes(a, 16)
    if dtype == "FLOAT4_E2M1" and a.dtype == np_dtype("FLOAT4_E2M1"):
        return a.view(np.uint8) & 0x0F
    codes = cast(a, dtype)
    return codes if codes.dtype == np.uint8 else codes.view(np.uint8) & 0x0F


def pack_fp4(values, dtype: str) -> np.ndarray:
    """Pack FP4 along the last axis, two per byte: element 2i low nibble, 2i+1 high nibble."""
    codes = _fp4_codes(values, dtype)
    if codes.ndim == 0 or codes.shape[-1] % 2:
        raise ValueError(f"FP4 packing needs an even last dimension, got shape {codes.shape}")
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def unpack_fp4(packed, dtype: str) -> np.ndarray:
    """Inverse of pack_fp4; returns the storage dtype (float4_e2m1fn, or uint8 codes for E1M2)."""
    if dtype not in _FP4:
        raise ValueError(f"dtype must be one of {_FP4}, got {dtype!r}")
    p = np.asarray(packed)
    if p.dtype != np.uint8:
        raise TypeError(f"packed FP4 must be uint8, got dtype {p.dtype}")
    if p.ndim == 0:
        raise ValueError("packed FP4 must have at least one dimension")
    codes = np.stack([p & 0x0F, p >> 4], axis=-1).reshape(p.shape[:-1] + (2 * p.shape[-1],))
    return codes.view(np_dtype(dtype)) if dtype == "FLOAT4_E2M1" else codes


# --------------------------------------------------------------------------- generic cast / decode

def _as_codes(codes, limit: int) -> np.ndarray:
    a = np.asarray(codes)
    if a.dtype.itemsize == 1 and a.dtype.kind not in "iub":
        a = a.view(np.uint8)  # an ml_dtypes 8-bit type: its bits are the code
    if a.dtype.kind not in "iu":
        raise TypeError(f"expected integer codes, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() >= limit):
        raise ValueError(f"codes must lie in [0, {limit})")
    return a.astype(np.intp, copy=False)


def cast(x, dst: str, round: str = "rint", sat: bool = False) -> np.ndarray:
    """Quantise ``x`` to CANN dtype ``dst``, returning its storage dtype (see runtime.dtypes).

    round: rint (half even), round (half away), trunc, floor, ceil, or none
    (exact or rint when lossy).  sat clamps to +-qmax(dst) first; NaN stays NaN.
    Integer targets always saturate (NaN -> 0), FLOAT4 targets always saturate,
    HIFLOAT8 needs round="round" (TA).
    Float inputs are taken as float32 (the kernels compute in f32), except that
    integer targets keep float64 input exact.
    """
    _check_round(round)
    info(dst)
    if dst in _INT_RANGES:
        return _cast_int(x, dst, round)
    if dst == "HIFLOAT8":
        if round != "round":
            raise ValueError("HIFLOAT8 is implemented only for round='round' (TA, CAST_ROUND)")
        f = _as_f32(x)
        return hif8_encode(_clip_sat(f, qmax(dst)) if sat else f)
    if dst == "BFLOAT16" and round == "trunc":
        f = _as_f32(x)
        return _bf16_trunc(_clip_sat(f, qmax(dst)) if sat else f)
    if round not in ("rint", "none"):
        raise ValueError(f"cast to {dst} supports round='rint' or 'none', got {round!r}")
    if dst == "FLOAT4_E1M2":
        return e1m2_encode(x)  # always saturating
    if dst in _ML_FLOATS:
        f = _as_f32(x)
        with np.errstate(over="ignore"):  # overflow to Inf is the unsaturated result
            return (_clip_sat(f, qmax(dst)) if sat else f).astype(np_dtype(dst))
    raise ValueError(f"cast to {dst} is not supported (use e8m0_from_exponent for E8M0)")


def to_f32(a, src: str) -> np.ndarray:
    """Decode a storage array of CANN dtype ``src`` to float32."""
    info(src)
    if src == "HIFLOAT8":
        return hif8_decode(a)
    if src == "FLOAT4_E1M2":
        return e1m2_decode(a)
    if src == "FLOAT8_E8M0":
        return np.asarray(_e8m0_decode_lut()[_as_codes(a, 256)])
    arr = _numeric(a)
    want = np_dtype(src)
    if arr.dtype == np.uint8 and want.itemsize == 1 and want.kind not in "iub":
        # Raw codes of an 8-bit ml_dtypes type (FP8, or FP4 one per byte).
        limit = 16 if src == "FLOAT4_E2M1" else 256
        arr = _as_codes(arr, limit).astype(np.uint8).view(want)
    return arr.astype(np.float32)


# --------------------------------------------------------------------------- blocks

def _check_block(block) -> None:
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block <= 0:
        raise ValueError(f"block must be a positive integer, got {block!r}")


def block_reduce(x, block: int, op: str, axis: int = -1) -> np.ndarray:
    """Reduce consecutive blocks of ``block`` elements along ``axis``.

    The tail is zero-padded to a multiple of ``block``, as the kernels pad their
    buffers, so "max" over a partial block of negatives yields 0.  Result shape
    has ceil(n/block) along ``axis``.
    """
    if op not in ("max", "absmax", "sum"):
        raise ValueError(f"op must be max, absmax or sum, got {op!r}")
    _check_block(block)
    a = np.moveaxis(np.asarray(x), axis, -1)
    n = a.shape[-1]
    nb = -(-n // block)
    pad = nb * block - n
    if pad:
        a = np.concatenate([a, np.zeros(a.shape[:-1] + (pad,), dtype=a.dtype)], axis=-1)
    a = a.reshape(a.shape[:-1] + (nb, block))
    if op == "absmax":
        a = np.abs(a)
    r = a.sum(axis=-1) if op == "sum" else a.max(axis=-1)
    return np.moveaxis(r, -1, axis)


def block_broadcast(s, block: int, n: int) -> np.ndarray:
    """Expand per-block values (..., ceil(n/block)) back to (..., n) along the last axis."""
    _check_block(block)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    a = np.asarray(s)
    if a.ndim == 0 or a.shape[-1] != -(-n // block):
        raise ValueError(f"expected {-(-n // block)} blocks on the last axis, got shape {a.shape}")
    return np.repeat(a, block, axis=-1)[..., :n]


# ReduceSum of the first n elements (the count interface) on Atlas A2 / A3: a binary tree of adjacent pairs inside
# each 256-byte repeat, then the repeats' results added in order ("方式二", the Ascend C ReduceSum documentation,
# hiascend.com atlasascendc_api_07_0078). fp32 throughout; a short last repeat adds zeros, which changes nothing.
REDUCE_REPEAT_FLOATS = 64


def repeat_tree_sum(v: np.ndarray) -> np.ndarray:
    """The sum over the last axis in the device's ReduceSum order; keeps that axis (length 1)."""
    v = np.asarray(v, dtype=np.float32)
    n = v.shape[-1]
    lead = v.shape[:-1]
    pad = -n % REDUCE_REPEAT_FLOATS if n else REDUCE_REPEAT_FLOATS
    blocks = np.concatenate([v, np.zeros(lead + (pad,), np.float32)], axis=-1)
    blocks = blocks.reshape(lead + (-1, REDUCE_REPEAT_FLOATS))
    while blocks.shape[-1] > 1:
        blocks = blocks[..., 0::2] + blocks[..., 1::2]
    acc = np.zeros(lead, np.float32)
    for r in range(blocks.shape[-2]):
        acc = acc + blocks[..., r, 0]
    return acc[..., None]
