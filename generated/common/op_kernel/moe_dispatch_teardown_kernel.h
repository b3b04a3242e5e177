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
 * The moe_dispatch_teardown family's kernel (Ascend C, vector cores only), semantics moe_dispatch_teardown: the
 * receiving half of the Setup/Teardown family's dispatch.  The rows arrive as MoeDistributeDispatchSetup staged them
 * (quantised by its formula: the quant formulas the spec repeats describe them and are not applied again).
 *
 * Process(), per rank and core:
 *   0. Init            each core reads its data-state word and flips it for the CombineSetup that follows.
 *   1. WaitStatus      each core polls its share of this rank's status blocks (slot local expert * epWorldSize +
 *                      source rank of the data state's status half; a shared rank: the source rank) until
 *                      DispatchSetup set them to 2.0f, takes their row counts, clears their flag words (as the real
 *                      arch35 kernel), and the cores exchange row counts through the workspace.
 *   2. CopyRows        the rows of every entry in (local expert, source rank) order into expandXOut: the first H
 *                      elements of each staged row, DispatchV2's row order; assistInfoForCombineOut[entry] is the
 *                      inclusive cumulative row count (epRecvCounts semantics, what CombineSetup reads).
 *   3. WriteTokenNums  after SyncAll, core 0 writes expertTokenNumsOut (expertTokenNumsType 0: cumulative,
 *                      1: per expert).
 * Rows of expandXOut past the received ones and assistInfoForCombineOut past the entries are not written.
 *
 * Traits: TilingData (the op's tiling struct), Args (the GM addresses its entry received), the element types
 * YT, ExpandXOutT (y, expandXOut), the element type each GM tensor is addressed as (ExpandXOutGmT,
 * AssistInfoForCombineOutGmT, ExpertTokenNumsOutGmT), ExtraGm (the GM tensors the spec's formulas read beside them:
 * Init(args)), EP_CC_OFFSET (the EP group's cc tiling in TilingData).
 */
#ifndef MOE_DISPATCH_TEARDOWN_KERNEL_H
#define MOE_DISPATCH_TEARDOWN_KERNEL_H

template <typename Traits>
class MoeDispatchTeardownKernel {
public:
    using TilingData = typename Traits::TilingData;
    using Args = typename Traits::Args;
    using YT = typename Traits::YT;
    using ExpandXOutT = typename Traits::ExpandXOutT;
    __aicore__ inline MoeDispatchTeardownKernel()
    {
    }
    __aicore__ inline void Init(const Args &args, const TilingData &tiling, TPipe *pipe);
    __aicore__ inline void Process();

private:
    __aicore__ inline void WaitStatus();
    __aicore__ inline void CopyRows();
    __aicore__ inline void CopyRowOut(GM_ADDR message, uint32_t row);
    __aicore__ inline void WriteTokenNums();
    // this core's contiguous share [begin, end) of `total` items
    __aicore__ inline void SplitRange(uint32_t total, uint32_t &begin, uint32_t &end) const
    {
        CoreShare(total, coreIdx_, coreNum_, begin, end);
    }

    // This rank's dispatch blocks of this call's data half, and its dispatch status entries.
    __aicore__ inline GM_ADDR WinDispatch()
    {
        return WindowIn<EP_GROUP>(hccl_, epRank_) + win_.dataAt + dataState_ * win_.halfBytes + dispatchAt_;
    }
    __aicore__ inline GM_ADDR WinEntries()
    {
        return FamilyStatusWindow<EP_GROUP>(epRank_) + dataState_ * COMBINE_STATUS_HALF;
    }

    TPipe *pipe_{nullptr};
    TilingData tiling_;
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl_; // EP group: window addresses of every rank

    GlobalTensor<typename Traits::ExpandXOutGmT> expandXOutGm_;
    GlobalTensor<typename Traits::AssistInfoForCombineOutGmT> assistInfoForCombineOutGm_;
    GlobalTensor<typename Traits::ExpertTokenNumsOutGmT> expertTokenNumsOutGm_;
    typename Traits::ExtraGm extraGm_; // GM tensors the spec's formulas read beside these
    GlobalTensor<int32_t> workspaceGm_;

    TBuf<TPosition::VECCALC> statusBuf_;                       // this core's status entries
    TBuf<TPosition::VECCALC> countBuf_;                        // rows per entry, then their cumulative counts
    TBuf<TPosition::VECCALC> coreBuf_;                         // one 32-byte slot per core (row-count exchange)
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> copyQue_; // window -> expandXOut

    uint32_t coreIdx_{0U};
    uint32_t coreNum_{1U};
    uint32_t epRank_{0U};
    uint64_t pollUs_{0UL}; // how long a poll of a peer's flag waits (tiling.pollTimeoutUs)
    uint32_t epWorld_{1U};
    uint32_t hLen_{0U};
    uint32_t localMoe_{1U};     // localMoeExpertNum: dispatch blocks per source rank on a MoE rank
    uint32_t localExperts_{1U}; // localExpertNum of this rank
    uint32_t maxBs_{0U};
    bool isSharedRank_{false};
    uint32_t rowBytesY_{0U};   // one expandXOut row: H elements
    uint32_t msgBytes_{0U};    // one staged row: tokenMsgSize elements
    uint64_t blockBytes_{0UL}; // one dispatch block: maxBs rows
    FamilyWindow win_{};
    uint64_t dispatchAt_{0UL}; // the dispatch area in a data half (tiling.win_dispatch_at: over the combine area)
    uint32_t dataState_{0U};
    uint32_t bufDepth_{1U};
    uint32_t entryNum_{0U};
    uint32_t entryStart_{0U};
    uint32_t entryEnd_{0U};
    uint32_t firstRow_{0U};
};

template <typename Traits>
__aicore__ inline void MoeDispatchTeardownKernel<Traits>::Init(const Args &args, const TilingData &tiling, TPipe *pipe)
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
    pollUs_ = static_cast<uint64_t>(tiling.pollTimeoutUs);
    epWorld_ = static_cast<uint32_t>(tiling.epWorldSize);
    hLen_ = static_cast<uint32_t>(tiling.H);
    localMoe_ = static_cast<uint32_t>(tiling.localMoeExpertNum);
    localExperts_ = static_cast<uint32_t>(tiling.localExpertNum);
    maxBs_ = static_cast<uint32_t>(tiling.maxBs);
    isSharedRank_ = tiling.isSharedRank != 0;
    // the staged rows are DispatchSetup's yOut rows (the dtype of y), expandXOut keeps their first H elements
    static_assert(DTypeTraits<YT>::BITS == DTypeTraits<ExpandXOutT>::BITS, "expandXOut rows are copied from y rows");
    rowBytesY_ = RowBytes<ExpandXOutT>(hLen_);
    msgBytes_ = RowBytes<YT>(static_cast<uint32_t>(tiling.tokenMsgSize));
    blockBytes_ = static_cast<uint64_t>(maxBs_) * msgBytes_;
    win_ = MakeFamilyWindow(tiling, static_cast<uint32_t>(tiling.moeExpertNum), maxBs_, hLen_);
    dispatchAt_ = static_cast<uint64_t>(tiling.win_dispatch_at);
    // this rank's window holds one block per (source rank, local expert), one per source on a shared rank
    RequireFits(static_cast<uint64_t>(epWorld_) * (isSharedRank_ ? 1U : localExperts_) * blockBytes_,
                static_cast<uint64_t>(tiling.win_dispatch));
    bufDepth_ = (4U * AlignUp(rowBytesY_, UB_BLOCK) <= static_cast<uint32_t>(tiling.totalUbSize) / 2U) ? 2U : 1U;
    entryNum_ = isSharedRank_ ? epWorld_ : localExperts_ * epWorld_;

    expandXOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpandXOutGmT *>(args.expandXOut));
    assistInfoForCombineOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::AssistInfoForCombineOutGmT *>(args.assistInfoForCombineOut));
    expertTokenNumsOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::ExpertTokenNumsOutGmT *>(args.expertTokenNumsOut));
    extraGm_.Init(args);
    workspaceGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(GetUserWorkspace(args.workspace)));

    // data state of this call: the half DispatchSetup of every rank wrote into, this core's word, flipped at once
    // for the CombineSetup that follows, as the real kernel (code: arch35 Init, selfDataStatusTensor(0) = 1 - state)
    pipe_->InitBuffer(coreBuf_, UB_BLOCK);
    GM_ADDR stateWord = CoreStateWord(FamilyStatusWindow<EP_GROUP>(epRank_), coreIdx_);
    dataState_ = ReadStateWord(stateWord, coreBuf_.Get<int32_t>());
    ToggleStateWord(stateWord, dataState_, coreBuf_.Get<int32_t>());
    ResetPipe(pipe_);
}

template <typename Traits>
__aicore__ inline void MoeDispatchTeardownKernel<Traits>::Process()
{
    WaitStatus();
    CopyRows();
    WriteTokenNums();
}

// ---- 1. wait: this core's share of the (local expert, source rank) entries ----------------------------
template <typename Traits>
__aicore__ inline void MoeDispatchTeardownKernel<Traits>::WaitStatus()
{
    SplitRange(entryNum_, entryStart_, entryEnd_);
    const uint32_t entries = entryEnd_ - entryStart_;
    pipe_->InitBuffer(statusBuf_, (entries + 1U) * FLAG_BYTES);
    pipe_->InitBuffer(countBuf_, AlignUp((entries + 1U) * 4U, UB_BLOCK));
    pipe_->InitBuffer(coreBuf_, coreNum_ * UB_BLOCK);
    pipe_->InitBuffer(copyQue_, bufDepth_, AlignUp(rowBytesY_, UB_BLOCK));
    LocalTensor<int32_t> counts = countBuf_.Get<int32_t>();
    const uint64_t slot = StatusSlotBytes(epWorld_ * localMoe_);
    const uint32_t waited = WaitDispatchSlots(WinEntries() + static_cast<uint64_t>(entryStart_) * slot, entries, slot,
                                              statusBuf_.Get<int32_t>(), counts, pollUs_);
    if (waited < entries) { // entry (local expert, source rank): set by the source rank
        PollTimedOut(epRank_, entryStart_ + waited, FlagSetter::RANK, (entryStart_ + waited) % epWorld_, pollUs_);
    }
    int32_t rows = 0;
    for (uint32_t i = 0U; i < entries; ++i) {
        rows += counts.GetValue(i);
    }
    // row offsets across cores: every core publishes its row count, then adds those of the cores before it
    LocalTensor<int32_t> sums = coreBuf_.Get<int32_t>();
    sums.SetValue(0U, rows);
    SyncFunc<HardEvent::S_MTE3>();
    DataCopy(workspaceGm_[coreIdx_ * WS_SLOT_INTS], sums, WS_SLOT_INTS);
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>();
    DataCopy(sums, workspaceGm_, coreNum_ * WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE2_S>();
    firstRow_ = 0U;
    for (uint32_t c = 0U; c < coreIdx_; ++c) {
        firstRow_ += static_cast<uint32_t>(sums.GetValue(c * WS_SLOT_INTS));
    }
}

// ---- 2. copy the rows out of the window in (local expert, source rank) order ------------------------
template <typename Traits>
__aicore__ inline void MoeDispatchTeardownKernel<Traits>::CopyRows()
{
    const uint32_t entries = entryEnd_ - entryStart_;
    if (entries == 0U) {
        return;
    }
    LocalTensor<int32_t> counts = countBuf_.Get<int32_t>();
    uint32_t row = firstRow_;
    for (uint32_t i = 0U; i < entries; ++i) {
        const uint32_t idx = entryStart_ + i; // localExpert * epWorldSize + srcRank (a shared rank: srcRank)
        const uint32_t rows = static_cast<uint32_t>(counts.GetValue(i));
        const uint32_t block = isSharedRank_ ? idx : (idx % epWorld_) * localMoe_ + idx / epWorld_;
        GM_ADDR blockAddr = WinDispatch() + static_cast<uint64_t>(block) * blockBytes_;
        for (uint32_t j = 0U; j < rows; ++j) {
            CopyRowOut(blockAddr + static_cast<uint64_t>(j) * msgBytes_, row + j);
        }
        row += rows;
        counts.SetValue(i, static_cast<int32_t>(row)); // assistInfoForCombineOut: inclusive cumulative rows
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopyPad(assistInfoForCombineOutGm_[entryStart_], counts, DataCopyExtParams(1U, entries * 4U, 0U, 0U, 0U));
    PipeBarrier<PIPE_MTE3>();
}

template <typename Traits>
__aicore__ inline void MoeDispatchTeardownKernel<Traits>::CopyRowOut(GM_ADDR message, uint32_t row)
{
    GlobalTensor<uint8_t> src;
    src.SetGlobalBuffer(message);
    LocalTensor<uint8_t> buf = copyQue_.AllocTensor<uint8_t>();
    DataCopyPad(buf, src, DataCopyExtParams(1U, rowBytesY_, 0U, 0U, 0U),
                DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
    copyQue_.EnQue(buf);
    buf = copyQue_.DeQue<uint8_t>();
    DataCopyPad(expandXOutGm_[static_cast<uint64_t>(row) * rowBytesY_], buf,
                DataCopyExtParams(1U, rowBytesY_, 0U, 0U, 0U));
    copyQue_.FreeTensor(buf);
}

// ---- 3. expertTokenNumsOut from the cumulative counts (core 0), then the next data state --------------
template <typename Traits>
__aicore__ inline void MoeDispatchTeardownKernel<Traits>::WriteTokenNums()
{
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>(); // every core's rows and cumulative counts are written
    if (coreIdx_ != 0U) {
        return;
    }
    ResetPipe(pipe_);
    pipe_->InitBuffer(countBuf_, AlignUp(entryNum_ * 4U, UB_BLOCK));
    pipe_->InitBuffer(coreBuf_, AlignUp(localExperts_ * 8U, UB_BLOCK));
    LocalTensor<int32_t> cum = countBuf_.Get<int32_t>();
    DataCopyPad(cum, assistInfoForCombineOutGm_, DataCopyExtParams(1U, entryNum_ * 4U, 0U, 0U, 0U),
                DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
    SyncFunc<HardEvent::MTE2_S>();
    LocalTensor<int64_t> tokenNums = coreBuf_.Get<int64_t>();
    int64_t previous = 0;
    for (uint32_t e = 0U; e < localExperts_; ++e) {
        const int64_t upTo = cum.GetValue((e + 1U) * epWorld_ - 1U); // rows of local experts 0..e
        tokenNums.SetValue(e, tiling_.expertTokenNumsType == 0 ? upTo : upTo - previous);
        previous = upTo;
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopyPad(expertTokenNumsOutGm_, tokenNums, DataCopyExtParams(1U, localExperts_ * 8U, 0U, 0U, 0U));
    PipeBarrier<PIPE_MTE3>();
}


#endif // MOE_DISPATCH_TEARDOWN_KERNEL_H
