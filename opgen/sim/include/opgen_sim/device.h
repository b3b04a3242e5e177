/**
 * What the Ascend 950 Setup/Teardown kernels (mc2/moe_distribute_*_setup, *_teardown, op_kernel/arch35) take from
 * the device beyond the vector API: `ascendc_assert` (asc-devkit include/utils/debug/asc_assert.h: on unless
 * ASCENDC_DUMP is 0 or NDEBUG; a failed assertion stops the kernel) and `st_dev` (the compiler's scalar store to a
 * device address, cache bypassed: the real kernels ring the URMA JFS / JFC doorbells with it, at the addresses HCCL
 * lists in the context's sqs[] / cqs[] (code: mc2/moe_distribute_combine_setup/op_kernel/moe_distribute_base.h
 * SendJFSDoorBell, SendJFCDoorBell).
 *
 * The twin runs a failed ascendc_assert as a fault naming its condition and message (the message's arguments are
 * not formatted). st_dev into a registered GM buffer is a scalar store; anywhere else it is a device register the
 * twin does not model (a doorbell: the URMA engine behind it is not modelled), and it faults naming the call.
 */
#ifndef OPGEN_SIM_DEVICE_H
#define OPGEN_SIM_DEVICE_H

#include <atomic>
#include <cstdint>
#include <cstring>

#include "opgen_sim/world.h"

namespace opgen_sim {
template <typename... Args>
[[noreturn]] inline void AscAssertFailed(const char* cond, const char* file, int line, const char* message,
                                         const Args&... /*args*/)
{
    Raise("ascendc_assert(%s) failed: %s (%s:%d)", cond, message, file, line);
}
}  // namespace opgen_sim

#undef ascendc_assert
#define ascendc_assert(cond, ...)                                                            \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            ::opgen_sim::AscAssertFailed(#cond, __FILE__, __LINE__, __VA_ARGS__);            \
        }                                                                                    \
    } while (0)

template <typename T, typename U>
__aicore__ inline void st_dev(U value, __gm__ T* addr, int16_t offset)
{
    static_assert(std::is_integral<T>::value, "st_dev stores an integer");
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (offset != 0) {
        opgen_sim::Raise("st_dev(%llu, %s, %d): the twin models st_dev with offset 0 only (its unit is not documented)",
                         static_cast<unsigned long long>(value), opgen_sim::DescribeGm(a).c_str(), offset);
    }
    if (opgen_sim::FindRegion(a, sizeof(T)) == nullptr) {
        opgen_sim::Raise("st_dev(%llu, %s): a store of %zu bytes to an address in no GM buffer: a device register "
                         "(the URMA JFS / JFC doorbell of the context's sqs[] / cqs[]), whose engine the twin does "
                         "not model",
                         static_cast<unsigned long long>(value), opgen_sim::DescribeGm(a).c_str(), sizeof(T));
    }
    opgen_sim::CountScalar();
    opgen_sim::GmWritten(addr, sizeof(T));
    const T v = static_cast<T>(value);
    std::memcpy(addr, &v, sizeof(T));
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
// The scalar max / min of __NPU_ARCH__ 3510's device compiler, as asc-devkit include/simt_api/math_functions.h
// declares them (outside its CPU-debug build): the integer overloads only. (CombineSetup: max(curTokenNum, 1U).)
#define OPGEN_SIM_MAX_MIN(T)                                              \
    __aicore__ inline T max(T x, T y) { return x > y ? x : y; }           \
    __aicore__ inline T min(T x, T y) { return x < y ? x : y; }
OPGEN_SIM_MAX_MIN(long long)
OPGEN_SIM_MAX_MIN(unsigned long long)
OPGEN_SIM_MAX_MIN(unsigned int)
OPGEN_SIM_MAX_MIN(long)
OPGEN_SIM_MAX_MIN(int)
OPGEN_SIM_MAX_MIN(short)
OPGEN_SIM_MAX_MIN(char)
OPGEN_SIM_MAX_MIN(unsigned long)
OPGEN_SIM_MAX_MIN(unsigned short)
OPGEN_SIM_MAX_MIN(unsigned char)
#undef OPGEN_SIM_MAX_MIN
#endif

#endif  // OPGEN_SIM_DEVICE_H
