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
 * The Setup/Teardown family's HCCL window (DispatchSetup, DispatchTeardown, CombineSetup, CombineTeardown), shared by
 * the four family kernels (<family>_kernel.h). A file of opgen's family kernels, copied into the generated tree's
 * common/op_kernel/ (not generated: edit it in opgen's templates/cpp/common/op_kernel/); op_kernel/<op>_gen.h
 * includes it inside the op's namespace, after the kernel helpers (UB_BLOCK, WindowBytes, SplitWindow, RequireFits).
 */
#ifndef OPGEN_FAMILY_WINDOW_H
#define OPGEN_FAMILY_WINDOW_H

// ---- the Setup/Teardown family's HCCL windows (DispatchSetup, DispatchTeardown, CombineSetup, CombineTeardown) ------
// The four kernels share one layout of every rank's EP windows, the real arch35 ops' where they have one (the family
// owns its EP domain: no other op uses it), the spec's `window` (tiling checked it and hands it over in the win_*
// fields).
//   windowsIn: [data half 0 | data half 1 | unused], HCCL_BUFFSIZE / 4 each; the halves alternate per call (data
//     state), as the real kernels': winDataSizeOffset_ = dataState_ * totalWinSize / 2 (code: mc2/
//     moe_distribute_combine_setup/op_kernel/arch35/moe_distribute_combine_setup_arch35.h Init), and the real
//     tilings give totalWinSize = HCCL_BUFFSIZE / 2 (op_host/op_tiling/moe_distribute_combine_setup_tiling_base.cpp
//     and the other three's: GetMaxWindowSize() / 2), the spec's `window ep: HCCL_BUFFSIZE // 2`.
//     A data half: the combine area and the dispatch area over it (both from the half's start, as the real ops')
//     combine block g (global MoE expert g = source rank * localMoeExpertNum + local expert) at g * maxBs * H * 2
//       (code: GetWinAddrByRankId + epDataOffsetOnWin_, expertPerSizeOnWin_ = axisMaxBS_ * H * sizeof(T): no
//       alignment): the rows expert g sends back to this token owner, slot expandIdx[t * K + k] of the owner's pair
//       (t, k), maxBs rows of H * 2 bytes (packed);
//     dispatch block b (source rank * localMoeExpertNum + local expert; a shared rank: the source rank) at
//       b * maxBs * tokenMsgSize bytes: the staged yOut rows that source sends this rank, maxBs rows of tokenMsgSize
//       elements (512-byte multiples) (code: mc2/moe_distribute_dispatch_setup/op_kernel/arch35/
//       moe_distribute_dispatch_setup_arch35.h Communication, GetWindAddrByRankId(rankId) + (epRankId_ *
//       moeExpertNumPerRank + expertIdx) * expertPerSizeOnWin_, expertPerSizeOnWin_ = axisMaxBS_ * hAlignWinSize_).
//   windowsOut (FAMILY_STATE_BYTES of it, the status area):
//     combine status of data state s, source rank d: COMBINE_STATUS_HALF * s + d * StatusSlotBytes(), one 32-byte
//       block, 1.0f in its first word once d's last combine block for this owner has landed (code: Communication,
//       notifyAddr = GetWinStateAddrByRankId(sendRankId) + epStateOffsetOnWin_, notifyData 0x3f800000);
//     dispatch status of data state s, entry (local expert j, source rank d): COMBINE_STATUS_HALF * s + (d + j *
//       epWorldSize) * StatusSlotBytes(), one 32-byte block {2.0f, rows, 0 ...} once d's rows for j have landed
//       (code: moe_distribute_dispatch_setup_arch35.h Communication, GetWindStateAddrByRankId(rankId) + (epRankId_
//       + expertIdx * epWorldSize_) * stateOffset_, the status block Init fills with 0x40000000; the real
//       DispatchTeardown waits for 2.0f per block and clears the flag word, WaitDispatch);
//     each core's data-state word at STATE_WORDS_AT + core * STATE_WORD_STRIDE (code: Init, STATE_WIN_OFFSET +
//       STATE_SIZE_PER_CORE * coreIdx_; DispatchTeardown and CombineTeardown flip it, so in one layer the
//       Dispatch pair uses data state s and the Combine pair 1 - s, as the real four ops);
//     from URMA_QUEUES_AT: the real ops' URMA queue pointers (code: moe_distribute_base.h GetPICI, WIN_PICI_OFFSET +
//       PICI_WIN_SIZE * dstRankId): never written here.
constexpr uint64_t COMBINE_STATUS_HALF = 350UL * 1024UL;       // code: moe_distribute_base.h WIN_STATE_OFFSET
constexpr uint64_t STATUS_SLOT = 512UL;                        // code: arch35 STATE_OFFSET: a source rank's status
constexpr uint32_t STATUS_SLOT_THRESHOLD = 512U;               // code: STATE_COUNT_THRESHOLD: more blocks, half slots
constexpr uint64_t STATE_WORDS_AT = 950UL * 1024UL;            // code: moe_distribute_base.h STATE_WIN_OFFSET
constexpr uint64_t STATE_WORD_STRIDE = 512UL;                  // code: arch35 STATE_SIZE_PER_CORE
constexpr uint64_t URMA_QUEUES_AT = 1024UL * 1024UL;           // code: moe_distribute_base.h WIN_PICI_OFFSET
constexpr int32_t DISPATCH_FLAG = 0x40000000;                  // 2.0f: a dispatch status flag (code: arch35 Init)
constexpr uint64_t FAMILY_STATE_BYTES = 2UL * 1024UL * 1024UL; // what the status area needs of windowsOut
constexpr uint32_t COMBINE_ELEM_BYTES = 2U;                    // expandX / xOut: FLOAT16 or BFLOAT16

struct FamilyWindow {
    uint64_t halfBytes;    // one data half
    uint64_t dataAt;       // where the data halves start
    uint64_t combineBlock; // one combine block
};

// The layout from the tiling data; traps when the combine blocks or the status entries outgrow what tiling gave
// them, the window is smaller than the one tiling checked (the dispatch kernels check their own blocks), the
// status area is not in windowsOut (tiling.win_state_exp), or tiling could not read the window (win_window 0): the
// halves are those of HCCL_BUFFSIZE / 2 (the spec's `window ep: HCCL_BUFFSIZE // 2`), which the kernel cannot
// derive from the window it sees, as the real kernels take totalWinSize from their tiling only.
template <typename TilingT>
__aicore__ inline FamilyWindow MakeFamilyWindow(const TilingT &tiling, uint32_t moeExperts, uint32_t maxBs, uint32_t h)
{
    FamilyWindow w;
    const WindowSplit split = SplitWindow(tiling, WindowBytes<EP_GROUP>());
    w.halfBytes = split.half;
    w.dataAt = static_cast<uint64_t>(tiling.win_data_at);
    w.combineBlock = static_cast<uint64_t>(maxBs) * h * COMBINE_ELEM_BYTES;
    RequireFits(w.combineBlock * moeExperts, static_cast<uint64_t>(tiling.win_combine));
    RequireFits(static_cast<uint64_t>(tiling.win_need), w.halfBytes);
    RequireFits(FAMILY_STATE_BYTES, static_cast<uint64_t>(tiling.win_state));
    RequireFits(static_cast<uint64_t>(tiling.win_window), WindowBytes<EP_GROUP>());
    RequireFits(1UL, static_cast<uint64_t>(tiling.win_window));
    RequireFits(1UL, static_cast<uint64_t>(tiling.win_state_exp));
    RequireFits(static_cast<uint64_t>(tiling.win_state), WindowBytes<EP_GROUP>()); // windowsOut: the window's size
    return w;
}

// The base of rank `rank`'s windowsOut in HCCL group `group`, from the HCCL context's list, as the real 950 ops read
// it (code: moe_distribute_combine_setup_arch35.h GetWinStateAddrByRankId, hcclContext_->windowsOut[rankId]); a rank
// past the list traps.
template <uint32_t group>
__aicore__ inline GM_ADDR FamilyStatusWindow(uint32_t rank)
{
    auto ctx = reinterpret_cast<__gm__ HcclCombineOpParam *>(GetHcclContext<group>());
    RequireFits(static_cast<uint64_t>(rank) + 1UL, sizeof(ctx->windowsOut) / sizeof(ctx->windowsOut[0]));
    return reinterpret_cast<GM_ADDR>(ctx->windowsOut[rank]);
}

// Bytes between two source ranks' combine status blocks, for `blocks` = epWorldSize * localMoeExpertNum (code:
// arch35 Init, stateOffset_ = (moeSendNum_ > STATE_COUNT_THRESHOLD) ? STATE_OFFSET / 2 : STATE_OFFSET).
__aicore__ inline uint64_t StatusSlotBytes(uint32_t blocks)
{
    return blocks > STATUS_SLOT_THRESHOLD ? STATUS_SLOT / 2UL : STATUS_SLOT;
}

// This core's data-state word in a rank's windowsOut `statusWindow` (code: arch35 Init, STATE_WIN_OFFSET +
// STATE_SIZE_PER_CORE * coreIdx_).
__aicore__ inline GM_ADDR CoreStateWord(GM_ADDR statusWindow, uint32_t core)
{
    return statusWindow + STATE_WORDS_AT + static_cast<uint64_t>(core) * STATE_WORD_STRIDE;
}

// Core `core` of `cores`: its contiguous share [begin, end) of `total` items (the first total % cores cores take one
// more).
__aicore__ inline void CoreShare(uint32_t total, uint32_t core, uint32_t cores, uint32_t &begin, uint32_t &end)
{
    const uint32_t base = total / cores;
    const uint32_t extra = total % cores;
    begin = base * core + MinU32(core, extra);
    end = begin + base + (core < extra ? 1U : 0U);
}

// The data state (0 or 1) a family kernel of this call uses: one word in the status tail of this rank's window.
__aicore__ inline uint32_t ReadStateWord(GM_ADDR word, const LocalTensor<int32_t> &ub)
{
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(word));
    DataCopy(ub, gm, WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE2_S>();
    return static_cast<uint32_t>(ub.GetValue(0U)) & 1U;
}

// Flip the data state word (one core, after every core of the kernel is done with this call's half).
__aicore__ inline void ToggleStateWord(GM_ADDR word, uint32_t state, const LocalTensor<int32_t> &ub)
{
    for (uint32_t i = 0U; i < WS_SLOT_INTS; ++i) {
        ub.SetValue(i, i == 0U ? static_cast<int32_t>(state ^ 1U) : 0);
    }
    SyncFunc<HardEvent::S_MTE3>();
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(word));
    DataCopy(gm, ub, WS_SLOT_INTS);
    PipeBarrier<PIPE_ALL>(); // the callers' TPipe::Reset follows: it waits only for freed queue buffers
}

// A contiguous run of GM bytes into another rank's window (a write of the URMA kind: data first, the caller then
// writes the status entry that announces it), through UB pieces of at most `pieceBytes`.
template <typename Q>
__aicore__ inline void CopyGmBytes(Q &que, uint32_t pieceBytes, const GlobalTensor<uint8_t> &dst,
                                   const GlobalTensor<uint8_t> &src, uint64_t bytes)
{
    for (uint64_t done = 0UL; done < bytes; done += pieceBytes) {
        const uint32_t n = static_cast<uint32_t>((bytes - done) < pieceBytes ? (bytes - done) : pieceBytes);
        LocalTensor<uint8_t> piece = que.template AllocTensor<uint8_t>();
        DataCopyPad(piece, src[done], DataCopyExtParams(1U, n, 0U, 0U, 0U),
                    DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
        que.EnQue(piece);
        piece = que.template DeQue<uint8_t>();
        DataCopyPad(dst[done], piece, DataCopyExtParams(1U, n, 0U, 0U, 0U));
        que.FreeTensor(piece);
    }
}

// Writes one status entry {flag, rows} from `ub` (32 bytes) to `entry` (after the data it announces).
__aicore__ inline void PostEntry(GM_ADDR entry, int32_t flag, int32_t rows, const LocalTensor<int32_t> &ub)
{
    PipeBarrier<PIPE_MTE3>(); // the data this entry announces has landed
    for (uint32_t i = 0U; i < WS_SLOT_INTS; ++i) {
        ub.SetValue(i, i == 0U ? flag : (i == 1U ? rows : 0));
    }
    SyncFunc<HardEvent::S_MTE3>();
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(entry));
    DataCopy(gm, ub, WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE3_S>(); // `ub` may be refilled for the next entry
}

// Polls `count` 32-byte status blocks `slotBytes` apart from `first` until each starts with FLAG_SET, then clears
// them for the next call with this data state, as the real CombineTeardown's WaitDispatch does (code:
// moe_distribute_combine_teardown_arch35.h: DataCopy of sendRankNum_ blocks with srcStride stateOffset_ / 32 - 1,
// then the same strides to clear). `flags` holds count blocks. Returns count, or after `timeoutUs` the index of the
// first block still unset (the caller reports its peer).
__aicore__ inline uint32_t WaitSlots(GM_ADDR first, uint32_t count, uint64_t slotBytes,
                                     const LocalTensor<int32_t> &flags, uint64_t timeoutUs)
{
    if (count == 0U) {
        return count;
    }
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(first));
    const uint16_t gap = static_cast<uint16_t>(slotBytes / UB_BLOCK - 1UL); // blocks between two slots
    const uint32_t ready = PollFlags(gm, count, gap, flags, timeoutUs);
    if (ready < count) {
        return ready;
    }
    SyncFunc<HardEvent::S_V>();
    Duplicate(flags, static_cast<int32_t>(0), static_cast<int32_t>(count * WS_SLOT_INTS));
    SyncFunc<HardEvent::V_MTE3>();
    DataCopy(gm, flags, DataCopyParams(static_cast<uint16_t>(count), 1U, 0U, gap));
    PipeBarrier<PIPE_MTE3>();
    return count;
}

// Polls `count` dispatch status blocks `slotBytes` apart from `first` until each starts with DISPATCH_FLAG, copies
// their row counts into `rows` (one int32 each), then clears their flag words (the rest of a block stays), as the
// real DispatchTeardown's WaitDispatch does (code: moe_distribute_dispatch_teardown_arch35.h: DataCopy with srcStride
// stateOffset_ / 32 - 1, the sum of the flags against 2.0f per block, then Duplicate of 0 into the first int32 of
// every block and the same strides back). `flags` holds count blocks. Returns count, or after `timeoutUs` the index
// of the first block still unset (the caller reports its peer).
__aicore__ inline uint32_t WaitDispatchSlots(GM_ADDR first, uint32_t count, uint64_t slotBytes,
                                             const LocalTensor<int32_t> &flags, const LocalTensor<int32_t> &rows,
                                             uint64_t timeoutUs)
{
    if (count == 0U) {
        return count;
    }
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(first));
    const uint16_t gap = static_cast<uint16_t>(slotBytes / UB_BLOCK - 1UL); // blocks between two slots
    const uint32_t ready = PollFlags(gm, count, gap, flags, timeoutUs, DISPATCH_FLAG);
    if (ready < count) {
        return ready;
    }
    for (uint32_t i = 0U; i < count; ++i) {
        rows.SetValue(i, flags.GetValue(i * WS_SLOT_INTS + 1U));
        flags.SetValue(i * WS_SLOT_INTS, 0);
    }
    SyncFunc<HardEvent::S_MTE3>();
    DataCopy(gm, flags, DataCopyParams(static_cast<uint16_t>(count), 1U, 0U, gap));
    PipeBarrier<PIPE_MTE3>();
    return count;
}

#endif // OPGEN_FAMILY_WINDOW_H
