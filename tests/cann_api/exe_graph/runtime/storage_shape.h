// Mirrors exe_graph/runtime/storage_shape.h (hicann/metadef: inc/external/exe_graph/runtime/storage_shape.h).
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
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H
