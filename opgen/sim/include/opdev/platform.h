// Mirrors opdev/platform.h (hicann/ops-base: include/nnopbase/opdev/platform.h).
#ifndef CANN_API_OPDEV_PLATFORM_H
#define CANN_API_OPDEV_PLATFORM_H

#include <cstdint>
#include "aclnn/aclnn_base.h"

namespace op {
enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND910_95,
    ASCEND950 = ASCEND910_95,
    ASCEND910E,
    ASCEND310,
    ASCEND310P,
    ASCEND310B,
    ASCEND310C,
    ASCEND610LITE,
    KIRINX90,
    KIRIN9030,
    ASCEND350,
    RESERVED_VERSION = 99999
};

class PlatformInfo {
public:
    SocVersion GetSocVersion() const;
    int32_t GetDeviceId() const;
    uint32_t GetVectorCoreNum() const;
    bool Valid() const;
};

const PlatformInfo &GetCurrentPlatformInfo();
}  // namespace op

#endif  // CANN_API_OPDEV_PLATFORM_H
