/**
 * asc-devkit lib/matmul_intf.h, which the hand-written CombineV2 entries include for kernels that do not call
 * Matmul on the vector cores. The twin runs vector cores only (no cube unit): it declares no Matmul, so a kernel that
 * does use one fails to compile on the twin instead of running without it. What the real header brings along that
 * the MoE kernels do call: AscendC::CeilDiv of two uint16_t (impl/adv_api/detail/matmul/utils/batch_matmul_utils.h,
 * reached through matmul_utils.h; the A2 combine divides task counts with it, so its arguments narrow to 16 bits).
 */
#ifndef OPGEN_SIM_LIB_MATMUL_INTF_H
#define OPGEN_SIM_LIB_MATMUL_INTF_H
#include "kernel_operator.h"

namespace AscendC {
__aicore__ inline uint16_t CeilDiv(uint16_t num1, uint16_t num2)
{
    if (num2 == 0U) {
        opgen_sim::Raise("CeilDiv(%u, 0) (matmul utils): division by zero", num1);
    }
    return static_cast<uint16_t>((num1 + num2 - 1) / num2);
}
}  // namespace AscendC
#endif  // OPGEN_SIM_LIB_MATMUL_INTF_H
