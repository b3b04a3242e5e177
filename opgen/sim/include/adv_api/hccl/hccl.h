/**
 * asc-devkit include/adv_api/hccl/hccl.h, where asc-devkit >= 9 installs the HCCL client: the twin's lib/hccl/hccl.h.
 */
#ifndef OPGEN_SIM_ADV_API_HCCL_HCCL_H
#define OPGEN_SIM_ADV_API_HCCL_HCCL_H
#include "lib/hccl/hccl.h"
#endif  // OPGEN_SIM_ADV_API_HCCL_HCCL_H
