/**
 * Atomic UB->GM stores (include/basic_api/kernel_operator_atomic_intf.h: SetAtomicAdd / SetAtomicMax /
 * SetAtomicMin<T>, SetAtomicNone). Between SetAtomic<Op><T>() and SetAtomicNone() every DataCopy / DataCopyPad from
 * UB to GM combines each T element with the one GM holds (the CTRL[8:6] type, CTRL[10:9] op of the SetCtrlSpr
 * table: float, half, int16_t, int32_t, int8_t, bfloat16_t). Float operands are combined in single precision and
 * rounded to T; an integer sum that leaves T's range faults (the documents do not say whether the device wraps or
 * saturates); a store whose length is not a whole number of T faults.
 */
#ifndef OPGEN_SIM_ATOMIC_H
#define OPGEN_SIM_ATOMIC_H

#include <cstring>
#include <limits>
#include <type_traits>

#include "opgen_sim/tensor.h"
#include "opgen_sim/vector.h"

namespace AscendC {
namespace sim {
enum class AtomicOp { ADD, MAX, MIN };

template <typename T>
constexpr bool ATOMIC_TYPE = std::is_same<T, float>::value || std::is_same<T, half>::value ||
                             std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value ||
                             std::is_same<T, int8_t>::value || std::is_same<T, bfloat16_t>::value;

template <typename T, AtomicOp op>
inline void AtomicApply(uint8_t* gm, const uint8_t* ub, uint64_t bytes)
{
    if (bytes % sizeof(T) != 0U) {
        opgen_sim::Raise("atomic %s store of %llu bytes: not a whole number of %s", opgen_sim::t_core->atomicName,
                         static_cast<unsigned long long>(bytes), opgen_sim::TypeName<T>());
    }
    for (uint64_t i = 0; i < bytes / sizeof(T); ++i) {
        const T a = Load<T>(gm, i);
        const T b = Load<T>(ub, i);
        T r;
        if constexpr (std::is_integral<T>::value) {
            const int64_t x = a, y = b;
            const int64_t v = op == AtomicOp::ADD ? x + y : op == AtomicOp::MAX ? (x > y ? x : y) : (x < y ? x : y);
            if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
                opgen_sim::Raise("atomic add of %s: %lld + %lld leaves the type's range", opgen_sim::TypeName<T>(),
                                 static_cast<long long>(x), static_cast<long long>(y));
            }
            r = static_cast<T>(v);
        } else {
            const float x = ToF(a), y = ToF(b);
            r = FromF<T>(op == AtomicOp::ADD ? x + y : op == AtomicOp::MAX ? MaxNan(x, y) : MinNan(x, y));
        }
        Store<T>(gm, i, r);
    }
}

template <typename T, AtomicOp op>
inline void SetAtomic(const char* name)
{
    static_assert(ATOMIC_TYPE<T>, "atomic stores take float, half, int16_t, int32_t, int8_t or bfloat16_t");
    if (opgen_sim::t_core != nullptr) {
        opgen_sim::t_core->atomic = &AtomicApply<T, op>;
        opgen_sim::t_core->atomicName = name;
    }
}
}  // namespace sim

template <typename T>
__aicore__ inline void SetAtomicAdd()
{
    sim::SetAtomic<T, sim::AtomicOp::ADD>("add");
}
template <typename T>
__aicore__ inline void SetAtomicMax()
{
    sim::SetAtomic<T, sim::AtomicOp::MAX>("max");
}
template <typename T>
__aicore__ inline void SetAtomicMin()
{
    sim::SetAtomic<T, sim::AtomicOp::MIN>("min");
}
__aicore__ inline void SetAtomicNone()
{
    if (opgen_sim::t_core != nullptr) {
        opgen_sim::t_core->atomic = nullptr;
        opgen_sim::t_core->atomicName = nullptr;
    }
}
}  // namespace AscendC

#endif  // OPGEN_SIM_ATOMIC_H
