/**
 * The state the twin's host runtime for the real op_host tilings keeps per tiling call (see README.md in this
 * folder): the call's log, the HCCL and platform facts of the rank being tiled, and HostFault, which the runtime
 * throws where the real tiling asks for something the twin cannot model.  Only the real_host TUs include it; they
 * compile against the real public CANN headers, never against opgen/sim/include.
 */
#ifndef OPGEN_SIM_REAL_HOST_STATE_H
#define OPGEN_SIM_REAL_HOST_STATE_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "register/op_impl_registry.h"

namespace opgen_sim_real {

// The real tiling asked the host for something the twin does not model: the call stops, the result is a fault.
struct HostFault : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct LogLine {
    char level;  // 'E', 'W'
    std::string text;
};

struct Call {
    bool active = false;           // inside OpgenSimTiling (log lines outside a call, e.g. static init, are dropped)
    std::string socVersion;        // Short_SoC_version
    uint64_t cclBufferBytes = 0;   // what HCCL reports as the CCL buffer of every group of this rank
    std::vector<LogLine> log;
};

Call &CurrentCall();

// What IMPL_OP / IMPL_OP_OPTILING registered for one op type (register/op_impl_registry.h).
struct Registration {
    gert::OpImplRegisterV2::TilingKernelFunc tiling = nullptr;
    size_t maxTilingDataSize = 0;
    gert::OpImplRegisterV2::KernelFunc tilingParse = nullptr;
    gert::OpImplRegisterV2::CompileInfoCreatorFunc createCompileInfo = nullptr;
    gert::OpImplRegisterV2::CompileInfoDeleterFunc deleteCompileInfo = nullptr;
};

// The registration of op type `opType`; nullptr when nothing registered it.
const Registration *FindRegistration(const std::string &opType);
// The op types registered with a tiling function.
std::vector<std::string> TilingOpTypes();

}  // namespace opgen_sim_real

#endif  // OPGEN_SIM_REAL_HOST_STATE_H
