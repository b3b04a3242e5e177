/**
 * asc-devkit lib/matmul_intf.h, which the hand-written CombineV2 entries include for kernels that do not call it on
 * the vector cores. The twin runs vector cores only (no cube unit): it declares no Matmul, so a kernel that does
 * use one fails to compile on the twin instead of running without it.
 */
#ifndef OPGEN_SIM_LIB_MATMUL_INTF_H
#define OPGEN_SIM_LIB_MATMUL_INTF_H
#include "kernel_operator.h"
#endif  // OPGEN_SIM_LIB_MATMUL_INTF_H
