// Mirrors register/op_def_registry.h (hicann/metadef: inc/external/register/op_def_registry.h): the OP_ADD
// registration of a class derived from ops::OpDef (the default build, neither OP_PROTO_LIB nor OP_TILING_LIB).
#ifndef CANN_API_REGISTER_OP_DEF_REGISTRY_H
#define CANN_API_REGISTER_OP_DEF_REGISTRY_H

#include "register/op_def.h"
#include "register/op_def_factory.h"

#define OP_ADD(opType, ...)                                                   \
    static int g_##opType##_added __attribute__((unused)) =                    \
        ops::OpDefFactory::OpDefRegister(#opType, [](const char *name) -> ops::OpDef { return opType(name); })

#endif  // CANN_API_REGISTER_OP_DEF_REGISTRY_H
