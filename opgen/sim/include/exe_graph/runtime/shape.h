// Mirrors exe_graph/runtime/shape.h (hicann/metadef: inc/external/exe_graph/runtime/shape.h).
// Implemented (the twin runs the tiling code): up to kMaxDimNum dims held inline, as in metadef.
#ifndef CANN_API_EXE_GRAPH_RUNTIME_SHAPE_H
#define CANN_API_EXE_GRAPH_RUNTIME_SHAPE_H

#include <cstddef>
#include <cstdint>
#include <limits>

namespace gert {
class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    // What GetDim answers for an index past kMaxDimNum (metadef's kInvalidDimValue).
    static constexpr int64_t kInvalidDimValue = std::numeric_limits<int64_t>::min();

    Shape();
    size_t GetDimNum() const;
    void SetDimNum(size_t dim_num);
    int64_t GetDim(size_t idx) const;
    Shape &SetDim(size_t idx, int64_t dim_value);
    Shape &AppendDim(int64_t value);
    int64_t GetShapeSize() const;
    bool IsScalar() const;

private:
    size_t dim_num_;
    int64_t dims_[kMaxDimNum];
};

inline Shape::Shape() : dim_num_(0), dims_{} {}

inline size_t Shape::GetDimNum() const
{
    return dim_num_;
}

inline void Shape::SetDimNum(size_t dim_num)
{
    dim_num_ = dim_num;
}

inline int64_t Shape::GetDim(size_t idx) const
{
    return idx < kMaxDimNum ? dims_[idx] : kInvalidDimValue;
}

inline Shape &Shape::SetDim(size_t idx, int64_t dim_value)
{
    if (idx < kMaxDimNum) {
        dims_[idx] = dim_value;
    }
    return *this;
}

inline Shape &Shape::AppendDim(int64_t value)
{
    if (dim_num_ < kMaxDimNum) {
        dims_[dim_num_++] = value;
    }
    return *this;
}

// The element count; -1 when a dim is unknown (negative).  A scalar has one element.
inline int64_t Shape::GetShapeSize() const
{
    int64_t size = 1;
    for (size_t i = 0; i < dim_num_; ++i) {
        if (dims_[i] < 0) {
            return -1;
        }
        size *= dims_[i];
    }
    return size;
}

inline bool Shape::IsScalar() const
{
    return dim_num_ == 0;
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_SHAPE_H
