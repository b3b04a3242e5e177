// Mirrors platform/platform_infos_def.h (CANN platform package): only the class name is used by op_host code.
#ifndef CANN_API_PLATFORM_PLATFORM_INFOS_DEF_H
#define CANN_API_PLATFORM_PLATFORM_INFOS_DEF_H

#include <string>

namespace fe {
class PlatFormInfos {
public:
    bool GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val);
};
}  // namespace fe

#endif  // CANN_API_PLATFORM_PLATFORM_INFOS_DEF_H
