// Mirrors exe_graph/runtime/tiling_data.h (hicann/metadef: inc/external/exe_graph/runtime/tiling_data.h).
// Implemented (the twin runs the tiling code): a buffer of fixed capacity and the size the tiling used of it.
#ifndef CANN_API_EXE_GRAPH_RUNTIME_TILING_DATA_H
#define CANN_API_EXE_GRAPH_RUNTIME_TILING_DATA_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gert {
class TilingData {
public:
    size_t GetCapacity() const;
    size_t GetDataSize() const;
    void SetDataSize(size_t size);
    void *GetData();

    // ---- opgen twin only: setup and read-back ----
    // A zeroed buffer of capacity bytes, 8-byte aligned (the tiling structs hold int64_t fields).
    void OpgenSimInit(size_t capacity)
    {
        capacity_ = capacity;
        data_size_ = 0;
        storage_.assign((capacity + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    }
    const void *OpgenSimData() const { return storage_.data(); }

private:
    size_t capacity_ = 0;
    size_t data_size_ = 0;
    std::vector<uint64_t> storage_;
};

inline size_t TilingData::GetCapacity() const
{
    return capacity_;
}

inline size_t TilingData::GetDataSize() const
{
    return data_size_;
}

inline void TilingData::SetDataSize(size_t size)
{
    data_size_ = size;
}

inline void *TilingData::GetData()
{
    return storage_.data();
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_TILING_DATA_H
