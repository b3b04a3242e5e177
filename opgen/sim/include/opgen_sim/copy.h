/**
 * DataCopy / DataCopyPad of the twin (include/basic_api/kernel_operator_data_copy_intf.h), with the device's
 * rules: DataCopy moves whole 32-byte blocks between 32-byte aligned UB addresses; DataCopyPad moves any
 * byte length, each UB block starting 32-byte aligned.  Every GM read is a poll point (see world.h).
 */
#ifndef OPGEN_SIM_COPY_H
#define OPGEN_SIM_COPY_H

#include <cstring>

#include "opgen_sim/tensor.h"

namespace AscendC {

namespace sim {
template <typename T>
inline uint64_t WholeBlocks(uint32_t count, const char* what)
{
    const uint64_t bytes = SimBytes<T>(count);
    if (bytes % SIM_UB_ALIGN != 0U) {
        opgen_sim::Raise("%s: %u %s elements are %llu bytes, not a whole number of 32-byte blocks (use DataCopyPad)",
                         what, count, opgen_sim::TypeName<T>(), static_cast<unsigned long long>(bytes));
    }
    return bytes;
}

inline void GmRead(void* dst, const uint8_t* src, uint64_t bytes)
{
    opgen_sim::PollPoint(src, bytes);
    std::memcpy(dst, src, bytes);
}

// A UB->GM store: plain, or combined with GM's elements under the core's atomic mode (SetAtomicAdd / Max / Min),
// which orders no two cores' stores and so is no race.
inline void GmWrite(uint8_t* dst, const void* src, uint64_t bytes)
{
    opgen_sim::CoreState* core = opgen_sim::t_core;
    if (core != nullptr && core->atomic != nullptr && bytes != 0U) {
        (void)opgen_sim::GmWriteCounted(dst, bytes);
        std::lock_guard<std::mutex> lock(opgen_sim::g_atomicMu);
        core->atomic(dst, static_cast<const uint8_t*>(src), bytes);
    } else {
        opgen_sim::GmWritten(dst, bytes);
        std::memcpy(dst, src, bytes);
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the other cores see the bytes
}
}  // namespace sim

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count)
{
    const uint64_t bytes = sim::WholeBlocks<T>(count, "DataCopy GM->UB");
    sim::GmRead(dst.SimWrite(0U, count, "DataCopy GM->UB dst", true, opgen_sim::PIPE_MTE2_), src.SimSpan(0U, count, "DataCopy GM->UB src"), bytes);
}

template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const uint64_t bytes = sim::WholeBlocks<T>(count, "DataCopy UB->GM");
    sim::GmWrite(dst.SimSpan(0U, count, "DataCopy UB->GM dst"), src.SimRead(0U, count, "DataCopy UB->GM src", true, opgen_sim::PIPE_MTE3_), bytes);
}

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const uint64_t bytes = sim::WholeBlocks<T>(count, "DataCopy UB->UB");
    const uint8_t* from = src.SimRead(0U, count, "DataCopy UB->UB src");
    std::memmove(dst.SimWrite(0U, count, "DataCopy UB->UB dst"), from, bytes);
}

// DataCopyPad GM->UB: block i is blockLen bytes at GM src + i * (blockLen + srcStride bytes), landing at the
// 32-byte aligned UB dst + i * (AlignUp(blockLen, 32) + dstStride * 32).  Padding elements, when asked for,
// take paddingValue; otherwise the rest of the last 32-byte block keeps what UB held.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams)
{
    static_assert(SimBits<T>() % 8U == 0U, "DataCopyPad of packed 4-bit elements: copy their bytes");
    const uint64_t len = dataCopyParams.blockLen;
    const uint64_t elem = sizeof(T);
    if (len % elem != 0U) {
        opgen_sim::Raise("DataCopyPad GM->UB: blockLen %llu is not a whole number of %s",
                         static_cast<unsigned long long>(len), opgen_sim::TypeName<T>());
    }
    const uint64_t left = padParams.isPad ? padParams.leftPadding : 0U;
    const uint64_t right = padParams.isPad ? padParams.rightPadding : 0U;
    const uint64_t ubBlock = (left * elem + len + right * elem + 31U) / 32U * 32U;
    for (uint32_t i = 0U; i < dataCopyParams.blockCount; ++i) {
        const uint64_t s = i * (len + dataCopyParams.srcStride) / elem;
        const uint64_t d = i * (ubBlock + dataCopyParams.dstStride * 32ULL) / elem;
        uint8_t* out = dst.SimWrite(d, left + len / elem + right, "DataCopyPad GM->UB dst", true, opgen_sim::PIPE_MTE2_);
        const uint8_t* in = src.SimSpan(s, len / elem, "DataCopyPad GM->UB src");
        sim::GmRead(out + left * elem, in, len);
        for (uint64_t k = 0U; k < left; ++k) {
            std::memcpy(out + k * elem, &padParams.paddingValue, elem);
        }
        for (uint64_t k = 0U; k < right; ++k) {
            std::memcpy(out + (left * elem + len) + k * elem, &padParams.paddingValue, elem);
        }
    }
}

// DataCopyPad UB->GM: block i is blockLen bytes from the 32-byte aligned UB src + i * (AlignUp(blockLen, 32) +
// srcStride * 32) to GM dst + i * (blockLen + dstStride bytes).
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams)
{
    static_assert(SimBits<T>() % 8U == 0U, "DataCopyPad of packed 4-bit elements: copy their bytes");
    const uint64_t len = dataCopyParams.blockLen;
    const uint64_t elem = sizeof(T);
    if (len % elem != 0U) {
        opgen_sim::Raise("DataCopyPad UB->GM: blockLen %llu is not a whole number of %s",
                         static_cast<unsigned long long>(len), opgen_sim::TypeName<T>());
    }
    const uint64_t ubBlock = (len + 31U) / 32U * 32U;
    for (uint32_t i = 0U; i < dataCopyParams.blockCount; ++i) {
        const uint64_t s = i * (ubBlock + dataCopyParams.srcStride * 32ULL) / elem;
        const uint64_t d = i * (len + dataCopyParams.dstStride) / elem;
        sim::GmWrite(dst.SimSpan(d, len / elem, "DataCopyPad UB->GM dst"),
                     src.SimRead(s, len / elem, "DataCopyPad UB->GM src", true, opgen_sim::PIPE_MTE3_), len);
    }
}

#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
// impl/basic_api/utils/kernel_utils_struct_confusion_pad.h
enum class PaddingMode : uint8_t {
    Normal = 0,
    Compact,
};

namespace sim {
// A Compact copy's block length in bytes, a whole number of T
template <typename T>
inline uint64_t CompactBlockLen(const DataCopyExtParams& params, const char* what)
{
    static_assert(SimBits<T>() % 8U == 0U, "DataCopyPad of packed 4-bit elements: copy their bytes");
    if (params.blockLen % sizeof(T) != 0U) {
        opgen_sim::Raise("%s: blockLen %u is not a whole number of %s", what, params.blockLen, opgen_sim::TypeName<T>());
    }
    return params.blockLen;
}
}  // namespace sim

// The 3510 forms with a PaddingMode (include/basic_api/kernel_operator_data_copy_intf.h; impl/basic_api/dav_3510/
// kernel_operator_data_copy_impl.h CopyGmToUbufAlignV2 / CopyUbufToGmAlignV2). Normal is the form above. Compact
// packs the UB side: block i is at UB byte i * blockLen (the UB stride is the burst length; dstStride / srcStride
// of the UB side and any padding are not used), so only the first block starts 32-byte aligned.
template <typename T, PaddingMode mode>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams)
{
    if constexpr (mode == PaddingMode::Normal) {
        DataCopyPad(dst, src, dataCopyParams, padParams);
    } else {
        const uint64_t len = sim::CompactBlockLen<T>(dataCopyParams, "DataCopyPad<Compact> GM->UB");
        const uint64_t elem = sizeof(T);
        for (uint32_t i = 0U; i < dataCopyParams.blockCount; ++i) {
            const uint64_t s = i * (len + dataCopyParams.srcStride) / elem;
            uint8_t* out = dst.SimWrite(i * len / elem, len / elem, "DataCopyPad<Compact> GM->UB dst", i == 0U,
                                        opgen_sim::PIPE_MTE2_);
            sim::GmRead(out, src.SimSpan(s, len / elem, "DataCopyPad<Compact> GM->UB src"), len);
        }
    }
}

template <typename T, PaddingMode mode>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams)
{
    if constexpr (mode == PaddingMode::Normal) {
        DataCopyPad(dst, src, dataCopyParams);
    } else {
        const uint64_t len = sim::CompactBlockLen<T>(dataCopyParams, "DataCopyPad<Compact> UB->GM");
        const uint64_t elem = sizeof(T);
        for (uint32_t i = 0U; i < dataCopyParams.blockCount; ++i) {
            const uint64_t d = i * (len + dataCopyParams.dstStride) / elem;
            sim::GmWrite(dst.SimSpan(d, len / elem, "DataCopyPad<Compact> UB->GM dst"),
                         src.SimRead(i * len / elem, len / elem, "DataCopyPad<Compact> UB->GM src", i == 0U,
                                     opgen_sim::PIPE_MTE3_), len);
        }
    }
}
#endif

}  // namespace AscendC

#endif  // OPGEN_SIM_COPY_H
