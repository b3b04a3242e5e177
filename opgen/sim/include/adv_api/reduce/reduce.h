/**
 * asc-devkit include/adv_api/reduce/reduce.h ReduceSum (patterns of reduce_common.h Pattern::Reduce): on
 * __NPU_ARCH__ 3510 (impl/adv_api/detail/reduce/reduce_sum/reduce_sum_3510_impl.h) the AR and RA patterns of a
 * two-dimensional shape {srcShape[0], srcShape[1]}, rows packed at the stride srcShape[1] (srcInnerPad is not read
 * there: the aligned path addresses row i at i * srcShape[1], the unaligned one loads rows back to back), the result
 * packed into dst. AR adds each row's srcShape[1] elements (dst: srcShape[0] values), RA each column's srcShape[0]
 * (dst: srcShape[1] values). The additions are register Add / ReduceSum, whose order no document gives: the twin
 * adds only float rows whose sum every order gives alike (sim::SumIsExact) and faults on any other; integer sums wrap.
 * isReuseSource lets the device overwrite src: the twin leaves src's bytes and marks nothing, it never reads them
 * for the caller. The form without sharedTmpBuffer takes its scratch from the UB the pipe left free.
 */
#ifndef OPGEN_SIM_ADV_API_REDUCE_REDUCE_H
#define OPGEN_SIM_ADV_API_REDUCE_REDUCE_H

#include <type_traits>
#include <vector>

#include "kernel_operator.h"
#include "adv_api/reduce/sum.h"

namespace AscendC {
namespace Pattern {
namespace Reduce {
// include/adv_api/reduce/reduce_common.h: each letter a dimension, A kept, R reduced
struct AR {};
struct RA {};
}  // namespace Reduce
}  // namespace Pattern

namespace sim {
template <class T, class pattern>
inline void ReduceSum2D(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t srcShape[])
{
    static_assert(std::is_same<pattern, Pattern::Reduce::AR>::value || std::is_same<pattern, Pattern::Reduce::RA>::value,
                  "ReduceSum only support AR and RA pattern on current device!");
    static_assert(std::is_same<T, float>::value || std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
                      std::is_same<T, int64_t>::value || std::is_same<T, uint64_t>::value,
                  "ReduceSum only support int32_t/uint32_t/float/int64_t/uint64_t data type on current device!");
    constexpr bool ar = std::is_same<pattern, Pattern::Reduce::AR>::value;
    const uint64_t rows = srcShape[0];
    const uint64_t cols = srcShape[1];
    if (rows < 1U || cols < 1U) {
        opgen_sim::Raise("ReduceSum: srcShape {%llu, %llu}: both dimensions need at least one element",
                         static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols));
    }
    const uint64_t outs = ar ? rows : cols;
    const uint64_t len = ar ? cols : rows;
    opgen_sim::CountVectorCount(rows * cols, sizeof(T));  // one call
    const uint8_t* s = src.SimRead(0U, rows * cols, "ReduceSum src");
    std::vector<T> result(outs);
    for (uint64_t o = 0U; o < outs; ++o) {
        std::vector<T> v(len);
        for (uint64_t i = 0U; i < len; ++i) {
            const uint64_t k = ar ? o * cols + i : i * cols + o;
            std::memcpy(&v[i], s + k * sizeof(T), sizeof(T));
        }
        if constexpr (std::is_same<T, float>::value) {
            if (!SumIsExact<T>(v)) {
                opgen_sim::Raise("ReduceSum (__NPU_ARCH__ 3510): %s %llu of %llu float values rounds differently in "
                                 "different orders of addition, and the order of Reg::Add / Reg::ReduceSum is not "
                                 "documented", ar ? "row" : "column", static_cast<unsigned long long>(o),
                                 static_cast<unsigned long long>(len));
            }
            double sum = 0.0;  // exact: every partial sum is a float (SumIsExact)
            for (const T& x : v) {
                sum += static_cast<double>(x);
            }
            result[o] = static_cast<T>(sum);
        } else {
            using U = std::make_unsigned_t<T>;
            U sum = 0U;
            for (const T& x : v) {
                sum = static_cast<U>(sum + static_cast<U>(x));
            }
            result[o] = static_cast<T>(sum);
        }
    }
    std::memcpy(dst.SimWrite(0U, outs, "ReduceSum dst"), result.data(), outs * sizeof(T));
}
}  // namespace sim

template <class T, class pattern, bool isReuseSource = false>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                                 const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad)
{
    (void)srcInnerPad;
    (void)sharedTmpBuffer.SimSpan(0U, 1U, "ReduceSum sharedTmpBuffer");
    sim::ReduceSum2D<T, pattern>(dstTensor, srcTensor, srcShape);
}

template <class T, class pattern, bool isReuseSource = false>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                                 const uint32_t srcShape[], bool srcInnerPad)
{
    (void)srcInnerPad;
    sim::ReduceSum2D<T, pattern>(dstTensor, srcTensor, srcShape);
}
}  // namespace AscendC

#endif  // OPGEN_SIM_ADV_API_REDUCE_REDUCE_H
