// Mirrors exe_graph/runtime/infer_datatype_context.h
// (hicann/metadef: inc/external/exe_graph/runtime/infer_datatype_context.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H

#include "exe_graph/runtime/extended_kernel_context.h"
#include "graph/types.h"

namespace gert {
class InferDataTypeContext : public ExtendedKernelContext {
public:
    ge::DataType GetInputDataType(size_t index) const;
    ge::DataType GetOptionalInputDataType(size_t ir_index) const;
    ge::DataType GetOutputDataType(size_t index) const;
    ge::graphStatus SetOutputDataType(size_t index, ge::DataType datatype);
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H
