// Mirrors op_host/op_tiling/mc2_tiling_utils.h (hicann/ops-transformer: mc2/common/op_host/op_tiling/
// mc2_tiling_utils.h): the mc2tiling helpers MC2 tiling functions use to read the SoC and the HCCL window.
// Implemented (the twin runs the tiling code): the SoC from the context's platform, the window from the tiling
// call's opgen_sim::CurrentHostCall() (one window size for every communication domain).
#ifndef CANN_API_OP_HOST_OP_TILING_MC2_TILING_UTILS_H
#define CANN_API_OP_HOST_OP_TILING_MC2_TILING_UTILS_H

#include <cstdint>
#include <string>
#include "exe_graph/runtime/tiling_context.h"
#include "graph/ge_error_codes.h"
#include "opgen_sim/host.h"

namespace mc2tiling {
// The HCCL communication engines MC2 tilings pass to Mc2CcTilingConfig::SetCommEngine (same values as CANN).
constexpr uint8_t AIV_ENGINE = 3;
constexpr uint8_t A5_CCU_ENGINE = 6;
// The AI CPU cores the Atlas A2 MC2 tilings launch to serve HCCL BatchWrite (same value as CANN).
constexpr uint32_t AICPU_NUM_BLOCKS_A2 = 6U;

// Short_SoC_version of the platform, e.g. "Ascend910B", "Ascend910_93".
inline std::string GetSocVersion(const gert::TilingContext *context)
{
    std::string version;
    fe::PlatFormInfos *platform = (context == nullptr) ? nullptr : context->GetPlatformInfo();
    if (platform != nullptr) {
        platform->GetPlatformResWithLock("version", "Short_SoC_version", version);
    }
    return version;
}

// HCCL_BUFFSIZE of the communication domain named by groupStr, in bytes: the twin's window, whatever the group.
// Fails for a missing or empty group name, which names no domain, and where the job says tiling cannot ask the
// domain (`ccl_buffer unreadable`: online compilation, super kernels).
inline ge::graphStatus GetCclBufferSize(const char *groupStr, uint64_t *cclBufferSize, const char *nodeName)
{
    (void)nodeName;  // CANN logs its failures under the node name; the twin's only failure is the caller's to log
    if (groupStr == nullptr || groupStr[0] == '\0' || cclBufferSize == nullptr ||
        !opgen_sim::CurrentHostCall().windowReadable) {
        return ge::GRAPH_FAILED;
    }
    *cclBufferSize = opgen_sim::CurrentHostCall().windowBytes;
    return ge::GRAPH_SUCCESS;
}
}  // namespace mc2tiling

#endif  // CANN_API_OP_HOST_OP_TILING_MC2_TILING_UTILS_H
