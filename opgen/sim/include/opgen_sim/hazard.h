/**
 * Cross-pipe read-after-write hazards on UB, as the device has them.
 *
 * A vector core issues its instructions to separate pipes (MTE2: GM -> UB copies, MTE3: UB -> GM copies,
 * V: vector instructions, S: scalar accesses) that run concurrently: bytes one pipe writes are only safe for
 * another pipe to read after a synchronisation between the two (SetFlag / WaitFlag<X_Y>, PipeBarrier<PIPE_ALL>,
 * a queue's EnQue / DeQue, SyncAll).  The twin runs every instruction in order, so it records each UB write
 * with its pipe and the pipes it has been made visible to; a read by another pipe of bytes not yet made visible
 * to it is a fault ("without a sync the device may read the old bytes").  Write-after-read hazards are not
 * tracked.
 */
#ifndef OPGEN_SIM_HAZARD_H
#define OPGEN_SIM_HAZARD_H

#include <cstdint>
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
constexpr size_t MAX_PENDING = 4096;  // older writes are forgotten past this many (never a false fault)

struct UbWrite {
    uint32_t begin;
    uint32_t end;
    uint8_t pipe;
    uint8_t visible;  // bit p: pipe p may read these bytes
    uint64_t seq;
};

struct HazardState {
    std::vector<UbWrite> writes;
    uint64_t seq = 0;
};

inline thread_local HazardState t_hazards;

// A write by `pipe` of UB bytes [begin, end).
inline void UbWritten(uint8_t pipe, uint32_t begin, uint32_t end)
{
    if (t_core == nullptr || begin >= end) {
        return;
    }
    std::vector<UbWrite>& ws = t_hazards.writes;
    // older writes wholly under this one no longer decide what a read sees
    size_t keep = 0;
    for (size_t i = 0; i < ws.size(); ++i) {
        if (!(ws[i].begin >= begin && ws[i].end <= end) && ws[i].visible != ALL_PIPES) {
            ws[keep++] = ws[i];
        }
    }
    ws.resize(keep);
    if (ws.size() >= MAX_PENDING) {
        ws.erase(ws.begin(), ws.begin() + static_cast<std::ptrdiff_t>(MAX_PENDING / 2));
    }
    ws.push_back({begin, end, pipe, static_cast<uint8_t>(1U << pipe), ++t_hazards.seq});
}

// A read by `pipe` of UB bytes [begin, end): every overlapping write must be visible to it.
inline void UbRead(uint8_t pipe, uint32_t begin, uint32_t end, const char* what)
{
    if (t_core == nullptr || begin >= end) {
        return;
    }
    for (const UbWrite& w : t_hazards.writes) {
        if (w.begin < end && begin < w.end && (w.visible & (1U << pipe)) == 0U) {
            Raise("%s: reads UB [%u, %u) on pipe %s, written on pipe %s at [%u, %u) with no sync between the two "
                  "pipes (SetFlag/WaitFlag, PipeBarrier<PIPE_ALL>, EnQue/DeQue): the device may read the old bytes",
                  what, begin, end, PipeName(pipe), PipeName(w.pipe), w.begin, w.end);
        }
    }
}

// WaitFlag of a SetFlag: what `from` wrote up to write number `upTo` becomes visible to `to`, and so does what
// other pipes' writes `from` had already waited for (the waits chain: V -> S then S -> MTE3 orders V before MTE3).
inline void MakeVisible(uint8_t from, uint8_t to, uint64_t upTo)
{
    for (UbWrite& w : t_hazards.writes) {
        const bool own = w.pipe == from && w.seq <= upTo;
        const bool seen = w.pipe != from && (w.visible & (1U << from)) != 0U;
        if (own || seen) {
            w.visible = static_cast<uint8_t>(w.visible | (1U << to));
        }
    }
}

// Every write so far, or every write overlapping [begin, end), becomes visible to every pipe.
inline void MakeAllVisible(uint32_t begin = 0U, uint32_t end = UINT32_MAX)
{
    for (UbWrite& w : t_hazards.writes) {
        if (w.begin < end && begin < w.end) {
            w.visible = ALL_PIPES;
        }
    }
}

inline uint64_t WriteSeq()
{
    return t_hazards.seq;
}

inline void ResetHazards()
{
    t_hazards.writes.clear();
    t_hazards.seq = 0;
}

}  // namespace opgen_sim

#endif  // OPGEN_SIM_HAZARD_H
