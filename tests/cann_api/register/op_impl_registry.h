// Mirrors register/op_impl_registry.h (hicann/metadef: inc/external/register/op_impl_registry.h):
// gert::OpImplRegisterV2 and the IMPL_OP_INFERSHAPE / IMPL_OP_OPTILING registration macros.
#ifndef CANN_API_REGISTER_OP_IMPL_REGISTRY_H
#define CANN_API_REGISTER_OP_IMPL_REGISTRY_H

#include <cstdint>
#include "exe_graph/runtime/infer_datatype_context.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/tiling_parse_context.h"
#include "graph/ge_error_codes.h"

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
};
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
