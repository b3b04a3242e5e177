/**
 * The host's HCCL tiling builder (asc-devkit include/adv_api/hccl/hccl_tiling.h, class Mc2CcTilingConfig), for
 * the twin: the real signatures, and the checks of the real implementation (asc-devkit
 * impl/adv_api/tiling/hccl/hccl_tiling.cpp), so a tiling the real builder rejects fails here too: the cc tiling
 * needs the init tiling first, a group name and an algConfig of at most 128 bytes, an opType in (0, HCCL_CMD_ALL)
 * and at most 8 cc tilings per init tiling. Failures return EXIT_FAILURE (1) and log an error, as the real
 * ASCENDC_HOST_ASSERT does. The twin reports no device type (devType 0xFF: what the real builder writes for any
 * SoC but Ascend910B, whose runtime query the twin does not have).
 */
#ifndef OPGEN_TEST_TILING_HCCL_HCCL_TILING_H
#define OPGEN_TEST_TILING_HCCL_HCCL_TILING_H

#include <cstdint>
#include <cstring>
#include <string>

#include "kernel_tiling/kernel_tiling.h"
#include "log/log.h"
#include "opgen_sim/hccl_tiling_msg.h"

// A failed check: an error line in the host log, then EXIT_FAILURE, as ASCENDC_HOST_ASSERT does.
#define OPGEN_SIM_HCCL_TILING_FAIL(...) (Ops::Base::OpLogE("Mc2CcTilingConfig", __VA_ARGS__), 1U)

namespace AscendC {

class Mc2CcTilingConfig {
public:
    explicit Mc2CcTilingConfig(const std::string& groupName, uint32_t opType, const std::string& algConfig,
                               uint32_t reduceType = 0, uint8_t dstDataType = 0, uint8_t srcDataType = 0,
                               uint8_t commEngine = 0)
        : groupName_(groupName), algConfig_(algConfig), opType_(opType), reduceType_(reduceType),
          dstDataType_(dstDataType), srcDataType_(srcDataType), commEngine_(commEngine)
    {
    }
    virtual ~Mc2CcTilingConfig() = default;

    uint32_t GetTiling(::Mc2InitTiling& tiling)
    {
        if (IsReduce() && reduceType_ >= HCCL_REDUCE_RESERVED) {
            return OPGEN_SIM_HCCL_TILING_FAIL("when opType(%u) is reduce, reduceType must be less than %u.", opType_,
                                              HCCL_REDUCE_RESERVED);
        }
        initTiling_ = &tiling;
        auto* inner = reinterpret_cast<opgen_sim::Mc2InitTilingInner*>(&tiling);
        std::memset(inner, 0, sizeof(*inner));
        inner->version = opgen_sim::INIT_TILING_VERSION;
        inner->devType = UINT8_MAX;
        inner->queueNum = queueNum_;
        inner->commBlockNum = commBlockNum_;
        inner->debugMode = debugMode_;
        return 0U;
    }
    uint32_t GetTiling(::Mc2CcTiling& tiling)
    {
        if (initTiling_ == nullptr) {
            return OPGEN_SIM_HCCL_TILING_FAIL("must be set Mc2InitTiling first.");
        }
        if (groupName_.size() > opgen_sim::HCCL_GROUP_NAME_SIZE) {
            return OPGEN_SIM_HCCL_TILING_FAIL("groupName(%s) must be less than or equal %u.", groupName_.c_str(),
                        opgen_sim::HCCL_GROUP_NAME_SIZE);
        }
        if (algConfig_.size() > opgen_sim::HCCL_ALG_CONFIG_SIZE) {
            return OPGEN_SIM_HCCL_TILING_FAIL("algConfig(%s) must be less than or equal %u.", algConfig_.c_str(),
                        opgen_sim::HCCL_ALG_CONFIG_SIZE);
        }
        if (opType_ == 0U || opType_ >= opgen_sim::HCCL_CMD_ALL) {
            return OPGEN_SIM_HCCL_TILING_FAIL("opType(%u) must be less than %u, and not 0.", opType_, opgen_sim::HCCL_CMD_ALL);
        }
        if (reduceType_ >= HCCL_REDUCE_RESERVED) {
            return OPGEN_SIM_HCCL_TILING_FAIL("reduceType(%u) must be less than %u.", reduceType_, HCCL_REDUCE_RESERVED);
        }
        auto* init = reinterpret_cast<opgen_sim::Mc2InitTilingInner*>(initTiling_);
        if (init->mc2HcommCnt >= opgen_sim::MAX_CC_TILING_NUM) {
            return OPGEN_SIM_HCCL_TILING_FAIL("mc2HcommCnt(%u) must be less than or equal %u.", init->mc2HcommCnt + 1U,
                        opgen_sim::MAX_CC_TILING_NUM);
        }
        auto* inner = reinterpret_cast<opgen_sim::Mc2CcTilingInner*>(&tiling);
        std::memset(inner, 0, sizeof(*inner));
        inner->skipLocalRankCopy = skipLocalRankCopy_;
        inner->skipBufferWindowCopy = skipBufferWindowCopy_;
        inner->stepSize = stepSize_;
        inner->version = 1U;
        std::memcpy(inner->groupName, groupName_.data(), groupName_.size());  // NUL-padded (strcpy_s)
        std::memcpy(inner->algConfig, algConfig_.data(), algConfig_.size());
        inner->opType = opType_;
        inner->reduceType = reduceType_;
        inner->srcDataType = srcDataType_;
        inner->dstDataType = dstDataType_;
        inner->commEngine = commEngine_;
        init->offset[init->mc2HcommCnt++] = static_cast<uint32_t>(reinterpret_cast<const uint8_t*>(&tiling) -
                                                                  reinterpret_cast<const uint8_t*>(initTiling_));
        return 0U;
    }

    uint32_t SetOpType(uint32_t opType) { opType_ = opType; return 0U; }
    uint32_t SetGroupName(const std::string& groupName) { groupName_ = groupName; return 0U; }
    uint32_t SetAlgConfig(const std::string& algConfig) { algConfig_ = algConfig; return 0U; }
    uint32_t SetReduceType(uint32_t reduceType, uint8_t dstDataType = 0, uint8_t srcDataType = 0)
    {
        reduceType_ = reduceType;
        dstDataType_ = dstDataType;
        srcDataType_ = srcDataType;
        return 0U;
    }
    uint32_t SetStepSize(uint8_t stepSize) { stepSize_ = stepSize; return 0U; }
    uint32_t SetSkipLocalRankCopy(uint8_t v) { skipLocalRankCopy_ = v; return 0U; }
    uint32_t SetSkipBufferWindowCopy(uint8_t v) { skipBufferWindowCopy_ = v; return 0U; }
    uint32_t SetDebugMode(uint8_t debugMode) { debugMode_ = debugMode; return 0U; }
    uint32_t SetQueueNum(uint16_t num) { queueNum_ = num; return 0U; }
    uint32_t SetCommBlockNum(uint16_t num) { commBlockNum_ = num; return 0U; }
    uint32_t SetCommEngine(uint8_t commEngine) { commEngine_ = commEngine; return 0U; }

private:
    static constexpr uint32_t HCCL_REDUCE_RESERVED = 4U;  // HcclReduceOp (hccl_common.h): sum, prod, max, min
    bool IsReduce() const { return opType_ == 2U || opType_ == 3U || opType_ == 7U; }  // allreduce, reduce, RS

    std::string groupName_;
    std::string algConfig_;
    uint32_t opType_ = 0;
    uint32_t reduceType_ = 0;
    uint8_t dstDataType_ = 0;
    uint8_t srcDataType_ = 0;
    uint8_t commEngine_ = 0;
    uint8_t stepSize_ = 0;
    uint8_t skipLocalRankCopy_ = 0;
    uint8_t skipBufferWindowCopy_ = 0;
    uint8_t debugMode_ = 0;
    uint16_t queueNum_ = 0;
    uint16_t commBlockNum_ = 0;
    ::Mc2InitTiling* initTiling_ = nullptr;
};
}  // namespace AscendC

#endif  // OPGEN_TEST_TILING_HCCL_HCCL_TILING_H
