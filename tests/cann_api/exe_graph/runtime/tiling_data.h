// Mirrors exe_graph/runtime/tiling_data.h (hicann/metadef: inc/external/exe_graph/runtime/tiling_data.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_TILING_DATA_H
#define CANN_API_EXE_GRAPH_RUNTIME_TILING_DATA_H

#include <cstddef>

namespace gert {
class TilingData {
public:
    size_t GetCapacity() const;
    size_t GetDataSize() const;
    void SetDataSize(size_t size);
    void *GetData();
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_TILING_DATA_H
