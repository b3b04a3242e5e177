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
 * kernel helpers and the BatchWrite helpers (templates/cpp/op_kernel/_batch_write.j2), and defines what the spec
 * determines: the Traits this class template is instantiated with, the members its formulas are (QuantRow,
 * ReceiveRow, SpecialTerm, PostStage, PostInvariants, InitSpec), the kernel instances and the tiling key.
 *
 * The moe_combine family's kernel (Ascend C, vector cores only), semantics moe_combine: the rows DispatchV2 delivered
 * go back along the same path and every token owner sums them.
 *
 * Process(), per rank and core:
 *   1. SendBack   rows [0, epSendCounts[last]) of expandX, split over the cores: row i carries the triple
 *                 (srcRank, tokenIdx, k) = assistInfoForCombine[3i, 3i + 3), read TRIPLE_BATCH rows at a
 *                 time; the spec's quant formula (QuantRow, lowered from the spec) gives the row the owner receives,
 *                 which is written into slot tokenIdx * (K + S) + k of srcRank's window, then (after every
 *                 FLAG_ROWS rows) the rows' slot flags.
 *                 Atlas A2 (assistInfoForCombine is the owner's expandIdx): each core takes a share of the
 *                 (local expert, owner) blocks of epSendCounts; the rows this rank returns one owner lie back to
 *                 back in this rank's region of the owner's combine area (rank * win_combine / epWorldSize), in
 *                 local expert order, ending where the region's header starts; after SyncAll each core writes
 *                 its share of the owners' headers (per local expert, the rows from its first row to the
 *                 header, then the flag in the header's last word: A2Region).
 *   2. Reduce     each core takes its share of the BS tokens; an active token (all without a mask, a 1-D mask
 *                 keeps its first sum(mask) tokens, a 2-D one the tokens with any pair set; a 2-D mask skips
 *                 the pairs it does not set) waits for the flags of its MoE and shared-expert slots (Atlas A2:
 *                 the cores first wait for every rank's header flag; pair (t, k) reads row
 *                 assistInfoForCombine[t * K + k] of its expert's rows, found by the sender's header, A2RowAt)
 *                 and computes, in fp32 and k order,
 *                 xOut[t] = Cast(RINT, Σ_k w[t,k] * term_k + Σ_s shared_s + sharedExpertX[t]) with term_k the
 *                 returned row (MoE expert) or, for the special experts after the MoE experts, the spec's formula
 *                 (SpecialTerm; a special expert whose formula is Moe = 0 adds nothing).  Inactive tokens get zero
 *                 rows.  Where the spec has a post stage (CombineAddRmsNorm), PostStage writes the token's outputs
 *                 from the reduced row instead.
 * Where MTE copies stop at the server (tiling.serverRanks, Atlas A2) and the world spans more than one server, every
 * other owner gets its rows through HCCL BatchWrite: the cores stage them in this rank's windowsOut (one region per
 * owner, laid out as this rank's region of the owner's combine area), and after SyncAll core 0 sends them in one task
 * with no Wait, one item per owner (its rows, then the header ending with the flag: BatchWriteList); Finalize ends
 * the call.
 * The rows use the CombineV2 part of the window half DispatchV2 leaves free; halves alternate per call.
 *
 * Traits: TilingData (the op's tiling struct), Args (the GM addresses its entry received), the element types
 * ExpandXT (expandX) and XOutT (xOut), the element type each GM tensor is addressed as (ExpandXGmT, ...), ExtraGm
 * (the GM tensors the spec's formulas read beside them: Init(args)), EP_CC_OFFSET (the EP group's cc tiling in
 * TilingData), CALC_SLOTS (UB rows of the quant formulas), REDUCE_SLOTS (of the reduce and the post stage),
 * RECEIVES (the quant mode sends split values the owner's ReceiveRow turns back into the row), SENDS_ROW (its
 * formula returns the row itself: SendBack copies it with no vector instruction), SPECIALS (the kinds
 * of special expert), POST and POST_INVARIANTS (a post stage, and its rows every token shares), MC2_CONTEXT (the
 * EP domain is an MC2 context: Mc2Context, ContextWindow), MaskRank / HasMask and TpPath (tiling reads).
 */
#ifndef MOE_COMBINE_KERNEL_H
#define MOE_COMBINE_KERNEL_H

#include "opgen_batch_write.h" // after the op's BW_* constants and BatchWriteItemsAt (_batch_write.j2)

template <typename Traits>
class MoeCombineKernel {
public:
    using TilingData = typename Traits::TilingData;
    using Args = typename Traits::Args;
    using ExpandXT = typename Traits::ExpandXT;
    using XOutT = typename Traits::XOutT;
    __aicore__ inline MoeCombineKernel()
    {
    }
    __aicore__ inline void Init(const Args &args, const TilingData &tiling, TPipe *pipe);
    __aicore__ inline void Process();

private:
    static constexpr uint32_t CALC_SLOTS = Traits::CALC_SLOTS;
    static constexpr uint32_t REDUCE_SLOTS = Traits::REDUCE_SLOTS; // acc, term, aux, scratch (or the post stage's)
    // SendBack reads its rows' triples this many rows at a time (the UB plan counts the batch, never the rows)
    static constexpr uint32_t TRIPLE_BATCH = 256U;
    // SendBack sets the flags of this many rows after one PipeBarrier<PIPE_MTE3>
    static constexpr uint32_t FLAG_ROWS = 2U;
    // blockFlags_ (the Ascend 950 MTE combine's slots): a row slot is whole 512-byte blocks, each 480 data bytes
    // and a 32-byte flag of eight fp32 1.0 (code: mc2/moe_distribute_combine_v2/op_kernel/arch35/
    // moe_distribute_combine_v2_a5_mte.h SPLIT_BLOCK_SIZE, SPLIT_BLOCK_DATA_SIZE, SPLIT_BLOCK_FLAG_SIZE)
    static constexpr uint32_t BLOCK_BYTES = 512U;
    static constexpr uint32_t BLOCK_DATA_BYTES = 480U;
    static constexpr uint32_t BLOCK_FLAG_BYTES = 32U;
    static constexpr uint32_t BLOCK_FLAG_FLOATS = BLOCK_FLAG_BYTES / 4U;
    static constexpr float BLOCK_FLAG_SET = 1.0f;

    __aicore__ inline void SendBack();
    __aicore__ inline void InitRowQueues();
    __aicore__ inline void SendRow(uint32_t row, const GlobalTensor<uint8_t> &win, uint32_t tokenIdx, uint32_t k);
    __aicore__ inline void SendBlocks(uint32_t row, GM_ADDR slot, uint32_t tokenIdx, uint32_t k);
    __aicore__ inline void SendBackBlocks();
    __aicore__ inline void SendHeaders(const LocalTensor<int32_t> &cum);
    __aicore__ inline void SendBlocksByBatchWrite(const LocalTensor<int32_t> &cum);
    __aicore__ inline uint32_t RowsFrom(const LocalTensor<int32_t> &cum, uint32_t localExpert, uint32_t owner) const;
    __aicore__ inline void WaitBlocks();
    __aicore__ inline void LoadReturned(const LocalTensor<float> &term, const LocalTensor<float> &scratch,
                                        const GlobalTensor<uint8_t> &slotGm);
    __aicore__ inline void Reduce();
    __aicore__ inline bool TokenActive(uint32_t tokenIdx, uint32_t prefix, const LocalTensor<uint8_t> &mask,
                                       bool pairMask) const;
    __aicore__ inline void RecordTokens(uint32_t prefix, const LocalTensor<uint8_t> &mask, bool pairMask);
    __aicore__ inline void CombineToken(uint32_t tokenIdx, bool active, const LocalTensor<uint8_t> &mask,
                                        bool pairMask);
    __aicore__ inline void CombineRoundRobin(uint32_t begin, uint32_t end, uint32_t prefix,
                                             const LocalTensor<uint8_t> &mask, bool pairMask);
    __aicore__ inline uint64_t WaitSlots(uint32_t tokenIdx, const LocalTensor<int32_t> &ids,
                                         const LocalTensor<uint8_t> &mask, bool pairMask);
    template <typename Ids>
    __aicore__ inline uint64_t ExpectedSlots(uint32_t tokenIdx, const Ids &ids, const LocalTensor<uint8_t> &mask,
                                             bool pairMask);
    template <typename Ids>
    __aicore__ inline void SlotTimedOut(uint32_t tokenIdx, uint64_t unset, const Ids &ids);
    __aicore__ inline uint64_t UnsetBlockSlots(uint32_t tokenIdx, uint64_t expected, bool batch);
    __aicore__ inline uint64_t ClearBlockSlots(uint32_t tokenIdx, const LocalTensor<int32_t> &ids,
                                               const LocalTensor<uint8_t> &mask, bool pairMask);
    __aicore__ inline bool BlocksArrived(GM_ADDR slot, uint32_t blocks);
    __aicore__ inline void AddRow(const LocalTensor<float> &acc, const LocalTensor<float> &term, float weight,
                                  bool weighted);
    __aicore__ inline void UpdateDataState();
    // a term loaded as fp32 rows of T: a cast into fp32 ends with PipeBarrier<PIPE_V>, an fp32 row loads with no
    // vector instruction, so it takes the barrier that orders the token's earlier vector instructions before AddRow
    template <typename T>
    __aicore__ inline void TermReady() const
    {
        if constexpr (std::is_same<T, float>::value) {
            PipeBarrier<PIPE_V>();
        }
    }
    // this core's contiguous share [begin, end) of `total` items
    __aicore__ inline void SplitRange(uint32_t total, uint32_t &begin, uint32_t &end) const
    {
        const uint32_t base = total / coreNum_;
        const uint32_t extra = total % coreNum_;
        begin = base * coreIdx_ + MinU32(coreIdx_, extra);
        end = begin + base + (coreIdx_ < extra ? 1U : 0U);
    }

    // What the spec determines (op_kernel/<op>_gen.h): the quant formula of the sending rank, the part after its
    // `send` on the receiving one, the special experts' terms (false: the expert adds nothing), the post stage and
    // its rows no token changes, and Init's part the spec decides (flags of the inputs, special experts' ids, the
    // message bytes and slots of a split quant mode).
    __aicore__ inline void QuantRow(const LocalTensor<ExpandXT> &xRow, const LocalTensor<uint8_t> &msg,
                                    uint32_t tokenIdx, uint32_t expertRow);
    __aicore__ inline void ReceiveRow(const LocalTensor<uint8_t> &msg, const LocalTensor<float> &term);
    __aicore__ inline bool SpecialTerm(uint32_t tokenIdx, uint32_t expert, const LocalTensor<float> &term);
    __aicore__ inline void PostStage(uint32_t tokenIdx, const LocalTensor<float> &reduced);
    __aicore__ inline void PostInvariants();
    __aicore__ inline void InitSpec(const TilingData &tiling);

    // the post stage's rows every token shares (PostInvariants computes them once per core)
    __aicore__ inline LocalTensor<float> InvariantRow(uint32_t idx)
    {
        return postBuf_.GetWithOffset<float>(hLen_, idx * AlignUp(hLen_ * 4U, UB_BLOCK));
    }
    template <typename T>
    __aicore__ inline LocalTensor<T> CalcSlot(uint32_t idx)
    {
        return calcBuf_.GetWithOffset<T>(slotBytes_ / static_cast<uint32_t>(sizeof(T)), idx * slotBytes_);
    }
    // The EP domain's window of rank `rank`: through the HCCL client on the EP group, or from the MC2 context; and
    // its status area.
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
            return EpWindow(rank) + statusOffset_;
        } else {
            return StatusArea<EP_GROUP>(hccl_, rank, statusInExp_, statusOffset_, rankStep_);
        }
    }
    // this core's data-state word (where the tiling names no half-select word)
    __aicore__ inline GM_ADDR CoreStateWord()
    {
        return EpStatus(epRank_) + status_.combineWordsAt + coreIdx_ * status_.wordStride;
    }
    // CombineV2 rows of the current data state on rank `rank`, and the flag of each row slot.
    __aicore__ inline GM_ADDR WinRows(uint32_t rank)
    {
        return EpWindow(rank) + dataAt_ + rank * rankStep_ + dataState_ * halfBytes_ + combineAt_;
    }
    __aicore__ inline GM_ADDR WinFlags(uint32_t rank)
    {
        return EpStatus(rank) + status_.combineAt + dataState_ * status_.combineStride;
    }
    __aicore__ inline bool ByBatchWrite(uint32_t rank) const
    {
        return ReachedByBatchWrite(serverRanks_, epWorld_, epRank_, rank);
    }
    // Atlas A2: the region of expert rank `src` in rank `rank`'s combine area, as the real A2 combine packs the rows
    // of each expert rank (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h Init,
    // rankSizeOnWin_ = dataSpaceSize_ / worldSize_, dataOffsetOnWin_ = rankId_ * rankSizeOnWin_): [free | the rows
    // src returns, local expert by local expert, back to back | header]. The header (a2HeaderBytes_) holds per local
    // expert j the rows from j's first row to the header (the sender's counts: the owner finds its rows by them, as
    // the real owner finds them by expertWindowOffset: code: the same file, ProcessMoeAndCopyExpert), and ends with
    // the flag: the rows and the header are one run of bytes, one BatchWrite item ending with the flag, as the real
    // A2 fullmesh combine's items end with theirs (code: ConstructBatchWriteInfo: token count, rows, then the flag).
    __aicore__ inline GM_ADDR A2Region(uint32_t rank, uint32_t src)
    {
        return WinRows(rank) + static_cast<uint64_t>(src) * a2RegionBytes_;
    }
    __aicore__ inline uint64_t A2HeaderAt() const
    {
        return a2RegionBytes_ - a2HeaderBytes_;
    }
    // where the row `fromHeader` rows before the header starts
    __aicore__ inline uint64_t A2RowAt(uint32_t fromHeader) const
    {
        return A2HeaderAt() - static_cast<uint64_t>(fromHeader) * rowStride_;
    }
    // This rank's windowsOut: the region for owner `owner`, laid out as this rank's region of the owner's combine area.
    __aicore__ inline GM_ADDR StageRegion(uint32_t owner)
    {
        return WindowOut<EP_GROUP>(hccl_, epRank_) + dataAt_ + combineAt_ +
               static_cast<uint64_t>(owner) * a2RegionBytes_;
    }

    TPipe *pipe_{nullptr};
    TilingData tiling_;
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl_; // EP group: window addresses of every rank
    GM_ADDR ctx_{nullptr}; // Traits::MC2_CONTEXT: the MC2 context, every rank's window of the EP domain

    GlobalTensor<typename Traits::ExpandXGmT> expandXGm_;
    GlobalTensor<typename Traits::ExpertIdsGmT> expertIdsGm_;
    GlobalTensor<typename Traits::AssistInfoForCombineGmT> assistInfoForCombineGm_;
    GlobalTensor<typename Traits::EpSendCountsGmT> epSendCountsGm_;
    GlobalTensor<typename Traits::ExpertScalesGmT> expertScalesGm_;
    GlobalTensor<typename Traits::XActiveMaskOptionalGmT> xActiveMaskOptionalGm_;
    GlobalTensor<typename Traits::SharedExpertXOptionalGmT> sharedExpertXOptionalGm_;
    GlobalTensor<typename Traits::XOutGmT> xOutGm_;
    typename Traits::ExtraGm extraGm_; // GM tensors the spec's formulas read beside these

    TBuf<TPosition::VECCALC> calcBuf_;   // quant rows, then the reduce rows
    TBuf<TPosition::VECCALC> infoBuf_;   // this core's triples, then the token's expert ids and weights
    TBuf<TPosition::VECCALC> flagBuf_;   // one slot flag to send, then a token's slot flags
    TBuf<TPosition::VECCALC> maskBuf_;   // xActiveMaskOptional (BS, or BS * K when 2-D)
    TBuf<TPosition::VECCALC> bwBuf_;     // core 0 with serverRanks: BatchWrite items, the staged flag
    TBuf<TPosition::VECCALC> postBuf_;   // the post stage's rows every token shares, fp32
    TBuf<TPosition::VECCALC> packBuf_;   // blockFlags_ with a quant formula: the message before it is packed
    TBuf<TPosition::VECCALC> statusBuf_; // blockFlags_: an int32 per token of the core's share (CombineRoundRobin)
    BatchWriteList bw_;
    GM_ADDR userWorkspace_{nullptr};
    TQue<TPosition::VECIN, 1> xInQue_;  // rows of expandX
    TQue<TPosition::VECOUT, 1> msgQue_; // returned rows, then the reduced xOut rows
    // Traits::SENDS_ROW: SendBack's rows, from GM into UB and on to the window with no vector instruction between
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> rowQue_;

    uint32_t coreIdx_{0U};
    uint32_t coreNum_{1U};
    uint32_t epRank_{0U};
    uint64_t pollUs_{0UL}; // how long a poll of a peer's flag waits (tiling.pollTimeoutUs)
    uint32_t epWorld_{1U};
    uint32_t serverRanks_{0U}; // tiling.serverRanks: MTE copies reach the ranks of this many (0: all)
    uint32_t bs_{0U};
    uint32_t hLen_{0U};
    uint32_t topK_{0U};
    uint32_t slotsPerToken_{0U}; // K + S
    uint32_t moeExperts_{0U};
    // the special experts take consecutive ids after the MoE experts, in the spec's order: kind i has ids
    // [specialEnd_[i - 1], specialEnd_[i]) (kind 0 from moeExperts_)
    uint32_t specialEnd_[Traits::SPECIALS + 1U]{};
    uint32_t expertEnd_{0U};             // every id at or past it is no expert
    uint32_t reduceSlots_{REDUCE_SLOTS}; // the reduce's calc slots: more only where a special expert in use needs them
    uint32_t sharedExperts_{0U};         // 0 when sharedExpertRankNum is 0 (sharedExpertNum 1 then means none)
    uint32_t localExperts_{1U};
    bool isSharedRank_{false};
    bool hasMask_{false};
    bool hasSharedX_{false};
    bool hasWeights_{true};  // expertScales with contents: an empty one means an unweighted sum
    uint32_t maskRank_{1U};  // 1: (BS,) mask, 2: (BS, K) mask
    bool isA2_{false};       // Atlas A2: rows travel per expert block, located by the owner's expandIdx
    bool blockFlags_{false}; // Ascend 950: a row slot is blocks_ blocks of 480 data bytes and a flag (BLOCK_BYTES)
    uint32_t blocks_{0U};    // blockFlags_: the blocks of a row slot, Ceil(sendBytes_, 480)
    uint32_t maxBs_{0U};
    uint32_t rowBytes_{0U}; // one expandX / xOut row
    uint64_t rowStride_{
        0UL}; // one window row slot: Align512(2 * H); Atlas A2 Align32(2 * H), packed; 950 blocks_ * 512
    uint64_t a2RegionBytes_{0UL}; // Atlas A2: one expert rank's region of an owner's combine area
    uint32_t a2HeaderBytes_{0U};  // Atlas A2: a region's header, an int32 per local expert and the flag
    uint32_t sendBytes_{0U};      // what a returned row's message holds: the row, or a split mode's sent values
    uint64_t halfBytes_{0UL};
    uint64_t dataAt_{0UL};    // where the data halves start in windowsIn (tiling.win_data_at)
    uint64_t rankStep_{0UL};  // rank r's status area and data halves lie r * this further in (tiling.win_rank_step)
    uint64_t combineAt_{0UL}; // the combine area's offset in a data half
    uint64_t statusOffset_{0UL};
    bool statusInExp_{false};   // the status area is in windowsExp (tiling.win_state_exp), else in windowsIn
    StatusLayout status_;       // where its regions lie (StatusLayoutOf)
    uint32_t recordTokens_{0U}; // the state record's tokens: this core's share of the active tokens (Reduce)
    uint32_t dataState_{0U};
    GM_ADDR bufferIdWord_{nullptr}; // the half-select word (tiling.win_buffer_id), or null: per-core state words
    uint32_t slotBytes_{0U};
    uint32_t bufDepth_{1U};
};

template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::Init(const Args &args, const TilingData &tiling, TPipe *pipe)
{
    pipe_ = pipe;
    tiling_ = tiling;
    coreIdx_ = static_cast<uint32_t>(GetBlockIdx());
    coreNum_ = static_cast<uint32_t>(GetBlockNum());
    // The HCCL tilings the host built (Mc2CcTilingConfig): the init tiling, then the EP cc tiling by its offset
    // from it. Afterwards window addresses are read, and the only HCCL tasks are the BatchWrites to the ranks of
    // other servers where MTE copies stop at the server (tiling.serverRanks). An MC2 context is checked against
    // this rank instead.
    if constexpr (Traits::MC2_CONTEXT) {
        ctx_ = Traits::Mc2Context(args, tiling);
    } else {
        hccl_.InitV2(GetHcclContext<EP_GROUP>(), &tiling_.mc2InitTiling);
        hccl_.SetCcTilingV2(Traits::EP_CC_OFFSET);
    }
    epRank_ = static_cast<uint32_t>(tiling.epRankId);
    pollUs_ = static_cast<uint64_t>(tiling.pollTimeoutUs);
    epWorld_ = static_cast<uint32_t>(tiling.epWorldSize);
    serverRanks_ = static_cast<uint32_t>(tiling.serverRanks);
    userWorkspace_ = GetUserWorkspace(args.workspace);
    bs_ = static_cast<uint32_t>(tiling.BS);
    hLen_ = static_cast<uint32_t>(tiling.H);
    topK_ = static_cast<uint32_t>(tiling.K);
    moeExperts_ = static_cast<uint32_t>(tiling.moeExpertNum);
    expertEnd_ = moeExperts_;
    sharedExperts_ = (tiling.sharedExpertRankNum == 0) ? 0U : static_cast<uint32_t>(tiling.sharedExpertNum);
    slotsPerToken_ = topK_ + sharedExperts_;
    RequireFits(slotsPerToken_, 64U); // WaitSlots keeps a token's slots as the bits of a uint64_t
    localExperts_ = static_cast<uint32_t>(tiling.localExpertNum);
    isSharedRank_ = tiling.isSharedRank != 0;
    hasMask_ = Traits::HasMask(tiling);
    maskRank_ = Traits::MaskRank(tiling);
    maxBs_ = static_cast<uint32_t>(tiling.maxBS);
    rowBytes_ = RowBytes<ExpandXT>(hLen_);
    rowStride_ = AlignUp64(2UL * hLen_, WIN_ALIGN);
    sendBytes_ = AlignUp(rowBytes_, UB_BLOCK);
    InitSpec(tiling); // the special experts' ids, the inputs' flags, a split quant mode's message and slots
    if (isA2_) {
        rowStride_ = AlignUp64(2UL * hLen_, UB_BLOCK); // packed rows, as the real A2 combine's (axisH_ elements)
        a2HeaderBytes_ = AlignUp((localExperts_ + 1U) * 4U, UB_BLOCK);
    }
    if (blockFlags_) { // code: moe_distribute_combine_v2_a5_mte.h InitAttrs (blockCntPerToken_, hAlignWinSize_)
        blocks_ = CeilDiv(sendBytes_, BLOCK_DATA_BYTES);
        rowStride_ = static_cast<uint64_t>(blocks_) * BLOCK_BYTES;
        RequireFits(blocks_, 255U); // the packing Copy's repeat count (uint8_t)
    }
    // the window layout tiling checked (the spec's `window`): data halves of [combine | dispatch] (each after its
    // win_reserve), the status area after them or in the last half's reserve; an MC2 context reports no window
    // size (the window is the ccl_buffer_size tiling read)
    const uint64_t windowBytes =
        Traits::MC2_CONTEXT ? static_cast<uint64_t>(tiling.win_window) : WindowBytes<EP_GROUP>();
    const WindowSplit split = SplitWindow(tiling, windowBytes);
    halfBytes_ = split.half;
    dataAt_ = static_cast<uint64_t>(tiling.win_data_at);
    rankStep_ = static_cast<uint64_t>(tiling.win_rank_step);
    combineAt_ = static_cast<uint64_t>(tiling.win_combine_at);
    statusOffset_ = split.stateAt;
    statusInExp_ = tiling.win_state_exp != 0;
    status_ = StatusLayoutOf(statusInExp_);
    // the rows each owner's window receives: Atlas A2 one region per expert rank, which holds the rows the owner
    // sent that rank, at most maxBS * min(localMoeExpertNum, K) (a token's K experts are distinct), and the header
    // (no shared-expert rank: Atlas A2 reads sharedExpertRankNum as 0); else one slot per (token, k) pair and
    // shared expert, its status area one flag per slot
    if (isA2_) {
        if (tiling.sharedExpertRankNum != 0) {
            Trap();
        }
        a2RegionBytes_ = static_cast<uint64_t>(tiling.win_combine) / epWorld_ / UB_BLOCK * UB_BLOCK;
        RequireFits(static_cast<uint64_t>(maxBs_) * MinU32(localExperts_, topK_) * rowStride_ + a2HeaderBytes_,
                    a2RegionBytes_);
    } else {
        RequireFits(static_cast<uint64_t>(maxBs_) * slotsPerToken_ * rowStride_,
                    static_cast<uint64_t>(tiling.win_combine));
        if (!blockFlags_) { // blockFlags_: the flags are in the row slots
            RequireFits(static_cast<uint64_t>(maxBs_) * slotsPerToken_ * FLAG_BYTES, status_.combineBytes);
        }
    }
    if (serverRanks_ != 0U && !isA2_) {
        // windowsOut (winSize bytes, as windowsIn) mirrors the first data half: one region per owner; only the A2
        // layout sends whole regions with their flags
        Trap(); // no product with a server limit has another layout
    }
    RequireFits(static_cast<uint64_t>(GetBlockNum()) * status_.wordStride, status_.wordsBytes);
    RequireHalfFits(tiling, halfBytes_);
    RequireFits(status_.need, static_cast<uint64_t>(tiling.win_state)); // each rank's area (rank r's r steps in)
    if constexpr (!Traits::MC2_CONTEXT) {
        RequireFits(static_cast<uint64_t>(tiling.win_window), WindowBytes<EP_GROUP>());
    }
    if (statusInExp_) {
        RequireFits(static_cast<uint64_t>(tiling.win_state), ExpWindowBytes<EP_GROUP>());
    }
    slotBytes_ = AlignUp(hLen_ * 4U, REPEAT_BYTES) + AlignUp(CeilDiv(hLen_, 8U), REPEAT_BYTES) + REPEAT_BYTES;
    RequireFits(sendBytes_, rowStride_); // a message fits its window slot
    RequireFits(sendBytes_, slotBytes_); // and the calc slot (term) the owner receives it in
    if (blockFlags_) { // the owner unpacks a slot's blocks_ * 480 data bytes after the raw row's place (LoadReturned)
        RequireFits(AlignUp(hLen_ * 2U, REPEAT_BYTES) + blocks_ * BLOCK_DATA_BYTES, slotBytes_);
    }
    const uint32_t rowBuf = AlignUp(rowBytes_, UB_BLOCK);
    const uint32_t fixedBytes = (CALC_SLOTS > reduceSlots_ ? CALC_SLOTS : reduceSlots_) * slotBytes_ +
                                4U * REPEAT_BYTES + ((serverRanks_ != 0U && coreIdx_ == 0U) ? BW_UB_BYTES : 0U);
    // blockFlags_: a buffer of each queue holds the row read as blocks_ * 480 bytes, and its packed blocks; a quant
    // formula's message is packed from packBuf_
    const uint32_t queueBytes = blockFlags_ ?
                                    2U * (MaxU32(rowBuf, blocks_ * BLOCK_DATA_BYTES) + blocks_ * BLOCK_BYTES) +
                                        (Traits::SENDS_ROW ? 0U : blocks_ * BLOCK_DATA_BYTES) :
                                    4U * rowBuf;
    bufDepth_ = (fixedBytes + queueBytes <= static_cast<uint32_t>(tiling.totalUbSize)) ? 2U : 1U;

    expandXGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpandXGmT *>(args.expandX));
    expertIdsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpertIdsGmT *>(args.expertIds));
    assistInfoForCombineGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::AssistInfoForCombineGmT *>(args.assistInfoForCombine));
    epSendCountsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::EpSendCountsGmT *>(args.epSendCounts));
    expertScalesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::ExpertScalesGmT *>(args.expertScales));
    xActiveMaskOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::XActiveMaskOptionalGmT *>(args.xActiveMaskOptional));
    sharedExpertXOptionalGm_.SetGlobalBuffer(
        reinterpret_cast<__gm__ typename Traits::SharedExpertXOptionalGmT *>(args.sharedExpertXOptional));
    xOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ typename Traits::XOutGmT *>(args.xOut));
    extraGm_.Init(args);

    // data state of this call: the half-select word shared with the real ops (`buffer_id`), else each core's own
    // word, all toggled together every call
    bufferIdWord_ = tiling.win_buffer_id != 0 ? EpWindow(epRank_) + tiling.win_buffer_id_at : nullptr;
    dataState_ = status_.stateRecord ?
                     InitWinState(pipe_, flagBuf_, CoreStateWord(), epRank_, moeExperts_, epWorld_, maxBs_ * epWorld_) :
                     ReadDataState(pipe_, flagBuf_, bufferIdWord_, CoreStateWord());
    ResetPipe(pipe_);
}

template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::Process()
{
    if (Traits::TpPath(tiling_)) {
        Trap(); // the ReduceScatterV path is not implemented (the documents give no row order for it); the current
                // release's tiling rejects tpWorldSize 2, as the real one does
    }
    if (isA2_) {
        SendBackBlocks();
        WaitBlocks();
    } else {
        SendBack();
    }
    Reduce();
    UpdateDataState();
    if (serverRanks_ != 0U) {
        hccl_.Finalize(); // no more BatchWrite tasks: the AICPU server may exit
    }
}

// ---- 1. every row DispatchV2 delivered here goes back to its token's owner ---------------------
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::SendBack()
{
    const uint32_t entries = isSharedRank_ ? epWorld_ : localExperts_ * epWorld_;
    const uint32_t total = static_cast<uint32_t>(epSendCountsGm_.GetValue(entries - 1U)); // inclusive cumsum
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(total, begin, end);
    const uint32_t rows = end - begin;
    pipe_->InitBuffer(calcBuf_, CALC_SLOTS * slotBytes_);
    pipe_->InitBuffer(infoBuf_, TRIPLE_BATCH * TRIPLE * 4U); // the triples of one batch of rows
    pipe_->InitBuffer(flagBuf_, UB_BLOCK);
    InitRowQueues();
    LocalTensor<int32_t> flag = flagBuf_.Get<int32_t>(); // FLAG_SET in the layout's leading words, then zeros
    if (status_.combineFlagInts == WS_SLOT_INTS) {       // the real layout's 8 x 1.0f: one Duplicate, no scalar store
        Duplicate(flag, FLAG_SET, static_cast<int32_t>(WS_SLOT_INTS));
        SyncFunc<HardEvent::V_MTE3>();
    } else {
        Duplicate(flag, static_cast<int32_t>(0), static_cast<int32_t>(WS_SLOT_INTS));
        SyncFunc<HardEvent::V_S>();
        for (uint32_t w = 0U; w < status_.combineFlagInts; ++w) {
            flag.SetValue(w, FLAG_SET);
        }
        SyncFunc<HardEvent::S_MTE3>();
    }
    if (rows == 0U) {
        return;
    }
    LocalTensor<int32_t> triples = infoBuf_.Get<int32_t>();
    GM_ADDR pending[FLAG_ROWS]; // the flags of the rows sent since the last barrier
    uint32_t queued = 0U;
    for (uint32_t i = 0U; i < rows; ++i) {
        const uint32_t j = i % TRIPLE_BATCH; // the row's place in its batch
        if (j == 0U) {                       // the next batch's triples, once the scalar unit has read the last one's
            SyncFunc<HardEvent::S_MTE2>();
            DataCopyPad(triples, assistInfoForCombineGm_[static_cast<uint64_t>(begin + i) * TRIPLE],
                        DataCopyExtParams(1U, MinU32(TRIPLE_BATCH, rows - i) * TRIPLE * 4U, 0U, 0U, 0U),
                        DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
            SyncFunc<HardEvent::MTE2_S>();
        }
        const uint32_t owner = static_cast<uint32_t>(triples.GetValue(j * TRIPLE));
        const uint32_t tokenIdx = static_cast<uint32_t>(triples.GetValue(j * TRIPLE + 1U));
        const uint32_t k = static_cast<uint32_t>(triples.GetValue(j * TRIPLE + 2U));
        const uint64_t slot = static_cast<uint64_t>(tokenIdx) * slotsPerToken_ + k;
        if (blockFlags_) { // the flags travel in the row's blocks
            SendBlocks(begin + i, WinRows(owner) + slot * rowStride_, tokenIdx, k);
            continue;
        }
        GlobalTensor<uint8_t> win;
        win.SetGlobalBuffer(WinRows(owner) + slot * rowStride_);
        SendRow(begin + i, win, tokenIdx, k);
        // the flags of FLAG_ROWS rows after one barrier, as the real kernel flags its rows two at a time (code:
        // mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h ExpertAlltoAllDispatchCopyAdd)
        pending[queued++] = WinFlags(owner) + slot * FLAG_BYTES;
        if (queued == FLAG_ROWS || i + 1U == rows) {
            PipeBarrier<PIPE_MTE3>(); // the rows land before their flags
            for (uint32_t p = 0U; p < queued; ++p) {
                GlobalTensor<int32_t> slotFlag;
                slotFlag.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(pending[p]));
                DataCopy(slotFlag, flag, WS_SLOT_INTS);
            }
            queued = 0U;
        }
    }
    // the flags' MTE3 reads of flagBuf_ end before the reduce's TPipe::Reset gives that UB to its vector rows (the
    // reset waits only for freed queue buffers), as the real combine's Process before AlltoAllBuffInitAndMaskCal
    // (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h Process)
    PipeBarrier<PIPE_ALL>();
}

// The queues SendRow moves rows through: one VECIN/VECOUT queue where the row itself goes back, else a queue of
// expandX rows and one of messages.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::InitRowQueues()
{
    if (blockFlags_) { // the row (or its message, through packBuf_) read as whole 480-byte blocks, then packed
        pipe_->InitBuffer(xInQue_, bufDepth_, MaxU32(AlignUp(rowBytes_, UB_BLOCK), blocks_ * BLOCK_DATA_BYTES));
        pipe_->InitBuffer(msgQue_, bufDepth_, blocks_ * BLOCK_BYTES);
        if constexpr (!Traits::SENDS_ROW) {
            // zeroed once: the message's bytes no formula writes stay 0 for every row, as in the real A5 MTE
            // combine's message, whose int8 comm quant carries Ceil(H, 128) * 16 block scales (the scales of the
            // zero padding past Ceil(H, 8) blocks are 0, from the xAbsBuf_ it zeroes once), in the bytes the spec's
            // message leaves between its Ceil(H, 8) scales and Align32 of them (code: mc2/moe_distribute_combine_v2/
            // op_kernel/moe_distribute_combine_v2_quant.h QuantInit quantScaleNum_, Int8QuantProcess; arch35/
            // moe_distribute_combine_v2_a5_mte.h BuffInit: Duplicate(absFloatTensor_, float(0), hFloatAlign256Cnt))
            pipe_->InitBuffer(packBuf_, blocks_ * BLOCK_DATA_BYTES);
            Duplicate(packBuf_.Get<float>(), 0.0f, static_cast<int32_t>(blocks_ * BLOCK_DATA_BYTES / 4U));
            PipeBarrier<PIPE_V>(); // the zeros are written before a message is
        }
        return;
    }
    if constexpr (Traits::SENDS_ROW) {
        pipe_->InitBuffer(rowQue_, bufDepth_, AlignUp(rowBytes_, UB_BLOCK)); // within the UB plan's two queues
    } else {
        pipe_->InitBuffer(xInQue_, bufDepth_, AlignUp(rowBytes_, UB_BLOCK));
        pipe_->InitBuffer(msgQue_, bufDepth_, MaxU32(AlignUp(rowBytes_, UB_BLOCK), sendBytes_));
    }
}

// Row `row` of expandX, through the spec's quant formula, into the window slot `win`. An unquantised row
// (Traits::SENDS_ROW) goes GM -> UB -> window through one queue, which orders MTE2 before MTE3 and the row's
// MTE3 before the next load into its buffer: no vector instruction and no barrier per row, as the real combines
// copy a returned row by MTE alone (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/
// moe_distribute_combine_a2.h AlltoAllDispatch; moe_distribute_combine_v2.h ExpertAlltoAllDispatchCopyAdd).
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::SendRow(uint32_t row, const GlobalTensor<uint8_t> &win,
                                                         uint32_t tokenIdx, uint32_t k)
{
    const GlobalTensor<uint8_t> xGm = expandXGm_[static_cast<uint64_t>(row) * rowBytes_];
    const DataCopyExtParams rowParams(1U, rowBytes_, 0U, 0U, 0U);
    if constexpr (Traits::SENDS_ROW) {
        LocalTensor<uint8_t> rowBuf = rowQue_.AllocTensor<uint8_t>();
        DataCopyPad(rowBuf, xGm, rowParams, DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        rowQue_.EnQue(rowBuf);
        rowBuf = rowQue_.DeQue<uint8_t>();
        DataCopy(win, rowBuf, sendBytes_);
        rowQue_.FreeTensor(rowBuf);
    } else {
        LocalTensor<uint8_t> xBytes = xInQue_.AllocTensor<uint8_t>();
        DataCopyPad(xBytes, xGm, rowParams, DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        xInQue_.EnQue(xBytes);
        xBytes = xInQue_.DeQue<uint8_t>();
        LocalTensor<uint8_t> msg = msgQue_.AllocTensor<uint8_t>();
        QuantRow(xBytes.template ReinterpretCast<ExpandXT>(), msg, tokenIdx, k);
        xInQue_.FreeTensor(xBytes);
        msgQue_.EnQue(msg);
        msg = msgQue_.DeQue<uint8_t>();
        DataCopy(win, msg, sendBytes_);
        msgQue_.FreeTensor(msg);
    }
}

// Ascend 950: row `row` of expandX (through the spec's quant formula) packed into the window slot `win` as blocks_
// blocks of 512 bytes, 480 data bytes and the flag (eight fp32 1.0) in each: the flags filled by one Duplicate, the
// data by two strided Copy instructions of blocks_ repeats (64 and 56 floats a repeat, 480 bytes apart in the
// source and 512 in the blocks), the slot written by one DataCopy, as the real A5 MTE combine packs it (code:
// mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h
// ExpertAlltoAllDispatchInnerCopyAdd). The last block's data bytes past the message are not read by the owner.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::SendBlocks(uint32_t row, GM_ADDR slot, uint32_t tokenIdx, uint32_t k)
{
    LocalTensor<uint8_t> xBytes = xInQue_.AllocTensor<uint8_t>();
    DataCopyPad(xBytes, expandXGm_[static_cast<uint64_t>(row) * rowBytes_],
                DataCopyExtParams(1U, rowBytes_, 0U, 0U, 0U), DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
    xInQue_.EnQue(xBytes);
    xBytes = xInQue_.DeQue<uint8_t>();
    LocalTensor<float> data = xBytes.template ReinterpretCast<float>();
    if constexpr (!Traits::SENDS_ROW) {
        LocalTensor<uint8_t> msg = packBuf_.Get<uint8_t>();
        QuantRow(xBytes.template ReinterpretCast<ExpandXT>(), msg, tokenIdx, k);
        PipeBarrier<PIPE_V>(); // the message is written before the Copy reads it
        data = msg.template ReinterpretCast<float>();
    }
    LocalTensor<float> packed = msgQue_.AllocTensor<float>();
    Duplicate(packed, BLOCK_FLAG_SET, static_cast<int32_t>(blocks_ * BLOCK_BYTES / 4U));
    PipeBarrier<PIPE_V>();
    const CopyRepeatParams strides(1U, 1U, BLOCK_BYTES / UB_BLOCK, BLOCK_DATA_BYTES / UB_BLOCK);
    Copy(packed, data, static_cast<uint64_t>(FLOATS_PER_REPEAT), static_cast<uint8_t>(blocks_), strides);
    Copy(packed[FLOATS_PER_REPEAT], data[FLOATS_PER_REPEAT],
         static_cast<uint64_t>(BLOCK_DATA_BYTES / 4U - FLOATS_PER_REPEAT), static_cast<uint8_t>(blocks_), strides);
    xInQue_.FreeTensor(xBytes);
    msgQue_.EnQue(packed);
    packed = msgQue_.DeQue<float>();
    GlobalTensor<float> win;
    win.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slot));
    DataCopy(win, packed, blocks_ * BLOCK_BYTES / 4U);
    msgQue_.FreeTensor(packed);
}

// ---- 1 (Atlas A2). every (local expert, owner) block goes back into this rank's region of the owner ---------
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::SendBackBlocks()
{
    const uint32_t entries = isSharedRank_ ? 0U : localExperts_ * epWorld_; // (local expert, owner) blocks
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(entries, begin, end);
    pipe_->InitBuffer(calcBuf_, CALC_SLOTS * slotBytes_);
    pipe_->InitBuffer(infoBuf_, AlignUp((entries + 1U) * 4U, UB_BLOCK));
    pipe_->InitBuffer(flagBuf_, a2HeaderBytes_);
    if (serverRanks_ != 0U && coreIdx_ == 0U) {
        pipe_->InitBuffer(bwBuf_, BW_UB_BYTES);
    }
    InitRowQueues();
    LocalTensor<int32_t> cum = infoBuf_.Get<int32_t>(); // epSendCounts: inclusive cumulative rows per block
    if (entries > 0U) {
        DataCopyPad(cum, epSendCountsGm_, DataCopyExtParams(1U, entries * 4U, 0U, 0U, 0U),
                    DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_S>();
    }
    for (uint32_t i = begin; i < end; ++i) {
        const uint32_t owner = i % epWorld_;
        const uint32_t first = (i == 0U) ? 0U : static_cast<uint32_t>(cum.GetValue(i - 1U));
        const uint32_t rows = static_cast<uint32_t>(cum.GetValue(i)) - first;
        const uint32_t fromHeader = RowsFrom(cum, i / epWorld_, owner); // this block's first row, before the header
        RequireFits(static_cast<uint64_t>(fromHeader) * rowStride_, A2HeaderAt()); // the owner's rows fit the region
        const bool staged = ByBatchWrite(owner); // sent by BatchWrite after SyncAll (SendBlocksByBatchWrite)
        GM_ADDR region = staged ? StageRegion(owner) : A2Region(owner, epRank_);
        for (uint32_t j = 0U; j < rows; ++j) {
            GlobalTensor<uint8_t> win;
            win.SetGlobalBuffer(region + A2RowAt(fromHeader - j));
            // the A2 layout carries no (token, k) of the row: the emitter admits no formula that reads them
            SendRow(first + j, win, 0U, 0U);
        }
    }
    // every core's rows have landed (SyncAll begins with PipeBarrier<PIPE_ALL>) before any header and its flag
    SyncAll<true>();
    SendHeaders(cum);
    if (serverRanks_ != 0U) {
        SyncAll<true>(); // every core's rows and headers are staged
        if (coreIdx_ == 0U) {
            SendBlocksByBatchWrite(cum);
        }
    }
}

// The rows this rank returns owner `owner` from local expert `localExpert` on (the blocks of the experts from it to
// the last, `cum`: epSendCounts): how many rows before the region's header that expert's first row lies.
template <typename Traits>
__aicore__ inline uint32_t MoeCombineKernel<Traits>::RowsFrom(const LocalTensor<int32_t> &cum, uint32_t localExpert,
                                                              uint32_t owner) const
{
    uint32_t rows = 0U;
    for (uint32_t j = localExpert; j < localExperts_; ++j) {
        const uint32_t i = j * epWorld_ + owner;
        rows += static_cast<uint32_t>(cum.GetValue(i)) - ((i == 0U) ? 0U : static_cast<uint32_t>(cum.GetValue(i - 1U)));
    }
    return rows;
}

// This core's share of the owners: the header of this rank's region there (per local expert, its first row's
// distance from the header; the flag in the last word), after the rows (into windowsOut for an owner reached by
// BatchWrite), as the real A2 combine writes its token count and flag after the rows (code: mc2/
// moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h SingleServerDispatch). Every owner gets a
// header, with no rows too: it waits for every rank's flag.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::SendHeaders(const LocalTensor<int32_t> &cum)
{
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(isSharedRank_ ? 0U : epWorld_, begin, end);
    LocalTensor<int32_t> header = flagBuf_.Get<int32_t>();
    for (uint32_t owner = begin; owner < end; ++owner) {
        SyncFunc<HardEvent::MTE3_S>(); // the previous owner's header has left UB
        for (uint32_t w = 0U; w < a2HeaderBytes_ / 4U; ++w) {
            header.SetValue(w, w < localExperts_ ? static_cast<int32_t>(RowsFrom(cum, w, owner)) : 0);
        }
        header.SetValue(a2HeaderBytes_ / 4U - 1U, FLAG_SET);
        SyncFunc<HardEvent::S_MTE3>();
        GlobalTensor<int32_t> headerGm;
        headerGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(
            (ByBatchWrite(owner) ? StageRegion(owner) : A2Region(owner, epRank_)) + A2HeaderAt()));
        DataCopy(headerGm, header, a2HeaderBytes_ / 4U);
    }
    PipeBarrier<PIPE_ALL>(); // the headers' MTE3 reads of flagBuf_ end before the reduce's TPipe::Reset
}

// Core 0, every core's rows and headers staged (SyncAll): for each owner reached by BatchWrite, this rank's rows and
// then the header ending with the flag as one item, all in one task with no Wait, as the real A2 fullmesh combine
// sends (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h MultiServerDispatch);
// the bytes of one item land in ascending order, so the owner that sees the flag has the rows (`cum`:
// epSendCounts). Finalize waits for the task.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::SendBlocksByBatchWrite(const LocalTensor<int32_t> &cum)
{
    bw_.Init(userWorkspace_ + BatchWriteItemsAt(tiling_), 2U * (moeExperts_ + epWorld_), bwBuf_.Get<uint64_t>());
    for (uint32_t owner = 0U; owner < (isSharedRank_ ? 0U : epWorld_); ++owner) {
        if (!ByBatchWrite(owner)) {
            continue;
        }
        const uint64_t from = A2RowAt(RowsFrom(cum, 0U, owner)); // the rows end where the header starts
        bw_.Add(StageRegion(owner) + from, A2Region(owner, epRank_) + from, a2RegionBytes_ - from, owner);
    }
    bw_.Send(hccl_);
}

// Atlas A2: every expert rank flags its region on every owner; the cores wait for the epWorldSize flags, each read
// by the scalar unit after a cache clean and invalidate, then cleared for the next call with this data state, as the
// real A2 combine waits (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h
// WaitDispatch, one flag per rank): no MTE copy and no SetFlag / WaitFlag pair per round. The headers stay for the
// reduce.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::WaitBlocks()
{
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(epWorld_, begin, end);
    ResetPipe(pipe_);
    const PollDeadline deadline(pollUs_);
    for (uint32_t src = begin; src < end; ++src) { // one flag per expert rank, the last word of its header
        GlobalTensor<int32_t> flag;
        flag.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(A2Region(epRank_, src) + a2RegionBytes_ - 4UL));
        while (true) {
            DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(flag);
            if (flag.GetValue(0U) == FLAG_SET) {
                break;
            }
            if (deadline.Passed()) {
                PollTimedOut(epRank_, src, FlagSetter::RANK, src, pollUs_);
            }
        }
        flag.SetValue(0U, 0);
        DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(flag);
    }
    // no PipeBarrier<PIPE_ALL> before it: SyncAll begins with one (code: asc-devkit impl/basic_api/dav_c220/
    // kernel_operator_sync_impl.h SyncAllImpl), as the real A2 combine calls it after its sends with none
    // (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h AlltoAllDispatch)
    SyncAll<true>();
}

// ---- 2. the token owner sums the rows of its tokens ---------------------------------------------
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::Reduce()
{
    ResetPipe(pipe_);
    const uint32_t pairs = bs_ * topK_;
    const uint32_t maskLen = (maskRank_ == 2U) ? pairs : bs_;
    const uint32_t kBytes = AlignUp(topK_ * 4U, UB_BLOCK);
    pipe_->InitBuffer(calcBuf_, reduceSlots_ * slotBytes_);
    pipe_->InitBuffer(infoBuf_, 3U * kBytes);
    pipe_->InitBuffer(maskBuf_, AlignUp(maskLen, UB_BLOCK));
    // a token's slot flags, then zeros to clear them; blockFlags_: the fp32 flags of a token's blocks (whole
    // repeats), their compare bits, then zeros for the flags of its blocks
    const uint32_t blockFlagFloats = slotsPerToken_ * blocks_ * BLOCK_FLAG_FLOATS;
    const uint32_t compared = AlignUp(blockFlagFloats, FLOATS_PER_REPEAT);
    pipe_->InitBuffer(flagBuf_, blockFlags_ ? compared * 4U + AlignUp(compared / 8U, UB_BLOCK) + blockFlagFloats * 4U :
                                              2U * slotsPerToken_ * FLAG_BYTES);
    if constexpr (!Traits::POST) {
        pipe_->InitBuffer(msgQue_, bufDepth_, AlignUp(rowBytes_, UB_BLOCK));
    } else if constexpr (Traits::POST_INVARIANTS > 0U) {
        pipe_->InitBuffer(postBuf_, Traits::POST_INVARIANTS * AlignUp(hLen_ * 4U, UB_BLOCK));
    }
    LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();

    // Active tokens: all without a mask; a 1-D mask keeps its first sum(mask) tokens (its true values precede
    // the false ones); a 2-D mask keeps the tokens with any pair set and skips the pairs it does not set.
    const bool pairMask = hasMask_ && maskRank_ == 2U;
    uint32_t prefix = bs_;
    if (hasMask_) {
        DataCopyPad(mask, xActiveMaskOptionalGm_, DataCopyExtParams(1U, maskLen, 0U, 0U, 0U),
                    DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_S>();
        if (!pairMask) {
            prefix = 0U;
            for (uint32_t t = 0U; t < bs_; ++t) {
                prefix += (mask.GetValue(t) != 0U) ? 1U : 0U;
            }
        }
    }
    uint32_t begin = 0U;
    uint32_t end = 0U;
    if (status_.stateRecord) { // the real op's record counts its own split: the active tokens over the cores
        RecordTokens(prefix, mask, pairMask);
    }
    SplitRange(bs_, begin, end);
    // the zeros WaitSlots clears a token's flags with, written once (the real kernel's stateResetTensor_);
    // blockFlags_: and the flag area past the loaded flags (compared, never loaded), and the status of each token
    // of the core's share, 0 until it is combined (the real LocalWindowCopy's tokenStatusTensor)
    if (blockFlags_) {
        Duplicate(flagBuf_.Get<float>(), 0.0f, static_cast<int32_t>(compared));
        Duplicate(flagBuf_.GetWithOffset<float>(blockFlagFloats, compared * 4U + AlignUp(compared / 8U, UB_BLOCK)),
                  0.0f, static_cast<int32_t>(blockFlagFloats));
        if (begin < end) {
            pipe_->InitBuffer(statusBuf_, AlignUp((end - begin) * 4U, UB_BLOCK));
            Duplicate(statusBuf_.Get<int32_t>(), static_cast<int32_t>(0), static_cast<int32_t>(end - begin));
        }
        SyncFunc<HardEvent::V_MTE2>();
        SyncFunc<HardEvent::V_S>(); // UpdateDataState may store its word where the flags start
    } else {
        Duplicate(flagBuf_.GetWithOffset<int32_t>(slotsPerToken_ * WS_SLOT_INTS, slotsPerToken_ * FLAG_BYTES),
                  static_cast<int32_t>(0), static_cast<int32_t>(slotsPerToken_ * WS_SLOT_INTS));
    }
    SyncFunc<HardEvent::V_MTE3>();
    if constexpr (Traits::POST_INVARIANTS > 0U) {
        if (begin < end) {
            PostInvariants(); // once per core, before the tokens: the post stage's rows no token changes
        }
    }
    if (blockFlags_) {
        CombineRoundRobin(begin, end, prefix, mask, pairMask);
    } else {
        for (uint32_t t = begin; t < end; ++t) { // each token's slots waited for in turn (WaitSlots)
            CombineToken(t, TokenActive(t, prefix, mask, pairMask), mask, pairMask);
        }
    }
    // no PipeBarrier<PIPE_ALL>: UpdateDataState writes this generation's flagBuf_ after it orders its last reads,
    // and the kernel's end waits for the outputs (the real combine ends its LocalWindowCopy with the xOut copy)
}

// Whether token `t` is active: all without a mask; a 1-D mask keeps its first `prefix` tokens (its true values precede
// the false ones); a 2-D mask keeps the tokens with any pair set.
template <typename Traits>
__aicore__ inline bool MoeCombineKernel<Traits>::TokenActive(uint32_t t, uint32_t prefix,
                                                             const LocalTensor<uint8_t> &mask, bool pairMask) const
{
    bool active = t < prefix;
    if (pairMask) {
        active = false;
        for (uint32_t k = 0U; k < topK_; ++k) {
            active = active || mask.GetValue(t * topK_ + k) != 0U;
        }
    }
    return active;
}

// The tokens the real combine's state record counts for this core (word 1, 1 + them): the real op splits its active
// tokens, not all BS, over the cores (a 1-D mask's first sum(mask), a 2-D mask's tokens with any pair set, in
// order; all BS without a mask), this core's contiguous share as SplitRange gives it, and steps the word once per
// token it combines (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h
// LocalWindowCopy: tokenPerAivNum = activeMaskBsCnt_ / aivNum_ plus one below the remainder, statePos++ per
// token; TokenMaskCalCnt, ExpertMaskCalCnt; arch35/moe_distribute_combine_v2_a5_mte.h LocalWindowCopy, the same).
// This kernel splits all BS tokens (an inactive token's zero row is written by the core that holds it), so the
// record's count is the real split's, not the tokens this core combined.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::RecordTokens(uint32_t prefix, const LocalTensor<uint8_t> &mask,
                                                              bool pairMask)
{
    uint32_t active = prefix;
    if (pairMask) {
        active = 0U;
        for (uint32_t t = 0U; t < bs_; ++t) {
            active += TokenActive(t, prefix, mask, pairMask) ? 1U : 0U;
        }
    }
    uint32_t begin = 0U;
    uint32_t end = 0U;
    SplitRange(active, begin, end);
    recordTokens_ = end - begin;
}

// Sums the rows token `t` receives (Atlas A2/A3: waiting for its slots first; Ascend 950: its blocks are all in) and
// writes its outputs; an inactive token's are zeros.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::CombineToken(uint32_t t, bool active, const LocalTensor<uint8_t> &mask,
                                                              bool pairMask)
{
    const uint32_t kBytes = AlignUp(topK_ * 4U, UB_BLOCK);
    LocalTensor<int32_t> ids = infoBuf_.Get<int32_t>();
    LocalTensor<float> weights = infoBuf_.GetWithOffset<float>(kBytes / 4U, kBytes);
    LocalTensor<int32_t> slots = infoBuf_.GetWithOffset<int32_t>(kBytes / 4U, 2U * kBytes); // Atlas A2: expandIdx
    // Atlas A2: per pair, its expert's header word (one 32-byte slot each; the slot flags WaitSlots reads are not used)
    LocalTensor<int32_t> fromHeader = flagBuf_.Get<int32_t>();
    LocalTensor<float> acc = CalcSlot<float>(0U);
    LocalTensor<float> term = CalcSlot<float>(1U);
    LocalTensor<float> scratch = CalcSlot<float>(3U);
    // no barrier after it: the first AddRow reads acc after the barrier its term ends with (TermReady), the
    // output after the one below, as the real ProcessExpert's Duplicate of sumFloatBufLocal_
    Duplicate(acc, 0.0f, static_cast<int32_t>(hLen_));
    if (active) {
        SyncFunc<HardEvent::S_MTE2>(); // the previous token's ids, weights and slots have been read
        DataCopyPad(ids, expertIdsGm_[static_cast<uint64_t>(t) * topK_], DataCopyExtParams(1U, topK_ * 4U, 0U, 0U, 0U),
                    DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
        if (hasWeights_) {
            DataCopyPad(weights, expertScalesGm_[static_cast<uint64_t>(t) * topK_],
                        DataCopyExtParams(1U, topK_ * 4U, 0U, 0U, 0U), DataCopyPadExtParams<float>(false, 0U, 0U, 0U));
        }
        if (isA2_) {
            DataCopyPad(slots, assistInfoForCombineGm_[static_cast<uint64_t>(t) * topK_],
                        DataCopyExtParams(1U, topK_ * 4U, 0U, 0U, 0U),
                        DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
        }
        SyncFunc<HardEvent::MTE2_S>();
        if (isA2_) { // per MoE pair, its expert's word of the sender's header: where the expert's rows start
            for (uint32_t k = 0U; k < topK_; ++k) {
                const int32_t id = ids.GetValue(k);
                if (id >= 0 && static_cast<uint32_t>(id) < moeExperts_) {
                    GlobalTensor<int32_t> word;
                    word.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(
                        A2Region(epRank_, static_cast<uint32_t>(id) / localExperts_) + A2HeaderAt() +
                        (static_cast<uint32_t>(id) % localExperts_) * 4U));
                    DataCopyPad(fromHeader[k * WS_SLOT_INTS], word, DataCopyExtParams(1U, 4U, 0U, 0U, 0U),
                                DataCopyPadExtParams<int32_t>(false, 0U, 0U, 0U));
                }
            }
            SyncFunc<HardEvent::MTE2_S>();
        }
        // the pairs whose MoE expert returned a row into slot t * (K + S) + k (WaitSlots read their ids)
        const uint64_t returned = isA2_       ? 0UL :
                                  blockFlags_ ? ClearBlockSlots(t, ids, mask, pairMask) :
                                                WaitSlots(t, ids, mask, pairMask);
        for (uint32_t k = 0U; k < topK_; ++k) {
            const bool moeRow = ((returned >> k) & 1UL) != 0UL;
            const int32_t id = moeRow ? 0 : ids.GetValue(k);
            if (!moeRow && (id < 0 || static_cast<uint32_t>(id) >= expertEnd_ ||
                            (pairMask && mask.GetValue(t * topK_ + k) == 0U))) {
                continue;
            }
            const float weight = hasWeights_ ? weights.GetValue(k) : 1.0f;
            const uint32_t expert = static_cast<uint32_t>(id);
            if (moeRow || expert < moeExperts_) { // the row the MoE expert returned
                GlobalTensor<uint8_t> slotGm;
                slotGm.SetGlobalBuffer(
                    isA2_ ? A2Region(epRank_, expert / localExperts_) +
                                A2RowAt(static_cast<uint32_t>(fromHeader.GetValue(k * WS_SLOT_INTS)) -
                                        static_cast<uint32_t>(slots.GetValue(k))) :
                            WinRows(epRank_) + (static_cast<uint64_t>(t) * slotsPerToken_ + k) * rowStride_);
                LoadReturned(term, scratch, slotGm);
            } else if (!SpecialTerm(t, expert, term)) {
                continue; // a special expert whose Moe = 0 adds nothing
            } else {
                PipeBarrier<PIPE_V>(); // a special term's formula may end with a vector instruction
            }
            AddRow(acc, term, weight, hasWeights_); // no weights: summed as the shared rows are
        }
        for (uint32_t s = 0U; s < sharedExperts_; ++s) { // shared experts and sharedExpertX are not weighted
            GlobalTensor<uint8_t> slotGm;
            slotGm.SetGlobalBuffer(WinRows(epRank_) +
                                   (static_cast<uint64_t>(t) * slotsPerToken_ + topK_ + s) * rowStride_);
            LoadReturned(term, scratch, slotGm);
            AddRow(acc, term, 1.0f, false);
        }
        if (hasSharedX_) {
            LoadRowF32<ExpandXT, RowLayout::ROWS>(term, scratch, sharedExpertXOptionalGm_, t, hLen_);
            TermReady<ExpandXT>();
            AddRow(acc, term, 1.0f, false);
        }
    }
    PipeBarrier<PIPE_V>(); // the last Add (or the Duplicate) before the output reads acc
    if constexpr (Traits::POST) {
        PostStage(t, acc); // the spec's post stage writes the outputs of token t
    } else {
        LocalTensor<uint8_t> out = msgQue_.AllocTensor<uint8_t>();
        // no barrier after the cast: no vector instruction reads `out`, the queue orders it before MTE3
        CastRow<XOutT, float, RoundMode::CAST_RINT, false, false>(out.template ReinterpretCast<XOutT>(), acc, hLen_,
                                                                  scratch);
        msgQue_.EnQue(out);
        out = msgQue_.DeQue<uint8_t>();
        DataCopyPad(xOutGm_[static_cast<uint64_t>(t) * rowBytes_], out, DataCopyExtParams(1U, rowBytes_, 0U, 0U, 0U));
        msgQue_.FreeTensor(out);
    }
}

// Ascend 950: the core's tokens walked round-robin, as the real A5 MTE combine walks them (code: mc2/
// moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h LocalWindowCopy, its
// tokenStatusTensor): a pass checks each token not yet combined once (UnsetBlockSlots, as CheckPackedTokenArriveBatch)
// and combines one whose blocks are all in (its flags cleared, ClearBlockSlots), skipping the others, until every
// token is combined; no token is polled back to back. A pass that leaves a token after the poll deadline traps.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::CombineRoundRobin(uint32_t begin, uint32_t end, uint32_t prefix,
                                                                   const LocalTensor<uint8_t> &mask, bool pairMask)
{
    if (begin == end) {
        return;
    }
    LocalTensor<int32_t> status = statusBuf_.Get<int32_t>(); // Reduce's zeros: no token looked at yet
    // a token's status: 0 until a pass looks at it; SLOTS_KNOWN | the slots it waits for while it waits, so a later
    // pass reads no id again (where the slots fit the word; else its ids are read each pass); COMBINED once combined
    constexpr int32_t SLOTS_KNOWN = 1 << 30;
    constexpr int32_t COMBINED = -1;
    const bool keepSlots = slotsPerToken_ < 30U;
    const PollDeadline deadline(pollUs_);
    uint32_t left = end - begin;
    while (left != 0U) {
        for (uint32_t t = begin; t < end; ++t) {
            const int32_t state = status.GetValue(t - begin);
            if (state == COMBINED) {
                continue;
            }
            const bool active = state != 0 || TokenActive(t, prefix, mask, pairMask);
            if (active) {
                // the token's ids read by the scalar unit, as the real NeedWaitTokenSlot reads expertIdsGM_
                const uint64_t expected =
                    (state != 0) ? static_cast<uint64_t>(state & ~SLOTS_KNOWN) :
                                   ExpectedSlots(t, expertIdsGm_[static_cast<uint64_t>(t) * topK_], mask, pairMask);
                if (UnsetBlockSlots(t, expected, true) != 0UL) {
                    if (keepSlots && state == 0) {
                        status.SetValue(t - begin, SLOTS_KNOWN | static_cast<int32_t>(expected));
                    }
                    continue;
                }
            }
            status.SetValue(t - begin, COMBINED);
            --left;
            CombineToken(t, active, mask, pairMask);
        }
        if (left != 0U && deadline.Passed()) { // the first token still waiting, and its first slot not in
            uint32_t t = begin;
            while (status.GetValue(t - begin) == COMBINED) {
                ++t;
            }
            const GlobalTensor<int32_t> idsGm = expertIdsGm_[static_cast<uint64_t>(t) * topK_];
            const uint64_t unset = UnsetBlockSlots(t, ExpectedSlots(t, idsGm, mask, pairMask), false);
            if (unset != 0UL) {
                SlotTimedOut(t, unset, idsGm);
            }
        }
    }
}

// Waits until every slot of token `tokenIdx` that receives a row has its flag, then clears them; returns those slots
// (bit `slot`). Which they are is read once (slot k < K: set by the rank of expert ids[k], a MoE expert the mask
// keeps; slot K + s: by shared expert s), and each flag is read until it is set, not again after.
template <typename Traits>
__aicore__ inline uint64_t MoeCombineKernel<Traits>::WaitSlots(uint32_t tokenIdx, const LocalTensor<int32_t> &ids,
                                                               const LocalTensor<uint8_t> &mask, bool pairMask)
{
    const uint64_t expected = ExpectedSlots(tokenIdx, ids, mask, pairMask);
    LocalTensor<int32_t> flags = flagBuf_.Get<int32_t>();
    GlobalTensor<int32_t> flagsGm;
    flagsGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(WinFlags(epRank_) + static_cast<uint64_t>(tokenIdx) *
                                                                                       slotsPerToken_ * FLAG_BYTES));
    const PollDeadline deadline(pollUs_);
    uint64_t unset = expected;
    while (unset != 0UL) {
        DataCopy(flags, flagsGm, slotsPerToken_ * WS_SLOT_INTS);
        SyncFunc<HardEvent::MTE2_S>();
        for (uint32_t slot = 0U; slot < slotsPerToken_; ++slot) {
            if (((unset >> slot) & 1UL) != 0UL && flags.GetValue(slot * WS_SLOT_INTS) == FLAG_SET) {
                unset &= ~(1UL << slot);
            }
        }
        SyncFunc<HardEvent::S_MTE2>();
        if (unset != 0UL && deadline.Passed()) {
            SlotTimedOut(tokenIdx, unset, ids);
        }
    }
    // cleared from the zeros Reduce wrote once: no vector instruction or sync per token
    DataCopy(flagsGm, flagBuf_.GetWithOffset<int32_t>(slotsPerToken_ * WS_SLOT_INTS, slotsPerToken_ * FLAG_BYTES),
             slotsPerToken_ * WS_SLOT_INTS);
    return expected;
}

// The slots of token `tokenIdx` that receive a row (bit `slot`): slot k < K, set by the rank of expert ids[k], a MoE
// expert the mask keeps; slot K + s, by shared expert s.
template <typename Traits>
template <typename Ids>
__aicore__ inline uint64_t MoeCombineKernel<Traits>::ExpectedSlots(uint32_t tokenIdx, const Ids &ids,
                                                                   const LocalTensor<uint8_t> &mask, bool pairMask)
{
    uint64_t expected = 0UL;
    for (uint32_t slot = 0U; slot < slotsPerToken_; ++slot) {
        bool sent = slot >= topK_;
        if (!sent && (!pairMask || mask.GetValue(tokenIdx * topK_ + slot) != 0U)) {
            const int32_t id = ids.GetValue(slot);
            sent = id >= 0 && static_cast<uint32_t>(id) < moeExperts_;
        }
        expected |= sent ? (1UL << slot) : 0UL;
    }
    return expected;
}

// A poll of token `tokenIdx`'s slots timed out with the slots `unset` still unset: names the first one's setter
// (slot k < K: expert ids[k]'s rank; slot K + s: shared expert s).
template <typename Traits>
template <typename Ids>
__aicore__ inline void MoeCombineKernel<Traits>::SlotTimedOut(uint32_t tokenIdx, uint64_t unset, const Ids &ids)
{
    uint32_t first = 0U;
    while (((unset >> first) & 1UL) == 0UL) {
        ++first;
    }
    const uint32_t flag = tokenIdx * slotsPerToken_ + first;
    if (first < topK_) {
        PollTimedOut(epRank_, flag, FlagSetter::MOE_EXPERT, static_cast<uint32_t>(ids.GetValue(first)), pollUs_);
    } else {
        PollTimedOut(epRank_, flag, FlagSetter::SHARED_EXPERT, first - topK_, pollUs_);
    }
}

// Ascend 950: whether the `blocks` blocks from `slot` on have their flags: their 32-byte tails loaded by one strided
// DataCopyPad (480 bytes apart), compared with 1.0 by one CompareScalar, the bits read as uint64_t words, as the real
// A5 MTE combine checks them (code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h
// CheckPackedFlagRangeArrive). The flag area past the loaded flags holds Reduce's zeros.
template <typename Traits>
__aicore__ inline bool MoeCombineKernel<Traits>::BlocksArrived(GM_ADDR slot, uint32_t blocks)
{
    const uint32_t floats = blocks * BLOCK_FLAG_FLOATS;
    const uint32_t compared = AlignUp(floats, FLOATS_PER_REPEAT);
    const uint32_t bitsAt = AlignUp(slotsPerToken_ * blocks_ * BLOCK_FLAG_FLOATS, FLOATS_PER_REPEAT) * 4U;
    LocalTensor<float> flags = flagBuf_.Get<float>();
    LocalTensor<uint8_t> bits = flagBuf_.GetWithOffset<uint8_t>(compared / 8U, bitsAt);
    LocalTensor<uint64_t> words = flagBuf_.GetWithOffset<uint64_t>(compared / 64U, bitsAt);
    GlobalTensor<float> flagsGm;
    flagsGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slot + BLOCK_DATA_BYTES));
    DataCopyPad(flags, flagsGm,
                DataCopyExtParams(static_cast<uint16_t>(blocks), BLOCK_FLAG_BYTES, BLOCK_DATA_BYTES, 0U, 0U),
                DataCopyPadExtParams<float>(false, 0U, 0U, 0U));
    SyncFunc<HardEvent::MTE2_V>();
    CompareScalar(bits, flags, BLOCK_FLAG_SET, CMPMODE::EQ, compared);
    SyncFunc<HardEvent::V_S>();
    bool arrived = true;
    for (uint32_t w = 0U; w < compared / 64U && arrived; ++w) {
        const uint32_t lanes = MinU32(floats - w * 64U, 64U);
        const uint64_t want = lanes == 64U ? ~0UL : ((1UL << lanes) - 1UL);
        arrived = (words.GetValue(w) & want) == want;
    }
    // no sync after: V_S waited for the compare, so the next load of the flags and the next compare, which the scalar
    // unit issues after these reads, follow it, as the real CheckPackedFlagRangeArrive ends
    return arrived;
}

// Ascend 950: the slots of `expected` (bit `slot`) of token `tokenIdx` some block of which has no flag yet, from one
// check: `batch` and every slot of the token expected, one load checks all its blocks (the token's slots are
// adjacent), else each expected slot's blocks are checked (`batch`: until one is not in), as the real A5 MTE
// combine's CheckPackedTokenArriveBatch (code: mc2/moe_distribute_combine_v2/op_kernel/arch35/
// moe_distribute_combine_v2_a5_mte.h).
template <typename Traits>
__aicore__ inline uint64_t MoeCombineKernel<Traits>::UnsetBlockSlots(uint32_t tokenIdx, uint64_t expected, bool batch)
{
    const uint64_t all = (slotsPerToken_ == 64U) ? ~0UL : ((1UL << slotsPerToken_) - 1UL);
    GM_ADDR token = WinRows(epRank_) + static_cast<uint64_t>(tokenIdx) * slotsPerToken_ * rowStride_;
    if (batch && expected == all) {
        return BlocksArrived(token, slotsPerToken_ * blocks_) ? 0UL : expected;
    }
    uint64_t unset = 0UL;
    for (uint32_t slot = 0U; slot < slotsPerToken_ && (!batch || unset == 0UL); ++slot) {
        if (((expected >> slot) & 1UL) != 0UL && !BlocksArrived(token + slot * rowStride_, blocks_)) {
            unset |= 1UL << slot;
        }
    }
    return unset;
}

// Ascend 950: the slots of token `tokenIdx` that receive a row (bit `slot`), its blocks all in; clears the flags of
// all its slots' blocks, from the zeros Reduce wrote once, 32 bytes into the tail of each block, by one copy (the real
// ClearPackedTokenFlags, code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h,
// one copy per slot).
template <typename Traits>
__aicore__ inline uint64_t MoeCombineKernel<Traits>::ClearBlockSlots(uint32_t tokenIdx, const LocalTensor<int32_t> &ids,
                                                                     const LocalTensor<uint8_t> &mask, bool pairMask)
{
    GM_ADDR token = WinRows(epRank_) + static_cast<uint64_t>(tokenIdx) * slotsPerToken_ * rowStride_;
    const uint32_t floats = slotsPerToken_ * blocks_ * BLOCK_FLAG_FLOATS;
    GlobalTensor<float> flagsGm;
    flagsGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(token + BLOCK_DATA_BYTES));
    DataCopyPad(
        flagsGm,
        flagBuf_.GetWithOffset<float>(floats, AlignUp(floats, FLOATS_PER_REPEAT) * 4U +
                                                  AlignUp(AlignUp(floats, FLOATS_PER_REPEAT) / 8U, UB_BLOCK)),
        DataCopyExtParams(static_cast<uint16_t>(slotsPerToken_ * blocks_), BLOCK_FLAG_BYTES, 0U, BLOCK_DATA_BYTES, 0U));
    return ExpectedSlots(tokenIdx, ids, mask, pairMask);
}

// The row a sender returned into `slotGm`, as fp32 in `term`: a split quant mode's message goes through the part of
// its formula after the `send` (ReceiveRow); otherwise the slot holds the row itself.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::LoadReturned(const LocalTensor<float> &term,
                                                              const LocalTensor<float> &scratch,
                                                              const GlobalTensor<uint8_t> &slotGm)
{
    // blockFlags_: the slot's data bytes, 480 of each 512-byte block, back to back (code: moe_distribute_combine_v2_
    // a5_mte.h ProcessMoeExpert: DataCopyPad of blockCntPerToken_ blocks of 480 bytes, 32 apart)
    const DataCopyExtParams msgParams =
        blockFlags_ ? DataCopyExtParams(static_cast<uint16_t>(blocks_), BLOCK_DATA_BYTES, BLOCK_FLAG_BYTES, 0U, 0U) :
                      DataCopyExtParams(1U, sendBytes_, 0U, 0U, 0U);
    if constexpr (Traits::RECEIVES) {
        LocalTensor<uint8_t> msg = term.template ReinterpretCast<uint8_t>(); // read before the row is written there
        SyncFunc<HardEvent::V_MTE2>(); // the slot may still be read by earlier vector instructions
        DataCopyPad(msg, slotGm, msgParams, DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_V>();
        ReceiveRow(msg, term);
    } else if (blockFlags_) { // the raw row after its fp32 row's place, as LoadRowF32 keeps it
        LocalTensor<uint8_t> raw = scratch.template ReinterpretCast<uint8_t>()[AlignUp(hLen_ * 2U, REPEAT_BYTES)];
        SyncFunc<HardEvent::V_MTE2>();
        DataCopyPad(raw, slotGm, msgParams, DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        SyncFunc<HardEvent::MTE2_V>();
        CastToFloat(term, raw.template ReinterpretCast<XOutT>(), hLen_, scratch);
        TermReady<XOutT>();
    } else {
        LoadRowF32<XOutT, RowLayout::ROWS>(term, scratch, slotGm, 0U, hLen_);
        TermReady<XOutT>();
    }
}

// acc += weight * term (a Muls then an Add: two fp32 roundings, no fused multiply-add), or acc += term. The term
// ends with PipeBarrier<PIPE_V> after the vector instructions that wrote it and acc (TermReady); the Add has no
// barrier after it, as the real ProcessMoeExpert's: the next term is written by a load and a cast the Add does not
// read, and a barrier follows before anything reads acc (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/
// moe_distribute_combine_v2.h ProcessMoeExpert, LocalWindowCopy).
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::AddRow(const LocalTensor<float> &acc, const LocalTensor<float> &term,
                                                        float weight, bool weighted)
{
    const int32_t n = static_cast<int32_t>(hLen_);
    if (weighted) {
        Muls(term, term, weight, n);
        PipeBarrier<PIPE_V>();
    }
    Add(acc, acc, term, n);
}

// Toggle this core's data state word: the next call uses the other window half and slot flags. Where it is a
// per-core word, the first word of the reduce's flagBuf_ carries it (no TPipe::Reset, no PipeBarrier<PIPE_ALL>):
// that word was last read by the scalar unit (WaitSlots, after MTE2_S; Atlas A2 reads none), the scalar store
// follows those reads in order, and S_MTE3 orders it before the copy out, as the real combine stores its data
// state (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h LocalWindowCopy:
// dataStateLocalTensor_.SetValue, SyncFunc<S_MTE3>, DataCopyPad). The kernel's end waits for the copy.
template <typename Traits>
__aicore__ inline void MoeCombineKernel<Traits>::UpdateDataState()
{
    if (bufferIdWord_ != nullptr) {
        FlipBufferId(bufferIdWord_, dataState_);
        return;
    }
    if (status_.stateRecord) { // flipped at Init; the record's position: 1 + the real split's tokens of this core
        StoreRecordPosition(CoreStateWord(), flagBuf_.Get<uint32_t>(), 1U + recordTokens_);
        return;
    }
    LocalTensor<int32_t> state = flagBuf_.Get<int32_t>();
    state.SetValue(0U, static_cast<int32_t>(dataState_ ^ 1U));
    SyncFunc<HardEvent::S_MTE3>();
    GlobalTensor<int32_t> stateGm;
    stateGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(CoreStateWord()));
    DataCopy(stateGm, state, WS_SLOT_INTS);
}

#endif // MOE_COMBINE_KERNEL_H
