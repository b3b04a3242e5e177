// Mirrors platform/platform_infos_def.h (CANN platform package).  Implemented (the twin runs the tiling code): the
// platform's resources as (label, key) -> value strings, as CANN reads them from the SoC's platform config ini
// ("version"/"Short_SoC_version", "SoCInfo"/"vector_core_cnt", "AICoreSpec"/"ub_size", ...).
#ifndef CANN_API_PLATFORM_PLATFORM_INFOS_DEF_H
#define CANN_API_PLATFORM_PLATFORM_INFOS_DEF_H

#include <map>
#include <string>
#include <utility>

namespace fe {
class PlatFormInfos {
public:
    // false (val untouched) when the platform has no such resource.
    bool GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val);

    // ---- opgen twin only: setup ----
    void OpgenSimSetPlatformRes(const std::string &label, const std::string &key, const std::string &val)
    {
        res_[std::make_pair(label, key)] = val;
    }

private:
    std::map<std::pair<std::string, std::string>, std::string> res_;
};

inline bool PlatFormInfos::GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val)
{
    const auto it = res_.find(std::make_pair(label, key));
    if (it == res_.end()) {
        return false;
    }
    val = it->second;
    return true;
}
}  // namespace fe

#endif  // CANN_API_PLATFORM_PLATFORM_INFOS_DEF_H
