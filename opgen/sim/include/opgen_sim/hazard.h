/**
 * Cross-pipe hazards on UB, as the device has them.
 *
 * A vector core issues its instructions to separate pipes (MTE2: GM -> UB copies, MTE3: UB -> GM copies,
 * V: vector instructions, S: scalar accesses) that run concurrently, so one pipe's access is only ordered
 * after another pipe's once a synchronisation connects the two (SetFlag / WaitFlag<X_Y>, PipeBarrier<PIPE_ALL>,
 * a queue's EnQue / AllocTensor, SyncAll).  The twin runs every instruction in order; it records each UB access
 * with its pipe and the pipes it has since been ordered before, and faults on
 *   read after write: a pipe reads bytes another pipe wrote, with no sync between them (it may read old bytes);
 *   write after read: a pipe overwrites bytes another pipe reads, with no sync between them (the reader may see
 *   the new bytes).  Scalar reads complete when issued, so they never take part in the second kind.
 * Waits chain: V -> S, then S -> MTE3, orders V before MTE3.  Within the V pipe, a read of what an earlier vector
 * instruction wrote needs PipeBarrier<PIPE_V> in between (the pipe overlaps its instructions), except on
 * __NPU_ARCH__ 3510, whose vector functions run in order (its PipeBarrier<PIPE_V> issues nothing).
 */
#ifndef OPGEN_SIM_HAZARD_H
#define OPGEN_SIM_HAZARD_H

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "opgen_sim/world.h"

namespace opgen_sim {

enum Pipe : uint8_t { PIPE_MTE2_ = 0, PIPE_MTE3_ = 1, PIPE_V_ = 2, PIPE_S_ = 3, PIPE_COUNT_ = 4 };

inline const char* PipeName(uint8_t p)
{
    static const char* names[] = {"MTE2 (DataCopy GM->UB)", "MTE3 (DataCopy UB->GM)", "V (vector)", "S (scalar)"};
    return p < PIPE_COUNT_ ? names[p] : "?";
}

constexpr uint8_t ALL_PIPES = (1U << PIPE_COUNT_) - 1U;
constexpr size_t MAX_ACCESSES = 4096;  // older accesses are forgotten past this many (never a false fault)

struct UbAccess {
    uint32_t begin;
    uint32_t end;
    uint8_t pipe;
    bool write;
    uint8_t ordered;  // bit p: pipe p's later accesses are ordered after this one
    uint64_t seq;
};

struct HazardState {
    std::vector<UbAccess> accesses;
    uint64_t seq = 0;
    uint64_t snapshot = 0;  // seq at the last SetFlag: accesses before it are never merged with later ones
    // queue buffers [begin, end) freed (FreeTensor) and not allocated since: TPipe::Reset waits for their free events
    std::vector<std::pair<uint32_t, uint32_t>> freed;
};

inline thread_local HazardState t_hazards;

inline void Forget(std::vector<UbAccess>& as)
{
    size_t keep = 0;
    for (size_t i = 0; i < as.size(); ++i) {
        if (as[i].ordered != ALL_PIPES) {
            as[keep++] = as[i];
        }
    }
    as.resize(keep);
    if (as.size() >= MAX_ACCESSES) {
        as.erase(as.begin(), as.begin() + static_cast<std::ptrdiff_t>(MAX_ACCESSES / 2));
    }
}

inline void Record(uint8_t pipe, uint32_t begin, uint32_t end, bool write)
{
    std::vector<UbAccess>& as = t_hazards.accesses;
    // earlier writes wholly under this one, of any pipe, no longer decide what a read sees: the twin keeps the last
    // writer of the bytes (two pipes' writes of the same bytes with no sync between them, a write-after-write race,
    // are not checked: the real A2 dispatch counts into statusTensor_ at UB 0 with scalar stores and then DataCopies
    // tokens over it with no S_MTE2 on all but its last core; code: mc2/moe_distribute_dispatch_v2/op_kernel/
    // arch22/moe_distribute_dispatch_a2.h IndexSort, ReorderTokens)
    if (write) {
        size_t keep = 0;
        for (size_t i = 0; i < as.size(); ++i) {
            if (!(as[i].write && as[i].begin >= begin && as[i].end <= end)) {
                as[keep++] = as[i];
            }
        }
        as.resize(keep);
    }
    Forget(as);
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    // on 3510 the vector functions run in order: PipeBarrier<PIPE_V> issues nothing there (asc-devkit
    // impl/basic_api/kernel_reg.h PipeBarrierImpl: `if constexpr (pipe != PIPE_V) { pipe_barrier(pipe); }`)
    const uint8_t own = static_cast<uint8_t>(1U << pipe);
#else
    // a vector instruction's result is not ordered before the next vector instruction either: the V pipe
    // overlaps its instructions, so a dependent one needs PipeBarrier<PIPE_V> (the scalar unit runs in order)
    const uint8_t own = (write && pipe == PIPE_V_) ? 0U : static_cast<uint8_t>(1U << pipe);
#endif
    if (!as.empty()) {  // a run of adjacent accesses of one pipe (scalar loops) is one access
        UbAccess& last = as.back();
        if (last.pipe == pipe && last.write == write && last.ordered == own && last.seq > t_hazards.snapshot &&
            begin <= last.end && last.begin <= end) {
            last.begin = std::min(last.begin, begin);
            last.end = std::max(last.end, end);
            last.seq = ++t_hazards.seq;
            return;
        }
    }
    as.push_back({begin, end, pipe, write, own, ++t_hazards.seq});
}

// A read by `pipe` of UB bytes [begin, end): every overlapping write must be ordered before it.
inline void UbRead(uint8_t pipe, uint32_t begin, uint32_t end, const char* what)
{
    if (t_core == nullptr || begin >= end) {
        return;
    }
    for (const UbAccess& a : t_hazards.accesses) {
        if (a.write && a.begin < end && begin < a.end && (a.ordered & (1U << pipe)) == 0U) {
            if (a.pipe == pipe) {
                Raise("%s: reads UB [%u, %u) that an earlier vector instruction wrote at [%u, %u) with no "
                      "PipeBarrier<PIPE_V> between the two: the device may read the old bytes", what, begin, end,
                      a.begin, a.end);
            }
            Raise("%s: reads UB [%u, %u) on pipe %s, written on pipe %s at [%u, %u) with no sync between the two "
                  "pipes (SetFlag/WaitFlag, PipeBarrier<PIPE_ALL>, EnQue/DeQue): the device may read the old bytes",
                  what, begin, end, PipeName(pipe), PipeName(a.pipe), a.begin, a.end);
        }
    }
    if (pipe != PIPE_S_) {
        Record(pipe, begin, end, false);
    }
}

// A write by `pipe` of UB bytes [begin, end): every overlapping read by another pipe must be ordered before it.
inline void UbWritten(uint8_t pipe, uint32_t begin, uint32_t end, const char* what = "a write")
{
    if (t_core == nullptr || begin >= end) {
        return;
    }
    for (const UbAccess& a : t_hazards.accesses) {
        if (!a.write && a.begin < end && begin < a.end && (a.ordered & (1U << pipe)) == 0U) {
            Raise("%s: overwrites UB [%u, %u) on pipe %s, read on pipe %s at [%u, %u) with no sync between the two "
                  "pipes (SetFlag/WaitFlag, PipeBarrier<PIPE_ALL>, a queue): the device may overwrite the bytes "
                  "before they are read", what, begin, end, PipeName(pipe), PipeName(a.pipe), a.begin, a.end);
        }
    }
    Record(pipe, begin, end, true);
}

// WaitFlag of a SetFlag: what `from` did up to access number `upTo` is ordered before `to`'s later accesses,
// and so is every access `from` was already ordered after. A wait of the scalar unit (X_S) orders them before
// every pipe: the scalar unit issues every later instruction, so none starts before the wait returns (the real
// kernels rely on it: moe_distribute_dispatch_v2.h polls with DataCopy, MTE2_V, ReduceSum, V_S, GetValue and the
// next DataCopy overwrites what ReduceSum read; code: mc2/moe_distribute_dispatch_v2/op_kernel/
// moe_distribute_dispatch_v2.h WaitStatus).
inline void MakeVisible(uint8_t from, uint8_t to, uint64_t upTo)
{
    const uint8_t after = to == PIPE_S_ ? ALL_PIPES : static_cast<uint8_t>(1U << to);
    for (UbAccess& a : t_hazards.accesses) {
        const bool own = a.pipe == from && a.seq <= upTo;
        const bool seen = a.pipe != from && (a.ordered & (1U << from)) != 0U;
        if (own || seen) {
            a.ordered = static_cast<uint8_t>(a.ordered | after);
        }
    }
}

// Every access so far, or every one overlapping [begin, end), is ordered before every pipe.
inline void MakeAllVisible(uint32_t begin = 0U, uint32_t end = UINT32_MAX)
{
    for (UbAccess& a : t_hazards.accesses) {
        if (a.begin < end && begin < a.end) {
            a.ordered = ALL_PIPES;
        }
    }
}

// SetFlag: the accesses so far, for its WaitFlag to order (MakeVisible's upTo).
inline uint64_t Snapshot()
{
    t_hazards.snapshot = t_hazards.seq;
    return t_hazards.seq;
}

// FreeTensor of a queue buffer sets its free event, the next AllocTensor of it waits for it.
inline void QueueBufferFreed(uint32_t begin, uint32_t end)
{
    t_hazards.freed.emplace_back(begin, end);
}

inline void QueueBufferAllocated(uint32_t begin)
{
    std::vector<std::pair<uint32_t, uint32_t>>& f = t_hazards.freed;
    f.erase(std::remove_if(f.begin(), f.end(), [begin](const std::pair<uint32_t, uint32_t>& b) {
                return b.first == begin;
            }), f.end());
}

// TPipe::Reset: the device waits only for the free events of the queue buffers freed and not allocated since
// (asc-devkit impl/basic_api/kernel_tpipe_impl.h TPipe::Reset: WaitFlagImpl(ptr->freeBufEvt, ...) per FREE buffer
// with an event, then InitSocState and ResetPool); every other UB access (a TBuf's, a queue buffer still allocated)
// is not ordered by it, so a buffer InitBuffer gives after the reset at the same UB inherits those accesses: a kernel
// needs PipeBarrier<PIPE_ALL> (or flags) before the reset, as the real combine's Process has one
// (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2.h Process).
inline void PipeReset()
{
    for (const std::pair<uint32_t, uint32_t>& b : t_hazards.freed) {
        MakeAllVisible(b.first, b.second);  // as FreeTensor -> AllocTensor
    }
    t_hazards.freed.clear();
}

}  // namespace opgen_sim

#endif  // OPGEN_SIM_HAZARD_H
