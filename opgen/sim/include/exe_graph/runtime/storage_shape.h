// Mirrors exe_graph/runtime/storage_shape.h (hicann/metadef: inc/external/exe_graph/runtime/storage_shape.h).
// Implemented (the twin runs the tiling code).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H
#define CANN_API_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H

#include "exe_graph/runtime/shape.h"

namespace gert {
class StorageShape {
public:
    StorageShape();
    const Shape &GetOriginShape() const;
    const Shape &GetStorageShape() const;
    Shape &MutableOriginShape();
    Shape &MutableStorageShape();

private:
    Shape origin_shape_;
    Shape storage_shape_;
};

inline StorageShape::StorageShape() = default;

inline const Shape &StorageShape::GetOriginShape() const
{
    return origin_shape_;
}

inline const Shape &StorageShape::GetStorageShape() const
{
    return storage_shape_;
}

inline Shape &StorageShape::MutableOriginShape()
{
    return origin_shape_;
}

inline Shape &StorageShape::MutableStorageShape()
{
    return storage_shape_;
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H
