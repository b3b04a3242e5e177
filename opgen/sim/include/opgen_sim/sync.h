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

template <pipe_t pipe>
__aicore__ inline void PipeBarrier()
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID)
{
    if (opgen_sim::t_core != nullptr) {
        ++opgen_sim::t_core->flags[{static_cast<int>(event), eventID}];
    }
}

template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID)
{
    if (opgen_sim::t_core == nullptr) {
        return;
    }
    uint32_t& pending = opgen_sim::t_core->flags[{static_cast<int>(event), eventID}];
    if (pending == 0U) {
        opgen_sim::Raise("WaitFlag<HardEvent %d>(%d) with no SetFlag before it: the device pipe would wait forever",
                         static_cast<int>(event), eventID);
    }
    --pending;
}

template <bool isAIVOnly = true>
__aicore__ inline void SyncAll()
{
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
    return reinterpret_cast<uint8_t*>(&groups[index]);
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst)
{
    (void)dst.SimSpan(0U, 1U, "DataCacheCleanAndInvalid");
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the twin's GM is coherent: only order
}

}  // namespace AscendC

#endif  // OPGEN_SIM_SYNC_H
