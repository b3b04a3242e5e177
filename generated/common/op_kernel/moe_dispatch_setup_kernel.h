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
 * instantiated with and the body of QuantRow (the spec's quant formulas, lowered), the kernel instances and the tiling
 * key.
 *
 * The moe_dispatch_setup family's kernel (Ascend C, vector cores only), semantics moe_dispatch_setup: the sending half
 * of the Setup/Teardown family's dispatch.  It stages and sends, then returns without waiting for any peer.
 *
 * Process(), per rank and core:
 *   1. Route       expertIds (and the 1-D xActiveMask: its first sum(mask) tokens are active) give the valid pairs
 *                  (expert id in [0, moeExpertNum)) in flattened (token, k) order, the rows per expert and the
 *                  first yOut row of every expert (a counting sort: stable, ties keep the flattened order).
 *   2. StageRows   each core takes a contiguous range of yOut rows: row base[e] + slot of the slot-th valid pair
 *                  to expert e holds x[token] through the spec's quant formula (QuantRow, lowered
 *                  from the spec; smooth-scale row e + S), rows [BS * K, BS * K + S * activeBS) the shared copies
 *                  (shared expert s, active token j: row BS * K + s * activeBS + j, smooth-scale row s), every
 *                  other row and every row's tail past its H elements zero; expandIdxOut[t * K + k] is the slot
 *                  of a valid pair (0 for the others), each core writing a contiguous share.
 *   3. SendChunks  after SyncAll, every core takes a share of the destinations (shared-expert ranks, then MoE
 *                  experts): the contiguous yOut rows of a destination go into its window's dispatch block
 *                  (epRankId * localMoeExpertNum + e % localMoeExpertNum on MoE rank S_r + e / localMoeExpertNum;
 *                  block epRankId on a shared rank), then its status block {2.0f, rows}, zero rows included, in
 *                  slot local expert * epWorldSize + epRankId of the data state's status half (a shared rank:
 *                  slot epRankId), as the real arch35 kernel (opgen_family_window.h).
 * The sends are copies into the peers' HCCL windows (WindowIn: the HCCL context's windowsIn[]; the status entries in
 * its windowsOut[], FamilyStatusWindow) in the order a URMA write with notify keeps (data, then its status entry);
 * commCmdInfoOut is not written, as the real arch35 kernel writes nothing there (code:
 * mc2/moe_distribute_dispatch_setup/ op_kernel/arch35/moe_distribute_dispatch_setup_arch35.h Init never reads it).
 *
 * Traits: TilingData (the op's tiling struct), Args (the GM addresses its entry received), the element types
 * XT, YOutT (x, yOut), the element type each GM tensor is addressed as (XGmT, ExpertIdsGmT, ScalesOptionalGmT,
 * XActiveMaskOptionalGmT, YOutGmT, ExpandIdxOutGmT), ExtraGm (the GM tensors the spec's formulas read beside them:
 * Init(args)), EP_CC_OFFSET (the EP group's cc tiling in TilingData), CALC_SLOTS (UB rows of the lowered formulas),
 * MaskRank(tiling) and HasMask(tiling) (xActiveMaskOptional).
 */
#ifndef MOE_DISPATCH_SETUP_KERNEL_H
#define MOE_DISPATCH_SETUP_KERNEL_H

template <typename Traits>
class MoeDispatchSetupKernel {
public:
    using TilingData = typename Traits::TilingData;
    using Args = typename Traits::Args;
    using XT = typename Traits::XT;
    using YOutT = typename Traits::YOutT;
    __aicore__ inline MoeDispatchSetupKernel()
    {
    }
    __aicore__ inline void Init(const Args &args, const TilingData &tiling, TPipe *pipe);
    __aicore__ inline void Process();

private:
    // quant formula rows: UB slots per quant mode (from the lowering)
    static constexpr uint32_t CALC_SLOTS = Traits::CALC_SLOTS;

    __aicore__ inline void Route();
    __aicore__ inline void StageRows();
    __aicore__ inline void StageRow(uint32_t tokenIdx, uint32_t expertRow, uint32_t yRow);
    __aicore__ inline void ZeroRow(uint32_t yRow);
    __aicore__ inline void QuantRow(const LocalTensor<XT> &xRow, const LocalTensor<uint8_t> &msg, uint32_t tokenIdx,
                                    uint32_t expertRow);
    __aicore__ inline void SendChunks();
    // this core's contiguous share [begin, end) of `total` items
    __aicore__ inline void SplitRange(uint32_t total, uint32_t &begin, uint32_t &end) const
    {
        CoreShare(total, coreIdx_, coreNum_, begin, end);
    }

    template <typename T>
    __aicore__ inline LocalTensor<T> CalcSlot(uint32_t idx)
    {
        return calcBuf_.GetWithOffset<T>(slotBytes_ / static_cast<uint32_t>(sizeof(T)), idx * slotBytes_);
    }
    // The dispatch blocks of this call's data half on rank `rank`, and its dispatch status entries.
    __aicore__ inline GM_ADDR WinDispatch(uint32_t rank)
    {
        return WindowIn<EP_GROUP>(hccl_, rank) + win_.dataAt + dataState_ * win_.halfBytes + dispatchAt_;
    }
    __aicore__ inline GM_ADDR WinEntries(uint32_t rank)
    {
        return FamilyStatusWindow<EP_GROUP>(rank) + dataState_ * COMBINE_STATUS_HALF;
    }

    TPipe *pipe_{nullptr};
    TilingData tiling_;
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl_; // EP group: window addresses of every rank

    GlobalTensor<typename Traits::XGmT> xGm_;
    GlobalTensor<typename Traits::ExpertIdsGmT> expertIdsGm_;
    GlobalTensor<typename Traits::ScalesOptionalGmT> scalesOptionalGm_;
    GlobalTensor<typename Traits::XActiveMaskOptionalGmT> xActiveMaskOptionalGm_;
    GlobalTensor<typename Traits::YOutGmT> yOutGm_;
    GlobalTensor<typename Traits::ExpandIdxOutGmT> expandIdxOutGm_;
    typename Traits::ExtraGm extraGm_; // GM tensors the spec's formulas read beside these

    TBuf<TPosition::VECCALC> idsBuf_;    // expertIds (BS * K)
    TBuf<TPosition::VECCALC> maskBuf_;   // xActiveMaskOptional (BS)
    TBuf<TPosition::VECCALC> cntBuf_;    // rows per MoE expert, then the first yOut row of every expert
    TBuf<TPosition::VECCALC> seenBuf_;   // valid pairs seen so far per MoE expert (the slot of the next one)
    TBuf<TPosition::VECCALC> idxBuf_;    // this core's share of expandIdxOut
    TBuf<TPosition::VECCALC> calcBuf_;   // CALC_SLOTS quant rows
    TBuf<TPosition::VECCALC> statusBuf_; // one status entry
    TQue<TPosition::VECIN, 1> xInQue_;   // token rows of x
    TQue<TPosition::VECOUT, 1> msgQue_;  // staged yOut rows
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> copyQue_; // yOut -> peer windows

    uint32_t coreIdx_{0U};
    uint32_t coreNum_{1U};
    uint32_t epRank_{0U};
    uint32_t epWorld_{1U};
    uint32_t bs_{0U};
    uint32_t hLen_{0U};
    uint32_t topK_{0U};
    uint32_t moeExperts_{0U};
    uint32_t sharedRanks_{0U};
    uint32_t sharedExperts_{0U}; // 0 when sharedExpertRankNum is 0 (sharedExpertNum 1 then means none)
    uint32_t ranksPerShared_{0U};
    uint32_t localMoe_{1U}; // localMoeExpertNum: experts per MoE rank
    uint32_t maxBs_{0U};
    uint32_t maskRank_{1U};
    bool hasMask_{false};
    uint32_t activeTokens_{0U};
    uint32_t validPairs_{0U}; // rows [0, validPairs_) of yOut are MoE rows
    uint32_t rowBytesX_{0U};
    uint32_t msgBytes_{0U};    // one yOut row: tokenMsgSize elements
    uint64_t blockBytes_{0UL}; // one dispatch block: maxBs rows
    FamilyWindow win_{};
    uint64_t dispatchAt_{0UL}; // the dispatch area in a data half (tiling.win_dispatch_at: over the combine area)
    uint32_t dataState_{0U};
    uint32_t slotBytes_{0U};
    uint32_t bufDepth_{1U};
};

template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::Init(const Args &args, const TilingData &tiling, TPipe *pipe)
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
    bs_ = static_cast<uint32_t>(tiling.BS);
    hLen_ = static_cast<uint32_t>(tiling.H);
    topK_ = static_cast<uint32_t>(tiling.K);
    moeExperts_ = static_cast<uint32_t>(tiling.moeExpertNum);
    sharedRanks_ = static_cast<uint32_t>(tiling.sharedExpertRankNum);
    sharedExperts_ = (sharedRanks_ == 0U) ? 0U : static_cast<uint32_t>(tiling.sharedExpertNum);
    ranksPerShared_ = (sharedExperts_ == 0U) ? 0U : sharedRanks_ / sharedExperts_;
    localMoe_ = static_cast<uint32_t>(tiling.localMoeExpertNum);
    maxBs_ = static_cast<uint32_t>(tiling.maxBs);
    maskRank_ = Traits::MaskRank(tiling);
    hasMask_ = Traits::HasMask(tiling);
    rowBytesX_ = RowBytes<XT>(hLen_);
    msgBytes_ = RowBytes<YOutT>(static_cast<uint32_t>(tiling.tokenMsgSize));
    blockBytes_ = static_cast<uint64_t>(maxBs_) * msgBytes_;
    win_ = MakeFamilyWindow(tiling, moeExperts_, maxBs_, hLen_);
    dispatchAt_ = static_cast<uint64_t>(tiling.win_dispatch_at);
    // every rank's window receives one block per (source rank, local expert), one per source on a shared rank
    RequireFits(static_cast<uint64_t>(epWorld_) * (localMoe_ > 1U ? localMoe_ : 1U) * blockBytes_,
                static_cast<uint64_t>(tiling.win_dispatch));
    // and one status block per (local expert, source rank) in a status half
    RequireFits(static_cast<uint64_t>(epWorld_) * localMoe_ * StatusSlotBytes(epWorld_ * localMoe_),
                COMBINE_STATUS_HALF);
    slotBytes_ = AlignUp(hLen_ * 4U, REPEAT_BYTES) + AlignUp(CeilDiv(hLen_, 8U), REPEAT_BYTES) + REPEAT_BYTES;

    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::XGmT *>(args.x));
    expertIdsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpertIdsGmT *>(args.expertIds));
    scalesOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::ScalesOptionalGmT *>(args.scalesOptional));
    xActiveMaskOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::XActiveMaskOptionalGmT *>(args.xActiveMaskOptional));
    yOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::YOutGmT *>(args.yOut));
    expandIdxOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpandIdxOutGmT *>(args.expandIdxOut));
    extraGm_.Init(args);

    // data state of this call: this core's word (DispatchTeardown flips it), as the real kernel's (code: arch35 Init,
    // selfDataStatusTensor at STATE_WIN_OFFSET + aivId_ * WIN_ADDR_ALIGN)
    pipe_->InitBuffer(statusBuf_, UB_BLOCK);
    dataState_ =
        ReadStateWord(CoreStateWord(FamilyStatusWindow<EP_GROUP>(epRank_), coreIdx_), statusBuf_.Get<int32_t>());
    ResetPipe(pipe_);
}

template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::Process()
{
    Route();
    StageRows();
    SendChunks();
}

// ---- 1. route: active tokens, rows per expert and each expert's first yOut row ---------------------
template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::Route()
{
    const uint32_t pairs = bs_ * topK_;
    const uint32_t expertBytes = AlignUp(moeExperts_ * 4U, UB_BLOCK);
    pipe_->InitBuffer(idsBuf_, AlignUp(pairs * 4U, UB_BLOCK));
    pipe_->InitBuffer(maskBuf_, AlignUp(bs_ * maskRank_, UB_BLOCK));
    pipe_->InitBuffer(cntBuf_, 2U * expertBytes);
    LocalTensor<int32_t> ids = idsBuf_.Get<int32_t>();
    DataCopyPad(ids, expertIdsGm_, DataCopyExtParams(1U, pairs * 4U, 0U, 0U, 0U),
                DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
    LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();
    if (hasMask_) {
        DataCopyPad(mask, xActiveMaskOptionalGm_, DataCopyExtParams(1U, bs_, 0U, 0U, 0U),
                    DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
    }
    SyncFunc<HardEvent::MTE2_S>();
    // A 1-D xActiveMask keeps its first sum(mask) tokens (its true values precede the false ones).
    activeTokens_ = bs_;
    if (hasMask_) {
        uint32_t active = 0U;
        for (uint32_t t = 0U; t < bs_; ++t) {
            active += (mask.GetValue(t) != 0U) ? 1U : 0U;
        }
        activeTokens_ = active;
    }
    LocalTensor<int32_t> cnt = cntBuf_.Get<int32_t>();
    LocalTensor<int32_t> base = cntBuf_.GetWithOffset<int32_t>(expertBytes / 4U, expertBytes);
    for (uint32_t e = 0U; e < moeExperts_; ++e) {
        cnt.SetValue(e, 0);
    }
    validPairs_ = 0U;
    for (uint32_t i = 0U; i < activeTokens_ * topK_; ++i) {
        const int32_t expert = ids.GetValue(i);
        if (expert < 0 || static_cast<uint32_t>(expert) >= moeExperts_) {
            continue; // zero / copy / constant experts never leave the rank
        }
        cnt.SetValue(static_cast<uint32_t>(expert), cnt.GetValue(static_cast<uint32_t>(expert)) + 1);
        ++validPairs_;
    }
    int32_t first = 0;
    for (uint32_t e = 0U; e < moeExperts_; ++e) { // the rows of expert e start after those of experts < e
        base.SetValue(e, first);
        first += cnt.GetValue(e);
    }
}

// ---- 2. stage: this core's yOut rows and its share of expandIdxOut -----------------------------------
template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::StageRows()
{
    const uint32_t pairs = bs_ * topK_;
    const uint32_t moeEnd = pairs;                                      // rows [validPairs_, moeEnd) are zero
    const uint32_t sharedEnd = moeEnd + sharedExperts_ * activeTokens_; // rows [sharedEnd, total) are zero
    const uint32_t total = bs_ * (topK_ + sharedExperts_);
    uint32_t rowBegin = 0U;
    uint32_t rowEnd = 0U;
    SplitRange(total, rowBegin, rowEnd);
    uint32_t pairBegin = 0U;
    uint32_t pairEnd = 0U;
    SplitRange(pairs, pairBegin, pairEnd);
    const uint32_t fixedBytes = AlignUp(pairs * 4U, UB_BLOCK) + AlignUp(bs_ * maskRank_, UB_BLOCK) +
                                3U * AlignUp(moeExperts_ * 4U, UB_BLOCK) +
                                AlignUp((pairEnd - pairBegin + 1U) * 4U, UB_BLOCK) + CALC_SLOTS * slotBytes_;
    const uint32_t rowBytes = AlignUp(rowBytesX_, UB_BLOCK) + msgBytes_;
    bufDepth_ = (fixedBytes + 2U * rowBytes <= static_cast<uint32_t>(tiling_.totalUbSize)) ? 2U : 1U;
    pipe_->InitBuffer(seenBuf_, AlignUp(moeExperts_ * 4U, UB_BLOCK));
    pipe_->InitBuffer(idxBuf_, AlignUp((pairEnd - pairBegin + 1U) * 4U, UB_BLOCK));
    pipe_->InitBuffer(calcBuf_, CALC_SLOTS * slotBytes_);
    pipe_->InitBuffer(xInQue_, bufDepth_, AlignUp(rowBytesX_, UB_BLOCK));
    pipe_->InitBuffer(msgQue_, bufDepth_, msgBytes_);

    LocalTensor<int32_t> ids = idsBuf_.Get<int32_t>();
    const uint32_t expertBytes = AlignUp(moeExperts_ * 4U, UB_BLOCK);
    LocalTensor<int32_t> base = cntBuf_.GetWithOffset<int32_t>(expertBytes / 4U, expertBytes);
    LocalTensor<int32_t> seen = seenBuf_.Get<int32_t>();
    LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
    for (uint32_t e = 0U; e < moeExperts_; ++e) {
        seen.SetValue(e, 0);
    }
    for (uint32_t i = 0U; i < pairs; ++i) {
        const int32_t expert = ids.GetValue(i);
        const uint32_t tokenIdx = i / topK_;
        const bool valid = tokenIdx < activeTokens_ && expert >= 0 && static_cast<uint32_t>(expert) < moeExperts_;
        int32_t slot = 0;
        if (valid) {
            slot = seen.GetValue(static_cast<uint32_t>(expert));
            seen.SetValue(static_cast<uint32_t>(expert), slot + 1);
        }
        if (i >= pairBegin && i < pairEnd) {
            idx.SetValue(i - pairBegin, slot); // expandIdxOut: the pair's slot in its expert's rows (0 if not sent)
        }
        if (!valid) {
            continue;
        }
        const uint32_t yRow = static_cast<uint32_t>(base.GetValue(static_cast<uint32_t>(expert)) + slot);
        if (yRow >= rowBegin && yRow < rowEnd) {
            StageRow(tokenIdx, static_cast<uint32_t>(expert) + sharedExperts_, yRow);
        }
    }
    for (uint32_t r = (rowBegin > validPairs_ ? rowBegin : validPairs_); r < MinU32(rowEnd, moeEnd); ++r) {
        ZeroRow(r);
    }
    for (uint32_t r = (rowBegin > moeEnd ? rowBegin : moeEnd); r < MinU32(rowEnd, sharedEnd); ++r) {
        const uint32_t j = r - moeEnd; // shared expert j / activeBS, active token j % activeBS
        StageRow(j % activeTokens_, j / activeTokens_, r);
    }
    for (uint32_t r = (rowBegin > sharedEnd ? rowBegin : sharedEnd); r < rowEnd; ++r) {
        ZeroRow(r);
    }
    if (pairEnd > pairBegin) {
        SyncFunc<HardEvent::S_MTE3>();
        DataCopyPad(expandIdxOutGm_[pairBegin], idx, DataCopyExtParams(1U, (pairEnd - pairBegin) * 4U, 0U, 0U, 0U));
    }
}

// One yOut row: x[tokenIdx] through the spec's formula, zeros past its H elements.
template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::StageRow(uint32_t tokenIdx, uint32_t expertRow, uint32_t yRow)
{
    LocalTensor<uint8_t> xBytes = xInQue_.AllocTensor<uint8_t>();
    DataCopyPad(xBytes, xGm_[static_cast<uint64_t>(tokenIdx) * rowBytesX_],
                DataCopyExtParams(1U, rowBytesX_, 0U, 0U, 0U), DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
    xInQue_.EnQue(xBytes);
    xBytes = xInQue_.DeQue<uint8_t>();
    LocalTensor<uint8_t> msg = msgQue_.AllocTensor<uint8_t>();
    Duplicate(msg.template ReinterpretCast<int32_t>(), static_cast<int32_t>(0), static_cast<int32_t>(msgBytes_ / 4U));
    PipeBarrier<PIPE_V>();
    QuantRow(xBytes.template ReinterpretCast<XT>(), msg, tokenIdx, expertRow);
    xInQue_.FreeTensor(xBytes);
    msgQue_.EnQue(msg);
    msg = msgQue_.DeQue<uint8_t>();
    DataCopyPad(yOutGm_[static_cast<uint64_t>(yRow) * msgBytes_], msg, DataCopyExtParams(1U, msgBytes_, 0U, 0U, 0U));
    msgQue_.FreeTensor(msg);
}

template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::ZeroRow(uint32_t yRow)
{
    LocalTensor<uint8_t> msg = msgQue_.AllocTensor<uint8_t>();
    Duplicate(msg.template ReinterpretCast<int32_t>(), static_cast<int32_t>(0), static_cast<int32_t>(msgBytes_ / 4U));
    msgQue_.EnQue(msg);
    msg = msgQue_.DeQue<uint8_t>();
    DataCopyPad(yOutGm_[static_cast<uint64_t>(yRow) * msgBytes_], msg, DataCopyExtParams(1U, msgBytes_, 0U, 0U, 0U));
    msgQue_.FreeTensor(msg);
}


// ---- 3. send: every destination's rows into its window, then its status entry ----------------------
template <typename Traits>
__aicore__ inline void MoeDispatchSetupKernel<Traits>::SendChunks()
{
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>(); // every core's yOut rows are in GM
    // counts and row bases again: the UB of the staging is released for larger copy pieces
    ResetPipe(pipe_);
    Route();
    pipe_->InitBuffer(statusBuf_, UB_BLOCK);
    const uint32_t expertBytes = AlignUp(moeExperts_ * 4U, UB_BLOCK);
    const uint32_t fixedBytes = AlignUp(bs_ * topK_ * 4U, UB_BLOCK) + AlignUp(bs_ * maskRank_, UB_BLOCK) +
                                2U * expertBytes + UB_BLOCK + REPEAT_BYTES;
    const uint32_t room = static_cast<uint32_t>(tiling_.totalUbSize) > fixedBytes ?
                              static_cast<uint32_t>(tiling_.totalUbSize) - fixedBytes :
                              0U;
    const uint32_t rowsPerPiece = (room / 2U / msgBytes_ > 0U) ? room / 2U / msgBytes_ : 1U;
    const uint32_t pieceBytes = MinU32(rowsPerPiece, maxBs_ > 0U ? maxBs_ : 1U) * msgBytes_;
    pipe_->InitBuffer(copyQue_, 2U, pieceBytes);
    LocalTensor<int32_t> cnt = cntBuf_.Get<int32_t>();
    LocalTensor<int32_t> base = cntBuf_.GetWithOffset<int32_t>(expertBytes / 4U, expertBytes);
    LocalTensor<int32_t> status = statusBuf_.Get<int32_t>();
    const uint64_t slot = StatusSlotBytes(epWorld_ * localMoe_); // a status block per (local expert, source rank)
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(sharedRanks_ + moeExperts_, begin, end);
    for (uint32_t target = begin; target < end; ++target) {
        uint32_t rows = 0U;
        uint64_t firstRow = 0UL;
        uint32_t dstRank = target;
        uint32_t block = epRank_;
        uint32_t entry = epRank_;
        if (target < sharedRanks_) { // shared rank `target` takes every active token of the ranks in its group
            if (ranksPerShared_ != 0U && target % ranksPerShared_ == epRank_ % ranksPerShared_) {
                rows = activeTokens_;
                firstRow = static_cast<uint64_t>(bs_) * topK_ +
                           static_cast<uint64_t>(target / ranksPerShared_) * activeTokens_;
            }
        } else {
            const uint32_t e = target - sharedRanks_;
            rows = static_cast<uint32_t>(cnt.GetValue(e));
            firstRow = static_cast<uint64_t>(base.GetValue(e));
            dstRank = sharedRanks_ + e / localMoe_;
            block = epRank_ * localMoe_ + e % localMoe_;
            entry = (e % localMoe_) * epWorld_ + epRank_;
        }
        GlobalTensor<uint8_t> dst;
        dst.SetGlobalBuffer(WinDispatch(dstRank) + static_cast<uint64_t>(block) * blockBytes_);
        CopyGmBytes(copyQue_, pieceBytes, dst, yOutGm_[firstRow * msgBytes_], static_cast<uint64_t>(rows) * msgBytes_);
        PostEntry(WinEntries(dstRank) + static_cast<uint64_t>(entry) * slot, DISPATCH_FLAG, static_cast<int32_t>(rows),
                  status);
    }
    PipeBarrier<PIPE_ALL>();
}


#endif // MOE_DISPATCH_SETUP_KERNEL_H
