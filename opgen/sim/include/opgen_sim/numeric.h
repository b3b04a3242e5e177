/**
 * The element types of the Ascend C kernel API and the conversions of AscendC::Cast, bit-exact on the host.
 *
 * The types are the bisheng builtins of the global namespace (half, bfloat16_t, hifloat8_t, fp8_*, fp4x2_*):
 * each holds its raw storage bits in `.bits`.  Conversions match the numpy reference of opgen.runtime.codecs
 * (its cast() and to_f32()), which is the oracle the twin's outputs are compared with bit for bit:
 *   - half, bfloat16_t, float: IEEE formats; RINT is round to nearest even and overflows to Inf (not
 *     saturating, as numpy / ml_dtypes cast).  The Ascend C Cast page says float -> half/bf16 overflow
 *     "saturates by default"; we follow codecs, which assumes the INF_NAN overflow mode.
 *   - fp8_e4m3fn_t / fp8_e5m2_t: ml_dtypes float8_e4m3fn / float8_e5m2 (RNE; e4m3fn overflows to NaN, e5m2 to Inf).
 *   - hifloat8_t: the TA (CAST_ROUND) encoder of hicann/ge hif8_t.cc as codecs.hif8_encode_reference ports it.
 *   - fp4x2_e2m1_t: ml_dtypes float4_e2m1fn; fp4x2_e1m2_t: codecs.e1m2_encode (both always saturate).
 *     Two elements per byte: element 2i in the low nibble, 2i+1 in the high nibble (codecs.pack_fp4).
 *   - fp8_e8m0_t: 2^(code - 127), code 255 = NaN; never a Cast operand (kernels build E8M0 codes with integer
 *     arithmetic, formats.md section 3.4).  Its float constructor follows ml_dtypes float8_e8m0fnu.
 *   - integers: round per RoundMode, then saturate; NaN -> 0 (codecs._cast_int).
 * Every encoder rounds the exact source value once (integer arithmetic on sign, mantissa and exponent), so no
 * path double-rounds.  Storage is little-endian, as on the device and on every host the twin runs on.
 *
 * NaN bit patterns follow the oracle libraries: float -> half keeps the top payload bits (numpy), float -> bf16
 * gives sign|0x7FC0 (ml_dtypes, and codecs._bf16_trunc), half/bf16 -> float keep the payload, fp8 -> float give
 * the quiet NaN 0x7FC00000 with the sign.  The device's NaN payloads are not documented.
 */
#ifndef OPGEN_SIM_NUMERIC_H
#define OPGEN_SIM_NUMERIC_H

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace AscendC {
// include/basic_api/kernel_type.h (asc-devkit)
enum class RoundMode {
    CAST_NONE = 0,  // exact, or RINT when lossy
    CAST_RINT,      // round half to even
    CAST_FLOOR,     // toward -inf
    CAST_CEIL,      // toward +inf
    CAST_ROUND,     // round half away from zero
    CAST_TRUNC,     // toward zero
    CAST_ODD,       // von Neumann: an inexact result gets an odd last mantissa bit
    CAST_HYBRID,    // stochastic rounding to hifloat8_t
    UNKNOWN = 0xFF,  // impl/basic_api/utils/kernel_utils_mode.h: a register CastTrait's "not given" (no rounding)
};
}  // namespace AscendC

namespace opgen_sim {

// The element types of the twin, as ElemOf<T>::value names them.
enum class Elem : uint8_t {
    kBool, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kF32, kF64,
    kF16, kBF16, kHif8, kE5M2, kE4M3, kE8M0, kE2M1, kE1M2,
};

namespace detail {

using RoundMode = AscendC::RoundMode;

inline uint32_t F32Bits(float value)
{
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
}

inline float F32FromBits(uint32_t bits)
{
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
}

inline int TopBit(uint64_t v)  // index of the highest set bit; v != 0
{
    return 63 - __builtin_clzll(v);
}

// A value exactly: (-1)^neg * mag * 2^exp, or Inf, or NaN.  Every element value and every product of an
// int32 with an fp32 deq scale fits (mag < 2^55).
struct Exact {
    enum Kind : uint8_t { kFinite, kInf, kNan };
    Kind kind = kFinite;
    bool neg = false;
    uint64_t mag = 0;
    int32_t exp = 0;
    uint32_t nanBits = 0;  // a NaN as the fp32 pattern it decodes to: targets derive their NaN from it
};

inline Exact ExactFromInt(int64_t v)
{
    Exact x;
    x.neg = v < 0;
    x.mag = x.neg ? 0U - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return x;
}

// mag / 2^shift rounded to an integer per mode (shift >= 1).  The sign picks the direction of FLOOR/CEIL.
inline uint64_t RoundShift(uint64_t mag, int shift, bool neg, RoundMode mode)
{
    uint64_t q = 0U;
    int vsHalf = -1;  // the discarded part against half a unit: -1 below, 0 equal, 1 above
    bool inexact = mag != 0U;
    if (shift < 64) {
        q = mag >> shift;
        const uint64_t rem = mag & ((uint64_t{1} << shift) - 1U);
        const uint64_t halfUnit = uint64_t{1} << (shift - 1);
        vsHalf = rem > halfUnit ? 1 : (rem == halfUnit ? 0 : -1);
        inexact = rem != 0U;
    } else if (shift == 64) {
        const uint64_t halfUnit = uint64_t{1} << 63;
        vsHalf = mag > halfUnit ? 1 : (mag == halfUnit ? 0 : -1);
    }
    bool up = false;
    switch (mode) {
        case RoundMode::CAST_ROUND: up = vsHalf >= 0; break;
        case RoundMode::CAST_TRUNC: up = false; break;
        case RoundMode::CAST_FLOOR: up = neg && inexact; break;
        case RoundMode::CAST_CEIL: up = !neg && inexact; break;
        case RoundMode::CAST_ODD: up = inexact && (q & 1U) == 0U; break;
        default: up = vsHalf > 0 || (vsHalf == 0 && (q & 1U) != 0U); break;  // RINT, NONE
    }
    return q + (up ? 1U : 0U);
}

// ---- binary floating-point formats ----------------------------------------------------------------------------
enum class Overflow : uint8_t {
    kIeee,      // Inf exists: nearest modes overflow to Inf, directed modes toward zero stop at the max finite
    kNan,       // no Inf, overflow is NaN (float8_e4m3fn)
    kSaturate,  // no Inf, no NaN: every overflow gives the max finite (FP4)
};
enum class NanRule : uint8_t {
    kKeep,       // fp32: the NaN itself
    kTopBits,    // half: sign | 0x7C00 | top 10 payload bits, at least 1 (numpy npy_floatbits_to_halfbits)
    kQuiet,      // sign | `special` | the top mantissa bit set (bf16 0x7FC0, e5m2 0x7E); e4m3fn: sign | 0x7F
    kSignFlip,   // float4_e2m1fn: ml_dtypes 0.7 gives code 8 for +NaN and 0 for -NaN
    kZero,       // E1M2: 0 (codecs.e1m2_encode)
};

struct Format {
    int mant;            // stored mantissa bits
    int bias;
    uint32_t maxFinite;  // magnitude code of the largest finite value
    uint32_t sign;       // the sign bit of a code
    uint32_t special;    // magnitude code of Inf (kIeee) or of the NaN (kNan)
    Overflow overflow;
    NanRule nan;
    bool keepPayload;    // decoding a NaN keeps its payload (half, bf16, fp32) or gives 0x7FC00000 (fp8)
};

inline constexpr Format kF32{23, 127, 0x7F7FFFFFU, 0x80000000U, 0x7F800000U, Overflow::kIeee, NanRule::kKeep, true};
inline constexpr Format kF16{10, 15, 0x7BFFU, 0x8000U, 0x7C00U, Overflow::kIeee, NanRule::kTopBits, true};
inline constexpr Format kBF16{7, 127, 0x7F7FU, 0x8000U, 0x7F80U, Overflow::kIeee, NanRule::kQuiet, true};
inline constexpr Format kE5M2{2, 15, 0x7BU, 0x80U, 0x7CU, Overflow::kIeee, NanRule::kQuiet, false};
inline constexpr Format kE4M3{3, 7, 0x7EU, 0x80U, 0x7FU, Overflow::kNan, NanRule::kQuiet, false};
inline constexpr Format kE2M1{1, 1, 0x7U, 0x8U, 0x0U, Overflow::kSaturate, NanRule::kSignFlip, false};
inline constexpr Format kE1M2{2, 1, 0x7U, 0x8U, 0x0U, Overflow::kSaturate, NanRule::kZero, false};

// The binary format of e; nullptr for the others (integers, double, hifloat8_t, fp8_e8m0_t).
inline const Format* FormatOf(Elem e)
{
    switch (e) {
        case Elem::kF32: return &kF32;
        case Elem::kF16: return &kF16;
        case Elem::kBF16: return &kBF16;
        case Elem::kE5M2: return &kE5M2;
        case Elem::kE4M3: return &kE4M3;
        case Elem::kE2M1: return &kE2M1;
        case Elem::kE1M2: return &kE1M2;
        default: return nullptr;
    }
}

inline Exact DecodeFormat(uint32_t code, const Format& f)
{
    Exact x;
    x.neg = (code & f.sign) != 0U;
    const uint32_t m = code & (f.sign - 1U);
    const uint32_t field = m >> f.mant;
    const uint32_t frac = m & ((1U << f.mant) - 1U);
    const bool allOnes = field == (f.special >> f.mant);
    if ((f.overflow == Overflow::kIeee && allOnes) || (f.overflow == Overflow::kNan && m == f.special)) {
        if (f.overflow == Overflow::kIeee && frac == 0U) {
            x.kind = Exact::kInf;
            return x;
        }
        x.kind = Exact::kNan;
        const uint32_t s = x.neg ? 0x80000000U : 0U;
        x.nanBits = f.keepPayload ? (s | 0x7F800000U | (frac << (23 - f.mant))) : (s | 0x7FC00000U);
        return x;
    }
    if (field == 0U) {
        x.mag = frac;
        x.exp = 1 - f.bias - f.mant;
    } else {
        x.mag = frac | (1U << f.mant);
        x.exp = static_cast<int32_t>(field) - f.bias - f.mant;
    }
    return x;
}

inline uint32_t NanCode(const Exact& x, const Format& f)
{
    const bool neg = (x.nanBits >> 31) != 0U;
    const uint32_t s = neg ? f.sign : 0U;
    switch (f.nan) {
        case NanRule::kKeep: return x.nanBits;
        case NanRule::kTopBits: {
            const uint32_t top = (x.nanBits & 0x7FFFFFU) >> 13;
            return s | 0x7C00U | (top != 0U ? top : 1U);
        }
        case NanRule::kQuiet:
            return f.overflow == Overflow::kNan ? (s | f.special) : (s | f.special | (1U << (f.mant - 1)));
        case NanRule::kSignFlip: return neg ? 0U : f.sign;
        default: return 0U;
    }
}

inline uint32_t OverflowCode(const Format& f, bool neg, RoundMode mode)
{
    const uint32_t s = neg ? f.sign : 0U;
    if (f.overflow == Overflow::kSaturate) {
        return s | f.maxFinite;
    }
    // IEEE 754: the nearest modes and the directed mode pointing away from zero leave the range.
    const bool away = mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_ROUND ||
                      (mode == RoundMode::CAST_CEIL && !neg) || (mode == RoundMode::CAST_FLOOR && neg);
    return s | (away ? f.special : f.maxFinite);
}

// The code of x in format f, rounded once per mode.
inline uint32_t EncodeFormat(const Exact& x, const Format& f, RoundMode mode)
{
    const uint32_t s = x.neg ? f.sign : 0U;
    if (x.kind == Exact::kNan) {
        return NanCode(x, f);
    }
    if (x.kind == Exact::kInf) {  // an infinity is exact in every mode where the format has one
        return s | (f.overflow == Overflow::kSaturate ? f.maxFinite : f.special);
    }
    if (x.mag == 0U) {
        return s;
    }
    const int e = x.exp + TopBit(x.mag);  // x = 1.xxx * 2^e
    const int emin = 1 - f.bias;
    const int emaxField = static_cast<int>(f.maxFinite >> f.mant);
    if (e > emaxField - f.bias + 1) {  // at least twice the largest binade: no rounding brings it back
        return OverflowCode(f, x.neg, mode);
    }
    const int scale = e < emin ? emin : e;  // subnormals share the exponent of the smallest normal
    const int quantum = scale - f.mant;     // exponent of the last kept bit
    const uint64_t q =
        quantum <= x.exp ? (x.mag << (x.exp - quantum)) : RoundShift(x.mag, quantum - x.exp, x.neg, mode);
    // (scale + bias - 1) is 0 for subnormals; a mantissa carry into 2^(mant+1) moves into the exponent field.
    const uint32_t code = (static_cast<uint32_t>(scale + f.bias - 1) << f.mant) + static_cast<uint32_t>(q);
    if (code > f.maxFinite) {
        return OverflowCode(f, x.neg, mode);
    }
    return s | code;
}

inline Exact ExactFromF32(float value) { return DecodeFormat(F32Bits(value), kF32); }

// ---- integers ---------------------------------------------------------------------------------------------------
// Round per mode, then saturate to [lo, hi] (lo >= -2^62); NaN -> 0, +-Inf -> hi / lo.
inline int64_t EncodeInt(const Exact& x, int64_t lo, int64_t hi, RoundMode mode)
{
    if (x.kind == Exact::kNan) {
        return 0;
    }
    if (x.kind == Exact::kInf) {
        return x.neg ? lo : hi;
    }
    uint64_t q = 0U;
    if (x.mag == 0U) {
        return 0;
    } else if (x.exp >= 0) {
        if (TopBit(x.mag) + x.exp >= 62) {
            return x.neg ? lo : hi;
        }
        q = x.mag << x.exp;
    } else {
        q = RoundShift(x.mag, -x.exp, x.neg, mode);
    }
    if (x.neg) {
        return q > static_cast<uint64_t>(-lo) ? lo : -static_cast<int64_t>(q);
    }
    return q > static_cast<uint64_t>(hi) ? hi : static_cast<int64_t>(q);
}

// ---- HiFloat8 (hicann/ge base/common/math/hif8_t.cc; codecs.hif8_encode_reference) -----------------------------
inline constexpr uint8_t kHif8Nan = 0x80U;
inline constexpr uint8_t kHif8Inf = 0x6FU;

inline uint32_t Hif8Width(int mag)  // mantissa bits per |exponent| (0..22)
{
    return mag <= 3 ? 3U : (mag <= 7 ? 2U : (mag <= 15 ? 1U : 0U));
}

inline uint32_t Hif8Pack(int exp, uint32_t mantissa)
{
    if (exp <= -16) {  // denormal band: code = exp + 23
        return static_cast<uint32_t>(exp + 23);
    }
    const int mag = exp < 0 ? -exp : exp;
    static const uint32_t kDot[16] = {0x1U, 0x2U, 0x4U, 0x4U, 0x8U, 0x8U, 0x8U, 0x8U,
                                      0xCU, 0xCU, 0xCU, 0xCU, 0xCU, 0xCU, 0xCU, 0xCU};
    uint32_t em = 0U;
    if (mag != 0) {
        const int top = TopBit(static_cast<uint64_t>(mag));  // the implicit leading 1 becomes the exponent sign
        em = (static_cast<uint32_t>(mag) & ~(1U << top)) | (static_cast<uint32_t>(exp < 0) << top);
    }
    return (kDot[mag] << 3) | (em << Hif8Width(mag)) | mantissa;
}

// TA rounding (CAST_ROUND): add half an ulp at the target width, truncate; |x| >= 40960 -> Inf.
inline uint8_t Hif8FromF32Bits(uint32_t bits)
{
    const uint32_t magBits = bits & 0x7FFFFFFFU;
    if (magBits == 0U) {
        return 0U;  // +-0 share code 0
    }
    const uint32_t sign = (bits >> 31) != 0U ? 0x80U : 0U;
    const uint32_t field = magBits >> 23;
    uint32_t man = magBits & 0x7FFFFFU;
    if (field == 0xFFU) {
        return man != 0U ? kHif8Nan : static_cast<uint8_t>(sign | kHif8Inf);
    }
    int exp = static_cast<int>(field) - 127;
    if (field == 0U) {  // fp32 subnormal: normalise (always far below HiF8's range)
        const int shift = 23 - (TopBit(man) + 1) + 1;
        exp = -126 - shift;
        man = (man << shift) & 0x7FFFFFU;
    }
    if (exp < -23) {
        return 0U;
    }
    if (exp > 15) {
        return static_cast<uint8_t>(sign | kHif8Inf);
    }
    if (exp == -23) {  // [2^-23, 2^-22) rounds up to the smallest denormal 2^-22
        return static_cast<uint8_t>(sign | Hif8Pack(-22, 0U));
    }
    const uint32_t discard = 23U - Hif8Width(exp < 0 ? -exp : exp);
    man += 1U << (discard - 1U);
    if ((man >> 23) != 0U) {
        man &= 0x7FFFFFU;
        exp += 1;
        if (exp > 15) {
            return static_cast<uint8_t>(sign | kHif8Inf);
        }
    }
    return static_cast<uint8_t>(sign | Hif8Pack(exp, man >> discard));
}

// The bit layout of formats.md section 2.2 (codecs._hif8_decode_lut).
inline uint32_t Hif8ToF32Bits(uint8_t code)
{
    if (code == kHif8Nan) {
        return 0x7FC00000U;
    }
    const uint32_t sign = (code & 0x80U) != 0U ? 0x80000000U : 0U;
    const uint32_t low = code & 0x7FU;
    if (low == kHif8Inf) {
        return sign | 0x7F800000U;
    }
    static const int kDotWidth[16] = {-1, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
    static const int kMantWidth[16] = {3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1};
    const uint32_t prefix = low >> 3;
    const int d = kDotWidth[prefix];
    Exact x;
    x.neg = sign != 0U;
    if (d < 0) {  // denormal band 2^(M - 23); code 0 is +0
        if ((low & 7U) == 0U) {
            return 0U;
        }
        x.mag = 1U;
        x.exp = static_cast<int32_t>(low & 7U) - 23;
    } else {
        const int mw = kMantWidth[prefix];
        const int dd = d < 1 ? 1 : d;
        const uint32_t em = (low >> mw) & ((1U << dd) - 1U);
        const int expMag = static_cast<int>(em | (1U << (dd - 1)));
        const int exp = d == 0 ? 0 : ((em & (1U << (dd - 1))) != 0U ? -expMag : expMag);
        x.mag = (1U << mw) | (low & ((1U << mw) - 1U));
        x.exp = exp - mw;
    }
    return EncodeFormat(x, kF32, RoundMode::CAST_RINT);  // exact
}

// ---- E8M0 (OCP scale: 2^(code - 127), 255 = NaN) ---------------------------------------------------------------
inline uint32_t E8m0ToF32Bits(uint8_t code)
{
    if (code == 0xFFU) {
        return 0x7FC00000U;
    }
    return code == 0U ? 0x00400000U : static_cast<uint32_t>(code) << 23;  // code 0 is the fp32 subnormal 2^-127
}

// ml_dtypes float8_e8m0fnu: the nearest power of two, a mantissa of 1.5 or more rounding up; 0, negatives,
// Inf and NaN give NaN; below 2^-127 stays code 0.  (en_dtypes rounds differently: formats.md section 1.2.)
inline uint8_t E8m0FromF32Bits(uint32_t bits)
{
    const uint32_t magBits = bits & 0x7FFFFFFFU;
    if ((bits >> 31) != 0U || magBits == 0U || magBits >= 0x7F800000U) {
        return 0xFFU;
    }
    const Exact x = DecodeFormat(bits, kF32);
    const int top = TopBit(x.mag);
    const int e = x.exp + top;  // floor(log2 x)
    const bool up = top >= 1 && ((x.mag >> (top - 1)) & 1U) != 0U;
    const int code = e + 127 + (up ? 1 : 0);
    return code < 0 ? 0U : (code > 254 ? 0xFFU : static_cast<uint8_t>(code));
}

// The scalar conversions of the element types (their float constructor and operator float) on the storage code:
// RINT from float (TA for hifloat8_t, ml_dtypes for fp8_e8m0_t), exact to float.  As the device's scalar
// conversions do, an fp4x2 byte converts from float into its low nibble (the high nibble 0) and to float from it.
inline uint32_t CodeFromFloat(Elem e, float v)
{
    switch (e) {
        case Elem::kHif8: return Hif8FromF32Bits(F32Bits(v));
        case Elem::kE8M0: return E8m0FromF32Bits(F32Bits(v));
        default: return EncodeFormat(ExactFromF32(v), *FormatOf(e), RoundMode::CAST_RINT);
    }
}

inline float FloatFromCode(Elem e, uint32_t code)
{
    switch (e) {
        case Elem::kHif8: return F32FromBits(Hif8ToF32Bits(static_cast<uint8_t>(code)));
        case Elem::kE8M0: return F32FromBits(E8m0ToF32Bits(static_cast<uint8_t>(code)));
        case Elem::kE2M1:
        case Elem::kE1M2: code &= 0xFU; break;
        default: break;
    }
    return F32FromBits(EncodeFormat(DecodeFormat(code, *FormatOf(e)), kF32, RoundMode::CAST_RINT));
}

}  // namespace detail

// ---- element types (bisheng builtins; include/basic_api/kernel_type.h) --------------------------------------------
// Trivially copyable holders of the raw storage bits, one instance of Storage per type, so that each is a distinct
// type.  Converting from float rounds as detail::CodeFromFloat says (not saturating where the format has Inf or
// NaN, as codecs.cast(..., sat=False)); converting to float is exact.  The namespace holds nothing else: it is
// the one that argument-dependent lookup adds for these types (and for LocalTensor<half> etc.).
namespace element {
template <Elem E, typename Bits>
struct Storage {
    Bits bits;
    Storage() : bits(0U) {}
    Storage(float value) : bits(static_cast<Bits>(detail::CodeFromFloat(E, value))) {}
    operator float() const { return detail::FloatFromCode(E, bits); }
    static Storage FromBits(Bits raw)
    {
        Storage s;
        s.bits = raw;
        return s;
    }
};
}  // namespace element
}  // namespace opgen_sim

using half = opgen_sim::element::Storage<opgen_sim::Elem::kF16, uint16_t>;
using bfloat16_t = opgen_sim::element::Storage<opgen_sim::Elem::kBF16, uint16_t>;
namespace opgen_sim {
// The arch35 element types under the twin's own names (its numerics need them whatever the kernel's arch).
using Hif8 = element::Storage<Elem::kHif8, uint8_t>;
using E5M2 = element::Storage<Elem::kE5M2, uint8_t>;
using E4M3 = element::Storage<Elem::kE4M3, uint8_t>;
using E8M0 = element::Storage<Elem::kE8M0, uint8_t>;
using E2M1x2 = element::Storage<Elem::kE2M1, uint8_t>;  // two FP4 values a byte
using E1M2x2 = element::Storage<Elem::kE1M2, uint8_t>;
}  // namespace opgen_sim

// The kernel headers declare the FP8, HiF8, FP4 and E8M0 element types only for __NPU_ARCH__ 3510 (the dtype
// table's archs, opgen/core/dtypes.py): so does the twin, so a kernel that names one when compiled for 2201
// (Atlas A2/A3) fails here as it fails against the real headers. Host code (no __NPU_ARCH__) has none either.
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
using hifloat8_t = opgen_sim::Hif8;
using fp8_e5m2_t = opgen_sim::E5M2;
using fp8_e4m3fn_t = opgen_sim::E4M3;
using fp8_e8m0_t = opgen_sim::E8M0;
using fp4x2_e2m1_t = opgen_sim::E2M1x2;
using fp4x2_e1m2_t = opgen_sim::E1M2x2;
#endif

namespace opgen_sim {

// ---- type facts ---------------------------------------------------------------------------------------------------
template <typename T> struct ElemOf;  // no definition: not an element type of the twin
#define OPGEN_SIM_ELEM(T, E, BITS, NAME)                                 \
    template <> struct ElemOf<T> {                                       \
        static constexpr Elem value = Elem::E;                           \
        static constexpr uint32_t bits = BITS;                           \
        static constexpr const char* name = NAME;                        \
    };
OPGEN_SIM_ELEM(bool, kBool, 8U, "bool")
OPGEN_SIM_ELEM(int8_t, kI8, 8U, "int8_t")
OPGEN_SIM_ELEM(uint8_t, kU8, 8U, "uint8_t")
OPGEN_SIM_ELEM(int16_t, kI16, 16U, "int16_t")
OPGEN_SIM_ELEM(uint16_t, kU16, 16U, "uint16_t")
OPGEN_SIM_ELEM(int32_t, kI32, 32U, "int32_t")
OPGEN_SIM_ELEM(uint32_t, kU32, 32U, "uint32_t")
OPGEN_SIM_ELEM(int64_t, kI64, 64U, "int64_t")
OPGEN_SIM_ELEM(uint64_t, kU64, 64U, "uint64_t")
OPGEN_SIM_ELEM(float, kF32, 32U, "float")
OPGEN_SIM_ELEM(double, kF64, 64U, "double")
OPGEN_SIM_ELEM(half, kF16, 16U, "half")
OPGEN_SIM_ELEM(bfloat16_t, kBF16, 16U, "bfloat16_t")
OPGEN_SIM_ELEM(Hif8, kHif8, 8U, "hifloat8_t")
OPGEN_SIM_ELEM(E5M2, kE5M2, 8U, "fp8_e5m2_t")
OPGEN_SIM_ELEM(E4M3, kE4M3, 8U, "fp8_e4m3fn_t")
OPGEN_SIM_ELEM(E8M0, kE8M0, 8U, "fp8_e8m0_t")
OPGEN_SIM_ELEM(E2M1x2, kE2M1, 4U, "fp4x2_e2m1_t")
OPGEN_SIM_ELEM(E1M2x2, kE1M2, 4U, "fp4x2_e1m2_t")
#undef OPGEN_SIM_ELEM

// Bits of one element: 4 for the packed fp4x2 types (an fp4x2_* tensor of n elements holds n / 2 bytes).
template <typename T>
struct ElementBits : std::integral_constant<uint32_t, ElemOf<T>::bits> {};

template <typename T>
struct IsPacked4 : std::integral_constant<bool, std::is_same<T, E2M1x2>::value ||
                                                    std::is_same<T, E1M2x2>::value> {};

// Storage bytes of `count` elements of T.
template <typename T>
constexpr uint64_t StorageBytes(uint64_t count)
{
    return (count * ElementBits<T>::value + 7U) / 8U;
}

template <typename T>
constexpr const char* TypeName()
{
    return ElemOf<T>::name;
}

inline const char* RoundModeName(AscendC::RoundMode mode)
{
    switch (mode) {
        case AscendC::RoundMode::CAST_NONE: return "CAST_NONE";
        case AscendC::RoundMode::CAST_RINT: return "CAST_RINT";
        case AscendC::RoundMode::CAST_FLOOR: return "CAST_FLOOR";
        case AscendC::RoundMode::CAST_CEIL: return "CAST_CEIL";
        case AscendC::RoundMode::CAST_ROUND: return "CAST_ROUND";
        case AscendC::RoundMode::CAST_TRUNC: return "CAST_TRUNC";
        case AscendC::RoundMode::CAST_ODD: return "CAST_ODD";
        case AscendC::RoundMode::CAST_HYBRID: return "CAST_HYBRID";
        case AscendC::RoundMode::UNKNOWN: return "UNKNOWN";
    }
    return "RoundMode(?)";
}

namespace detail {

inline const char* ElemName(Elem e)
{
    static const char* const kNames[] = {
        "bool", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
        "float", "double", "half", "bfloat16_t", "hifloat8_t", "fp8_e5m2_t", "fp8_e4m3fn_t", "fp8_e8m0_t",
        "fp4x2_e2m1_t", "fp4x2_e1m2_t"};
    return kNames[static_cast<int>(e)];
}

constexpr uint32_t Bit(RoundMode m) { return 1U << static_cast<uint32_t>(m); }
inline constexpr uint32_t kNone = Bit(RoundMode::CAST_NONE);
inline constexpr uint32_t kRint = Bit(RoundMode::CAST_RINT);
inline constexpr uint32_t kRound = Bit(RoundMode::CAST_ROUND);
inline constexpr uint32_t kOdd = Bit(RoundMode::CAST_ODD);
inline constexpr uint32_t kDirected5 = kRint | Bit(RoundMode::CAST_FLOOR) | Bit(RoundMode::CAST_CEIL) | kRound |
                                Bit(RoundMode::CAST_TRUNC);
inline constexpr uint32_t kAnyMode = 0xFFU;

// The round modes the twin takes for S -> D (`accepted`), and those the asc-devkit Cast tables
// (docs/api/.../类型转换/Cast.md) list for Ascend 950PR/950DT or Atlas A2/A3 (`documented`).  Accepted but not
// listed, because the generated kernels or the numpy reference (round="none") use them:
//   - CAST_NONE (= RINT) for float -> bf16 / fp8 / int, half -> int16 / int32, and a same-type copy;
//   - float -> fp4x2 (RINT, NONE) and fp4x2 -> float: the device converts FP4 only from and to bfloat16_t;
//   - float -> int8_t / uint8_t in one step: the device goes float -> int32 -> half (deq) -> int8.
struct CastRule {
    uint32_t accepted;
    uint32_t documented;
};

inline uint32_t ElemBits(Elem e)
{
    static const uint8_t kBits[] = {8, 8, 8, 16, 16, 32, 32, 64, 64, 32, 64, 16, 16, 8, 8, 8, 8, 4, 4};
    return kBits[static_cast<int>(e)];
}

inline bool IsFloat8(Elem e) { return e == Elem::kE4M3 || e == Elem::kE5M2; }
inline bool IsFp4(Elem e) { return e == Elem::kE2M1 || e == Elem::kE1M2; }
inline bool IsByteInt(Elem e) { return e == Elem::kI8 || e == Elem::kU8; }

inline CastRule Rule(Elem d, Elem s)
{
    if (d == Elem::kE8M0 || s == Elem::kE8M0 || d == Elem::kF64 || s == Elem::kF64) {
        return {0U, 0U};
    }
    if (d == s) {  // float -> float rounds to an integral value; any same-type CAST_NONE is a copy
        return d == Elem::kF32 ? CastRule{kDirected5 | kNone, kDirected5} : CastRule{kNone, 0U};
    }
    switch (s) {
        case Elem::kF32:
            if (d == Elem::kF16) return {kDirected5 | kOdd | kNone, kDirected5 | kOdd | kNone};
            if (d == Elem::kBF16) return {kDirected5 | kNone, kDirected5};
            if (IsFloat8(d)) return {kRint | kNone, kRint};
            if (d == Elem::kHif8) return {kRound, kRound};
            if (IsFp4(d)) return {kRint | kNone, 0U};
            if (d == Elem::kI32 || d == Elem::kI16) return {kDirected5 | kNone, kDirected5};
            if (IsByteInt(d)) return {kDirected5 | kNone, 0U};
            break;
        case Elem::kF16:
            if (d == Elem::kF32) return {kNone, kNone};
            if (d == Elem::kI32 || d == Elem::kI16) return {kDirected5 | kNone, kDirected5};
            if (IsByteInt(d)) return {kDirected5 | kNone, kDirected5 | kNone};
            if (d == Elem::kBF16) return {kDirected5, kDirected5};
            if (d == Elem::kHif8) return {kRound, kRound};
            break;
        case Elem::kBF16:
            if (d == Elem::kF32) return {kNone, kNone};
            if (d == Elem::kI32) return {kDirected5, kDirected5};
            if (d == Elem::kF16) return {kDirected5, kDirected5};
            if (IsFp4(d)) return {kDirected5, kDirected5};
            break;
        case Elem::kI32:
            if (d == Elem::kF32) return {kDirected5 | kNone, kDirected5 | kNone};
            if (d == Elem::kF16) return {kAnyMode, kAnyMode};  // the mode does not apply: value * deq scale
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
            // asc-devkit impl/basic_api/dav_3510/kernel_operator_vec_vconv_impl.h: cast_none lists
            // Tuple<int64_t, int32_t> (sign extension, exact); the real Ascend 950 DispatchV2 casts its token counts so
            if (d == Elem::kI64) return {kNone, kNone};
#endif
            break;
        case Elem::kI8:
        case Elem::kU8:
            if (d == Elem::kF16) return {kNone, kNone};
            break;
        case Elem::kHif8:
            if (d == Elem::kF32 || d == Elem::kF16) return {kNone, kNone};
            break;
        case Elem::kE4M3:
        case Elem::kE5M2:
            if (d == Elem::kF32) return {kNone, kNone};
            break;
        case Elem::kE2M1:
        case Elem::kE1M2:
            if (d == Elem::kBF16) return {kNone, kNone};
            if (d == Elem::kF32) return {kNone, 0U};
            break;
        default:
            break;
    }
    return {0U, 0U};
}

inline std::string UnsupportedMessage(Elem d, Elem s, RoundMode mode, uint32_t accepted)
{
    std::string msg = std::string("Cast ") + ElemName(s) + " -> " + ElemName(d) + " with " + RoundModeName(mode) +
                      " is not supported: ";
    if (d == Elem::kE8M0 || s == Elem::kE8M0) {
        return msg + "E8M0 is never a Cast operand; scale codes are built with integer arithmetic "
                     "(fp32 -> int32 -> half -> uint8 on the codes, formats.md section 3.4)";
    }
    if (accepted == 0U) {
        return msg + "Ascend C has no Cast between these types (convert through float explicitly)";
    }
    if (mode == RoundMode::CAST_HYBRID) {
        return msg + "CAST_HYBRID rounds stochastically and cannot be reproduced bit for bit (use CAST_ROUND)";
    }
    msg += "this conversion takes ";
    bool first = true;
    for (uint32_t m = 0U; m < 8U; ++m) {
        if ((accepted & (1U << m)) != 0U) {
            msg += first ? "" : ", ";
            msg += RoundModeName(static_cast<RoundMode>(m));
            first = false;
        }
    }
    return msg;
}

// ---- raw element access ---------------------------------------------------------------------------------------------
template <typename T>
inline T Load(const uint8_t* p, uint32_t i)
{
    T v;
    std::memcpy(&v, p + static_cast<uint64_t>(i) * sizeof(T), sizeof(T));
    return v;
}

template <typename T>
inline void Store(uint8_t* p, uint32_t i, T v)
{
    std::memcpy(p + static_cast<uint64_t>(i) * sizeof(T), &v, sizeof(T));
}

inline uint32_t LoadNibble(const uint8_t* p, uint32_t i) { return (p[i >> 1] >> ((i & 1U) * 4U)) & 0xFU; }

// Writes nibble i only: the other element of the byte is kept.
inline void StoreNibble(uint8_t* p, uint32_t i, uint32_t code)
{
    const uint32_t shift = (i & 1U) * 4U;
    p[i >> 1] = static_cast<uint8_t>((p[i >> 1] & ~(0xFU << shift)) | ((code & 0xFU) << shift));
}

inline Exact Read(Elem s, const uint8_t* p, uint32_t i)
{
    switch (s) {
        case Elem::kI8: return ExactFromInt(Load<int8_t>(p, i));
        case Elem::kU8: return ExactFromInt(Load<uint8_t>(p, i));
        case Elem::kI16: return ExactFromInt(Load<int16_t>(p, i));
        case Elem::kI32: return ExactFromInt(Load<int32_t>(p, i));
        case Elem::kF32: return DecodeFormat(Load<uint32_t>(p, i), kF32);
        case Elem::kF16:
        case Elem::kBF16: return DecodeFormat(Load<uint16_t>(p, i), *FormatOf(s));
        case Elem::kE5M2:
        case Elem::kE4M3: return DecodeFormat(p[i], *FormatOf(s));
        case Elem::kE2M1:
        case Elem::kE1M2: return DecodeFormat(LoadNibble(p, i), *FormatOf(s));
        case Elem::kHif8: return DecodeFormat(Hif8ToF32Bits(p[i]), kF32);
        default: return Exact{};  // unreachable: Rule() admits no other source
    }
}

// x * scale exactly (int32 -> half with the deq scale): |x| < 2^31 and a 24-bit mantissa fit in 64 bits.
inline Exact Scale(const Exact& x, float scale)
{
    const Exact s = ExactFromF32(scale);
    Exact r;
    r.neg = x.neg != s.neg;
    if (s.kind == Exact::kNan) {
        r.kind = Exact::kNan;
        r.nanBits = s.nanBits;
    } else if (s.kind == Exact::kInf) {
        r.kind = x.mag == 0U ? Exact::kNan : Exact::kInf;
        r.nanBits = 0x7FC00000U;
    } else {
        r.mag = x.mag * s.mag;
        r.exp = x.exp + s.exp;
    }
    return r;
}

inline void Write(Elem d, uint8_t* p, uint32_t i, const Exact& x, RoundMode mode)
{
    switch (d) {
        case Elem::kI8: Store<int8_t>(p, i, static_cast<int8_t>(EncodeInt(x, -128, 127, mode))); break;
        case Elem::kU8: Store<uint8_t>(p, i, static_cast<uint8_t>(EncodeInt(x, 0, 255, mode))); break;
        case Elem::kI16: Store<int16_t>(p, i, static_cast<int16_t>(EncodeInt(x, -32768, 32767, mode))); break;
        case Elem::kI32:
            Store<int32_t>(p, i, static_cast<int32_t>(EncodeInt(x, INT32_MIN, INT32_MAX, mode)));
            break;
        case Elem::kI64:  // its only source is int32_t (Rule), far inside the bounds (-INT64_MAX: -lo stays defined)
            Store<int64_t>(p, i, EncodeInt(x, -INT64_MAX, INT64_MAX, mode));
            break;
        case Elem::kF32: Store<uint32_t>(p, i, EncodeFormat(x, kF32, mode)); break;
        case Elem::kF16:
        case Elem::kBF16: Store<uint16_t>(p, i, static_cast<uint16_t>(EncodeFormat(x, *FormatOf(d), mode))); break;
        case Elem::kE5M2:
        case Elem::kE4M3: p[i] = static_cast<uint8_t>(EncodeFormat(x, *FormatOf(d), mode)); break;
        case Elem::kE2M1:
        case Elem::kE1M2: StoreNibble(p, i, EncodeFormat(x, *FormatOf(d), mode)); break;
        case Elem::kHif8:  // every source of hifloat8_t (float, half) is exact in fp32
            p[i] = Hif8FromF32Bits(EncodeFormat(x, kF32, RoundMode::CAST_RINT));
            break;
        default: break;  // unreachable: Rule() admits no other destination
    }
}

// float -> float: round to an integral value (asc-devkit Cast table: "input 0.5: RINT 0.0, CEIL 1.0 ...").
inline uint32_t RoundIntegralF32(uint32_t bits, RoundMode mode)
{
    const Exact x = DecodeFormat(bits, kF32);
    if (x.kind != Exact::kFinite || x.exp >= 0 || x.mag == 0U) {
        return bits;  // NaN, Inf, zero and values of 2^23 or more are integral already
    }
    Exact r;
    r.neg = x.neg;
    r.mag = RoundShift(x.mag, -x.exp, x.neg, mode);
    return EncodeFormat(r, kF32, RoundMode::CAST_RINT);  // exact, and keeps the sign of a zero result
}

inline void ConvertRaw(Elem d, Elem s, uint8_t* dst, const uint8_t* src, uint32_t count, RoundMode mode,
                       float deqScale, std::string* error)
{
    const CastRule rule = Rule(d, s);
    if ((rule.accepted & Bit(mode)) == 0U) {
        if (error != nullptr) {
            *error = UnsupportedMessage(d, s, mode, rule.accepted);
        }
        return;
    }
    // Read every source element before writing any when the two spans overlap (a conversion in place).
    const uint64_t srcBytes = (static_cast<uint64_t>(count) * ElemBits(s) + 7U) / 8U;
    const uint64_t dstBytes = (static_cast<uint64_t>(count) * ElemBits(d) + 7U) / 8U;
    std::vector<uint8_t> copy;
    if (src < dst + dstBytes && dst < src + srcBytes) {
        copy.assign(src, src + srcBytes);
        src = copy.data();
    }
    if (d == s) {
        if (d == Elem::kF32 && mode != RoundMode::CAST_NONE) {
            for (uint32_t i = 0U; i < count; ++i) {
                Store<uint32_t>(dst, i, RoundIntegralF32(Load<uint32_t>(src, i), mode));
            }
        } else if (IsFp4(d)) {
            for (uint32_t i = 0U; i < count; ++i) {
                StoreNibble(dst, i, LoadNibble(src, i));
            }
        } else {
            std::memmove(dst, src, srcBytes);
        }
        return;
    }
    const bool deq = s == Elem::kI32 && d == Elem::kF16;
    // The deq conversion ignores the round mode (asc-devkit: "roundMode不生效"); its rounding is undocumented,
    // RINT is assumed.  The kernels only convert small integers with scale 1.0, which are exact.
    const RoundMode m = deq ? RoundMode::CAST_RINT : mode;
    for (uint32_t i = 0U; i < count; ++i) {
        const Exact x = Read(s, src, i);
        Write(d, dst, i, deq ? Scale(x, deqScale) : x, m);
    }
}

}  // namespace detail

// Converts `count` elements of raw S storage at `src` (element i of a packed fp4x2 type is nibble i) to raw D
// storage at `dst`, as AscendC::Cast(dst, src, mode, count) does.  `deqScale` is the DEQSCALE value
// (SetDeqScale) that int32_t -> half multiplies by.  A (D, S, mode) the twin does not take sets *error to a
// message and writes nothing; otherwise *error is untouched.  Packed destinations keep the other nibble of a
// partly written byte.  The spans may overlap.
template <typename D, typename S>
inline void ConvertElements(uint8_t* dst, const uint8_t* src, uint32_t count, AscendC::RoundMode mode, float deqScale,
                            std::string* error)
{
    detail::ConvertRaw(ElemOf<D>::value, ElemOf<S>::value, dst, src, count, mode, deqScale, error);
}

// Whether the asc-devkit Cast tables (Ascend 950PR/950DT, Atlas A2/A3) list S -> D with `mode`.  ConvertElements
// also takes a few conversions they do not list (see detail::CastRule); a caller may warn about those.
template <typename D, typename S>
inline bool CastDocumented(AscendC::RoundMode mode)
{
    return (detail::Rule(ElemOf<D>::value, ElemOf<S>::value).documented & detail::Bit(mode)) != 0U;
}

}  // namespace opgen_sim

#endif  // OPGEN_SIM_NUMERIC_H
