// Mirrors exe_graph/runtime/extended_kernel_context.h
// (hicann/metadef: inc/external/exe_graph/runtime/extended_kernel_context.h).
// Implemented (the twin runs the tiling code), with metadef's two numberings of inputs: GetInputDesc(index) takes
// the instance index (the node's inputs that are present, counted in IR order), GetOptionalInputDesc(ir_index)
// the IR index (nullptr when that optional input is absent).  Outputs are required, so both numberings agree.
#ifndef CANN_API_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H
#define CANN_API_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H

#include <cstddef>
#include <string>
#include <vector>
#include "exe_graph/runtime/compute_node_info.h"
#include "exe_graph/runtime/runtime_attrs.h"

namespace gert {
class ExtendedKernelContext {
public:
    const CompileTimeTensorDesc *GetInputDesc(size_t index) const;
    const CompileTimeTensorDesc *GetOptionalInputDesc(size_t ir_index) const;
    const CompileTimeTensorDesc *GetOutputDesc(size_t index) const;
    const char *GetNodeType() const;
    const char *GetNodeName() const;
    const RuntimeAttrs *GetAttrs() const;

    // ---- opgen twin only: setup, by whoever builds the context ----
    void OpgenSimSetNode(const std::string &type, const std::string &name)
    {
        node_type_ = type;
        node_name_ = name;
    }
    RuntimeAttrs &OpgenSimMutableAttrs() { return attrs_; }
    // The next IR input: present (one instance) or an absent optional input (no instance).
    void OpgenSimAppendInputDesc(bool present, const CompileTimeTensorDesc &desc)
    {
        input_instance_.push_back(present ? input_descs_.size() : kAbsent);
        if (present) {
            input_descs_.push_back(desc);
        }
    }
    // The next IR output; one left absent reads as nullptr (the twin's "the caller did not fix its dtype").
    void OpgenSimAppendOutputDesc(bool present, const CompileTimeTensorDesc &desc)
    {
        output_present_.push_back(present);
        output_descs_.push_back(desc);
    }

protected:
    static constexpr size_t kAbsent = static_cast<size_t>(-1);

    // The instance index of IR input ir_index; kAbsent when the node does not carry it.
    size_t InputInstance(size_t ir_index) const
    {
        return ir_index < input_instance_.size() ? input_instance_[ir_index] : kAbsent;
    }
    bool OutputPresent(size_t index) const { return index < output_present_.size() && output_present_[index]; }

private:
    std::string node_type_;
    std::string node_name_;
    RuntimeAttrs attrs_;
    std::vector<size_t> input_instance_;              // per IR input
    std::vector<CompileTimeTensorDesc> input_descs_;  // per instance
    std::vector<bool> output_present_;                // per output
    std::vector<CompileTimeTensorDesc> output_descs_;
};

inline const CompileTimeTensorDesc *ExtendedKernelContext::GetInputDesc(size_t index) const
{
    return index < input_descs_.size() ? &input_descs_[index] : nullptr;
}

inline const CompileTimeTensorDesc *ExtendedKernelContext::GetOptionalInputDesc(size_t ir_index) const
{
    const size_t instance = InputInstance(ir_index);
    return instance == kAbsent ? nullptr : &input_descs_[instance];
}

inline const CompileTimeTensorDesc *ExtendedKernelContext::GetOutputDesc(size_t index) const
{
    return OutputPresent(index) ? &output_descs_[index] : nullptr;
}

inline const char *ExtendedKernelContext::GetNodeType() const
{
    return node_type_.c_str();
}

inline const char *ExtendedKernelContext::GetNodeName() const
{
    return node_name_.c_str();
}

inline const RuntimeAttrs *ExtendedKernelContext::GetAttrs() const
{
    return &attrs_;
}
}  // namespace gert

#endif  // CANN_API_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H
