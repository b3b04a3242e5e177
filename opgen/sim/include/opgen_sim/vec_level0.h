/**
 * Level-0 vector instructions (mask + repeatTime + block / repeat strides) and the instructions the hand-written MoE
 * kernels call beside them, carried out lane by lane through vec_mask.h: Duplicate, Copy, Mul, And / Or, ReduceSum,
 * GatherMask, CreateVecIndex, ScalarGetSFFValue. Every operand's extent is checked against its tensor (and
 * recorded for the hazard checks) once, before any lane is written.
 */
#ifndef OPGEN_SIM_VEC_LEVEL0_H
#define OPGEN_SIM_VEC_LEVEL0_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "opgen_sim/vec_mask.h"
#include "opgen_sim/vector.h"

namespace AscendC {

// include/basic_api/kernel_struct_data_copy.h
struct CopyRepeatParams {
    __aicore__ CopyRepeatParams() {}
    __aicore__ CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn, uint16_t dstRepeatSizeIn,
                                uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn), srcRepeatSize(srcRepeatSizeIn)
    {
    }
    uint16_t dstStride = 1;
    uint16_t srcStride = 1;
    uint16_t dstRepeatSize = DEFAULT_REPEAT_STRIDE;
    uint16_t srcRepeatSize = DEFAULT_REPEAT_STRIDE;
};

// include/basic_api/kernel_struct_gather.h (__NPU_ARCH__ 2201 defaults to VERSION_V2)
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 2201
const GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;
#else
const GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;
#endif
struct GatherMaskParams {
    __aicore__ GatherMaskParams() {}
    __aicore__ GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn,
                                const uint16_t src0RepeatStrideIn, const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn),
          repeatTimes(repeatTimesIn),
          src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn)
    {
    }
    uint8_t src0BlockStride = DEFAULT_BLK_STRIDE;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
};

// include/basic_api/kernel_struct_brcb.h (the strides Brcb reads)
struct BrcbRepeatParams {
    __aicore__ BrcbRepeatParams() {}
    __aicore__ BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn)
    {
    }
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
};

namespace sim {
// An operand of a level-0 instruction: its tensor and strides (32-byte blocks).
template <typename T>
struct Operand {
    const LocalTensor<T>& t;
    uint64_t blk;
    uint64_t rep;
};

// The UB bytes of operand `t` up to its highest element in `elems` (checked against its buffer), the access recorded
// for the hazard checks as runs of adjacent elements: the lanes a mask or a stride leaves out are not touched.
template <typename T>
inline uint8_t* Touch(const LocalTensor<T>& t, std::vector<uint64_t> elems, bool write, const char* what,
                      bool aligned = true)
{
    std::sort(elems.begin(), elems.end());
    elems.erase(std::unique(elems.begin(), elems.end()), elems.end());
    uint8_t* p = t.SimSpan(0U, elems.empty() ? 0U : elems.back() + 1U, what, aligned);
    const uint32_t base = t.SimOffset();
    for (size_t i = 0U; i < elems.size();) {
        size_t k = i + 1U;
        while (k < elems.size() && elems[k] == elems[k - 1U] + 1U) {
            ++k;
        }
        const uint32_t begin = static_cast<uint32_t>(base + elems[i] * sizeof(T));
        const uint32_t end = static_cast<uint32_t>(base + (elems[k - 1U] + 1U) * sizeof(T));
        if (write) {
            opgen_sim::UbWritten(opgen_sim::PIPE_V_, begin, end, what);
        } else {
            opgen_sim::UbRead(opgen_sim::PIPE_V_, begin, end, what);
        }
        i = k;
    }
    return p;
}

// The elements of an operand with these strides that the instruction's lanes touch.
template <typename T>
inline std::vector<uint64_t> LaneElems(const Lanes<T>& l, uint64_t blk, uint64_t rep)
{
    std::vector<uint64_t> out;
    for (uint64_t r = 0U; r < l.repeats; ++r) {
        for (uint64_t j = 0U; j < Lanes<T>::PER_REPEAT; ++j) {
            if (l.On(r, j)) {
                out.push_back(Lanes<T>::At(r, j, blk, rep));
            }
        }
    }
    return out;
}

// dst lane = f(src lanes...) for every lane the mask runs. The sources are read in full before dst is written
// (the instruction reads its operands before it writes: an in-place call sees the old values).
template <typename T, typename F, typename... S>
inline void ForLanes(const char* what, const Lanes<T>& l, const Operand<T>& dst, F f, const Operand<S>&... src)
{
    if (l.repeats == 0U) {
        return;
    }
    std::vector<std::vector<uint8_t>> in;
    std::vector<const uint8_t*> base;
    const auto read = [&](const auto& s) {
        using U = typename std::decay_t<decltype(s.t)>::PrimType;
        const uint64_t n = l.Extent(s.blk, s.rep);
        const uint8_t* p = Touch(s.t, LaneElems<T>(l, s.blk, s.rep), false, what);
        in.emplace_back(p, p + n * sizeof(U));
    };
    (read(src), ...);
    (void)read;  // Duplicate has no source
    uint8_t* d = Touch(dst.t, LaneElems<T>(l, dst.blk, dst.rep), true, what);
    for (uint64_t r = 0U; r < l.repeats; ++r) {
        for (uint64_t j = 0U; j < Lanes<T>::PER_REPEAT; ++j) {
            if (!l.On(r, j)) {
                continue;
            }
            size_t k = 0U;
            const auto lane = [&](const auto& s) {
                using U = typename std::decay_t<decltype(s.t)>::PrimType;
                return Load<U>(in[k++].data(), Lanes<T>::At(r, j, s.blk, s.rep));
            };
            (void)lane;
            // a braced list evaluates left to right (a call's arguments in no set order): source k reads in[k]
            const std::tuple<S...> lanes{lane(src)...};
            Store<T>(d, Lanes<T>::At(r, j, dst.blk, dst.rep), std::apply(f, lanes));
        }
    }
}

template <typename T, bool isSetMask, typename M>
inline Lanes<T> Level0(M mask, uint64_t repeatTime, const char* what)
{
    WriteMask<T, isSetMask>(mask, what);
    const Lanes<T> l = Resolve<T>(repeatTime, what);
    if (l.repeats > 0U) {  // one issue of l.repeats repeats over the lanes the mask runs
        uint64_t lanes = 0U;
        for (uint64_t j = 0U; j < Lanes<T>::PER_REPEAT; ++j) {
            lanes += l.On(0U, j) ? 1U : 0U;
        }
        opgen_sim::CountVector(l.repeats, l.counter ? l.count : lanes * l.repeats, sizeof(T));
    }
    return l;
}

// The bits of T as an unsigned integer of its size (the bitwise instructions).
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 2U, uint16_t, std::conditional_t<sizeof(T) == 4U, uint32_t, uint8_t>>;
template <typename T, typename F>
inline T Bitwise(T a, T b, F f)
{
    Bits<T> x, y;
    std::memcpy(&x, &a, sizeof(T));
    std::memcpy(&y, &b, sizeof(T));
    const Bits<T> z = static_cast<Bits<T>>(f(x, y));
    T out;
    std::memcpy(&out, &z, sizeof(T));
    return out;
}

// The sum of `n` values the way vcadd adds one repeat (a tree of adjacent pairs, absent lanes as 0), each addition
// rounded to T: the order opgen_sim/vector.h ReduceSum documents.
template <typename T>
inline T RepeatSum(const T* v, uint64_t n)
{
    constexpr uint64_t PER_REPEAT = 256 / sizeof(T);
    T lanes[PER_REPEAT];
    for (uint64_t j = 0U; j < PER_REPEAT; ++j) {
        lanes[j] = j < n ? v[j] : FromF<T>(0.0f);
    }
    for (uint64_t width = PER_REPEAT; width > 1U; width /= 2U) {
        for (uint64_t j = 0U; j < width / 2U; ++j) {
            lanes[j] = FromF<T>(ToF(lanes[2U * j]) + ToF(lanes[2U * j + 1U]));
        }
    }
    return lanes[0];
}
// vcadd over `n` contiguous values in counter mode, again and again until one is left (the 2201 Sum / ReduceSum
// second steps: impl/adv_api/detail/reduce/sum/sum_common_impl.h, dav_c220 ReduceSumSecondStep)
template <typename T>
inline T CounterSum(std::vector<T> v)
{
    constexpr uint64_t PER_REPEAT = 256 / sizeof(T);
    while (v.size() > 1U) {
        std::vector<T> next;
        for (uint64_t i = 0U; i < v.size(); i += PER_REPEAT) {
            next.push_back(RepeatSum<T>(v.data() + i, v.size() - i < PER_REPEAT ? v.size() - i : PER_REPEAT));
        }
        v.swap(next);
    }
    return v.empty() ? FromF<T>(0.0f) : v[0];
}
}  // namespace sim

// ---- Duplicate, level 0 (kernel_operator_vec_duplicate_intf.h) ------------------------------------------------
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,
                                 const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride)
{
    const auto l = sim::Level0<T, isSetMask>(mask, repeatTime, "Duplicate");
    const T v = scalarValue;
    sim::ForLanes<T>("Duplicate", l, {dst, dstBlockStride, dstRepeatStride}, [v]() { return v; });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask[],
                                 const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride)
{
    const auto l = sim::Level0<T, isSetMask>(static_cast<const uint64_t*>(mask), repeatTime, "Duplicate");
    const T v = scalarValue;
    sim::ForLanes<T>("Duplicate", l, {dst, dstBlockStride, dstRepeatStride}, [v]() { return v; });
}

// ---- Copy, level 0: UB -> UB on the vector pipe (kernel_operator_data_copy_intf.h) ---------------------------
template <typename T, bool isSetMask = true>
__aicore__ inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask,
                            const uint8_t repeatTime, const CopyRepeatParams& p)
{
    static_assert(sizeof(T) == 2U || sizeof(T) == 4U, "Copy moves 16- or 32-bit elements");
    const auto l = sim::Level0<T, isSetMask>(mask, repeatTime, "Copy");
    sim::ForLanes<T>("Copy", l, {dst, p.dstStride, p.dstRepeatSize}, [](T a) { return a; },
                     sim::Operand<T>{src, p.srcStride, p.srcRepeatSize});
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                            const uint8_t repeatTime, const CopyRepeatParams& p)
{
    static_assert(sizeof(T) == 2U || sizeof(T) == 4U, "Copy moves 16- or 32-bit elements");
    const auto l = sim::Level0<T, isSetMask>(mask, repeatTime, "Copy");
    sim::ForLanes<T>("Copy", l, {dst, p.dstStride, p.dstRepeatSize}, [](T a) { return a; },
                     sim::Operand<T>{src, p.srcStride, p.srcRepeatSize});
}

// ---- Mul, level 0 (kernel_operator_vec_binary_intf.h): dst lane = src0 lane * src1 lane, each operand by its own
// block and repeat strides (a src1 block stride 0 reads one 32-byte block for every block of a repeat)
template <typename T, bool isSetMask = true>
__aicore__ inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& p)
{
    const auto l = sim::Level0<T, isSetMask>(mask, repeatTime, "Mul");
    const auto mul = sim::Fp<T>([](float a, float b) { return a * b; });
    sim::ForLanes<T>("Mul", l, {dst, p.dstBlkStride, p.dstRepStride}, mul,
                     sim::Operand<T>{src0, p.src0BlkStride, p.src0RepStride},
                     sim::Operand<T>{src1, p.src1BlkStride, p.src1RepStride});
}

// ---- bitwise (kernel_operator_vec_binary_intf.h: int16_t / uint16_t on 2201) ---------------------------------
#define OPGEN_SIM_BITWISE(NAME, OP)                                                                                   \
    template <typename T>                                                                                         \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                const int32_t& count)                                                              \
    {                                                                                                              \
        static_assert(sizeof(T) == 2U, #NAME " takes int16_t / uint16_t");                                         \
        sim::Binary(dst, src0, src1, count, #NAME,                                                                 \
                    [](T a, T b) { return sim::Bitwise(a, b, [](auto x, auto y) { return x OP y; }); });          \
    }                                                                                                              \
    template <typename T, bool isSetMask = true>                                                                   \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& p)             \
    {                                                                                                              \
        static_assert(sizeof(T) == 2U, #NAME " takes int16_t / uint16_t");                                         \
        const auto l = sim::Level0<T, isSetMask>(mask, repeatTime, #NAME);                                         \
        sim::ForLanes<T>(#NAME, l, {dst, p.dstBlkStride, p.dstRepStride},                                          \
                         [](T a, T b) { return sim::Bitwise(a, b, [](auto x, auto y) { return x OP y; }); },     \
                         sim::Operand<T>{src0, p.src0BlkStride, p.src0RepStride},                                  \
                         sim::Operand<T>{src1, p.src1BlkStride, p.src1RepStride});                                 \
    }
OPGEN_SIM_BITWISE(And, &)
OPGEN_SIM_BITWISE(Or, |)
#undef OPGEN_SIM_BITWISE

template <typename T>
__aicore__ inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    static_assert(sizeof(T) == 2U, "Not takes int16_t / uint16_t");
    sim::Unary(dst, src, count, "Not", [](T a) { return sim::Bitwise(a, a, [](auto x, auto) { return ~x; }); });
}

namespace sim {
template <typename T>
inline bool SumIsExact(const std::vector<T>& v);  // adv_api/reduce/sum.h
}  // namespace sim

// ---- ReduceSum, level 0 (kernel_operator_vec_reduce_intf.h; dav_c220 ReduceSumImpl): vcadd sums each repeat's
// lanes into sharedTmpBuffer[r], then those repeatTime sums are added in counter mode into dst[0]. On 3510
// (impl/basic_api/dav_3510/kernel_operator_vec_reduce_impl.h ReduceSumImpl) the int32_t repeat has no 255 bound
// (past 64 repeats a third level of register ReduceSum; the [0, 255] check is CPU-debug only), and the order of its
// register additions is not documented: the twin adds only float lanes every order sums alike, as Sum.
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t mask, const int32_t repeatTime,
                                 const int32_t srcRepStride)
{
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    if (repeatTime < 1) {
        opgen_sim::Raise("ReduceSum (level 0): repeatTime %d below 1", repeatTime);
    }
#else
    if (repeatTime < 1 || repeatTime > 255) {
        opgen_sim::Raise("ReduceSum (level 0): repeatTime %d outside [1, 255]", repeatTime);
    }
#endif
    sim::MaskCore().maskCounter = false;  // the implementation runs in normal mode
    const auto l = sim::Level0<T, true>(static_cast<uint64_t>(mask), static_cast<uint64_t>(repeatTime),
                                        "ReduceSum (level 0)");
    const uint8_t* s = sim::Touch(src, sim::LaneElems<T>(l, 1U, static_cast<uint64_t>(srcRepStride)), false,
                                  "ReduceSum src");
    std::vector<T> sums;
    for (uint64_t r = 0U; r < l.repeats; ++r) {
        T lanes[sim::Lanes<T>::PER_REPEAT];
        for (uint64_t j = 0U; j < sim::Lanes<T>::PER_REPEAT; ++j) {
            lanes[j] = l.On(r, j) ? sim::Load<T>(s, sim::Lanes<T>::At(r, j, 1U, srcRepStride)) : sim::FromF<T>(0.0f);
        }
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        if constexpr (!std::is_integral<T>::value) {
            if (!sim::SumIsExact<T>(std::vector<T>(lanes, lanes + sim::Lanes<T>::PER_REPEAT))) {
                opgen_sim::Raise("ReduceSum (level 0, __NPU_ARCH__ 3510): repeat %llu's %s lanes round differently "
                                 "in different orders of addition, and the order of Reg::ReduceSum is not documented",
                                 static_cast<unsigned long long>(r), opgen_sim::TypeName<T>());
            }
        }
#endif
        sums.push_back(sim::RepeatSum<T>(lanes, sim::Lanes<T>::PER_REPEAT));
    }
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    if constexpr (!std::is_integral<T>::value) {
        if (!sim::SumIsExact<T>(sums)) {
            opgen_sim::Raise("ReduceSum (level 0, __NPU_ARCH__ 3510): the %zu repeat sums round differently in "
                             "different orders of addition, and the order of Reg::ReduceSum is not documented",
                             sums.size());
        }
    }
#endif
    uint8_t* w = sharedTmpBuffer.SimWrite(0U, sums.size(), "ReduceSum sharedTmpBuffer");
    std::memcpy(w, sums.data(), sums.size() * sizeof(T));
    sim::Store<T>(dst.SimWrite(0U, 1U, "ReduceSum dst", false), 0U, sim::CounterSum<T>(sums));
    ResetMask();
}

// ---- GatherMask (kernel_operator_vec_gather_mask_intf.h; dav_c220 GatherMaskImpl: vreducev2) -------------------
// reduceMode true (counter mode): each of repeatTimes repeats takes `mask` elements of src0 (>= 1); false (normal
// mode): each repeat takes its 256 bytes and `mask` is not used. An element whose pattern bit is 1 is written to
// dst, packed one after another over all repeats; rsvdCnt is how many were. The pattern of repeat r starts
// src1RepeatStride 32-byte blocks after repeat r-1's; a built-in pattern (1..7) is the same for every repeat.
namespace sim {
template <typename T, typename PatternBit>
inline void GatherMaskLanes(const LocalTensor<T>& dst, const LocalTensor<T>& src0, bool reduceMode, uint32_t mask,
                            const GatherMaskParams& p, uint64_t& rsvdCnt, PatternBit bit)
{
    static_assert(sizeof(T) == 2U || sizeof(T) == 4U, "GatherMask gathers 16- or 32-bit elements");
    constexpr uint64_t PER_REPEAT = 256U / sizeof(T);
    if (reduceMode && mask < 1U) {
        opgen_sim::Raise("GatherMask: reduceMode with mask %u: at least 1 element a repeat", mask);
    }
    const uint64_t perRepeat = reduceMode ? mask : PER_REPEAT;
    const uint64_t repeats = p.repeatTimes;
    if (repeats == 0U) {
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        // 3510 gathers in a register loop of repeatTimes iterations after clearing the AR count it returns
        // (impl/basic_api/dav_3510/kernel_operator_vec_gather_mask_impl.h GatherMaskCalOneRepMask /
        // GatherMaskReduceElePerVec): 0 repeats write nothing and keep 0 (the real Ascend 950 DispatchTeardown's core 0
        // gathers the sums of the 0 cores before it, GetCumSum)
        rsvdCnt = 0U;
        return;
#else
        opgen_sim::Raise("GatherMask: repeatTimes 0");
#endif
    }
    opgen_sim::CountVector(repeats, perRepeat * repeats, sizeof(T));
    constexpr uint64_t PER_BLOCK = 32U / sizeof(T);
    const auto at = [&](uint64_t r, uint64_t j) {
        return r * p.src0RepeatStride * PER_BLOCK + (j / PER_BLOCK) * p.src0BlockStride * PER_BLOCK + j % PER_BLOCK;
    };
    std::vector<uint64_t> elems;
    for (uint64_t r = 0U; r < repeats; ++r) {
        for (uint64_t j = 0U; j < perRepeat; ++j) {
            elems.push_back(at(r, j));
        }
    }
    const uint8_t* s = Touch(src0, std::move(elems), false, "GatherMask src0");
    std::vector<T> out;
    for (uint64_t r = 0U; r < repeats; ++r) {
        for (uint64_t j = 0U; j < perRepeat; ++j) {
            if (bit(r, j)) {
                out.push_back(Load<T>(s, at(r, j)));
            }
        }
    }
    if (!out.empty()) {
        std::memcpy(dst.SimWrite(0U, out.size(), "GatherMask dst"), out.data(), out.size() * sizeof(T));
    }
    rsvdCnt = out.size();
    // the count comes back to the scalar unit from the vector unit's RSVD_CNT register, read right after the
    // instruction with no flag (code: asc-devkit impl/basic_api/dav_c220/kernel_operator_vec_gather_mask_impl.h
    // GatherMaskImpl: vreducev2, then rsvdCnt = AscendCUtils::GetRsvdCnt()): the scalar unit waits for the vector
    // pipe there, as after WaitFlag<V_S>
    opgen_sim::MakeVisible(opgen_sim::PIPE_V_, opgen_sim::PIPE_S_, opgen_sim::Snapshot());
    SetMaskNorm();
}
}  // namespace sim

template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                  const LocalTensor<U>& src1Pattern, const bool reduceMode, const uint32_t mask,
                                  const GatherMaskParams& p, uint64_t& rsvdCnt)
{
    static_assert(std::is_same<U, uint16_t>::value || std::is_same<U, uint32_t>::value,
                  "GatherMask: src1Pattern is uint16_t or uint32_t");
    static_assert(sizeof(T) == sizeof(U), "GatherMask: a uint16_t pattern for 16-bit data, uint32_t for 32-bit");
    constexpr uint64_t PER_REPEAT = 256U / sizeof(T);
    const uint64_t perRepeat = reduceMode ? mask : PER_REPEAT;
    const uint64_t patternBits = static_cast<uint64_t>(p.repeatTimes == 0U ? 0U : p.repeatTimes - 1U) *
                                     p.src1RepeatStride * 256U + (perRepeat == 0U ? 1U : perRepeat);
    const uint8_t* bits = src1Pattern.template ReinterpretCast<uint8_t>().SimRead(0U, (patternBits + 7U) / 8U,
                                                                                  "GatherMask src1Pattern");
    sim::GatherMaskLanes(dst, src0, reduceMode, mask, p, rsvdCnt, [&](uint64_t r, uint64_t j) {
        const uint64_t b = r * p.src1RepeatStride * 256U + j;  // bits: 32-byte blocks of 256 bits
        return ((bits[b / 8U] >> (b % 8U)) & 1U) != 0U;
    });
}
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                                  const bool reduceMode, const uint32_t mask, const GatherMaskParams& p,
                                  uint64_t& rsvdCnt)
{
    if (src1Pattern < 1U || src1Pattern > 7U) {
        opgen_sim::Raise("GatherMask: built-in src1Pattern %u outside [1, 7]", src1Pattern);
    }
    // 1: even lanes, 2: odd lanes, 3..6: lane 0..3 of every 4, 7: every lane
    sim::GatherMaskLanes(dst, src0, reduceMode, mask, p, rsvdCnt, [src1Pattern](uint64_t, uint64_t j) {
        switch (src1Pattern) {
            case 1: return j % 2U == 0U;
            case 2: return j % 2U == 1U;
            case 7: return true;
            default: return j % 4U == static_cast<uint64_t>(src1Pattern - 3U);
        }
    });
}

// ---- BlockReduceMax (kernel_operator_vec_reduce_intf.h; dav_c220: vcgmax): per repeat, the max of the lanes of
// each of its eight 32-byte blocks, written as eight elements at dst + r * dstRepStride * 8 (a repeat's result is
// the unit of dstRepStride). A block with no lane on has no documented result: it faults.
template <typename T, bool isSetMask = true>
__aicore__ inline void BlockReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                                      const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride)
{
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "BlockReduceMax takes half / float");
    if (repeatTime < 0 || repeatTime > 255 || dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) {
        opgen_sim::Raise("BlockReduceMax: repeatTime %d (0..255) or a negative stride (%d, %d, %d)", repeatTime,
                         dstRepStride, srcBlkStride, srcRepStride);
    }
    const auto l = sim::Level0<T, isSetMask>(static_cast<uint64_t>(mask), static_cast<uint64_t>(repeatTime),
                                             "BlockReduceMax");
    if (l.repeats == 0U) {
        return;
    }
    constexpr uint64_t PER_BLOCK = sim::Lanes<T>::PER_BLOCK;
    const uint8_t* s = sim::Touch(src, sim::LaneElems<T>(l, srcBlkStride, srcRepStride), false, "BlockReduceMax src");
    uint8_t* d = dst.SimWrite(0U, (l.repeats - 1U) * dstRepStride * 8U + 8U, "BlockReduceMax dst", false);
    for (uint64_t r = 0U; r < l.repeats; ++r) {
        for (uint64_t b = 0U; b < 8U; ++b) {
            bool any = false;
            float best = 0.0f;
            for (uint64_t k = 0U; k < PER_BLOCK; ++k) {
                const uint64_t j = b * PER_BLOCK + k;
                if (l.On(r, j)) {
                    const float v = sim::ToF(sim::Load<T>(s, sim::Lanes<T>::At(r, j, srcBlkStride, srcRepStride)));
                    best = any ? sim::MaxNan(best, v) : v;
                    any = true;
                }
            }
            if (!any) {
                opgen_sim::Raise("BlockReduceMax: block %llu of repeat %llu has no lane on in the mask",
                                 static_cast<unsigned long long>(b), static_cast<unsigned long long>(r));
            }
            sim::Store<T>(d, r * dstRepStride * 8U + b, sim::FromF<T>(best));
        }
    }
}

// ---- Brcb (kernel_operator_vec_brcb_intf.h): repeat r reads src[8r, 8r + 8) and fills 32-byte block k of its
// output (dst + r * dstRepStride blocks + k * dstBlkStride blocks) with src[8r + k]. As the real one: src and dst
// at one address are an error, dstBlkStride 0 is dstBlkStride 1 (kernel_operator_vec_brcb_intf_impl.h asserts /
// warns so; dav_3510 BrcbImpl: `dstBlkStride ? dstBlkStride : 1`).
template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                            const BrcbRepeatParams& p)
{
    static_assert(sizeof(T) == 2U || sizeof(T) == 4U, "Brcb broadcasts 16- or 32-bit elements");
    if (dst.SimOffset() == src.SimOffset()) {
        opgen_sim::Raise("Brcb: src0 and dst at one address (UB offset %u)", static_cast<unsigned>(dst.SimOffset()));
    }
    if (repeatTime == 0U) {
        return;
    }
    constexpr uint64_t PER_BLOCK = 32U / sizeof(T);
    opgen_sim::CountVector(repeatTime, repeatTime * 8U * PER_BLOCK, sizeof(T));  // lanes: the elements it writes
    const uint8_t* s = src.SimRead(0U, repeatTime * 8U, "Brcb src");
    const uint64_t blk = p.dstBlkStride == 0U ? 1U : p.dstBlkStride;
    const auto at = [&](uint64_t r, uint64_t k) { return (r * p.dstRepStride + k * blk) * PER_BLOCK; };
    uint64_t extent = 0U;
    for (uint64_t r = 0U; r < repeatTime; ++r) {
        const uint64_t top = at(r, 7U) + PER_BLOCK;
        extent = top > extent ? top : extent;
    }
    std::vector<uint8_t> in(s, s + repeatTime * 8U * sizeof(T));
    uint8_t* d = dst.SimWrite(0U, extent, "Brcb dst");
    for (uint64_t r = 0U; r < repeatTime; ++r) {
        for (uint64_t k = 0U; k < 8U; ++k) {
            const T v = sim::Load<T>(in.data(), r * 8U + k);
            for (uint64_t e = 0U; e < PER_BLOCK; ++e) {
                sim::Store<T>(d, at(r, k) + e, v);
            }
        }
    }
}

// ---- Axpy (kernel_operator_vec_ternary_scalar_intf.h): dst = src * scalar + dst; MulAddDst
// (kernel_operator_vec_binary_intf.h): dst = src0 * src1 + dst. Each product and sum rounded to dst's type.
template <typename T, typename U>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                            const int32_t& count)
{
    sim::CheckCount(count, "Axpy");
    opgen_sim::CountVectorCount(count, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
    const uint8_t* s = src.SimRead(0U, count, "Axpy src");
    const uint8_t* o = dst.SimRead(0U, count, "Axpy dst");
    std::vector<uint8_t> old(o, o + SimBytes<T>(count));
    uint8_t* d = dst.SimWrite(0U, count, "Axpy dst");
    const float a = sim::ToF(scalarValue);
    for (int32_t i = 0; i < count; ++i) {
        const float prod = sim::ToF(sim::FromF<T>(sim::ToF(sim::Load<U>(s, i)) * a));
        sim::Store<T>(d, i, sim::FromF<T>(prod + sim::ToF(sim::Load<T>(old.data(), i))));
    }
}
template <typename T, typename U>
__aicore__ inline void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,
                                 const int32_t& count)
{
    sim::CheckCount(count, "MulAddDst");
    opgen_sim::CountVectorCount(count, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
    const uint8_t* a = src0.SimRead(0U, count, "MulAddDst src0");
    const uint8_t* b = src1.SimRead(0U, count, "MulAddDst src1");
    const uint8_t* o = dst.SimRead(0U, count, "MulAddDst dst");
    std::vector<uint8_t> old(o, o + SimBytes<T>(count));
    uint8_t* d = dst.SimWrite(0U, count, "MulAddDst dst");
    for (int32_t i = 0; i < count; ++i) {
        const float prod = sim::ToF(sim::FromF<T>(sim::ToF(sim::Load<U>(a, i)) * sim::ToF(sim::Load<U>(b, i))));
        sim::Store<T>(d, i, sim::FromF<T>(prod + sim::ToF(sim::Load<T>(old.data(), i))));
    }
}

// ---- CreateVecIndex (kernel_operator_vec_createvecindex_intf.h): dst[i] = firstValue + i, i < count ------------
template <typename T>
__aicore__ inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count)
{
    static_assert(std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value ||
                      std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "CreateVecIndex fills int16_t / int32_t / half / float");
    opgen_sim::CountVectorCount(count, sizeof(T));
    uint8_t* d = dst.SimWrite(0U, count, "CreateVecIndex");
    for (uint32_t i = 0U; i < count; ++i) {
        if constexpr (std::is_integral<T>::value) {
            sim::Store<T>(d, i, static_cast<T>(firstValue + static_cast<T>(i)));
        } else {
            sim::Store<T>(d, i, sim::FromF<T>(sim::ToF(firstValue) + static_cast<float>(i)));
        }
    }
}

// ---- ScalarGetSFFValue (kernel_operator_scalar_intf.h): the index of the lowest bit equal to countValue, -1 if none
template <int countValue>
__aicore__ inline int64_t ScalarGetSFFValue(uint64_t valueIn)
{
    static_assert(countValue == 0 || countValue == 1, "ScalarGetSFFValue looks for a 0 or a 1 bit");
    opgen_sim::CountScalar();
    const uint64_t v = countValue == 1 ? valueIn : ~valueIn;
    return v == 0U ? -1 : static_cast<int64_t>(__builtin_ctzll(v));
}

}  // namespace AscendC

#endif  // OPGEN_SIM_VEC_LEVEL0_H
