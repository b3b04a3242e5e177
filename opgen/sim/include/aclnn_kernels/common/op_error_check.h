// Mirrors aclnn_kernels/common/op_error_check.h (CANN op_api common): OP_CHECK_NULL and
// OP_CHECK_DTYPE_NOT_SUPPORT of aclnn parameter checks (the log text is CANN's own wording).
#ifndef CANN_API_ACLNN_KERNELS_COMMON_OP_ERROR_CHECK_H
#define CANN_API_ACLNN_KERNELS_COMMON_OP_ERROR_CHECK_H

#include <initializer_list>
#include "opdev/common_types.h"
#include "opdev/op_log.h"

namespace op {
bool IsNullptr(const aclTensor *tensor, const char *name);
bool CheckType(const op::DataType dtype, const std::initializer_list<op::DataType> &supportList);
}  // namespace op

#define OP_CHECK_NULL(param, retExpr)       \
    if (op::IsNullptr(param, #param)) {     \
        retExpr;                            \
    }

#define OP_CHECK_DTYPE_NOT_SUPPORT(tensor, supportList, retExpr)                                              \
    if (!op::CheckType((tensor)->GetDataType(), supportList)) {                                              \
        OP_LOGE(ACLNN_ERR_PARAM_INVALID, "Tensor %s not implemented for %s, should be in dtype support list %s.", \
                #tensor, op::ToString((tensor)->GetDataType()).GetString(),                                   \
                op::ToString(supportList).GetString());                                                       \
        retExpr;                                                                                              \
    }

#endif  // CANN_API_ACLNN_KERNELS_COMMON_OP_ERROR_CHECK_H
