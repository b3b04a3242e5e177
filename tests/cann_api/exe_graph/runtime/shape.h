// Mirrors exe_graph/runtime/shape.h (hicann/metadef: inc/external/exe_graph/runtime/shape.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_SHAPE_H
#define CANN_API_EXE_GRAPH_RUNTIME_SHAPE_H

#include <cstddef>
#include <cstdint>

namespace gert {
class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    Shape();
    size_t GetDimNum() const;
    void SetDimNum(size_t dim_num);
    int64_t GetDim(size_t idx) const;
    Shape &SetDim(size_t idx, int64_t dim_value);
    Shape &AppendDim(int64_t value);
    int64_t GetShapeSize() const;
    bool IsScalar() const;
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_SHAPE_H
