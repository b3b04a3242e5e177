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

// ---- the Setup/Teardown family's HCCL window (DispatchSetup, DispatchTeardown, CombineSetup, CombineTeardown) -------
// The four kernels share one layout of every rank's window (the family owns its EP domain: no other op uses it),
// the spec's `window` (tiling checked it and hands it over in the win_* fields):
//   [data half 0 | data half 1 | status]; the halves alternate per call (data state).
//   data half: [combine area | dispatch area]
//     combine block g (global MoE expert g, moeExpertNum of them): the rows expert g sends back to this token
//       owner, slot expandIdx[t * K + k] of the owner's pair (t, k), maxBs rows of H * 2 bytes (packed);
//     dispatch block b (source rank * localMoeExpertNum + local expert; a shared rank: the source rank): the
//       staged yOut rows that source sends this rank, maxBs rows of tokenMsgSize elements (512-byte multiples).
//   status: [dispatch entries of data states 0, 1 | combine entries of data states 0, 1 | data-state words]
//     dispatch entry (local expert * epWorldSize + source rank, a shared rank: the source rank): {1.0f, rows};
//     combine entry (source rank): {1.0f, rows}, written after the source's last combine block for this owner.
// The combine blocks come first so that the combine kernels, which know no quant mode, find them.
constexpr uint64_t FAMILY_STATE_BYTES = 2UL * 1024UL * 1024UL; // what the status entries need
constexpr uint64_t DISPATCH_ENTRIES_HALF = 256UL * 1024UL;     // 8192 entries per data state
constexpr uint64_t COMBINE_ENTRIES_OFFSET = 2UL * DISPATCH_ENTRIES_HALF;
constexpr uint64_t COMBINE_ENTRIES_HALF = 64UL * 1024UL;                // 2048 source ranks per data state
constexpr uint64_t DISPATCH_STATE_WORD = 1024UL * 1024UL;               // toggled by DispatchTeardown
constexpr uint64_t COMBINE_STATE_WORD = DISPATCH_STATE_WORD + UB_BLOCK; // toggled by CombineTeardown
constexpr uint32_t COMBINE_ELEM_BYTES = 2U;                             // expandX / xOut: FLOAT16 or BFLOAT16

struct FamilyWindow {
    uint64_t stateOffset;  // start of the status area
    uint64_t halfBytes;    // one data half
    uint64_t dataAt;       // where the data halves start
    uint64_t combineBlock; // one combine block
    uint64_t combineBytes; // where the dispatch area starts in a half: the end of the combine area
};

// The layout from the tiling data; traps when the combine blocks or the status entries outgrow what tiling gave
// them, or the window is smaller than the one tiling checked (the dispatch kernels check their own blocks).
template <typename TilingT>
__aicore__ inline FamilyWindow MakeFamilyWindow(const TilingT &tiling, uint32_t moeExperts, uint32_t maxBs, uint32_t h)
{
    FamilyWindow w;
    const WindowSplit split = SplitWindow(tiling, WindowBytes<EP_GROUP>());
    w.stateOffset = split.stateAt;
    w.halfBytes = split.half;
    w.dataAt = static_cast<uint64_t>(tiling.win_data_at);
    w.combineBlock = AlignUp64(static_cast<uint64_t>(maxBs) * h * COMBINE_ELEM_BYTES, WIN_ALIGN);
    w.combineBytes = static_cast<uint64_t>(tiling.win_combine_at + tiling.win_combine);
    RequireFits(w.combineBlock * moeExperts, static_cast<uint64_t>(tiling.win_combine));
    RequireFits(static_cast<uint64_t>(tiling.win_need), w.halfBytes);
    RequireFits(FAMILY_STATE_BYTES, static_cast<uint64_t>(tiling.win_state));
    RequireFits(static_cast<uint64_t>(tiling.win_window), WindowBytes<EP_GROUP>());
    return w;
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
    PipeBarrier<PIPE_MTE3>();
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

// Writes one status entry {1.0f, rows} from `ub` (32 bytes) to `entry` (after the data it announces).
__aicore__ inline void PostEntry(GM_ADDR entry, int32_t rows, const LocalTensor<int32_t> &ub)
{
    PipeBarrier<PIPE_MTE3>(); // the data this entry announces has landed
    for (uint32_t i = 0U; i < WS_SLOT_INTS; ++i) {
        ub.SetValue(i, i == 0U ? FLAG_SET : (i == 1U ? rows : 0));
    }
    SyncFunc<HardEvent::S_MTE3>();
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(entry));
    DataCopy(gm, ub, WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE3_S>(); // `ub` may be refilled for the next entry
}

#endif // OPGEN_FAMILY_WINDOW_H
