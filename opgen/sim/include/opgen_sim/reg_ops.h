/**
 * The register-based vector API of __NPU_ARCH__ 3510 past reg.h's subset: the calls the real Ascend 950 DispatchV2's
 * quantising vector functions make (mc2/moe_distribute_dispatch_v2/op_kernel/quantize_functions.h:
 * ComputePerTileDynamic for quant mode 3, ComputeMaxExp / ComputeScale / ComputeFp8Data for quant mode 4).
 * Signatures of asc-devkit include/basic_api/reg_compute/kernel_reg_compute_*_intf.h; the semantics are those the
 * headers' names, the impl's instruction comments (impl/basic_api/reg_compute/dav_3510/) and the real kernel's own
 * comments state, and where neither says (a mask's byte layout, NaN in a max, the saturation of a NaN) the twin
 * faults naming the call instead of choosing:
 * - element-wise operations (Add, Sub, Mul, Muls, Div, Max, Min, And, Or, Abs, Adds, ShiftLefts, ShiftRights, the
 *   lane form of Duplicate) are MaskMergeMode::ZEROING (the only mode the twin takes): an inactive lane becomes 0;
 *   float lanes compute in IEEE fp32; half / bfloat16_t lanes only where one rounding of an exact fp32 result is
 *   the IEEE result (Mul: the product is exact in fp32; Max / Min / Abs: no rounding); Add / Sub / Muls / Div fp32;
 * - Compare / CompareScalar make a mask for the compared elements' width (inactive lanes off), Select takes each
 *   lane of src0 where the selecting mask is on, of src1 elsewhere; MaskAnd / MaskOr combine masks of one width
 *   under a predicate;
 * - Interleave(d0, d1, s0, s1): d0 = s0[0] s1[0] s0[1] s1[1] ... of the lower halves, d1 of the upper halves (the
 *   order ComputePerTileDynamic restores after its even / odd casts);
 * - ReduceMax: lane 0 the max of the active lanes, the others 0; ReduceMaxWithDataBlock: lane b the max of the
 *   active lanes of 32-byte block b, the others 0 (ComputeMaxExp: "按每个block输出一个最大指数位"); no active lane,
 *   or a NaN lane, faults;
 * - Cast<T, U, CastTrait>: b16 -> b32 widening takes the even (RegLayout::ZERO) or odd (ONE) source lanes
 *   ("取偶数索引的元素Cast到vdExp0FP32Zero"), b32 -> b8 narrowing writes byte `layout` of each 32-bit slot, bf16 ->
 *   fp4x2 the pair of b16 lanes 2j, 2j + 1 into the low / high nibble of byte `layout` of slot j (the other bytes of
 *   a slot stay unwritten: reading them faults), same-width converts lane by lane; the conversion
 *   as numeric.h, SatMode::SAT saturating a finite or infinite overflow to the largest finite value;
 * - register loads and stores address the UB as reg.h's (bounded by it, aligned, hazard-recorded); post-updating
 *   forms advance the pointer by `postUpdateStride` elements after the access; LoadDist DIST_DINTLV_B16 / B32 loads
 *   2 x 256 bytes de-interleaved (even elements to dstReg0, odd to dstReg1; with or without post-update), StoreDist
 *   DIST_INTLV_B32 stores two registers' 2 x 64 floats interleaved (its inverse; an all-active mask only: how a
 *   partial one predicates the pair is not documented), reg.h's DIST_UNPACK_B8 loads 128 bytes into the low bytes of
 *   the 16-bit slots (the real 950 CombineV2's int8 dequant, moe_distribute_combine_v2_quant.h
 *   Int8DequantProcessA5), DIST_E2B_B16 / B32 loads 8 elements
 *   broadcasting each to a 32-byte block ("将每个16bit元素广播到一个DataBlock(32B)中"); StoreDist DIST_PACK_B16 /
 *   DIST_PACK4_B32 store the low byte of each active 16- / 32-bit lane, packed; DataCopyUnAlign / StoreUnAlign store
 *   `postUpdateStride` elements at an element-aligned address, and the UnalignReg must be flushed by
 *   DataCopyUnAlignPost / StoreUnAlignPost before it goes out of scope (a fault otherwise).
 */
#ifndef OPGEN_SIM_REG_OPS_H
#define OPGEN_SIM_REG_OPS_H

#include <cmath>
#include <exception>

#include "opgen_sim/reg.h"

namespace AscendC {
namespace Reg {

// include/basic_api/reg_compute/kernel_reg_compute_utils.h
enum class RegLayout { UNKNOWN = -1, ZERO, ONE, TWO, THREE };
enum class SatMode { UNKNOWN = -1, NO_SAT, SAT };
enum class MemType { VEC_STORE, VEC_LOAD, SCALAR_STORE, SCALAR_LOAD, VEC_ALL, SCALAR_ALL };
enum class MaskDist { DIST_NORM, DIST_US = 1, DIST_DS = 2, DIST_PACK = 1 };
struct DefaultType {};
struct CastTrait {
    RegLayout layoutMode = RegLayout::UNKNOWN;
    SatMode satMode = SatMode::UNKNOWN;
    MaskMergeMode mrgMode = MaskMergeMode::UNKNOWN;
    RoundMode roundMode = RoundMode::UNKNOWN;
};
constexpr CastTrait castTrait = {};

// kernel_reg_compute_common_intf.h: the unaligned-access state register (vector_align). The twin writes an
// unaligned store at once and keeps whether a Post is still owed.
struct UnalignReg {
    bool pending = false;
    const char* by = nullptr;
    UnalignReg() = default;
    UnalignReg(const UnalignReg&) = delete;
    UnalignReg& operator=(const UnalignReg&) = delete;
    ~UnalignReg() noexcept(false)
    {
        if (pending && std::uncaught_exceptions() == 0) {
            opgen_sim::Raise("%s: the UnalignReg goes out of scope with data no DataCopyUnAlignPost / StoreUnAlignPost "
                             "flushed", by);
        }
    }
};
using UnalignRegForLoad = UnalignReg;
using UnalignRegForStore = UnalignReg;

}  // namespace Reg
}  // namespace AscendC

namespace opgen_sim {
namespace reg {

using AscendC::Reg::MaskReg;
using AscendC::Reg::RegTensor;

template <typename E>
struct IsRegFloat : std::integral_constant<bool, std::is_same<E, float>::value || std::is_same<E, half>::value ||
                                                     std::is_same<E, bfloat16_t>::value> {};
template <typename E>
struct IsRegInt : std::integral_constant<bool, std::is_integral<E>::value && !std::is_same<E, bool>::value> {};

// A float lane's value (exact) and a value rounded to the lane's type (RINT).
template <typename E>
inline float ToF(E v)
{
    return static_cast<float>(v);
}
template <typename E>
inline E FromF(float f)
{
    return E(f);
}

template <typename E>
inline void NoNan(E v, const char* what)
{
    if constexpr (IsRegFloat<E>::value) {
        if (std::isnan(ToF(v))) {
            Raise("%s: a NaN lane: what the instruction gives for it is not documented", what);
        }
    }
}

// dst = f(lane i of a, lane i of b) on the active lanes, 0 elsewhere (ZEROING).
template <typename E, typename F>
inline void Lanewise2(RegTensor<E>& dst, const RegTensor<E>& a, const RegTensor<E>& b, const MaskReg& mask,
                      const char* what, F f)
{
    const LaneMask on = Lanes<E>(mask, what);
    RegTensor<E> out;
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        Put(out, i, on[i] ? f(Read(a, i, what), Read(b, i, what)) : E{});
    }
    dst = out;
}

template <typename E, typename F>
inline void Lanewise1(RegTensor<E>& dst, const RegTensor<E>& a, const MaskReg& mask, const char* what, F f)
{
    const LaneMask on = Lanes<E>(mask, what);
    RegTensor<E> out;
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        Put(out, i, on[i] ? f(Read(a, i, what)) : E{});
    }
    dst = out;
}

template <typename E>
inline E MaxOf(E a, E b, const char* what)
{
    NoNan(a, what);
    NoNan(b, what);
    if constexpr (IsRegFloat<E>::value) {
        return ToF(a) < ToF(b) ? b : a;
    } else {
        return a < b ? b : a;
    }
}

template <typename E>
inline bool Cmp(AscendC::CMPMODE mode, E a, E b, const char* what)
{
    NoNan(a, what);
    NoNan(b, what);
    double x;
    double y;
    if constexpr (IsRegFloat<E>::value) {
        x = ToF(a);
        y = ToF(b);
    } else {
        x = static_cast<double>(a);
        y = static_cast<double>(b);
    }
    switch (mode) {
        case AscendC::CMPMODE::LT: return x < y;
        case AscendC::CMPMODE::GT: return x > y;
        case AscendC::CMPMODE::EQ: return x == y;
        case AscendC::CMPMODE::LE: return x <= y;
        case AscendC::CMPMODE::GE: return x >= y;
        case AscendC::CMPMODE::NE: return x != y;
    }
    return false;
}

// Byte b of a register, checked to be written.
template <typename E>
inline uint8_t ByteOf(const RegTensor<E>& r, uint32_t b, const char* what)
{
    if (!r.set[b]) {
        Raise("%s: reads byte %u of a RegTensor<%s> no instruction wrote", what, b, TypeName<E>());
    }
    return reinterpret_cast<const uint8_t*>(r.lane)[b];
}

// Register store of `dist` (DIST_NORM*, and the packing ones) into the UB bytes at ubBase when `write`; the bytes
// it spans either way.
template <AscendC::Reg::StoreDist dist, typename E>
inline uint32_t Store(uint8_t* ubBase, const RegTensor<E>& src, const MaskReg& mask, const char* what, bool write)
{
    using AscendC::Reg::StoreDist;
    constexpr bool pack16 = dist == StoreDist::DIST_PACK_B16;
    constexpr bool pack32 = dist == StoreDist::DIST_PACK4_B32;
    static_assert(pack16 || pack32 || dist == StoreDist::DIST_NORM || dist == StoreDist::DIST_NORM_B8 ||
                      dist == StoreDist::DIST_NORM_B16 || dist == StoreDist::DIST_NORM_B32,
                  "MicroAPI store: the twin models the NORM, PACK_B16 and PACK4_B32 distributions (FIRST_ELEMENT: reg.h)");
    const uint32_t width = pack16 ? 2U : pack32 ? 4U : static_cast<uint32_t>(sizeof(E));
    const LaneMask on = LanesOf(mask, width, what, TypeName<E>());
    const uint32_t lanes = AscendC::VECTOR_REG_WIDTH / width;
    const uint32_t outBytes = (pack16 || pack32) ? 1U : width;
    uint32_t end = 0;
    for (uint32_t i = 0; i < lanes; ++i) {
        if (on[i]) {
            end = i + 1U;
        }
    }
    if (!write || end == 0U) {
        return end * outBytes;
    }
    for (uint32_t i = 0; i < end; ++i) {
        if (on[i]) {
            for (uint32_t b = 0; b < outBytes; ++b) {
                ubBase[i * outBytes + b] = ByteOf(src, i * width + b, what);
            }
        }
    }
    return end * outBytes;
}

template <AscendC::Reg::StoreDist dist, typename E, typename P>
inline void StoreAt(P* dstAddr, const RegTensor<E>& src, const MaskReg& mask, const char* what)
{
    const uint32_t n = Store<dist>(nullptr, src, mask, what, false);
    if (n == 0U) {
        return;
    }
    uint8_t* base = Ub(dstAddr, n, true, what);
    Store<dist>(base, src, mask, what, true);
}

// Register load of `dist` from p (32-byte aligned; E2B reads 8 elements at their own alignment).
template <AscendC::Reg::LoadDist dist, typename E, typename P>
inline void LoadAt(RegTensor<E>& dst, const P* srcAddr, const char* what)
{
    using AscendC::Reg::LoadDist;
    constexpr bool e2b = dist == LoadDist::DIST_E2B_B16 || dist == LoadDist::DIST_E2B_B32;
    static_assert(dist == LoadDist::DIST_NORM || e2b,
                  "MicroAPI load: the twin models DIST_NORM, DIST_E2B_B16 / B32 and the dual DIST_DINTLV forms");
    RegTensor<E> out;
    if constexpr (e2b) {
        constexpr uint32_t w = dist == LoadDist::DIST_E2B_B16 ? 2U : 4U;
        static_assert(sizeof(E) == w, "MicroAPI load DIST_E2B_B<N>: the register's element width is N bits");
        const uint8_t* p = UbAligned(srcAddr, 8U * w, false, what, 8U * w);
        for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
            E v;
            std::memcpy(static_cast<void*>(&v), p + (i / (32U / w)) * w, w);
            Put(out, i, v);
        }
    } else {
        const uint8_t* p = Ub(srcAddr, AscendC::VECTOR_REG_WIDTH, false, what);
        for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
            E v;
            std::memcpy(static_cast<void*>(&v), p + i * sizeof(E), sizeof(E));
            Put(out, i, v);
        }
    }
    dst = out;
}

template <AscendC::Reg::LoadDist dist, typename E, typename P>
inline void LoadPairAt(RegTensor<E>& d0, RegTensor<E>& d1, const P* srcAddr, const char* what)
{
    using AscendC::Reg::LoadDist;
    static_assert(dist == LoadDist::DIST_DINTLV_B8 || dist == LoadDist::DIST_DINTLV_B16 ||
                      dist == LoadDist::DIST_DINTLV_B32,
                  "MicroAPI dual load: the twin models the DIST_DINTLV distributions only");
    constexpr uint32_t w = dist == LoadDist::DIST_DINTLV_B8 ? 1U : dist == LoadDist::DIST_DINTLV_B16 ? 2U : 4U;
    static_assert(sizeof(E) == w, "MicroAPI dual load DIST_DINTLV_B<N>: the register's element width is N bits");
    const uint8_t* p = Ub(srcAddr, 2U * AscendC::VECTOR_REG_WIDTH, false, what);
    RegTensor<E> a;
    RegTensor<E> b;
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        E v0;
        E v1;
        std::memcpy(static_cast<void*>(&v0), p + (2U * i) * w, w);
        std::memcpy(static_cast<void*>(&v1), p + (2U * i + 1U) * w, w);
        Put(a, i, v0);
        Put(b, i, v1);
    }
    d0 = a;
    d1 = b;
}

// One element conversion S -> D with `mode`; `sat` saturates an overflow (finite or infinite source) to the largest
// finite value of D.
template <typename D, typename S>
inline D Convert(S v, AscendC::RoundMode mode, AscendC::Reg::SatMode sat, const char* what)
{
    constexpr Elem de = ElemOf<D>::value;
    constexpr Elem se = ElemOf<S>::value;
    const detail::CastRule rule = detail::Rule(de, se);
    if ((rule.accepted & detail::Bit(mode)) == 0U) {
        Raise("%s: %s", what, detail::UnsupportedMessage(de, se, mode, rule.accepted).c_str());
    }
    uint8_t raw[sizeof(S)];
    std::memcpy(raw, &v, sizeof(S));
    const detail::Exact x = detail::Read(se, raw, 0U);
    uint8_t out[sizeof(D) < 4 ? 4 : sizeof(D)] = {};
    detail::Write(de, out, 0U, x, mode);
    const detail::Format* f = detail::FormatOf(de);
    if (sat == AscendC::Reg::SatMode::SAT && f != nullptr) {
        if (x.kind == detail::Exact::kNan) {
            Raise("%s: SatMode::SAT of a NaN %s: the result is not documented", what, TypeName<S>());
        }
        uint32_t code = 0;
        std::memcpy(&code, out, sizeof(D));
        if (detail::DecodeFormat(code, *f).kind != detail::Exact::kFinite) {
            code = (x.neg ? f->sign : 0U) | f->maxFinite;
            std::memcpy(out, &code, sizeof(D));  // little-endian: the code's low bytes
        }
    }
    D d;
    std::memcpy(static_cast<void*>(&d), out, sizeof(D));
    return d;
}

}  // namespace reg
}  // namespace opgen_sim

namespace AscendC {
namespace Reg {

#define OPGEN_SIM_REG_ZEROING(NAME) \
    static_assert(mode == MaskMergeMode::ZEROING, "MicroAPI::" NAME ": the twin models MaskMergeMode::ZEROING only")

// kernel_reg_compute_vec_binary_intf.h
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Sub(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Sub");
    // fp32 or integer lanes: a half / bf16 difference is not exact in fp32 (rounding twice could differ)
    static_assert(std::is_same<E, float>::value || opgen_sim::reg::IsRegInt<E>::value,
                  "MicroAPI::Sub: the twin models float and integer lanes only");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::Sub", [](E a, E b) {
        if constexpr (std::is_same<E, float>::value) {
            return a - b;
        } else {
            return static_cast<E>(static_cast<std::make_unsigned_t<E>>(a) - static_cast<std::make_unsigned_t<E>>(b));
        }
    });
}
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Mul(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Mul");
    static_assert(opgen_sim::reg::IsRegFloat<E>::value, "MicroAPI::Mul: the twin models float lanes only");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::Mul", [](E a, E b) {
        // a half / bf16 product is exact in fp32: rounding it once is the IEEE product
        return opgen_sim::reg::FromF<E>(opgen_sim::reg::ToF(a) * opgen_sim::reg::ToF(b));
    });
}
template <typename T = DefaultType, auto mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Div(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    static_assert(std::is_same<decltype(mode), MaskMergeMode>::value && mode == MaskMergeMode::ZEROING,
                  "MicroAPI::Div: the twin models MaskMergeMode::ZEROING only (no precision mode)");
    static_assert(std::is_same<E, float>::value, "MicroAPI::Div: the twin models float lanes only");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::Div", [](E a, E b) { return a / b; });
}
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Max(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Max");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::Max",
                              [](E a, E b) { return opgen_sim::reg::MaxOf(a, b, "MicroAPI::Max"); });
}
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Min(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Min");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::Min", [](E a, E b) {
        return opgen_sim::reg::MaxOf(b, a, "MicroAPI::Min") == a ? b : a;  // NaN lanes fault in MaxOf
    });
}
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void And(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("And");
    static_assert(opgen_sim::reg::IsRegInt<E>::value, "MicroAPI::And: integer lanes");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::And",
                              [](E a, E b) { return static_cast<E>(a & b); });
}
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Or(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Or");
    static_assert(opgen_sim::reg::IsRegInt<E>::value, "MicroAPI::Or: integer lanes");
    opgen_sim::reg::Lanewise2(dstReg, srcReg0, srcReg1, mask, "MicroAPI::Or",
                              [](E a, E b) { return static_cast<E>(a | b); });
}

// kernel_reg_compute_vec_unary_intf.h
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Abs(RegTensor<E>& dstReg, RegTensor<E>& srcReg, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Abs");
    static_assert(opgen_sim::reg::IsRegFloat<E>::value, "MicroAPI::Abs: the twin models float lanes only");
    opgen_sim::reg::Lanewise1(dstReg, srcReg, mask, "MicroAPI::Abs", [](E a) {
        E r = a;  // the sign bit cleared
        uint8_t* bytes = reinterpret_cast<uint8_t*>(&r);
        bytes[sizeof(E) - 1U] &= 0x7FU;
        return r;
    });
}

// kernel_reg_compute_vec_binary_scalar_intf.h
template <typename T = DefaultType, typename U, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Adds(RegTensor<E>& dstReg, RegTensor<E>& srcReg, U scalarValue, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Adds");
    static_assert(opgen_sim::reg::IsRegInt<E>::value, "MicroAPI::Adds: the twin models integer lanes only");
    const E s = static_cast<E>(scalarValue);
    opgen_sim::reg::Lanewise1(dstReg, srcReg, mask, "MicroAPI::Adds", [s](E a) {
        return static_cast<E>(static_cast<std::make_unsigned_t<E>>(a) + static_cast<std::make_unsigned_t<E>>(s));
    });
}
template <typename T = DefaultType, typename U, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void Muls(RegTensor<E>& dstReg, RegTensor<E>& srcReg, U scalarValue, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Muls");
    static_assert(std::is_same<E, float>::value, "MicroAPI::Muls: the twin models float lanes only");
    const float s = static_cast<float>(scalarValue);
    opgen_sim::reg::Lanewise1(dstReg, srcReg, mask, "MicroAPI::Muls", [s](E a) { return a * s; });
}
template <typename T = DefaultType, typename U, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void ShiftRights(RegTensor<E>& dstReg, RegTensor<E>& srcReg, U scalarValue, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("ShiftRights");
    static_assert(std::is_integral<E>::value && std::is_unsigned<E>::value,
                  "MicroAPI::ShiftRights: the twin models unsigned (logical) lanes only");
    const int64_t n = static_cast<int64_t>(scalarValue);
    if (n < 0 || n >= static_cast<int64_t>(8U * sizeof(E))) {
        opgen_sim::Raise("MicroAPI::ShiftRights: shift %lld outside [0, %u)", static_cast<long long>(n),
                         static_cast<unsigned>(8U * sizeof(E)));
    }
    opgen_sim::reg::Lanewise1(dstReg, srcReg, mask, "MicroAPI::ShiftRights", [n](E a) { return static_cast<E>(a >> n); });
}
template <typename T = DefaultType, typename U, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void ShiftLefts(RegTensor<E>& dstReg, RegTensor<E>& srcReg, U scalarValue, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("ShiftLefts");
    static_assert(std::is_integral<E>::value && std::is_unsigned<E>::value,
                  "MicroAPI::ShiftLefts: the twin models unsigned lanes only");
    const int64_t n = static_cast<int64_t>(scalarValue);
    if (n < 0 || n >= static_cast<int64_t>(8U * sizeof(E))) {
        opgen_sim::Raise("MicroAPI::ShiftLefts: shift %lld outside [0, %u)", static_cast<long long>(n),
                         static_cast<unsigned>(8U * sizeof(E)));
    }
    opgen_sim::reg::Lanewise1(dstReg, srcReg, mask, "MicroAPI::ShiftLefts", [n](E a) { return static_cast<E>(a << n); });
}

// kernel_reg_compute_vec_duplicate_intf.h: lane 0 of srcReg to every active lane (HighLowPart::LOWEST)
template <typename T = DefaultType, HighLowPart pos = HighLowPart::LOWEST, MaskMergeMode mode = MaskMergeMode::ZEROING,
          typename E>
__simd_callee__ inline void Duplicate(RegTensor<E>& dstReg, RegTensor<E>& srcReg, MaskReg& mask)
{
    OPGEN_SIM_REG_ZEROING("Duplicate");
    static_assert(pos == HighLowPart::LOWEST, "MicroAPI::Duplicate (a lane): the twin models HighLowPart::LOWEST only");
    const E v = opgen_sim::reg::Read(srcReg, 0U, "MicroAPI::Duplicate (a lane of a register)");
    opgen_sim::reg::Lanewise1(dstReg, srcReg, mask, "MicroAPI::Duplicate (a lane of a register)", [v](E) { return v; });
}

// kernel_reg_compute_vec_cmpsel_intf.h
template <typename T = DefaultType, CMPMODE cmp = CMPMODE::EQ, typename E>
__simd_callee__ inline void Compare(MaskReg& dst, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    const char* what = "MicroAPI::Compare";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    MaskReg out;
    out.bytes = sizeof(E);
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        out.on[i] = on[i] && opgen_sim::reg::Cmp(cmp, opgen_sim::reg::Read(srcReg0, i, what),
                                                 opgen_sim::reg::Read(srcReg1, i, what), what);
    }
    dst = out;
}
template <typename T = DefaultType, CMPMODE cmp = CMPMODE::EQ, typename E, typename S>
__simd_callee__ inline void CompareScalar(MaskReg& dst, RegTensor<E>& srcReg, S scalarValue, MaskReg& mask)
{
    const char* what = "MicroAPI::CompareScalar";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    MaskReg out;
    out.bytes = sizeof(E);
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        out.on[i] = on[i] && opgen_sim::reg::Cmp(cmp, opgen_sim::reg::Read(srcReg, i, what), static_cast<E>(scalarValue),
                                                 what);
    }
    dst = out;
}
template <typename T = DefaultType, typename E>
__simd_callee__ inline void Select(RegTensor<E>& dstReg, RegTensor<E>& srcReg0, RegTensor<E>& srcReg1, MaskReg& mask)
{
    const char* what = "MicroAPI::Select";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    RegTensor<E> out;
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        opgen_sim::reg::Put(out, i, on[i] ? opgen_sim::reg::Read(srcReg0, i, what) : opgen_sim::reg::Read(srcReg1, i, what));
    }
    dstReg = out;
}

// kernel_reg_compute_maskreg_intf.h (MaskAnd / MaskOr: the impl's names of the mask And / Or): masks of one width
inline void MaskCombine(MaskReg& dst, const MaskReg& a, const MaskReg& b, const MaskReg& mask, bool isAnd,
                        const char* what)
{
    if (a.bytes == 0U || a.bytes != b.bytes || a.bytes != mask.bytes) {
        opgen_sim::Raise("%s: masks made for %u-, %u- and %u-byte elements: not modelled (one width only)", what,
                         a.bytes, b.bytes, mask.bytes);
    }
    MaskReg out;
    out.bytes = a.bytes;
    for (uint32_t i = 0; i < VECTOR_REG_WIDTH / a.bytes; ++i) {
        out.on[i] = mask.on[i] && (isAnd ? (a.on[i] && b.on[i]) : (a.on[i] || b.on[i]));
    }
    dst = out;
}
template <typename T = DefaultType>
__simd_callee__ inline void MaskAnd(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask)
{
    MaskCombine(dst, src0, src1, mask, true, "MicroAPI::MaskAnd");
}
template <typename T = DefaultType>
__simd_callee__ inline void MaskOr(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask)
{
    MaskCombine(dst, src0, src1, mask, false, "MicroAPI::MaskOr");
}

// kernel_reg_compute_vec_duplicate_intf.h Interleave (two registers)
template <typename T = DefaultType, typename E>
__simd_callee__ inline void Interleave(RegTensor<E>& dstReg0, RegTensor<E>& dstReg1, RegTensor<E>& srcReg0,
                                       RegTensor<E>& srcReg1)
{
    const char* what = "MicroAPI::Interleave";
    constexpr uint32_t n = RegTensor<E>::LANES;
    RegTensor<E> lo;
    RegTensor<E> hi;
    for (uint32_t k = 0; k < n / 2U; ++k) {
        opgen_sim::reg::Put(lo, 2U * k, opgen_sim::reg::Read(srcReg0, k, what));
        opgen_sim::reg::Put(lo, 2U * k + 1U, opgen_sim::reg::Read(srcReg1, k, what));
        opgen_sim::reg::Put(hi, 2U * k, opgen_sim::reg::Read(srcReg0, n / 2U + k, what));
        opgen_sim::reg::Put(hi, 2U * k + 1U, opgen_sim::reg::Read(srcReg1, n / 2U + k, what));
    }
    dstReg0 = lo;
    dstReg1 = hi;
}

// kernel_reg_compute_vec_reduce_intf.h
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void ReduceMax(RegTensor<E>& dstReg, RegTensor<E> srcReg, MaskReg mask)
{
    OPGEN_SIM_REG_ZEROING("ReduceMax");
    const char* what = "MicroAPI::ReduceMax";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    bool any = false;
    E m{};
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        if (on[i]) {
            const E v = opgen_sim::reg::Read(srcReg, i, what);
            m = any ? opgen_sim::reg::MaxOf(m, v, what) : (opgen_sim::reg::NoNan(v, what), v);
            any = true;
        }
    }
    if (!any) {
        opgen_sim::Raise("%s: no active lane: no documented result", what);
    }
    RegTensor<E> out;
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        opgen_sim::reg::Put(out, i, i == 0U ? m : E{});
    }
    dstReg = out;
}
template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename E>
__simd_callee__ inline void ReduceMaxWithDataBlock(RegTensor<E>& dstReg, RegTensor<E> srcReg, MaskReg mask)
{
    OPGEN_SIM_REG_ZEROING("ReduceMaxWithDataBlock");
    const char* what = "MicroAPI::ReduceMaxWithDataBlock";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    constexpr uint32_t perBlock = 32U / sizeof(E);
    RegTensor<E> out;
    for (uint32_t i = 0; i < RegTensor<E>::LANES; ++i) {
        opgen_sim::reg::Put(out, i, E{});
    }
    for (uint32_t b = 0; b < VECTOR_REG_WIDTH / 32U; ++b) {
        bool any = false;
        E m{};
        for (uint32_t i = b * perBlock; i < (b + 1U) * perBlock; ++i) {
            if (on[i]) {
                const E v = opgen_sim::reg::Read(srcReg, i, what);
                m = any ? opgen_sim::reg::MaxOf(m, v, what) : (opgen_sim::reg::NoNan(v, what), v);
                any = true;
            }
        }
        if (!any) {
            opgen_sim::Raise("%s: block %u has no active lane: no documented result", what, b);
        }
        opgen_sim::reg::Put(out, b, m);
    }
    dstReg = out;
}

// kernel_reg_compute_vec_vconv_intf.h Cast (CastTrait: layout, saturation, merge mode, round mode)
template <typename D, typename S>
__simd_callee__ inline void CastLanes(RegTensor<D>& dstReg, RegTensor<S>& srcReg, MaskReg& mask, RegLayout layout,
                                      SatMode sat, MaskMergeMode mrg, RoundMode round)
{
    const char* what = "MicroAPI::Cast";
    static_assert(!opgen_sim::IsPacked4<S>::value, "MicroAPI::Cast: the twin does not model the conversions from fp4x2");
    static_assert(!opgen_sim::IsPacked4<D>::value || std::is_same<S, bfloat16_t>::value,
                  "MicroAPI::Cast: the twin models the fp4x2 conversions from bfloat16_t only (vcvt_ff bf162fp4)");
    if (mrg != MaskMergeMode::ZEROING) {
        opgen_sim::Raise("%s<%s, %s>: the twin models MaskMergeMode::ZEROING only", what, opgen_sim::TypeName<D>(),
                         opgen_sim::TypeName<S>());
    }
    constexpr uint32_t wd = sizeof(D);
    constexpr uint32_t ws = sizeof(S);
    constexpr bool floats = std::is_floating_point<D>::value || opgen_sim::reg::IsRegFloat<D>::value;
    const bool widening = wd > ws;
    // a widening float conversion is exact: the round mode is not used (UNKNOWN in the kernels' traits), CAST_NONE
    // as the level-2 Cast names it
    const RoundMode mode = (round == RoundMode::UNKNOWN && widening && floats) ? RoundMode::CAST_NONE : round;
    if (mode == RoundMode::UNKNOWN) {
        opgen_sim::Raise("%s<%s, %s>: RoundMode::UNKNOWN: the twin does not know which rounding the device takes", what,
                         opgen_sim::TypeName<D>(), opgen_sim::TypeName<S>());
    }
    const opgen_sim::detail::Format* fmt = opgen_sim::detail::FormatOf(opgen_sim::ElemOf<D>::value);
    const bool canOverflow = fmt != nullptr && fmt->overflow != opgen_sim::detail::Overflow::kSaturate;
    if (!widening && wd < ws && sat == SatMode::UNKNOWN && canOverflow) {
        opgen_sim::Raise("%s<%s, %s>: SatMode::UNKNOWN: the twin does not know whether the device saturates", what,
                         opgen_sim::TypeName<D>(), opgen_sim::TypeName<S>());
    }
    RegTensor<D> out;
    if constexpr (opgen_sim::IsPacked4<D>::value) {
        // bf16 -> fp4x2 (Part_T, RegLayout ZERO..THREE): the 4-bit results of b16 lanes 2j and 2j + 1 are the low
        // and high nibble of byte `layout` of 32-bit slot j, the other bytes of the slot unwritten. No header
        // gives the layout; it is the one under which the real ComputeFp4Data's DIST_PACK4_B32 stores (byte 0 of
        // each 32-bit slot) write the row's H / 2 packed bytes in order (code: quantize_functions.h).
        const int part = static_cast<int>(layout);
        if (part < 0 || part > 3) {
            opgen_sim::Raise("%s<%s, %s>: RegLayout %d: bf16 -> fp4x2 takes a layout in [0, 4)", what,
                             opgen_sim::TypeName<D>(), opgen_sim::TypeName<S>(), part);
        }
        const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<S>(mask, what);
        uint8_t* bytes = reinterpret_cast<uint8_t*>(out.lane);
        for (uint32_t j = 0; j < RegTensor<S>::LANES / 2U; ++j) {
            uint8_t packed = 0;
            for (uint32_t k = 0; k < 2U; ++k) {
                const uint32_t i = 2U * j + k;
                if (on[i]) {
                    const D v = opgen_sim::reg::Convert<D>(opgen_sim::reg::Read(srcReg, i, what), mode, sat, what);
                    packed = static_cast<uint8_t>(packed | ((v.bits & 0xFU) << (4U * k)));
                }
            }
            bytes[4U * j + part] = packed;
            out.set[4U * j + part] = true;
        }
        dstReg = out;
        return;
    }
    if (wd == ws) {
        const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<S>(mask, what);
        for (uint32_t i = 0; i < RegTensor<D>::LANES; ++i) {
            opgen_sim::reg::Put(out, i, on[i] ? opgen_sim::reg::Convert<D>(opgen_sim::reg::Read(srcReg, i, what),
                                                                            mode, sat, what)
                                              : D{});
        }
        dstReg = out;
        return;
    }
    const uint32_t ratio = widening ? wd / ws : ws / wd;
    const int part = static_cast<int>(layout);
    if (part < 0 || static_cast<uint32_t>(part) >= ratio) {
        opgen_sim::Raise("%s<%s, %s>: RegLayout %d: a %u-to-%u-byte conversion takes a layout in [0, %u)", what,
                         opgen_sim::TypeName<D>(), opgen_sim::TypeName<S>(), part, ws, wd, ratio);
    }
    if (widening) {  // dst lane j from source lane ratio * j + part; the mask predicates dst lanes
        const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<D>(mask, what);
        for (uint32_t j = 0; j < RegTensor<D>::LANES; ++j) {
            opgen_sim::reg::Put(out, j, on[j] ? opgen_sim::reg::Convert<D>(
                                                    opgen_sim::reg::Read(srcReg, ratio * j + part, what), mode, sat, what)
                                              : D{});
        }
    } else {  // source lane j to dst element ratio * j + part; the other elements of the slot stay unwritten
        const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<S>(mask, what);
        for (uint32_t j = 0; j < RegTensor<S>::LANES; ++j) {
            opgen_sim::reg::Put(out, ratio * j + part,
                                on[j] ? opgen_sim::reg::Convert<D>(opgen_sim::reg::Read(srcReg, j, what), mode, sat, what)
                                      : D{});
        }
    }
    dstReg = out;
}

// Cast<T, U, trait>(dst, src, mask) as the header declares it (a function template whose CastTrait is a reference
// template parameter) makes g++ 12 stop with an internal compiler error (tsubst, cp/pt.cc) where the kernels pass
// a `static constexpr` local CastTrait inside an `if constexpr` of a template (quantize_functions.h ComputeMaxExp,
// ComputeFp8Data); the twin's Cast is a variable template of a function object instead: the same call syntax.
template <typename T, typename U, const CastTrait& trait>
struct CastFn {
    template <typename S, typename V>
    __simd_callee__ void operator()(S& dstReg, V& srcReg, MaskReg& mask) const
    {
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, typename S::ActualT>::value,
                      "MicroAPI::Cast: T is the destination register's element type");
        static_assert(std::is_same<U, DefaultType>::value || std::is_same<U, typename V::ActualT>::value,
                      "MicroAPI::Cast: U is the source register's element type");
        CastLanes(dstReg, srcReg, mask, trait.layoutMode, trait.satMode, trait.mrgMode, trait.roundMode);
    }
};
template <typename T = DefaultType, typename U = DefaultType, const CastTrait& trait = castTrait>
constexpr CastFn<T, U, trait> Cast{};

// kernel_reg_compute_datacopy_intf.h: post-updating loads and stores (DataCopy / LoadAlign / StoreAlign)
template <typename T = DefaultType, PostLiteral postMode, LoadDist dist = LoadDist::DIST_NORM, typename U>
__simd_callee__ inline void DataCopy(U& dstReg, __ubuf__ T*& srcAddr, int32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::DataCopy (post-updating load): POST_MODE_UPDATE");
    opgen_sim::reg::LoadAt<dist>(dstReg, srcAddr, "MicroAPI::DataCopy (a post-updating register load)");
    srcAddr += postUpdateStride;
}
template <typename T = DefaultType, PostLiteral postMode, LoadDist dist = LoadDist::DIST_NORM, typename U>
__simd_callee__ inline void LoadAlign(U& dstReg, __ubuf__ T*& srcAddr, int32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::LoadAlign (post-updating): POST_MODE_UPDATE");
    opgen_sim::reg::LoadAt<dist>(dstReg, srcAddr, "MicroAPI::LoadAlign (post-updating)");
    srcAddr += postUpdateStride;
}
template <typename T = DefaultType, PostLiteral postMode, LoadDist dist, typename U>
__simd_callee__ inline void DataCopy(U& dstReg0, U& dstReg1, __ubuf__ T*& srcAddr, int32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::DataCopy (post-updating dual load)");
    opgen_sim::reg::LoadPairAt<dist>(dstReg0, dstReg1, srcAddr, "MicroAPI::DataCopy (a post-updating dual register load)");
    srcAddr += postUpdateStride;
}
template <typename T = DefaultType, PostLiteral postMode, LoadDist dist, typename U>
__simd_callee__ inline void LoadAlign(U& dstReg0, U& dstReg1, __ubuf__ T*& srcAddr, int32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::LoadAlign (post-updating dual load)");
    opgen_sim::reg::LoadPairAt<dist>(dstReg0, dstReg1, srcAddr, "MicroAPI::LoadAlign (a post-updating dual load)");
    srcAddr += postUpdateStride;
}
// the dual forms without post-update: DIST_DINTLV loads (LoadPairAt); the DIST_INTLV_B32 store writes 2 x 64
// floats interleaved, srcReg0[0] srcReg1[0] srcReg0[1] srcReg1[1] ...: vintlv of the two registers, then a NORM
// store of each (asc-devkit impl/basic_api/reg_compute/dav_l300/kernel_reg_compute_datacopy_impl.h, the vsts dual
// DataCopyImpl of DIST_INTLV_B32; the inverse of DIST_DINTLV_B32). That form stores under an all-active mask; how a
// partial mask predicates the 128 elements is not documented, so the twin takes an all-active one only.
template <typename T = DefaultType, LoadDist dist, typename U>
__simd_callee__ inline void DataCopy(U& dstReg0, U& dstReg1, __ubuf__ T* srcAddr)
{
    opgen_sim::reg::LoadPairAt<dist>(dstReg0, dstReg1, srcAddr, "MicroAPI::DataCopy (a dual register load)");
}
template <typename T = DefaultType, StoreDist dist, typename U>
__simd_callee__ inline void DataCopy(__ubuf__ T* dstAddr, U& srcReg0, U& srcReg1, MaskReg& mask)
{
    using E = typename U::ActualT;
    static_assert(dist == StoreDist::DIST_INTLV_B32, "MicroAPI::DataCopy (dual store): the twin models DIST_INTLV_B32 only");
    static_assert(sizeof(E) == 4, "MicroAPI::DataCopy (dual store) DIST_INTLV_B32: 32-bit registers");
    const char* what = "MicroAPI::DataCopy (a DIST_INTLV_B32 dual register store)";
    const opgen_sim::reg::LaneMask on = opgen_sim::reg::Lanes<E>(mask, what);
    for (uint32_t i = 0; i < U::LANES; ++i) {
        if (!on[i]) {
            opgen_sim::Raise("%s: lane %u of the mask is inactive: how a partial mask predicates a dual store is not "
                             "documented", what, i);
        }
    }
    uint8_t* base = opgen_sim::reg::Ub(dstAddr, 2U * AscendC::VECTOR_REG_WIDTH, true, what);
    for (uint32_t i = 0; i < U::LANES; ++i) {
        const E v0 = opgen_sim::reg::Read(srcReg0, i, what);
        const E v1 = opgen_sim::reg::Read(srcReg1, i, what);
        std::memcpy(base + (2U * i) * sizeof(E), &v0, sizeof(E));
        std::memcpy(base + (2U * i + 1U) * sizeof(E), &v1, sizeof(E));
    }
}
template <typename T = DefaultType, PostLiteral postMode, StoreDist dist = StoreDist::DIST_NORM, typename U>
__simd_callee__ inline void DataCopy(__ubuf__ T*& dstAddr, U& srcReg, int32_t postUpdateStride, MaskReg& mask)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::DataCopy (post-updating store)");
    opgen_sim::reg::StoreAt<dist>(dstAddr, srcReg, mask, "MicroAPI::DataCopy (a post-updating register store)");
    dstAddr += postUpdateStride;
}
template <typename T = DefaultType, StoreDist dist = StoreDist::DIST_NORM, typename U>
__simd_callee__ inline void StoreAlign(__ubuf__ T* dstAddr, U& srcReg, MaskReg& mask)
{
    opgen_sim::reg::StoreAt<dist>(dstAddr, srcReg, mask, "MicroAPI::StoreAlign");
}
template <typename T = DefaultType, PostLiteral postMode, StoreDist dist = StoreDist::DIST_NORM, typename U>
__simd_callee__ inline void StoreAlign(__ubuf__ T*& dstAddr, U& srcReg, int32_t postUpdateStride, MaskReg& mask)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::StoreAlign (post-updating)");
    opgen_sim::reg::StoreAt<dist>(dstAddr, srcReg, mask, "MicroAPI::StoreAlign (post-updating)");
    dstAddr += postUpdateStride;
}

// Unaligned stores: `postUpdateStride` elements of srcReg at an element-aligned address, then the pointer advances
template <typename T, typename E>
__simd_callee__ inline void StoreUnAlignImpl(__ubuf__ T*& dstAddr, RegTensor<E>& srcReg, UnalignReg& ureg,
                                             uint32_t count, const char* what)
{
    static_assert(sizeof(T) == sizeof(E), "MicroAPI unaligned store: the address's element width is the register's");
    if (count > RegTensor<E>::LANES) {
        opgen_sim::Raise("%s: %u elements: the register holds %u", what, count, RegTensor<E>::LANES);
    }
    if (count != 0U) {
        uint8_t* p = opgen_sim::reg::UbAligned(dstAddr, count * static_cast<uint32_t>(sizeof(E)), true, what,
                                               static_cast<uint32_t>(sizeof(E)));
        for (uint32_t i = 0; i < count; ++i) {
            const E v = opgen_sim::reg::Read(srcReg, i, what);
            std::memcpy(p + i * sizeof(E), &v, sizeof(E));
        }
    }
    ureg.pending = true;
    ureg.by = what;
    dstAddr += count;
}
template <typename T = DefaultType, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE, typename U>
__simd_callee__ inline void DataCopyUnAlign(__ubuf__ T*& dstAddr, U& srcReg, UnalignReg& ureg, uint32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::DataCopyUnAlign (store): POST_MODE_UPDATE");
    StoreUnAlignImpl(dstAddr, srcReg, ureg, postUpdateStride, "MicroAPI::DataCopyUnAlign (store)");
}
template <typename T = DefaultType, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE, typename U>
__simd_callee__ inline void StoreUnAlign(__ubuf__ T*& dstAddr, U& srcReg, UnalignRegForStore& ureg,
                                         uint32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::StoreUnAlign: POST_MODE_UPDATE");
    StoreUnAlignImpl(dstAddr, srcReg, ureg, postUpdateStride, "MicroAPI::StoreUnAlign");
}
template <typename T, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE>
__simd_callee__ inline void DataCopyUnAlignPost(__ubuf__ T*& dstAddr, UnalignReg& ureg, int32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::DataCopyUnAlignPost: POST_MODE_UPDATE");
    if (!ureg.pending) {
        opgen_sim::Raise("MicroAPI::DataCopyUnAlignPost: no unaligned store to flush");
    }
    ureg.pending = false;
    dstAddr += postUpdateStride;
}
template <typename T, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE>
__simd_callee__ inline void StoreUnAlignPost(__ubuf__ T*& dstAddr, UnalignRegForStore& ureg, int32_t postUpdateStride)
{
    static_assert(postMode == PostLiteral::POST_MODE_UPDATE, "MicroAPI::StoreUnAlignPost: POST_MODE_UPDATE");
    if (!ureg.pending) {
        opgen_sim::Raise("MicroAPI::StoreUnAlignPost: no unaligned store to flush");
    }
    ureg.pending = false;
    dstAddr += postUpdateStride;
}

#undef OPGEN_SIM_REG_ZEROING

}  // namespace Reg
}  // namespace AscendC

#endif  // OPGEN_SIM_REG_OPS_H
