/**
 * Synchronisation and system registers of the twin (kernel_operator_block_sync_intf.h, _common_intf.h,
 * _sys_var_intf.h, _cache_intf.h).
 *
 * A twin core executes its instructions one after another, so pipe barriers order nothing; but SetFlag /
 * WaitFlag are paired like on the device: a WaitFlag with no SetFlag of the same event and id before it would
 * hang the device's pipe, and faults here.  SyncAll is a barrier over the rank's cores.
 */
#ifndef OPGEN_SIM_SYNC_H
#define OPGEN_SIM_SYNC_H

#include <atomic>
#include <chrono>

#include "opgen_sim/tensor.h"

namespace AscendC {

// PIPE_ALL waits for every pipe: all UB writes so far are visible to all of them.  PIPE_V orders the vector
// instructions before it before those after it; the other pipes run their instructions in order anyway.
template <pipe_t pipe>
__aicore__ inline void PipeBarrier()
{
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    // asc-devkit impl/basic_api/kernel_reg.h PipeBarrierImpl (3510)
    static_assert(pipe != PIPE_S, "PipeBarrier<PIPE_S> is not supported on current device!");
#endif
    opgen_sim::CountSync(opgen_sim::SYNC_PIPE_BARRIER);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (pipe == PIPE_ALL) {
        opgen_sim::MakeAllVisible();
    } else if (pipe == PIPE_V) {
        opgen_sim::MakeVisible(opgen_sim::PIPE_V_, opgen_sim::PIPE_V_, opgen_sim::Snapshot());
    }
}

namespace sim {
// The (source, destination) pipes of a HardEvent, as hazard.h models them (-1: a pipe the twin has no
// instruction on, e.g. MTE1 or the cube's M / FIX).
struct EventPipes {
    int from;
    int to;
};
constexpr EventPipes PipesOf(HardEvent e)
{
    using opgen_sim::PIPE_MTE2_;
    using opgen_sim::PIPE_MTE3_;
    using opgen_sim::PIPE_S_;
    using opgen_sim::PIPE_V_;
    switch (e) {
        case HardEvent::MTE2_V: return {PIPE_MTE2_, PIPE_V_};
        case HardEvent::V_MTE2: return {PIPE_V_, PIPE_MTE2_};
        case HardEvent::MTE3_V: return {PIPE_MTE3_, PIPE_V_};
        case HardEvent::V_MTE3: return {PIPE_V_, PIPE_MTE3_};
        case HardEvent::V_V: return {PIPE_V_, PIPE_V_};
        case HardEvent::MTE3_MTE2: return {PIPE_MTE3_, PIPE_MTE2_};
        case HardEvent::MTE2_MTE3: return {PIPE_MTE2_, PIPE_MTE3_};
        case HardEvent::S_V: return {PIPE_S_, PIPE_V_};
        case HardEvent::V_S: return {PIPE_V_, PIPE_S_};
        case HardEvent::S_MTE2: return {PIPE_S_, PIPE_MTE2_};
        case HardEvent::MTE2_S: return {PIPE_MTE2_, PIPE_S_};
        case HardEvent::S_MTE3: return {PIPE_S_, PIPE_MTE3_};
        case HardEvent::MTE3_S: return {PIPE_MTE3_, PIPE_S_};
        default: return {-1, -1};
    }
}
}  // namespace sim

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID)
{
    opgen_sim::CountSync(opgen_sim::SYNC_SET_FLAG);
    if (opgen_sim::t_core != nullptr) {
        opgen_sim::t_core->flags[{static_cast<int>(event), eventID}].push_back(opgen_sim::Snapshot());
    }
}

// Waits for the oldest SetFlag of (event, id): what the source pipe wrote before it becomes visible to the
// destination pipe.
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID)
{
    opgen_sim::CountSync(opgen_sim::SYNC_WAIT_FLAG);
    if (opgen_sim::t_core == nullptr) {
        return;
    }
    std::deque<uint64_t>& pending = opgen_sim::t_core->flags[{static_cast<int>(event), eventID}];
    if (pending.empty()) {
        opgen_sim::Raise("WaitFlag<HardEvent %d>(%d) with no SetFlag before it: the device pipe would wait forever",
                         static_cast<int>(event), eventID);
    }
    const uint64_t upTo = pending.front();
    pending.pop_front();
    constexpr sim::EventPipes pipes = sim::PipesOf(event);
    if (pipes.from >= 0) {
        opgen_sim::MakeVisible(static_cast<uint8_t>(pipes.from), static_cast<uint8_t>(pipes.to), upTo);
    }
}

template <bool isAIVOnly = true>
__aicore__ inline void SyncAll()
{
    opgen_sim::CountSync(opgen_sim::SYNC_ALL);
    opgen_sim::ServeTasks();      // the AICPU server runs this core's committed BatchWrite tasks while it waits
    opgen_sim::MakeAllVisible();  // every pipe of every core drains before the cores meet
    opgen_sim::Barrier();
}

__aicore__ inline int64_t GetBlockIdx()
{
    return opgen_sim::t_core != nullptr ? opgen_sim::t_core->block : 0;
}

__aicore__ inline int64_t GetBlockNum()
{
    return opgen_sim::t_core != nullptr ? opgen_sim::t_core->blockNum : 1;
}

// PRINTF (kernel_operator_dump_tensor_intf.h): the device puts the text in the kernel's print buffer, which the
// runtime shows after the kernel ends; the twin writes it to stderr at once and keeps it with the core, so that a
// Trap after it carries it in its fault.
template <class... Args>
__aicore__ inline void PRINTF(const char* fmt, Args... args)
{
    std::string text;
    if constexpr (sizeof...(Args) == 0) {
        text = fmt;
    } else {
        char buf[1024];
        std::snprintf(buf, sizeof(buf), fmt, args...);
        text = buf;
    }
    while (!text.empty() && text.back() == '\n') {
        text.pop_back();
    }
    std::fprintf(stderr, "[%s] %s\n", opgen_sim::Where().c_str(), text.c_str());
    if (opgen_sim::t_core != nullptr) {
        opgen_sim::t_core->printed = text;
    }
}

// Trap (kernel_operator_sys_var_intf.h): the kernel aborts itself, an AI-core exception the runtime reports.
// ---- the CTRL system register (kernel_operator_common_intf.h SetCtrlSpr / GetCtrlSpr / ResetCtrlSpr) ---------------
// Declared only where the asc-devkit headers declare them, with their bit ranges (impl/basic_api/dav_c220 and
// dav_3510 kernel_operator_common_impl.h): __NPU_ARCH__ 2201 reaches CTRL[48] alone, 3510 CTRL[6:10], [45], [48],
// [50], [53], [59], [60], and only 3510 has ResetCtrlSpr. On 3510 every TPipe construction and Reset sets CTRL to
// 0x1000000000000008 and keeps CTRL[48] (InitSocStateImpl, tensor.h TPipe), so a kernel that selects
// per-instruction saturation (CTRL[60] 0) sets it again after each reset, as the real 950 kernels do.
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 2201 || __NPU_ARCH__ == 3510)
template <int8_t startBit, int8_t endBit>
__aicore__ static inline void SetCtrlSpr(int64_t value)
{
    static_assert(startBit <= endBit && startBit >= 0 && endBit < 64, "Invalid bit range on current device!");
#if __NPU_ARCH__ == 2201
    static_assert(startBit == endBit && startBit == 48, "startBit and endBit must be both 48 on current platform!");
#else
    static_assert(opgen_sim::CtrlBitsSettable3510(startBit, endBit), "Invalid startBit/endBit on current device!");
#endif
    opgen_sim::CoreState& core = opgen_sim::Core("SetCtrlSpr");
    const uint64_t mask = (endBit - startBit == 63) ? ~0ULL : (((1ULL << (endBit - startBit + 1)) - 1ULL) << startBit);
    core.ctrl = (core.ctrl & ~mask) | ((static_cast<uint64_t>(value) << startBit) & mask);
}

template <int8_t startBit, int8_t endBit>
__aicore__ static inline int64_t GetCtrlSpr()
{
    static_assert(startBit <= endBit && startBit >= 0 && endBit < 64, "Invalid bit range on current device!");
#if __NPU_ARCH__ == 2201
    static_assert(startBit == endBit && startBit == 48, "startBit and endBit must be both 48 on current platform!");
#endif
    const uint64_t ctrl = opgen_sim::Core("GetCtrlSpr").ctrl;
    return (endBit - startBit == 63) ? static_cast<int64_t>(ctrl)
                                     : static_cast<int64_t>((ctrl >> startBit) & ((1ULL << (endBit - startBit + 1)) - 1ULL));
}
#endif
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
template <int8_t startBit, int8_t endBit>
__aicore__ static inline void ResetCtrlSpr()
{
    static_assert(opgen_sim::CtrlBitsSettable3510(startBit, endBit), "Invalid startBit/endBit on current device!");
    opgen_sim::CoreState& core = opgen_sim::Core("ResetCtrlSpr");
    const uint64_t mask = ((1ULL << (endBit - startBit + 1)) - 1ULL) << startBit;
    core.ctrl = (core.ctrl & ~mask) | (opgen_sim::CTRL_RESET & mask);
}
#endif

__aicore__ inline void Trap()
{
    if (opgen_sim::t_core != nullptr && !opgen_sim::t_core->printed.empty()) {
        opgen_sim::Raise("AscendC::Trap: the kernel aborted itself after printing: %s",
                         opgen_sim::t_core->printed.c_str());
    }
    opgen_sim::Raise("AscendC::Trap: the kernel aborted itself");
}

// The system counter: 50 ticks per microsecond since the world started.
__aicore__ inline int64_t GetSystemCycle()
{
    if (opgen_sim::g_world == nullptr) {
        return 0;
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                          opgen_sim::g_world->start);
    return static_cast<int64_t>(us.count()) * 50;
}

// The user part of the workspace starts after the 16 MiB the framework reserves for the system.
constexpr uint64_t SIM_SYSTEM_WORKSPACE = 16ULL * 1024ULL * 1024ULL;

__aicore__ inline GM_ADDR GetUserWorkspace(GM_ADDR workspace)
{
    if (workspace == nullptr) {
        opgen_sim::Raise("GetUserWorkspace: the kernel was given no workspace");
    }
    return workspace + SIM_SYSTEM_WORKSPACE;
}

constexpr uint32_t HCCL_GROUP_ID_0 = 0;  // adv_api/hccl/hccl_common.h: the first communication group

// The context of HCCL group `index` of this rank (what Hccl::InitV2 takes).
template <uint32_t index>
__aicore__ inline __gm__ uint8_t* GetHcclContext(void)
{
    if (opgen_sim::t_core == nullptr) {
        return nullptr;
    }
    std::vector<opgen_sim::HcclGroup>& groups = opgen_sim::MyRank().groups;
    if (index >= groups.size()) {
        opgen_sim::Raise("GetHcclContext<%u>: the rank belongs to %zu HCCL groups", index, groups.size());
    }
    if (!groups[index].mc2Input.empty()) {
        opgen_sim::Raise("GetHcclContext<%u>: the group is an MC2 context domain: its windows are in input %s, and "
                         "HCCL hands the kernel no context for it", index, groups[index].mc2Input.c_str());
    }
    return groups[index].Context();
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst)
{
    (void)dst.SimSpan(0U, 1U, "DataCacheCleanAndInvalid");
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the twin's GM is coherent: only order
}

}  // namespace AscendC

#endif  // OPGEN_SIM_SYNC_H
