/**
 * The twin's slog, the type names of libgraph / libopbase, and the ACL runtime entry points the real tilings link
 * against.
 *
 * slog (dlog_pub.h): CheckLogLevel says which levels are printed, DlogRecord prints one.  The twin records the
 * error and warning lines of the current tiling call (the levels CANN's default ASCEND_GLOBAL_LOG_LEVEL and the
 * tilings' OP_LOGE / OP_LOGW reach); debug and info lines are not printed, as with the default level.
 * error_message (dfx/base/err_msg.h, weak symbols a host without the error manager leaves null): the error
 * manager's queue.  An inner error repeats the OP_LOGE line beside it and is not recorded again; a predefined
 * error (code, keys, values) is recorded as an error line "<code>: key=value, ...".
 * ACL runtime: the twin has none.  aclsysGetVersionNum answers ACL_ERROR_FEATURE_UNSUPPORTED (the real tilings'
 * exception-dump registration then logs a warning and registers nothing); the exception-dump callbacks'
 * calls fault, as no device exception ever reaches them.
 */
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "acl/acl_rt.h"
#include "base/dlog_pub.h"
#include "base/err_msg.h"
#include "graph/ascend_string.h"
#include "graph/types.h"
#include "graph/utils/type_utils.h"
#include "host_state.h"

namespace Ops {
namespace Base {
std::string ToString(ge::DataType type);
std::string ToString(ge::Format format);
}  // namespace Base
}  // namespace Ops

namespace {

// ge::DataType names as TypeUtils::DataTypeToSerialString prints them (graph/types.h enumerators)
#define OPGEN_SIM_DTYPES(X)                                                                                      \
    X(DT_FLOAT) X(DT_FLOAT16) X(DT_INT8) X(DT_INT32) X(DT_UINT8) X(DT_INT16) X(DT_UINT16) X(DT_UINT32)           \
    X(DT_INT64) X(DT_UINT64) X(DT_DOUBLE) X(DT_BOOL) X(DT_STRING) X(DT_COMPLEX64) X(DT_COMPLEX128) X(DT_BF16)    \
    X(DT_INT4) X(DT_UINT1) X(DT_INT2) X(DT_UINT2) X(DT_COMPLEX32) X(DT_HIFLOAT8) X(DT_FLOAT8_E5M2)               \
    X(DT_FLOAT8_E4M3FN) X(DT_FLOAT8_E8M0) X(DT_FLOAT6_E3M2) X(DT_FLOAT6_E2M3) X(DT_FLOAT4_E2M1)                 \
    X(DT_FLOAT4_E1M2) X(DT_HIFLOAT4) X(DT_UNDEFINED)

// ge::Format names as TypeUtils::FormatToSerialString prints them (without the FORMAT_ prefix)
#define OPGEN_SIM_FORMATS(X)                                                                                     \
    X(NCHW) X(NHWC) X(ND) X(NC1HWC0) X(FRACTAL_Z) X(NC1HWC0_C04) X(FRACTAL_Z_C04) X(CHWN) X(HWCN) X(NDHWC)      \
    X(FRACTAL_NZ) X(NCDHW) X(DHWCN) X(NDC1HWC0) X(FRACTAL_Z_3D) X(CN) X(NC) X(NCL) X(RESERVED)

std::string DataTypeName(ge::DataType type)
{
    switch (type) {
#define OPGEN_SIM_CASE(name) \
    case ge::name:           \
        return #name;
        OPGEN_SIM_DTYPES(OPGEN_SIM_CASE)
#undef OPGEN_SIM_CASE
        default:
            return "UNDEFINED";
    }
}

std::string FormatName(ge::Format format)
{
    switch (static_cast<int32_t>(format) & 0xff) {  // the primary format: the low byte (graph/types.h)
#define OPGEN_SIM_CASE(name) \
    case ge::FORMAT_##name:  \
        return #name;
        OPGEN_SIM_FORMATS(OPGEN_SIM_CASE)
#undef OPGEN_SIM_CASE
        default:
            return "RESERVED";
    }
}

[[noreturn]] void NoAclRuntime(const char *call)
{
    throw opgen_sim_real::HostFault(std::string("opgen sim: ") + call +
                                    ": the twin has no ACL runtime (device exception dumps are not modelled)");
}

}  // namespace

int32_t CheckLogLevel(int32_t moduleId, int32_t logLevel)
{
    (void)moduleId;
    return (logLevel == DLOG_ERROR || logLevel == DLOG_WARN) ? 1 : 0;
}

void DlogRecord(int32_t moduleId, int32_t level, const char *fmt, ...)
{
    (void)moduleId;
    opgen_sim_real::Call &call = opgen_sim_real::CurrentCall();
    if (!call.active || (level != DLOG_ERROR && level != DLOG_WARN)) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    va_list again;
    va_copy(again, args);
    const int size = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    std::string text(size > 0 ? static_cast<size_t>(size) : 0U, '\0');
    if (size > 0) {
        std::vsnprintf(&text[0], text.size() + 1U, fmt, again);
    }
    va_end(again);
    call.log.push_back({level == DLOG_ERROR ? 'E' : 'W', text});
}

namespace error_message {

int32_t ReportInnerErrMsg(const char *file_name, const char *func, uint32_t line, const char *error_code,
                          const char *format, ...)
{
    (void)file_name, (void)func, (void)line, (void)error_code, (void)format;
    return 0;
}

int32_t ReportUserDefinedErrMsg(const char *error_code, const char *format, ...)
{
    (void)error_code, (void)format;
    return 0;
}

int32_t ReportPredefinedErrMsg(const char *error_code, const std::vector<const char *> &key,
                               const std::vector<const char *> &value)
{
    opgen_sim_real::Call &call = opgen_sim_real::CurrentCall();
    if (call.active) {
        std::string text = std::string(error_code == nullptr ? "" : error_code) + ":";
        for (size_t i = 0; i < key.size(); ++i) {
            text += std::string(i == 0U ? " " : ", ") + (key[i] == nullptr ? "" : key[i]) + "=" +
                    (i < value.size() && value[i] != nullptr ? value[i] : "");
        }
        call.log.push_back({'E', text});
    }
    return 0;
}

int32_t ReportPredefinedErrMsg(const char *error_code)
{
    return ReportPredefinedErrMsg(error_code, {}, {});
}

}  // namespace error_message

namespace Ops {
namespace Base {
std::string ToString(ge::DataType type) { return DataTypeName(type); }
std::string ToString(ge::Format format) { return FormatName(format); }
}  // namespace Base
}  // namespace Ops

namespace ge {
AscendString::AscendString(const char_t *const name) : name_(std::make_shared<std::string>(name ? name : "")) {}
const char_t *AscendString::GetString() const { return name_ ? name_->c_str() : ""; }
AscendString TypeUtils::FormatToAscendString(const Format &format) { return AscendString(FormatName(format).c_str()); }
AscendString TypeUtils::DataTypeToAscendString(const DataType &data_type)
{
    return AscendString(DataTypeName(data_type).c_str());
}
}  // namespace ge

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
    (void)pkgName;
    (void)versionNum;
    return ACL_ERROR_FEATURE_UNSUPPORTED;
}
const char *aclrtGetSocName() { NoAclRuntime("aclrtGetSocName"); }
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    (void)dst, (void)destMax, (void)src, (void)count, (void)kind;
    NoAclRuntime("aclrtMemcpy");
}
uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info) { (void)info; NoAclRuntime("aclrtGetTaskIdFromExceptionInfo"); }
uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info) { (void)info; NoAclRuntime("aclrtGetStreamIdFromExceptionInfo"); }
uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info) { (void)info; NoAclRuntime("aclrtGetDeviceIdFromExceptionInfo"); }
