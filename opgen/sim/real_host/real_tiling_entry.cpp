/**
 * The tiling TU of a twin executable whose host tiling is a real op_host tiling (see README.md in this folder and
 * opgen_sim/launch.h): OpgenSimTiling builds the gert::TilingContext the CANN runtime hands a tiling function, in
 * the memory layout the public headers read (exe_graph/runtime: KernelRunContext, ComputeNodeInfo, Chain), and
 * runs the function IMPL_OP_OPTILING registered.  Compiled against the real public CANN headers; the real tiling
 * sources are separate objects of the same executable.
 *
 *   context inputs    one StorageShape per present input (IR order), one per output, the compile info (the
 *                     object TilingParse filled), the platform (fe::PlatFormInfos*), the tiling function,
 *                     deterministic 0, deterministic level 0
 *   context outputs   tiling key, block dim, atomic clean flag, TilingData*, workspace sizes (a vector of one),
 *                     tiling cond, schedule mode, dynamic UB size, AI CPU block dim, SIMT block dim, SIMT grid dim
 *   ComputeNodeInfo   node type = the registered op type, node name = the request's; input instances: one per
 *                     present IR input (an absent optional input: none); tensor descs of the present inputs and of
 *                     every output (origin = storage format, the request's dims as origin and storage shape)
 *   RuntimeAttrs      the request's attributes at their IR index ('-': GetAttrPointer returns nullptr)
 *   platform          version: Short_SoC_version, NpuArch; SoCInfo: core_type_list "CubeCore,VectorCore" (the
 *                     twin's products have split cube and vector cores), vector_core_cnt, cube_core_cnt,
 *                     ai_core_cnt; AICoreSpec: ub_size; core num = the vector cores
 *   environment       HCCL_BUFFSIZE = hcclBufferBytes in MiB (mc2tiling::Mc2TilingUtils::GetMaxWindowSize reads it)
 *   HCCL              every named group reports windowBytes as its CCL buffer (hccl.cpp)
 * The tiling data buffer has the capacity the registration asks for (Tiling's max_tiling_data_size).
 */
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "exe_graph/runtime/compute_node_info.h"
#include "exe_graph/runtime/continuous_vector.h"
#include "exe_graph/runtime/kernel_run_context.h"
#include "exe_graph/runtime/runtime_attrs.h"
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/tiling_data.h"
#include "exe_graph/runtime/tiling_parse_context.h"
#include "host_state.h"
#include "opgen_sim/launch.h"
#include "platform/platform_infos_def.h"

namespace {

constexpr size_t ABSENT = std::numeric_limits<size_t>::max();
constexpr uint64_t MIB = 1ULL << 20;
constexpr size_t WORKSPACE_CAPACITY = 1;

size_t Align8(size_t n) { return (n + 7U) & ~static_cast<size_t>(7U); }

// The RuntimeAttrs blob (the layout is the twin's: the header keeps it opaque behind GetPointerByIndex):
// attr count, one offset per attr from the blob's start (ABSENT: not given), then the values, 8-byte aligned.
std::vector<uint8_t> AttrBlob(const std::vector<opgen_sim::AttrArg> &attrs)
{
    const size_t n = attrs.size();
    std::vector<uint8_t> blob(sizeof(size_t) * (1U + n), 0U);
    std::memcpy(blob.data(), &n, sizeof(size_t));
    for (size_t i = 0; i < n; ++i) {
        const opgen_sim::AttrArg &a = attrs[i];
        size_t offset = ABSENT;
        std::vector<uint8_t> value;
        auto put = [&value](const void *p, size_t size) {
            const auto *b = static_cast<const uint8_t *>(p);
            value.insert(value.end(), b, b + size);
        };
        switch (a.kind) {
            case 'i': put(&a.i, sizeof(int64_t)); break;
            case 'b': { const bool v = a.i != 0; put(&v, sizeof(bool)); break; }
            case 'f': { const float v = static_cast<float>(a.f); put(&v, sizeof(float)); break; }
            case 's': put(a.s.c_str(), a.s.size() + 1U); break;
            case 'I': {
                size_t total = 0;
                auto holder = gert::ContinuousVector::Create<int64_t>(a.ints.size(), total);
                auto *vec = reinterpret_cast<gert::ContinuousVector *>(holder.get());
                vec->SetSize(a.ints.size());
                if (!a.ints.empty()) {
                    std::memcpy(vec->MutableData(), a.ints.data(), a.ints.size() * sizeof(int64_t));
                }
                put(holder.get(), total);
                break;
            }
            default: break;  // '-': absent
        }
        if (a.kind != '-') {
            offset = blob.size();
            blob.insert(blob.end(), value.begin(), value.end());
            blob.resize(Align8(blob.size()), 0U);
        }
        std::memcpy(blob.data() + sizeof(size_t) * (1U + i), &offset, sizeof(size_t));
    }
    return blob;
}

// One KernelRunContext: `inputs` then `outputs` chains (AsyncAnyValue), values kept alive by the holder.
class ContextHolder {
public:
    ContextHolder(size_t inputs, size_t outputs, const void *nodeInfo)
        : chains_(inputs + outputs),
          raw_(new uint8_t[sizeof(KernelRunContext) + sizeof(AsyncAnyValue *) * (inputs + outputs)]())
    {
        context_ = reinterpret_cast<KernelRunContext *>(raw_.get());
        context_->input_size = inputs;
        context_->output_size = outputs;
        context_->compute_node_info = nodeInfo;
        context_->kernel_extend_info = nullptr;
        for (size_t i = 0; i < chains_.size(); ++i) {
            chains_[i] = AsyncAnyValue{};
            context_->values[i] = &chains_[i];
        }
        context_->output_start = &context_->values[inputs];
    }
    template <typename T>
    void Inplace(size_t index, T value)  // a value of at most pointer size, stored in the chain itself
    {
        static_assert(sizeof(T) <= sizeof(void *), "inplace values fit a pointer");
        std::memcpy(chains_[index].data.inplace, &value, sizeof(T));
    }
    void Pointer(size_t index, void *p) { chains_[index].data.pointer = p; }
    template <typename C>
    C *As() { return reinterpret_cast<C *>(context_); }

private:
    std::vector<AsyncAnyValue> chains_;
    std::unique_ptr<uint8_t[]> raw_;
    KernelRunContext *context_ = nullptr;
};

void FillPlatform(const opgen_sim::TilingRequest &request, fe::PlatFormInfos &platform)
{
    platform.Init();
    std::map<std::string, std::string> version{{"Short_SoC_version", request.socVersion}};
    if (request.npuArch != 0U) {
        version["NpuArch"] = std::to_string(request.npuArch);
    }
    std::map<std::string, std::string> soc{{"core_type_list", "CubeCore,VectorCore"},
                                           {"vector_core_cnt", std::to_string(request.aivNum)},
                                           {"cube_core_cnt", std::to_string(request.aicNum)},
                                           {"ai_core_cnt", std::to_string(request.aicNum)}};
    std::map<std::string, std::string> core{{"ub_size", std::to_string(request.ubBytes)}};
    platform.SetPlatformRes("version", version);
    platform.SetPlatformRes("SoCInfo", soc);
    platform.SetPlatformRes("AICoreSpec", core);
    platform.SetCoreNumByCoreType("VectorCore");
}

gert::StorageShape MakeShape(const std::vector<int64_t> &dims)
{
    gert::StorageShape shape;
    for (const int64_t dim : dims) {
        shape.MutableOriginShape().AppendDim(dim);
        shape.MutableStorageShape().AppendDim(dim);
    }
    return shape;
}

void FillDesc(gert::CompileTimeTensorDesc &desc, const opgen_sim::TensorArg &tensor)
{
    new (&desc) gert::CompileTimeTensorDesc();
    desc.SetDataType(static_cast<ge::DataType>(tensor.present ? tensor.dtype : ge::DT_UNDEFINED));
    desc.SetStorageFormat(static_cast<ge::Format>(tensor.format));
    desc.SetOriginFormat(static_cast<ge::Format>(tensor.format));
    desc.SetExist(tensor.present);
}

std::string Join(const std::vector<opgen_sim_real::LogLine> &log)
{
    std::string out;
    for (const auto &line : log) {
        if (!out.empty()) {
            out += '\n';
        }
        out += (line.level == 'E' ? "[ERROR] " : "[WARNING] ") + line.text;
    }
    return out;
}

opgen_sim::TilingResult Tile(const opgen_sim::TilingRequest &request, const std::string &opType,
                             const opgen_sim_real::Registration &reg)
{
    opgen_sim::TilingResult result;
    fe::PlatFormInfos platform;
    FillPlatform(request, platform);
    setenv("HCCL_BUFFSIZE", std::to_string(request.hcclBufferBytes / MIB).c_str(), 1);

    // TilingParse first, as the runtime does once per compiled op: it fills the compile info tiling reads
    std::unique_ptr<void, void (*)(void *)> compileInfo(
        reg.createCompileInfo != nullptr ? reg.createCompileInfo() : nullptr,
        reg.deleteCompileInfo != nullptr ? reg.deleteCompileInfo : +[](void *) {});

    // ---- ComputeNodeInfo
    std::vector<size_t> present;  // IR index of each present input
    for (size_t i = 0; i < request.inputs.size(); ++i) {
        if (request.inputs[i].present) {
            present.push_back(i);
        }
    }
    const size_t irIn = request.inputs.size(), irOut = request.outputs.size();
    const size_t nIn = present.size(), nOut = request.outputs.size();
    const std::vector<uint8_t> attrs = AttrBlob(request.attrs);
    const size_t infoBytes = sizeof(gert::ComputeNodeInfo) - sizeof(uint64_t) +
                             sizeof(gert::AnchorInstanceInfo) * (irIn + irOut) +
                             sizeof(gert::CompileTimeTensorDesc) * (nIn + nOut) + attrs.size();
    std::vector<uint64_t> infoMem((infoBytes + 7U) / 8U + 1U, 0U);
    auto *info = reinterpret_cast<gert::ComputeNodeInfo *>(infoMem.data());
    info->Init(irIn, irOut, nIn, nOut, attrs.size(), request.nodeName.c_str(), opType.c_str());
    size_t instance = 0;
    for (size_t i = 0; i < irIn; ++i) {
        const uint32_t count = request.inputs[i].present ? 1U : 0U;
        new (info->MutableInputInstanceInfo(i)) gert::AnchorInstanceInfo(static_cast<uint32_t>(instance), count);
        instance += count;
    }
    for (size_t i = 0; i < irOut; ++i) {
        new (info->MutableOutputInstanceInfo(i)) gert::AnchorInstanceInfo(static_cast<uint32_t>(i), 1U);
    }
    for (size_t n = 0; n < nIn; ++n) {
        FillDesc(*info->MutableInputTdInfo(n), request.inputs[present[n]]);
    }
    for (size_t n = 0; n < nOut; ++n) {
        FillDesc(*info->MutableOutputTdInfo(n), request.outputs[n]);
    }
    std::memcpy(info->MutableAttrs(), attrs.data(), attrs.size());

    if (reg.tilingParse != nullptr) {
        // the compiled op's JSON is not modelled: GetCompiledJson() is nullptr
        ContextHolder parse(2U, 1U, info);
        parse.Inplace<const char *>(0U, nullptr);
        parse.Inplace<fe::PlatFormInfos *>(1U, &platform);
        parse.Inplace<void *>(2U, compileInfo.get());
        if (reg.tilingParse(parse.As<gert::KernelContext>()) != ge::GRAPH_SUCCESS) {
            result.log = Join(opgen_sim_real::CurrentCall().log);
            if (!result.log.empty()) {
                result.log += '\n';
            }
            result.log += "[ERROR] opgen sim: the TilingParse of " + opType + " failed";
            return result;
        }
    }

    // ---- the tiling context
    std::vector<gert::StorageShape> shapes;
    shapes.reserve(nIn + nOut);
    for (const size_t i : present) {
        shapes.push_back(MakeShape(request.inputs[i].dims));
    }
    for (const opgen_sim::TensorArg &out : request.outputs) {
        shapes.push_back(MakeShape(out.dims));
    }
    const size_t extra = 5U;  // compile info, platform, tiling function, deterministic, deterministic level
    ContextHolder holder(nIn + nOut + extra, gert::TilingContext::kOutputNum, info);
    for (size_t i = 0; i < shapes.size(); ++i) {
        holder.Pointer(i, &shapes[i]);
    }
    const size_t base = nIn + nOut;
    holder.Inplace<void *>(base, compileInfo.get());
    holder.Inplace<fe::PlatFormInfos *>(base + 1U, &platform);
    holder.Inplace<void *>(base + 2U, reinterpret_cast<void *>(reg.tiling));
    holder.Inplace<int32_t>(base + 3U, 0);
    holder.Inplace<int32_t>(base + 4U, 0);

    auto tilingData = gert::TilingData::CreateCap(reg.maxTilingDataSize);
    auto workspace = gert::ContinuousVector::Create<size_t>(WORKSPACE_CAPACITY);
    gert::Dim3 simtBlock(0U, 0U, 0U), simtGrid(0U, 0U, 0U);
    const size_t out = base + extra;
    holder.Inplace<uint64_t>(out + gert::TilingContext::kOutputTilingKey, 0U);
    holder.Inplace<uint32_t>(out + gert::TilingContext::kOutputSimdNumBlocks, 0U);
    holder.Inplace<bool>(out + gert::TilingContext::kOutputAtomicCleanFlag, false);
    holder.Inplace<gert::TilingData *>(out + gert::TilingContext::kOutputTilingData,
                                       reinterpret_cast<gert::TilingData *>(tilingData.get()));
    holder.Pointer(out + gert::TilingContext::kOutputWorkspace, workspace.get());
    holder.Inplace<int32_t>(out + gert::TilingContext::kOutputTilingCond, 0);
    holder.Inplace<uint32_t>(out + gert::TilingContext::kOutputScheduleMode, 0U);
    holder.Inplace<uint32_t>(out + gert::TilingContext::kOutputDynUBufSize, 0U);
    holder.Inplace<uint32_t>(out + gert::TilingContext::kOutputAicpuNumBlocks, 0U);
    holder.Pointer(out + gert::TilingContext::kOutputSimtBlockDim, &simtBlock);
    holder.Pointer(out + gert::TilingContext::kOutputSimtGridDim, &simtGrid);

    auto *context = holder.As<gert::TilingContext>();
    const ge::graphStatus status = reg.tiling(context);

    result.ok = status == ge::GRAPH_SUCCESS;
    const auto *data = reinterpret_cast<gert::TilingData *>(tilingData.get());
    const auto *bytes = static_cast<const uint8_t *>(data->GetData());
    result.data.assign(bytes, bytes + data->GetDataSize());
    result.tilingKey = context->GetTilingKey();
    result.blockDim = context->GetBlockDim();
    result.aicpuBlocks = context->GetAicpuBlockDim();
    result.scheduleMode = context->GetScheduleMode();
    const auto *sizes = reinterpret_cast<const gert::TypedContinuousVector<size_t> *>(workspace.get());
    result.workspaceBytes = sizes->GetSize() == 0U ? 0U : sizes->GetData()[0];
    result.log = Join(opgen_sim_real::CurrentCall().log);
    return result;
}

}  // namespace

namespace opgen_sim_real {

Call &CurrentCall()
{
    static Call call;
    return call;
}

}  // namespace opgen_sim_real

// ---- exe_graph's out-of-line ComputeNodeInfo / RuntimeAttrs (the layout compute_node_info.h documents:
// the inputs' AnchorInstanceInfo, the inputs' and outputs' CompileTimeTensorDesc, the RuntimeAttrs, the
// outputs' AnchorInstanceInfo, from place_holder on)
namespace gert {

void ComputeNodeInfo::Init(const size_t ir_inputs_num, const size_t ir_outputs_num, const size_t inputs_num,
                           const size_t outputs_num, const size_t attr_size, const ge::char_t *node_name,
                           const ge::char_t *node_type)
{
    node_type_ = node_type;
    node_name_ = node_name;
    ir_inputs_num_ = ir_inputs_num;
    inputs_num_ = inputs_num;
    outputs_num_ = outputs_num;
    ir_outputs_num_ = ir_outputs_num;
    runtime_attr_size_ = attr_size;
    std::memset(reserved_, 0, sizeof(reserved_));
}

AnchorInstanceInfo *ComputeNodeInfo::MutableInputInstanceInfo(const size_t ir_index) const
{
    return const_cast<AnchorInstanceInfo *>(GetInputInstanceInfo(ir_index));
}

AnchorInstanceInfo *ComputeNodeInfo::MutableOutputInstanceInfo(const size_t ir_index) const
{
    return const_cast<AnchorInstanceInfo *>(GetOutputInstanceInfo(ir_index));
}

CompileTimeTensorDesc *ComputeNodeInfo::MutableInputTdInfo(const size_t index) const
{
    return const_cast<CompileTimeTensorDesc *>(GetInputTdInfo(index));
}

CompileTimeTensorDesc *ComputeNodeInfo::MutableOutputTdInfo(const size_t index) const
{
    return const_cast<CompileTimeTensorDesc *>(GetOutputTdInfo(index));
}

RuntimeAttrs *ComputeNodeInfo::MutableAttrs() const { return const_cast<RuntimeAttrs *>(GetAttrs()); }

size_t RuntimeAttrs::GetAttrNum() const
{
    size_t n = 0;
    std::memcpy(&n, this, sizeof(size_t));
    return n;
}

const void *RuntimeAttrs::GetPointerByIndex(size_t index) const
{
    if (index >= GetAttrNum()) {
        return nullptr;
    }
    const auto *base = reinterpret_cast<const uint8_t *>(this);
    size_t offset = 0;
    std::memcpy(&offset, base + sizeof(size_t) * (1U + index), sizeof(size_t));
    return offset == ABSENT ? nullptr : base + offset;
}

}  // namespace gert

opgen_sim::TilingResult OpgenSimTiling(const opgen_sim::TilingRequest &request)
{
    opgen_sim::TilingResult result;
    // An op library may hold its partner's tiling too (CombineAddRmsNorm's calls CombineV2's): the runtime looks
    // the tiling function up by the node's op type, as the twin does; it must be registered.
    const std::vector<std::string> types = opgen_sim_real::TilingOpTypes();
    const std::string opType = types.size() == 1U ? types[0] : request.nodeName;
    if (opgen_sim_real::FindRegistration(opType) == nullptr ||
        opgen_sim_real::FindRegistration(opType)->tiling == nullptr) {
        std::string known;
        for (const auto &type : types) {
            known += (known.empty() ? "" : ", ") + type;
        }
        result.fault = "opgen sim: the executable registers no tiling function of op type '" + opType +
                       "' (registered: " + known + ")";
        return result;
    }
    opgen_sim_real::Call &call = opgen_sim_real::CurrentCall();
    call = opgen_sim_real::Call{};
    call.active = true;
    call.socVersion = request.socVersion;
    call.cclBufferBytes = request.windowBytes;
    try {
        result = Tile(request, opType, *opgen_sim_real::FindRegistration(opType));
    } catch (const opgen_sim_real::HostFault &fault) {
        result = opgen_sim::TilingResult{};
        result.fault = fault.what();
        result.log = Join(call.log);
    }
    call = opgen_sim_real::Call{};
    return result;
}
