/**
 * The tiling TU of a twin executable (see include/opgen_sim/launch.h): the generated host tiling source, compiled
 * unchanged against the twin's CANN host API (include/), and OpgenSimTiling, which runs it for one rank.
 *
 *   g++ -std=c++17 -O1 -Wall -Werror -I opgen/sim/include -I generated/<op>/op_host/op_tiling \
 *       -DOPGEN_SIM_TILING_SOURCE='"/abs/generated/<op>/op_host/op_tiling/<op>_tiling.cpp"' \
 *       -DOPGEN_SIM_TILING_FUNC=optiling::<Op>TilingFunc -c opgen/sim/tiling_entry.cpp
 *
 * How a TilingRequest becomes the context the tiling function reads:
 *   platform (fe::PlatFormInfos)   version/Short_SoC_version = socVersion; SoCInfo/vector_core_cnt = aivNum,
 *                                  cube_core_cnt = ai_core_cnt = aicNum; AICoreSpec/ub_size = ubBytes
 *   mc2tiling::GetCclBufferSize    windowBytes for every (non-empty) group name
 *   GetAttrs()                     attrs[i] at IR index i, stored as CANN stores its kind ('-': nullptr)
 *   inputs                         inputs[i] is IR input i: GetOptionalInputShape/Desc(i) (nullptr when absent);
 *                                  GetInputShape/Desc(n) take the instance index n (present inputs in IR order)
 *   outputs                        GetOutputShape/Desc(i) of outputs[i]; nullptr when absent (dtype not fixed)
 *   shapes                         dims as both the origin and the storage shape
 *   node                           GetNodeName() = nodeName; GetNodeType() = the op type IMPL_OP_OPTILING registers
 * The tiling data buffer has the capacity the registration asks for (Tiling's max_tiling_data_size).  The result's
 * log holds the call's "[ERROR] <node name>: <message>" and "[WARNING] ..." lines (a rejecting check's message ends
 * in "[<check id>]").
 */
#include "opgen_sim/launch.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exe_graph/runtime/tiling_context.h"
#include "opgen_sim/host.h"
#include "platform/platform_infos_def.h"
#include "register/op_impl_registry.h"

#if !defined(OPGEN_SIM_TILING_SOURCE) || !defined(OPGEN_SIM_TILING_FUNC)
#error "define OPGEN_SIM_TILING_SOURCE (the quoted path of <op>_tiling.cpp) and OPGEN_SIM_TILING_FUNC"
#endif

#include OPGEN_SIM_TILING_SOURCE

namespace {

gert::StorageShape MakeShape(const std::vector<int64_t> &dims)
{
    gert::StorageShape shape;
    for (const int64_t dim : dims) {
        shape.MutableOriginShape().AppendDim(dim);
        shape.MutableStorageShape().AppendDim(dim);
    }
    return shape;
}

gert::CompileTimeTensorDesc MakeDesc(const opgen_sim::TensorArg &tensor)
{
    gert::CompileTimeTensorDesc desc;
    desc.SetDataType(static_cast<ge::DataType>(tensor.dtype));
    desc.SetStorageFormat(static_cast<ge::Format>(tensor.format));
    desc.SetOriginFormat(static_cast<ge::Format>(tensor.format));
    return desc;
}

// false for a kind launch.h does not define.
bool AppendAttr(gert::RuntimeAttrs &attrs, const opgen_sim::AttrArg &attr)
{
    switch (attr.kind) {
        case 'i': attrs.OpgenSimAppendInt(attr.i); return true;
        case 'b': attrs.OpgenSimAppendBool(attr.i != 0); return true;
        case 'f': attrs.OpgenSimAppendFloat(static_cast<float>(attr.f)); return true;  // CANN float attrs are fp32
        case 's': attrs.OpgenSimAppendStr(attr.s); return true;
        case 'I': attrs.OpgenSimAppendListInt(attr.ints); return true;
        case '-': attrs.OpgenSimAppendAbsent(); return true;
        default: return false;
    }
}

void FillPlatform(const opgen_sim::TilingRequest &request, fe::PlatFormInfos &platform)
{
    platform.OpgenSimSetPlatformRes("version", "Short_SoC_version", request.socVersion);
    platform.OpgenSimSetPlatformRes("SoCInfo", "vector_core_cnt", std::to_string(request.aivNum));
    platform.OpgenSimSetPlatformRes("SoCInfo", "cube_core_cnt", std::to_string(request.aicNum));
    platform.OpgenSimSetPlatformRes("SoCInfo", "ai_core_cnt", std::to_string(request.aicNum));
    platform.OpgenSimSetPlatformRes("AICoreSpec", "ub_size", std::to_string(request.ubBytes));
}

// The registration of the tiling function under test; nullptr when no IMPL_OP_OPTILING registers it.
const std::pair<const std::string, opgen_sim::OpImplFuncs> *FindRegistration()
{
    for (const auto &entry : opgen_sim::OpImplRegistry()) {
        if (entry.second.tiling == &OPGEN_SIM_TILING_FUNC) {
            return &entry;
        }
    }
    return nullptr;
}

void AppendLog(std::string &log, const std::string &line)
{
    if (!log.empty()) {
        log += '\n';
    }
    log += line;
}

}  // namespace

opgen_sim::TilingResult OpgenSimTiling(const opgen_sim::TilingRequest &request)
{
    opgen_sim::TilingResult result;
    const auto *registration = FindRegistration();
    if (registration == nullptr) {
        result.log = "[ERROR] opgen sim: no IMPL_OP_OPTILING registers the tiling function";
        return result;
    }

    fe::PlatFormInfos platform;
    FillPlatform(request, platform);
    gert::TilingContext context;
    context.OpgenSimSetNode(registration->first, request.nodeName);
    context.OpgenSimSetPlatformInfo(&platform);
    context.OpgenSimInitTilingData(registration->second.maxTilingDataSize);
    for (const opgen_sim::AttrArg &attr : request.attrs) {
        if (!AppendAttr(context.OpgenSimMutableAttrs(), attr)) {
            result.log = std::string("[ERROR] opgen sim: attribute kind '") + attr.kind + "' is not one of i b f s I -";
            return result;
        }
    }
    for (const opgen_sim::TensorArg &input : request.inputs) {
        context.OpgenSimAppendInput(input.present, MakeDesc(input), MakeShape(input.dims));
    }
    for (const opgen_sim::TensorArg &output : request.outputs) {
        context.OpgenSimAppendOutput(output.present, MakeDesc(output), MakeShape(output.dims));
    }

    opgen_sim::HostCall &host = opgen_sim::CurrentHostCall();
    host.log.clear();
    host.windowBytes = request.windowBytes;
    host.windowReadable = request.windowReadable;
    const ge::graphStatus status = OPGEN_SIM_TILING_FUNC(&context);

    result.ok = (status == ge::GRAPH_SUCCESS);
    const gert::TilingData &data = context.OpgenSimTilingData();
    const auto *bytes = static_cast<const uint8_t *>(data.OpgenSimData());
    result.data.assign(bytes, bytes + data.GetDataSize());
    result.tilingKey = context.GetTilingKey();
    result.blockDim = context.GetBlockDim();
    result.aicpuBlocks = context.GetAicpuNumBlocks();
    result.scheduleMode = context.OpgenSimScheduleMode();
    const std::vector<size_t> &workspaces = context.OpgenSimWorkspaceSizes();
    result.workspaceBytes = workspaces.empty() ? 0 : workspaces[0];
    for (const opgen_sim::HostLogLine &line : host.log) {
        if (line.level == 'E' || line.level == 'W') {
            AppendLog(result.log, line.text);
        }
    }
    host.log.clear();
    host.windowBytes = 0;
    host.windowReadable = true;
    return result;
}
