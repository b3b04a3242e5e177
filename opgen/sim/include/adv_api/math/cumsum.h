/**
 * asc-devkit include/adv_api/math/cumsum.h and cumsum_utils.h: CumSumConfig / CumSumInfo, and CumSum over
 * `outter` rows of `inner` elements (32-byte aligned): along a row (isLastAxis) or down the columns, each addition
 * in order and rounded to T (CUMSUM_ALGORITHM_LINEBYLINE); outputLastRow also writes the last row to lastRowTensor.
 */
#ifndef OPGEN_SIM_ADV_API_MATH_CUMSUM_H
#define OPGEN_SIM_ADV_API_MATH_CUMSUM_H

#include "kernel_operator.h"

namespace AscendC {
enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
    CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};  // 32-byte aligned
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, true};

template <typename T, const CumSumConfig& config = defaultCumSumConfig>
__aicore__ inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                              const CumSumInfo& info)
{
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "CumSum adds half / float");
    static_assert(config.algorithm == CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE,
                  "the twin adds line by line only (CUMSUM_ALGORITHM_LINEBYLINE)");
    if (info.outter < 1U || info.inner < 1U || (static_cast<uint64_t>(info.inner) * sizeof(T)) % 32U != 0U) {
        opgen_sim::Raise("CumSum: CumSumInfo {outter %u, inner %u}: need both >= 1 and inner * %zu bytes a multiple "
                         "of 32", info.outter, info.inner, sizeof(T));
    }
    const uint64_t n = static_cast<uint64_t>(info.outter) * info.inner;
    opgen_sim::CountVectorCount(n, sizeof(T));  // one call
    const uint8_t* s = srcTensor.SimRead(0U, n, "CumSum src");
    std::vector<T> v(n);
    std::memcpy(v.data(), s, n * sizeof(T));
    for (uint64_t o = 0U; o < info.outter; ++o) {
        for (uint64_t i = 0U; i < info.inner; ++i) {
            const uint64_t k = o * info.inner + i;
            const uint64_t prev = config.isLastAxis ? (i == 0U ? k : k - 1U) : (o == 0U ? k : k - info.inner);
            if (prev != k) {
                v[k] = sim::FromF<T>(sim::ToF(v[prev]) + sim::ToF(v[k]));
            }
        }
    }
    std::memcpy(dstTensor.SimWrite(0U, n, "CumSum dst"), v.data(), n * sizeof(T));
    if constexpr (config.outputLastRow) {
        std::memcpy(lastRowTensor.SimWrite(0U, info.inner, "CumSum lastRowTensor"),
                    v.data() + (info.outter - 1U) * info.inner, info.inner * sizeof(T));
    }
}
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
__aicore__ inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                              LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& info)
{
    (void)sharedTmpBuffer.SimSpan(0U, 1U, "CumSum sharedTmpBuffer");
    CumSum<T, config>(dstTensor, lastRowTensor, srcTensor, info);
}
}  // namespace AscendC

#endif  // OPGEN_SIM_ADV_API_MATH_CUMSUM_H
