/**
 * The Ascend C HCCL client the generated kernels use to reach the HCCL windows, implemented by the twin: the
 * context GetHcclContext<index>() returns is the rank's opgen_sim::HcclGroup, whose windows are GM regions of
 * the world.  Mirrors cannmirror/asc-devkit: include/adv_api/hccl/hccl.h (class Hccl) and hccl_common.h
 * (server type, server config).
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

inline constexpr HcclServerConfig DEFAULT_CFG = {CoreType::DEFAULT, 0};

template <HcclServerType serverType = HcclServerType::HCCL_SERVER_TYPE_AICPU, const auto& config = DEFAULT_CFG>
class Hccl {
public:
    __aicore__ void InitV2(GM_ADDR context, const void* initTiling)
    {
        (void)initTiling;  // window access only: no task for the AICPU server
        group_ = reinterpret_cast<opgen_sim::HcclGroup*>(context);
        if (group_ == nullptr || group_->magic != opgen_sim::HcclGroup{}.magic) {
            opgen_sim::Raise("Hccl::InitV2: the context is not one GetHcclContext returned");
        }
    }
    __aicore__ int32_t SetCcTilingV2(uint64_t offset)
    {
        (void)offset;
        return 0;
    }
    __aicore__ GM_ADDR GetWindowsInAddr(uint32_t rankId)
    {
        Ready("GetWindowsInAddr");
        if (rankId >= group_->windows.size()) {
            opgen_sim::Raise("Hccl::GetWindowsInAddr(%u): the group has %zu ranks", rankId, group_->windows.size());
        }
        return group_->windows[rankId];
    }
    __aicore__ uint32_t GetRankId()
    {
        Ready("GetRankId");
        return group_->rankId;
    }
    __aicore__ uint32_t GetRankDim()
    {
        Ready("GetRankDim");
        return static_cast<uint32_t>(group_->windows.size());
    }

private:
    void Ready(const char* what) const
    {
        if (group_ == nullptr) {
            opgen_sim::Raise("Hccl::%s before InitV2", what);
        }
    }
    opgen_sim::HcclGroup* group_ = nullptr;
};
}  // namespace AscendC

#endif  // OPGEN_TEST_LIB_HCCL_HCCL_H
