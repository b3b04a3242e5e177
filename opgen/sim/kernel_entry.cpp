/**
 * The kernel translation unit of a twin executable: an op_kernel entry source, unchanged, compiled with the twin's
 * kernel_operator.h, and OpgenSimKernel to call its entry (see opgen_sim/launch.h).
 *
 *   g++ -std=c++17 -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1 -I opgen/sim/include -I <op>/op_kernel
 *       -DOPGEN_SIM_KERNEL_SOURCE='"<op>/op_kernel/<op>.cpp"' -DOPGEN_SIM_KERNEL=<op> -c kernel_entry.cpp
 *
 * An entry, hand-written or generated, is a template over the op's template tiling key (ASCENDC_TPL_ARGS_DECL): CANN
 * builds one instance per combination its ASCENDC_TPL_SEL lists and the runtime launches the one of the tiling's key.
 * The twin builds either the instance of one key, -DOPGEN_SIM_TILING_KEY=K (the hand-written entries), or,
 * -DOPGEN_SIM_TILING_KEY_SEL (the generated ones: one unit per OpDef column instead of one per key and column), the
 * instance of every key the ASCENDC_TPL_SEL lists hold, launching the one of the key the rank's tiling set; keys are
 * decoded as opgen_sim/tiling_key.h says. A tiling that sets a key the unit holds no instance of faults: another key
 * than K, or a key no ASCENDC_TPL_SEL list holds (the device has no binary for it).
 * An entry keyed by TILING_KEY_IS (no template tiling key) is built for the key the tiling set,
 * -DOPGEN_SIM_TILING_KEY_IS=K (opgen_sim/tiling_key_is.h); a launch no TILING_KEY_IS took faults.
 */
#include OPGEN_SIM_KERNEL_SOURCE

#include <array>
#include <type_traits>
#include <utility>

#include "opgen_sim/launch.h"
#if defined(OPGEN_SIM_TILING_KEY) || defined(OPGEN_SIM_TILING_KEY_SEL)
#include "opgen_sim/tiling_key.h"
#endif
#if defined(OPGEN_SIM_TILING_KEY) && defined(OPGEN_SIM_TILING_KEY_SEL)
#error "OPGEN_SIM_TILING_KEY (one key's instance) and OPGEN_SIM_TILING_KEY_SEL (every selected key's) exclude each other"
#endif

namespace {
template <typename F>
struct KernelArity;
template <typename... Args>
struct KernelArity<void (*)(Args...)> {
    static constexpr uint32_t value = sizeof...(Args);
};

#ifdef OPGEN_SIM_TILING_KEY
constexpr uint64_t KEY = OPGEN_SIM_TILING_KEY;
// the op's tables, found through the entry's own using-directive (e.g. `using namespace Mc2Tiling;`)
constexpr opgen_sim::tpl::Decoded DECODED = opgen_sim::tpl::Decode(opgen_sim_tpl_decl, opgen_sim_tpl_sel, KEY);
static_assert(DECODED.ok, "OPGEN_SIM_TILING_KEY is no encoding of the op's ASCENDC_TPL_ARGS_DECL parameters");

template <std::size_t... P>
constexpr auto Instance(std::index_sequence<P...>)
{
    return &OPGEN_SIM_KERNEL<DECODED.args[P]...>;
}
constexpr auto ENTRY = Instance(std::make_index_sequence<DECODED.count>{});
#elif defined(OPGEN_SIM_TILING_KEY_SEL)
// every key an ASCENDC_TPL_SEL list holds, found by walking every encodable combination of the declared values
constexpr opgen_sim::tpl::KeyList SELECTED = opgen_sim::tpl::SelectedKeys(opgen_sim_tpl_decl, opgen_sim_tpl_sel);
static_assert(SELECTED.count > 0, "no ASCENDC_TPL_SEL list holds a combination of the declared values: no kernel");

template <uint64_t KEY, std::size_t... P>
constexpr auto InstanceOf(std::index_sequence<P...>)
{
    constexpr opgen_sim::tpl::Decoded D = opgen_sim::tpl::Decode(opgen_sim_tpl_decl, opgen_sim_tpl_sel, KEY);
    return &OPGEN_SIM_KERNEL<D.args[P]...>;
}
template <std::size_t K>
constexpr auto InstanceAt()
{
    constexpr uint64_t KEY = SELECTED.keys[K];
    return InstanceOf<KEY>(std::make_index_sequence<opgen_sim_tpl_decl.count>{});
}
template <std::size_t... K>
constexpr auto Table(std::index_sequence<K...>)
{
    using Fn = decltype(InstanceAt<0>());
    return std::array<Fn, sizeof...(K)>{InstanceAt<K>()...};
}
constexpr auto TABLE = Table(std::make_index_sequence<SELECTED.count>{});
constexpr auto ENTRY = TABLE[0];
#else
constexpr auto ENTRY = &OPGEN_SIM_KERNEL;
#endif

template <typename Fn, std::size_t... I>
void Call(Fn entry, uint8_t* const* args, std::index_sequence<I...>)
{
    entry(args[I]...);
}

constexpr uint32_t ARITY = KernelArity<std::remove_const_t<decltype(ENTRY)>>::value;
}  // namespace

uint32_t OpgenSimKernelArity()
{
    return ARITY;
}

void OpgenSimKernel(uint8_t* const* args, uint32_t count, uint64_t tilingKey)
{
    if (count != ARITY) {
        opgen_sim::Raise("the kernel takes %u GM addresses, the job gives %u", ARITY, count);
    }
#ifdef OPGEN_SIM_TILING_KEY
    if (tilingKey != KEY) {
        opgen_sim::Raise("the tiling set tiling key %llu, the twin built the kernel instance of key %llu",
                         static_cast<unsigned long long>(tilingKey), static_cast<unsigned long long>(KEY));
    }
    if constexpr (!DECODED.selected) {
        opgen_sim::Raise("tiling key %llu names a combination of template arguments no ASCENDC_TPL_SEL list of the op "
                         "holds: CANN builds no kernel for it", static_cast<unsigned long long>(KEY));
    } else {
        Call(ENTRY, args, std::make_index_sequence<ARITY>{});
    }
#elif defined(OPGEN_SIM_TILING_KEY_SEL)
    for (std::size_t k = 0; k < SELECTED.count; ++k) {
        if (SELECTED.keys[k] == tilingKey) {
            Call(TABLE[k], args, std::make_index_sequence<ARITY>{});
            return;
        }
    }
    opgen_sim::Raise("tiling key %llu names no combination of template arguments an ASCENDC_TPL_SEL list of the op "
                     "holds: CANN builds no kernel for it", static_cast<unsigned long long>(tilingKey));
#elif defined(OPGEN_SIM_TILING_KEY_IS)
    if (tilingKey != static_cast<uint64_t>(OPGEN_SIM_TILING_KEY_IS)) {
        opgen_sim::Raise("the tiling set tiling key %llu, the twin built the kernel binary of key %llu",
                         static_cast<unsigned long long>(tilingKey),
                         static_cast<unsigned long long>(OPGEN_SIM_TILING_KEY_IS));
    }
    opgen_sim::t_tilingKeyTaken = false;
    Call(ENTRY, args, std::make_index_sequence<ARITY>{});
    if (!opgen_sim::t_tilingKeyTaken) {
        opgen_sim::Raise("tiling key %llu: no TILING_KEY_IS of the entry holds it for this OpDef column: CANN builds "
                         "no kernel for it", static_cast<unsigned long long>(tilingKey));
    }
#else
    (void)tilingKey;  // an entry that is no template over a tiling key
    Call(ENTRY, args, std::make_index_sequence<ARITY>{});
#endif
}
