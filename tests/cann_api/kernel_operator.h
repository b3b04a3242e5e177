/**
 * Declarations only (no behaviour) of the Ascend C kernel API that opgen's generated op_kernel files use,
 * for `g++ -std=c++17 -fsyntax-only -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1`.  Signatures mirror the real
 * ones; each group names the header of the Ascend C devkit it mirrors (cannmirror/asc-devkit: include/...).
 * Only what the generated kernels call is declared; a call that does not match a real signature fails here.
 */
#ifndef OPGEN_TEST_KERNEL_OPERATOR_H
#define OPGEN_TEST_KERNEL_OPERATOR_H

#include <cstddef>
#include <cstdint>

// ---- CPU-debug keywords (as the CPU debug build defines them: stub_def.h / kernel_macros.h) ----------
#if defined(ASCENDC_CPU_DEBUG) && ASCENDC_CPU_DEBUG == 1
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define __inout_pipe__(pipe)
#endif
#define GM_ADDR __gm__ uint8_t*

// ---- element types (bisheng builtins / kernel_type.h) ------------------------------------------------
// Distinct class types so that template dispatch on them is checked; conversions from float as the
// device types allow.
struct half {
    __aicore__ half();
    __aicore__ half(float value);
    __aicore__ operator float() const;
};
struct bfloat16_t {
    __aicore__ bfloat16_t();
    __aicore__ bfloat16_t(float value);
    __aicore__ operator float() const;
};
struct hifloat8_t {
    __aicore__ hifloat8_t();
    __aicore__ hifloat8_t(float value);
};
struct fp8_e5m2_t {
    __aicore__ fp8_e5m2_t();
    __aicore__ fp8_e5m2_t(float value);
};
struct fp8_e4m3fn_t {
    __aicore__ fp8_e4m3fn_t();
    __aicore__ fp8_e4m3fn_t(float value);
};
struct fp8_e8m0_t {
    __aicore__ fp8_e8m0_t();
    __aicore__ fp8_e8m0_t(float value);
};
struct fp4x2_e2m1_t {  // two FP4 values per byte
    __aicore__ fp4x2_e2m1_t();
    __aicore__ fp4x2_e2m1_t(float value);
};
struct fp4x2_e1m2_t {
    __aicore__ fp4x2_e1m2_t();
    __aicore__ fp4x2_e1m2_t(float value);
};

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

enum class RoundMode {
    CAST_NONE = 0,  // exact, or RINT when lossy
    CAST_RINT,      // round half to even
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,     // round half away from zero
    CAST_TRUNC,
    CAST_ODD,
    CAST_HYBRID,
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

// ---- include/basic_api/kernel_struct_data_copy.h ----------------------------------------------------------
struct DataCopyParams {
    __aicore__ DataCopyParams();
    __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                              const uint16_t dstStrideIn);
    uint16_t blockCount;
    uint16_t blockLen;
    uint16_t srcStride;
    uint16_t dstStride;
};

struct DataCopyExtParams {
    __aicore__ DataCopyExtParams();
    __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                                 const uint32_t dstStrideIn, const uint32_t rsvIn);
    uint16_t blockCount;
    uint32_t blockLen;
    uint32_t srcStride;
    uint32_t dstStride;
    uint32_t rsv;
};

template <typename T>
struct DataCopyPadExtParams {
    __aicore__ DataCopyPadExtParams();
    __aicore__ DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                    T padValue);
    bool isPad;
    uint8_t leftPadding;
    uint8_t rightPadding;
    T paddingValue;
};

// ---- include/basic_api/kernel_struct_binary.h / kernel_struct_unary.h -------------------------------------
struct BinaryRepeatParams {
    __aicore__ BinaryRepeatParams();
    __aicore__ BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn,
                                  const uint8_t src1BlkStrideIn, const uint8_t dstRepStrideIn,
                                  const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn);
    uint8_t dstBlkStride;
    uint8_t src0BlkStride;
    uint8_t src1BlkStride;
    uint8_t dstRepStride;
    uint8_t src0RepStride;
    uint8_t src1RepStride;
};

struct UnaryRepeatParams {
    __aicore__ UnaryRepeatParams();
    __aicore__ UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn,
                                 const uint8_t dstRepStrideIn, const uint8_t srcRepStrideIn);
    uint16_t dstBlkStride;
    uint16_t srcBlkStride;
    uint8_t dstRepStride;
    uint8_t srcRepStride;
};

// ---- include/basic_api/kernel_tensor.h ----------------------------------------------------------------------
template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ LocalTensor();
    __aicore__ LocalTensor(const LocalTensor<T>& other);
    __aicore__ LocalTensor<T>& operator=(const LocalTensor<T>& other);
    __aicore__ ~LocalTensor();
    __aicore__ PrimType GetValue(const uint32_t index) const;
    __aicore__ PrimType& operator()(const uint32_t offset) const;
    template <typename U>
    __aicore__ LocalTensor<U> ReinterpretCast() const;
    template <typename S>
    __aicore__ void SetValue(const uint32_t index, const S value) const;
    __aicore__ LocalTensor operator[](const uint32_t offset) const;
    __aicore__ uint32_t GetSize() const;
    __aicore__ void SetSize(const uint32_t size);
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ GlobalTensor();
    __aicore__ void SetGlobalBuffer(__gm__ PrimType* buffer, uint64_t bufferSize);
    __aicore__ void SetGlobalBuffer(__gm__ PrimType* buffer);
    __aicore__ const __gm__ PrimType* GetPhyAddr() const;
    __aicore__ __gm__ PrimType* GetPhyAddr(const uint64_t offset) const;
    __aicore__ PrimType GetValue(const uint64_t offset) const;
    __aicore__ void SetValue(const uint64_t offset, PrimType value);
    __aicore__ uint64_t GetSize() const;
    __aicore__ GlobalTensor operator[](const uint64_t offset) const;
    template <typename U = T>
    __aicore__ void SetL2CacheHint(CacheMode mode);
};

// ---- include/basic_api/kernel_tpipe.h ------------------------------------------------------------------------
class TPipe;

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    __aicore__ TQueBind();
    template <typename T>
    __aicore__ LocalTensor<T> AllocTensor();
    template <typename T>
    __aicore__ void FreeTensor(LocalTensor<T>& tensor);
    template <typename T>
    __aicore__ bool EnQue(const LocalTensor<T>& tensor);
    template <typename T>
    __aicore__ LocalTensor<T> DeQue();
    __aicore__ bool VacantInQue();
    __aicore__ bool HasTensorInQue();
};

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {
public:
    __aicore__ TQue();
};

template <TPosition pos = TPosition::LCM>
class TBuf : public TQueBind<pos, pos, 0, 0> {
public:
    __aicore__ TBuf();
    template <typename T>
    __aicore__ LocalTensor<T> Get();
    template <typename T>
    __aicore__ LocalTensor<T> Get(uint32_t len);
    template <typename T>
    __aicore__ LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset);
};

class TPipe {
public:
    __aicore__ TPipe();
    __aicore__ ~TPipe();
    __aicore__ void Init();
    template <class T>
    __aicore__ bool InitBuffer(T& que, uint8_t num, uint32_t len);
    template <TPosition pos>
    __aicore__ bool InitBuffer(TBuf<pos>& buf, uint32_t len);
    template <HardEvent evt>
    __aicore__ TEventID AllocEventID();
    template <HardEvent evt>
    __aicore__ void ReleaseEventID(TEventID id);
    template <HardEvent evt>
    __aicore__ TEventID FetchEventID();
    __aicore__ TEventID FetchEventID(HardEvent evt);
    __aicore__ void Destroy();
    __aicore__ void Reset();
};

__aicore__ TPipe* GetTPipePtr();

// ---- include/basic_api/kernel_operator_data_copy_intf.h ----------------------------------------------------
template <typename T>
__aicore__ void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& repeatParams);
template <typename T>
__aicore__ void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& repeatParams);
template <typename T>
__aicore__ void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& repeatParams);
template <typename T>
__aicore__ void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count);
template <typename T>
__aicore__ void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count);
template <typename T>
__aicore__ void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count);
template <typename T>
__aicore__ void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                            const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams);
template <typename T>
__aicore__ void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                            const DataCopyExtParams& dataCopyParams);

// ---- include/basic_api/kernel_operator_vec_vconv_intf.h -----------------------------------------------------
template <typename T, typename U>
__aicore__ void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                     const uint32_t count);
__aicore__ void SetDeqScale(half scale);

// ---- include/basic_api/kernel_operator_vec_unary_intf.h -----------------------------------------------------
template <typename T>
__aicore__ void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count);
template <typename T>
__aicore__ void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count);
template <typename T>
__aicore__ void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count);

// ---- include/basic_api/kernel_operator_vec_binary_intf.h ----------------------------------------------------
template <typename T>
__aicore__ void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const int32_t& count);
template <typename T>
__aicore__ void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const int32_t& count);
template <typename T>
__aicore__ void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const int32_t& count);
template <typename T>
__aicore__ void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const int32_t& count);
template <typename T>
__aicore__ void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const int32_t& count);
template <typename T>
__aicore__ void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    const int32_t& count);
// Max::Level 0 - mask count mode
template <typename T, bool isSetMask = true>
__aicore__ void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams);

// ---- include/basic_api/kernel_operator_vec_binary_scalar_intf.h ---------------------------------------------
template <typename T, bool isSetMask = true>
__aicore__ void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                     const int32_t& count);
template <typename T, bool isSetMask = true>
__aicore__ void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                     const int32_t& count);
template <typename T, bool isSetMask = true>
__aicore__ void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                     const int32_t& count);
template <typename T, bool isSetMask = true>
__aicore__ void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                     const int32_t& count);
template <typename T, bool isSetMask = true>
__aicore__ void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                          const int32_t& count);
template <typename T, bool isSetMask = true>
__aicore__ void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                           const int32_t& count);

// ---- include/basic_api/kernel_operator_vec_duplicate_intf.h -------------------------------------------------
template <typename T>
__aicore__ void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count);

// ---- include/basic_api/kernel_operator_vec_cmpsel_intf.h ----------------------------------------------------
template <typename T, typename U>
__aicore__ void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                              CMPMODE cmpMode, uint32_t count);
template <typename T, typename U>
__aicore__ void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                       const LocalTensor<T>& src1, SELMODE selMode, uint32_t count);
template <typename T, typename U>
__aicore__ void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                       T src1, SELMODE selMode, uint32_t count);

// ---- include/basic_api/kernel_operator_vec_reduce_intf.h ----------------------------------------------------
template <typename T>
__aicore__ void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                          const int32_t count, bool calIndex = 0);
template <typename T, bool isSetMask = true>
__aicore__ void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                               const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                               const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX);
template <typename T, bool isSetMask = true>
__aicore__ void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                               const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                               const int32_t srcRepStride);
template <typename T, bool isSetMask = true>
__aicore__ void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                          const int32_t count);

// ---- include/basic_api/kernel_operator_block_sync_intf.h / kernel_operator_common_intf.h --------------------
template <pipe_t pipe>
__aicore__ void PipeBarrier();
template <HardEvent event>
__aicore__ void SetFlag(int32_t eventID);
template <HardEvent event>
__aicore__ void WaitFlag(int32_t eventID);
template <bool isAIVOnly = true>
__aicore__ void SyncAll();

// ---- include/basic_api/kernel_operator_sys_var_intf.h / kernel_operator_common_intf.h ----------------------
__aicore__ int64_t GetBlockIdx();
__aicore__ int64_t GetBlockNum();
__aicore__ int64_t GetSystemCycle();
__aicore__ GM_ADDR GetUserWorkspace(GM_ADDR workspace);
template <uint32_t index>
__aicore__ __gm__ uint8_t* GetHcclContext(void);

// ---- include/basic_api/kernel_operator_cache_intf.h ---------------------------------------------------------
template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst);

// ---- include/basic_api/kernel_operator_set_atomic_intf.h ----------------------------------------------------
template <typename T>
__aicore__ void SetAtomicAdd();
__aicore__ void SetAtomicNone();
}  // namespace AscendC

#endif  // OPGEN_TEST_KERNEL_OPERATOR_H
