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
 * kernel helpers and the BatchWrite helpers, and defines what the spec determines: the Traits this class template is
 * instantiated with and the body of QuantRow (the spec's quant formulas, lowered), the kernel instances and the tiling
 * key.
 *
 * The moe_dispatch family's kernel (Ascend C, vector cores only), semantics moe_dispatch: DispatchV2, DispatchV3.
 *
 * Process(), per rank and core:
 *   1. SendRows        each core takes a contiguous share of the (token, k) pairs (the slot of a pair is the count
 *                      of earlier valid pairs to the same expert: CountSlots; xActiveMaskOptional (BS,) keeps the first
 *                      sum(mask) tokens, (BS, K) sends pair (t, k) iff mask[t, k] and keeps a token iff any of
 *                      its pairs is set), loads each token row of its share once, quantises it with the spec's
 *                      formula (QuantRow, lowered from the spec) and writes each row message
 *                      [row | scales | (srcRank, tokenIdx, k) | expert scale] into the destination rank's
 *                      HCCL window: MoE expert e on rank Rs + e / L, block (srcRank * L + e % L); shared
 *                      expert s on rank (srcRank % P) + s * P, block srcRank (k = K + s). Atlas A2 packs them
 *                      as the real A2 kernels do: the rows srcRank sends one rank lie back to back in its
 *                      region of that rank's dispatch area (srcRank * win_dispatch / epWorldSize), expert by
 *                      expert, block (srcRank, e % L) after the rows srcRank sends the experts before it.
 *   2. SetStatus       after SyncAll, one 32-byte status entry {1.0f, rows, first row} per (local expert, source
 *                      rank) into every destination's window (the first row: where the packed block starts in
 *                      the source's region, from the sender's counts; 0 where blocks are fixed).
 *   3. WaitStatus      each core polls its share of this rank's entries, clears their flags (the row counts
 *                      stay), and the cores exchange row counts through the workspace to get their first output
 *                      row.
 *   4. LocalWindowCopy rows in (local expert, source rank) order, a UB-full per strided copy, into expandXOut, the
 *                      scale outputs, assistInfoForCombineOut (triples; Atlas A2: this rank's own expandIdx, the
 *                      slot of each of its (t, k) pairs, written in step 1) and expandScalesOut; epRecvCountsOut
 *                      is the inclusive cumulative count in the same order.
 *   5. WriteTokenNums  expertTokenNumsOut (expertTokenNumsType 0: cumulative, 1: per expert) on core 0 from the
 *                      row counts of the status entries, the TP AllGatherV
 *                      when the op has a TP domain (Traits::TP) and tpWorldSize is 2, performanceInfoOptional
 *                      where the op has it (Traits::PERF).
 * Where MTE copies stop at the server (tiling.serverRanks, Atlas A2) and the world spans more than one server, steps
 * 1 and 2 reach every other rank through HCCL BatchWrite (ReachedByBatchWrite): a message for such a rank goes to this
 * rank's windowsOut (one area per destination rank, laid out as that rank's part of the dispatch area), its status
 * entry too; after SyncAll core 0 sends every block and entry in one BatchWrite task with no Wait, each item ending
 * with a flag (SendByBatchWrite), and Finalize ends the calls. Window halves alternate between calls (data state), so a
 * fast rank never overwrites rows a slow rank has not copied yet.  The CombineV2 part of a half holds maxBS * (K + S)
 * row slots; on Atlas A2 the dispatch area lies over it (win_dispatch_at 0: each call addresses one half, as the real
 * A2 pair), CombineV2's regions per expert rank and DispatchV2's per source rank from the same bytes.
 *
 * Traits: TilingData (the op's tiling struct), Args (the GM addresses its entry received), the element types
 * XT, ExpandXOutT, DynamicScalesOutT (x, expandXOut, dynamicScalesOut), the element type each GM tensor is addressed
 * as (XGmT, ExpertIdsGmT, ScalesOptionalGmT, XActiveMaskOptionalGmT, ExpertScalesOptionalGmT, ExpandXOutGmT,
 * DynamicScalesOutGmT, AssistInfoForCombineOutGmT, ExpertTokenNumsOutGmT, EpRecvCountsOutGmT, ExpandScalesOutGmT),
 * ExtraGm (the GM tensors the spec's formulas and the optional parts read beside them: Init(args); tpRecvCountsOutGm_
 * where TP, performanceInfoOptionalGm_ where PERF), EP_CC_OFFSET (the EP group's cc tiling in TilingData), CALC_SLOTS
 * (UB rows of the lowered formulas), SENDS_ROW (the instance's quant formula is the row itself: the message is the
 * token row loaded by MTE, its info tail written by the scalar unit, no QuantRow), WORKSPACE_PER_CORE_PAIR (the host
 * tiling's user workspace per pair of cores), CARRIES_DYNAMIC_SCALES_OUT (the quant mode writes dynamicScalesOut: the
 * message carries its row) and
 * DynamicScalesOutWidth(tiling) (its elements per row), MaskRank(tiling) and HasMask(tiling) (xActiveMaskOptional),
 * HasExpertScales(tiling), IsA2(tiling) (assistInfoForCombineOut holds this rank's expandIdx), MC2_CONTEXT (the EP
 * domain is an MC2 context: EpContext(args, tiling), ContextWindow(ctx, rank), else the HCCL client of EP_GROUP), TP
 * (TP_GROUP_ID, TP_CC_OFFSET), PERF (HasPerformanceInfo(tiling)).
 */
#ifndef MOE_DISPATCH_KERNEL_H
#define MOE_DISPATCH_KERNEL_H

#include "opgen_batch_write.h" // after the op's BW_* constants and BatchWriteItemsAt (_batch_write.j2)

template <typename Traits>
class MoeDispatchKernel {
public:
    using TilingData = typename Traits::TilingData;
    using Args = typename Traits::Args;
    using XT = typename Traits::XT;
    using ExpandXOutT = typename Traits::ExpandXOutT;
    using DynamicScalesOutT = typename Traits::DynamicScalesOutT;
    __aicore__ inline MoeDispatchKernel()
    {
    }
    __aicore__ inline void Init(const Args &args, const TilingData &tiling, TPipe *pipe);
    __aicore__ inline void Process();

private:
    // quant formula rows: UB slots per quant mode (from the lowering)
    static constexpr uint32_t CALC_SLOTS = Traits::CALC_SLOTS;
    // status entries: 8 of 32 bytes in a 256-byte repeat; the int32 lanes of the first and last word of each
    static constexpr uint32_t ENTRIES_PER_REPEAT = REPEAT_BYTES / FLAG_BYTES;
    static constexpr uint64_t FLAG_WORDS_OF_BLOCKS = 0x8181818181818181UL;
    static constexpr uint32_t MAX_BURSTS = 4095U; // blockCount of a DataCopy is 12-bit
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    static constexpr bool FLAG_WORD_WAIT = true; // WaitStatus waits by flag words (WaitFlagWords)
#else
    static constexpr bool FLAG_WORD_WAIT = false;
#endif

    __aicore__ inline void SendRows();
    __aicore__ inline void SendRow(uint32_t tokenIdx, uint32_t k, uint32_t expertRow, uint32_t dstRank, uint64_t offset,
                                   uint64_t stageOffset, float expertScale, bool last);
    __aicore__ inline LocalTensor<uint8_t> TokenRow(uint32_t tokenIdx);
    __aicore__ inline int32_t ValidExpert(const LocalTensor<int32_t> &ids, const LocalTensor<uint8_t> &mask,
                                          bool pairMask, uint32_t i);
    __aicore__ inline void CountSlots(const LocalTensor<int32_t> &ids, const LocalTensor<uint8_t> &mask, bool pairMask,
                                      uint32_t begin, uint32_t end);
    __aicore__ inline void QuantRow(const LocalTensor<XT> &xRow, const LocalTensor<uint8_t> &msg, uint32_t tokenIdx,
                                    uint32_t expertRow);
    __aicore__ inline void FillInfo(const LocalTensor<uint8_t> &msg, uint32_t tokenIdx, uint32_t k, float expertScale,
                                    int32_t tail, bool whole);
    __aicore__ inline void SetStatus();
    __aicore__ inline void SendByBatchWrite();
    __aicore__ inline uint32_t TargetRank(uint32_t target, uint32_t &entry, uint64_t &blockAt, uint64_t &stageAt);
    __aicore__ inline uint32_t TargetFirstRow(uint32_t target);
    __aicore__ inline uint32_t TargetRows(uint32_t target, const LocalTensor<int32_t> &tot) const;
    __aicore__ inline void WaitStatus();
    __aicore__ inline void WaitStagedRows(const LocalTensor<int32_t> &flags, uint32_t entries);
    __aicore__ inline void WaitFlagWords(GM_ADDR status, uint32_t entries, int64_t start,
                                         const LocalTensor<int32_t> &waited);
    __aicore__ inline uint64_t EntryBlock(uint32_t entry, uint32_t firstRow) const;
    __aicore__ inline void LocalWindowCopy();
    __aicore__ inline void CopyRowsOut(GM_ADDR first, uint32_t row, uint32_t rows, bool withInfo);
    __aicore__ inline void InitCopyQue(uint32_t usedBytes);
    __aicore__ inline void WriteTokenNums();
    __aicore__ inline void TpAllGather();
    __aicore__ inline void AddPerformanceInfo();
    __aicore__ inline void UpdateDataState();
    __aicore__ inline void SplitRange(uint32_t total, uint32_t &begin, uint32_t &end) const;
    __aicore__ inline uint32_t SendTargetsPerCore() const;

    // the 32-byte blocks from the end of a `bytes` field of a message in UB to the same field of the next
    __aicore__ inline uint32_t UbGap(uint32_t bytes) const
    {
        return (readBytes_ - AlignUp(bytes, UB_BLOCK)) / UB_BLOCK;
    }
    template <typename T>
    __aicore__ inline LocalTensor<T> CalcSlot(uint32_t idx)
    {
        return calcBuf_.GetWithOffset<T>(slotBytes_ / static_cast<uint32_t>(sizeof(T)), idx * slotBytes_);
    }
    // The EP domain: rank `rank`'s windowsIn, its status area, and the bytes of this rank's window.
    __aicore__ inline GM_ADDR EpWindow(uint32_t rank)
    {
        if constexpr (Traits::MC2_CONTEXT) {
            return Traits::ContextWindow(ctx_, rank);
        } else {
            return WindowIn<EP_GROUP>(hccl_, rank);
        }
    }
    __aicore__ inline GM_ADDR EpStatus(uint32_t rank)
    {
        if constexpr (Traits::MC2_CONTEXT) {
            return Traits::ContextWindow(ctx_, rank) + statusOffset_;
        } else {
            return StatusArea<EP_GROUP>(hccl_, rank, statusInExp_, statusOffset_, rankStep_);
        }
    }
    // this core's data-state word (where the tiling names no half-select word)
    __aicore__ inline GM_ADDR CoreStateWord()
    {
        return EpStatus(epRank_) + status_.dispatchWordsAt + coreIdx_ * status_.wordStride;
    }
    // what its HCCL context reports, or, in an MC2 context, the ccl_buffer_size tiling read
    __aicore__ static inline uint64_t EpWindowBytes(const TilingData &tiling)
    {
        if constexpr (Traits::MC2_CONTEXT) {
            return static_cast<uint64_t>(tiling.win_window);
        } else {
            return WindowBytes<EP_GROUP>();
        }
    }
    // This rank's window data half (current data state) on rank `rank` (rank * rankStep_ further in), and its status
    // entries.
    __aicore__ inline GM_ADDR WinData(uint32_t rank)
    {
        return EpWindow(rank) + dataAt_ + rank * rankStep_ + dataState_ * halfBytes_ + combineBytes_;
    }
    __aicore__ inline GM_ADDR WinStatus(uint32_t rank)
    {
        return EpStatus(rank) + status_.dispatchAt + dataState_ * status_.dispatchStride;
    }
    __aicore__ inline bool ByBatchWrite(uint32_t rank) const
    {
        return ReachedByBatchWrite(serverRanks_, epWorld_, epRank_, rank);
    }
    // This rank's windowsOut: the messages for rank `rank` (laid out as this rank's part of its dispatch area), and
    // the status entry of send target `target`.
    __aicore__ inline GM_ADDR StageData(uint32_t rank)
    {
        return WindowOut<EP_GROUP>(hccl_, epRank_) + dataAt_ + combineBytes_ +
               static_cast<uint64_t>(rank) * (packed_ ? regionBytes_ : localMoe_ * blockBytes_);
    }
    __aicore__ inline GM_ADDR StageStatus(uint32_t target)
    {
        return WindowOut<EP_GROUP>(hccl_, epRank_) + statusOffset_ + static_cast<uint64_t>(target) * FLAG_BYTES;
    }
    // Traits::TP: the TP peer's window data and its TP status
    __aicore__ inline GM_ADDR TpWinData(uint32_t rank)
    {
        return WindowIn<Traits::TP_GROUP_ID>(hcclTp_, rank) + dataAt_ + rank * rankStep_ + dataState_ * halfBytes_;
    }
    __aicore__ inline GM_ADDR TpWinStatus(uint32_t rank)
    {
        return StatusArea<Traits::TP_GROUP_ID>(hcclTp_, rank, statusInExp_, statusOffset_, rankStep_) + status_.tpAt +
               dataState_ * TP_STATE_BYTES;
    }

    TPipe *pipe_{nullptr};
    TilingData tiling_;
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl_; // EP group: window addresses of every rank
    GM_ADDR ctx_{nullptr}; // Traits::MC2_CONTEXT: the MC2 context, every rank's window of the EP domain
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hcclTp_; // Traits::TP: the TP group (tpWorldSize 2)

    GlobalTensor<typename Traits::XGmT> xGm_;
    GlobalTensor<typename Traits::ExpertIdsGmT> expertIdsGm_;
    GlobalTensor<typename Traits::ScalesOptionalGmT> scalesOptionalGm_;
    GlobalTensor<typename Traits::XActiveMaskOptionalGmT> xActiveMaskOptionalGm_;
    GlobalTensor<typename Traits::ExpertScalesOptionalGmT> expertScalesOptionalGm_;
    GlobalTensor<typename Traits::ExpandXOutGmT> expandXOutGm_;
    GlobalTensor<typename Traits::DynamicScalesOutGmT> dynamicScalesOutGm_;
    GlobalTensor<typename Traits::AssistInfoForCombineOutGmT> assistInfoForCombineOutGm_;
    GlobalTensor<typename Traits::ExpertTokenNumsOutGmT> expertTokenNumsOutGm_;
    GlobalTensor<typename Traits::EpRecvCountsOutGmT> epRecvCountsOutGm_;
    GlobalTensor<typename Traits::ExpandScalesOutGmT> expandScalesOutGm_;
    typename Traits::ExtraGm extraGm_; // GM tensors the spec's formulas and the optional parts read beside these
    GlobalTensor<int32_t> workspaceGm_;

    TBuf<TPosition::VECCALC> calcBuf_;   // CALC_SLOTS quant rows
    TBuf<TPosition::VECCALC> idsBuf_;    // expertIds (BS * K)
    TBuf<TPosition::VECCALC> maskBuf_;   // xActiveMaskOptional (BS, or BS * K when 2-D)
    TBuf<TPosition::VECCALC> actBuf_;    // the active tokens, in token order
    TBuf<TPosition::VECCALC> idxBuf_;    // Atlas A2: this core's share of expandIdx
    TBuf<TPosition::VECCALC> cntBuf_;    // per MoE expert: the next slot of this core's rows
    TBuf<TPosition::VECCALC> totBuf_;    // per MoE expert: the rank's rows (every core's)
    TBuf<TPosition::VECCALC> rowBuf_;    // one core's counts per MoE expert, read from the workspace
    TBuf<TPosition::VECCALC> statusBuf_; // status entries of this core's send targets / wait entries
    TBuf<TPosition::VECCALC> countBuf_;  // rows per wait entry, then their cumulative counts
    TBuf<TPosition::VECCALC> coreBuf_;   // one 32-byte slot per core (row-count exchange)
    TBuf<TPosition::VECCALC> bwBuf_;     // core 0 with serverRanks: BatchWrite items, one staged status entry
    BatchWriteList bw_;
    GM_ADDR userWorkspace_{nullptr};
    // the loaded row of token xRowToken_ (one load for all its pairs); SENDS_ROW: the message
    TBuf<TPosition::VECCALC> xBuf_;
    int64_t xRowToken_{-1};
    TQue<TPosition::VECOUT, 1> msgQue_;                        // outgoing row messages
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> copyQue_; // window → outputs

    uint32_t coreIdx_{0U};
    uint32_t coreNum_{1U};
    uint32_t epRank_{0U};
    uint64_t pollUs_{0UL}; // how long a poll of a peer's flag waits (tiling.pollTimeoutUs)
    uint32_t epWorld_{1U};
    uint32_t serverRanks_{0U}; // tiling.serverRanks: MTE copies reach the ranks of this many (0: all)
    uint32_t bs_{0U};
    uint32_t hLen_{0U};
    uint32_t topK_{0U};
    uint32_t moeExperts_{0U};
    uint32_t sharedRanks_{0U};
    uint32_t sharedExperts_{0U}; // 0 when sharedExpertRankNum is 0 (sharedExpertNum 1 then means none)
    uint32_t ranksPerShared_{0U};
    uint32_t localMoe_{1U};     // localMoeExpertNum: experts per MoE rank
    uint32_t localExperts_{1U}; // localExpertNum of this rank
    uint32_t maxBs_{0U};
    bool isSharedRank_{false};
    bool hasMask_{false};
    uint32_t maskRank_{1U}; // 1: (BS,) mask, 2: (BS, K) mask
    bool isA2_{false};      // Atlas A2: assistInfoForCombineOut holds this rank's expandIdx
    bool hasExpertScales_{false};
    bool hasPerformanceInfo_{false}; // Traits::PERF
    bool tpGather_{false};           // Traits::TP and tpWorldSize 2
    uint32_t tpRank_{0U};
    uint32_t peerTotal_{0U};
    uint32_t rowBytesX_{0U};
    uint32_t rowBytesY_{0U};
    uint32_t dynamicScalesOutWidth_{0U}; // elements per row (the spec's shape)
    uint32_t dynamicScalesOutRowBytes_{0U};
    uint32_t scaleOffset_{0U}; // message layout: row | scales | info
    uint32_t infoOffset_{0U};
    uint32_t expertScaleAt_{0U}; // the expert scale: right after the triple (packed: starting the last block)
    uint32_t msgBytes_{0U};      // the message in UB: whole 32-byte blocks up to its last (its last int32: the tail)
    uint32_t readBytes_{0U};     // the bytes of a message the window copy reads: the blocks of the bytes sent
    uint32_t sentBytes_{0U};     // what a message puts into the window: up to its triple, or its expert scale
    uint64_t msgStride_{0UL};
    uint64_t blockBytes_{0UL}; // one (source rank, local expert) block: maxBS messages
    // Atlas A2 (isA2_): each source rank's messages packed into its region of the dispatch area, as the real A2
    // kernels pack them (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h Init,
    // dataSizePerRank_; ReorderTokens, windowOutGM_ + rankId * dataSizePerRank_ + dataOffset_, the rows of one
    // destination rank back to back in expert order): source rank r's at r * regionBytes_, its block for local
    // expert j after the blocks of the experts before j, at the row its status entry names (word 2)
    bool packed_{false};
    uint64_t regionBytes_{0UL};
    uint64_t halfBytes_{0UL};
    uint64_t dataAt_{0UL};       // where the data halves start in windowsIn (tiling.win_data_at)
    uint64_t rankStep_{0UL};     // rank r's status area and data halves lie r * this further in (tiling.win_rank_step)
    uint64_t combineBytes_{0UL}; // the CombineV2 part of each window half comes first (Atlas A2: 0, lies under)
    uint64_t statusOffset_{0UL};
    bool statusInExp_{false}; // the status area is in windowsExp (tiling.win_state_exp), else in windowsIn
    StatusLayout status_;     // where its regions lie (StatusLayoutOf)
    uint32_t dataState_{0U};
    GM_ADDR bufferIdWord_{nullptr}; // the half-select word (tiling.win_buffer_id), or null: per-core state words
    uint32_t slotBytes_{0U};
    uint32_t bufDepth_{1U};
    uint32_t batchRows_{1U}; // messages a copy buffer of the window copy holds
    uint32_t activeTokens_{0U};
    uint32_t entryNum_{0U};
    uint32_t entryStart_{0U};
    uint32_t entryEnd_{0U};
    uint32_t firstRow_{0U};
    uint32_t totalRows_{0U};
};

template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::Init(const Args &args, const TilingData &tiling, TPipe *pipe)
{
    pipe_ = pipe;
    tiling_ = tiling;
    coreIdx_ = static_cast<uint32_t>(GetBlockIdx());
    coreNum_ = static_cast<uint32_t>(GetBlockNum());
    // The HCCL tilings the host built (Mc2CcTilingConfig): the init tiling, then the EP cc tiling by its offset
    // from it. Afterwards window addresses are read, and the only HCCL tasks are the BatchWrites to the ranks of
    // other servers where MTE copies stop at the server (tiling.serverRanks).
    if constexpr (Traits::MC2_CONTEXT) {
        ctx_ = Traits::EpContext(args, tiling);
    } else {
        hccl_.InitV2(GetHcclContext<EP_GROUP>(), &tiling_.mc2InitTiling);
        hccl_.SetCcTilingV2(Traits::EP_CC_OFFSET);
    }
    epRank_ = static_cast<uint32_t>(tiling.epRankId);
    pollUs_ = static_cast<uint64_t>(tiling.pollTimeoutUs);
    epWorld_ = static_cast<uint32_t>(tiling.epWorldSize);
    serverRanks_ = static_cast<uint32_t>(tiling.serverRanks);
    bs_ = static_cast<uint32_t>(tiling.BS);
    hLen_ = static_cast<uint32_t>(tiling.H);
    topK_ = static_cast<uint32_t>(tiling.K);
    moeExperts_ = static_cast<uint32_t>(tiling.moeExpertNum);
    sharedRanks_ = static_cast<uint32_t>(tiling.sharedExpertRankNum);
    sharedExperts_ = (sharedRanks_ == 0U) ? 0U : static_cast<uint32_t>(tiling.sharedExpertNum);
    ranksPerShared_ = (sharedExperts_ == 0U) ? 0U : sharedRanks_ / sharedExperts_;
    localMoe_ = static_cast<uint32_t>(tiling.localMoeExpertNum);
    localExperts_ = static_cast<uint32_t>(tiling.localExpertNum);
    maxBs_ = static_cast<uint32_t>(tiling.maxBS);
    isSharedRank_ = epRank_ < sharedRanks_;
    hasMask_ = Traits::HasMask(tiling);
    maskRank_ = Traits::MaskRank(tiling);
    isA2_ = Traits::IsA2(tiling);
    hasExpertScales_ = Traits::HasExpertScales(tiling);
    if constexpr (Traits::PERF) {
        hasPerformanceInfo_ = Traits::HasPerformanceInfo(tiling);
    }
    if constexpr (Traits::TP) {
        tpGather_ = tiling.tpWorldSize == 2;
        tpRank_ = static_cast<uint32_t>(tiling.tpRankId);
        if (tpGather_) {
            hcclTp_.InitV2(GetHcclContext<Traits::TP_GROUP_ID>(), &tiling_.mc2InitTiling);
            hcclTp_.SetCcTilingV2(Traits::TP_CC_OFFSET);
        }
    }

    // the row message, as the real A3 / Ascend 950 MTE op lays it out (code: mc2/moe_distribute_dispatch_v2/op_kernel/
    // moe_distribute_dispatch_v2_quant.h QuantInit: the scales at the row's 32-byte aligned end, the triple at the
    // scales' 32-byte aligned end, hScaleIdxSize_ = that + 12; moe_distribute_dispatch_v2.h Init: with expert scales
    // expertScaleAlign_ = tokenQuantAlign_ + EXPAND_IDX_INFO, the expert scale right after the triple, and
    // hScaleIdxSize_ + 4; FillTriple; hAlignWinSize_ = Ceil(hScaleIdxSize_, 512) * 512): [expandXOut row | scale rows
    // | (srcRank, tokenIdx, k) expert scale], 512-aligned. Packed (Atlas A2), [expandXOut row | scale rows | expert
    // scale], not aligned: the receiver reads no triple there (assistInfoForCombineOut is the sender's expandIdx), as
    // the real A2 message carries none (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/
    // moe_distribute_dispatch_a2.h Init, hCommuSize_ = axisH_ * sizeof(ExpandXOutType) + 32 bytes of scale where
    // quantised)
    packed_ = isA2_;
    rowBytesX_ = RowBytes<XT>(hLen_);
    rowBytesY_ = RowBytes<ExpandXOutT>(hLen_);
    scaleOffset_ = AlignUp(rowBytesY_, UB_BLOCK);
    infoOffset_ = scaleOffset_;
    dynamicScalesOutWidth_ = Traits::DynamicScalesOutWidth(tiling);
    dynamicScalesOutRowBytes_ = RowBytes<DynamicScalesOutT>(dynamicScalesOutWidth_);
    if constexpr (Traits::CARRIES_DYNAMIC_SCALES_OUT) {
        infoOffset_ += AlignUp(dynamicScalesOutRowBytes_, UB_BLOCK);
    }
    // the message's last 32-byte block holds the triple and the expert scale (packed: the expert scale alone); its
    // last int32 is the tail of a message staged for BatchWrite (FillInfo)
    expertScaleAt_ = packed_ ? infoOffset_ : infoOffset_ + TRIPLE * 4U;
    msgBytes_ = infoOffset_ + UB_BLOCK;
    // the bytes a sender writes (the real op's MTE3 copy of hScaleIdxSize_ bytes): up to the triple's end, or the
    // expert scale's where the op has expert scales; packed, the row and its scales, or up to the expert scale's end
    sentBytes_ = hasExpertScales_ ? expertScaleAt_ + 4U : (packed_ ? infoOffset_ : infoOffset_ + TRIPLE * 4U);
    // the bytes of a message the window copy reads, as the real copy reads hOutAlignUbSize_ = Ceil(hScaleIdxSize_, 32)
    // * 32 (Atlas A2: hCommuSize_): whole 32-byte blocks up to the last byte sent
    readBytes_ = AlignUp(sentBytes_, UB_BLOCK);
    // packed messages lie back to back (the real A2 rows are hCommuSize_ apart: code: moe_distribute_dispatch_a2.h
    // ReorderTokens), else each 512-aligned
    msgStride_ = packed_ ? static_cast<uint64_t>(msgBytes_) : AlignUp64(sentBytes_, WIN_ALIGN);
    blockBytes_ = static_cast<uint64_t>(maxBs_) * msgStride_;
    // the window layout tiling checked (the spec's `window`): data halves of [combine | dispatch] (each after its
    // win_reserve), the status area after them or in the last half's reserve
    const WindowSplit split = SplitWindow(tiling, EpWindowBytes(tiling));
    halfBytes_ = split.half;
    dataAt_ = static_cast<uint64_t>(tiling.win_data_at);
    rankStep_ = static_cast<uint64_t>(tiling.win_rank_step);
    combineBytes_ = static_cast<uint64_t>(tiling.win_dispatch_at); // CombineV2's rows come first
    statusOffset_ = split.stateAt;
    statusInExp_ = tiling.win_state_exp != 0;
    status_ = StatusLayoutOf(statusInExp_);
    // every rank's window receives one block per (source rank, local expert), one per source on a shared rank,
    // and its status area one entry per block; packed (Atlas A2, no shared rank), one region per source rank that
    // holds the rows a source sends one rank, at most maxBS * min(localMoeExpertNum, K) (a token's K experts are
    // distinct), the region the real A2 ops size their window for (code: moe_distribute_dispatch_a2.h Init,
    // winSizeMin: axisBS_ * worldSize_ * min(localMoeExpertNum_, axisK_) * axisH_ * sizeof(uint16_t) per half)
    if (packed_) {
        if (sharedRanks_ != 0U) {
            Trap(); // the packed layout has no shared-expert ranks (Atlas A2 reads sharedExpertRankNum as 0)
        }
        regionBytes_ = static_cast<uint64_t>(tiling.win_dispatch) / epWorld_ / UB_BLOCK * UB_BLOCK;
        RequireFits(static_cast<uint64_t>(maxBs_) * MinU32(localMoe_, topK_) * msgStride_, regionBytes_);
    } else {
        RequireFits(static_cast<uint64_t>(epWorld_) * (localMoe_ > 1U ? localMoe_ : 1U) * blockBytes_,
                    static_cast<uint64_t>(tiling.win_dispatch));
    }
    RequireFits(static_cast<uint64_t>(epWorld_) * (localMoe_ > 1U ? localMoe_ : 1U) * FLAG_BYTES,
                status_.dispatchBytes);
    RequireFits(static_cast<uint64_t>(GetBlockNum()) * status_.wordStride, status_.wordsBytes);
    RequireHalfFits(tiling, halfBytes_);
    RequireFits(status_.need, static_cast<uint64_t>(tiling.win_state)); // each rank's area (rank r's r steps in)
    if constexpr (!Traits::MC2_CONTEXT) {
        RequireFits(static_cast<uint64_t>(tiling.win_window), WindowBytes<EP_GROUP>());
    }
    if (statusInExp_) {
        RequireFits(static_cast<uint64_t>(tiling.win_state), ExpWindowBytes<EP_GROUP>());
        if constexpr (Traits::TP) {
            if (tpGather_) {
                RequireFits(static_cast<uint64_t>(tiling.win_state), ExpWindowBytes<Traits::TP_GROUP_ID>());
            }
        }
    }
    if (serverRanks_ != 0U) {
        // windowsOut (winSize bytes, as windowsIn) mirrors the first data half: one area of localMoe blocks per
        // destination rank, and one status entry per send target from the status offset
        if (statusInExp_) {
            Trap(); // the staged entries mirror a status area in windowsIn: no product keeps it elsewhere here
        }
        RequireFits(static_cast<uint64_t>(sharedRanks_ + moeExperts_) * FLAG_BYTES, STATE_HALF);
    }
    slotBytes_ = AlignUp(hLen_ * 4U, REPEAT_BYTES) + AlignUp(CeilDiv(hLen_, 8U), REPEAT_BYTES) + REPEAT_BYTES;

    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::XGmT *>(args.x));
    expertIdsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpertIdsGmT *>(args.expertIds));
    scalesOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::ScalesOptionalGmT *>(args.scalesOptional));
    xActiveMaskOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::XActiveMaskOptionalGmT *>(args.xActiveMaskOptional));
    expertScalesOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::ExpertScalesOptionalGmT *>(args.expertScalesOptional));
    expandXOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpandXOutGmT *>(args.expandXOut));
    dynamicScalesOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::DynamicScalesOutGmT *>(args.dynamicScalesOut));
    assistInfoForCombineOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::AssistInfoForCombineOutGmT *>(args.assistInfoForCombineOut));
    expertTokenNumsOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::ExpertTokenNumsOutGmT *>(args.expertTokenNumsOut));
    epRecvCountsOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::EpRecvCountsOutGmT *>(args.epRecvCountsOut));
    expandScalesOutGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::ExpandScalesOutGmT *>(args.expandScalesOut));
    extraGm_.Init(args);
    userWorkspace_ = GetUserWorkspace(args.workspace);
    workspaceGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(userWorkspace_));

    // data state of this call: the half-select word shared with the real ops (`buffer_id`), else each core's own
    // word, all toggled together every call (the real A3 ops' records: flipped here, as theirs at Init)
    bufferIdWord_ = tiling.win_buffer_id != 0 ? EpWindow(epRank_) + tiling.win_buffer_id_at : nullptr;
    dataState_ = status_.stateRecord ?
                     InitWinState(pipe_, coreBuf_, CoreStateWord(), epRank_, moeExperts_, epWorld_, maxBs_ * epWorld_) :
                     ReadDataState(pipe_, coreBuf_, bufferIdWord_, CoreStateWord());
    ResetPipe(pipe_);
}

template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::Process()
{
    SendRows();
    SetStatus();
    WaitStatus();
    LocalWindowCopy();
    WriteTokenNums();
    UpdateDataState();
    if (serverRanks_ != 0U) {
        hccl_.Finalize(); // no more BatchWrite tasks: the AICPU server may exit
    }
}

template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::SplitRange(uint32_t total, uint32_t &begin, uint32_t &end) const
{
    const uint32_t base = total / coreNum_;
    const uint32_t extra = total % coreNum_;
    begin = base * coreIdx_ + MinU32(coreIdx_, extra);
    end = begin + base + (coreIdx_ < extra ? 1U : 0U);
}

template <typename Traits>
__aicore__ inline uint32_t MoeDispatchKernel<Traits>::SendTargetsPerCore() const
{
    return CeilDiv(sharedRanks_ + moeExperts_, coreNum_);
}

// ---- 1. send: quantise this core's rows and write them into the destination windows ------------
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::SendRows()
{
    const uint32_t pairs = bs_ * topK_;
    const uint32_t maskLen = (maskRank_ == 2U) ? pairs : bs_;
    const uint32_t idsBytes = AlignUp(pairs * 4U, UB_BLOCK);
    const uint32_t maskBytes = AlignUp(maskLen, UB_BLOCK);
    const uint32_t actBytes = AlignUp(bs_ * 4U, UB_BLOCK);
    const uint32_t idxBytes = AlignUp((CeilDiv(pairs + bs_ * sharedExperts_, coreNum_) + 1U) * 4U, UB_BLOCK);
    const uint32_t cntBytes = AlignUp(moeExperts_ * 4U, UB_BLOCK);
    const uint32_t statusBytes = (SendTargetsPerCore() + 1U) * FLAG_BYTES;
    const uint32_t bwBytes = (serverRanks_ != 0U && coreIdx_ == 0U) ? BW_UB_BYTES : 0U;
    const uint32_t fixedBytes =
        idsBytes + maskBytes + actBytes + idxBytes + 3U * cntBytes + statusBytes + CALC_SLOTS * slotBytes_ + bwBytes;
    const uint32_t xBytes = AlignUp(rowBytesX_, UB_BLOCK);
    bufDepth_ = (fixedBytes + xBytes + 2U * msgBytes_ <= static_cast<uint32_t>(tiling_.totalUbSize)) ? 2U : 1U;
    pipe_->InitBuffer(idsBuf_, idsBytes);
    pipe_->InitBuffer(maskBuf_, maskBytes);
    pipe_->InitBuffer(actBuf_, actBytes);
    pipe_->InitBuffer(idxBuf_, idxBytes);
    pipe_->InitBuffer(cntBuf_, cntBytes);
    pipe_->InitBuffer(totBuf_, cntBytes);
    pipe_->InitBuffer(rowBuf_, cntBytes);
    pipe_->InitBuffer(statusBuf_, statusBytes);
    pipe_->InitBuffer(calcBuf_, CALC_SLOTS * slotBytes_);
    if (bwBytes != 0U) {
        pipe_->InitBuffer(bwBuf_, bwBytes);
    }
    if constexpr (Traits::SENDS_ROW) {
        pipe_->InitBuffer(xBuf_, msgBytes_); // the row is the message: its info tail after it
    } else {
        pipe_->InitBuffer(xBuf_, xBytes);
        pipe_->InitBuffer(msgQue_, bufDepth_, msgBytes_);
    }

    LocalTensor<int32_t> ids = idsBuf_.Get<int32_t>();
    DataCopyPad(ids, expertIdsGm_, DataCopyExtParams(1U, pairs * 4U, 0U, 0U, 0U),
                DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
    LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();
    if (hasMask_) {
        DataCopyPad(mask, xActiveMaskOptionalGm_, DataCopyExtParams(1U, maskLen, 0U, 0U, 0U),
                    DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
    }
    LocalTensor<int32_t> cnt = cntBuf_.Get<int32_t>();
    Duplicate(cnt, static_cast<int32_t>(0), static_cast<int32_t>(cntBytes / 4U));
    LocalTensor<int32_t> tot = totBuf_.Get<int32_t>();
    Duplicate(tot, static_cast<int32_t>(0), static_cast<int32_t>(cntBytes / 4U));
    Duplicate(rowBuf_.Get<int32_t>(), static_cast<int32_t>(0), static_cast<int32_t>(cntBytes / 4U));
    LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
    Duplicate(idx, static_cast<int32_t>(0), static_cast<int32_t>(idxBytes / 4U));
    SyncFunc<HardEvent::MTE2_S>();
    SyncFunc<HardEvent::V_S>();

    // Active tokens: all without a mask; a 1-D mask keeps its first sum(mask) tokens (its true values precede
    // the false ones); a 2-D mask keeps the tokens with any pair set.
    const bool pairMask = hasMask_ && maskRank_ == 2U;
    LocalTensor<int32_t> act = actBuf_.Get<int32_t>();
    uint32_t prefix = bs_;
    if (hasMask_ && !pairMask) {
        prefix = 0U;
        for (uint32_t t = 0U; t < bs_; ++t) {
            prefix += (mask.GetValue(t) != 0U) ? 1U : 0U;
        }
    }
    activeTokens_ = prefix; // without a 2-D mask, the active tokens are the first `prefix`
    if (pairMask) {
        activeTokens_ = 0U;
        for (uint32_t t = 0U; t < bs_; ++t) {
            bool on = false;
            for (uint32_t k = 0U; k < topK_; ++k) {
                on = on || mask.GetValue(t * topK_ + k) != 0U;
            }
            if (on) {
                act.SetValue(activeTokens_, static_cast<int32_t>(t));
                ++activeTokens_;
            }
        }
    }
    // Send items: the valid (token, k) pairs in flattened order (a 1-D mask: those of the first activeBS tokens;
    // a 2-D mask: those it sets), then one copy of every active token per shared expert; each core sends a
    // contiguous share. The slot of a pair is the count of earlier valid pairs to the same expert: each core
    // counts its own pairs, the cores exchange the counts through the workspace, and each adds those of the
    // cores before it (CountSlots), so no core scans the pairs of the others.
    const uint32_t pairItems = pairMask ? pairs : activeTokens_ * topK_;
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(pairItems + activeTokens_ * sharedExperts_, begin, end);
    const uint32_t ownEnd = MinU32(end, pairItems); // this core's pairs: [begin, ownEnd)
    CountSlots(ids, mask, pairMask, begin, ownEnd);
    LocalTensor<int32_t> firstRow = rowBuf_.Get<int32_t>(); // packed: each expert's first row in its region
    if (packed_) {
        // the rows this rank sends expert e follow those of the experts before e on e's rank (every core's, `tot`);
        // a destination's region holds them all, or the sender traps before writing past it
        uint32_t rows = 0U;
        for (uint32_t e = 0U; e < moeExperts_; ++e) {
            rows = (e % localMoe_ == 0U) ? 0U : rows;
            firstRow.SetValue(e, static_cast<int32_t>(rows));
            rows += static_cast<uint32_t>(tot.GetValue(e));
            RequireFits(static_cast<uint64_t>(rows) * msgStride_, regionBytes_);
        }
    }
    for (uint32_t i = begin; i < ownEnd; ++i) {
        const int32_t expert = ValidExpert(ids, mask, pairMask, i);
        if (expert < 0) {
            continue;
        }
        const uint32_t e = static_cast<uint32_t>(expert);
        const uint32_t slot = static_cast<uint32_t>(cnt.GetValue(e));
        cnt.SetValue(e, static_cast<int32_t>(slot + 1U));
        if (isA2_) {
            idx.SetValue(i - begin, static_cast<int32_t>(slot)); // Atlas A2 expandIdx (0 for unsent pairs)
        }
        const uint32_t tokenIdx = i / topK_;
        const uint32_t k = i % topK_;
        const uint32_t dstRank = sharedRanks_ + e / localMoe_;
        const uint64_t inBlock =
            packed_ ? (static_cast<uint64_t>(firstRow.GetValue(e)) + slot) * msgStride_ :
                      static_cast<uint64_t>(e % localMoe_) * blockBytes_ + static_cast<uint64_t>(slot) * msgStride_;
        const uint64_t offset =
            static_cast<uint64_t>(epRank_) * (packed_ ? regionBytes_ : localMoe_ * blockBytes_) + inBlock;
        const float expertScale = hasExpertScales_ ? expertScalesOptionalGm_.GetValue(i) : 0.0f;
        // `last` matters only to a message staged for BatchWrite (SendRow): no scalar read of tot for the others
        SendRow(tokenIdx, k, e + sharedExperts_, dstRank, offset, inBlock, expertScale,
                ByBatchWrite(dstRank) && slot + 1U == static_cast<uint32_t>(tot.GetValue(e)));
    }
    for (uint32_t i = (begin > pairItems ? begin : pairItems); i < end; ++i) {
        const uint32_t slot = (i - pairItems) % activeTokens_; // the token's index among the active tokens
        const uint32_t s = (i - pairItems) / activeTokens_;
        const uint32_t tokenIdx = pairMask ? static_cast<uint32_t>(act.GetValue(slot)) : slot;
        const uint32_t dstRank = epRank_ % ranksPerShared_ + s * ranksPerShared_;
        const uint64_t inBlock = static_cast<uint64_t>(slot) * msgStride_;
        SendRow(tokenIdx, topK_ + s, s, dstRank, static_cast<uint64_t>(epRank_) * blockBytes_ + inBlock, inBlock, 0.0f,
                slot + 1U == activeTokens_);
    }
    if (isA2_) { // assistInfoForCombineOut[t * K + k] = the pair's slot in its expert's rows, 0 for unsent pairs
        SyncFunc<HardEvent::S_MTE3>();
        if (ownEnd > begin) {
            DataCopyPad(assistInfoForCombineOutGm_[begin], idx,
                        DataCopyExtParams(1U, (ownEnd - begin) * 4U, 0U, 0U, 0U));
        }
        uint32_t zeroBegin = 0U; // the pairs of inactive tokens: this core's share of [pairItems, pairs)
        uint32_t zeroEnd = 0U;
        SplitRange(pairs - pairItems, zeroBegin, zeroEnd);
        if (zeroEnd > zeroBegin) {
            PipeBarrier<PIPE_MTE3>(); // idx is read by the copy above before it is zeroed
            SyncFunc<HardEvent::MTE3_V>();
            Duplicate(idx, static_cast<int32_t>(0), static_cast<int32_t>(idxBytes / 4U));
            SyncFunc<HardEvent::V_MTE3>();
            for (uint32_t z = zeroBegin; z < zeroEnd; z += idxBytes / 4U) {
                const uint32_t n = MinU32(idxBytes / 4U, zeroEnd - z);
                DataCopyPad(assistInfoForCombineOutGm_[pairItems + z], idx, DataCopyExtParams(1U, n * 4U, 0U, 0U, 0U));
            }
        }
    }
}

// The MoE expert of send item `i` (a (token, k) pair), or -1 when the pair is not sent: a 2-D mask does not set
// it, or it names a zero / copy / constant expert (those never leave the rank: CombineV2 computes them).
template <typename Traits>
__aicore__ inline int32_t MoeDispatchKernel<Traits>::ValidExpert(const LocalTensor<int32_t> &ids,
                                                                 const LocalTensor<uint8_t> &mask, bool pairMask,
                                                                 uint32_t i)
{
    if (pairMask && mask.GetValue(i) == 0U) {
        return -1;
    }
    const int32_t expert = ids.GetValue(i);
    return (expert < 0 || static_cast<uint32_t>(expert) >= moeExperts_) ? -1 : expert;
}

// cntBuf_ = per MoE expert, the rows of the cores before this one (the first slot of this core's rows);
// totBuf_ = the rows of all cores (what SetStatus announces). Each core counts its pairs [begin, end) and
// publishes them in its row of the workspace (tiling_layout.CORE_WORKSPACE); after SyncAll it adds up the rows
// (vector adds, one per core).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::CountSlots(const LocalTensor<int32_t> &ids,
                                                             const LocalTensor<uint8_t> &mask, bool pairMask,
                                                             uint32_t begin, uint32_t end)
{
    LocalTensor<int32_t> cnt = cntBuf_.Get<int32_t>();
    LocalTensor<int32_t> tot = totBuf_.Get<int32_t>();
    LocalTensor<int32_t> row = rowBuf_.Get<int32_t>();
    const uint32_t rowInts = AlignUp(moeExperts_ * 4U, UB_BLOCK) / 4U;
    // the rows follow the per-core-pair part of the workspace (the host tiling adds rowInts * 4 bytes per core)
    const GlobalTensor<int32_t> rows = workspaceGm_[Traits::WORKSPACE_PER_CORE_PAIR / 4U * coreNum_ * coreNum_];
    for (uint32_t i = begin; i < end; ++i) {
        const int32_t expert = ValidExpert(ids, mask, pairMask, i);
        if (expert >= 0) {
            row.SetValue(static_cast<uint32_t>(expert), row.GetValue(static_cast<uint32_t>(expert)) + 1);
        }
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopy(rows[coreIdx_ * rowInts], row, rowInts);
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>();
    for (uint32_t c = 0U; c < coreNum_; ++c) {
        DataCopy(row, rows[c * rowInts], rowInts);
        SyncFunc<HardEvent::MTE2_V>();
        Add(tot, tot, row, static_cast<int32_t>(rowInts));
        if (c < coreIdx_) {
            Add(cnt, cnt, row, static_cast<int32_t>(rowInts));
        }
        PipeBarrier<PIPE_V>();
        SyncFunc<HardEvent::V_MTE2>(); // the next row lands where the adds read this one
    }
    SyncFunc<HardEvent::V_S>();
}

// `last`: the message is the last of its block (the block's rows of every core).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::SendRow(uint32_t tokenIdx, uint32_t k, uint32_t expertRow,
                                                          uint32_t dstRank, uint64_t offset, uint64_t stageOffset,
                                                          float expertScale, bool last)
{
    const bool staged = ByBatchWrite(dstRank); // staged in windowsOut, sent by BatchWrite
    GlobalTensor<uint8_t> win;
    win.SetGlobalBuffer(staged ? StageData(dstRank) + stageOffset : WinData(dstRank) + offset);
    // a staged message goes whole: its last word is the flag that ends its block's BatchWrite item (FillInfo)
    const DataCopyExtParams sent(1U, staged ? msgBytes_ : sentBytes_, 0U, 0U, 0U);
    const int32_t tail = (staged && last) ? FLAG_SET : 0;
    if constexpr (Traits::SENDS_ROW) {
        // the token row, loaded by MTE into the message (TokenRow), is the message: the scalar unit writes its
        // info tail once MTE3 has sent the previous destination's, MTE3 sends it once written (FillInfo)
        const LocalTensor<uint8_t> msg = TokenRow(tokenIdx);
        SyncFunc<HardEvent::MTE3_S>();
        FillInfo(msg, tokenIdx, k, expertScale, tail, staged);
        DataCopyPad(win, msg, sent);
        (void)expertRow;
    } else {
        const LocalTensor<uint8_t> xBytes = TokenRow(tokenIdx);
        LocalTensor<uint8_t> msg = msgQue_.AllocTensor<uint8_t>();
        QuantRow(xBytes.template ReinterpretCast<XT>(), msg, tokenIdx, expertRow);
        FillInfo(msg, tokenIdx, k, expertScale, tail, staged);
        msgQue_.EnQue(msg);
        msg = msgQue_.DeQue<uint8_t>();
        DataCopyPad(win, msg, sent);
        msgQue_.FreeTensor(msg);
    }
}

// The row of x of token `tokenIdx` in UB: loaded once for the consecutive pairs of the token (a core's share
// of the pairs is contiguous in (token, k) order), not once per destination. One buffer: a load waits for the
// vector reads of the row before (the lowered quant formulas), the reads for the load, by flags, as the real op
// orders its row buffers (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h ProcessToken,
// SyncFunc<V_MTE2> before its load).
template <typename Traits>
__aicore__ inline LocalTensor<uint8_t> MoeDispatchKernel<Traits>::TokenRow(uint32_t tokenIdx)
{
    LocalTensor<uint8_t> xBytes = xBuf_.Get<uint8_t>();
    if (xRowToken_ != static_cast<int64_t>(tokenIdx)) {
        // Traits::SENDS_ROW: the row is the message MTE3 sends, else the quant formulas' vector input
        SyncFunc<Traits::SENDS_ROW ? HardEvent::MTE3_MTE2 : HardEvent::V_MTE2>();
        DataCopyPad(xBytes, xGm_[static_cast<uint64_t>(tokenIdx) * rowBytesX_],
                    DataCopyExtParams(1U, rowBytesX_, 0U, 0U, 0U), DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        SyncFunc<Traits::SENDS_ROW ? HardEvent::MTE2_MTE3 : HardEvent::MTE2_V>();
        xRowToken_ = static_cast<int64_t>(tokenIdx);
    }
    return xBytes;
}

// `tail`: the message's last int32 (FLAG_SET ends the BatchWrite item of a block staged for another server: the
// last message of the block; else 0). `whole`: the whole message is sent (staged), else its first sentBytes_, which
// end before the expert scale when there is none and always before the tail: the scalar unit writes only what is sent.
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::FillInfo(const LocalTensor<uint8_t> &msg, uint32_t tokenIdx,
                                                           uint32_t k, float expertScale, int32_t tail, bool whole)
{
    if (!packed_) {
        LocalTensor<int32_t> triple = msg[infoOffset_].template ReinterpretCast<int32_t>();
        triple.SetValue(0U, static_cast<int32_t>(epRank_));
        triple.SetValue(1U, static_cast<int32_t>(tokenIdx));
        triple.SetValue(2U, static_cast<int32_t>(k));
    }
    if (whole || hasExpertScales_) {
        LocalTensor<float> scale = msg[expertScaleAt_].template ReinterpretCast<float>();
        scale.SetValue(0U, expertScale);
    }
    if (whole) {
        msg[msgBytes_ - UB_BLOCK].template ReinterpretCast<int32_t>().SetValue(WS_SLOT_INTS - 1U, tail);
    }
    SyncFunc<HardEvent::S_MTE3>();
}

// ---- 2. status: one entry {1.0f, rows} per (destination expert block) -------------------------
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::SetStatus()
{
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>(); // every core's rows are in the windows before any flag goes out
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(sharedRanks_ + moeExperts_, begin, end);
    LocalTensor<int32_t> status = statusBuf_.Get<int32_t>();
    LocalTensor<int32_t> tot = totBuf_.Get<int32_t>();
    if (end > begin) { // the entries' other words are 0, as the real entries' (code: moe_distribute_dispatch_v2.h
                       // Init, Duplicate<int32_t>(statusTensor_, 0, ...))
        Duplicate(status, static_cast<int32_t>(0), static_cast<int32_t>((end - begin) * WS_SLOT_INTS));
        SyncFunc<HardEvent::V_S>();
    }
    for (uint32_t target = begin; target < end; ++target) {
        status.SetValue((target - begin) * WS_SLOT_INTS, FLAG_SET);
        status.SetValue((target - begin) * WS_SLOT_INTS + 1U, static_cast<int32_t>(TargetRows(target, tot)));
        if (packed_) { // where the sender's block starts in its region (only packed blocks move)
            status.SetValue((target - begin) * WS_SLOT_INTS + 2U, static_cast<int32_t>(TargetFirstRow(target)));
        }
    }
    SyncFunc<HardEvent::S_MTE3>();
    for (uint32_t target = begin; target < end; ++target) {
        uint32_t entry = 0U;
        uint64_t blockAt = 0UL;
        uint64_t stageAt = 0UL;
        const uint32_t dstRank = TargetRank(target, entry, blockAt, stageAt);
        if (ByBatchWrite(dstRank)) {
            continue; // core 0 sends it after the rows (SendByBatchWrite)
        }
        GlobalTensor<int32_t> flag;
        flag.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(WinStatus(dstRank) + entry * FLAG_BYTES));
        DataCopy(flag, status[(target - begin) * WS_SLOT_INTS], WS_SLOT_INTS);
    }
    PipeBarrier<PIPE_ALL>();
    if (serverRanks_ != 0U && coreIdx_ == 0U) {
        SendByBatchWrite();
    }
    if (bufferIdWord_ != nullptr && coreIdx_ == 0U) {
        // every core read the half-select word at Init, before the SyncAll above: core 0 flips it now that the sends
        // are out, as the real A2 dispatch does after its sends (code: mc2/moe_distribute_dispatch_v2/op_kernel/
        // arch22/moe_distribute_dispatch_a2.h SendToMoeExpert), not after one more SyncAll at the end
        StoreOtherBufferId(bufferIdWord_, dataState_);
    }
}

// Send target `target` (a shared-expert rank, then the MoE experts): its rank, the index of this rank's status entry
// there, where this rank's block of its rows starts in that rank's dispatch area and in this rank's staging area.
template <typename Traits>
__aicore__ inline uint32_t MoeDispatchKernel<Traits>::TargetRank(uint32_t target, uint32_t &entry, uint64_t &blockAt,
                                                                 uint64_t &stageAt)
{
    if (target < sharedRanks_) {
        entry = epRank_;
        blockAt = static_cast<uint64_t>(epRank_) * blockBytes_;
        stageAt = 0UL;
        return target;
    }
    const uint32_t e = target - sharedRanks_;
    entry = (e % localMoe_) * epWorld_ + epRank_;
    if (packed_) { // in this rank's region of that rank's dispatch area, after the blocks of the experts before e
        stageAt = static_cast<uint64_t>(TargetFirstRow(target)) * msgStride_;
        blockAt = static_cast<uint64_t>(epRank_) * regionBytes_ + stageAt;
    } else {
        blockAt = (static_cast<uint64_t>(epRank_) * localMoe_ + e % localMoe_) * blockBytes_;
        stageAt = static_cast<uint64_t>(e % localMoe_) * blockBytes_;
    }
    return sharedRanks_ + e / localMoe_;
}

// Packed (Atlas A2): the first row of send target `target`'s block in this rank's region of the destination, which
// its status entry carries (word 2: the receiver locates the block by the sender's counts, as the real A2 receiver
// sums the counts of the sender's status entry: code: moe_distribute_dispatch_a2.h LocalWindowCopy); else 0.
template <typename Traits>
__aicore__ inline uint32_t MoeDispatchKernel<Traits>::TargetFirstRow(uint32_t target)
{
    if (!packed_ || target < sharedRanks_) {
        return 0U;
    }
    return static_cast<uint32_t>(rowBuf_.Get<int32_t>().GetValue(target - sharedRanks_));
}

// The rows this rank sends send target `target`: a shared rank takes every active token of the ranks in its group, a
// MoE expert its rows of every core (`tot`).
template <typename Traits>
__aicore__ inline uint32_t MoeDispatchKernel<Traits>::TargetRows(uint32_t target, const LocalTensor<int32_t> &tot) const
{
    if (target < sharedRanks_) {
        return (target % ranksPerShared_ == epRank_ % ranksPerShared_) ? activeTokens_ : 0U;
    }
    return static_cast<uint32_t>(tot.GetValue(target - sharedRanks_));
}

// Core 0, every core's rows staged (SyncAll): one BatchWrite task with no Wait, as the real A2 fullmesh kernels send
// (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h ConstructBatchWriteInfo,
// SendToMoeExpert): per send target reached by BatchWrite, the rows of its block, whose last message ends with FLAG_SET
// (SendRow), and its status entry {1.0f, rows, 0, ..., 1.0f}, whose last word is a flag too. The items of a task
// land in no order, the bytes of one item in ascending order (the twin: lib/hccl/hccl.h Complete), so an entry
// whose last word is set holds its rows count and a block whose last message's tail is set holds its rows
// (WaitStatus, WaitStagedRows). Finalize waits for the task.
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::SendByBatchWrite()
{
    const uint32_t targets = sharedRanks_ + moeExperts_;
    LocalTensor<int32_t> tot = totBuf_.Get<int32_t>();
    bw_.Init(userWorkspace_ + BatchWriteItemsAt(tiling_), 2U * (moeExperts_ + epWorld_), bwBuf_.Get<uint64_t>());
    LocalTensor<int32_t> staged = bwBuf_.GetWithOffset<int32_t>(WS_SLOT_INTS, BW_CHUNK * BW_ITEM_U64 * 8U);
    for (uint32_t target = 0U; target < targets; ++target) {
        uint32_t entry = 0U;
        uint64_t blockAt = 0UL;
        uint64_t stageAt = 0UL;
        const uint32_t dstRank = TargetRank(target, entry, blockAt, stageAt);
        if (!ByBatchWrite(dstRank)) {
            continue;
        }
        const uint32_t rows = TargetRows(target, tot);
        if (rows > 0U) {
            bw_.Add(StageData(dstRank) + stageAt, WinData(dstRank) + blockAt,
                    static_cast<uint64_t>(rows - 1U) * msgStride_ + msgBytes_, dstRank);
        }
        for (uint32_t w = 0U; w < WS_SLOT_INTS; ++w) {
            const bool flag = w == 0U || w == WS_SLOT_INTS - 1U;
            const int32_t word =
                w == 1U ? static_cast<int32_t>(rows) : (w == 2U ? static_cast<int32_t>(TargetFirstRow(target)) : 0);
            staged.SetValue(w, flag ? FLAG_SET : word);
        }
        SyncFunc<HardEvent::S_MTE3>();
        GlobalTensor<int32_t> stage;
        stage.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(StageStatus(target)));
        DataCopy(stage, staged, WS_SLOT_INTS);
        SyncFunc<HardEvent::MTE3_S>();
        bw_.Add(StageStatus(target), WinStatus(dstRank) + entry * FLAG_BYTES, FLAG_BYTES, dstRank);
    }
    bw_.Send(hccl_);
}

// ---- 3. wait: this core's share of the (local expert, source rank) entries ----------------------
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::WaitStatus()
{
    ResetPipe(pipe_);
    entryNum_ = isSharedRank_ ? epWorld_ : localExperts_ * epWorld_;
    SplitRange(entryNum_, entryStart_, entryEnd_);
    const uint32_t entries = entryEnd_ - entryStart_;
    // whole 256-byte repeats: the flag clear below writes the first word of 8 entries a repeat
    pipe_->InitBuffer(statusBuf_, AlignUp((entries + 1U) * FLAG_BYTES, REPEAT_BYTES));
    pipe_->InitBuffer(countBuf_, 2U * AlignUp((entries + 1U) * 4U, UB_BLOCK));
    pipe_->InitBuffer(coreBuf_, coreNum_ * UB_BLOCK);
    InitCopyQue(AlignUp((entries + 1U) * FLAG_BYTES, REPEAT_BYTES) + 2U * AlignUp((entries + 1U) * 4U, UB_BLOCK) +
                coreNum_ * UB_BLOCK);
    LocalTensor<int32_t> flags = statusBuf_.Get<int32_t>();
    LocalTensor<int32_t> counts = countBuf_.Get<int32_t>(); // rows per entry
    LocalTensor<int32_t> waited;                            // performanceInfoOptional: µs per entry
    if constexpr (Traits::PERF) {
        const uint32_t waitedAt = AlignUp(entries + 1U, FLOATS_PER_BLOCK);
        waited = countBuf_.GetWithOffset<int32_t>(waitedAt, waitedAt * 4U);
        // the flag-word wait notes the µs only where performanceInfoOptional is given (WaitFlagWords)
        for (uint32_t i = 0U; i < entries && (hasPerformanceInfo_ || !FLAG_WORD_WAIT); ++i) {
            waited.SetValue(i, -1);
        }
    }
    int32_t rows = 0;
    if (entries > 0U) {
        GlobalTensor<int32_t> statusGm;
        statusGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(WinStatus(epRank_) + entryStart_ * FLAG_BYTES));
        int64_t start = 0;
        if constexpr (Traits::PERF) {
            start = GetSystemCycle();
        }
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
        WaitFlagWords(WinStatus(epRank_) + entryStart_ * FLAG_BYTES, entries, start, waited);
        // the whole entries, for their row counts and the flag clear below
        SyncFunc<HardEvent::S_MTE2>();
        DataCopy(flags, statusGm, entries * WS_SLOT_INTS);
        SyncFunc<HardEvent::MTE2_S>();
#else
        const PollDeadline deadline(pollUs_);
        uint32_t ready = 0U;
        while (ready < entries) {
            DataCopy(flags, statusGm, entries * WS_SLOT_INTS);
            SyncFunc<HardEvent::MTE2_S>();
            ready = 0U;
            uint32_t unset = entries;
            for (uint32_t i = 0U; i < entries; ++i) {
                // an entry BatchWrite delivers is whole once its last word is set too (SendByBatchWrite)
                const bool set = flags.GetValue(i * WS_SLOT_INTS) == FLAG_SET &&
                                 (!ByBatchWrite((entryStart_ + i) % epWorld_) ||
                                  flags.GetValue(i * WS_SLOT_INTS + WS_SLOT_INTS - 1U) == FLAG_SET);
                ready += set ? 1U : 0U;
                unset = (!set && unset == entries) ? i : unset;
                if constexpr (Traits::PERF) {
                    if (set && waited.GetValue(i) < 0) {
                        waited.SetValue(i, static_cast<int32_t>((GetSystemCycle() - start) / CYCLES_PER_US));
                    }
                }
            }
            SyncFunc<HardEvent::S_MTE2>();
            if (ready < entries && deadline.Passed()) { // entry (local expert, source rank): set by the source
                PollTimedOut(epRank_, entryStart_ + unset, FlagSetter::RANK, (entryStart_ + unset) % epWorld_, pollUs_);
            }
        }
#endif
        for (uint32_t i = 0U; i < entries; ++i) {
            counts.SetValue(i, flags.GetValue(i * WS_SLOT_INTS + 1U));
            rows += flags.GetValue(i * WS_SLOT_INTS + 1U);
        }
        if (serverRanks_ != 0U) {
            WaitStagedRows(flags, entries);
            // its tail word clears leave UB (past the entries) before the clear below, whose repeats of 8 entries
            // reach there
            SyncFunc<HardEvent::MTE3_V>();
        }
        // clear the flags, the first word of each entry, and the last, the second flag of an entry another server
        // staged (SendByBatchWrite): the next call with this data state waits for fresh ones; the row counts stay for
        // core 0's expertTokenNumsOut (WriteTokenNums), as the real op keeps them (code:
        // mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h WaitDispatchClearStatus)
        SyncFunc<HardEvent::S_V>();
        uint64_t flagWords[2] = {FLAG_WORDS_OF_BLOCKS, 0UL};
        for (uint32_t at = 0U; at < entries; at += MAX_REPEATS * ENTRIES_PER_REPEAT) {
            const uint32_t repeats =
                CeilDiv(MinU32(entries - at, MAX_REPEATS * ENTRIES_PER_REPEAT), ENTRIES_PER_REPEAT);
            Duplicate<int32_t>(flags[at * WS_SLOT_INTS], 0, flagWords, static_cast<uint8_t>(repeats), 1U, 8U);
        }
        SyncFunc<HardEvent::V_MTE3>();
        DataCopy(statusGm, flags, entries * WS_SLOT_INTS);
        PipeBarrier<PIPE_MTE3>();
    }
    if constexpr (Traits::PERF) {
        if (hasPerformanceInfo_ && entries > 0U) {
            // per entry: the µs this rank waited for it (core 0 folds them per source rank after the SyncAll below)
            SyncFunc<HardEvent::S_MTE3>();
            DataCopyPad(workspaceGm_[coreNum_ * WS_SLOT_INTS + entryStart_], waited,
                        DataCopyExtParams(1U, entries * 4U, 0U, 0U, 0U));
            PipeBarrier<PIPE_MTE3>();
        }
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
    totalRows_ = 0U;
    for (uint32_t c = 0U; c < coreNum_; ++c) {
        const uint32_t n = static_cast<uint32_t>(sums.GetValue(c * WS_SLOT_INTS));
        firstRow_ += (c < coreIdx_) ? n : 0U;
        totalRows_ += n;
    }
}

#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
// The flag-word wait of __NPU_ARCH__ 3510: each round loads only the flag word (the first int32) of each of this core's
// `entries` status entries at `status`, packed into UB by one DataCopyPad<Compact> (blocks of 4 bytes, the other 28
// bytes of an entry skipped), and adds them with one vector Sum until the sum is `entries` x 1.0f (FLAG_SET); the
// scalar unit reads one value a round, not each entry's flag. The real arch35 dispatch waits so (code:
// mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h WaitStatusA5); Compact copies exist only on
// 3510 (the same file: "A3不支持compact搬运", its A3 WaitStatus loads whole entries). A cleared flag is 0 and a set one
// 1.0f, so every partial sum is exact. The words go to statusBuf_ (whole entries follow after the wait), the sum to
// its spare slot after the entries. `waited` (Traits::PERF, performanceInfoOptional given): the µs of each entry,
// read off the packed words of each round.
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::WaitFlagWords(GM_ADDR status, uint32_t entries, int64_t start,
                                                                const LocalTensor<int32_t> &waited)
{
    LocalTensor<float> words = statusBuf_.Get<float>();
    LocalTensor<float> sum = statusBuf_.GetWithOffset<float>(FLOATS_PER_BLOCK, entries * FLAG_BYTES);
    GlobalTensor<float> flagGm;
    flagGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(status));
    const DataCopyExtParams copy(static_cast<uint16_t>(entries), static_cast<uint32_t>(sizeof(float)),
                                 FLAG_BYTES - static_cast<uint32_t>(sizeof(float)), 0U, 0U);
    const DataCopyPadExtParams<float> pad(false, 0U, 0U, 0.0f);
    const SumParams sumParams{1U, AlignUp(entries, FLOATS_PER_BLOCK), entries};
    const float target = static_cast<float>(entries);
    const PollDeadline deadline(pollUs_);
    SyncFunc<HardEvent::S_V>();
    while (true) {
        DataCopyPad<float, PaddingMode::Compact>(words, flagGm, copy, pad);
        SyncFunc<HardEvent::MTE2_V>();
        Sum(sum, words, sumParams);
        SyncFunc<HardEvent::V_S>();
        const bool done = sum.GetValue(0) == target;
        if constexpr (Traits::PERF) {
            if (hasPerformanceInfo_) {
                const LocalTensor<int32_t> set = words.template ReinterpretCast<int32_t>();
                for (uint32_t i = 0U; i < entries; ++i) {
                    if (set.GetValue(i) == FLAG_SET && waited.GetValue(i) < 0) {
                        waited.SetValue(i, static_cast<int32_t>((GetSystemCycle() - start) / CYCLES_PER_US));
                    }
                }
                SyncFunc<HardEvent::S_MTE2>(); // the next round's words land where the scalar unit read these
            }
        }
        if (done) {
            break;
        }
        if (deadline.Passed()) { // the first entry (local expert, source rank) still unset: set by the source
            const LocalTensor<int32_t> set = words.template ReinterpretCast<int32_t>();
            uint32_t unset = 0U;
            while (unset + 1U < entries && set.GetValue(unset) == FLAG_SET) {
                ++unset;
            }
            PollTimedOut(epRank_, entryStart_ + unset, FlagSetter::RANK, (entryStart_ + unset) % epWorld_, pollUs_);
        }
    }
}
#endif

// Where the block of wait entry `entry` starts in this rank's dispatch area: (source rank, local expert) blocks, one
// per source rank on a shared rank; packed, row `firstRow` (the entry's word 2) of the source rank's region
// (TargetRank's blockAt on the sender). The block's rows must lie in the region.
template <typename Traits>
__aicore__ inline uint64_t MoeDispatchKernel<Traits>::EntryBlock(uint32_t entry, uint32_t firstRow) const
{
    const uint64_t src = entry % epWorld_;
    if (packed_) {
        return src * regionBytes_ + static_cast<uint64_t>(firstRow) * msgStride_;
    }
    return isSharedRank_ ? src * blockBytes_ : (src * localMoe_ + entry / epWorld_) * blockBytes_;
}

// The blocks of this core's wait entries (`flags`: their entries, one spare 32-byte slot after them) that BatchWrite
// delivers: the rows are there once the last message's tail is FLAG_SET (SendByBatchWrite); each tail is cleared for
// the next call with this data state, as the real A2 dispatch clears its data flag (code:
// mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h WaitDispatch).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::WaitStagedRows(const LocalTensor<int32_t> &flags, uint32_t entries)
{
    LocalTensor<int32_t> tail = flags[entries * WS_SLOT_INTS];
    const PollDeadline deadline(pollUs_);
    for (uint32_t i = 0U; i < entries; ++i) {
        const uint32_t entry = entryStart_ + i;
        const uint32_t rows = static_cast<uint32_t>(flags.GetValue(i * WS_SLOT_INTS + 1U));
        if (rows == 0U || !ByBatchWrite(entry % epWorld_)) {
            continue;
        }
        GlobalTensor<int32_t> tailGm; // the last 32 bytes of the block's last message
        const uint32_t firstRow = static_cast<uint32_t>(flags.GetValue(i * WS_SLOT_INTS + 2U));
        tailGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(WinData(epRank_) + EntryBlock(entry, firstRow) +
                                                                  static_cast<uint64_t>(rows - 1U) * msgStride_ +
                                                                  msgBytes_ - UB_BLOCK));
        while (true) {
            DataCopy(tail, tailGm, WS_SLOT_INTS);
            SyncFunc<HardEvent::MTE2_S>();
            if (tail.GetValue(WS_SLOT_INTS - 1U) == FLAG_SET) {
                break;
            }
            SyncFunc<HardEvent::S_MTE2>();
            if (deadline.Passed()) {
                PollTimedOut(epRank_, entry, FlagSetter::RANK, entry % epWorld_, pollUs_);
            }
        }
        tail.SetValue(WS_SLOT_INTS - 1U, 0);
        SyncFunc<HardEvent::S_MTE3>();
        DataCopy(tailGm, tail, WS_SLOT_INTS);
        SyncFunc<HardEvent::MTE3_MTE2>();
    }
}

// ---- 4. copy the rows out of the window in (local expert, source rank) order ------------------
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::LocalWindowCopy()
{
    if (status_.stateRecord) { // the record's position: past the wait, on every core (StoreRecordPosition)
        StoreRecordPosition(CoreStateWord(), coreBuf_.Get<uint32_t>(), DISPATCH_WAITED);
    }
    const uint32_t entries = entryEnd_ - entryStart_;
    if (entries == 0U) {
        return;
    }
    LocalTensor<int32_t> counts = countBuf_.Get<int32_t>();
    LocalTensor<int32_t> entryWords = statusBuf_.Get<int32_t>(); // the entries WaitStatus read (word 2: first row)
    SyncFunc<HardEvent::V_S>();                                  // after its flag clear
    uint32_t row = firstRow_;
    for (uint32_t i = 0U; i < entries; ++i) {
        const uint32_t idx = entryStart_ + i; // localExpert * epWorldSize + srcRank
        const uint32_t rows = static_cast<uint32_t>(counts.GetValue(i));
        GM_ADDR blockAddr = WinData(epRank_);
        if (packed_) {
            const uint32_t first = static_cast<uint32_t>(entryWords.GetValue(i * WS_SLOT_INTS + 2U));
            RequireFits((static_cast<uint64_t>(first) + rows) * msgStride_, regionBytes_); // a sender's block
            blockAddr += EntryBlock(idx, first);
        } else {
            const uint32_t block = isSharedRank_ ? idx : (idx % epWorld_) * localExperts_ + idx / epWorld_;
            blockAddr += static_cast<uint64_t>(block) * blockBytes_;
        }
        for (uint32_t j = 0U; j < rows; j += batchRows_) {
            CopyRowsOut(blockAddr + static_cast<uint64_t>(j) * msgStride_, row + j, MinU32(batchRows_, rows - j), true);
        }
        row += rows;
        counts.SetValue(i, static_cast<int32_t>(row)); // epRecvCountsOut: inclusive cumulative rows
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopyPad(epRecvCountsOutGm_[entryStart_], counts, DataCopyExtParams(1U, entries * 4U, 0U, 0U, 0U));
    // PIPE_ALL, not PIPE_MTE3: the counts' MTE3 read ends before the TPipe::Reset of WriteTokenNums gives that UB to
    // an MTE2 copy (the reset waits only for freed queue buffers: asc-devkit impl/basic_api/kernel_tpipe_impl.h)
    PipeBarrier<PIPE_ALL>();
}

// The copy buffers of the window copy: as many messages each as the UB beside `usedBytes` holds in bufDepth_ buffers
// (at least one), as the real op sizes its copy of a UB-full of rows (code: mc2/moe_distribute_dispatch_v2/
// op_kernel/moe_distribute_dispatch_v2.h LocalWindowCopy, tripleQueue).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::InitCopyQue(uint32_t usedBytes)
{
    const uint32_t ub = static_cast<uint32_t>(tiling_.totalUbSize);
    const uint32_t perBuffer = ub > usedBytes ? (ub - usedBytes) / bufDepth_ : 0U;
    batchRows_ = perBuffer / readBytes_ > 1U ? MinU32(perBuffer / readBytes_, MAX_BURSTS) : 1U;
    pipe_->InitBuffer(copyQue_, bufDepth_, batchRows_ * readBytes_);
}

// Output rows [row, row + rows) from as many messages in a window, msgStride_ apart from `first`: one strided copy
// in, one strided copy out per output (and to the TP peer's window).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::CopyRowsOut(GM_ADDR first, uint32_t row, uint32_t rows, bool withInfo)
{
    GlobalTensor<uint8_t> src;
    src.SetGlobalBuffer(first);
    const uint16_t count = static_cast<uint16_t>(rows);
    const uint16_t msgBlocks = static_cast<uint16_t>(readBytes_ / UB_BLOCK);
    const uint16_t winGap = static_cast<uint16_t>((msgStride_ - readBytes_) / UB_BLOCK); // window: msgStride_ apart
    LocalTensor<uint8_t> msg = copyQue_.AllocTensor<uint8_t>();
    DataCopy(msg, src, DataCopyParams(count, msgBlocks, winGap, 0U));
    copyQue_.EnQue(msg);
    msg = copyQue_.DeQue<uint8_t>();
    DataCopyPad(expandXOutGm_[static_cast<uint64_t>(row) * rowBytesY_], msg,
                DataCopyExtParams(count, rowBytesY_, UbGap(rowBytesY_), 0U, 0U));
    if constexpr (Traits::CARRIES_DYNAMIC_SCALES_OUT) {
        DataCopyPad(dynamicScalesOutGm_[static_cast<uint64_t>(row) * dynamicScalesOutRowBytes_], msg[scaleOffset_],
                    DataCopyExtParams(count, dynamicScalesOutRowBytes_, UbGap(dynamicScalesOutRowBytes_), 0U, 0U));
    }
    if (withInfo && !isA2_) {
        DataCopyPad(assistInfoForCombineOutGm_[static_cast<uint64_t>(row) * TRIPLE],
                    msg[infoOffset_].template ReinterpretCast<int32_t>(),
                    DataCopyExtParams(count, TRIPLE * 4U, UbGap(TRIPLE * 4U), 0U, 0U));
    }
    if (hasExpertScales_ && packed_) { // the expert scale starts its message's last 32-byte block
        DataCopyPad(expandScalesOutGm_[row], msg[expertScaleAt_].template ReinterpretCast<float>(),
                    DataCopyExtParams(count, 4U, UbGap(4U), 0U, 0U));
    }
    if constexpr (Traits::TP) {
        if (tpGather_ && withInfo) { // the TP peer appends this rank's rows after its own
            GlobalTensor<uint8_t> peer;
            peer.SetGlobalBuffer(TpWinData(1U - tpRank_) + static_cast<uint64_t>(row) * msgStride_);
            DataCopy(peer, msg, DataCopyParams(count, msgBlocks, 0U, winGap));
        }
    }
    if (hasExpertScales_ && !packed_) {
        // the expert scale lies 12 bytes into the triple's block, not 32-byte aligned in UB: once the copies above
        // have read the buffer, one strided copy brings the messages' expert scales in, a 32-byte block each, and one
        // sends them out, as the real copy does (code: mc2/moe_distribute_dispatch_v2/op_kernel/
        // moe_distribute_dispatch_v2.h LocalWindowCopy, expertScaleCopyInParams)
        LocalTensor<float> scales = msg.template ReinterpretCast<float>();
        GlobalTensor<float> scalesIn;
        scalesIn.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(first + expertScaleAt_));
        SyncFunc<HardEvent::MTE3_MTE2>();
        DataCopyPad(scales, scalesIn, DataCopyExtParams(count, 4U, static_cast<uint32_t>(msgStride_ - 4U), 0U, 0U),
                    DataCopyPadExtParams<float>(false, 0U, 0U, 0.0f));
        SyncFunc<HardEvent::MTE2_MTE3>();
        DataCopyPad(expandScalesOutGm_[row], scales, DataCopyExtParams(count, 4U, 0U, 0U, 0U));
    }
    copyQue_.FreeTensor(msg);
}

// ---- 5. expertTokenNumsOut from the cumulative counts (core 0), TP AllGatherV ---------------------------------
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::WriteTokenNums()
{
    if constexpr (Traits::TP) {
        if (tpGather_) {
            PipeBarrier<PIPE_ALL>();
            SyncAll<true>(); // every core's epRecvCountsOut slice and rows are written before core 0 sends them
            TpAllGather();
        }
    }
    if constexpr (Traits::PERF) {
        if (hasPerformanceInfo_ && coreIdx_ == 0U) {
            AddPerformanceInfo();
        }
    }
    if (coreIdx_ != 0U) {
        return;
    }
    // The rows of each (local expert, source rank) entry are the counts its status entry keeps after WaitStatus
    // cleared the flags: every core's wait finished before WaitStatus's SyncAll, so core 0 reads them without
    // another SyncAll, as the real op's SetExpertTokenNums reads its status area (code: mc2/
    // moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h SetExpertTokenNums).
    ResetPipe(pipe_);
    pipe_->InitBuffer(statusBuf_, entryNum_ * FLAG_BYTES);
    pipe_->InitBuffer(coreBuf_, AlignUp(localExperts_ * 8U, UB_BLOCK));
    LocalTensor<int32_t> entries = statusBuf_.Get<int32_t>();
    GlobalTensor<int32_t> statusGm;
    statusGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(WinStatus(epRank_)));
    DataCopy(entries, statusGm, entryNum_ * WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE2_S>();
    LocalTensor<int64_t> tokenNums = coreBuf_.Get<int64_t>();
    int64_t upTo = 0; // rows of local experts 0..e
    for (uint32_t e = 0U; e < localExperts_; ++e) {
        int64_t rows = 0;
        for (uint32_t r = 0U; r < epWorld_; ++r) {
            rows += entries.GetValue((e * epWorld_ + r) * WS_SLOT_INTS + 1U);
        }
        upTo += rows;
        const int64_t peerRows = tpGather_ ? static_cast<int64_t>(peerTotal_) : 0; // tpGather_: Traits::TP only
        tokenNums.SetValue(e, (tiling_.expertTokenNumsType == 0 ? upTo : rows) + peerRows);
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopyPad(expertTokenNumsOutGm_, tokenNums, DataCopyExtParams(1U, localExperts_ * 8U, 0U, 0U, 0U));
    PipeBarrier<PIPE_ALL>(); // before UpdateDataState's TPipe::Reset (LocalWindowCopy)
}

// Traits::TP, tpWorldSize 2 (localExpertNum 1): rows of the TP peer follow this rank's rows; epRecvCountsOut gets the
// peer's counts after its own, tpRecvCountsOut both totals.
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::TpAllGather()
{
    const uint32_t peer = 1U - tpRank_;
    ResetPipe(pipe_);
    pipe_->InitBuffer(statusBuf_, AlignUp((epWorld_ + 8U) * 4U, UB_BLOCK));
    InitCopyQue(AlignUp((epWorld_ + 8U) * 4U, UB_BLOCK));
    LocalTensor<int32_t> info = statusBuf_.Get<int32_t>();
    GlobalTensor<int32_t> mine;
    mine.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(TpWinStatus(tpRank_)));
    if (coreIdx_ == 0U) {
        // publish {1.0f, rows} and the cumulative counts to the peer, then wait for the peer's
        DataCopyPad(info[WS_SLOT_INTS], epRecvCountsOutGm_, DataCopyExtParams(1U, epWorld_ * 4U, 0U, 0U, 0U),
                    DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_S>();
        info.SetValue(0U, FLAG_SET);
        info.SetValue(1U, static_cast<int32_t>(totalRows_));
        SyncFunc<HardEvent::S_MTE3>();
        GlobalTensor<int32_t> theirs;
        theirs.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(TpWinStatus(peer)));
        DataCopyPad(theirs[WS_SLOT_INTS], info[WS_SLOT_INTS], DataCopyExtParams(1U, epWorld_ * 4U, 0U, 0U, 0U));
        PipeBarrier<PIPE_MTE3>();
        DataCopy(theirs, info, WS_SLOT_INTS);
        PipeBarrier<PIPE_ALL>();
        const PollDeadline deadline(pollUs_);
        while (true) {
            DataCopy(info, mine, WS_SLOT_INTS);
            SyncFunc<HardEvent::MTE2_S>();
            if (info.GetValue(0U) == FLAG_SET) {
                break;
            }
            if (deadline.Passed()) { // the TP status of this rank's window: set by the TP peer
                PollTimedOut(tpRank_, 0U, FlagSetter::RANK, peer, pollUs_);
            }
        }
        DataCopyPad(info[WS_SLOT_INTS], mine[WS_SLOT_INTS], DataCopyExtParams(1U, epWorld_ * 4U, 0U, 0U, 0U),
                    DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_MTE3>();
        DataCopyPad(epRecvCountsOutGm_[epWorld_], info[WS_SLOT_INTS], DataCopyExtParams(1U, epWorld_ * 4U, 0U, 0U, 0U));
        extraGm_.tpRecvCountsOutGm_.SetValue(tpRank_, static_cast<int32_t>(totalRows_));
        extraGm_.tpRecvCountsOutGm_.SetValue(peer, info.GetValue(1U));
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(
            extraGm_.tpRecvCountsOutGm_);
    }
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>();
    DataCopy(info, mine, WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE2_S>();
    peerTotal_ = static_cast<uint32_t>(info.GetValue(1U));
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(peerTotal_, begin, end);
    for (uint32_t r = begin; r < end; r += batchRows_) {
        CopyRowsOut(TpWinData(tpRank_) + static_cast<uint64_t>(r) * msgStride_, totalRows_ + r,
                    MinU32(batchRows_, end - r), false);
    }
    PipeBarrier<PIPE_ALL>();
    SyncAll<true>();
    if (coreIdx_ == 0U) { // clear this data state's TP flag
        info.SetValue(0U, 0);
        SyncFunc<HardEvent::S_MTE3>();
        DataCopy(mine, info, WS_SLOT_INTS);
        PipeBarrier<PIPE_ALL>(); // before WriteTokenNums's TPipe::Reset (LocalWindowCopy)
    }
}

// Traits::PERF: performanceInfoOptional[r] += µs this rank waited for rank r's rows (the latest of its entries).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::AddPerformanceInfo()
{
    ResetPipe(pipe_);
    pipe_->InitBuffer(countBuf_, AlignUp(entryNum_ * 4U, UB_BLOCK));
    pipe_->InitBuffer(coreBuf_, AlignUp(epWorld_ * 8U, UB_BLOCK));
    LocalTensor<int32_t> waited = countBuf_.Get<int32_t>();
    DataCopyPad(waited, workspaceGm_[coreNum_ * WS_SLOT_INTS], DataCopyExtParams(1U, entryNum_ * 4U, 0U, 0U, 0U),
                DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
    LocalTensor<int64_t> perf = coreBuf_.Get<int64_t>();
    DataCopyPad(perf, extraGm_.performanceInfoOptionalGm_, DataCopyExtParams(1U, epWorld_ * 8U, 0U, 0U, 0U),
                DataCopyPadExtParams<int64_t>(false, 0U, 0U, 0U));
    SyncFunc<HardEvent::MTE2_S>();
    for (uint32_t r = 0U; r < epWorld_; ++r) {
        int32_t longest = 0;
        for (uint32_t e = 0U; e * epWorld_ + r < entryNum_; ++e) {
            const int32_t us = waited.GetValue(e * epWorld_ + r);
            longest = us > longest ? us : longest;
        }
        perf.SetValue(r, perf.GetValue(r) + longest);
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopyPad(extraGm_.performanceInfoOptionalGm_, perf, DataCopyExtParams(1U, epWorld_ * 8U, 0U, 0U, 0U));
    PipeBarrier<PIPE_ALL>(); // before WriteTokenNums's TPipe::Reset (LocalWindowCopy)
}

// Toggle this core's data state word: the next call uses the other window half and status entries (the half-select
// word, where the tiling names one, SetStatus flipped).
template <typename Traits>
__aicore__ inline void MoeDispatchKernel<Traits>::UpdateDataState()
{
    if (bufferIdWord_ == nullptr && !status_.stateRecord) {
        ToggleDataState(pipe_, coreBuf_, nullptr, CoreStateWord(), dataState_);
    }
}

#endif // MOE_DISPATCH_KERNEL_H
