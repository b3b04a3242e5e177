/**
 * The Ascend C calls of __NPU_ARCH__ 3510 the twin declares without modelling them. First the register-based vector
 * API calls (asc-devkit include/basic_api/reg_compute/kernel_reg_compute_*_intf.h and their
 * impl/basic_api/reg_compute/ ..._intf_impl.h forms) that the real Ascend 950 DispatchV2 / CombineV2 headers
 * name in code paths the twin does not run (reg_ops.h models those of the per-group and MX FP8 paths of
 * mc2/moe_distribute_dispatch_v2/op_kernel/quantize_functions.h and of the int8 dequant of
 * moe_distribute_combine_v2_quant.h): the MX clip path, that header's MX forms and the other forms the headers
 * compile. They are declared with the public headers'
 * signatures so that those headers compile; their semantics are not modelled, so a kernel instance that calls one
 * does not build: the body is a static_assert naming the call, fired only when a tiling key's instance calls it.
 * Then the basic API calls only the Ascend 950 CCU kernels make (moe_distribute_dispatch_v2_a5_ccu.h: the proposal
 * sort Concat / Sort / Extract, the loop mode of DataCopyPad): the CCU server faults at Hccl::InitV2 already; the
 * templates fail to build as above, SetLoopModePara (it changes what every later DataCopyPad moves) faults when run.
 */
#ifndef OPGEN_SIM_UNMODELLED_3510_H
#define OPGEN_SIM_UNMODELLED_3510_H

#include "opgen_sim/reg_ops.h"

namespace opgen_sim {
namespace reg {
template <typename... T>
constexpr bool kNotModelled = false;  // dependent: a static_assert on it fires only in an instance that is called
}  // namespace reg
}  // namespace opgen_sim

#define OPGEN_SIM_REG_NOT_MODELLED(NAME, ...)                                                                         \
    static_assert(opgen_sim::reg::kNotModelled<__VA_ARGS__>,                                                        \
                  "MicroAPI::" NAME ": the twin does not model this register-API call (opgen_sim/unmodelled_3510.h): " \
                  "the kernel instance calling it cannot run on the twin")

namespace AscendC {
namespace Reg {

// kernel_reg_compute_vec_binary_scalar_intf.h
#define OPGEN_SIM_REG_BINARY_SCALAR(NAME)                                                                   \
    template <typename T = DefaultType, typename U, MaskMergeMode mode = MaskMergeMode::ZEROING, typename S> \
    __simd_callee__ inline void NAME(S& dstReg, S& srcReg, U scalarValue, MaskReg& mask)                    \
    {                                                                                                       \
        OPGEN_SIM_REG_NOT_MODELLED(#NAME, S, U);                                                            \
    }
OPGEN_SIM_REG_BINARY_SCALAR(Maxs)
OPGEN_SIM_REG_BINARY_SCALAR(Mins)
#undef OPGEN_SIM_REG_BINARY_SCALAR

// kernel_reg_compute_maskreg_intf.h
template <typename T>
__simd_callee__ inline void Interleave(MaskReg& dst0, MaskReg& dst1, MaskReg& src0, MaskReg& src1)
{
    OPGEN_SIM_REG_NOT_MODELLED("Interleave (masks)", T);
}

// kernel_reg_compute_pack_intf.h
template <typename T = DefaultType, typename U = DefaultType, HighLowPart part = HighLowPart::LOWEST, typename S,
          typename V>
__simd_callee__ inline void Pack(S& dstReg, V& srcReg)
{
    OPGEN_SIM_REG_NOT_MODELLED("Pack", S, V);
}

// kernel_reg_compute_datacopy_intf.h (DataCopy*: the impl's names of LoadAlign / StoreAlign / *UnAlign)
template <typename T = DefaultType, LoadDist dist = LoadDist::DIST_NORM, typename U>
__simd_callee__ inline void LoadAlign(U& dstReg, __ubuf__ T* srcAddr)
{
    OPGEN_SIM_REG_NOT_MODELLED("LoadAlign", T, U);
}
template <typename T>
__simd_callee__ inline void DataCopyUnAlignPre(UnalignReg& ureg, __ubuf__ T* srcAddr)
{
    OPGEN_SIM_REG_NOT_MODELLED("DataCopyUnAlignPre", T);
}
template <typename T = DefaultType, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE, typename U>
__simd_callee__ inline void DataCopyUnAlign(U& dstReg, UnalignReg& ureg, __ubuf__ T*& srcAddr, uint32_t stride)
{
    OPGEN_SIM_REG_NOT_MODELLED("DataCopyUnAlign (load)", T, U);
}
template <typename T>
__simd_callee__ inline void LoadUnAlignPre(UnalignRegForLoad& ureg, __ubuf__ T* srcAddr)
{
    OPGEN_SIM_REG_NOT_MODELLED("LoadUnAlignPre", T);
}
template <typename T = DefaultType, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE, typename U>
__simd_callee__ inline void LoadUnAlign(U& dstReg, UnalignRegForLoad& ureg, __ubuf__ T*& srcAddr, uint32_t postUpdateStride)
{
    OPGEN_SIM_REG_NOT_MODELLED("LoadUnAlign", T, U);
}

// kernel_reg_compute_membar_intf.h
template <MemType src, MemType dst>
__simd_callee__ inline void LocalMemBar()
{
    OPGEN_SIM_REG_NOT_MODELLED("LocalMemBar", std::integral_constant<MemType, src>);
}

}  // namespace Reg

// include/basic_api/kernel_operator_proposal_intf.h
template <typename T>
__aicore__ inline void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                              const int32_t repeatTime)
{
    OPGEN_SIM_REG_NOT_MODELLED("(basic API) Concat", T);
}
template <typename T>
__aicore__ inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex,
                               const LocalTensor<T>& sorted, const int32_t repeatTime)
{
    OPGEN_SIM_REG_NOT_MODELLED("(basic API) Extract", T);
}
template <typename T, bool isFullSort>
__aicore__ inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
                            LocalTensor<T>& tmp, const int32_t repeatTime)
{
    OPGEN_SIM_REG_NOT_MODELLED("(basic API) Sort", T);
}
template <typename T>
__aicore__ inline uint32_t GetSortLen(const uint32_t elemCount)
{
    OPGEN_SIM_REG_NOT_MODELLED("(basic API) GetSortLen", T);
    return elemCount;
}

// include/basic_api/kernel_struct_data_copy.h
enum class DataCopyMVType : uint8_t {
    UB_TO_OUT = 0,
    OUT_TO_UB = 1,
};
struct LoopModeParams {
    uint32_t loop1Size = 0;
    uint32_t loop2Size = 0;
    uint64_t loop1SrcStride = 0;
    uint64_t loop1DstStride = 0;
    uint64_t loop2SrcStride = 0;
    uint64_t loop2DstStride = 0;
};
// include/basic_api/kernel_operator_data_copy_intf.h
__aicore__ inline void SetLoopModePara(const LoopModeParams& loopParams, DataCopyMVType type)
{
    (void)loopParams;
    opgen_sim::Raise("SetLoopModePara (%s): the loop mode of DataCopyPad is not modelled by the twin",
                     type == DataCopyMVType::OUT_TO_UB ? "OUT_TO_UB" : "UB_TO_OUT");
}
__aicore__ inline void ResetLoopModePara(DataCopyMVType type)
{
    opgen_sim::Raise("ResetLoopModePara (%s): the loop mode of DataCopyPad is not modelled by the twin",
                     type == DataCopyMVType::OUT_TO_UB ? "OUT_TO_UB" : "UB_TO_OUT");
}
}  // namespace AscendC

#undef OPGEN_SIM_REG_NOT_MODELLED

#endif  // OPGEN_SIM_UNMODELLED_3510_H
