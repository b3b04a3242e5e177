/**
 * Small kernel-side helpers the public headers give every kernel (asc-devkit impl/basic_api/utils/
 * kernel_utils_ceil_oom_que.h: Ceil, DivCeil, AlignUp; kernel_utils_constants.h: CACHE_LINE_SIZE;
 * impl/utils/std/type_traits/is_same.h: Std::IsSame; the CPU-debug build's likely / unlikely).
 */
#ifndef OPGEN_SIM_UTILS_H
#define OPGEN_SIM_UTILS_H

#include <cstdint>
#include <type_traits>

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

namespace AscendC {
__aicore__ constexpr inline uint32_t DivCeil(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}
__aicore__ constexpr inline uint32_t AlignUp(uint32_t a, uint32_t b)
{
    return DivCeil(a, b) * b;
}
__aicore__ constexpr inline uint32_t ConstCeil(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}
__aicore__ inline uint32_t Ceil(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}
const uint32_t CACHE_LINE_SIZE = 64;
// impl/basic_api/utils/kernel_utils_constants.h: a vector core's UB bytes per arch
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
const uint32_t TOTAL_UB_SIZE = 248 * 1024;
#else
const uint32_t TOTAL_UB_SIZE = 192 * 1024;
#endif

namespace Std {
template <typename Tp, typename Up>
using IsSame = std::integral_constant<bool, std::is_same<Tp, Up>::value>;
}  // namespace Std
}  // namespace AscendC

#endif  // OPGEN_SIM_UTILS_H
