// Mirrors exe_graph/runtime/tiling_context.h (hicann/metadef: inc/external/exe_graph/runtime/tiling_context.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H

#include <cstdint>
#include "exe_graph/runtime/extended_kernel_context.h"
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tiling_data.h"
#include "platform/platform_infos_def.h"

namespace gert {
class TilingContext : public ExtendedKernelContext {
public:
    const StorageShape *GetInputShape(size_t index) const;
    const StorageShape *GetOptionalInputShape(size_t ir_index) const;
    const StorageShape *GetOutputShape(size_t index) const;
    template <typename T>
    const T *GetCompileInfo() const;
    fe::PlatFormInfos *GetPlatformInfo() const;
    ge::graphStatus SetTilingKey(uint64_t tiling_key);
    uint64_t GetTilingKey() const;
    ge::graphStatus SetBlockDim(uint32_t block_dim);
    uint32_t GetBlockDim() const;
    ge::graphStatus SetScheduleMode(uint32_t schedule_mode);
    ge::graphStatus SetNeedAtomic(bool atomic);
    size_t *GetWorkspaceSizes(size_t workspace_count);
    TilingData *GetRawTilingData();
    template <typename T>
    T *GetTilingData();
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H
