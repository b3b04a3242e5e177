/**
 * asc-devkit include/utils/std/algorithm.h (impl/utils/std/algorithm/max.h, min.h): Std::max / Std::min of two
 * values of possibly different types, as the conditional expression of the two (its common type).
 */
#ifndef OPGEN_SIM_UTILS_STD_ALGORITHM_H
#define OPGEN_SIM_UTILS_STD_ALGORITHM_H

#include "kernel_operator.h"

namespace AscendC {
namespace Std {
template <typename T, typename U>
__aicore__ inline constexpr auto max(const T& src0, const U& src1)
{
    return (src0 > src1) ? src0 : src1;
}
template <typename T, typename U>
__aicore__ inline constexpr auto min(const T& src0, const U& src1)
{
    return (src0 < src1) ? src0 : src1;
}
}  // namespace Std
}  // namespace AscendC

#endif  // OPGEN_SIM_UTILS_STD_ALGORITHM_H
