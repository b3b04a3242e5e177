/**
 * asc-devkit include/adv_api/reduce/sum.h: Sum over the last axis, `outter` rows of `inner` elements (32-byte
 * aligned), the first `n` of each row added (sum_utils.h SumParams). On __NPU_ARCH__ 2201 (impl/adv_api/detail/
 * reduce/sum/sum_common_impl.h) a row is added by vcadd in counter mode: each 256-byte repeat's lanes as a tree of
 * adjacent pairs, then those repeat sums the same way until one is left (opgen_sim/vec_level0.h CounterSum); each
 * addition rounded to T. On __NPU_ARCH__ 3510 (sum_3510_impl.h) each repeat is one register ReduceSum, whose
 * order of additions no document gives: the twin adds only rows whose sum every order gives alike (SumIsExact), and
 * faults on any other. The form without sharedTmpBuffer takes its scratch from the UB the pipe left free.
 */
#ifndef OPGEN_SIM_ADV_API_REDUCE_SUM_H
#define OPGEN_SIM_ADV_API_REDUCE_SUM_H

#include <climits>
#include <cmath>

#include "kernel_operator.h"

namespace AscendC {
struct SumParams {
    uint32_t outter = 1;
    uint32_t inner;  // n rounded up to 32 bytes
    uint32_t n;      // elements of a row to add
};

namespace sim {
// Whether every order of adding `v` in T gives the same sum: each value a multiple of the smallest value's lowest
// set bit 2^e, and the sum of their magnitudes under 2^(mantissa bits) * 2^e, so that every partial sum is exact.
// (A non-finite value makes the result the same in every order too.)
template <typename T>
inline bool SumIsExact(const std::vector<T>& v)
{
    constexpr int DIGITS = std::is_same<T, float>::value ? 24 : 11;
    int emin = INT32_MAX;
    for (const T& x : v) {
        const double d = static_cast<double>(ToF(x));
        if (!std::isfinite(d)) {
            return true;
        }
        if (d == 0.0) {
            continue;
        }
        int e = 0;
        double m = std::ldexp(std::frexp(std::fabs(d), &e), DIGITS);  // integer mantissa: |d| = m * 2^(e - DIGITS)
        e -= DIGITS;
        while (std::fmod(m, 2.0) == 0.0) {
            m /= 2.0;
            ++e;
        }
        emin = std::min(emin, e);
    }
    if (emin == INT32_MAX) {
        return true;
    }
    long double total = 0.0L;  // in units of 2^emin: exact while under 2^64
    for (const T& x : v) {
        total += std::ldexp(std::fabs(static_cast<long double>(ToF(x))), -emin);
        if (total >= std::ldexp(1.0L, DIGITS)) {
            return false;
        }
    }
    return true;
}

template <typename T>
inline void SumRows(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SumParams& p, uint64_t tmpBytes)
{
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "Sum adds half / float");
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    // 3510 reads `inner` only as the stride of row i's LoadAlign (sum_3510_impl.h SumForOneRepeatTime /
    // ReduceSumNextN: srcUb + i * inner), so the device needs it 32-byte aligned only when there is a second row;
    // SumCheckParams' assertion of it is CPU-debug only (ASCENDC_ASSERT is empty in a device build,
    // impl/basic_api/kernel_log.h), and the real Ascend 950 DispatchTeardown sums one row of 4 (SyncCntOnCore)
    const bool innerAligned = p.outter <= 1U || (static_cast<uint64_t>(p.inner) * sizeof(T)) % 32U == 0U;
#else
    const bool innerAligned = (static_cast<uint64_t>(p.inner) * sizeof(T)) % 32U == 0U;
#endif
    if (p.n < 1U || p.n > p.inner || !innerAligned || p.outter < 1U) {
        opgen_sim::Raise("Sum: SumParams {outter %u, inner %u, n %u}: need outter >= 1, 1 <= n <= inner and inner * "
                         "%zu bytes a multiple of 32 (on 3510: when outter > 1)", p.outter, p.inner, p.n, sizeof(T));
    }
    constexpr uint64_t PER_REPEAT = 256U / sizeof(T);
    const uint64_t repeats = (p.n + PER_REPEAT - 1U) / PER_REPEAT;
    if (repeats > 1U && tmpBytes < repeats * sizeof(T)) {
        opgen_sim::Raise("Sum: sharedTmpBuffer of %llu bytes, the %llu repeat sums of a row need %llu",
                         static_cast<unsigned long long>(tmpBytes), static_cast<unsigned long long>(repeats),
                         static_cast<unsigned long long>(repeats * sizeof(T)));
    }
    opgen_sim::CountVector(p.outter * repeats, static_cast<uint64_t>(p.outter) * p.n, sizeof(T));  // one call
    const uint8_t* s = src.SimRead(0U, static_cast<uint64_t>(p.outter - 1U) * p.inner + p.n, "Sum src");
    uint8_t* d = dst.SimWrite(0U, p.outter, "Sum dst");
    for (uint64_t row = 0U; row < p.outter; ++row) {
        std::vector<T> v(p.n);
        std::memcpy(v.data(), s + row * p.inner * sizeof(T), p.n * sizeof(T));
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        // 3510 adds each 256-byte repeat with the register ReduceSum, whose order of additions no document gives
        // (impl/adv_api/detail/reduce/sum/sum_3510_impl.h): the twin sums only rows every order adds alike
        if (!SumIsExact<T>(v)) {
            opgen_sim::Raise("Sum (__NPU_ARCH__ 3510): row %llu of %u %s values rounds differently in different orders "
                             "of addition, and the order of Reg::ReduceSum is not documented",
                             static_cast<unsigned long long>(row), p.n, opgen_sim::TypeName<T>());
        }
#endif
        Store<T>(d, row, CounterSum<T>(std::move(v)));
    }
    SetMaskNorm();
    ResetMask();
}
}  // namespace sim

template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const SumParams& sumParams)
{
    sim::SumRows(dstTensor, srcTensor, sumParams,
                 sharedTmpBuffer.SimEnd() - sharedTmpBuffer.SimOffset());
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SumParams& sumParams)
{
    sim::SumRows(dstTensor, srcTensor, sumParams, ~0ULL);
}
}  // namespace AscendC

#endif  // OPGEN_SIM_ADV_API_REDUCE_SUM_H
