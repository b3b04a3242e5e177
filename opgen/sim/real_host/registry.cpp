/**
 * libregister's out-of-line pieces the real tilings use: the op implementation registry behind IMPL_OP /
 * IMPL_OP_OPTILING (register/op_impl_registry.h) and the BEGIN_TILING_DATA_DEF runtime (register/tilingdata_base.h:
 * CTilingDataClassFactory, TilingDef).  Semantics of metadef's implementation: a TilingDef aligns every field to
 * its own size with a uint8_t placeholder, InitData allocates the zeroed data and points nested structs into it,
 * SetDataPtr moves the data to a caller's buffer; the factory maps an op type to its tiling data constructor.
 */
#include <map>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "host_state.h"
#include "register/op_impl_registry.h"
#include "register/tilingdata_base.h"

namespace gert {

class OpImplRegisterV2Impl {
public:
    std::string opType;
};

}  // namespace gert

namespace {

std::map<std::string, opgen_sim_real::Registration> &Registry()
{
    static std::map<std::string, opgen_sim_real::Registration> registry;
    return registry;
}

}  // namespace

namespace opgen_sim_real {

const Registration *FindRegistration(const std::string &opType)
{
    const auto it = Registry().find(opType);
    return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> TilingOpTypes()
{
    std::vector<std::string> out;
    for (const auto &entry : Registry()) {
        if (entry.second.tiling != nullptr) {
            out.push_back(entry.first);
        }
    }
    return out;
}

}  // namespace opgen_sim_real

namespace gert {

OpImplRegisterV2::OpImplRegisterV2(const ge::char_t *op_type) : impl_(new OpImplRegisterV2Impl)
{
    impl_->opType = op_type == nullptr ? "" : op_type;
    Registry()[impl_->opType];
}

OpImplRegisterV2::OpImplRegisterV2(OpImplRegisterV2 &&register_data) noexcept = default;

OpImplRegisterV2::OpImplRegisterV2(const OpImplRegisterV2 &register_data)
    : impl_(new OpImplRegisterV2Impl(*register_data.impl_))
{
}

OpImplRegisterV2::~OpImplRegisterV2() = default;

OpImplRegisterV2 &OpImplRegisterV2::Tiling(TilingKernelFunc tiling_func, size_t max_tiling_data_size)
{
    opgen_sim_real::Registration &reg = Registry()[impl_->opType];
    reg.tiling = tiling_func;
    reg.maxTilingDataSize = max_tiling_data_size;
    return *this;
}

OpImplRegisterV2 &OpImplRegisterV2::TilingParse(KernelFunc tiling_parse_func, CompileInfoCreatorFunc creator_func,
                                                CompileInfoDeleterFunc deleter_func)
{
    opgen_sim_real::Registration &reg = Registry()[impl_->opType];
    reg.tilingParse = tiling_parse_func;
    reg.createCompileInfo = creator_func;
    reg.deleteCompileInfo = deleter_func;
    return *this;
}

// Device exception dumps are not modelled (log.cpp): the callback is accepted and never called.
OpImplRegisterV2 &OpImplRegisterV2::ExceptionDumpParseFunc(ExceptionDumpFunc exception_func)
{
    (void)exception_func;
    return *this;
}

}  // namespace gert

namespace optiling {

void TilingDef::CheckAlignAndGenPlaceHolder(const char *name, size_t typeSize)
{
    if (typeSize == 0U || data_size_ % typeSize == 0U) {
        return;
    }
    const size_t pad = typeSize - data_size_ % typeSize;
    field_info_.emplace_back(FieldInfo("uint8_t", name, pad));
    data_size_ += pad;
}

void TilingDef::InitData()
{
    data_ptr_ = new (std::nothrow) uint8_t[data_size_]();
    if (data_ptr_ == nullptr) {
        return;
    }
    for (auto &nested : saveBufferPtr) {
        static_cast<TilingDef *>(nested.first)->SetDataPtr(data_ptr_ + nested.second);
    }
}

void TilingDef::SetDataPtr(void *dataPtr)
{
    if (!inited_data_ptr && data_ptr_ != nullptr) {
        delete[] data_ptr_;
    }
    inited_data_ptr = true;
    data_ptr_ = static_cast<uint8_t *>(dataPtr);
    for (auto &nested : saveBufferPtr) {
        static_cast<TilingDef *>(nested.first)->SetDataPtr(data_ptr_ + nested.second);
    }
}

CTilingDataClassFactory &CTilingDataClassFactory::GetInstance()
{
    static CTilingDataClassFactory instance;
    return instance;
}

void CTilingDataClassFactory::RegisterTilingData(const char *op_type, const TilingDataConstructor constructor)
{
    instance_.emplace(op_type, constructor);
}

std::shared_ptr<TilingDef> CTilingDataClassFactory::CreateTilingDataInstance(const char *op_type)
{
    const auto it = instance_.find(op_type);
    return it == instance_.end() ? nullptr : it->second();
}

}  // namespace optiling
