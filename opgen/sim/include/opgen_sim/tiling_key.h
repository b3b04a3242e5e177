/**
 * The kernel side of CANN's template tiling key (ascendc/host_api/tiling/template_argument.h): the template
 * arguments a key stands for, decoded at compile time from the op's ASCENDC_TPL_ARGS_DECL table exactly as the host
 * encoded them (parameter i fills the next bitWidth bits, least significant first; a UINT parameter holds the index
 * of its value in the declared list, every other kind the value itself), and whether one of the op's ASCENDC_TPL_SEL
 * lists holds that combination: CANN builds kernel instances for those combinations only.
 */
#ifndef OPGEN_SIM_TILING_KEY_H
#define OPGEN_SIM_TILING_KEY_H

#include <cstdint>

#include "ascendc/host_api/tiling/template_argument.h"

namespace opgen_sim {
namespace tpl {

// A template argument: converts to the entry's parameter type (uint8_t, bool, ...), as a key's value did.
struct Arg {
    uint64_t value;
    template <typename T>
    constexpr operator T() const
    {
        return static_cast<T>(value);
    }
};

struct Decoded {
    bool ok = false;         // every field of the key names a declared value, no bit left over
    bool selected = false;   // an ASCENDC_TPL_SEL list holds the combination: a kernel instance exists
    size_t count = 0;
    Arg args[MAX_PARAMS] = {};
};

constexpr bool SameName(const char* a, const char* b)
{
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

// Whether `sel` allows value `v` of declared parameter `p` (a parameter the list does not name: any declared value).
constexpr bool Allows(const Params& sel, const Param& p, uint64_t v)
{
    for (size_t i = 0; i < sel.count; ++i) {
        if (SameName(sel.params[i].name, p.name)) {
            return sel.params[i].Holds(v);
        }
    }
    return true;
}

constexpr Decoded Decode(const Params& decl, const SelList& sels, uint64_t key)
{
    Decoded d;
    uint32_t shift = 0;
    for (size_t i = 0; i < decl.count; ++i) {
        const Param& p = decl.params[i];
        const uint64_t mask = p.bitWidth >= 64 ? ~0ULL : ((1ULL << p.bitWidth) - 1ULL);
        const uint64_t field = shift >= 64 ? 0ULL : (key >> shift) & mask;
        shift += p.bitWidth;
        if (p.kind == ASCENDC_TPL_UINT) {
            if (field >= p.count) {
                return d;
            }
            d.args[i].value = p.values[field];
        } else {
            d.args[i].value = field;
        }
    }
    if (shift < 64 && (key >> shift) != 0ULL) {
        return d;  // bits above the declared fields: no encoding gives them
    }
    d.count = decl.count;
    d.ok = true;
    for (size_t s = 0; s < sels.count && !d.selected; ++s) {
        bool all = true;
        for (size_t i = 0; i < decl.count && all; ++i) {
            all = Allows(sels.sels[s], decl.params[i], d.args[i].value);
        }
        d.selected = all;
    }
    return d;
}

constexpr size_t MAX_KEYS = 256;

// The keys of every combination an ASCENDC_TPL_SEL list holds, ascending: each combination of the declared values
// (parameter 0 varying fastest), encoded as GET_TPL_TILING_KEY does, kept when Decode finds it selected.
struct KeyList {
    size_t count = 0;
    uint64_t keys[MAX_KEYS] = {};
};

constexpr KeyList SelectedKeys(const Params& decl, const SelList& sels)
{
    KeyList out;
    uint64_t combos = 1;
    for (size_t i = 0; i < decl.count; ++i) {
        combos *= decl.params[i].count;
    }
    for (uint64_t c = 0; c < combos; ++c) {
        uint64_t rest = c;
        uint64_t key = 0;
        uint32_t shift = 0;
        for (size_t i = 0; i < decl.count; ++i) {
            const Param& p = decl.params[i];
            const uint64_t index = rest % p.count;
            rest /= p.count;
            key |= (p.kind == ASCENDC_TPL_UINT ? index : p.values[index]) << shift;
            shift += p.bitWidth;
        }
        if (Decode(decl, sels, key).selected) {
            if (out.count == MAX_KEYS) {
                throw "opgen_sim::tpl: more selected tiling keys than the twin's table holds";
            }
            size_t at = out.count++;
            while (at > 0 && out.keys[at - 1] > key) {
                out.keys[at] = out.keys[at - 1];
                --at;
            }
            out.keys[at] = key;
        }
    }
    return out;
}

}  // namespace tpl
}  // namespace opgen_sim

#endif  // OPGEN_SIM_TILING_KEY_H
