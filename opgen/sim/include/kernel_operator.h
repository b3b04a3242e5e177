/**
 * The Ascend C kernel API subset opgen's generated op_kernel files use, implemented on the host: the CPU twin
 * (see opgen/sim/README.md).  Signatures mirror the real ones (cannmirror/asc-devkit: include/...), so the
 * same file is what the compile checks (`g++ -fsyntax-only -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1`) read;
 * a call that does not match a real signature fails there too.  Only what the generated kernels call is here.
 */
#ifndef OPGEN_TEST_KERNEL_OPERATOR_H
#define OPGEN_TEST_KERNEL_OPERATOR_H

#include <cstddef>
#include <cstdint>
#include <type_traits>

// ---- CPU-debug keywords (as the CPU debug build defines them: stub_def.h / kernel_macros.h) ----------
#if defined(ASCENDC_CPU_DEBUG) && ASCENDC_CPU_DEBUG == 1
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define __inout_pipe__(pipe)
#endif
#define GM_ADDR __gm__ uint8_t*

// ---- element types (bisheng builtins / kernel_type.h) and RoundMode: opgen_sim/numeric.h --------------
#include "opgen_sim/numeric.h"
#include "opgen_sim/world.h"
// ---- the data-type ids of `#if ORIG_DTYPE_<NAME> == DT_...` (kernel code only, as in the real header) -------
#include "basic_api/kernel_type.h"

// ---- pipes (the CCE builtin enum pipe_t) -------------------------------------------------------------
enum pipe_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX,
};

// ---- kernel meta type (kernel_operator.h: KERNEL_TASK_TYPE_DEFAULT) ------------------------------------
enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
};
// impl/utils/sys_macros.h: the core type a branch runs on; every twin core is a vector core (AIV)
#define ASCEND_IS_AIV (true)
#define ASCEND_IS_AIC (false)
#define ASCEND_IS_NOT_AIC (true)
#define KERNEL_TASK_TYPE_DEFAULT(type) static_assert((type) == (type), "kernel type")

namespace AscendC {
// ---- include/basic_api/kernel_type.h / utils/kernel_utils_mode.h -----------------------------------------
enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    MAX,
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MAX,
};

enum class CMPMODE : uint8_t {
    LT = 0,
    GT,
    EQ,
    LE,
    GE,
    NE,
};

enum class SELMODE : uint8_t {
    VSEL_CMPMASK_SPR = 0,
    VSEL_TENSOR_SCALAR_MODE,
    VSEL_TENSOR_TENSOR_MODE,
};

enum class ReduceOrder : uint8_t {
    ORDER_VALUE_INDEX = 0,
    ORDER_INDEX_VALUE,
    ORDER_ONLY_VALUE,
    ORDER_ONLY_INDEX,
};

enum class CacheLine : uint64_t {
    SINGLE_CACHE_LINE = 0,
    ENTIRE_DATA_CACHE,
};

enum class DcciDst : uint64_t {
    CACHELINE_ALL = 0,
    CACHELINE_UB,
    CACHELINE_OUT,
    CACHELINE_ATOMIC,
};

enum class CacheMode : uint8_t {
    CACHE_MODE_DISABLE = 0,
    CACHE_MODE_NORMAL = 1,
};

using TEventID = int8_t;
// the CCE builtin event ids a kernel casts a fetched TEventID to (SetFlag / WaitFlag take them as ids)
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };


// ---- include/basic_api/kernel_struct_data_copy.h ----------------------------------------------------------
struct DataCopyExtParams {
    __aicore__ DataCopyExtParams() : blockCount(1), blockLen(0), srcStride(0), dstStride(0), rsv(0) {}
    __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                                 const uint32_t dstStrideIn, const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn)
    {
    }
    uint16_t blockCount;
    uint32_t blockLen;
    uint32_t srcStride;
    uint32_t dstStride;
    uint32_t rsv;
};

template <typename T>
struct DataCopyPadExtParams {
    __aicore__ DataCopyPadExtParams() : isPad(false), leftPadding(0), rightPadding(0), paddingValue() {}
    __aicore__ DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                    T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue)
    {
    }
    bool isPad;
    uint8_t leftPadding;
    uint8_t rightPadding;
    T paddingValue;
};

// ---- include/basic_api/kernel_struct_binary.h ----------------------------------------------------------------
struct BinaryRepeatParams {
    __aicore__ BinaryRepeatParams()
        : dstBlkStride(1), src0BlkStride(1), src1BlkStride(1), dstRepStride(8), src0RepStride(8), src1RepStride(8)
    {
    }
    __aicore__ BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn,
                                  const uint8_t src1BlkStrideIn, const uint8_t dstRepStrideIn,
                                  const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn),
          src0BlkStride(src0BlkStrideIn),
          src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn),
          src0RepStride(src0RepStrideIn),
          src1RepStride(src1RepStrideIn)
    {
    }
    uint8_t dstBlkStride;
    uint8_t src0BlkStride;
    uint8_t src1BlkStride;
    uint8_t dstRepStride;
    uint8_t src0RepStride;
    uint8_t src1RepStride;
};
}  // namespace AscendC

// ---- include/basic_api/kernel_tensor.h, kernel_tpipe.h, data copy, vector instructions -------------------
#include "opgen_sim/utils.h"
#include "opgen_sim/tensor.h"
#include "opgen_sim/copy.h"
#include "opgen_sim/copy_params.h"
#include "opgen_sim/vector.h"
#include "opgen_sim/vec_mask.h"
#include "opgen_sim/vec_level0.h"
#include "opgen_sim/atomic.h"
#include "opgen_sim/sync.h"
#include "opgen_sim/device.h"
#include "opgen_sim/tiling_key_is.h"
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
// ---- include/basic_api/reg_compute/kernel_reg_compute_intf.h: the register-based vector API of 3510 ----------
#include "opgen_sim/reg.h"
#include "opgen_sim/unmodelled_3510.h"
#endif
// ---- include/adv_api/kernel_api.h (kernel_operator_intf.h includes it): the advanced APIs the twin has -------
#include "adv_api/reduce/sum.h"

#endif  // OPGEN_TEST_KERNEL_OPERATOR_H
