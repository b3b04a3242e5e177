// Mirrors exe_graph/runtime/compute_node_info.h (hicann/metadef: inc/external/exe_graph/runtime/compute_node_info.h).
// Implemented (the twin runs the tiling code): a tensor desc is its dtype and formats.
#ifndef CANN_API_EXE_GRAPH_RUNTIME_COMPUTE_NODE_INFO_H
#define CANN_API_EXE_GRAPH_RUNTIME_COMPUTE_NODE_INFO_H

#include "graph/types.h"

namespace gert {
class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const;
    ge::Format GetStorageFormat() const;
    ge::Format GetOriginFormat() const;

    // ---- opgen twin only: setup, by whoever builds the context ----
    void SetDataType(ge::DataType data_type) { data_type_ = data_type; }
    void SetStorageFormat(ge::Format format) { storage_format_ = format; }
    void SetOriginFormat(ge::Format format) { origin_format_ = format; }

private:
    ge::DataType data_type_ = ge::DT_UNDEFINED;
    ge::Format storage_format_ = ge::FORMAT_ND;
    ge::Format origin_format_ = ge::FORMAT_ND;
};

inline ge::DataType CompileTimeTensorDesc::GetDataType() const
{
    return data_type_;
}

inline ge::Format CompileTimeTensorDesc::GetStorageFormat() const
{
    return storage_format_;
}

inline ge::Format CompileTimeTensorDesc::GetOriginFormat() const
{
    return origin_format_;
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_COMPUTE_NODE_INFO_H
