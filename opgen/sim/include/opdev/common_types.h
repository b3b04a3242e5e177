// Mirrors opdev/common_types.h (hicann/ops-base: include/nnopbase/opdev/common_types.h): op::DataType and the
// aclTensor class as op_api code sees it (only the members the generated code uses).
#ifndef CANN_API_OPDEV_COMMON_TYPES_H
#define CANN_API_OPDEV_COMMON_TYPES_H

#include <cstdint>
#include <initializer_list>
#include "aclnn/acl_meta.h"
#include "exe_graph/runtime/shape.h"
#include "graph/ascend_string.h"
#include "graph/types.h"

namespace op {
using Shape = gert::Shape;
using Format = ge::Format;
using DataType = ge::DataType;

ge::AscendString ToString(op::DataType dataType);
ge::AscendString ToString(const std::initializer_list<op::DataType> &dataTypes);
}  // namespace op

class aclTensor {
public:
    const op::Shape &GetViewShape() const;
    const op::Shape &GetStorageShape() const;
    op::Format GetStorageFormat() const;
    op::Format GetViewFormat() const;
    op::DataType GetDataType() const;
    int64_t Numel() const;
    bool IsEmpty() const;
};

#endif  // CANN_API_OPDEV_COMMON_TYPES_H
