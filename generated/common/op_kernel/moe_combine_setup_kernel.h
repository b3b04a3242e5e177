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
 * A file of opgen's family kernels, copied into the generated tree's common/op_kernel/ (not generated: edit it
 * in opgen's templates/cpp/common/op_kernel/). op_kernel/<op>_gen.h includes it inside the op's namespace, after the
 * kernel helpers and opgen_family_window.h, and defines what the spec determines: the Traits this class template is
 * instantiated with, the kernel instances and the tiling key.
 *
 * The moe_combine_setup family's kernel (Ascend C, vector cores only), semantics moe_combine_setup: the sending half of
 * the Setup/Teardown family's combine.  It sends the expert rows back and returns without waiting for any peer.
 *
 * Process(), per rank and core (every quant mode of the spec sends the rows unchanged):
 *   SendChunks  assistInfoForCombine holds DispatchTeardown's inclusive cumulative counts, entry
 *               i = local expert * epWorldSize + owner rank; chunk i is expandX[cum[i - 1], cum[i]).  Each core
 *               takes a share of the owner ranks: every chunk for that owner goes into the owner's window at the
 *               combine block of its global expert (epRankId - sharedExpertRankNum) * localMoeExpertNum + local
 *               expert, from slot 0 (so the owner finds pair (t, k) at slot expandIdx[t * K + k]); then the owner's
 *               combine status block (1.0f) in its windowsOut.  A shared-expert rank sends no rows, only the status.
 * What lands in the windows is what the real arch35 CombineSetup's URMA write-with-notify work requests leave (code:
 * mc2/moe_distribute_combine_setup/op_kernel/arch35/moe_distribute_combine_setup_arch35.h Communication): the same
 * blocks at the same offsets, an empty chunk to a peer as one row (expandX's first: `max(curTokenNum, 1U)` rows from
 * expandX + 0), none to this rank itself (`if (likely(curTokenNum > 0U)) CurRankComm`), and 1.0f at the source
 * rank's status block once its last block for that owner is sent (the notify of the last local expert's request).
 * The transport differs: the rows go by MTE copies (data, then its status block, the order a URMA write with notify
 * keeps), not by work requests and doorbells.  quantExpandXOut (the staging buffer of comm quantisation) and
 * commCmdInfoOut are not written: the real kernel writes neither (its Init leaves both parameters unnamed).
 *
 * Traits: TilingData (the op's tiling struct), Args (the GM addresses its entry received), the element types
 * ExpandXT (expandX), the element type each GM tensor is addressed as (ExpandXGmT, AssistInfoForCombineGmT), ExtraGm
 * (the GM tensors the spec's formulas read beside them: Init(args)), EP_CC_OFFSET (the EP group's cc tiling in
 * TilingData).
 */
#ifndef MOE_COMBINE_SETUP_KERNEL_H
#define MOE_COMBINE_SETUP_KERNEL_H

template <typename Traits>
class MoeCombineSetupKernel {
public:
    using TilingData = typename Traits::TilingData;
    using Args = typename Traits::Args;
    using ExpandXT = typename Traits::ExpandXT;
    __aicore__ inline MoeCombineSetupKernel()
    {
    }
    __aicore__ inline void Init(const Args &args, const TilingData &tiling, TPipe *pipe);
    __aicore__ inline void Process();

private:
    static_assert(DTypeTraits<ExpandXT>::BITS == 8U * COMBINE_ELEM_BYTES, "combine rows are FLOAT16 or BFLOAT16");

    __aicore__ inline void SendChunks();
    // this core's contiguous share [begin, end) of `total` items
    __aicore__ inline void SplitRange(uint32_t total, uint32_t &begin, uint32_t &end) const
    {
        CoreShare(total, coreIdx_, coreNum_, begin, end);
    }

    // The combine blocks of this call's data half on rank `rank`, and this rank's combine status block there.
    __aicore__ inline GM_ADDR WinCombine(uint32_t rank)
    {
        return WindowIn<EP_GROUP>(hccl_, rank) + win_.dataAt + dataState_ * win_.halfBytes;
    }
    __aicore__ inline GM_ADDR WinStatus(uint32_t rank)
    {
        return FamilyStatusWindow<EP_GROUP>(rank) + dataState_ * COMBINE_STATUS_HALF +
               static_cast<uint64_t>(epRank_) * StatusSlotBytes(epWorld_ * localMoe_);
    }

    TPipe *pipe_{nullptr};
    TilingData tiling_;
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl_; // EP group: window addresses of every rank

    GlobalTensor<typename Traits::ExpandXGmT> expandXGm_;
    GlobalTensor<typename Traits::AssistInfoForCombineGmT> assistInfoForCombineGm_;
    typename Traits::ExtraGm extraGm_; // GM tensors the spec's formulas read beside these

    TBuf<TPosition::VECCALC> cumBuf_;    // the cumulative counts (localMoeExpertNum * epWorldSize)
    TBuf<TPosition::VECCALC> statusBuf_; // one status entry
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> copyQue_; // expandX -> owner windows

    uint32_t coreIdx_{0U};
    uint32_t coreNum_{1U};
    uint32_t epRank_{0U};
    uint32_t epWorld_{1U};
    uint32_t hLen_{0U};
    uint32_t sharedRanks_{0U};
    uint32_t localMoe_{1U}; // localMoeExpertNum
    bool isSharedRank_{false};
    uint32_t rowBytes_{0U}; // one expandX row (packed in the combine blocks)
    FamilyWindow win_{};
    uint32_t dataState_{0U};
};

template <typename Traits>
__aicore__ inline void MoeCombineSetupKernel<Traits>::Init(const Args &args, const TilingData &tiling, TPipe *pipe)
{
    pipe_ = pipe;
    tiling_ = tiling;
    coreIdx_ = static_cast<uint32_t>(GetBlockIdx());
    coreNum_ = static_cast<uint32_t>(GetBlockNum());
    // The HCCL tilings the host built (Mc2CcTilingConfig): the init tiling, then the EP cc tiling by its offset
    // from it. Only window addresses are read afterwards: no HCCL task is issued.
    hccl_.InitV2(GetHcclContext<EP_GROUP>(), &tiling_.mc2InitTiling);
    hccl_.SetCcTilingV2(Traits::EP_CC_OFFSET);
    epRank_ = static_cast<uint32_t>(tiling.epRankId);
    epWorld_ = static_cast<uint32_t>(tiling.epWorldSize);
    hLen_ = static_cast<uint32_t>(tiling.H);
    sharedRanks_ = static_cast<uint32_t>(tiling.sharedExpertRankNum);
    localMoe_ = static_cast<uint32_t>(tiling.localMoeExpertNum);
    isSharedRank_ = tiling.isSharedRank != 0;
    rowBytes_ = RowBytes<ExpandXT>(hLen_);
    win_ = MakeFamilyWindow(tiling, static_cast<uint32_t>(tiling.moeExpertNum), static_cast<uint32_t>(tiling.maxBs),
                            hLen_);

    expandXGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpandXGmT *>(args.expandX));
    assistInfoForCombineGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::AssistInfoForCombineGmT *>(args.assistInfoForCombine));
    extraGm_.Init(args);

    // data state of this call: this core's word (CombineTeardown flips every core's)
    pipe_->InitBuffer(statusBuf_, UB_BLOCK);
    dataState_ =
        ReadStateWord(CoreStateWord(FamilyStatusWindow<EP_GROUP>(epRank_), coreIdx_), statusBuf_.Get<int32_t>());
    ResetPipe(pipe_);
}

template <typename Traits>
__aicore__ inline void MoeCombineSetupKernel<Traits>::Process()
{
    SendChunks();
}

// ---- every (local expert, owner) chunk into the owner's combine block of its global expert --------------
template <typename Traits>
__aicore__ inline void MoeCombineSetupKernel<Traits>::SendChunks()
{
    const uint32_t entries = isSharedRank_ ? 0U : localMoe_ * epWorld_;
    const uint32_t cumBytes = AlignUp((entries + 1U) * 4U, UB_BLOCK);
    pipe_->InitBuffer(cumBuf_, cumBytes);
    pipe_->InitBuffer(statusBuf_, UB_BLOCK);
    const uint32_t room = static_cast<uint32_t>(tiling_.totalUbSize) > cumBytes + UB_BLOCK + REPEAT_BYTES ?
                              static_cast<uint32_t>(tiling_.totalUbSize) - cumBytes - UB_BLOCK - REPEAT_BYTES :
                              0U;
    const uint32_t rowsPerPiece = (room / 2U / rowBytes_ > 0U) ? room / 2U / rowBytes_ : 1U; // two pieces in flight
    const uint32_t pieceBytes = rowsPerPiece * rowBytes_;
    pipe_->InitBuffer(copyQue_, 2U, AlignUp(pieceBytes, UB_BLOCK));
    LocalTensor<int32_t> cum = cumBuf_.Get<int32_t>();
    if (entries > 0U) {
        DataCopyPad(cum, assistInfoForCombineGm_, DataCopyExtParams(1U, entries * 4U, 0U, 0U, 0U),
                    DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_S>();
    }
    LocalTensor<int32_t> status = statusBuf_.Get<int32_t>();
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(epWorld_, begin, end);
    for (uint32_t owner = begin; owner < end; ++owner) {
        for (uint32_t le = 0U; le < (isSharedRank_ ? 0U : localMoe_); ++le) {
            const uint32_t i = le * epWorld_ + owner;
            const int32_t first = (i == 0U) ? 0 : cum.GetValue(i - 1U);
            const int32_t rows = cum.GetValue(i) - first;
            if (rows <= 0 && owner == epRank_) {
                continue; // code: the real kernel copies nothing to itself for an empty chunk
            }
            const uint64_t expert = static_cast<uint64_t>(epRank_ - sharedRanks_) * localMoe_ + le; // global id
            GlobalTensor<uint8_t> dst;
            dst.SetGlobalBuffer(WinCombine(owner) + expert * win_.combineBlock);
            // code: an empty chunk to a peer is one row from expandX's start (max(curTokenNum, 1U))
            const uint64_t from = rows > 0 ? static_cast<uint64_t>(first) * rowBytes_ : 0UL;
            CopyGmBytes(copyQue_, pieceBytes, dst, expandXGm_[from],
                        static_cast<uint64_t>(rows > 0 ? rows : 1) * rowBytes_);
        }
        PostEntry(WinStatus(owner), FLAG_SET, 0, status); // {1.0f, 0, ...}: the notify of the last block
    }
    PipeBarrier<PIPE_ALL>();
}


#endif // MOE_COMBINE_SETUP_KERNEL_H
