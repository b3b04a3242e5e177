// Mirrors tiling/platform/platform_ascendc.h (CANN tiling API: platform_ascendc::PlatformAscendC).
#ifndef CANN_API_TILING_PLATFORM_PLATFORM_ASCENDC_H
#define CANN_API_TILING_PLATFORM_PLATFORM_ASCENDC_H

#include <cstdint>
#include "platform/platform_infos_def.h"

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };

enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND310P, ASCEND310B, ASCEND910_93, RESERVED_VERSION = 99999 };

class PlatformAscendC {
public:
    PlatformAscendC() = delete;
    explicit PlatformAscendC(fe::PlatFormInfos *platformInfo);
    uint32_t GetCoreNum(void) const;
    uint32_t GetCoreNumAic(void) const;
    uint32_t GetCoreNumAiv(void) const;
    SocVersion GetSocVersion(void) const;
    void GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const;
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const;
    uint32_t GetLibApiWorkSpaceSize(void) const;
};
}  // namespace platform_ascendc

#endif  // CANN_API_TILING_PLATFORM_PLATFORM_ASCENDC_H
