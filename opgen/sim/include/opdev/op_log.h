// Mirrors opdev/op_log.h (hicann/ops-base: include/nnopbase/opdev/op_log.h): the op_api logging macros, whose
// OP_LOGE takes an aclnn status first, and CHECK_RET.  The log macros expand to declared, printf-format-checked
// functions so the compile check also checks every format string.
#ifndef CANN_API_OPDEV_OP_LOG_H
#define CANN_API_OPDEV_OP_LOG_H

#include <cstdint>
#include "opdev/op_errno.h"

namespace op {
namespace internal {
void OpApiLogD(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void OpApiLogI(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void OpApiLogW(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void OpApiLogE(int32_t errorCode, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
}  // namespace internal
}  // namespace op

#define OP_LOGD(...) op::internal::OpApiLogD(__VA_ARGS__)
#define OP_LOGI(...) op::internal::OpApiLogI(__VA_ARGS__)
#define OP_LOGW(...) op::internal::OpApiLogW(__VA_ARGS__)
#define OP_LOGE_WITHOUT_REPORT(errno, ...) op::internal::OpApiLogE(errno, __VA_ARGS__)
#define OP_LOGE(errno, ...) op::internal::OpApiLogE(errno, __VA_ARGS__)

#define CHECK_RET(condition, ret_value)                                              \
    do {                                                                             \
        if (!(condition)) {                                                          \
            OP_LOGE_WITHOUT_REPORT(ACLNN_ERR_INNER, "check %s failed.", #condition); \
            return ret_value;                                                        \
        }                                                                            \
    } while (false)

#endif  // CANN_API_OPDEV_OP_LOG_H
