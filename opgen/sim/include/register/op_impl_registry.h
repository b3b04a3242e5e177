// Mirrors register/op_impl_registry.h (hicann/metadef: inc/external/register/op_impl_registry.h):
// gert::OpImplRegisterV2 and the IMPL_OP_INFERSHAPE / IMPL_OP_OPTILING registration macros.
// Implemented (the twin runs the tiling code): a registration records its functions in the process's
// opgen_sim::OpImplRegistry() by op type, as CANN's OpImplRegistry does; the twin looks its tiling function up there
// (node type, tiling data capacity) and so also catches a tiling function no IMPL_OP_OPTILING registers.
#ifndef CANN_API_REGISTER_OP_IMPL_REGISTRY_H
#define CANN_API_REGISTER_OP_IMPL_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include "exe_graph/runtime/infer_datatype_context.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/tiling_parse_context.h"
#include "graph/ge_error_codes.h"

namespace opgen_sim {
// Twin only: the functions registered for one op type.
struct OpImplFuncs {
    uint32_t (*inferShape)(gert::InferShapeContext *) = nullptr;
    uint32_t (*inferDataType)(gert::InferDataTypeContext *) = nullptr;
    uint32_t (*tiling)(gert::TilingContext *) = nullptr;
    uint32_t (*tilingParse)(gert::TilingParseContext *) = nullptr;
    size_t maxTilingDataSize = 0;  // the tiling data capacity the op asked for
};

// Filled while static registrations initialise, read afterwards.
inline std::map<std::string, OpImplFuncs> &OpImplRegistry()
{
    static std::map<std::string, OpImplFuncs> registry;
    return registry;
}
}  // namespace opgen_sim

namespace gert {
class OpImplRegisterV2 {
public:
    using InferShapeKernelFunc = uint32_t (*)(InferShapeContext *);
    using InferDataTypeKernelFunc = uint32_t (*)(InferDataTypeContext *);
    using TilingKernelFunc = uint32_t (*)(TilingContext *);
    using TilingParseFunc = uint32_t (*)(TilingParseContext *);

    explicit OpImplRegisterV2(const char *op_type);
    OpImplRegisterV2(const OpImplRegisterV2 &register_data);
    ~OpImplRegisterV2();
    OpImplRegisterV2 &InferShape(InferShapeKernelFunc infer_shape_func);
    OpImplRegisterV2 &InferDataType(InferDataTypeKernelFunc infer_datatype_func);
    OpImplRegisterV2 &Tiling(TilingKernelFunc tiling_func, size_t max_tiling_data_size = 2048);
    template <typename T>
    OpImplRegisterV2 &TilingParse(TilingParseFunc tiling_parse_func);

private:
    opgen_sim::OpImplFuncs &Funcs() { return opgen_sim::OpImplRegistry()[op_type_]; }

    std::string op_type_;
};

inline OpImplRegisterV2::OpImplRegisterV2(const char *op_type) : op_type_(op_type == nullptr ? "" : op_type)
{
    Funcs();
}

inline OpImplRegisterV2::OpImplRegisterV2(const OpImplRegisterV2 &register_data) = default;

inline OpImplRegisterV2::~OpImplRegisterV2() = default;

inline OpImplRegisterV2 &OpImplRegisterV2::InferShape(InferShapeKernelFunc infer_shape_func)
{
    Funcs().inferShape = infer_shape_func;
    return *this;
}

inline OpImplRegisterV2 &OpImplRegisterV2::InferDataType(InferDataTypeKernelFunc infer_datatype_func)
{
    Funcs().inferDataType = infer_datatype_func;
    return *this;
}

inline OpImplRegisterV2 &OpImplRegisterV2::Tiling(TilingKernelFunc tiling_func, size_t max_tiling_data_size)
{
    Funcs().tiling = tiling_func;
    Funcs().maxTilingDataSize = max_tiling_data_size;
    return *this;
}

// T is the op's compile info type, which the tiling parse function fills; the twin does not parse compile info.
template <typename T>
inline OpImplRegisterV2 &OpImplRegisterV2::TilingParse(TilingParseFunc tiling_parse_func)
{
    Funcs().tilingParse = tiling_parse_func;
    return *this;
}
}  // namespace gert

#define OPGEN_CANN_API_IMPL_OP_CAT_(a, b) a##b
#define OPGEN_CANN_API_IMPL_OP_CAT(a, b) OPGEN_CANN_API_IMPL_OP_CAT_(a, b)
#define IMPL_OP_INNER(op_type, name)                                                                  \
    static gert::OpImplRegisterV2 __attribute__((unused)) OPGEN_CANN_API_IMPL_OP_CAT(name, __COUNTER__) = \
        gert::OpImplRegisterV2(#op_type)
#define IMPL_OP(op_type) IMPL_OP_INNER(op_type, op_impl_register_##op_type)
#define IMPL_OP_INFERSHAPE(op_type) IMPL_OP_INNER(op_type, op_impl_register_infershape_##op_type)
#define IMPL_OP_OPTILING(op_type) IMPL_OP_INNER(op_type, op_impl_register_optiling_##op_type)

#endif  // CANN_API_REGISTER_OP_IMPL_REGISTRY_H
