// Mirrors exe_graph/runtime/extended_kernel_context.h
// (hicann/metadef: inc/external/exe_graph/runtime/extended_kernel_context.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H

#include <cstddef>
#include "exe_graph/runtime/compute_node_info.h"
#include "exe_graph/runtime/runtime_attrs.h"

namespace gert {
class ExtendedKernelContext {
public:
    const CompileTimeTensorDesc *GetInputDesc(size_t index) const;
    const CompileTimeTensorDesc *GetOptionalInputDesc(size_t ir_index) const;
    const CompileTimeTensorDesc *GetOutputDesc(size_t index) const;
    const char *GetNodeType() const;
    const char *GetNodeName() const;
    const RuntimeAttrs *GetAttrs() const;
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H
