/**
 * The kernel translation unit of a twin executable: an op_kernel entry source, unchanged, compiled with the twin's
 * kernel_operator.h, and OpgenSimKernel to call its entry (see opgen_sim/launch.h).
 *
 *   g++ -std=c++17 -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1 -I opgen/sim/include -I <op>/op_kernel
 *       -DOPGEN_SIM_KERNEL_SOURCE='"<op>/op_kernel/<op>.cpp"' -DOPGEN_SIM_KERNEL=<op> -c kernel_entry.cpp
 *
 * A generated entry is one extern "C" function for every tiling key. A hand-written entry of CANN is a template over
 * the op's template tiling key (ASCENDC_TPL_ARGS_DECL): CANN builds one instance per selected combination and the
 * runtime launches the one of the tiling's key. The twin builds the instance of one key, -DOPGEN_SIM_TILING_KEY=K,
 * decoded as opgen_sim/tiling_key.h says; a tiling that sets another key at run time, or a key no ASCENDC_TPL_SEL
 * list holds (the device has no binary for it), faults. An entry keyed by TILING_KEY_IS is built for the key the
 * tiling set, -DOPGEN_SIM_TILING_KEY_IS=K (opgen_sim/tiling_key_is.h); a launch no TILING_KEY_IS took faults.
 */
#include OPGEN_SIM_KERNEL_SOURCE

#include <type_traits>
#include <utility>

#include "opgen_sim/launch.h"
#ifdef OPGEN_SIM_TILING_KEY
#include "opgen_sim/tiling_key.h"
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
#else
constexpr auto ENTRY = &OPGEN_SIM_KERNEL;
#endif

template <std::size_t... I>
void Call(uint8_t* const* args, std::index_sequence<I...>)
{
    ENTRY(args[I]...);
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
        Call(args, std::make_index_sequence<ARITY>{});
    }
#elif defined(OPGEN_SIM_TILING_KEY_IS)
    if (tilingKey != static_cast<uint64_t>(OPGEN_SIM_TILING_KEY_IS)) {
        opgen_sim::Raise("the tiling set tiling key %llu, the twin built the kernel binary of key %llu",
                         static_cast<unsigned long long>(tilingKey),
                         static_cast<unsigned long long>(OPGEN_SIM_TILING_KEY_IS));
    }
    opgen_sim::t_tilingKeyTaken = false;
    Call(args, std::make_index_sequence<ARITY>{});
    if (!opgen_sim::t_tilingKeyTaken) {
        opgen_sim::Raise("tiling key %llu: no TILING_KEY_IS of the entry holds it for this OpDef column: CANN builds "
                         "no kernel for it", static_cast<unsigned long long>(tilingKey));
    }
#else
    (void)tilingKey;  // the generated entry reads its tiling data, not the key
    Call(args, std::make_index_sequence<ARITY>{});
#endif
}
