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
 * The moe_combine_teardown family's kernel (Ascend C, vector cores only), semantics moe_combine_teardown: the receiving
 * half of the Setup/Teardown family's combine, the weighted sum of the rows MoeDistributeCombineSetup sent back.
 *
 * Process(), per rank and core:
 *   0. Init        each core reads its data-state word and flips it for the next call, as the real arch35
 *                  CombineTeardown does (code: mc2/moe_distribute_combine_teardown/op_kernel/arch35/
 *                  moe_distribute_combine_teardown_arch35.h Init: selfDataStatusTensor(0) = 1U - dataState_).
 *   1. WaitStatus  each core polls its share of this rank's combine status blocks in windowsOut (one per source
 *                  rank, StatusSlotBytes apart) until CombineSetup set them to 1.0f, then clears them; SyncAll
 *                  (code: WaitDispatch).
 *   2. Reduce      each core takes a contiguous share of the BS tokens.  An active token t (a 1-D xActiveMask
 *                  keeps its first sum(mask) tokens) sums, in fp32 and k order, expertScales[t, k] * fp32(row)
 *                  over its pairs with an expert id e in [0, moeExpertNum): the row is slot expandIdx[t * K + k]
 *                  of this rank's combine block of expert e, through the spec's quant formula
 *                  (QuantRow, lowered from the spec); xOut[t] = Cast(RINT) of the sum (a Muls then an Add
 *                  per pair: two fp32 roundings).  Inactive tokens get zero rows.  sharedExpertXOptional is not
 *                  added (the numpy reference follows the arch35 kernel, which ignores it).
 *
 * Traits: TilingData (the op's tiling struct), Args (the GM addresses its entry received), the element types
 * ExpandXT, XOutT (expandX, xOut), the element type each GM tensor is addressed as (ExpertIdsGmT, ExpandIdxGmT,
 * ExpertScalesGmT, XActiveMaskOptionalGmT, XOutGmT), ExtraGm (the GM tensors the spec's formulas read beside them:
 * Init(args)), EP_CC_OFFSET (the EP group's cc tiling in TilingData), CALC_SLOTS (UB rows of the lowered formulas),
 * MaskRank(tiling) and HasMask(tiling) (xActiveMaskOptional).
 */
#ifndef MOE_COMBINE_TEARDOWN_KERNEL_H
#define MOE_COMBINE_TEARDOWN_KERNEL_H

template <typename Traits>
class MoeCombineTeardownKernel {
public:
    using TilingData = typename Traits::TilingData;
    using Args = typename Traits::Args;
    using ExpandXT = typename Traits::ExpandXT;
    using XOutT = typename Traits::XOutT;
    __aicore__ inline MoeCombineTeardownKernel()
    {
    }
    __aicore__ inline void Init(const Args &args, const TilingData &tiling, TPipe *pipe);
    __aicore__ inline void Process();

private:
    // quant formula rows: UB slots per quant mode (from the lowering); the reduce rows follow them
    static constexpr uint32_t CALC_SLOTS = Traits::CALC_SLOTS;
    static constexpr uint32_t REDUCE_SLOTS = 3U; // acc, term, scratch
    static_assert(DTypeTraits<ExpandXT>::BITS == 8U * COMBINE_ELEM_BYTES, "combine rows are FLOAT16 or BFLOAT16");

    __aicore__ inline void WaitStatus();
    __aicore__ inline void Reduce();
    __aicore__ inline void QuantRow(const LocalTensor<ExpandXT> &xRow, const LocalTensor<uint8_t> &msg,
                                    uint32_t tokenIdx, uint32_t expertRow);
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
    // This rank's combine blocks of this call's data half, and its combine status blocks.
    __aicore__ inline GM_ADDR WinCombine()
    {
        return WindowIn<EP_GROUP>(hccl_, epRank_) + win_.dataAt + dataState_ * win_.halfBytes;
    }
    __aicore__ inline GM_ADDR WinStatus()
    {
        return FamilyStatusWindow<EP_GROUP>(epRank_) + dataState_ * COMBINE_STATUS_HALF;
    }

    TPipe *pipe_{nullptr};
    TilingData tiling_;
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl_; // EP group: window addresses of every rank

    GlobalTensor<typename Traits::ExpertIdsGmT> expertIdsGm_;
    GlobalTensor<typename Traits::ExpandIdxGmT> expandIdxGm_;
    GlobalTensor<typename Traits::ExpertScalesGmT> expertScalesGm_;
    GlobalTensor<typename Traits::XActiveMaskOptionalGmT> xActiveMaskOptionalGm_;
    GlobalTensor<typename Traits::XOutGmT> xOutGm_;
    typename Traits::ExtraGm extraGm_; // GM tensors the spec's formulas read beside these

    TBuf<TPosition::VECCALC> calcBuf_;   // quant rows, then acc / term / scratch
    TBuf<TPosition::VECCALC> infoBuf_;   // a token's expert ids, weights and expandIdx, then the mask
    TBuf<TPosition::VECCALC> flagBuf_;   // this core's status entries, then the returned row as xOut's dtype
    TQue<TPosition::VECIN, 1> rowInQue_; // returned rows from the window
    TQue<TPosition::VECOUT, 1> outQue_;  // xOut rows

    uint32_t coreIdx_{0U};
    uint32_t coreNum_{1U};
    uint32_t epRank_{0U};
    uint64_t pollUs_{0UL}; // how long a poll of a peer's flag waits (tiling.pollTimeoutUs)
    uint32_t epWorld_{1U};
    uint32_t bs_{0U};
    uint32_t hLen_{0U};
    uint32_t topK_{0U};
    uint32_t moeExperts_{0U};
    uint32_t localMoe_{1U}; // localMoeExpertNum
    uint32_t maskRank_{1U};
    bool hasMask_{false};
    uint32_t rowBytes_{0U}; // one returned row / xOut row
    FamilyWindow win_{};
    uint32_t dataState_{0U};
    uint32_t slotBytes_{0U};
    uint32_t bufDepth_{1U};
};

template <typename Traits>
__aicore__ inline void MoeCombineTeardownKernel<Traits>::Init(const Args &args, const TilingData &tiling, TPipe *pipe)
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
    bs_ = static_cast<uint32_t>(tiling.BS);
    hLen_ = static_cast<uint32_t>(tiling.H);
    topK_ = static_cast<uint32_t>(tiling.K);
    moeExperts_ = static_cast<uint32_t>(tiling.moeExpertNum);
    localMoe_ = static_cast<uint32_t>(tiling.localMoeExpertNum);
    maskRank_ = Traits::MaskRank(tiling);
    hasMask_ = Traits::HasMask(tiling);
    rowBytes_ = RowBytes<ExpandXT>(hLen_);
    win_ = MakeFamilyWindow(tiling, moeExperts_, static_cast<uint32_t>(tiling.maxBs), hLen_);
    slotBytes_ = AlignUp(hLen_ * 4U, REPEAT_BYTES) + AlignUp(CeilDiv(hLen_, 8U), REPEAT_BYTES) + REPEAT_BYTES;
    const uint32_t fixedBytes = (CALC_SLOTS + REDUCE_SLOTS) * slotBytes_ + 3U * AlignUp(topK_ * 4U, UB_BLOCK) +
                                AlignUp(bs_ * maskRank_, UB_BLOCK) + AlignUp(rowBytes_, UB_BLOCK);
    bufDepth_ = (fixedBytes + 4U * AlignUp(rowBytes_, UB_BLOCK) <= static_cast<uint32_t>(tiling.totalUbSize)) ? 2U : 1U;

    expertIdsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpertIdsGmT *>(args.expertIds));
    expandIdxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpandIdxGmT *>(args.expandIdx));
    expertScalesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpertScalesGmT *>(args.expertScales));
    xActiveMaskOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::XActiveMaskOptionalGmT *>(args.xActiveMaskOptional));
    xOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::XOutGmT *>(args.xOut));
    extraGm_.Init(args);

    // data state of this call (the half CombineSetup of every rank wrote into): this core's word, flipped at once
    // for the next call as the real kernel does
    pipe_->InitBuffer(flagBuf_, UB_BLOCK);
    GM_ADDR stateWord = CoreStateWord(FamilyStatusWindow<EP_GROUP>(epRank_), coreIdx_);
    dataState_ = ReadStateWord(stateWord, flagBuf_.Get<int32_t>());
    ToggleStateWord(stateWord, dataState_, flagBuf_.Get<int32_t>());
    ResetPipe(pipe_);
}

template <typename Traits>
__aicore__ inline void MoeCombineTeardownKernel<Traits>::Process()
{
    WaitStatus();
    Reduce();
}

// ---- 1. wait: every source rank's combine blocks for this owner have landed ----------------------------
template <typename Traits>
__aicore__ inline void MoeCombineTeardownKernel<Traits>::WaitStatus()
{
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(epWorld_, begin, end);
    pipe_->InitBuffer(flagBuf_, (end - begin + 1U) * FLAG_BYTES);
    const uint64_t slot = StatusSlotBytes(epWorld_ * localMoe_);
    const uint32_t waited = WaitSlots(WinStatus() + static_cast<uint64_t>(begin) * slot, end - begin, slot,
                                      flagBuf_.Get<int32_t>(), pollUs_);
    if (waited < end - begin) { // one status block per source rank
        PollTimedOut(epRank_, begin + waited, FlagSetter::RANK, begin + waited, pollUs_);
    }
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>();
}

// ---- 2. the weighted k-ordered sum of every token's returned rows ----------------------------------------
template <typename Traits>
__aicore__ inline void MoeCombineTeardownKernel<Traits>::Reduce()
{
    ResetPipe(pipe_);
    const uint32_t kBytes = AlignUp(topK_ * 4U, UB_BLOCK);
    pipe_->InitBuffer(calcBuf_, (CALC_SLOTS + REDUCE_SLOTS) * slotBytes_);
    pipe_->InitBuffer(infoBuf_, 3U * kBytes + AlignUp(bs_ * maskRank_, UB_BLOCK));
    pipe_->InitBuffer(flagBuf_, AlignUp(rowBytes_, UB_BLOCK));
    pipe_->InitBuffer(rowInQue_, bufDepth_, AlignUp(rowBytes_, UB_BLOCK));
    pipe_->InitBuffer(outQue_, bufDepth_, AlignUp(rowBytes_, UB_BLOCK));
    LocalTensor<int32_t> ids = infoBuf_.Get<int32_t>();
    LocalTensor<float> weights = infoBuf_.GetWithOffset<float>(kBytes / 4U, kBytes);
    LocalTensor<int32_t> slots = infoBuf_.GetWithOffset<int32_t>(kBytes / 4U, 2U * kBytes);
    LocalTensor<uint8_t> mask = infoBuf_.GetWithOffset<uint8_t>(AlignUp(bs_ * maskRank_, UB_BLOCK), 3U * kBytes);
    LocalTensor<uint8_t> returned = flagBuf_.Get<uint8_t>();

    // A 1-D xActiveMask keeps its first sum(mask) tokens (its true values precede the false ones).
    uint32_t activeTokens = bs_;
    if (hasMask_) {
        DataCopyPad(mask, xActiveMaskOptionalGm_, DataCopyExtParams(1U, bs_, 0U, 0U, 0U),
                    DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_S>();
        activeTokens = 0U;
        for (uint32_t t = 0U; t < bs_; ++t) {
            activeTokens += (mask.GetValue(t) != 0U) ? 1U : 0U;
        }
    }
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(bs_, begin, end);
    LocalTensor<float> acc = CalcSlot<float>(CALC_SLOTS);
    LocalTensor<float> term = CalcSlot<float>(CALC_SLOTS + 1U);
    LocalTensor<float> scratch = CalcSlot<float>(CALC_SLOTS + 2U);
    const int32_t n = static_cast<int32_t>(hLen_);
    for (uint32_t t = begin; t < end; ++t) {
        Duplicate(acc, 0.0f, n);
        PipeBarrier<PIPE_V>();
        if (t < activeTokens) {
            SyncFunc<HardEvent::S_MTE2>(); // the previous token's ids, weights and slots have been read
            const uint64_t pair = static_cast<uint64_t>(t) * topK_;
            DataCopyPad(ids, expertIdsGm_[pair], DataCopyExtParams(1U, topK_ * 4U, 0U, 0U, 0U),
                        DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
            DataCopyPad(weights, expertScalesGm_[pair], DataCopyExtParams(1U, topK_ * 4U, 0U, 0U, 0U),
                        DataCopyPadExtParams<float>(false, 0U, 0U, 0U));
            DataCopyPad(slots, expandIdxGm_[pair], DataCopyExtParams(1U, topK_ * 4U, 0U, 0U, 0U),
                        DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
            SyncFunc<HardEvent::MTE2_S>();
            for (uint32_t k = 0U; k < topK_; ++k) {
                const int32_t id = ids.GetValue(k);
                if (id < 0 || static_cast<uint32_t>(id) >= moeExperts_) {
                    continue; // no MoE expert holds this pair: it adds nothing
                }
                const float weight = weights.GetValue(k);
                GlobalTensor<uint8_t> rowGm;
                rowGm.SetGlobalBuffer(WinCombine() + static_cast<uint64_t>(id) * win_.combineBlock +
                                      static_cast<uint64_t>(slots.GetValue(k)) * rowBytes_);
                LocalTensor<uint8_t> raw = rowInQue_.AllocTensor<uint8_t>();
                DataCopyPad(raw, rowGm, DataCopyExtParams(1U, rowBytes_, 0U, 0U, 0U),
                            DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
                rowInQue_.EnQue(raw);
                raw = rowInQue_.DeQue<uint8_t>();
                QuantRow(raw.template ReinterpretCast<ExpandXT>(), returned, t, static_cast<uint32_t>(id));
                rowInQue_.FreeTensor(raw);
                CastRow<float, XOutT, RoundMode::CAST_NONE, false>(term, returned.template ReinterpretCast<XOutT>(),
                                                                   hLen_, scratch);
                Muls(term, term, weight, n); // a Muls then an Add: two fp32 roundings, no fused multiply-add
                PipeBarrier<PIPE_V>();
                Add(acc, acc, term, n);
                PipeBarrier<PIPE_V>();
            }
        }
        LocalTensor<uint8_t> out = outQue_.AllocTensor<uint8_t>();
        CastRow<XOutT, float, RoundMode::CAST_RINT, false>(out.template ReinterpretCast<XOutT>(), acc, hLen_, scratch);
        outQue_.EnQue(out);
        out = outQue_.DeQue<uint8_t>();
        DataCopyPad(xOutGm_[static_cast<uint64_t>(t) * rowBytes_], out, DataCopyExtParams(1U, rowBytes_, 0U, 0U, 0U));
        outQue_.FreeTensor(out);
    }
    PipeBarrier<PIPE_ALL>();
}


#endif // MOE_COMBINE_TEARDOWN_KERNEL_H
