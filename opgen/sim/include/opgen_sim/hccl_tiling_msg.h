/**
 * Twin only: the layouts behind the opaque HCCL tilings (Mc2InitTiling, Mc2CcTiling), as asc-devkit defines them
 * (include/adv_api/hccl/internal/hccl_tiling_msg.h: Mc2InitTilingInner, Mc2CcTilingInner), shared by the host's
 * Mc2CcTilingConfig (tiling/hccl/hccl_tiling.h), which writes them, and the kernel's Hccl (lib/hccl/hccl.h),
 * which reads them.
 */
#ifndef OPGEN_SIM_HCCL_TILING_MSG_H
#define OPGEN_SIM_HCCL_TILING_MSG_H

#include <cstdint>

namespace opgen_sim {
constexpr uint32_t INIT_TILING_VERSION = 100U;
constexpr uint32_t MAX_CC_TILING_NUM = 8U;
constexpr uint32_t HCCL_GROUP_NAME_SIZE = 128U;
constexpr uint32_t HCCL_ALG_CONFIG_SIZE = 128U;
constexpr uint32_t HCCL_CMD_ALL = 21U;  // HcclCMDType::HCCL_CMD_ALL (hccl_common.h): valid types are 1 .. 20
constexpr uint32_t HCCL_CMD_BATCH_WRITE = 18U;  // HcclCMDType::HCCL_CMD_BATCH_WRITE

struct Mc2InitTilingInner {
    uint32_t version;
    uint32_t mc2HcommCnt;
    uint32_t offset[MAX_CC_TILING_NUM];
    uint8_t debugMode;
    uint8_t preparePosition;
    uint16_t queueNum;
    uint16_t commBlockNum;
    uint8_t devType;
    char reserved[17];
};

struct Mc2CcTilingInner {
    uint8_t skipLocalRankCopy;
    uint8_t skipBufferWindowCopy;
    uint8_t stepSize;
    uint8_t version;
    char reserved[9];
    uint8_t commEngine;
    uint8_t srcDataType;
    uint8_t dstDataType;
    char groupName[HCCL_GROUP_NAME_SIZE];
    char algConfig[HCCL_ALG_CONFIG_SIZE];
    uint32_t opType;
    uint32_t reduceType;
    char reserved2[232];
};
}  // namespace opgen_sim

#endif  // OPGEN_SIM_HCCL_TILING_MSG_H
