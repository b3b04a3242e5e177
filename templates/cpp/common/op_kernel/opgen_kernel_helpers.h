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
 * The kernel helpers every generated kernel shares: layout constants, the HCCL window's reading and split, the
 * buffer-id word, scalar helpers, flag polls and the row primitives the lowered quant formulas call. A file of
 * opgen's kernel library, copied into the generated tree's common/op_kernel/ (not generated: edit it in opgen's
 * templates/cpp/common/op_kernel/); each op's kernel includes it inside the op's namespace, after EP_GROUP (the spec's)
 * and opgen_kernel_types.h (DTypeTraits, IS_E8M0 / IS_FP4) and before opgen_kernel_context.h (WindowIn,
 * InitTilingData, EncodeE8M0Row, the MC2 context reads).
 */
#ifndef OPGEN_KERNEL_HELPERS_H
#define OPGEN_KERNEL_HELPERS_H

constexpr uint32_t UB_BLOCK = 32U;          // bytes of one UB data block
constexpr uint32_t FLOATS_PER_BLOCK = 8U;   // fp32 values in one data block
constexpr uint32_t FLOATS_PER_REPEAT = 64U; // fp32 values in one 256-byte vector repeat
constexpr uint32_t REPEAT_BYTES = 256U;
constexpr uint32_t MAX_REPEATS = 248U; // repeats per instruction (<= 255, 32-byte aligned dst)
constexpr uint64_t WIN_ALIGN = 512UL;  // a row message starts on a 512-byte boundary
// HCCL window of every rank: the layout is the spec's `window` (data halves of its areas from win_data_at, the
// status area at win_state_at: after them, or before with `at_start`, or in the last half's reserve where each
// half begins with win_reserve bytes of no data (the real Atlas A2 ops' layout); or at the start of windowsExp where
// the product keeps it there, win_state_exp), which tiling checked and hands over in the win_* fields. The DispatchV2 /
// CombineV2 status area holds, in STATE_BYTES (within the 1 MiB of Atlas A3's windowsExp, ProductFacts.exp_window;
// each region's use is checked against its size at Init):
constexpr uint64_t STATE_HALF = 128UL * 1024UL;          // DispatchV2 status entries of one data state:
                                                         // 4096 (localExpertNum * epWorldSize <= 2048)
constexpr uint64_t DATA_STATE_OFFSET = 2UL * STATE_HALF; // DispatchV2 per-core data-state words
constexpr uint64_t CORE_WORDS_BYTES = 8UL * 1024UL;      // one 32-byte word per core
constexpr uint64_t TP_STATE_OFFSET = DATA_STATE_OFFSET + CORE_WORDS_BYTES; // DispatchV2 TP: {flag, rows}, counts
constexpr uint64_t TP_STATE_BYTES = 16UL * 1024UL; // per data state (epWorldSize <= 4088 counts)
constexpr uint64_t COMBINE_FLAGS_OFFSET = TP_STATE_OFFSET + 2UL * TP_STATE_BYTES; // CombineV2 per-slot flags
constexpr uint64_t COMBINE_FLAGS_HALF = 320UL * 1024UL; // maxBS * (K + S) <= 512 * 20 slots of 32 bytes
constexpr uint64_t COMBINE_STATE_OFFSET = COMBINE_FLAGS_OFFSET + 2UL * COMBINE_FLAGS_HALF; // per-core words
constexpr uint64_t STATE_BYTES = COMBINE_STATE_OFFSET + CORE_WORDS_BYTES; // what the regions above need of it
constexpr uint32_t FLAG_BYTES = 32U;     // one status entry: {flag, rows, 6 reserved} int32
constexpr int32_t FLAG_SET = 0x3F800000; // 1.0f: the sender's rows are in the window

// Where a DispatchV2 / CombineV2 kernel finds each region of its status area (offsets from the area's start): one
// row per layout, the kernel picking it at Init (StatusLayoutOf).
struct StatusLayout {
    uint64_t dispatchAt;      // DispatchV2 status entries of data state s: dispatchAt + s * dispatchStride, one
    uint64_t dispatchStride;  // FLAG_BYTES entry per (local expert j, source rank d) at (d + j * epWorldSize)
    uint64_t dispatchBytes;   // what one data state's entries may take
    uint64_t combineAt;       // CombineV2 slot flags of data state s: combineAt + s * combineStride, one FLAG_BYTES
    uint64_t combineStride;   // flag per slot (token t, k) at t * (K + sharedExpertNum) + k
    uint64_t combineBytes;    // what one data state's flags may take
    uint64_t dispatchWordsAt; // DispatchV2's per-core data-state words
    uint64_t combineWordsAt;  // CombineV2's
    uint64_t wordStride;      // between two cores' words
    uint64_t wordsBytes;      // what either op's words may take
    uint64_t tpAt;            // DispatchV2 TP: {flag, rows}, counts; TP_STATE_BYTES per data state
    uint64_t need;            // what the regions above need of the status area
    uint32_t combineFlagInts; // leading int32 words of a CombineV2 slot flag set to FLAG_SET
    bool stateRecord;         // the words are the real ops' state records (InitWinState): flipped at Init
};
// The generated ops' own layout, in windowsIn (Atlas A2: the second half's reserve).
constexpr StatusLayout OWN_STATUS = {0UL,
                                     STATE_HALF,
                                     STATE_HALF,
                                     COMBINE_FLAGS_OFFSET,
                                     COMBINE_FLAGS_HALF,
                                     COMBINE_FLAGS_HALF,
                                     DATA_STATE_OFFSET,
                                     COMBINE_STATE_OFFSET,
                                     UB_BLOCK,
                                     CORE_WORDS_BYTES,
                                     TP_STATE_OFFSET,
                                     STATE_BYTES,
                                     1U,
                                     false};
// The real DispatchV2 / CombineV2 layout, which Atlas A3 keeps in windowsExp and Ascend 950 at the start of windowsIn
// (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_v2_constant.h, shared by both products' kernels;
// moe_distribute_dispatch_v2.h Init, GetWindStateAddrByRankId(rankId) + dataState_ * WIN_STATE_OFFSET, SetStatus,
// offset stateOffset_ * epRankId_ + localExpert * epWorldSize_ * stateOffset_ with stateOffset_ = STATE_OFFSET 32,
// the entry {1.0f, count, 0 ...}; mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h
// InitAttrs, winStatusOffset_ = COMBINE_STATE_OFFSET + dataState_ * WIN_STATE_OFFSET, ExpertAlltoAllDispatchCopyAdd,
// tokenId * flagRcvCount_ * stateOffset_ + topkId * stateOffset_, flagRcvCount_ = K + sharedExpertNum, the flag 8 x
// 1.0f (Duplicate<float>(statusTensor, 1, FLOAT_PER_UB_ALIGN)); arch35/moe_distribute_combine_v2_a5_mte.h
// InitCommContext, the same winStatusOffset_; the per-core records at DISPATCH_STATE_WIN_OFFSET /
// COMBINE_STATE_WIN_OFFSET + core * WIN_ADDR_ALIGN, InitWinState). The dispatch entries of a data state end where its
// combine flags begin (COMBINE_STATE_OFFSET 64K: 2048 entries, the documents' localExpertNum * epWorldSize <= 2048),
// the flags of data state 1 at DISPATCH_STATE_WIN_OFFSET (320K: 10240 slots, the moe_combine family's status_slots
// table); the dispatch records have the 50K before COMBINE_STATE_WIN_OFFSET ("为dispatch预留50k"), the combine
// records as much. The TP state is the generated ops' own (the real V2 kernels have no TP path: TP_STATE_SIZE is
// unused): after the combine records.
constexpr uint64_t REAL_STATE_STRIDE = 384UL * 1024UL;      // code: WIN_STATE_OFFSET
constexpr uint64_t REAL_COMBINE_FLAGS_AT = 64UL * 1024UL;   // code: COMBINE_STATE_OFFSET
constexpr uint64_t REAL_DISPATCH_WORDS_AT = 768UL * 1024UL; // code: DISPATCH_STATE_WIN_OFFSET
constexpr uint64_t REAL_COMBINE_WORDS_AT = 818UL * 1024UL;  // code: COMBINE_STATE_WIN_OFFSET
constexpr uint64_t REAL_WORD_STRIDE = 512UL;                // code: WIN_ADDR_ALIGN
constexpr uint64_t REAL_WORDS_BYTES = REAL_COMBINE_WORDS_AT - REAL_DISPATCH_WORDS_AT;
constexpr uint64_t REAL_TP_AT = REAL_COMBINE_WORDS_AT + REAL_WORDS_BYTES;
constexpr StatusLayout REAL_STATUS = {0UL,
                                      REAL_STATE_STRIDE,
                                      REAL_COMBINE_FLAGS_AT,
                                      REAL_COMBINE_FLAGS_AT,
                                      REAL_STATE_STRIDE,
                                      REAL_DISPATCH_WORDS_AT - REAL_STATE_STRIDE - REAL_COMBINE_FLAGS_AT,
                                      REAL_DISPATCH_WORDS_AT,
                                      REAL_COMBINE_WORDS_AT,
                                      REAL_WORD_STRIDE,
                                      REAL_WORDS_BYTES,
                                      REAL_TP_AT,
                                      REAL_TP_AT + 2UL * TP_STATE_BYTES,
                                      FLOATS_PER_BLOCK,
                                      true};
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
// Ascend 950: the real MTE ops keep REAL_STATUS at the start of windowsIn, in 1 MiB a rank (code: mc2/common/
// op_kernel/moe_distribute_base.h A5_MTE_STATE_WIN_SIZE), rank r's r * tiling.win_rank_step into its windowsIn
// (the spec's `rank_step`: their EP_RANK_OFFSET_STEP)
constexpr bool REAL_STATUS_IN_WINDOWS_IN = true;
#else
// Atlas A2 keeps OWN_STATUS in its reserve, at one offset on every rank; Atlas A3 REAL_STATUS in windowsExp
constexpr bool REAL_STATUS_IN_WINDOWS_IN = false;
#endif
// The layout of a status area in windowsExp (tiling.win_state_exp: only Atlas A3 keeps it there) or in windowsIn.
__aicore__ inline StatusLayout StatusLayoutOf(bool inExp)
{
    return inExp || REAL_STATUS_IN_WINDOWS_IN ? REAL_STATUS : OWN_STATUS;
}
constexpr uint32_t INFO_BYTES = 64U;  // DispatchV2 message tail: (srcRank, tokenIdx, k) | scale
constexpr uint32_t TRIPLE = 3U;       // assist-info ints per row: (srcRank, tokenIdx, k)
constexpr uint32_t WS_SLOT_INTS = 8U; // workspace: one 32-byte slot per core
constexpr int64_t CYCLES_PER_US =
    50; // GetSystemCycle ticks per µs (mc2/common/op_kernel/moe_distribute_base.h TIME_CYCLE)


// The actual size of this rank's window in HCCL group `group`, as its HCCL context reports it (asc-devkit
// impl/adv_api/detail/hccl/common/hccl_inner_def.h HcclCombineOpParam::winSize; the real A2 ops read it so, the A3
// and 950 ones through mc2/common's HcclOpResParam / HcclCombinOpParam, whose first fields are the same).
template <uint32_t group>
__aicore__ inline uint64_t WindowBytes()
{
    return reinterpret_cast<__gm__ HcclCombineOpParam *>(GetHcclContext<group>())->winSize;
}

// Saturation per instruction (CTRL[60] 0: each instruction's own saturation mode, e.g. a Cast's, decides, not the
// global CTRL[48] / CTRL[59]), as the real Ascend 950 kernels select it (code: mc2/moe_distribute_combine_v2/
// op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h BuffInit, "单指令饱和模式"). On __NPU_ARCH__ 3510 each TPipe
// construction and Reset sets CTRL back to its default, CTRL[60] 1 (asc-devkit kernel_utils_base.h
// InitSocStateImpl), so the kernels call this after each (ResetPipe); 2201 has no CTRL[60] (dav_c220
// SetCtrlSpr takes CTRL[48] alone).
constexpr int8_t FLOAT_OVERFLOW_MODE_CTRL = 60;

__aicore__ inline void UseInstructionSaturation()
{
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)
    SetCtrlSpr<FLOAT_OVERFLOW_MODE_CTRL, FLOAT_OVERFLOW_MODE_CTRL>(0);
#endif
}

// TPipe::Reset, then the saturation mode the reset undid.
__aicore__ inline void ResetPipe(TPipe *pipe)
{
    pipe->Reset();
    UseInstructionSaturation();
}

// What a kernel puts in a window area, or the whole layout, must fit the bytes tiling gave it: a kernel whose row
// strides outgrow the spec's `window`, or a window smaller than the layout tiling checked, traps instead of
// writing past it (the real kernels' CheckWindowSize aborts them on a short window too).
__aicore__ inline void RequireFits(uint64_t used, uint64_t capacity)
{
    if (used > capacity) {
        Trap();
    }
}

// The data halves and the status offset of the layout: tiling's split of the window it read (win_half,
// win_state_at) or, where tiling could not read the window size (win_window 0: online compilation, super
// kernels, where the real tilings skip their window checks), the same split (opgen/model/decl.py window_lets) of
// the `window` bytes the kernel sees, as the real kernels split the window their HCCL context reports (code:
// mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h, winContext_->winSize / BUFFER_NUM).
struct WindowSplit {
    uint64_t half;    // one data half (512-aligned)
    uint64_t stateAt; // the status area's offset (in windowsIn, or 0: the start of windowsExp or of windowsIn)
};

template <typename TilingT>
__aicore__ inline WindowSplit SplitWindow(const TilingT &tiling, uint64_t window)
{
    if (tiling.win_window != 0) {
        return {static_cast<uint64_t>(tiling.win_half), static_cast<uint64_t>(tiling.win_state_at)};
    }
    if (tiling.win_reserve != 0) { // `reserve`: halves of the whole window, the status area in the last one's reserve
        const uint64_t half = window / static_cast<uint64_t>(tiling.win_halves) / WIN_ALIGN * WIN_ALIGN;
        return {half, (static_cast<uint64_t>(tiling.win_halves) - 1UL) * half};
    }
    const bool inExp = tiling.win_state_exp != 0;
    // `rank_step`: the ranks' steps too (rank r's status area and data halves r steps in)
    const uint64_t state =
        inExp ? 0UL :
                static_cast<uint64_t>(tiling.win_state) +
                    static_cast<uint64_t>(tiling.win_ranks) * static_cast<uint64_t>(tiling.win_rank_step);
    RequireFits(state, window);
    const uint64_t data = window - state;
    const bool first = !inExp && tiling.win_data_at != 0; // `at_start`: the status area, then the data halves
    return {data / static_cast<uint64_t>(tiling.win_halves) / WIN_ALIGN * WIN_ALIGN, (inExp || first) ? 0UL : data};
}

// The data half must hold its reserve and the areas, and a status area kept in the reserve must fit it.
template <typename TilingT>
__aicore__ inline void RequireHalfFits(const TilingT &tiling, uint64_t halfBytes)
{
    RequireFits(static_cast<uint64_t>(tiling.win_reserve) + static_cast<uint64_t>(tiling.win_need), halfBytes);
    if (tiling.win_reserve != 0) {
        RequireFits(static_cast<uint64_t>(tiling.win_state), static_cast<uint64_t>(tiling.win_reserve));
    }
}

// The half-select word the real Atlas A2 ops share (`buffer_id`, tiling.win_buffer_id_at of this rank's windowsIn;
// code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h Init, bufferChosen_ =
// bufferChosenGlobal_(0) at FULLMESH_BUFFERID_ADDR; moe_distribute_combine_v2/op_kernel/arch22/
// moe_distribute_combine_a2.h Init, bufferId_): every core of the call reads it at Init.
__aicore__ inline uint32_t ReadBufferId(GM_ADDR word)
{
    GlobalTensor<uint32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(word));
    DataCacheCleanAndInvalid<uint32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(gm);
    return gm.GetValue(0U) & 1U;
}

// Its update rule: after a SyncAll (every core has read it), core 0 stores the other half's id (StoreOtherBufferId,
// where the kernel is past such a SyncAll already), as the real ops
// do once their sends are out (code: moe_distribute_dispatch_a2.h SingleServerSendToMoeExpert / SendToMoeExpert,
// bufferChosenGlobal_(0) = bufferChosen_ ^ 1; moe_distribute_combine_a2.h AlltoAllDispatch / MultiServerDispatch,
// bufferIdGlobal_(0) = bufferId_ ^ 1).
__aicore__ inline void StoreOtherBufferId(GM_ADDR word, uint32_t bufferId)
{
    GlobalTensor<uint32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(word));
    gm.SetValue(0U, bufferId ^ 1U);
    DataCacheCleanAndInvalid<uint32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(gm);
}
__aicore__ inline void FlipBufferId(GM_ADDR word, uint32_t bufferId)
{
    SyncAll<true>();
    if (GetBlockIdx() == 0) {
        StoreOtherBufferId(word, bufferId);
    }
}

// WindowIn, which opgen_kernel_context.h defines (whether the HCCL context lists the windows is the arch's):
// the base of rank `rank`'s window in HCCL group `group`.
template <uint32_t group, typename HcclClient>
__aicore__ inline GM_ADDR WindowIn(HcclClient &hccl, uint32_t rank);

// Where rank `rank`'s status area starts in HCCL group `group`: `offset` (tiling.win_state_at) into its windowsIn
// (and rank * `rankStep`, tiling.win_rank_step: the real 950 ops' stagger), or, where the product keeps it there
// (`inExp`: tiling.win_state_exp), the start of its windowsExp, which the HCCL context of Atlas A3 lists (asc-devkit
// impl/adv_api/detail/hccl/common/hccl_inner_def.h HcclContextDef:: HcclOpResParam: localWindowsExp for the rank
// itself, a peer's through the RemoteResPtr list at rWinStart, as the real A3 ops read it: mirror-cann/ops-transformer
// mc2/common/op_kernel/moe_distribute_base.h GetBaseWindStateAddrByRankId). A rank past the group traps.
template <uint32_t group, typename HcclClient>
__aicore__ inline GM_ADDR StatusArea(HcclClient &hccl, uint32_t rank, bool inExp, uint64_t offset, uint64_t rankStep)
{
    if (!inExp) {
        return WindowIn<group>(hccl, rank) + offset + static_cast<uint64_t>(rank) * rankStep;
    }
    auto ctx = reinterpret_cast<__gm__ HcclContextDef::HcclOpResParam *>(GetHcclContext<group>());
    RequireFits(static_cast<uint64_t>(rank) + 1UL, ctx->rankNum);
    if (rank == ctx->rankId) {
        return reinterpret_cast<GM_ADDR>(ctx->localWindowsExp);
    }
    auto remote = reinterpret_cast<__gm__ HcclContextDef::RemoteResPtr *>(reinterpret_cast<__gm__ uint8_t *>(ctx) +
                                                                          ctx->rWinStart);
    return reinterpret_cast<GM_ADDR>(remote[rank].nextDevicePtr->windowsExp);
}

// The bytes of windowsExp the HCCL context of group `group` reports (HcclOpResParam::winExpSize).
template <uint32_t group>
__aicore__ inline uint64_t ExpWindowBytes()
{
    return reinterpret_cast<__gm__ HcclContextDef::HcclOpResParam *>(GetHcclContext<group>())->winExpSize;
}

template <typename T>
constexpr bool IS_BYTE_INT = std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value;
// integer and FP4 targets saturate whatever the spec's sat= says (as the numpy reference does)
template <typename T>
constexpr bool ALWAYS_SATURATES = IS_BYTE_INT<T> || std::is_same<T, int32_t>::value || IS_FP4<T>;

enum class RowLayout : uint32_t {
    ROWS = 0U,   // (rows, H): the row of the destination expert
    VECTOR = 1U, // (H,): the same row for every expert
    SCALAR = 2U, // (1,): one value for the whole row
};

// ---- scalar helpers -------------------------------------------------------------------------
__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b)
{
    return (a + b - 1U) / b;
}
__aicore__ inline uint32_t AlignUp(uint32_t a, uint32_t b)
{
    return CeilDiv(a, b) * b;
}
__aicore__ inline uint64_t AlignUp64(uint64_t a, uint64_t b)
{
    return (a + b - 1UL) / b * b;
}
__aicore__ inline uint32_t MinU32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}
__aicore__ inline uint32_t MaxU32(uint32_t a, uint32_t b)
{
    return a < b ? b : a;
}
__aicore__ inline int64_t FloorDivI64(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__aicore__ inline int64_t FloorModI64(int64_t a, int64_t b)
{
    return a - FloorDivI64(a, b) * b;
}
__aicore__ inline int64_t CeilDivI64(int64_t a, int64_t b)
{
    return -FloorDivI64(-a, b);
}
__aicore__ inline int64_t AlignI64(int64_t a, int64_t b)
{
    return CeilDivI64(a, b) * b;
}
__aicore__ inline int64_t MinI64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
__aicore__ inline int64_t MaxI64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}
__aicore__ inline int64_t AbsI64(int64_t a)
{
    return a < 0 ? -a : a;
}
__aicore__ inline float AbsF(float a)
{
    return a < 0.0f ? -a : a;
}
__aicore__ inline float MinF(float a, float b)
{
    return a < b ? a : b;
}
__aicore__ inline float MaxF(float a, float b)
{
    return a > b ? a : b;
}

template <typename T>
__aicore__ inline uint32_t RowBytes(uint32_t elems)
{
    return static_cast<uint32_t>((static_cast<uint64_t>(elems) * DTypeTraits<T>::BITS + 7UL) / 8UL);
}

template <HardEvent EVENT>
__aicore__ inline void SyncFunc()
{
    const int32_t eventId = static_cast<int32_t>(GetTPipePtr()->FetchEventID(EVENT));
    SetFlag<EVENT>(eventId);
    WaitFlag<EVENT>(eventId);
}

// A DispatchV2 / CombineV2 call's data state (the window half and status half it addresses): the half-select word
// shared with the real ops where the tiling names one (`bufferIdWord`), else this core's own word `coreWord`, read
// through `buf` (one UB block; the caller resets the pipe after).
__aicore__ inline uint32_t ReadDataState(TPipe *pipe, TBuf<TPosition::VECCALC> &buf, GM_ADDR bufferIdWord,
                                         GM_ADDR coreWord)
{
    if (bufferIdWord != nullptr) {
        return ReadBufferId(bufferIdWord);
    }
    GlobalTensor<int32_t> stateGm;
    stateGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(coreWord));
    pipe->InitBuffer(buf, UB_BLOCK);
    LocalTensor<int32_t> state = buf.Get<int32_t>();
    DataCopy(state, stateGm, WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE2_S>();
    return static_cast<uint32_t>(state.GetValue(0U)) & 1U;
}

// Its update at the end of the call: the next call uses the other halves (the half-select word by FlipBufferId, or
// this core's own word).
__aicore__ inline void ToggleDataState(TPipe *pipe, TBuf<TPosition::VECCALC> &buf, GM_ADDR bufferIdWord,
                                       GM_ADDR coreWord, uint32_t dataState)
{
    if (bufferIdWord != nullptr) {
        FlipBufferId(bufferIdWord, dataState);
        return;
    }
    ResetPipe(pipe);
    pipe->InitBuffer(buf, UB_BLOCK);
    LocalTensor<int32_t> state = buf.Get<int32_t>();
    state.SetValue(0U, static_cast<int32_t>(dataState ^ 1U));
    SyncFunc<HardEvent::S_MTE3>();
    GlobalTensor<int32_t> stateGm;
    stateGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(coreWord));
    DataCopy(stateGm, state, WS_SLOT_INTS);
    PipeBarrier<PIPE_ALL>();
}

// The real A3 ops' state record of this core (`record`, 32 bytes: code: mc2/moe_distribute_dispatch_v2/op_kernel/
// moe_distribute_v2_base.h InitWinState, with moe_distribute_v2_constant.h's positions): at Init each core reads its
// data state from word 0 and stores the other one there for the next call, word 1 (the op's position) 1, words 2-5
// epRankId, moeExpertNum, epWorldSize, globalBS, and the uint64 call count at word 6 one more (the DFX words 8-9 are
// written only where HCCL's rank or world differs from the attributes', which no generated op allows). Returns the
// data state of this call; `buf` is one UB block (the caller resets the pipe after).
constexpr uint32_t RECORD_POSITION = 1U; // code: OPOSITION_POS
constexpr uint32_t DISPATCH_WAITED = 2U; // code: FLAG_AFTER_WAIT
__aicore__ inline uint32_t InitWinState(TPipe *pipe, TBuf<TPosition::VECCALC> &buf, GM_ADDR record, uint32_t epRank,
                                        uint32_t moeExperts, uint32_t epWorld, uint32_t globalBs)
{
    GlobalTensor<uint32_t> recordGm;
    recordGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(record));
    pipe->InitBuffer(buf, UB_BLOCK);
    LocalTensor<uint32_t> words = buf.Get<uint32_t>();
    LocalTensor<uint64_t> words64 = buf.Get<uint64_t>();
    DataCopy(words, recordGm, WS_SLOT_INTS);
    SyncFunc<HardEvent::MTE2_S>();
    const uint32_t state = words.GetValue(0U);
    words.SetValue(0U, state == 0U ? 1U : 0U);
    words.SetValue(RECORD_POSITION, 1U);
    words.SetValue(2U, epRank);
    words.SetValue(3U, moeExperts);
    words.SetValue(4U, epWorld);
    words.SetValue(5U, globalBs);
    words64.SetValue(3U, static_cast<uint64_t>(static_cast<uint32_t>(words64.GetValue(3U)) + 1U));
    SyncFunc<HardEvent::S_MTE3>();
    DataCopy(recordGm, words, WS_SLOT_INTS);
    PipeBarrier<PIPE_ALL>();
    return state & 1U;
}

// Word 1 of that record, the op's position (code: moe_distribute_dispatch_v2.h RunPosRecord, FLAG_AFTER_WAIT 2
// once the dispatch's wait is over; moe_distribute_combine_v2.h LocalWindowCopy, 1 + the tokens the core combined),
// stored through `word` (a UB block the scalar unit may write).
__aicore__ inline void StoreRecordPosition(GM_ADDR record, const LocalTensor<uint32_t> &word, uint32_t position)
{
    word.SetValue(0U, position);
    SyncFunc<HardEvent::S_MTE3>();
    GlobalTensor<uint32_t> recordGm;
    recordGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(record));
    DataCopyPad(recordGm[RECORD_POSITION], word, DataCopyExtParams(1U, 4U, 0U, 0U, 0U));
    SyncFunc<HardEvent::MTE3_S>(); // `word` is free again for what the scalar unit issues next
}

// A poll of flags other ranks set gives up after the µs the host tiling read from HCCL_EXEC_TIMEOUT
// (tiling.pollTimeoutUs): a peer that never sets its flag makes the kernel report it and trap, not hang.
class PollDeadline {
public:
    __aicore__ inline explicit PollDeadline(uint64_t timeoutUs)
        : start_(GetSystemCycle()), cycles_(static_cast<int64_t>(timeoutUs) * CYCLES_PER_US)
    {
    }
    __aicore__ inline bool Passed() const
    {
        return GetSystemCycle() - start_ > cycles_;
    }

private:
    int64_t start_;
    int64_t cycles_;
};

// Who sets a flag a poll waited for: a rank, the rank holding a MoE expert, or a shared expert's rank.
enum class FlagSetter : uint32_t {
    RANK,
    MOE_EXPERT,
    SHARED_EXPERT
};

// The report of a poll that gave up: this rank, the flag (status entry or slot) of its window it waited for, and
// who sets it; then the kernel aborts, an error the runtime reports.
__aicore__ inline void PollTimedOut(uint32_t rank, uint32_t flag, FlagSetter setter, uint32_t who, uint64_t timeoutUs)
{
    const unsigned long us = static_cast<unsigned long>(timeoutUs);
    if (setter == FlagSetter::RANK) {
        PRINTF("opgen: rank %u gave up after %lu us (HCCL_EXEC_TIMEOUT) waiting for flag %u of its window, set by "
               "rank %u\n",
               rank, us, flag, who);
    } else if (setter == FlagSetter::MOE_EXPERT) {
        PRINTF("opgen: rank %u gave up after %lu us (HCCL_EXEC_TIMEOUT) waiting for flag %u of its window, set by "
               "the rank of expert %u\n",
               rank, us, flag, who);
    } else {
        PRINTF("opgen: rank %u gave up after %lu us (HCCL_EXEC_TIMEOUT) waiting for flag %u of its window, set by "
               "the rank of shared expert %u\n",
               rank, us, flag, who);
    }
    Trap();
}

// Polls `count` 32-byte status blocks at `gm`, `gap` blocks apart, into `flags` (count blocks) until each starts with
// `flag` (FLAG_SET unless given). Returns count, or after `timeoutUs` the index of the first block still unset.
__aicore__ inline uint32_t PollFlags(const GlobalTensor<int32_t> &gm, uint32_t count, uint16_t gap,
                                     const LocalTensor<int32_t> &flags, uint64_t timeoutUs, int32_t flag = FLAG_SET)
{
    const PollDeadline deadline(timeoutUs);
    uint32_t ready = 0U;
    while (ready < count) {
        if (gap == 0U) {
            DataCopy(flags, gm, count * WS_SLOT_INTS);
        } else {
            DataCopy(flags, gm, DataCopyParams(static_cast<uint16_t>(count), 1U, gap, 0U));
        }
        SyncFunc<HardEvent::MTE2_S>();
        ready = 0U;
        uint32_t unset = count;
        for (uint32_t i = 0U; i < count; ++i) {
            const bool set = flags.GetValue(i * WS_SLOT_INTS) == flag;
            ready += set ? 1U : 0U;
            unset = (!set && unset == count) ? i : unset;
        }
        SyncFunc<HardEvent::S_MTE2>();
        if (ready < count && deadline.Passed()) {
            return unset;
        }
    }
    return count;
}

// Polls `count` 32-byte status entries at `entries` until each holds FLAG_SET, copies their row counts into
// `rows` (one int32 each), then clears them for the next call with this data state.  `flags` holds count entries.
// Returns count, or after `timeoutUs` the index of the first entry still unset (the caller reports its peer).
__aicore__ inline uint32_t WaitEntries(GM_ADDR entries, uint32_t count, const LocalTensor<int32_t> &flags,
                                       const LocalTensor<int32_t> &rows, uint64_t timeoutUs)
{
    if (count == 0U) {
        return count;
    }
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(entries));
    const uint32_t ready = PollFlags(gm, count, 0U, flags, timeoutUs);
    if (ready < count) {
        return ready;
    }
    for (uint32_t i = 0U; i < count; ++i) {
        rows.SetValue(i, flags.GetValue(i * WS_SLOT_INTS + 1U));
    }
    SyncFunc<HardEvent::S_V>();
    Duplicate(flags, static_cast<int32_t>(0), static_cast<int32_t>(count * WS_SLOT_INTS));
    SyncFunc<HardEvent::V_MTE3>();
    DataCopy(gm, flags, count * WS_SLOT_INTS);
    PipeBarrier<PIPE_MTE3>();
    return count;
}


// ---- row primitives the lowered quant formulas call -------------------------------------------
// Rows live in UB slots of AlignUp(H * 4, 256) + AlignUp(H / 8, 256) + 256 bytes: an fp32 row, room for
// a compare bit-mask after it, and the ReduceMax work area.

// dst = src for rows of one element type (whole 32-byte blocks).  BARRIER: a PipeBarrier<PIPE_V> after the copy
// (false: the caller places the barrier where a vector instruction reads dst, as the lowered formulas do).
template <typename D, typename S, bool BARRIER = true>
__aicore__ inline void CopyRow(const LocalTensor<D> &dst, const LocalTensor<S> &src, uint32_t count)
{
    static_assert(std::is_same<D, S>::value, "CopyRow copies rows of one element type");
    DataCopy(dst.template ReinterpretCast<uint8_t>(), src.template ReinterpretCast<uint8_t>(),
             AlignUp(RowBytes<D>(count), UB_BLOCK));
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// The mask area of a slot: the bytes after its fp32 row of `count` values.
__aicore__ inline LocalTensor<uint8_t> MaskArea(const LocalTensor<float> &slot, uint32_t count)
{
    return slot.template ReinterpretCast<uint8_t>()[AlignUp(count * 4U, REPEAT_BYTES)];
}

// dst = 2^src for integral fp32 exponents in [-190, 127], exact (subnormal results included).
__aicore__ inline void Exp2Row(const LocalTensor<float> &dst, const LocalTensor<float> &src, uint32_t count,
                               const LocalTensor<float> &scratch)
{
    const int32_t n = static_cast<int32_t>(count);
    LocalTensor<uint8_t> normal = MaskArea(scratch, count);
    CompareScalar(normal, src, -126.0f, CMPMODE::GE, AlignUp(count, FLOATS_PER_REPEAT));
    PipeBarrier<PIPE_V>();
    // k >= -126: (k + 127) is the biased exponent of 2^k
    LocalTensor<int32_t> hiBits = scratch.template ReinterpretCast<int32_t>();
    Adds(scratch, src, 127.0f, n);
    PipeBarrier<PIPE_V>();
    Maxs(scratch, scratch, 1.0f, n);
    PipeBarrier<PIPE_V>();
    Mins(scratch, scratch, 254.0f, n);
    PipeBarrier<PIPE_V>();
    Cast(hiBits, scratch, RoundMode::CAST_RINT, count);
    PipeBarrier<PIPE_V>();
    ShiftLeft(hiBits, hiBits, static_cast<int32_t>(23), n);
    PipeBarrier<PIPE_V>();
    // k < -126: 2^(k + 64) * 2^-64, exact down to the smallest subnormal
    LocalTensor<int32_t> loBits = dst.template ReinterpretCast<int32_t>();
    Adds(dst, src, 191.0f, n);
    PipeBarrier<PIPE_V>();
    Maxs(dst, dst, 1.0f, n);
    PipeBarrier<PIPE_V>();
    Mins(dst, dst, 254.0f, n);
    PipeBarrier<PIPE_V>();
    Cast(loBits, dst, RoundMode::CAST_RINT, count);
    PipeBarrier<PIPE_V>();
    ShiftLeft(loBits, loBits, static_cast<int32_t>(23), n);
    PipeBarrier<PIPE_V>();
    Muls(dst, dst, 5.421010862427522e-20f, n);
    PipeBarrier<PIPE_V>();
    Select(dst, normal, scratch, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
    PipeBarrier<PIPE_V>();
}

// fp32 → D: the spec's cast(v, D, round=RM, sat=SAT).  int8/uint8 take CANN's chain
// fp32 -RM-> int32 -> half (exact) -TRUNC-> int8 after clamping to the integer range.  BARRIER: a
// PipeBarrier<PIPE_V> after the last instruction (false where no vector instruction reads dst).
template <typename D, RoundMode RM, bool SAT, bool BARRIER = true>
__aicore__ inline void CastFromFloat(const LocalTensor<D> &dst, const LocalTensor<float> &src, uint32_t count,
                                     const LocalTensor<float> &scratch)
{
    static_assert(!IS_E8M0<D>, "E8M0 codes come from e8m0(), not cast()");
    const int32_t n = static_cast<int32_t>(count);
    if constexpr (IS_BYTE_INT<D>) {
        Maxs(scratch, src, std::is_same<D, int8_t>::value ? -128.0f : 0.0f, n);
        PipeBarrier<PIPE_V>();
        Mins(scratch, scratch, std::is_same<D, int8_t>::value ? 127.0f : 255.0f, n);
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> asInt = scratch.template ReinterpretCast<int32_t>();
        Cast(asInt, scratch, RM, count);
        PipeBarrier<PIPE_V>();
        SetDeqScale(static_cast<half>(1.0f));
        PipeBarrier<PIPE_V>();
        LocalTensor<half> asHalf = scratch.template ReinterpretCast<half>();
        Cast(asHalf, asInt, RoundMode::CAST_ROUND, count);
        PipeBarrier<PIPE_V>();
        Cast(dst, asHalf, RoundMode::CAST_TRUNC, count);
    } else if constexpr (std::is_same<D, float>::value) {
        Cast(dst, src, RM, count);
    } else if constexpr (SAT || ALWAYS_SATURATES<D>) {
        Maxs(scratch, src, -DTypeTraits<D>::MAX, n);
        PipeBarrier<PIPE_V>();
        Mins(scratch, scratch, DTypeTraits<D>::MAX, n);
        PipeBarrier<PIPE_V>();
        Cast(dst, scratch, RM, count);
    } else {
        Cast(dst, src, RM, count);
    }
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// S → fp32, exact: one Cast for floating types, int8/uint8 through half, E8M0 code c as 2^(c - 127) put
// straight into the fp32 exponent field (code 0 is the subnormal 2^-127, code 255 is NaN).  BARRIER: a
// PipeBarrier<PIPE_V> after the last instruction.
template <typename S, bool BARRIER = true>
__aicore__ inline void CastToFloat(const LocalTensor<float> &dst, const LocalTensor<S> &src, uint32_t count,
                                   const LocalTensor<float> &scratch)
{
    if constexpr (IS_E8M0<S>) {
        LocalTensor<half> codes = scratch.template ReinterpretCast<half>();
        Cast(codes, src.template ReinterpretCast<uint8_t>(), RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> bits = dst.template ReinterpretCast<int32_t>();
        Cast(bits, codes, RoundMode::CAST_RINT, count);
        PipeBarrier<PIPE_V>();
        ShiftLeft(bits, bits, static_cast<int32_t>(23), static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        LocalTensor<uint8_t> keep = MaskArea(scratch, count);
        CompareScalar(keep, dst, __builtin_inff(), CMPMODE::NE, AlignUp(count, FLOATS_PER_REPEAT));
        PipeBarrier<PIPE_V>();
        Select(dst, keep, dst, __builtin_nanf(""), SELMODE::VSEL_TENSOR_SCALAR_MODE, count); // code 255
        PipeBarrier<PIPE_V>();
        CompareScalar(keep, dst, 0.0f, CMPMODE::NE, AlignUp(count, FLOATS_PER_REPEAT));
        PipeBarrier<PIPE_V>();
        Select(dst, keep, dst, 5.877471754111438e-39f, SELMODE::VSEL_TENSOR_SCALAR_MODE, count); // code 0
    } else if constexpr (IS_BYTE_INT<S>) {
        LocalTensor<half> asHalf = scratch.template ReinterpretCast<half>();
        Cast(asHalf, src, RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
        Cast(dst, asHalf, RoundMode::CAST_NONE, count);
    } else if constexpr (std::is_same<S, float>::value) {
        CopyRow<float, float, false>(dst, src, count);
    } else {
        Cast(dst, src, RoundMode::CAST_NONE, count);
    }
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// D ← S: every cast(v, D, round, sat) of a formula and every conversion into an output row.  BARRIER = false: the
// cast ends with no PipeBarrier<PIPE_V>, where no vector instruction reads dst or the caller places the barrier
// before the first one that does (the lowered formulas: opgen/lower/ascendc.py, barriers by data dependency).
template <typename D, typename S, RoundMode RM, bool SAT, bool BARRIER = true>
__aicore__ inline void CastRow(const LocalTensor<D> &dst, const LocalTensor<S> &src, uint32_t count,
                               const LocalTensor<float> &scratch)
{
    if constexpr (std::is_same<D, S>::value) {
        CopyRow<D, S, BARRIER>(dst, src, count);
    } else if constexpr (std::is_same<S, float>::value) {
        CastFromFloat<D, RM, SAT, BARRIER>(dst, src, count, scratch);
    } else if constexpr (std::is_same<D, float>::value) {
        CastToFloat<S, BARRIER>(dst, src, count, scratch);
    } else if constexpr (std::is_same<S, half>::value && IS_BYTE_INT<D>) {
        Cast(dst, src, RM, count); // half → int8/uint8 is one saturating Cast
        if constexpr (BARRIER) {
            PipeBarrier<PIPE_V>();
        }
    } else if constexpr (IS_BYTE_INT<S> && std::is_same<D, half>::value) {
        Cast(dst, src, RoundMode::CAST_NONE, count); // exact
        if constexpr (BARRIER) {
            PipeBarrier<PIPE_V>();
        }
    } else {
        static_assert(!IS_BYTE_INT<S> && !IS_E8M0<S>,
                      "a cast between these types goes through fp32 explicitly in the formula");
        CastToFloat(scratch, src, count, scratch); // one exact Cast into fp32, then the rounding cast
        CastFromFloat<D, RM, SAT, BARRIER>(dst, scratch, count, scratch);
    }
}

// The casts CastRow makes with no scratch row: a copy, one Cast between half and int8 / uint8, one Cast from half or
// bfloat16 into fp32 (the lowered formulas give them no scratch slot: opgen/lower/ascendc.py SCRATCH_FREE_CASTS).
template <typename D, typename S>
constexpr bool CAST_WITHOUT_SCRATCH =
    std::is_same<D, S>::value || (std::is_same<S, half>::value && IS_BYTE_INT<D>) ||
    (IS_BYTE_INT<S> && std::is_same<D, half>::value) ||
    (std::is_same<D, float>::value && (std::is_same<S, half>::value || std::is_same<S, bfloat16_t>::value));

// CastRow of a cast that needs no scratch row (CAST_WITHOUT_SCRATCH).
template <typename D, typename S, RoundMode RM, bool SAT, bool BARRIER = true>
__aicore__ inline void CastRow(const LocalTensor<D> &dst, const LocalTensor<S> &src, uint32_t count)
{
    static_assert(CAST_WITHOUT_SCRATCH<D, S>, "this cast goes through a scratch row: pass one");
    CastRow<D, S, RM, SAT, BARRIER>(dst, src, count, dst.template ReinterpretCast<float>());
}

// The max of a row (ReduceMax level 2; the work area sits after the first repeat of `work`).
__aicore__ inline float ReduceMaxRow(const LocalTensor<float> &src, uint32_t count, const LocalTensor<float> &work)
{
    ReduceMax<float>(work, src, work[FLOATS_PER_REPEAT], static_cast<int32_t>(count), false);
    SyncFunc<HardEvent::V_S>();
    const float value = work.GetValue(0U);
    SyncFunc<HardEvent::S_V>();
    return value;
}

// The sum of a row (reduce_sum): the device ReduceSum, fp32.
__aicore__ inline float ReduceSumRow(const LocalTensor<float> &src, uint32_t count, const LocalTensor<float> &work)
{
    ReduceSum<float>(work, src, work[FLOATS_PER_REPEAT], static_cast<int32_t>(count));
    SyncFunc<HardEvent::V_S>();
    const float value = work.GetValue(0U);
    SyncFunc<HardEvent::S_V>();
    return value;
}

// A vector unary instruction that UnaryScalar applies to one fp32 value.
enum class ScalarUnary : uint8_t {
    SQRT,
    EXP
};

// One fp32 value through the vector Sqrt / Exp (one block), as the real kernels take the root of a row statistic
// (rstd) and the exponentials of a const expert's softmax (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/
// moe_distribute_combine_v2.h ProcessConstantExpert: Exp over a UB tensor, never a scalar exp).
template <ScalarUnary OP>
__aicore__ inline float UnaryScalar(float v, const LocalTensor<float> &work)
{
    Duplicate(work, v, static_cast<int32_t>(UB_BLOCK / sizeof(float)));
    PipeBarrier<PIPE_V>();
    if constexpr (OP == ScalarUnary::SQRT) {
        Sqrt(work, work, static_cast<int32_t>(UB_BLOCK / sizeof(float)));
    } else {
        Exp(work, work, static_cast<int32_t>(UB_BLOCK / sizeof(float)));
    }
    SyncFunc<HardEvent::V_S>();
    const float value = work.GetValue(0U);
    SyncFunc<HardEvent::S_V>();
    return value;
}

// dst[b] = max(src[b*N, b*N+N)) over blocks of N values, the last block zero-padded (block_max).  BARRIER: a
// PipeBarrier<PIPE_V> after the last instruction.
template <uint32_t N, bool BARRIER = true>
__aicore__ inline void BlockMaxRow(const LocalTensor<float> &dst, const LocalTensor<float> &src, uint32_t count)
{
    static_assert(N % FLOATS_PER_BLOCK == 0U && N <= 2U * FLOATS_PER_REPEAT,
                  "block_max blocks are whole 32-byte blocks of at most two repeats");
    constexpr uint8_t STRIDE = static_cast<uint8_t>(N / FLOATS_PER_BLOCK); // repeat stride in data blocks
    const uint32_t blocks = CeilDiv(count, N);
    if (blocks * N > count) {
        SyncFunc<HardEvent::V_S>();
        for (uint32_t i = count; i < blocks * N; ++i) {
            src.SetValue(i, 0.0f);
        }
        SyncFunc<HardEvent::S_V>();
    }
    if constexpr (N > FLOATS_PER_REPEAT) { // fold the tail of every block onto its head
        for (uint32_t b = 0U; b < blocks; b += MAX_REPEATS) {
            const uint8_t reps = static_cast<uint8_t>(MinU32(MAX_REPEATS, blocks - b));
            Max(src[b * N], src[b * N], src[b * N + FLOATS_PER_REPEAT], static_cast<uint64_t>(N - FLOATS_PER_REPEAT),
                reps, BinaryRepeatParams(1U, 1U, 1U, STRIDE, STRIDE, STRIDE));
        }
        PipeBarrier<PIPE_V>();
    }
    uint32_t first = 0U; // the blocks from here on take a WholeReduceMax repeat each
    if constexpr (N == FLOATS_PER_BLOCK) {
        // eight blocks a repeat: BlockReduceMax over the whole repeats, as the real Int8QuantProcess (code:
        // mc2/moe_distribute_combine_v2/op_kernel/moe_distribute_combine_v2_quant.h); the rest below
        first = blocks - blocks % FLOATS_PER_BLOCK;
        for (uint32_t b = 0U; b < first; b += MAX_REPEATS * FLOATS_PER_BLOCK) {
            BlockReduceMax<float>(dst[b], src[b * N],
                                  static_cast<int32_t>(MinU32(MAX_REPEATS, (first - b) / FLOATS_PER_BLOCK)),
                                  static_cast<int32_t>(FLOATS_PER_REPEAT), 1, 1, 8);
        }
    }
    constexpr int32_t WIDTH = static_cast<int32_t>(N > FLOATS_PER_REPEAT ? FLOATS_PER_REPEAT : N);
    for (uint32_t b = first; b < blocks; b += MAX_REPEATS) {
        WholeReduceMax<float>(dst[b], src[b * N], WIDTH, static_cast<int32_t>(MinU32(MAX_REPEATS, blocks - b)), 1, 1,
                              STRIDE, ReduceOrder::ORDER_ONLY_VALUE);
    }
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// Block b of `dst` (32 bytes) = values[b] eight times, b < blocks: Brcb, 8 values a repeat, so it reads values and
// writes dst up to `blocks` rounded up to 8 (code: mc2/moe_distribute_combine_v2/op_kernel/
// moe_distribute_combine_v2_quant.h Int8QuantProcess: Brcb(scaleDup, reduceMax, repeatNum, {1, BLOCK_NUM})).
__aicore__ inline void BrcbRow(const LocalTensor<float> &dst, const LocalTensor<float> &values, uint32_t blocks)
{
    const uint32_t repeats = CeilDiv(blocks, FLOATS_PER_BLOCK);
    for (uint32_t r = 0U; r < repeats; r += MAX_REPEATS) {
        Brcb(dst[r * FLOATS_PER_REPEAT], values[r * FLOATS_PER_BLOCK],
             static_cast<uint8_t>(MinU32(MAX_REPEATS, repeats - r)), BrcbRepeatParams(1U, 8U));
    }
}

enum class BlockOp : uint8_t {
    COPY, // dst[i] = block i / N of bcast
    MUL   // dst[i] = src[i] * block i / N of bcast
};

// One level-0 instruction of BlockRepeats: `reps` blocks of N values from block `block`, lanes [c, c + lanes) of each.
template <uint32_t N, BlockOp OP>
__aicore__ inline void BlockRepeat(const LocalTensor<float> &dst, const LocalTensor<float> &src,
                                   const LocalTensor<float> &bcast, uint32_t block, uint32_t c, uint32_t lanes,
                                   uint32_t reps)
{
    constexpr uint8_t STRIDE = static_cast<uint8_t>(N / FLOATS_PER_BLOCK); // a block of N values, in data blocks
    const uint32_t at = block * N + c;
    if constexpr (OP == BlockOp::COPY) {
        Copy(dst[at], bcast[block * FLOATS_PER_BLOCK], static_cast<uint64_t>(lanes), static_cast<uint8_t>(reps),
             CopyRepeatParams(1U, 0U, STRIDE, 1U));
    } else {
        Mul(dst[at], src[at], bcast[block * FLOATS_PER_BLOCK], static_cast<uint64_t>(lanes), static_cast<uint8_t>(reps),
            BinaryRepeatParams(1U, 1U, 0U, STRIDE, STRIDE, 1U));
    }
}

// dst[i] = OP over i < count, block b of N values against 32-byte block b of `bcast` (its value eight times, as
// BrcbRow leaves it): level-0 repeats of one block of N values each, bcast read with block stride 0, at most one
// 256-byte repeat of lanes per instruction; the last, partial block by its own mask (nothing past count written).
template <uint32_t N, BlockOp OP>
__aicore__ inline void BlockRepeats(const LocalTensor<float> &dst, const LocalTensor<float> &src,
                                    const LocalTensor<float> &bcast, uint32_t count)
{
    static_assert(N % FLOATS_PER_BLOCK == 0U && N / FLOATS_PER_BLOCK <= 255U,
                  "per_block blocks are whole 32-byte blocks, at most 255 to a repeat stride");
    const uint32_t full = count / N;
    const uint32_t tail = count - full * N;
    for (uint32_t c = 0U; c < N; c += FLOATS_PER_REPEAT) { // the lanes [c, c + 64) of every block
        const uint32_t width = MinU32(FLOATS_PER_REPEAT, N - c);
        for (uint32_t b = 0U; b < full; b += MAX_REPEATS) {
            BlockRepeat<N, OP>(dst, src, bcast, b, c, width, MinU32(MAX_REPEATS, full - b));
        }
        if (tail > c) {
            BlockRepeat<N, OP>(dst, src, bcast, full, c, MinU32(width, tail - c), 1U);
        }
    }
}

// dst[i] = src[i] * values[i / N] (a value per block of N, broadcast over its block): the values broadcast by Brcb
// into `work` (a row; N = 8: the whole row of factors, one Mul over it as the real dequant does, code:
// moe_distribute_combine_v2_quant.h Int8DequantProcess; N > 8: a block of each value, then one Mul repeat per block).
// The Mul reads src after the barrier that follows the Brcb; BARRIER: a PipeBarrier<PIPE_V> after the Mul.
template <uint32_t N, bool BARRIER = true>
__aicore__ inline void MulBlocks(const LocalTensor<float> &dst, const LocalTensor<float> &src,
                                 const LocalTensor<float> &values, uint32_t count, const LocalTensor<float> &work)
{
    static_assert(N % FLOATS_PER_BLOCK == 0U, "per_block blocks are whole 32-byte blocks");
    BrcbRow(work, values, CeilDiv(count, N));
    PipeBarrier<PIPE_V>();
    if constexpr (N == FLOATS_PER_BLOCK) {
        Mul(dst, src, work, static_cast<int32_t>(count));
    } else {
        BlockRepeats<N, BlockOp::MUL>(dst, src, work, count);
    }
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// dst[i] = values[i / N], N = 8: one Brcb (dst written up to count rounded up to 64 values).  BARRIER: a
// PipeBarrier<PIPE_V> after it.
template <uint32_t N, bool BARRIER = true>
__aicore__ inline void BroadcastBlocks(const LocalTensor<float> &dst, const LocalTensor<float> &values, uint32_t count)
{
    static_assert(N == FLOATS_PER_BLOCK, "a block of 8 is one Brcb block; larger blocks broadcast through a work row");
    BrcbRow(dst, values, CeilDiv(count, N));
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// dst[i] = values[i / N], N > 8: Brcb a block of each value into `work` (a row), then a Copy repeat per block.
// BARRIER: a PipeBarrier<PIPE_V> after the copies.
template <uint32_t N, bool BARRIER = true>
__aicore__ inline void BroadcastBlocks(const LocalTensor<float> &dst, const LocalTensor<float> &values, uint32_t count,
                                       const LocalTensor<float> &work)
{
    static_assert(N % FLOATS_PER_BLOCK == 0U && N > FLOATS_PER_BLOCK, "blocks of 16, 24, ... values");
    BrcbRow(work, values, CeilDiv(count, N));
    PipeBarrier<PIPE_V>();
    BlockRepeats<N, BlockOp::COPY>(dst, dst, work, count);
    if constexpr (BARRIER) {
        PipeBarrier<PIPE_V>();
    }
}

// exponent(x): the biased 8-bit exponent field as BFLOAT16 sees each value, as fp32 codes.  The field of
// the exact fp32 value is the bf16 field (fp16: the field after a TRUNC cast to bf16).
template <typename S>
__aicore__ inline void ExponentRow(const LocalTensor<float> &dst, const LocalTensor<S> &src, uint32_t count)
{
    const int32_t n = static_cast<int32_t>(count);
    if constexpr (std::is_same<S, float>::value) {
        CopyRow(dst, src, count);
    } else {
        Cast(dst, src, RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
    }
    Abs(dst, dst, n);
    PipeBarrier<PIPE_V>();
    LocalTensor<int32_t> bits = dst.template ReinterpretCast<int32_t>();
    ShiftRight(bits, bits, static_cast<int32_t>(23), n);
    PipeBarrier<PIPE_V>();
    Cast(dst, bits, RoundMode::CAST_NONE, count);
    PipeBarrier<PIPE_V>();
}

// pad_even: an odd row gets one zero appended.
__aicore__ inline void PadEvenRow(const LocalTensor<float> &row, uint32_t count)
{
    if (count % 2U != 0U) {
        SyncFunc<HardEvent::V_S>();
        row.SetValue(count, 0.0f);
        SyncFunc<HardEvent::S_V>();
    }
}

// One row of a GM tensor (row `row` of rows of `count` elements) into UB.
template <typename T>
__aicore__ inline void LoadRow(const LocalTensor<T> &dst, const GlobalTensor<uint8_t> &gm, uint64_t row, uint32_t count)
{
    const uint32_t bytes = RowBytes<T>(count);
    SyncFunc<HardEvent::V_MTE2>(); // the slot may still be read by earlier vector instructions
    DataCopyPad(dst.template ReinterpretCast<uint8_t>(), gm[row * bytes], DataCopyExtParams(1U, bytes, 0U, 0U, 0U),
                DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));
    SyncFunc<HardEvent::MTE2_V>();
}

// One row from UB to row `row` of a GM tensor of rows of `count` elements; BEFORE orders the copy after the unit
// that wrote the row (V_MTE3 for a vector result, S_MTE3 for SetValue); afterwards the vector unit (and the
// scalar one, for a SetValue row) may reuse the buffer.
template <typename T, HardEvent BEFORE>
__aicore__ inline void StoreRow(const GlobalTensor<uint8_t> &gm, uint64_t row, const LocalTensor<T> &src,
                                uint32_t count)
{
    const uint32_t bytes = RowBytes<T>(count);
    SyncFunc<BEFORE>();
    DataCopyPad(gm[row * bytes], src.template ReinterpretCast<uint8_t>(), DataCopyExtParams(1U, bytes, 0U, 0U, 0U));
    SyncFunc<HardEvent::MTE3_V>();
    if constexpr (BEFORE == HardEvent::S_MTE3) {
        SyncFunc<HardEvent::MTE3_S>();
    }
}

// routed(T) as an fp32 row: the row `expertRow` of a (rows, H) tensor, or the (H,) / (1,) broadcast.
template <typename T, RowLayout LAYOUT>
__aicore__ inline void LoadRowF32(const LocalTensor<float> &dst, const LocalTensor<float> &scratch,
                                  const GlobalTensor<uint8_t> &gm, uint32_t expertRow, uint32_t count)
{
    const uint64_t row = (LAYOUT == RowLayout::ROWS) ? expertRow : 0U;
    const uint32_t loaded = (LAYOUT == RowLayout::SCALAR) ? 1U : count;
    if constexpr (std::is_same<T, float>::value) {
        LoadRow(dst, gm, (LAYOUT == RowLayout::SCALAR) ? 0U : row, loaded);
    } else {
        LocalTensor<T> raw = scratch.template ReinterpretCast<uint8_t>()[AlignUp(count * 2U, REPEAT_BYTES)]
                                 .template ReinterpretCast<T>();
        LoadRow(raw, gm, (LAYOUT == RowLayout::SCALAR) ? 0U : row, loaded);
        CastToFloat(dst, raw, loaded, scratch);
    }
    if constexpr (LAYOUT == RowLayout::SCALAR) {
        SyncFunc<HardEvent::V_S>();
        const float value = dst.GetValue(0U);
        SyncFunc<HardEvent::S_V>();
        Duplicate(dst, value, static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
    }
}

// A fact of a Traits per template tiling key value, as a table: values[i] where keys[i] == key, else `otherwise`
// (e.g. the calc slots of each quant mode's lowered formula, CALC_SLOTS).
template <uint32_t N>
__aicore__ inline constexpr uint32_t PerKey(uint32_t key, const uint32_t (&keys)[N], const uint32_t (&values)[N],
                                            uint32_t otherwise)
{
    for (uint32_t i = 0U; i < N; ++i) {
        if (keys[i] == key) {
            return values[i];
        }
    }
    return otherwise;
}

#endif // OPGEN_KERNEL_HELPERS_H
