// Mirrors tiling/platform/platform_ascendc.h (CANN tiling API: platform_ascendc::PlatformAscendC).
// Implemented (the twin runs the tiling code) over fe::PlatFormInfos, reading the resources CANN's platform config
// names.  GetLibApiWorkSpaceSize stays a declaration: no generated code calls it and its value is not documented.
#ifndef CANN_API_TILING_PLATFORM_PLATFORM_ASCENDC_H
#define CANN_API_TILING_PLATFORM_PLATFORM_ASCENDC_H

#include <cstdint>
#include <cstdlib>
#include <string>
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

private:
    // The resource as a number; 0 when the platform lacks it (or there is no platform).
    uint64_t Res(const char *label, const char *key) const
    {
        std::string val;
        if (platformInfo_ == nullptr || !platformInfo_->GetPlatformResWithLock(label, key, val)) {
            return 0;
        }
        return std::strtoull(val.c_str(), nullptr, 10);
    }

    fe::PlatFormInfos *platformInfo_;
};

inline PlatformAscendC::PlatformAscendC(fe::PlatFormInfos *platformInfo) : platformInfo_(platformInfo) {}

// The vector core count where cube and vector cores are separate (every SoC opgen targets), else the AI cores.
inline uint32_t PlatformAscendC::GetCoreNum(void) const
{
    const uint32_t aiv = GetCoreNumAiv();
    return aiv != 0 ? aiv : static_cast<uint32_t>(Res("SoCInfo", "ai_core_cnt"));
}

inline uint32_t PlatformAscendC::GetCoreNumAic(void) const
{
    return static_cast<uint32_t>(Res("SoCInfo", "cube_core_cnt"));
}

inline uint32_t PlatformAscendC::GetCoreNumAiv(void) const
{
    return static_cast<uint32_t>(Res("SoCInfo", "vector_core_cnt"));
}

inline SocVersion PlatformAscendC::GetSocVersion(void) const
{
    std::string version;
    if (platformInfo_ == nullptr || !platformInfo_->GetPlatformResWithLock("version", "Short_SoC_version", version)) {
        return SocVersion::RESERVED_VERSION;
    }
    if (version == "Ascend910") {
        return SocVersion::ASCEND910;
    }
    if (version == "Ascend910B") {
        return SocVersion::ASCEND910B;
    }
    if (version == "Ascend310P") {
        return SocVersion::ASCEND310P;
    }
    if (version == "Ascend310B") {
        return SocVersion::ASCEND310B;
    }
    if (version == "Ascend910_93") {
        return SocVersion::ASCEND910_93;
    }
    return SocVersion::RESERVED_VERSION;
}

// size = 0 when the platform does not report that memory.
inline void PlatformAscendC::GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const
{
    switch (memType) {
        case CoreMemType::L0_A: size = Res("AICoreSpec", "l0_a_size"); return;
        case CoreMemType::L0_B: size = Res("AICoreSpec", "l0_b_size"); return;
        case CoreMemType::L0_C: size = Res("AICoreSpec", "l0_c_size"); return;
        case CoreMemType::L1: size = Res("AICoreSpec", "l1_size"); return;
        case CoreMemType::L2: size = Res("SoCInfo", "l2_size"); return;
        case CoreMemType::UB: size = Res("AICoreSpec", "ub_size"); return;
        case CoreMemType::HBM: size = Res("SoCInfo", "memory_size"); return;
        case CoreMemType::RESERVED: break;
    }
    size = 0;
}

// The block dim of a kernel over sliceNum slices: a mixed (cube + vector) kernel launches one block per cube core
// and its vector cores, so the slices are divided by the vector/cube ratio; a vector-only kernel (aicCoreNum 0)
// launches one block per slice.
inline uint32_t PlatformAscendC::CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
{
    if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) {
        return sliceNum;
    }
    const uint32_t ratio = aivCoreNum / aicCoreNum;
    return (sliceNum + ratio - 1) / ratio;
}
}  // namespace platform_ascendc

#endif  // CANN_API_TILING_PLATFORM_PLATFORM_ASCENDC_H
