// Mirrors op_host/op_tiling/mc2_tiling_utils.h (hicann/ops-transformer: mc2/common/op_host/op_tiling/
// mc2_tiling_utils.h): the mc2tiling helpers MC2 tiling functions use to read the SoC and the HCCL window.
#ifndef CANN_API_OP_HOST_OP_TILING_MC2_TILING_UTILS_H
#define CANN_API_OP_HOST_OP_TILING_MC2_TILING_UTILS_H

#include <cstdint>
#include <string>
#include "exe_graph/runtime/tiling_context.h"
#include "graph/ge_error_codes.h"

namespace mc2tiling {
// Short_SoC_version of the platform, e.g. "Ascend910B", "Ascend910_93".
std::string GetSocVersion(const gert::TilingContext *context);
// HCCL_BUFFSIZE of the communication domain named by groupStr, in bytes.
ge::graphStatus GetCclBufferSize(const char *groupStr, uint64_t *cclBufferSize, const char *nodeName);
}  // namespace mc2tiling

#endif  // CANN_API_OP_HOST_OP_TILING_MC2_TILING_UTILS_H
