"""Exact-value tests for opgen.runtime.codecs (facts from shared/reference/formats.md)."""
import math

import ml_dtypes
import numpy as np
import pytest

from opgen.runtime import (
    biased_exponent,
    block_broadcast,
    block_reduce,
    cast,
    e1m2_decode,
    e1m2_encode,
    e8m0_from_exponent,
    emax,
    hif8_decode,
    hif8_encode,
    hif8_encode_reference,
    pack_fp4,
    to_f32,
    unpack_fp4,
)

F32 = np.float32


def f32_bits(*bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def u8(a):
    return np.asarray(a).view(np.uint8).tolist()


# --------------------------------------------------------------------------- HiFloat8

# Golden vectors of hicann/ge's unit test UtestHiF8 (fp32_to_hif8_golden), which
# tests HiF8::BitsFromFp32 of hicann/ge base/common/math/hif8_t.cc: f32 bits -> code.
HIF8_FP32_GOLDEN = [
    (0b00110110001110001100001010010000, 0b00000100),
    (0b00110110100110001010111010110110, 0b00000101),
    (0b00110110111001010001010111011101, 0b00000110),
    (0b00110111000111000010111111111000, 0b00000110),
    (0b00110101100010110100111101100111, 0b00000011),
    (0b00111111010010001000010010011110, 0b00011101),
    (0b00111100111111011100011111001101, 0b01010100),
    (0b00111111000100010010101000101100, 0b00011001),
    (0b00111111011001010101100101100101, 0b00011110),
    (0b00111110001000000100000011101101, 0b00111010),
    (0b01000011010000010001001110000011, 0b01001110),
    (0b01000011100011100000111000100001, 0b01100000),
    (0b01000010001101010110001110001001, 0b01000110),
    (0b01000011101100110000100011011011, 0b01100001),
    (0b01000010010100110110101100100101, 0b01000111),
    (0b01000110100001101100011111100111, 0b01101100),
    (0b01000110111000011100101001001010, 0b01101110),
    (0b01000101001111010110110100011011, 0b01100111),
    (0b01000110001010110000101110111111, 0b01101011),
    (0b01000111010000110101000001011110, 0b01101111),  # ~49999.4 -> Inf
]

# Same test file, fp16_to_hif8_golden (HiF8::BitsFromFp16): fp16 bits -> code.
HIF8_FP16_GOLDEN = [
    (0b0000000000000101, 0b00000001),
    (0b0000000000001000, 0b00000010),
    (0b0000000000101100, 0b00000100),
    (0b0000000000110011, 0b00000101),
    (0b0000000010001101, 0b00000110),
    (0b0010100010011011, 0b01010101),
    (0b0011011100010110, 0b00110110),
    (0b0010111001111001, 0b01010010),
    (0b0011101101101001, 0b00011111),
    (0b0011100011111100, 0b00011010),
    (0b0110011111011111, 0b01100110),
    (0b0110010011110011, 0b01100100),
    (0b0110010110001101, 0b01100101),
    (0b0110000001110000, 0b01100010),
    (0b0110100100011111, 0b01100111),
    (0b0111100001110001, 0b01101110),
    (0b0111011110101110, 0b01101110),
    (0b0111010001101110, 0b01101100),
    (0b0111000100011011, 0b01101011),
    (0b0111100111101010, 0b01101111),
]


def test_hif8_fp32_golden():
    bits = [b for b, _ in HIF8_FP32_GOLDEN]
    want = [c for _, c in HIF8_FP32_GOLDEN]
    assert hif8_encode(f32_bits(*bits)).tolist() == want
    assert [hif8_encode_reference(b) for b in bits] == want
    assert cast(f32_bits(*bits), "HIFLOAT8", round="round").tolist() == want


def test_hif8_fp16_golden():
    h = np.array([b for b, _ in HIF8_FP16_GOLDEN], dtype=np.uint16).view(np.float16)
    want = [c for _, c in HIF8_FP16_GOLDEN]
    assert hif8_encode(h).tolist() == want  # fp16 -> f32 is exact, so the f32 encoder applies


def _reference(x_f32):
    return np.array([hif8_encode_reference(int(b)) for b in x_f32.view(np.uint32)], dtype=np.uint8)


@pytest.mark.parametrize("storage", [np.float16, ml_dtypes.bfloat16])
def test_hif8_lut_equals_reference_on_every_16bit_value(storage):
    x = np.arange(1 << 16, dtype=np.uint16).view(storage).astype(np.float32)
    x = x[np.isfinite(x)]
    np.testing.assert_array_equal(hif8_encode(x), _reference(x))


def test_hif8_lut_equals_reference_on_strided_f32_patterns():
    # Every 4099th pattern: covers f32 subnormals, both signs, Inf and NaN payloads.
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    np.testing.assert_array_equal(hif8_encode(x), _reference(x))


def test_hif8_round_trip_all_codes():
    codes = np.arange(256, dtype=np.uint8)
    values = hif8_decode(codes)
    assert values.dtype == np.float32
    specials = {0x80, 0x6F, 0xEF}
    finite = np.array([c for c in range(256) if c not in specials], dtype=np.uint8)
    v = hif8_decode(finite)
    np.testing.assert_array_equal(hif8_decode(hif8_encode(v)), v)
    np.testing.assert_array_equal(hif8_encode(v), finite)
    assert hif8_encode(values[[0x6F, 0xEF]]).tolist() == [0x6F, 0xEF]


def test_hif8_decode_layout():
    d = hif8_decode(np.arange(256, dtype=np.uint8))
    assert d[0x00] == 0 and math.isnan(d[0x80])
    assert d[0x6F] == np.inf and d[0xEF] == -np.inf
    assert d[0x01] == 2.0**-22 and d[0x07] == 2.0**-16
    assert d[0x08:0x10].tolist() == [1 + i / 8 for i in range(8)]
    assert d[0x18] == 0.5 and d[0x20] == 4 and d[0x28] == 8
    assert d[0x40:0x48].tolist() == [16, 20, 24, 28, 32, 40, 48, 56]
    assert d[0x60:0x6F].tolist() == [2.0 ** (8 + i // 2) * (1.5 if i % 2 else 1) for i in range(15)]
    assert d[0x6E] == 32768 and d[0x7E] == 2.0**-15
    np.testing.assert_array_equal(d[0x81:0x100][d[0x81:0x100] == d[0x81:0x100]],
                                  -d[0x01:0x80][d[0x01:0x80] == d[0x01:0x80]])


def test_hif8_rounding_and_overflow():
    x = np.array([1.0625, -1.0625, 36864, 40959.996, 40960, -40960, 1.5 * 2.0**-17,
                  2.0**-23, np.nextafter(F32(2.0**-23), F32(0)), -0.0, np.nan, np.inf],
                 dtype=np.float32)
    # 1.0625 is the 1.0/1.125 midpoint: TA goes away from zero (RNE would give 1.0).
    assert cast(x, "HIFLOAT8", round="round").tolist() == [
        0x09, 0x89, 0x6E, 0x6E, 0x6F, 0xEF, 0x07, 0x01, 0x00, 0x00, 0x80, 0x6F]


def test_hif8_saturation():
    x = np.array([1e6, -1e6, np.inf, 40960, np.nan, 3.0], dtype=np.float32)
    assert cast(x, "HIFLOAT8", round="round", sat=True).tolist() == [0x6E, 0xEE, 0x6E, 0x6E, 0x80, 0x14]


def test_hif8_scalar_input():
    assert int(hif8_encode(F32(1.0))) == 0x08
    assert float(hif8_decode(np.uint8(0x08))) == 1.0


# --------------------------------------------------------------------------- INT8 / INT32 / INT64

def test_int8_rint_saturates():
    x = np.array([127.5, 200, -129, 2.5, np.nan, -128.5, 3.5, np.inf, -np.inf, -0.5], dtype=np.float32)
    out = cast(x, "INT8")
    assert out.dtype == np.int8
    assert out.tolist() == [127, 127, -128, 2, 0, -128, 4, 127, -128, 0]


@pytest.mark.parametrize("mode, want", [
    ("rint", [2, -2, 3, -3, 2]),
    ("none", [2, -2, 3, -3, 2]),
    ("round", [3, -3, 3, -3, 2]),
    ("trunc", [2, -2, 2, -2, 2]),
    ("floor", [2, -3, 2, -3, 2]),
    ("ceil", [3, -2, 3, -2, 3]),
])
def test_int8_round_modes(mode, want):
    x = np.array([2.5, -2.5, 2.7, -2.7, 2.2], dtype=np.float32)
    assert cast(x, "INT8", round=mode).tolist() == want


def test_round_half_away_is_exact():
    x = np.array([0.49999997, -0.49999997, 0.5, -0.5, 8388609.0], dtype=np.float32)
    assert cast(x, "INT32", round="round").tolist() == [0, 0, 1, -1, 8388609]


def test_int32_int64_saturate():
    x32 = np.array([2.0**31, -(2.0**40), np.nan, 1e10], dtype=np.float32)
    assert cast(x32, "INT32").tolist() == [2**31 - 1, -(2**31), 0, 2**31 - 1]
    x64 = np.array([2.0**63, -(2.0**70), np.inf, 2.0**62, -3.5])
    assert cast(x64, "INT64").tolist() == [2**63 - 1, -(2**63), 2**63 - 1, 2**62, -4]
    assert cast(x64, "INT64").dtype == np.int64


# --------------------------------------------------------------------------- FP8 / FP16 / BF16

def test_e4m3_overflow_and_saturation():
    x = np.array([464, 465, -465, 1.0625, 1.1875, np.inf, np.nan], dtype=np.float32)
    unsat = cast(x, "FLOAT8_E4M3FN").astype(np.float32)
    assert unsat[0] == 448 and np.isnan(unsat[1]) and np.isnan(unsat[2])
    assert unsat[3] == 1.0 and unsat[4] == 1.25 and np.isnan(unsat[5]) and np.isnan(unsat[6])
    sat = cast(x, "FLOAT8_E4M3FN", sat=True)
    assert sat.dtype == ml_dtypes.float8_e4m3fn
    assert sat.astype(np.float32)[:6].tolist() == [448, 448, -448, 1.0, 1.25, 448]
    assert np.isnan(sat.astype(np.float32)[6])


def test_e5m2_overflow_and_saturation():
    x = np.array([61439, 61440, -61440, 1e9], dtype=np.float32)
    assert cast(x, "FLOAT8_E5M2").astype(np.float32).tolist() == [57344, np.inf, -np.inf, np.inf]
    assert cast(x, "FLOAT8_E5M2", sat=True).astype(np.float32).tolist() == [57344, 57344, -57344, 57344]


def test_fp16_bf16_rne_and_sat():
    big = np.array([65519, 65520, 70000, -np.inf], dtype=np.float32)
    assert cast(big, "FLOAT16").tolist() == [65504, np.inf, np.inf, -np.inf]
    assert cast(big, "FLOAT16", sat=True).tolist() == [65504, 65504, 65504, -65504]
    x = f32_bits(0x3F80FFFF, 0xBF80FFFF, 0x3F808000, 0x3F818000)
    assert cast(x, "BFLOAT16").view(np.uint16).tolist() == [0x3F81, 0xBF81, 0x3F80, 0x3F82]


def test_bf16_trunc():
    x = f32_bits(0x3F80FFFF, 0xBF80FFFF, 0x00000001, 0x7F800001, 0xFF800000)
    out = cast(x, "BFLOAT16", round="trunc")
    assert out.dtype == ml_dtypes.bfloat16
    bits = out.view(np.uint16).tolist()
    assert bits[:3] == [0x3F80, 0xBF80, 0x0000] and bits[4] == 0xFF80
    assert np.isnan(out.astype(np.float32)[3])  # low-payload NaN stays NaN, not Inf


def test_fp4_e2m1_via_ml_dtypes():
    x = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, 100, np.inf, -7], dtype=np.float32)
    out = cast(x, "FLOAT4_E2M1")
    assert out.dtype == ml_dtypes.float4_e2m1fn
    assert out.astype(np.float32).tolist() == [0, 1, 1, 2, 2, 4, 4, 6, 6, 6, -6]


def test_float32_target():
    assert cast(np.array([1e300, 0.1]), "FLOAT32").tolist() == [np.inf, F32(0.1)]
    top = float(np.finfo(F32).max)
    assert cast(np.array([1e300, -1e300]), "FLOAT32", sat=True).tolist() == [top, -top]


@pytest.mark.parametrize("dst, mode", [
    ("FLOAT16", "trunc"), ("FLOAT8_E4M3FN", "round"), ("FLOAT8_E5M2", "floor"),
    ("FLOAT4_E2M1", "ceil"), ("FLOAT4_E1M2", "round"), ("HIFLOAT8", "rint"), ("HIFLOAT8", "none"),
    ("FLOAT8_E8M0", "rint"), ("BOOL", "rint"), ("INT8", "nearest"), ("NOPE", "rint"),
])
def test_unsupported_casts_raise(dst, mode):
    with pytest.raises(ValueError):
        cast(np.ones(2, dtype=np.float32), dst, round=mode)


def test_cast_rejects_non_numeric():
    with pytest.raises(TypeError):
        cast(np.array(["a"]), "INT8")


# --------------------------------------------------------------------------- FLOAT4_E1M2

def test_e1m2_table():
    assert e1m2_decode(np.arange(16, dtype=np.uint8)).tolist() == [
        0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, -0.0, -0.25, -0.5, -0.75, -1.0, -1.25, -1.5, -1.75]
    assert np.signbit(e1m2_decode(np.uint8(8)))


def test_e1m2_encode_rne_and_saturation():
    x = np.array([0.125, 0.375, 0.625, 0.875, 1.125, 1.8, 1.875, 100, np.inf, -np.inf,
                  np.nan, -0.25, -0.0, 0.3], dtype=np.float32)
    assert e1m2_encode(x).tolist() == [0, 2, 2, 4, 4, 7, 7, 7, 7, 15, 0, 9, 8, 1]
    assert cast(x, "FLOAT4_E1M2").tolist() == e1m2_encode(x).tolist()
    codes = np.arange(16, dtype=np.uint8)
    np.testing.assert_array_equal(e1m2_encode(e1m2_decode(codes)), codes)


def test_e1m2_rejects_bad_codes():
    with pytest.raises(ValueError):
        e1m2_decode(np.array([16], dtype=np.uint8))
    with pytest.raises(TypeError):
        e1m2_decode(np.array([1.0]))


# --------------------------------------------------------------------------- E8M0

def test_e8m0_codes():
    codes = np.array([0, 127, 254, 255])
    e = e8m0_from_exponent(codes)
    assert e.dtype == ml_dtypes.float8_e8m0fnu
    assert u8(e) == [0, 127, 254, 255]
    v = to_f32(e, "FLOAT8_E8M0")
    assert v[:3].tolist() == [2.0**-127, 1.0, 2.0**127] and np.isnan(v[3])
    np.testing.assert_array_equal(to_f32(codes.astype(np.uint8), "FLOAT8_E8M0"), v)
    np.testing.assert_array_equal(e.astype(np.float32), v)  # ml_dtypes agrees on decode


def test_e8m0_rejects_bad_codes():
    with pytest.raises(ValueError):
        e8m0_from_exponent(np.array([256]))
    with pytest.raises(ValueError):
        e8m0_from_exponent(np.array([-1]))
    with pytest.raises(TypeError):
        e8m0_from_exponent(np.array([1.0]))


# --------------------------------------------------------------------------- to_f32

def test_to_f32_decodes_storage_and_codes():
    assert to_f32(np.array([0x08, 0x80], dtype=np.uint8), "HIFLOAT8")[0] == 1.0
    e4 = np.array([1.0, -448, 0.5], dtype=np.float32).astype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(to_f32(e4, "FLOAT8_E4M3FN"), [1.0, -448, 0.5])
    np.testing.assert_array_equal(to_f32(e4.view(np.uint8), "FLOAT8_E4M3FN"), [1.0, -448, 0.5])
    assert to_f32(np.array([7, 15], dtype=np.uint8), "FLOAT4_E2M1").tolist() == [6, -6]
    assert to_f32(np.array([-128, 127], dtype=np.int8), "INT8").tolist() == [-128, 127]
    with pytest.raises(ValueError):
        to_f32(np.array([16], dtype=np.uint8), "FLOAT4_E2M1")
    assert to_f32(np.array([1, 2], dtype=np.uint8), "FLOAT16").tolist() == [1, 2]  # values, not bits


# --------------------------------------------------------------------------- exponents, MX

def test_biased_exponent():
    bf = np.array([0, 1, 8, -512, np.inf, np.nan, 2.0**-130], dtype=np.float32)
    bf = bf.astype(ml_dtypes.bfloat16)
    assert biased_exponent(bf, "BFLOAT16").tolist() == [0, 127, 130, 136, 255, 255, 0]
    h = np.array([0, 2.0**-24, 2.0**-15, 65504, np.inf, np.nan], dtype=np.float16)
    # fp16 subnormals become bf16 normals under the TRUNC cast.
    assert biased_exponent(h, "FLOAT16").tolist() == [0, 103, 112, 142, 255, 255]
    f = f32_bits(0x00000001, 0x3F800000, 0x7F7FFFFF)
    assert biased_exponent(f, "FLOAT32").tolist() == [0, 127, 254]
    with pytest.raises(ValueError):
        biased_exponent(f, "INT8")


def _mx_quantise(x_bf16, dst):
    """Ascend quantMode 4 for one row, built from the runtime primitives."""
    e = block_reduce(biased_exponent(x_bf16, "BFLOAT16"), 32, "max")
    code = np.where(e == 255, 255, np.where(e == 0, 0, np.maximum(e, emax(dst)) - emax(dst)))
    inv = np.ldexp(F32(1), 127 - code)  # exact 2^-sharedExp
    y = x_bf16.astype(np.float32) * block_broadcast(inv, 32, x_bf16.shape[-1]).astype(np.float32)
    return e8m0_from_exponent(code), cast(y, dst, sat=True)


def test_mx_doc_example():
    # aclnnDynamicMxQuant doc example: bf16 (0, 8, 64, 512) -> scale code 128, e4m3 bytes (0, 72, 96, 120).
    x = np.array([0, 8, 64, 512], dtype=np.float32).astype(ml_dtypes.bfloat16)
    scale, q = _mx_quantise(x, "FLOAT8_E4M3FN")
    assert u8(scale) == [128]
    assert u8(q) == [0, 72, 96, 120]


def test_mx_saturates_and_handles_zero_block():
    # 480 has exponent 8, so the scale is 2^0 and 480 saturates to 448.
    x = np.array([480] + [0] * 31 + [0] * 32, dtype=np.float32).astype(ml_dtypes.bfloat16)
    scale, q = _mx_quantise(x, "FLOAT8_E4M3FN")
    assert u8(scale) == [127, 0]
    assert q.astype(np.float32)[0] == 448 and not q.astype(np.float32)[1:].any()


# --------------------------------------------------------------------------- FP4 packing

def test_pack_fp4_nibble_order():
    packed = pack_fp4(np.array([1, 2, 3, 4], dtype=np.uint8), "FLOAT4_E1M2")
    assert packed.tolist() == [0x21, 0x43]  # element 2i in the low nibble
    vals = np.array([0.5, 6.0, -1.0, 0.0], dtype=np.float32)
    assert pack_fp4(vals, "FLOAT4_E2M1").tolist() == [0x71, 0x0A]
    assert pack_fp4(vals.astype(ml_dtypes.float4_e2m1fn), "FLOAT4_E2M1").tolist() == [0x71, 0x0A]
    assert pack_fp4(np.array([0.25, -1.75], dtype=np.float32), "FLOAT4_E1M2").tolist() == [0xF1]


@pytest.mark.parametrize("dtype", ["FLOAT4_E2M1", "FLOAT4_E1M2"])
def test_fp4_round_trip(dtype):
    codes = np.random.default_rng(0).integers(0, 16, size=(3, 8)).astype(np.uint8)
    packed = pack_fp4(codes, dtype)
    assert packed.shape == (3, 4) and packed.dtype == np.uint8
    back = unpack_fp4(packed, dtype)
    assert back.shape == (3, 8)
    np.testing.assert_array_equal(back.view(np.uint8), codes)
    if dtype == "FLOAT4_E2M1":
        assert back.dtype == ml_dtypes.float4_e2m1fn


def test_fp4_errors():
    with pytest.raises(ValueError):
        pack_fp4(np.array([1, 2, 3], dtype=np.uint8), "FLOAT4_E1M2")
    with pytest.raises(ValueError):
        pack_fp4(np.array([1, 2], dtype=np.uint8), "FLOAT8_E4M3FN")
    with pytest.raises(ValueError):
        pack_fp4(np.array([1, 16], dtype=np.uint8), "FLOAT4_E1M2")
    with pytest.raises(TypeError):
        unpack_fp4(np.array([1, 2], dtype=np.int32), "FLOAT4_E1M2")


# --------------------------------------------------------------------------- blocks

def test_block_reduce():
    x = np.array([[1, -5, 2, 3, -7], [0, 0, -1, -2, -3]], dtype=np.float32)
    assert block_reduce(x, 2, "absmax").tolist() == [[5, 3, 7], [0, 2, 3]]
    assert block_reduce(x, 2, "sum").tolist() == [[-4, 5, -7], [0, -3, -3]]
    # The zero-padded tail takes part in "max", as in the kernels' padded buffers.
    assert block_reduce(x, 2, "max").tolist() == [[1, 3, 0], [0, -1, 0]]
    assert block_reduce(x, 2, "absmax", axis=0).tolist() == [[1, 5, 2, 3, 7]]
    assert block_reduce(np.zeros((2, 0)), 4, "max").shape == (2, 0)


def test_block_broadcast_inverts_block_reduce_shape():
    s = np.array([[1, 2, 3]])
    assert block_broadcast(s, 2, 5).tolist() == [[1, 1, 2, 2, 3]]
    with pytest.raises(ValueError):
        block_broadcast(s, 2, 7)
    with pytest.raises(ValueError):
        block_reduce(s, 0, "max")
    with pytest.raises(ValueError):
        block_reduce(s, 2, "mean")


# --------------------------------------------------------------------------- optional oracle

def test_en_dtypes_cross_check():
    en = pytest.importorskip("en_dtypes")
    x = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(hif8_encode(x), x.astype(en.hifloat8).view(np.uint8))
    y = np.linspace(-3, 3, 20001, dtype=np.float32)
    np.testing.assert_array_equal(e1m2_encode(y), y.astype(en.float4_e1m2).view(np.uint8) & 0x0F)
    codes = np.arange(256, dtype=np.uint8)
    theirs = codes.view(en.float8_e8m0).astype(np.float32)
    np.testing.assert_array_equal(to_f32(codes, "FLOAT8_E8M0"), theirs)
