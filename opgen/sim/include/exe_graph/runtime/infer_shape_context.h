// Mirrors exe_graph/runtime/infer_shape_context.h
// (hicann/metadef: inc/external/exe_graph/runtime/infer_shape_context.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H

#include "exe_graph/runtime/extended_kernel_context.h"
#include "exe_graph/runtime/shape.h"

namespace gert {
class InferShapeContext : public ExtendedKernelContext {
public:
    const Shape *GetInputShape(size_t index) const;
    const Shape *GetOptionalInputShape(size_t ir_index) const;
    Shape *GetOutputShape(size_t index);
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H
