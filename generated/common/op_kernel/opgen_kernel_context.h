/**
 * Copyright (c) 2025 Huawei Technologies Co., Ltd.
 * This program is free software, you can redistribute it and/or modify it under the terms and conditions of
 * CANN Open Software License Agreement Version 2.0 (the "License").
 * Please refer to the License for details. You may not use this file except in compliance with the License.
 * THIS SOFTWARE IS PROVIDED ON AN "AS IS" BASIS, WITHOUT WARRANTIES OF ANY KIND, EITHER EXPRESS OR IMPLIED,
 * INCLUDING BUT NOT LIMITED TO NON-INFRINGEMENT, MERCHANTABILITY, OR FITNESS FOR A PARTICULAR PURPOSE.
 * See LICENSE in the root of the software repository for the full text of the License.
 */
/**
 * The kernel helpers every generated kernel shares that read the HCCL context, the entry's arguments, the tiling data
 * and the E8M0 codes: WindowIn / WindowOut, MakeArgs, RunKernel, InitTilingData, EncodeE8M0Row and the reads of an
 * MC2 context.
 * A file of opgen's kernel library, copied into the generated tree's common/op_kernel/ (not generated: edit it in
 * opgen's templates/cpp/common/op_kernel/); each op's kernel includes it inside the op's namespace, after
 * opgen_kernel_helpers.h (RequireFits, Trap).
 */
#ifndef OPGEN_KERNEL_CONTEXT_H
#define OPGEN_KERNEL_CONTEXT_H

// The base of rank `rank`'s window in HCCL group `group` (`hccl`: the client initialised on that group). Where the
// product table says the context lists the windows (ProductFacts.context_windows: __NPU_ARCH__ 3510, whose
// Hccl<AICPU>::GetWindowsInAddr always returns 0, asc-devkit impl/adv_api/detail/hccl/impl/platform_v310/
// hccl_aicpu.h), they are read from HcclCombineOpParam::windowsIn[] as the real 950 ops read them; tiling keeps
// the world within that list, and a rank past it traps. tests/test_kernel_share.py checks the arch against the
// product table.
template <uint32_t group, typename HcclClient>
__aicore__ inline GM_ADDR WindowIn(HcclClient &hccl, uint32_t rank)
{
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    (void)hccl;
    auto ctx = reinterpret_cast<__gm__ HcclCombineOpParam *>(GetHcclContext<group>());
    RequireFits(static_cast<uint64_t>(rank) + 1UL, sizeof(ctx->windowsIn) / sizeof(ctx->windowsIn[0]));
    return reinterpret_cast<GM_ADDR>(ctx->windowsIn[rank]);
#else
    return hccl.GetWindowsInAddr(rank);
#endif
}

// The base of rank `rank`'s windowsOut in HCCL group `group`, found as WindowIn finds windowsIn.
template <uint32_t group, typename HcclClient>
__aicore__ inline GM_ADDR WindowOut(HcclClient &hccl, uint32_t rank)
{
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    (void)hccl;
    auto ctx = reinterpret_cast<__gm__ HcclCombineOpParam *>(GetHcclContext<group>());
    RequireFits(static_cast<uint64_t>(rank) + 1UL, sizeof(ctx->windowsOut) / sizeof(ctx->windowsOut[0]));
    return reinterpret_cast<GM_ADDR>(ctx->windowsOut[rank]);
#else
    return hccl.GetWindowsOutAddr(rank);
#endif
}

// The kernel entry's GM addresses as the op's KernelArgs (an aggregate of them in the entry's parameter order).
template <typename Args, typename... Addr>
__aicore__ inline Args MakeArgs(Addr... addr)
{
    return Args{addr...};
}

// One kernel instance run on the entry's arguments and tiling data: Kernel (the family's class template instantiated
// with the op's Traits) in saturation mode. On __NPU_ARCH__ 3510 the CTRL[60] the kernel found is restored when it
// ends, as the real 950 entries do (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch35/
// moe_distribute_dispatch_v2_apt.cpp).
template <typename Kernel, typename Args, typename TilingData>
__aicore__ inline void RunKernel(const Args &args, const TilingData &tiling)
{
    TPipe pipe;
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    const int64_t overflowMode = GetCtrlSpr<FLOAT_OVERFLOW_MODE_CTRL, FLOAT_OVERFLOW_MODE_CTRL>();
#endif
    UseInstructionSaturation();
    Kernel op;
    op.Init(args, tiling, &pipe);
    op.Process();
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    SetCtrlSpr<FLOAT_OVERFLOW_MODE_CTRL, FLOAT_OVERFLOW_MODE_CTRL>(overflowMode);
#endif
}

// Tiling data from GM, 4 bytes at a time (the op's tiling struct is a plain C struct).
template <typename TilingData>
__aicore__ inline void InitTilingData(const __gm__ uint8_t *tiling, TilingData *dst)
{
    const __gm__ uint32_t *src = reinterpret_cast<const __gm__ uint32_t *>(tiling);
    uint32_t *out = reinterpret_cast<uint32_t *>(dst);
    for (uint32_t i = 0U; i < static_cast<uint32_t>(sizeof(TilingData) / sizeof(uint32_t)); ++i) {
        out[i] = src[i];
    }
}

#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
// e8m0: FLOAT8_E8M0 codes from integral fp32 codes in [0, 255]: CastFromFloat's byte chain (fp32 → int32 → half →
// uint8, exact) into the codes' bytes.
__aicore__ inline void EncodeE8M0Row(const LocalTensor<fp8_e8m0_t> &dst, const LocalTensor<float> &src, uint32_t count,
                                     const LocalTensor<float> &scratch)
{
    CastFromFloat<uint8_t, RoundMode::CAST_RINT, true>(dst.template ReinterpretCast<uint8_t>(), src, count, scratch);
}
#endif

// The MC2 context the caller's op_api built for an EP domain that is one (`comm ep context;`) and passes as an
// input (an INT32 tensor of sizeof(Mc2MoeContextHead) + 2 * MC2_CONTEXT_RANKS * 8 bytes): this rank's id, then the
// base of every rank's window, whose first 1 MiB is the status area (code: mc2/common/op_kernel/mc2_moe_context.h
// Mc2MoeContext; mc2/moe_distribute_dispatch_v2/op_kernel/mc2_moe_context_holder.h reads it so). No HCCL client and
// no window size: the window is the ccl_buffer_size attribute tiling checked.
constexpr uint32_t MC2_CONTEXT_RANKS = 1024U; // code: Mc2Aclnn::HCCL_MAX_RANK_SIZE
struct Mc2MoeContextHead {
    uint32_t epRankId;
    uint32_t rankSizePerServer;
    uint64_t kfcContextAddr;
    uint64_t epHcclBuffer[MC2_CONTEXT_RANKS]; // then hcommHandle[MC2_CONTEXT_RANKS], which the kernels do not read
};

// The base of rank `rank`'s EP window (a rank past the context's list traps).
__aicore__ inline GM_ADDR ContextWindowIn(GM_ADDR ctx, uint32_t rank)
{
    RequireFits(static_cast<uint64_t>(rank) + 1UL, MC2_CONTEXT_RANKS);
    return reinterpret_cast<GM_ADDR>(reinterpret_cast<__gm__ Mc2MoeContextHead *>(ctx)->epHcclBuffer[rank]);
}

// A context built for another rank than the one tiling was given (epRankId) would address the wrong windows.
__aicore__ inline void RequireContextRank(GM_ADDR ctx, uint32_t epRankId)
{
    if (reinterpret_cast<__gm__ Mc2MoeContextHead *>(ctx)->epRankId != epRankId) {
        Trap();
    }
}

#endif // OPGEN_KERNEL_CONTEXT_H
