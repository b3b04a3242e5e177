/**
 * CANN's template tiling key (asc-devkit include/utils/tiling/template_argument.h, installed as
 * ascendc/host_api/tiling/template_argument.h), implemented by the twin for the host and the kernel side alike.
 *
 * An op declares its template parameters once (ASCENDC_TPL_ARGS_DECL: name, bit width, allowed values) and the
 * combinations it builds kernels for (ASCENDC_TPL_SEL of ASCENDC_TPL_ARGS_SEL lists). The host encodes the values it
 * chose with GET_TPL_TILING_KEY as the real FastEncodeTilingKeyDirect does: parameter i, in declaration order, fills
 * the next bitWidth bits, least significant first; a UINT parameter stores the index of its value in the declared
 * list (a value the list lacks: "[ERROR] ..." and INVALID_TILING_KEY), a BOOL / DTYPE / FORMAT one the value itself.
 * CANN's kernel build compiles one kernel instance per selected combination and the runtime launches the instance of
 * the tiling's key; the twin compiles the instance of one key (opgen_sim/tiling_key.h decodes it) and faults when
 * the key names a combination no ASCENDC_TPL_SEL list holds: the device has no kernel binary for it.
 *
 * Both sides keep the lists in constexpr tables (opgen_sim_tpl_decl, opgen_sim_tpl_sel in the namespace the op
 * declares them in), so the kernel can decode at compile time.
 */
#ifndef OPGEN_SIM_TEMPLATE_ARGUMENT_H
#define OPGEN_SIM_TEMPLATE_ARGUMENT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>

// kernel types of ASCENDC_TPL_KERNEL_TYPE_SEL
#define ASCENDC_TPL_AIV_ONLY 0
#define ASCENDC_TPL_AIC_ONLY 1
#define ASCENDC_TPL_MIX_AIV_1_0 4
#define ASCENDC_TPL_MIX_AIC_1_0 5
#define ASCENDC_TPL_MIX_AIC_1_1 6
#define ASCENDC_TPL_MIX_AIC_1_2 7
#define ASCENDC_TPL_AICORE 8
#define ASCENDC_TPL_VECTORCORE 9
#define ASCENDC_TPL_MIX_AICORE 10
#define ASCENDC_TPL_MIX_VECTOR_CORE 11
#define ASCENDC_TPL_MAX 12
// bit widths
#define ASCENDC_TPL_1_BW 1
#define ASCENDC_TPL_2_BW 2
#define ASCENDC_TPL_4_BW 4
#define ASCENDC_TPL_8_BW 8
// parameter kinds
#define ASCENDC_TPL_DTYPE 0
#define ASCENDC_TPL_FORMAT 1
#define ASCENDC_TPL_UINT 2
#define ASCENDC_TPL_BOOL 3
constexpr uint32_t ASCENDC_TPL_KERNEL_TYPE = 4;
constexpr uint32_t ASCENDC_TPL_DETERMINISTIC = 5;
constexpr uint32_t ASCENDC_TPL_SHARED_KERNEL_TYPE = 6;
#define ASCENDC_TPL_INPUT_BIAS 100000000
#define ASCENDC_TPL_OUTPUT_BIAS 900000000
#define ASCENDC_TPL_INPUT(x) (ASCENDC_TPL_INPUT_BIAS + (x))
#define ASCENDC_TPL_OUTPUT(x) (ASCENDC_TPL_OUTPUT_BIAS + (x))
// how a UINT parameter lists its values
#define ASCENDC_TPL_UI_RANGE 0
#define ASCENDC_TPL_UI_LIST 1
#define ASCENDC_TPL_UI_MIX 2
constexpr uint8_t MAX_BITS_NUM = 64;
constexpr uint64_t INVALID_TILING_KEY = 0XFFFFFFFFFFFFFFFF;

namespace opgen_sim {
namespace tpl {
constexpr uint32_t STRUCT_SEL = 100;  // ASCENDC_TPL_TILING_STRUCT_SEL: names the tiling struct, no key bits
constexpr size_t MAX_VALUES = 48;
constexpr size_t MAX_PARAMS = 12;
constexpr size_t MAX_SELS = 24;

struct Param {
    const char* name = "";
    uint32_t kind = 0;
    uint8_t bitWidth = 0;
    size_t count = 0;
    uint64_t values[MAX_VALUES] = {};

    constexpr bool Holds(uint64_t v) const
    {
        for (size_t i = 0; i < count; ++i) {
            if (values[i] == v) {
                return true;
            }
        }
        return false;
    }
};

// A parameter's values as listed: a UINT one as ParamStruct::ParseTplUintValue expands its RANGE / LIST / MIX form
// (RANGE: n, then n (first, last) pairs; MIX: the same, then single values), every other kind as given.
constexpr Param MakeParam(const char* name, uint32_t kind, uint8_t bitWidth, std::initializer_list<uint64_t> raw)
{
    Param p;
    p.name = name;
    p.kind = kind;
    p.bitWidth = bitWidth;
    const uint64_t* v = raw.begin();
    const size_t n = raw.size();
    const auto add = [&p](uint64_t value) {
        if (p.count == MAX_VALUES) {
            throw "opgen_sim::tpl: more template values than the twin's table holds";
        }
        p.values[p.count++] = value;
    };
    if (kind != ASCENDC_TPL_UINT) {
        for (size_t i = 0; i < n; ++i) {
            add(v[i]);
        }
        return p;
    }
    if (n == 0) {
        throw "ASCENDC_TPL_UINT_*: no value form (ASCENDC_TPL_UI_LIST / _RANGE / _MIX)";
    }
    if (v[0] == ASCENDC_TPL_UI_LIST) {
        for (size_t i = 1; i < n; ++i) {
            add(v[i]);
        }
        return p;
    }
    if (v[0] != ASCENDC_TPL_UI_RANGE && v[0] != ASCENDC_TPL_UI_MIX) {
        throw "ASCENDC_TPL_UINT_*: unknown value form";
    }
    const size_t ranges = n > 1 ? static_cast<size_t>(v[1]) : 0;
    if (2 + 2 * ranges > n) {
        throw "ASCENDC_TPL_UINT_*: fewer (first, last) pairs than the range count says";
    }
    for (size_t r = 0; r < ranges; ++r) {
        for (uint64_t x = v[2 + 2 * r]; x <= v[3 + 2 * r]; ++x) {
            add(x);
        }
    }
    if (v[0] == ASCENDC_TPL_UI_MIX) {
        for (size_t i = 2 + 2 * ranges; i < n; ++i) {
            add(v[i]);
        }
    }
    return p;
}

struct Params {
    const char* name = "";
    size_t count = 0;
    Param params[MAX_PARAMS] = {};
};

constexpr Params MakeParams(const char* name, std::initializer_list<Param> list)
{
    Params out;
    out.name = name;
    for (const Param& p : list) {
        if (out.count == MAX_PARAMS) {
            throw "opgen_sim::tpl: more template parameters than the twin's table holds";
        }
        out.params[out.count++] = p;
    }
    return out;
}

struct SelList {
    size_t count = 0;
    Params sels[MAX_SELS] = {};
};

constexpr SelList MakeSelList(std::initializer_list<Params> list)
{
    SelList out;
    for (const Params& s : list) {
        if (out.count == MAX_SELS) {
            throw "opgen_sim::tpl: more ASCENDC_TPL_ARGS_SEL lists than the twin's table holds";
        }
        out.sels[out.count++] = s;
    }
    return out;
}

// ASCENDC_TPL_SEL with parameters for items instead of ASCENDC_TPL_ARGS_SEL lists (the Ascend 950 Setup/Teardown
// ops: ASCENDC_TPL_SEL(ASCENDC_TPL_BOOL_SEL(TILINGKEY_TP, 0), )): one selection list holding those parameters.
// code: mc2/moe_distribute_combine_teardown/op_kernel/moe_distribute_combine_teardown_tiling_key.h
constexpr SelList MakeSelList(std::initializer_list<Param> one)
{
    SelList out;
    out.sels[out.count++] = MakeParams("", one);
    return out;
}

// GET_TPL_TILING_KEY: FastEncodeTilingKeyDirect of the real header (the host side).
inline uint64_t Encode(const Params& decl, std::initializer_list<uint64_t> args)
{
    uint32_t totalBits = 0;
    uint64_t key = 0;
    const uint64_t* a = args.begin();
    const size_t n = decl.count < args.size() ? decl.count : args.size();
    for (size_t i = 0; i < n; ++i) {
        const Param& p = decl.params[i];
        uint64_t encoded = a[i];
        if (p.kind == ASCENDC_TPL_UINT) {
            size_t index = 0;
            while (index < p.count && p.values[index] != a[i]) {
                ++index;
            }
            if (index == p.count) {
                std::printf("[ERROR] ASCENDC_TPL_UINT_SEL %s value %lu does not exist in ASCENDC_TPL_UINT_DECL, "
                            "please check it!\n", p.name, static_cast<unsigned long>(a[i]));
                return INVALID_TILING_KEY;
            }
            encoded = index;
        }
        key |= encoded << totalBits;
        totalBits += p.bitWidth;
    }
    if (totalBits > MAX_BITS_NUM) {
        std::printf("[ERROR] Tiling key bits %u exceed max bits %u, please check it!\n", totalBits,
                    static_cast<uint32_t>(MAX_BITS_NUM));
        return INVALID_TILING_KEY;
    }
    return key;
}
}  // namespace tpl
}  // namespace opgen_sim

#define ASCENDC_TPL_DTYPE_DECL(x, ...) ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_DATATYPE_DECL(x, ...) \
    ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_FORMAT_DECL(x, ...) \
    ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_UINT_DECL(x, bw, ...) ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_UINT, bw, {__VA_ARGS__})
#define ASCENDC_TPL_BOOL_DECL(x, ...) ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__})
#define ASCENDC_TPL_KERNEL_TYPE_DECL(x, ...) \
    ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_SHARED_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})

#define ASCENDC_TPL_DTYPE_SEL(x, ...) ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_DATATYPE_SEL(x, ...) \
    ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_FORMAT_SEL(x, ...) \
    ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_UINT_SEL(x, ...) ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_UINT, 0, {__VA_ARGS__})
#define ASCENDC_TPL_BOOL_SEL(x, ...) ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__})
#define ASCENDC_TPL_TILING_STRUCT_SEL(x, ...) ::opgen_sim::tpl::MakeParam(#x, ::opgen_sim::tpl::STRUCT_SEL, 0, {})
#define ASCENDC_TPL_KERNEL_TYPE_SEL(...) \
    ::opgen_sim::tpl::MakeParam("kernel_type", ASCENDC_TPL_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})
#define ASCENDC_TPL_DETERMINISTIC_SEL(...) \
    ::opgen_sim::tpl::MakeParam("deterministic", ASCENDC_TPL_DETERMINISTIC, ASCENDC_TPL_1_BW, {__VA_ARGS__})
#define ASCENDC_TPL_SHARED_KERNEL_TYPE_SEL(x, ...) \
    ::opgen_sim::tpl::MakeParam(#x, ASCENDC_TPL_SHARED_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__})

#define ASCENDC_TPL_ARGS_DECL(x, ...) \
    inline constexpr ::opgen_sim::tpl::Params opgen_sim_tpl_decl = ::opgen_sim::tpl::MakeParams(#x, {__VA_ARGS__})
#define ASCENDC_TPL_ARGS_SEL(...) ::opgen_sim::tpl::MakeParams("", {__VA_ARGS__})
#define ASCENDC_TPL_SEL(...) \
    inline constexpr ::opgen_sim::tpl::SelList opgen_sim_tpl_sel = ::opgen_sim::tpl::MakeSelList({__VA_ARGS__})

#define GET_TPL_TILING_KEY(...) ::opgen_sim::tpl::Encode(opgen_sim_tpl_decl, {__VA_ARGS__})
#define ASCENDC_TPL_SEL_PARAM(context, ...)             \
    do {                                                \
        uint64_t key = GET_TPL_TILING_KEY(__VA_ARGS__); \
        context->SetTilingKey(key);                     \
    } while (0)

#endif  // OPGEN_SIM_TEMPLATE_ARGUMENT_H
