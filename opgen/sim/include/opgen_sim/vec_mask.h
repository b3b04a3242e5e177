/**
 * The vector unit's mask and repeats (asc-devkit include/basic_api/kernel_operator_vec_mask_intf.h, impl/basic_api/
 * kernel_utils_base.h AscendCUtils::SetMask; doc: Ascend C "掩码操作" / "通用说明"): the general form every level-0
 * vector instruction of the twin is carried out by, from which the count forms follow.
 *
 * The core holds a 128-bit mask register (maskHigh:maskLow) and a mode. Normal mode: an instruction runs
 * `repeatTime` repeats of 256 bytes; lane j (0 <= j < 256 / sizeof(T)) of each repeat takes part when bit j of the
 * register is set. Counter mode (SetMaskCount): maskLow is the number of elements of the whole instruction; the
 * repeats follow from it (the last one short) and the call's repeatTime is not used. A call with isSetMask = true
 * writes the register from its mask argument (a count: the first `mask` lanes; an array: {low, high} bits); with
 * false it uses the register as the kernel set it (SetVectorMask) and its mask argument is a placeholder.
 * Lane j of repeat r of an operand lies at element r * repStride * perBlock + (j / perBlock) * blkStride * perBlock
 * + j % perBlock (strides in 32-byte blocks, perBlock = 32 / sizeof(T)).
 */
#ifndef OPGEN_SIM_VEC_MASK_H
#define OPGEN_SIM_VEC_MASK_H

#include <cstdint>

#include "opgen_sim/tensor.h"

namespace AscendC {

constexpr uint64_t MASK_PLACEHOLDER = 0;                 // impl/basic_api/kernel_reg.h
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};
const int32_t DEFAULT_BLK_STRIDE = 1;                    // impl/basic_api/utils/kernel_utils_constants.h
const uint8_t DEFAULT_REPEAT_STRIDE = 8;
const int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint64_t FULL_MASK = ~0ULL;

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

namespace sim {
inline opgen_sim::CoreState& MaskCore()
{
    if (opgen_sim::t_core == nullptr) {
        opgen_sim::Raise("a vector mask instruction outside a kernel core");
    }
    return *opgen_sim::t_core;
}

// The register a continuous mask of `len` lanes writes (AscendCUtils::SetMask<T>(len) in normal mode).
template <typename T>
inline void ContinuousMask(int64_t len, uint64_t& high, uint64_t& low, const char* what)
{
    constexpr int64_t LANES = 256 / sizeof(T);
    if (len < 1 || len > LANES) {
        opgen_sim::Raise("%s: mask %lld outside [1, %lld] for %s", what, static_cast<long long>(len),
                         static_cast<long long>(LANES), opgen_sim::TypeName<T>());
    }
    low = len >= 64 ? FULL_MASK : ((1ULL << len) - 1ULL);
    high = len >= 128 ? FULL_MASK : (len > 64 ? ((1ULL << (len - 64)) - 1ULL) : 0ULL);
}

template <typename T>
inline void CheckBitMask(uint64_t high, uint64_t low, const char* what)
{
    if (sizeof(T) >= 4U && high != 0ULL) {
        opgen_sim::Raise("%s: mask[1] = 0x%llx for %s: a repeat has 64 lanes, mask[1] must be 0", what,
                         static_cast<unsigned long long>(high), opgen_sim::TypeName<T>());
    }
    if (high == 0ULL && low == 0ULL) {
        opgen_sim::Raise("%s: a mask with no lane set", what);
    }
}

// The lanes one instruction runs: from the register (after the call's isSetMask write) and its repeatTime.
template <typename T>
struct Lanes {
    static constexpr uint64_t PER_REPEAT = 256 / sizeof(T);
    static constexpr uint64_t PER_BLOCK = 32 / sizeof(T);
    bool counter = false;
    uint64_t high = 0, low = 0;  // normal mode
    uint64_t count = 0;          // counter mode: elements in all
    uint64_t repeats = 0;

    bool On(uint64_t r, uint64_t j) const
    {
        if (counter) {
            return r * PER_REPEAT + j < count;
        }
        return j < 64U ? ((low >> j) & 1ULL) != 0ULL : ((high >> (j - 64U)) & 1ULL) != 0ULL;
    }
    // the highest lane any repeat runs (the extent of an operand); repeats > 0
    uint64_t TopLane() const
    {
        if (counter) {
            return count >= PER_REPEAT ? PER_REPEAT - 1U : count - 1U;
        }
        for (uint64_t j = PER_REPEAT; j-- > 0U;) {
            if (On(0U, j)) {
                return j;
            }
        }
        return 0U;
    }
    static uint64_t At(uint64_t r, uint64_t j, uint64_t blkStride, uint64_t repStride)
    {
        return r * repStride * PER_BLOCK + (j / PER_BLOCK) * blkStride * PER_BLOCK + j % PER_BLOCK;
    }
    // elements [0, Extent) of an operand with these strides cover every lane it touches
    uint64_t Extent(uint64_t blkStride, uint64_t repStride) const
    {
        if (repeats == 0U) {
            return 0U;
        }
        uint64_t top = 0U;
        for (uint64_t r = 0U; r < repeats; ++r) {  // (a repeat stride of 0 can make repeat 0 the furthest)
            const uint64_t lane = counter && r + 1U == repeats ? (count - 1U) % PER_REPEAT : TopLane();
            const uint64_t at = At(r, lane, blkStride, repStride);
            top = at > top ? at : top;
        }
        return top + 1U;
    }
};

// The lanes of a call: `setMask` writes the register first (isSetMask); repeatTime counts in normal mode only.
template <typename T>
inline Lanes<T> Resolve(uint64_t repeatTime, const char* what)
{
    opgen_sim::CoreState& c = MaskCore();
    Lanes<T> l;
    l.counter = c.maskCounter;
    if (l.counter) {
        l.count = c.maskLow;
        if (l.count == 0U) {
            opgen_sim::Raise("%s: counter mode with a count of 0 elements (SetVectorMask)", what);
        }
        l.repeats = (l.count + Lanes<T>::PER_REPEAT - 1U) / Lanes<T>::PER_REPEAT;
    } else {
        l.high = c.maskHigh;
        l.low = c.maskLow;
        CheckBitMask<T>(sizeof(T) >= 4U ? 0ULL : l.high, l.low, what);
        l.repeats = repeatTime;
    }
    return l;
}

template <typename T, bool isSetMask>
inline void WriteMask(uint64_t mask, const char* what)
{
    if constexpr (isSetMask) {
        opgen_sim::CoreState& c = MaskCore();
        if (c.maskCounter) {
            c.maskHigh = 0U;
            c.maskLow = mask;  // the count of the whole instruction
        } else {
            ContinuousMask<T>(static_cast<int64_t>(mask), c.maskHigh, c.maskLow, what);
        }
    }
}
template <typename T, bool isSetMask>
inline void WriteMask(const uint64_t mask[], const char* what)
{
    if constexpr (isSetMask) {
        opgen_sim::CoreState& c = MaskCore();
        if (!c.maskCounter) {
            CheckBitMask<T>(mask[1], mask[0], what);
        }
        c.maskHigh = mask[1];
        c.maskLow = mask[0];
    }
}
}  // namespace sim

// ---- mask and mode (kernel_operator_vec_mask_intf.h) ---------------------------------------------------------
__aicore__ inline void SetMaskCount() { sim::MaskCore().maskCounter = true; }
__aicore__ inline void SetMaskNorm() { sim::MaskCore().maskCounter = false; }
__aicore__ inline void ResetMask()
{
    opgen_sim::CoreState& c = sim::MaskCore();
    c.maskHigh = FULL_MASK;
    c.maskLow = FULL_MASK;
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow)
{
    opgen_sim::CoreState& c = sim::MaskCore();
    if (mode == MaskMode::NORMAL && !c.maskCounter) {
        sim::CheckBitMask<T>(maskHigh, maskLow, "SetVectorMask");
    }
    c.maskHigh = maskHigh;
    c.maskLow = maskLow;
}
// normal mode: the first `len` lanes; counter mode: `len` elements in all
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ inline void SetVectorMask(int32_t len)
{
    opgen_sim::CoreState& c = sim::MaskCore();
    if (mode == MaskMode::COUNTER || c.maskCounter) {
        if (len < 0) {
            opgen_sim::Raise("SetVectorMask: counter mode with a negative count %d", len);
        }
        c.maskHigh = 0U;
        c.maskLow = static_cast<uint64_t>(len);
        return;
    }
    sim::ContinuousMask<T>(len, c.maskHigh, c.maskLow, "SetVectorMask");
}

}  // namespace AscendC

#endif  // OPGEN_SIM_VEC_MASK_H
