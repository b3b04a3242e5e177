// Mirrors exe_graph/runtime/tiling_context.h (hicann/metadef: inc/external/exe_graph/runtime/tiling_context.h).
// Implemented (the twin runs the tiling code): the twin builds one context per tiling call (opgen/sim/
// tiling_entry.cpp) and reads back what the tiling function set.  Shapes follow the desc numbering of
// ExtendedKernelContext: GetInputShape takes the instance index, GetOptionalInputShape the IR index.
#ifndef CANN_API_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H

#include <cstdint>
#include <vector>
#include "exe_graph/runtime/extended_kernel_context.h"
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tiling_data.h"
#include "graph/ge_error_codes.h"
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
    // the AI CPU cores the launch schedules (the server of HCCL BatchWrite tasks); deprecated name first
    ge::graphStatus SetAicpuBlockDim(uint32_t block_dim) { return SetAicpuNumBlocks(block_dim); }
    ge::graphStatus SetAicpuNumBlocks(uint32_t num_blocks)
    {
        aicpu_blocks_ = num_blocks;
        return ge::GRAPH_SUCCESS;
    }
    uint32_t GetAicpuBlockDim() const { return aicpu_blocks_; }
    uint32_t GetAicpuNumBlocks() const { return aicpu_blocks_; }
    ge::graphStatus SetScheduleMode(uint32_t schedule_mode);
    ge::graphStatus SetNeedAtomic(bool atomic);
    size_t *GetWorkspaceSizes(size_t workspace_count);
    TilingData *GetRawTilingData();
    template <typename T>
    T *GetTilingData();

    // ---- opgen twin only: setup ----
    void OpgenSimAppendInput(bool present, const CompileTimeTensorDesc &desc, const StorageShape &shape)
    {
        OpgenSimAppendInputDesc(present, desc);
        if (present) {
            input_shapes_.push_back(shape);
        }
    }
    void OpgenSimAppendOutput(bool present, const CompileTimeTensorDesc &desc, const StorageShape &shape)
    {
        OpgenSimAppendOutputDesc(present, desc);
        output_shapes_.push_back(shape);
    }
    void OpgenSimSetPlatformInfo(fe::PlatFormInfos *platform_info) { platform_info_ = platform_info; }
    void OpgenSimSetCompileInfo(const void *compile_info) { compile_info_ = compile_info; }
    void OpgenSimInitTilingData(size_t capacity) { tiling_data_.OpgenSimInit(capacity); }
    // ---- opgen twin only: read-back of what the tiling function set ----
    const TilingData &OpgenSimTilingData() const { return tiling_data_; }
    uint32_t OpgenSimScheduleMode() const { return schedule_mode_; }
    bool OpgenSimNeedAtomic() const { return need_atomic_; }
    const std::vector<size_t> &OpgenSimWorkspaceSizes() const { return workspace_sizes_; }

private:
    std::vector<StorageShape> input_shapes_;   // per input instance
    std::vector<StorageShape> output_shapes_;  // per output
    fe::PlatFormInfos *platform_info_ = nullptr;
    const void *compile_info_ = nullptr;
    uint64_t tiling_key_ = 0;
    uint32_t block_dim_ = 0;
    uint32_t aicpu_blocks_ = 0;
    uint32_t schedule_mode_ = 0;
    bool need_atomic_ = false;
    std::vector<size_t> workspace_sizes_;
    TilingData tiling_data_;
};

inline const StorageShape *TilingContext::GetInputShape(size_t index) const
{
    return index < input_shapes_.size() ? &input_shapes_[index] : nullptr;
}

inline const StorageShape *TilingContext::GetOptionalInputShape(size_t ir_index) const
{
    const size_t instance = InputInstance(ir_index);
    return instance == kAbsent ? nullptr : &input_shapes_[instance];
}

inline const StorageShape *TilingContext::GetOutputShape(size_t index) const
{
    return OutputPresent(index) ? &output_shapes_[index] : nullptr;
}

template <typename T>
inline const T *TilingContext::GetCompileInfo() const
{
    return static_cast<const T *>(compile_info_);
}

inline fe::PlatFormInfos *TilingContext::GetPlatformInfo() const
{
    return platform_info_;
}

inline ge::graphStatus TilingContext::SetTilingKey(uint64_t tiling_key)
{
    tiling_key_ = tiling_key;
    return ge::GRAPH_SUCCESS;
}

inline uint64_t TilingContext::GetTilingKey() const
{
    return tiling_key_;
}

inline ge::graphStatus TilingContext::SetBlockDim(uint32_t block_dim)
{
    block_dim_ = block_dim;
    return ge::GRAPH_SUCCESS;
}

inline uint32_t TilingContext::GetBlockDim() const
{
    return block_dim_;
}

inline ge::graphStatus TilingContext::SetScheduleMode(uint32_t schedule_mode)
{
    schedule_mode_ = schedule_mode;
    return ge::GRAPH_SUCCESS;
}

inline ge::graphStatus TilingContext::SetNeedAtomic(bool atomic)
{
    need_atomic_ = atomic;
    return ge::GRAPH_SUCCESS;
}

// workspace_count sizes, zeroed, for the tiling function to fill.
inline size_t *TilingContext::GetWorkspaceSizes(size_t workspace_count)
{
    workspace_sizes_.assign(workspace_count, 0);
    return workspace_sizes_.data();
}

inline TilingData *TilingContext::GetRawTilingData()
{
    return &tiling_data_;
}

// The tiling data as a T: its size becomes sizeof(T); nullptr when T does not fit the capacity.
template <typename T>
inline T *TilingContext::GetTilingData()
{
    TilingData *data = GetRawTilingData();
    if (data == nullptr || data->GetCapacity() < sizeof(T)) {
        return nullptr;
    }
    data->SetDataSize(sizeof(T));
    return static_cast<T *>(data->GetData());
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H
