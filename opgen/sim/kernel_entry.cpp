/**
 * The kernel translation unit of a twin executable: the generated op_kernel source, unchanged, compiled with
 * the twin's kernel_operator.h, and OpgenSimKernel to call its extern "C" entry (see opgen_sim/launch.h).
 *
 *   g++ -std=c++17 -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1 -I opgen/sim/include -I <op>/op_kernel
 *       -DOPGEN_SIM_KERNEL_SOURCE='"<op>/op_kernel/<op>.cpp"' -DOPGEN_SIM_KERNEL=<op> -c kernel_entry.cpp
 */
#include OPGEN_SIM_KERNEL_SOURCE

#include <utility>

#include "opgen_sim/launch.h"

namespace {
template <typename F>
struct KernelArity;
template <typename... Args>
struct KernelArity<void (*)(Args...)> {
    static constexpr uint32_t value = sizeof...(Args);
};

template <std::size_t... I>
void Call(uint8_t* const* args, std::index_sequence<I...>)
{
    OPGEN_SIM_KERNEL(args[I]...);
}

constexpr uint32_t ARITY = KernelArity<decltype(&OPGEN_SIM_KERNEL)>::value;
}  // namespace

uint32_t OpgenSimKernelArity()
{
    return ARITY;
}

void OpgenSimKernel(uint8_t* const* args, uint32_t count)
{
    if (count != ARITY) {
        opgen_sim::Raise("the kernel takes %u GM addresses, the job gives %u", ARITY, count);
    }
    Call(args, std::make_index_sequence<ARITY>{});
}
