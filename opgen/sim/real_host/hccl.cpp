/**
 * The HCCL host facts the real tilings ask for, and asc-devkit's Mc2CcTilingConfig.
 *
 * Mc2Hcom::MC2HcomTopology (ops-transformer mc2/common/utils/mc2_hcom_topo_info.h) is, in CANN, a dlopen of
 * libhccl_fwk; the unit tests replace it with mc2_hcom_topology_mocker.  The twin answers from the world the job
 * describes: every rank belongs to the HCCL groups the op's group attributes name, and each reports its CCL buffer
 * (HcclGetHcclBuffer's size / 2, the HCCL_BUFFSIZE of one direction) as the job's window bytes.  An empty group name
 * finds no communicator, as HcclCommGetHandleWithName does; the open-source build then asks graph mode's
 * HcomTopoInfo, which a host without a graph has not filled, and falls back to HCCL_BUFFSIZE
 * (// code: mc2/common/utils/mc2_hcom_topo_info.cpp CommGetGroupLocalWindowSize, BUILD_OPEN_PROJECT).
 * Rank counts, topology types and buffer addresses are not modelled: those calls fault.
 *
 * AscendC::Mc2CcTilingConfig: the checks and layouts of asc-devkit impl/adv_api/tiling/hccl/hccl_tiling.cpp; the
 * device type it asks the runtime for (rtGetSocVersion) is the SoC the request names.
 */
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "host_state.h"
#include "include/adv_api/hccl/hccl_common.h"
#include "include/adv_api/hccl/hccl_tiling.h"
#include "include/adv_api/hccl/internal/hccl_tiling_msg.h"
#include "mc2_hcom_topo_info.h"
#include "mc2_tiling_utils.h"
#include "tiling/platform/platform_ascendc.h"

namespace {

int g_communicator;  // the address every found group's HcclComm handle carries

[[noreturn]] void NotModelled(const std::string &call, const char *group)
{
    throw opgen_sim_real::HostFault("opgen sim: " + call + "(\"" + (group == nullptr ? "" : group) +
                                    "\"): the twin's HCCL does not model rank counts, topology types or buffer "
                                    "addresses on the host");
}

// ASCENDC_HOST_ASSERT's error line (impl/adv_api/detail/host_log.h)
uint32_t Reject(const std::string &message)
{
    opgen_sim_real::Call &call = opgen_sim_real::CurrentCall();
    if (call.active) {
        call.log.push_back({'E', message});
    }
    return EXIT_FAILURE;
}

}  // namespace

namespace Mc2Hcom {

HcclResult MC2HcomTopology::CommGetCclBufferSizeByGroup(const char *group, uint64_t *cclBufferSize, HcclComm *hcclComm)
{
    if (group == nullptr || cclBufferSize == nullptr || hcclComm == nullptr) {
        Reject("group, cclBufferSize, hcclComm: nullptr");
        return HCCL_E_PTR;
    }
    if (group[0] == '\0') {
        *hcclComm = nullptr;
        return HCCL_SUCCESS;
    }
    *hcclComm = &g_communicator;
    *cclBufferSize = opgen_sim_real::CurrentCall().cclBufferBytes;
    return HCCL_SUCCESS;
}

HcclResult MC2HcomTopology::CommGetGroupLocalWindowSize(const char *group, uint64_t *cclBufferSize)
{
    (void)group;
    *cclBufferSize = mc2tiling::Mc2TilingUtils::GetMaxWindowSize();
    return HCCL_SUCCESS;
}

HcclResult MC2HcomTopology::CommGetInstSizeByGroup(const char *group, uint32_t *rankNum)
{
    (void)rankNum;
    NotModelled("MC2HcomTopology::CommGetInstSizeByGroup", group);
}

HcclResult MC2HcomTopology::TryGetGroupTopoType(const char *group, uint32_t *topoType)
{
    (void)topoType;
    NotModelled("MC2HcomTopology::TryGetGroupTopoType", group);
}

HcclResult MC2HcomTopology::CommGetHcclBufferByGroup(const char *group, void **buffer, uint64_t *size)
{
    (void)buffer, (void)size;
    NotModelled("MC2HcomTopology::CommGetHcclBufferByGroup", group);
}

}  // namespace Mc2Hcom

namespace AscendC {

using namespace HcclApi;  // the inner layouts (include/adv_api/hccl/internal/hccl_tiling_msg.h)

Mc2CcTilingConfig::Mc2CcTilingConfig(const std::string &groupName, uint32_t opType, const std::string &algConfig,
                                     uint32_t reduceType, uint8_t dstDataType, uint8_t srcDataType, uint8_t commEngine)
{
    impl_.groupName_ = groupName;
    impl_.opType_ = opType;
    impl_.algConfig_ = algConfig;
    impl_.reduceType_ = reduceType;
    impl_.srcDataType_ = srcDataType;
    impl_.dstDataType_ = dstDataType;
    impl_.commEngine_ = commEngine;
}

Mc2CcTilingConfig::~Mc2CcTilingConfig() = default;

uint32_t Mc2CcTilingConfig::GetTiling(::Mc2InitTiling &tiling)
{
    const bool reduce = impl_.opType_ == static_cast<uint8_t>(HcclCMDType::HCCL_CMD_ALLREDUCE) ||
                        impl_.opType_ == static_cast<uint8_t>(HcclCMDType::HCCL_CMD_REDUCE) ||
                        impl_.opType_ == static_cast<uint8_t>(HcclCMDType::HCCL_CMD_REDUCE_SCATTER);
    if (reduce && impl_.reduceType_ >= HCCL_REDUCE_RESERVED) {
        return Reject("when opType(" + std::to_string(impl_.opType_) + ") is reduce, reduceType must be less than " +
                      std::to_string(static_cast<uint32_t>(HCCL_REDUCE_RESERVED)) + ".");
    }
    impl_.initTilingAddr_ = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&tiling));
    auto *inner = reinterpret_cast<Mc2InitTilingInner *>(&tiling);
    inner->version = INIT_TILING_VERSION;
    inner->mc2HcommCnt = 0;
    inner->debugMode = impl_.debugMode_;
    inner->preparePosition = 0;
    inner->queueNum = impl_.queueNum_;
    inner->commBlockNum = impl_.commBlockNum_;
    for (uint32_t i = 0; i < MAX_CC_TILING_NUM; ++i) {
        inner->offset[i] = 0;
    }
    // SetDevType: the runtime's SoC version; only an Atlas A2 (Ascend910B...) names a device type
    const bool a2 = opgen_sim_real::CurrentCall().socVersion.find("Ascend910B") != std::string::npos;
    inner->devType = a2 ? static_cast<uint8_t>(platform_ascendc::SocVersion::ASCEND910B) : UINT8_MAX;
    return EXIT_SUCCESS;
}

uint32_t Mc2CcTilingConfig::GetTiling(::Mc2CcTiling &tiling)
{
    if (impl_.initTilingAddr_ == 0U) {
        return Reject("must be set Mc2InitTiling first.");
    }
    if (impl_.groupName_.length() > GROUP_NAME_SIZE) {
        return Reject("groupName(" + impl_.groupName_ + ") must be less than or equal " +
                      std::to_string(GROUP_NAME_SIZE) + ".");
    }
    if (impl_.algConfig_.length() > ALG_CONFIG_SIZE) {
        return Reject("algConfig(" + impl_.algConfig_ + ") must be less than or equal " +
                      std::to_string(ALG_CONFIG_SIZE) + ".");
    }
    const uint32_t all = static_cast<uint8_t>(HcclCMDType::HCCL_CMD_ALL);
    if (impl_.opType_ == 0U || impl_.opType_ >= all) {
        return Reject("opType(" + std::to_string(impl_.opType_) + ") must be less than " + std::to_string(all) +
                      ", and not 0.");
    }
    if (impl_.reduceType_ >= HCCL_REDUCE_RESERVED) {
        return Reject("reduceType(" + std::to_string(impl_.reduceType_) + ") must be less than " +
                      std::to_string(static_cast<uint32_t>(HCCL_REDUCE_RESERVED)) + ".");
    }
    if (impl_.dstDataType_ >= HCCL_DATA_TYPE_RESERVED || impl_.srcDataType_ >= HCCL_DATA_TYPE_RESERVED) {
        return Reject("dstDataType(" + std::to_string(impl_.dstDataType_) + ") / srcDataType(" +
                      std::to_string(impl_.srcDataType_) + ") must be less than " +
                      std::to_string(static_cast<uint32_t>(HCCL_DATA_TYPE_RESERVED)) + ".");
    }
    // strcpy_s into the fixed fields: a name that fills a field leaves no room for its NUL
    if (impl_.groupName_.length() >= sizeof(Mc2CcTilingInner::groupName)) {
        return Reject("groupName(" + impl_.groupName_ + ") copy failed.");
    }
    if (impl_.algConfig_.length() >= sizeof(Mc2CcTilingInner::algConfig)) {
        return Reject("algConfig(" + impl_.algConfig_ + ") copy failed.");
    }
    auto *inner = reinterpret_cast<Mc2CcTilingInner *>(&tiling);
    inner->skipLocalRankCopy = impl_.skipLocalRankCopy_;
    inner->skipBufferWindowCopy = impl_.skipBufferWindowCopy_;
    inner->stepSize = impl_.stepSize_;
    inner->version = 1U;
    std::memset(inner->reserved, 0, sizeof(inner->reserved));
    std::memset(inner->groupName, 0, sizeof(inner->groupName));
    std::memcpy(inner->groupName, impl_.groupName_.c_str(), impl_.groupName_.size());
    std::memset(inner->algConfig, 0, sizeof(inner->algConfig));
    std::memcpy(inner->algConfig, impl_.algConfig_.c_str(), impl_.algConfig_.size());
    inner->opType = impl_.opType_;
    inner->reduceType = impl_.reduceType_;
    inner->srcDataType = impl_.srcDataType_;
    inner->dstDataType = impl_.dstDataType_;
    inner->commEngine = impl_.commEngine_;
    // UpdateMc2InitTiling: the init tiling lists this cc tiling's offset from it
    auto *init = reinterpret_cast<Mc2InitTilingInner *>(static_cast<uintptr_t>(impl_.initTilingAddr_));
    if (init->mc2HcommCnt >= MAX_CC_TILING_NUM) {
        return Reject("mc2HcommCnt(" + std::to_string(init->mc2HcommCnt + 1U) + ") must be less than or equal " +
                      std::to_string(MAX_CC_TILING_NUM) + ".");
    }
    init->offset[init->mc2HcommCnt] =
        static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&tiling) - static_cast<uintptr_t>(impl_.initTilingAddr_));
    ++init->mc2HcommCnt;
    return EXIT_SUCCESS;
}

uint32_t Mc2CcTilingConfig::SetCommEngine(uint8_t commEngine)
{
    impl_.commEngine_ = commEngine;
    return EXIT_SUCCESS;
}

}  // namespace AscendC
