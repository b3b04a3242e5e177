// Mirrors exe_graph/runtime/compute_node_info.h (hicann/metadef: inc/external/exe_graph/runtime/compute_node_info.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_COMPUTE_NODE_INFO_H
#define CANN_API_EXE_GRAPH_RUNTIME_COMPUTE_NODE_INFO_H

#include "graph/types.h"

namespace gert {
class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const;
    ge::Format GetStorageFormat() const;
    ge::Format GetOriginFormat() const;
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_COMPUTE_NODE_INFO_H
