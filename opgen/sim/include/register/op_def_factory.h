// Mirrors register/op_def_factory.h (hicann/metadef: inc/external/register/op_def_factory.h).
#ifndef CANN_API_REGISTER_OP_DEF_FACTORY_H
#define CANN_API_REGISTER_OP_DEF_FACTORY_H

#include <functional>
#include "register/op_def.h"

namespace ops {
using OpDefCreator = std::function<OpDef(const char *)>;

class OpDefFactory {
public:
    static int OpDefRegister(const char *name, OpDefCreator creator);
};
}  // namespace ops

#endif  // CANN_API_REGISTER_OP_DEF_FACTORY_H
