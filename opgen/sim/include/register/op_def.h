// Mirrors register/op_def.h (hicann/metadef: inc/external/register/op_def.h): OpDef, OpParamDef, OpAttrDef,
// OpAICoreConfig, OpAICoreDef and OpMC2Def as op_host *_def.cpp files use them.
#ifndef CANN_API_REGISTER_OP_DEF_H
#define CANN_API_REGISTER_OP_DEF_H

#include <cstdint>
#include <memory>
#include <vector>
#include "graph/types.h"
#include "register/op_impl_registry.h"

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

class OpParamDefImpl;
class OpParamDef {
public:
    explicit OpParamDef(const char *name);
    OpParamDef(const OpParamDef &def);
    ~OpParamDef();
    OpParamDef &operator=(const OpParamDef &def);
    OpParamDef &ParamType(Option param_type);
    OpParamDef &DataType(std::vector<ge::DataType> types);
    OpParamDef &DataTypeList(std::vector<ge::DataType> types);
    OpParamDef &Format(std::vector<ge::Format> formats);
    OpParamDef &FormatList(std::vector<ge::Format> formats);
    OpParamDef &UnknownShapeFormat(std::vector<ge::Format> formats);
    OpParamDef &IgnoreContiguous(void);
    OpParamDef &AutoContiguous();
    OpParamDef &Comment(const char *comment);

private:
    std::unique_ptr<OpParamDefImpl> impl_;
};

class OpAttrDefImpl;
class OpAttrDef {
public:
    explicit OpAttrDef(const char *name);
    OpAttrDef(const OpAttrDef &attr_def);
    ~OpAttrDef();
    OpAttrDef &operator=(const OpAttrDef &attr_def);
    OpAttrDef &AttrType(Option attr_type);
    OpAttrDef &Bool(void);
    OpAttrDef &Bool(bool value);
    OpAttrDef &Float(void);
    OpAttrDef &Float(float value);
    OpAttrDef &Int(void);
    OpAttrDef &Int(int64_t value);
    OpAttrDef &String(void);
    OpAttrDef &String(const char *value);
    OpAttrDef &ListBool(void);
    OpAttrDef &ListBool(std::vector<bool> value);
    OpAttrDef &ListFloat(void);
    OpAttrDef &ListFloat(std::vector<float> value);
    OpAttrDef &ListInt(void);
    OpAttrDef &ListInt(std::vector<int64_t> value);
    OpAttrDef &Comment(const char *comment);

private:
    std::unique_ptr<OpAttrDefImpl> impl_;
};

class OpAICoreConfigImpl;
class OpAICoreConfig {
public:
    OpAICoreConfig();
    OpAICoreConfig(const char *soc);
    OpAICoreConfig(const OpAICoreConfig &aicore_config);
    ~OpAICoreConfig();
    OpAICoreConfig &operator=(const OpAICoreConfig &aicore_config);
    OpParamDef &Input(const char *name);
    OpParamDef &Output(const char *name);
    OpAICoreConfig &DynamicCompileStaticFlag(bool flag);
    OpAICoreConfig &DynamicFormatFlag(bool flag);
    OpAICoreConfig &DynamicRankSupportFlag(bool flag);
    OpAICoreConfig &DynamicShapeSupportFlag(bool flag);
    OpAICoreConfig &NeedCheckSupportFlag(bool flag);
    OpAICoreConfig &PrecisionReduceFlag(bool flag);
    OpAICoreConfig &ExtendCfgInfo(const char *key, const char *value);

private:
    std::unique_ptr<OpAICoreConfigImpl> impl_;
};

class OpAICoreDefImpl;
class OpAICoreDef {
public:
    OpAICoreDef();
    OpAICoreDef(const OpAICoreDef &aicore_def);
    ~OpAICoreDef();
    OpAICoreDef &operator=(const OpAICoreDef &aicore_def);
    OpAICoreDef &AddConfig(const char *soc);
    OpAICoreDef &AddConfig(const char *soc, OpAICoreConfig &aicore_config);

private:
    std::unique_ptr<OpAICoreDefImpl> impl_;
};

class OpMC2DefImpl;
class OpMC2Def {
public:
    OpMC2Def();
    OpMC2Def(const OpMC2Def &mc2_def);
    ~OpMC2Def();
    OpMC2Def &operator=(const OpMC2Def &mc2_def);
    OpMC2Def &HcclGroup(const char *value);
    OpMC2Def &HcclGroup(std::vector<const char *> value);

private:
    std::unique_ptr<OpMC2DefImpl> impl_;
};

class OpDefImpl;
class OpDef {
public:
    explicit OpDef(const char *type);
    OpDef(const OpDef &op_def);
    ~OpDef();
    OpDef &operator=(const OpDef &op_def);
    OpParamDef &Input(const char *name);
    OpParamDef &Output(const char *name);
    OpAttrDef &Attr(const char *name);
    OpAICoreDef &AICore(void);
    OpMC2Def &MC2(void);

private:
    std::unique_ptr<OpDefImpl> impl_;
};
}  // namespace ops

#endif  // CANN_API_REGISTER_OP_DEF_H
