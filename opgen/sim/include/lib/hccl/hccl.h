/**
 * The Ascend C HCCL client the generated kernels use to reach the HCCL windows, implemented by the twin: the
 * context GetHcclContext<index>() returns is the rank's opgen_sim::HcclGroup, whose windows are GM regions of
 * the world.  Mirrors cannmirror/asc-devkit: include/adv_api/hccl/hccl.h (class Hccl) and hccl_common.h
 * (server type, server config).  InitV2 and SetCcTilingV2 hold the kernel to the contract of the real AICPU
 * implementation (impl/adv_api/detail/hccl/impl/platform_v220/hccl_aicpu.h): InitV2 needs the init tiling the
 * host's Mc2CcTilingConfig wrote (the device reads the debug mode, queue count and device type from it, and
 * the device type decides how the context is read), SetCcTilingV2 needs InitV2 first and a cc tiling whose
 * opType is a valid HcclCMDType.  Stricter than the device where the device would go on with garbage: a
 * missing tiling, an init tiling GetTiling never wrote (version), or an offset the init tiling does not list.
 * On __NPU_ARCH__ 3510 GetWindowsInAddr faults: the real one always returns 0 there (platform_v310).
 * Atlas A3's context is HcclContextDef::HcclOpResParam with the ranks' windowsExp (of the product's size, the
 * job's `exp_window`); on every other product the context has no windowsExp.
 */
#ifndef OPGEN_TEST_LIB_HCCL_HCCL_H
#define OPGEN_TEST_LIB_HCCL_HCCL_H

#include "kernel_operator.h"
#include "opgen_sim/hccl_tiling_msg.h"

namespace AscendC {
// What a kernel may read of the context GetHcclContext returns: on __NPU_ARCH__ 3510 the head and the windowsIn /
// windowsOut lists (hccl_inner_def.h); on 2201 the head only (an Atlas A3 context is an HcclOpResParam past it).
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
using HcclCombineOpParam = opgen_sim::HcclContextV310;
#else
using HcclCombineOpParam = opgen_sim::HcclContextHead;
#endif
// Atlas A3's context (hccl_inner_def.h declares it for every arch): only a product whose context it is
// (ProductFacts.exp_window) fills its fields past the head; elsewhere they read what the arch's context holds there.
namespace HcclContextDef {
using HcclRankRelationResV2 = opgen_sim::HcclRankRelationResV2;
using RemoteResPtr = opgen_sim::RemoteResPtr;
using HcclOpResParam = opgen_sim::HcclOpResContext;
}  // namespace HcclContextDef

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
        if (initTiling == nullptr) {
            opgen_sim::Raise("Hccl::InitV2: Call InitV2 failed, ensure initTiling is not nullptr!");
        }
        init_ = static_cast<const opgen_sim::Mc2InitTilingInner*>(initTiling);
        if (init_->version != opgen_sim::INIT_TILING_VERSION) {
            opgen_sim::Raise("Hccl::InitV2: the init tiling has version %u, not %u: Mc2CcTilingConfig::GetTiling "
                             "did not write it", init_->version, opgen_sim::INIT_TILING_VERSION);
        }
        group_ = opgen_sim::HcclGroup::Of(context);
        if (group_ == nullptr) {
            opgen_sim::Raise("Hccl::InitV2: the context is not one GetHcclContext returned");
        }
    }
    __aicore__ int32_t SetCcTilingV2(uint64_t offset)
    {
        if (init_ == nullptr) {
            opgen_sim::Raise("Hccl::SetCcTilingV2: Call SetCcTiling failed, ensure Hccl::InitV2 func has been "
                             "called successfully!");
        }
        bool listed = false;
        for (uint32_t i = 0; i < init_->mc2HcommCnt && i < opgen_sim::MAX_CC_TILING_NUM; ++i) {
            listed = listed || init_->offset[i] == offset;
        }
        if (!listed) {
            opgen_sim::Raise("Hccl::SetCcTilingV2(%llu): no cc tiling the host built lies at this offset from the "
                             "init tiling (%u listed)", static_cast<unsigned long long>(offset), init_->mc2HcommCnt);
        }
        const auto* cc = reinterpret_cast<const opgen_sim::Mc2CcTilingInner*>(
            reinterpret_cast<const uint8_t*>(init_) + offset);
        if (cc->opType == 0U || cc->opType >= opgen_sim::HCCL_CMD_ALL) {
            opgen_sim::Raise("Hccl::SetCcTilingV2: Call SetCcTiling failed, ensure cmdType is valid (opType %u)",
                             cc->opType);
        }
        return 0;
    }
    __aicore__ GM_ADDR GetWindowsInAddr(uint32_t rankId)
    {
        Ready("GetWindowsInAddr");
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        // The device's AICPU client returns 0 here (impl/adv_api/detail/hccl/impl/platform_v310/hccl_aicpu.h): a
        // kernel that used the address would write to GM 0. The twin stops at the call instead.
        opgen_sim::Raise("Hccl::GetWindowsInAddr(%u): on __NPU_ARCH__ 3510 the AICPU client always returns 0; "
                         "read windowsIn[] of the HCCL context (HcclCombineOpParam)", rankId);
#endif
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
    const opgen_sim::Mc2InitTilingInner* init_ = nullptr;
};
}  // namespace AscendC

#endif  // OPGEN_TEST_LIB_HCCL_HCCL_H
