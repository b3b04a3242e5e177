// Mirrors log/log.h (hicann/ops-base: include/op_common/log/log.h, installed as log/log.h): the OP_LOG* macros,
// OP_CHECK_IF and OP_CHECK_NULL_WITH_CONTEXT of op_host code.  The log macros expand to printf-format-checked
// functions so the compile checks also check every format string.  Implemented (the twin runs the tiling code):
// each call formats one line and appends it to the calling thread's opgen_sim::CurrentHostCall().log.
// GetOpInfo of a context and the ToString helpers stay declarations: only infershape code uses them.
#ifndef CANN_API_LOG_LOG_H
#define CANN_API_LOG_LOG_H

#include <cstdarg>
#include <cstdio>
#include <string>
#include <type_traits>
#include "exe_graph/runtime/shape.h"
#include "graph/ge_error_codes.h"
#include "graph/types.h"
#include "opgen_sim/host.h"

namespace Ops {
namespace Base {
inline const char *GetOpInfo(const char *str)
{
    return (str == nullptr) ? "nil" : str;
}

template <class T>
typename std::enable_if<!std::is_convertible<T, const char *>::value, std::string>::type GetOpInfo(T context);

inline void OpLogD(const std::string &opInfo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline void OpLogI(const std::string &opInfo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline void OpLogW(const std::string &opInfo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline void OpLogE(const std::string &opInfo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

std::string ToString(ge::DataType type);
std::string ToString(ge::Format format);
std::string ToString(const gert::Shape &shape);

// Twin only: "[LEVEL] <op info>: <message>" appended to the thread's host log.
inline __attribute__((format(printf, 4, 0))) void OpgenSimLogV(char level, const char *levelName,
                                                               const std::string &opInfo, const char *fmt,
                                                               va_list args)
{
    va_list sizing;
    va_copy(sizing, args);
    const int length = std::vsnprintf(nullptr, 0, fmt, sizing);
    va_end(sizing);
    std::string message(length > 0 ? static_cast<size_t>(length) : 0, '\0');
    if (length > 0) {
        std::vsnprintf(&message[0], message.size() + 1, fmt, args);
    }
    opgen_sim::CurrentHostCall().log.push_back({level, "[" + std::string(levelName) + "] " + opInfo + ": " + message});
}

inline void OpLogD(const std::string &opInfo, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    OpgenSimLogV('D', "DEBUG", opInfo, fmt, args);
    va_end(args);
}

inline void OpLogI(const std::string &opInfo, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    OpgenSimLogV('I', "INFO", opInfo, fmt, args);
    va_end(args);
}

inline void OpLogW(const std::string &opInfo, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    OpgenSimLogV('W', "WARNING", opInfo, fmt, args);
    va_end(args);
}

inline void OpLogE(const std::string &opInfo, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    OpgenSimLogV('E', "ERROR", opInfo, fmt, args);
    va_end(args);
}
}  // namespace Base
}  // namespace Ops

#define unlikely(x) __builtin_expect((x), 0)
#define likely(x) __builtin_expect((x), 1)

#define OP_LOGD(opName, ...) Ops::Base::OpLogD(Ops::Base::GetOpInfo(opName), __VA_ARGS__)
#define OP_LOGI(opName, ...) Ops::Base::OpLogI(Ops::Base::GetOpInfo(opName), __VA_ARGS__)
#define OP_LOGW(opName, ...) Ops::Base::OpLogW(Ops::Base::GetOpInfo(opName), __VA_ARGS__)
#define OP_LOGE_WITHOUT_REPORT(opName, ...) Ops::Base::OpLogE(Ops::Base::GetOpInfo(opName), __VA_ARGS__)
#define OP_LOGE(opName, ...) Ops::Base::OpLogE(Ops::Base::GetOpInfo(opName), __VA_ARGS__)

#define OP_CHECK_IF(condition, log, return_expr) \
    do {                                         \
        if (unlikely(condition)) {               \
            log;                                 \
            return_expr;                         \
        }                                        \
    } while (0)

#define OP_CHECK_NULL_WITH_CONTEXT(context, ptr)                                                           \
    do {                                                                                                   \
        if (unlikely((ptr) == nullptr)) {                                                                  \
            const char *name = (unlikely(((context) == nullptr) || (context)->GetNodeName() == nullptr)) ? \
                                   "nil" :                                                                 \
                                   (context)->GetNodeName();                                               \
            OP_LOGE(name, "%s is nullptr!", #ptr);                                                         \
            return ge::GRAPH_FAILED;                                                                       \
        }                                                                                                  \
    } while (0)

#endif  // CANN_API_LOG_LOG_H
