/**
 * libplatform's fe::PlatFormInfos for the real tilings: the platform database of the device a tiling runs for.
 * CANN fills it from the SoC's ini file (labels such as [version], [SoCInfo], [AICoreSpec]); the twin fills the
 * entries a TilingRequest carries (real_tiling_entry.cpp) and answers only from them: a resource the request does
 * not carry is absent (GetPlatformRes returns false, as for a key the ini lacks), a local memory the twin does not
 * model faults.  asc-devkit's own PlatformAscendC (impl/utils/tiling/platform/platform_ascendc.cpp) is compiled
 * unchanged on top of it.
 */
#include <map>
#include <memory>
#include <string>

#include "host_state.h"
#include "platform/platform_info.h"
#include "platform/platform_infos_def.h"

namespace fe {

class PlatFormInfosImpl {
public:
    std::map<std::string, std::map<std::string, std::string>> res;
};

bool PlatFormInfos::Init()
{
    platform_infos_impl_ = std::make_shared<PlatFormInfosImpl>();
    return true;
}

bool PlatFormInfos::GetPlatformRes(const std::string &label, const std::string &key, std::string &val)
{
    return GetPlatformResWithOutLock(label, key, val);
}

bool PlatFormInfos::GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val)
{
    return GetPlatformResWithOutLock(label, key, val);
}

bool PlatFormInfos::GetPlatformResWithOutLock(const std::string &label, const std::string &key, std::string &val)
{
    if (platform_infos_impl_ == nullptr) {
        return false;
    }
    const auto l = platform_infos_impl_->res.find(label);
    if (l == platform_infos_impl_->res.end()) {
        return false;
    }
    const auto k = l->second.find(key);
    if (k == l->second.end()) {
        return false;
    }
    val = k->second;
    return true;
}

bool PlatFormInfos::GetPlatformRes(const std::string &label, std::map<std::string, std::string> &res)
{
    if (platform_infos_impl_ == nullptr || platform_infos_impl_->res.count(label) == 0U) {
        return false;
    }
    res = platform_infos_impl_->res.at(label);
    return true;
}

bool PlatFormInfos::GetPlatformResWithLock(const std::string &label, std::map<std::string, std::string> &res)
{
    return GetPlatformRes(label, res);
}

void PlatFormInfos::SetPlatformRes(const std::string &label, std::map<std::string, std::string> &res)
{
    if (platform_infos_impl_ == nullptr) {
        Init();
    }
    platform_infos_impl_->res[label] = res;
}

void PlatFormInfos::SetPlatformResWithLock(const std::string &label, std::map<std::string, std::string> &res)
{
    SetPlatformRes(label, res);
}

uint32_t PlatFormInfos::GetCoreNum() const { return core_num_; }

void PlatFormInfos::SetCoreNum(const uint32_t &core_num) { core_num_ = core_num; }

// "VectorCore": the vector cores count (SoCInfo vector_core_cnt), "AiCore" (or any other): the AI cores.
void PlatFormInfos::SetCoreNumByCoreType(const std::string &core_type)
{
    std::string val;
    const std::string key = core_type == "VectorCore" ? "vector_core_cnt" : "ai_core_cnt";
    core_num_ = GetPlatformResWithOutLock("SoCInfo", key, val) && !val.empty() ? std::stoul(val) : 0U;
}

void PlatFormInfos::GetLocalMemSize(const LocalMemType &mem_type, uint64_t &size)
{
    std::string val;
    if (mem_type == LocalMemType::UB && GetPlatformResWithOutLock("AICoreSpec", "ub_size", val)) {
        size = std::stoull(val);
        return;
    }
    throw opgen_sim_real::HostFault("opgen sim: PlatFormInfos::GetLocalMemSize(" +
                                    std::to_string(static_cast<int>(mem_type)) +
                                    "): the twin's platform models the UB size only");
}

void PlatFormInfos::GetLocalMemBw(const LocalMemType &mem_type, uint64_t &bw_size)
{
    (void)bw_size;
    throw opgen_sim_real::HostFault("opgen sim: PlatFormInfos::GetLocalMemBw(" +
                                    std::to_string(static_cast<int>(mem_type)) +
                                    "): the twin's platform models no memory bandwidths");
}

// The device-wide platform manager: a tiling reads its platform from its context; the twin has no device whose
// platform the manager could load (PlatformAscendCManager, which uses it, serves the device-side API).
PlatformInfoManager::PlatformInfoManager() = default;
PlatformInfoManager::~PlatformInfoManager() = default;

PlatformInfoManager &PlatformInfoManager::Instance()
{
    static PlatformInfoManager instance;
    return instance;
}

uint32_t PlatformInfoManager::InitRuntimePlatformInfos(const std::string &SoCVersion)
{
    throw opgen_sim_real::HostFault("opgen sim: PlatformInfoManager::InitRuntimePlatformInfos(" + SoCVersion +
                                    "): the twin has no device platform manager");
}

uint32_t PlatformInfoManager::GetRuntimePlatformInfosByDevice(const uint32_t &device_id, PlatFormInfos &platform_infos,
                                                              bool need_deep_copy)
{
    (void)platform_infos, (void)need_deep_copy;
    throw opgen_sim_real::HostFault("opgen sim: PlatformInfoManager::GetRuntimePlatformInfosByDevice(" +
                                    std::to_string(device_id) + "): the twin has no device platform manager");
}

}  // namespace fe
