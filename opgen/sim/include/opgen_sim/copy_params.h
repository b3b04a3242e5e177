/**
 * The DataCopyParams forms of DataCopy / DataCopyPad (include/basic_api/kernel_struct_data_copy.h,
 * kernel_operator_data_copy_intf.h): blockCount bursts; for DataCopy each burst is blockLen 32-byte blocks and the
 * gaps between bursts (srcStride / dstStride) are 32-byte blocks on both sides; DataCopyPad's blockLen is bytes, its
 * GM gap bytes and its UB gap 32-byte blocks, as the DataCopyExtParams form (copy.h) it is carried out by, with
 * DataCopyPadParams' paddingValue given to the pad register as T's bits (set_mov_pad_val).
 */
#ifndef OPGEN_SIM_COPY_PARAMS_H
#define OPGEN_SIM_COPY_PARAMS_H

#include <cstring>

#include "opgen_sim/copy.h"

namespace AscendC {

struct DataCopyParams {
    __aicore__ DataCopyParams() {}
    __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                              const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn)
    {
    }
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    union {
        uint16_t srcGap = 0;
        uint16_t srcStride;
    };
    union {
        uint16_t dstGap = 0;
        uint16_t dstStride;
    };
};

struct DataCopyPadParams {
    __aicore__ DataCopyPadParams() {}
    __aicore__ DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                 const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

namespace sim {
constexpr uint64_t BLOCK = 32U;

// Burst i of a DataCopyParams copy: elements [first, first + count) of each side.
template <typename T>
struct Bursts {
    uint64_t perBurst;  // elements of one burst
    uint64_t srcStep;   // elements from one burst's start to the next one's, source side
    uint64_t dstStep;
};

template <typename T>
inline Bursts<T> BurstsOf(const DataCopyParams& p)
{
    const uint64_t per = p.blockLen * BLOCK / sizeof(T);
    return {per, per + p.srcStride * BLOCK / sizeof(T), per + p.dstStride * BLOCK / sizeof(T)};
}
}  // namespace sim

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& params)
{
    const sim::Bursts<T> b = sim::BurstsOf<T>(params);
    for (uint64_t i = 0; i < params.blockCount; ++i) {
        sim::GmRead(dst.SimWrite(i * b.dstStep, b.perBurst, "DataCopy GM->UB dst", true, opgen_sim::PIPE_MTE2_),
                    src.SimSpan(i * b.srcStep, b.perBurst, "DataCopy GM->UB src"), params.blockLen * sim::BLOCK);
    }
}

template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params)
{
    const sim::Bursts<T> b = sim::BurstsOf<T>(params);
    for (uint64_t i = 0; i < params.blockCount; ++i) {
        sim::GmWrite(dst.SimSpan(i * b.dstStep, b.perBurst, "DataCopy UB->GM dst"),
                     src.SimRead(i * b.srcStep, b.perBurst, "DataCopy UB->GM src", true, opgen_sim::PIPE_MTE3_),
                     params.blockLen * sim::BLOCK);
    }
}

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params)
{
    const sim::Bursts<T> b = sim::BurstsOf<T>(params);
    for (uint64_t i = 0; i < params.blockCount; ++i) {
        const uint8_t* from = src.SimRead(i * b.srcStep, b.perBurst, "DataCopy UB->UB src");
        std::memmove(dst.SimWrite(i * b.dstStep, b.perBurst, "DataCopy UB->UB dst"), from,
                     params.blockLen * sim::BLOCK);
    }
}

template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyParams& dataCopyParams, const DataCopyPadParams& padParams)
{
    T pad{};
    std::memcpy(&pad, &padParams.paddingValue, sizeof(T) < sizeof(uint64_t) ? sizeof(T) : sizeof(uint64_t));
    DataCopyPad(dst, src,
                DataCopyExtParams(dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                                  dataCopyParams.dstStride, 0U),
                DataCopyPadExtParams<T>(padParams.isPad, padParams.leftPadding, padParams.rightPadding, pad));
}

template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyParams& dataCopyParams)
{
    DataCopyPad(dst, src,
                DataCopyExtParams(dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                                  dataCopyParams.dstStride, 0U));
}

}  // namespace AscendC

#endif  // OPGEN_SIM_COPY_PARAMS_H
