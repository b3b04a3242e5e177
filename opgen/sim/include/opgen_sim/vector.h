/**
 * Vector instructions of the twin (include/basic_api/kernel_operator_vec_*_intf.h): the subset the templates
 * emit.  Operands are checked against their tensors' buffers and the 32-byte UB alignment.  Arithmetic is
 * IEEE single precision (half / bfloat16 operands are widened exactly, the result rounded to nearest even);
 * max / min propagate NaN, as the numpy reference's reductions do.
 */
#ifndef OPGEN_SIM_VECTOR_H
#define OPGEN_SIM_VECTOR_H

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "opgen_sim/tensor.h"

namespace AscendC {

namespace sim {
template <typename T>
inline float ToF(T v)
{
    return static_cast<float>(v);
}
template <typename T>
inline T FromF(float v)
{
    return static_cast<T>(v);
}

inline float MaxNan(float a, float b)
{
    return (std::isnan(a) || std::isnan(b)) ? NAN : (a > b ? a : b);
}
inline float MinNan(float a, float b)
{
    return (std::isnan(a) || std::isnan(b)) ? NAN : (a < b ? a : b);
}

inline void CheckCount(int64_t count, const char* what)
{
    if (count < 0) {
        opgen_sim::Raise("%s: negative count %lld", what, static_cast<long long>(count));
    }
}

template <typename T>
inline T Load(const uint8_t* p, uint64_t i)
{
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
}
template <typename T>
inline void Store(uint8_t* p, uint64_t i, T v)
{
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// dst[i] = f(src[i]) for i < count.
template <typename T, typename F>
inline void Unary(const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count, const char* what, F f)
{
    CheckCount(count, what);
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* s = src.SimRead(0U, count, what);  // reads before writes: see hazard.h
    uint8_t* d = dst.SimWrite(0U, count, what);
    for (int64_t i = 0; i < count; ++i) {
        Store<T>(d, i, f(Load<T>(s, i)));
    }
}

// dst[i] = f(src0[i], src1[i]) for i < count.
template <typename T, typename F>
inline void Binary(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, int64_t count,
                   const char* what, F f)
{
    CheckCount(count, what);
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* a = src0.SimRead(0U, count, what);
    const uint8_t* b = src1.SimRead(0U, count, what);
    uint8_t* d = dst.SimWrite(0U, count, what);
    for (int64_t i = 0; i < count; ++i) {
        Store<T>(d, i, f(Load<T>(a, i), Load<T>(b, i)));
    }
}

// Float arithmetic on T (float, half, bfloat16_t), rounded back to T.
template <typename T, typename F>
inline auto Fp(F f)
{
    return [f](T a, T b) { return FromF<T>(f(ToF(a), ToF(b))); };
}
template <typename T, typename F>
inline auto Fp1(F f)
{
    return [f](T a) { return FromF<T>(f(ToF(a))); };
}
}  // namespace sim

// ---- unary (kernel_operator_vec_unary_intf.h) ----------------------------------------------------------------
template <typename T>
__aicore__ inline void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    sim::Unary(dst, src, count, "Abs", sim::Fp1<T>([](float a) { return std::fabs(a); }));
}
template <typename T>
__aicore__ inline void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    sim::Unary(dst, src, count, "Exp", sim::Fp1<T>([](float a) { return std::exp(a); }));
}
// fp32 Sqrt: the correctly rounded square root (IEEE), which the device's vsqrt is for fp32 (no document says it is
// not; the post stages' tolerances cover one ulp either way)
template <typename T>
__aicore__ inline void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    sim::Unary(dst, src, count, "Sqrt", sim::Fp1<T>([](float a) { return std::sqrt(a); }));
}
template <typename T>
__aicore__ inline void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    sim::Unary(dst, src, count, "Ln", sim::Fp1<T>([](float a) { return std::log(a); }));
}

// ---- binary (kernel_operator_vec_binary_intf.h) --------------------------------------------------------------
template <typename T>
__aicore__ inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    sim::Binary(dst, src0, src1, count, "Add", sim::Fp<T>([](float a, float b) { return a + b; }));
}
template <typename T>
__aicore__ inline void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    sim::Binary(dst, src0, src1, count, "Sub", sim::Fp<T>([](float a, float b) { return a - b; }));
}
template <typename T>
__aicore__ inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    sim::Binary(dst, src0, src1, count, "Mul", sim::Fp<T>([](float a, float b) { return a * b; }));
}
template <typename T>
__aicore__ inline void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    sim::Binary(dst, src0, src1, count, "Div", sim::Fp<T>([](float a, float b) { return a / b; }));
}
template <typename T>
__aicore__ inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    sim::Binary(dst, src0, src1, count, "Max", sim::Fp<T>(sim::MaxNan));
}
template <typename T>
__aicore__ inline void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    sim::Binary(dst, src0, src1, count, "Min", sim::Fp<T>(sim::MinNan));
}

// Max, level 0, continuous mask: per repeat r, elements j < mask of each operand at
// base + r * repStride * 32 bytes + (j / perBlock) * blkStride * 32 bytes + (j % perBlock).
template <typename T, bool isSetMask = true>
__aicore__ inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams)
{
    constexpr uint64_t PER_BLOCK = 32U / sizeof(T);
    if (mask == 0U || mask > 256U / sizeof(T)) {
        opgen_sim::Raise("Max (level 0): mask %llu outside [1, %zu]", static_cast<unsigned long long>(mask),
                         256U / sizeof(T));
    }
    const auto at = [](uint64_t r, uint64_t j, uint8_t blk, uint8_t rep) {
        return r * rep * PER_BLOCK + (j / PER_BLOCK) * blk * PER_BLOCK + j % PER_BLOCK;
    };
    if (repeatTime == 0U) {
        return;
    }
    opgen_sim::CountVector(repeatTime, mask * repeatTime, sizeof(T));
    const BinaryRepeatParams& p = repeatParams;
    const uint64_t last = repeatTime - 1U, top = mask - 1U;
    // each operand's whole extent, checked and recorded once (reads before the write: see hazard.h)
    const uint8_t* a = src0.SimRead(0U, at(last, top, p.src0BlkStride, p.src0RepStride) + 1U, "Max src0");
    const uint8_t* b = src1.SimRead(0U, at(last, top, p.src1BlkStride, p.src1RepStride) + 1U, "Max src1");
    uint8_t* d = dst.SimWrite(0U, at(last, top, p.dstBlkStride, p.dstRepStride) + 1U, "Max dst");
    for (uint64_t r = 0U; r < repeatTime; ++r) {
        for (uint64_t j = 0U; j < mask; ++j) {
            const float va = sim::ToF(sim::Load<T>(a, at(r, j, p.src0BlkStride, p.src0RepStride)));
            const float vb = sim::ToF(sim::Load<T>(b, at(r, j, p.src1BlkStride, p.src1RepStride)));
            sim::Store<T>(d, at(r, j, p.dstBlkStride, p.dstRepStride), sim::FromF<T>(sim::MaxNan(va, vb)));
        }
    }
}

// ---- with a scalar (kernel_operator_vec_binary_scalar_intf.h) ------------------------------------------------
template <typename T, bool isSetMask = true>
__aicore__ inline void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count)
{
    const T s = scalarValue;
    if constexpr (std::is_integral<T>::value) {
        sim::Unary(dst, src, count, "Adds", [s](T a) { return static_cast<T>(a + s); });
    } else {
        sim::Unary(dst, src, count, "Adds", sim::Fp1<T>([s](float a) { return a + sim::ToF(s); }));
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count)
{
    const T s = scalarValue;
    if constexpr (std::is_integral<T>::value) {
        sim::Unary(dst, src, count, "Muls", [s](T a) { return static_cast<T>(a * s); });
    } else {
        sim::Unary(dst, src, count, "Muls", sim::Fp1<T>([s](float a) { return a * sim::ToF(s); }));
    }
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count)
{
    const T s = scalarValue;
    sim::Unary(dst, src, count, "Maxs", sim::Fp1<T>([s](float a) { return sim::MaxNan(a, sim::ToF(s)); }));
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                            const int32_t& count)
{
    const T s = scalarValue;
    sim::Unary(dst, src, count, "Mins", sim::Fp1<T>([s](float a) { return sim::MinNan(a, sim::ToF(s)); }));
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                 const int32_t& count)
{
    static_assert(std::is_integral<T>::value, "ShiftLeft shifts integers");
    using U = typename std::make_unsigned<T>::type;
    const T s = scalarValue;
    sim::Unary(dst, src, count, "ShiftLeft", [s](T a) { return static_cast<T>(static_cast<U>(a) << s); });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                  const int32_t& count)
{
    static_assert(std::is_integral<T>::value, "ShiftRight shifts integers");
    const T s = scalarValue;
    sim::Unary(dst, src, count, "ShiftRight", [s](T a) { return static_cast<T>(a >> s); });  // arithmetic if signed
}

// ---- duplicate -------------------------------------------------------------------------------------------------
template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count)
{
    sim::CheckCount(count, "Duplicate");
    opgen_sim::CountVectorCount(count, sizeof(T));
    uint8_t* d = dst.SimWrite(0U, count, "Duplicate");
    for (int32_t i = 0; i < count; ++i) {
        sim::Store<T>(d, i, scalarValue);
    }
}

// ---- compare / select (kernel_operator_vec_cmpsel_intf.h) ------------------------------------------------------
// dst: one bit per element (element i: bit i % 8 of byte i / 8); count covers whole 256-byte repeats.
template <typename T, typename U>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, uint32_t count)
{
    if ((static_cast<uint64_t>(count) * sizeof(T)) % 256U != 0U) {
        opgen_sim::Raise("CompareScalar: %u %s elements do not fill whole 256-byte repeats", count,
                         opgen_sim::TypeName<T>());
    }
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* s = src0.SimRead(0U, count, "CompareScalar src0");
    uint8_t* bits = dst.template ReinterpretCast<uint8_t>().SimWrite(0U, count / 8U, "CompareScalar dst");
    const float b = sim::ToF(src1Scalar);
    for (uint32_t i = 0U; i < count; ++i) {
        const float a = sim::ToF(sim::Load<T>(s, i));
        bool r = false;
        switch (cmpMode) {
            case CMPMODE::LT: r = a < b; break;
            case CMPMODE::GT: r = a > b; break;
            case CMPMODE::EQ: r = a == b; break;
            case CMPMODE::LE: r = a <= b; break;
            case CMPMODE::GE: r = a >= b; break;
            case CMPMODE::NE: r = a != b; break;
        }
        if (r) {
            bits[i / 8U] = static_cast<uint8_t>(bits[i / 8U] | (1U << (i % 8U)));
        } else {
            bits[i / 8U] = static_cast<uint8_t>(bits[i / 8U] & ~(1U << (i % 8U)));
        }
    }
}

namespace sim {
inline bool MaskBit(const uint8_t* bits, uint32_t i)
{
    return ((bits[i / 8U] >> (i % 8U)) & 1U) != 0U;
}
}  // namespace sim

// dst[i] = mask bit i ? src0[i] : src1[i]
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint32_t count)
{
    if (selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE) {
        opgen_sim::Raise("Select (tensor, tensor): selMode %d is not VSEL_TENSOR_TENSOR_MODE", static_cast<int>(selMode));
    }
    const uint8_t* bits = selMask.template ReinterpretCast<uint8_t>().SimRead(0U, (count + 7U) / 8U, "Select mask");
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* a = src0.SimRead(0U, count, "Select src0");
    const uint8_t* b = src1.SimRead(0U, count, "Select src1");
    uint8_t* d = dst.SimWrite(0U, count, "Select dst");
    for (uint32_t i = 0U; i < count; ++i) {
        sim::Store<T>(d, i, sim::MaskBit(bits, i) ? sim::Load<T>(a, i) : sim::Load<T>(b, i));
    }
}

// dst[i] = mask bit i ? src0[i] : src1
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint32_t count)
{
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        opgen_sim::Raise("Select (tensor, scalar): selMode %d is not VSEL_TENSOR_SCALAR_MODE", static_cast<int>(selMode));
    }
    const uint8_t* bits = selMask.template ReinterpretCast<uint8_t>().SimRead(0U, (count + 7U) / 8U, "Select mask");
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* a = src0.SimRead(0U, count, "Select src0");
    uint8_t* d = dst.SimWrite(0U, count, "Select dst");
    for (uint32_t i = 0U; i < count; ++i) {
        sim::Store<T>(d, i, sim::MaskBit(bits, i) ? sim::Load<T>(a, i) : src1);
    }
}

// ---- reductions (kernel_operator_vec_reduce_intf.h) --------------------------------------------------------------
namespace sim {
// dst[0] = the extreme of src[0, count) by `better` (NaN wins, as max / min propagate it); with calIndex, dst[1]
// holds the index of its first occurrence (its bits as uint32).
template <typename T, typename Better>
inline void ReduceExtreme(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                          const int32_t count, bool calIndex, const char* what, Better better)
{
    CheckCount(count, what);
    if (count == 0) {
        opgen_sim::Raise("%s of 0 elements", what);
    }
    (void)sharedTmpBuffer.SimSpan(0U, 1U, what);
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* s = src.SimRead(0U, count, what);
    float best = ToF(Load<T>(s, 0U));
    uint32_t at = 0U;
    for (int32_t i = 1; i < count; ++i) {
        const float v = ToF(Load<T>(s, i));
        if (std::isnan(best)) {
            break;
        }
        if (std::isnan(v) || better(v, best)) {
            best = v;
            at = static_cast<uint32_t>(i);
        }
    }
    uint8_t* d = dst.SimWrite(0U, calIndex ? 2U : 1U, what);
    Store<T>(d, 0U, FromF<T>(best));
    if (calIndex) {
        std::memcpy(d + sizeof(T), &at, sizeof(T) < sizeof(at) ? sizeof(T) : sizeof(at));
    }
}
}  // namespace sim

template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count, bool calIndex = 0)
{
    sim::ReduceExtreme(dst, src, sharedTmpBuffer, count, calIndex, "ReduceMax", [](float v, float b) { return v > b; });
}
template <typename T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count, bool calIndex = 0)
{
    sim::ReduceExtreme(dst, src, sharedTmpBuffer, count, calIndex, "ReduceMin", [](float v, float b) { return v < b; });
}

// dst[0] = the sum of src[0, count) in the order the Ascend C documentation gives for the count interface on
// Atlas A2 / A3 ("方式二", atlasascendc_api_07_0078): a binary tree of adjacent pairs inside each 256-byte repeat
// (a short last repeat adds zeros), then the repeats' results in order; each addition rounded to T (single
// precision for float). opgen/runtime/codecs.py repeat_tree_sum is the same order for the numpy references.
template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count)
{
    sim::CheckCount(count, "ReduceSum");
    (void)sharedTmpBuffer.SimSpan(0U, 1U, "ReduceSum work");
    opgen_sim::CountVectorCount(count, sizeof(T));
    const uint8_t* s = src.SimRead(0U, count, "ReduceSum src");
    constexpr int32_t PER_REPEAT = static_cast<int32_t>(256U / sizeof(T));
    T total = sim::FromF<T>(0.0f);
    for (int32_t base = 0; base < count; base += PER_REPEAT) {
        T lanes[PER_REPEAT];
        for (int32_t j = 0; j < PER_REPEAT; ++j) {
            lanes[j] = (base + j < count) ? sim::Load<T>(s, base + j) : sim::FromF<T>(0.0f);
        }
        for (int32_t width = PER_REPEAT; width > 1; width /= 2) {
            for (int32_t j = 0; j < width / 2; ++j) {
                lanes[j] = sim::FromF<T>(sim::ToF(lanes[2 * j]) + sim::ToF(lanes[2 * j + 1]));
            }
        }
        total = sim::FromF<T>(sim::ToF(total) + sim::ToF(lanes[0]));
    }
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 2201
    // dav_c220 ReduceSumImpl (the count form, asc-devkit impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h):
    // vcadd leaves the sum in ACC_VAL; the function then waits V -> S (SetFlag / WaitFlag<V_S>), stores the sum
    // into dst[0] with the scalar unit and waits S -> V and S -> MTE3: when it returns no vector access is in flight,
    // and dst is visible to V and MTE3 (the real A2 combine overwrites the mask it summed by MTE2 right after:
    // mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h CalTokenActiveMask).
    opgen_sim::MakeVisible(opgen_sim::PIPE_V_, opgen_sim::PIPE_S_, opgen_sim::Snapshot());
    sim::Store<T>(dst.SimWrite(0U, 1U, "ReduceSum dst", true, opgen_sim::PIPE_S_), 0U, total);
    const uint64_t stored = opgen_sim::Snapshot();
    opgen_sim::MakeVisible(opgen_sim::PIPE_S_, opgen_sim::PIPE_V_, stored);
    opgen_sim::MakeVisible(opgen_sim::PIPE_S_, opgen_sim::PIPE_MTE3_, stored);
    for (int flag = 0; flag < 3; ++flag) {  // V_S, S_V, S_MTE3: each a SetFlag and its WaitFlag
        opgen_sim::CountSync(opgen_sim::SYNC_SET_FLAG);
        opgen_sim::CountSync(opgen_sim::SYNC_WAIT_FLAG);
    }
#else
    sim::Store<T>(dst.SimWrite(0U, 1U, "ReduceSum dst"), 0U, total);
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    // dav_3510 ReduceSumImpl (count form, half / float: impl/basic_api/dav_3510/kernel_operator_vec_reduce_impl.h)
    // waits V -> S after the reduction and reads dst[0] into its ACC_VAL copy with the scalar unit
    if constexpr (std::is_same<T, float>::value || std::is_same<T, half>::value) {
        opgen_sim::MakeVisible(opgen_sim::PIPE_V_, opgen_sim::PIPE_S_, opgen_sim::Snapshot());
        opgen_sim::CountSync(opgen_sim::SYNC_SET_FLAG);
        opgen_sim::CountSync(opgen_sim::SYNC_WAIT_FLAG);
    }
#endif
#endif
    if (opgen_sim::t_core != nullptr) {  // the sum is also left in ACC_VAL (dav_c220 ReduceSumImpl: get_acc_val)
        opgen_sim::t_core->accVal = 0U;
        std::memcpy(&opgen_sim::t_core->accVal, &total, sizeof(T));
        opgen_sim::t_core->accValSet = true;
    }
}

// The sum the last count-form ReduceSum left in the ACC_VAL register (kernel_operator_vec_reduce_intf.h GetAccVal).
template <typename T>
__aicore__ inline T GetAccVal()
{
    if (opgen_sim::t_core == nullptr || !opgen_sim::t_core->accValSet) {
        opgen_sim::Raise("GetAccVal: no ReduceSum has written the ACC_VAL register");
    }
    opgen_sim::CountScalar();
    T v;
    std::memcpy(static_cast<void*>(&v), &opgen_sim::t_core->accVal, sizeof(T));
    return v;
}

// Per repeat r: the max of `mask` elements at src + r * srcRepStride * 32 bytes (srcBlkStride 32-byte blocks
// apart) and the index of its first occurrence, written at dst element r * dstRepStride (one element: the value
// or the index, whose bits fill the element; two: a (value, index) or (index, value) pair, strides in pairs).
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    constexpr int64_t PER_BLOCK = 32 / static_cast<int64_t>(sizeof(T));
    if (mask <= 0 || mask > static_cast<int32_t>(256U / sizeof(T))) {
        opgen_sim::Raise("WholeReduceMax: mask %d outside [1, %zu]", mask, 256U / sizeof(T));
    }
    if (repeatTime <= 0) {
        return;
    }
    const auto at = [srcBlkStride, srcRepStride](int64_t r, int64_t j) {
        return static_cast<uint64_t>(r * srcRepStride * PER_BLOCK + (j / PER_BLOCK) * srcBlkStride * PER_BLOCK +
                                     j % PER_BLOCK);
    };
    const bool pair = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
    const uint64_t width = pair ? 2U : 1U;  // dst elements per repeat
    opgen_sim::CountVector(repeatTime, static_cast<uint64_t>(mask) * repeatTime, sizeof(T));
    const uint8_t* s = src.SimRead(0U, at(repeatTime - 1, mask - 1) + 1U, "WholeReduceMax src");
    uint8_t* d = dst.SimWrite(0U, (static_cast<uint64_t>(repeatTime) - 1U) * dstRepStride * width + width,
                              "WholeReduceMax dst");
    for (int64_t r = 0; r < repeatTime; ++r) {
        float best = 0.0f;
        uint32_t index = 0U;
        for (int64_t j = 0; j < mask; ++j) {
            const float v = sim::ToF(sim::Load<T>(s, at(r, j)));
            if (j == 0 || (!std::isnan(best) && (std::isnan(v) || v > best))) {
                best = v;
                index = static_cast<uint32_t>(j);
            }
        }
        uint8_t* out = d + static_cast<uint64_t>(r) * dstRepStride * width * sizeof(T);
        T indexBits{};
        std::memcpy(&indexBits, &index, sizeof(T) < sizeof(index) ? sizeof(T) : sizeof(index));
        const T value = sim::FromF<T>(best);
        switch (order) {
            case ReduceOrder::ORDER_VALUE_INDEX: sim::Store<T>(out, 0U, value); sim::Store<T>(out, 1U, indexBits); break;
            case ReduceOrder::ORDER_INDEX_VALUE: sim::Store<T>(out, 0U, indexBits); sim::Store<T>(out, 1U, value); break;
            case ReduceOrder::ORDER_ONLY_VALUE: sim::Store<T>(out, 0U, value); break;
            case ReduceOrder::ORDER_ONLY_INDEX: sim::Store<T>(out, 0U, indexBits); break;
        }
    }
}

// ---- conversion (kernel_operator_vec_vconv_intf.h) -------------------------------------------------------------
// The scale int32 -> half conversions multiply by (the DEQSCALE register).
__aicore__ inline void SetDeqScale(half scale)
{
    if (opgen_sim::t_core != nullptr) {
        opgen_sim::t_core->deqScale = static_cast<float>(scale);
    }
}

// dst and src may be the same UB bytes (a conversion in place that does not widen) but must not partly overlap.
template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint32_t count)
{
    // a conversion's repeat holds 256 bytes of its wider operand
    opgen_sim::CountVectorCount(count, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
    const uint8_t* s = src.SimRead(0U, count, "Cast src");
    uint8_t* d = dst.SimWrite(0U, count, "Cast dst");
    const uint64_t dBytes = SimBytes<T>(count);
    const uint64_t sBytes = SimBytes<U>(count);
    const bool overlap = d < s + sBytes && s < d + dBytes;
    if (overlap && (d != s || SimBits<T>() > SimBits<U>())) {
        opgen_sim::Raise("Cast %s -> %s: dst UB [%u, +%llu) and src UB [%u, +%llu) overlap other than in place",
                         opgen_sim::TypeName<U>(), opgen_sim::TypeName<T>(), dst.SimOffset(),
                         static_cast<unsigned long long>(dBytes), src.SimOffset(),
                         static_cast<unsigned long long>(sBytes));
    }
    std::vector<uint8_t> in(s, s + sBytes);  // in place: read every element before writing
    std::string error;
    const float scale = opgen_sim::t_core != nullptr ? opgen_sim::t_core->deqScale : 1.0f;
    opgen_sim::ConvertElements<T, U>(d, in.data(), count, roundMode, scale, &error);
    if (!error.empty()) {
        opgen_sim::Raise("%s", error.c_str());
    }
}

}  // namespace AscendC

#endif  // OPGEN_SIM_VECTOR_H
