// Mirrors exe_graph/runtime/tiling_parse_context.h
// (hicann/metadef: inc/external/exe_graph/runtime/tiling_parse_context.h).
#ifndef CANN_API_EXE_GRAPH_RUNTIME_TILING_PARSE_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_TILING_PARSE_CONTEXT_H

#include "exe_graph/runtime/extended_kernel_context.h"
#include "platform/platform_infos_def.h"

namespace gert {
class TilingParseContext : public ExtendedKernelContext {
public:
    const char *GetCompiledJson() const;
    template <typename T>
    T *GetCompiledInfo();
    fe::PlatFormInfos *GetPlatformInfo() const;
};
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_TILING_PARSE_CONTEXT_H
