/**
 * Declarations only of the Ascend C HCCL client the generated kernels use to reach the HCCL windows.
 * Mirrors cannmirror/asc-devkit: include/adv_api/hccl/hccl.h (class Hccl) and hccl_common.h (server type,
 * server config).
 */
#ifndef OPGEN_TEST_LIB_HCCL_HCCL_H
#define OPGEN_TEST_LIB_HCCL_HCCL_H

#include "kernel_operator.h"

namespace AscendC {
enum HcclServerType : uint8_t {
    HCCL_SERVER_TYPE_AICPU = 0,
    HCCL_SERVER_TYPE_END,
};

enum class CoreType : uint8_t {
    DEFAULT = 0,
    ON_AIV,
    ON_AIC,
};

struct HcclServerConfig {
    CoreType type;
    int64_t blockId;
};

static constexpr HcclServerConfig DEFAULT_CFG = {CoreType::DEFAULT, 0};

template <HcclServerType serverType = HcclServerType::HCCL_SERVER_TYPE_AICPU, const auto& config = DEFAULT_CFG>
class Hccl {
public:
    __aicore__ void InitV2(GM_ADDR context, const void* initTiling);
    __aicore__ int32_t SetCcTilingV2(uint64_t offset);
    __aicore__ GM_ADDR GetWindowsInAddr(uint32_t rankId);
    __aicore__ GM_ADDR GetWindowsOutAddr(uint32_t rankId);
    __aicore__ uint32_t GetRankId();
    __aicore__ uint32_t GetRankDim();
};
}  // namespace AscendC

#endif  // OPGEN_TEST_LIB_HCCL_HCCL_H
