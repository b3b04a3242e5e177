/**
 * The three translation units of a twin executable and what they call across.
 *
 *   tiling TU  (opgen/sim/tiling_entry.cpp, which #includes the generated op_host/op_tiling/<op>_tiling.cpp):
 *       OpgenSimTiling runs the generated tiling function against the twin's host tiling API.
 *   kernel TU  (opgen/sim/kernel_entry.cpp, which #includes the generated op_kernel/<op>.cpp):
 *       OpgenSimKernel calls the generated extern "C" kernel with one GM address per parameter.
 *   runner     (opgen/sim/runner.cpp): reads a job, tiles every rank, allocates GM and the HCCL windows,
 *       runs the world (one thread per rank x core) and writes the outputs.
 *
 * The TUs share no CANN header (the kernel and host APIs define clashing macros), only this one.
 */
#ifndef OPGEN_SIM_LAUNCH_H
#define OPGEN_SIM_LAUNCH_H

#include <cstdint>
#include <string>
#include <vector>

namespace opgen_sim {

// An input or output as the tiling context reports it (storage shape = origin shape, ND).
struct TensorArg {
    bool present = false;
    int32_t dtype = 0;   // ge::DataType
    int32_t format = 2;  // ge::Format (FORMAT_ND)
    std::vector<int64_t> dims;
};

// One attribute, at its IR index.  kind: 'i' int64, 'b' bool, 'f' float, 's' string, 'I' list of int64,
// '-' not given (the node does not carry it: GetAttrPointer returns nullptr).
struct AttrArg {
    char kind = '-';
    int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::vector<int64_t> ints;
};

struct TilingRequest {
    std::string nodeName;
    std::string socVersion;  // Short_SoC_version as the platform reports it: "Ascend910B", "Ascend910_93", "Ascend950"
    uint32_t aivNum = 0;     // GetCoreNumAiv()
    uint32_t aicNum = 0;     // GetCoreNumAic()
    uint64_t ubBytes = 0;    // GetCoreMemSize(UB)
    uint64_t windowBytes = 0;  // mc2tiling::GetCclBufferSize of every group
    bool windowReadable = true;  // false: GetCclBufferSize fails (online compilation, super kernels)
    // Read by the real op_host tilings only (opgen/sim/real_host): the platform's NpuArch (2201, 3510; 0: the
    // platform does not report one) and the process's HCCL_BUFFSIZE in bytes (the job's window).
    uint32_t npuArch = 0;
    uint64_t hcclBufferBytes = 0;
    std::vector<TensorArg> inputs;   // IR order; absent optional inputs have present == false
    std::vector<TensorArg> outputs;  // IR order
    std::vector<AttrArg> attrs;      // IR order
};

struct TilingResult {
    bool ok = false;
    std::vector<uint8_t> data;  // the tiling data struct, sizeof(<Op>TilingData) bytes
    uint64_t tilingKey = 0;
    uint32_t blockDim = 0;
    uint32_t aicpuBlocks = 0;  // AI CPU cores the tiling asked for: the HCCL server of BatchWrite tasks
    uint32_t scheduleMode = 0;
    uint64_t workspaceBytes = 0;  // GetWorkspaceSizes(1)[0]
    std::string log;  // every OP_LOGE / OP_LOGW line the tiling function printed, '\n'-separated
    // Non-empty: the tiling asked the host for something the twin does not model (real_host/README.md); the call
    // neither accepted nor rejected the rank.
    std::string fault;
};

}  // namespace opgen_sim

// Defined in the tiling TU.
opgen_sim::TilingResult OpgenSimTiling(const opgen_sim::TilingRequest& request);
// Defined in the kernel TU: args = inputs (nullptr when absent), outputs, workspace, tiling; count checked.
// tilingKey: the key the rank's tiling set; a kernel TU built for one template tiling key (a CANN hand-written
// entry, -DOPGEN_SIM_TILING_KEY) faults on any other.
void OpgenSimKernel(uint8_t* const* args, uint32_t count, uint64_t tilingKey);
// Defined in the kernel TU: the number of GM parameters of the kernel.
uint32_t OpgenSimKernelArity();

#endif  // OPGEN_SIM_LAUNCH_H
