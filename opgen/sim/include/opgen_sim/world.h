/**
 * The twin's world: W ranks of blockDim vector cores each, one host thread per core.
 *
 * Every GM byte a kernel may touch (inputs, outputs, workspace, tiling data, every rank's HCCL windows) is a
 * registered region; an access outside all of them, or across a region's end, is a fault.  A fault is
 * recorded with the core that made it and aborts the world: every other core unwinds at its next GM access,
 * barrier or flag.  A core still running after the world's deadline faults too (a device kernel waiting on a
 * flag nobody sets hangs; the twin names the last GM bytes the core was reading).
 *
 * The state is shared by the runner and the kernel translation units through C++17 inline variables.
 */
#ifndef OPGEN_SIM_WORLD_H
#define OPGEN_SIM_WORLD_H

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <new>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace opgen_sim {

// Thrown by the core that faults (after recording the message).
struct Fault {
    std::string message;
};
// Thrown by the other cores once the world is aborted; not a fault of their own.
struct Abort {};

// Who wrote a span of a region since when: [begin, end) by (rank, core) in SyncAll epoch `epoch`.
struct WriteSpan {
    uint64_t end;
    uint32_t rank;
    uint32_t core;
    uint64_t epoch;
};

// The writes of one region the cores of a rank own between SyncAlls (outputs, workspace).
struct WriteLog {
    std::mutex mu;
    std::map<uint64_t, WriteSpan> spans;  // begin offset -> span; disjoint
};

struct GmRegion {
    uintptr_t base = 0;
    uint64_t bytes = 0;
    std::string name;
    std::shared_ptr<WriteLog> writes;  // set: two cores writing the same bytes between SyncAlls is a race
    int64_t windowOf = -1;             // an HCCL window: the global rank that owns it
    std::string inputName{};           // an input of the op: its name (CoreCosts::inputReads counts by it)
};

// What one core's kernel did, counted by the twin for benchmarks/bench_kernel_cost.py: scalar accesses of UB and
// GM (GetValue / SetValue / operator(), the scalar unit's loads and stores; the twin cannot see register
// arithmetic), and bytes moved between UB and GM by where the GM side lies. A read of the bytes the core read
// last from a window or a region the cores write (a poll of a flag) is counted apart, with the scalar accesses
// since that last read (the poll loop's body): how often a poll repeats depends on the peers' timing. The same
// input bytes loaded again are plain GM reads.
enum CostKind : uint32_t {
    COST_GM_READ,           // inputs, outputs, workspace, tiling data -> UB
    COST_GM_WRITE,          // UB -> inputs, outputs, workspace
    COST_WINDOW_READ,       // any window -> UB
    COST_OWN_WINDOW_WRITE,  // UB -> this rank's windows
    COST_PEER_WINDOW_WRITE, // UB -> another rank's windows
    COST_POLL_READ,         // the same window or written GM bytes read again
    COST_KINDS
};

// Vector instructions and the scalar unit's synchronisation, counted per call (opgen/sim/README.md "Costs"): a
// vector API call is one instruction issue (a level-0 call with repeatTime r: one issue of r repeats; a count-form
// call: one issue in counter mode of ceil(count * lane bytes / 256) repeats), its elements the lanes it computes.
enum SyncKind : uint32_t {
    SYNC_SET_FLAG,      // SetFlag
    SYNC_WAIT_FLAG,     // WaitFlag
    SYNC_PIPE_BARRIER,  // PipeBarrier<pipe>
    SYNC_ALL,           // SyncAll: the cross-core barrier
    SYNC_ENQUE,         // TQue::EnQue (the device sets the queue's flag)
    SYNC_DEQUE,         // TQue::DeQue (the device waits for it)
    SYNC_KINDS
};

struct CoreCosts {
    uint64_t scalar = 0;
    uint64_t bytes[COST_KINDS] = {};
    uint64_t pollScalar = 0;  // scalar accesses of poll loops (moved out of `scalar`)
    uint64_t vecCalls = 0;    // vector instruction issues
    uint64_t vecRepeats = 0;  // their 256-byte repeats
    uint64_t vecElements = 0; // the lanes they compute
    uint64_t vecBytes = 0;    // those lanes' bytes (elements x the lane type's size)
    uint64_t sync[SYNC_KINDS] = {};
    // the bytes of each input this core read from GM (loaded again included), by input name: the `input_read`
    // lines of result.txt (a per-input split of bytes[COST_GM_READ])
    std::map<std::string, uint64_t> inputReads;
};

// The columns of a `cost` line after rank and core, in opgen/sim/job.py COST_FIELDS order.
inline std::string CostColumns(const CoreCosts& k)
{
    std::string line = std::to_string(k.scalar);
    for (uint64_t b : k.bytes) {
        line += " " + std::to_string(b);
    }
    line += " " + std::to_string(k.pollScalar);
    for (uint64_t v : {k.vecCalls, k.vecRepeats, k.vecElements, k.vecBytes}) {
        line += " " + std::to_string(v);
    }
    for (uint64_t s : k.sync) {
        line += " " + std::to_string(s);
    }
    return line;
}

// The first fields of the HCCL context as the device lays it out (asc-devkit impl/adv_api/detail/hccl/common/
// hccl_inner_def.h HcclCombineOpParam, the prefix of HcclContextDef::HcclOpResParam too): kernels read winSize.
// What a kernel for __NPU_ARCH__ 2201 may read of it (on Atlas A3 the rest of the device's context is an
// HcclOpResParam, whose window addresses are not at the places HcclCombineOpParam names).
struct HcclContextHead {
    uint64_t workSpace = 0;
    uint64_t workSpaceSize = 0;
    uint32_t rankId = 0;
    uint32_t rankNum = 0;
    uint64_t winSize = 0;  // bytes of each window of the group: what the job allocates, no more
};

// The context as __NPU_ARCH__ 3510 lays it out (the same HcclCombineOpParam under `__NPU_ARCH__ == 3510`): the
// head, then the windows of the group's first HCCL_MAX_RANK_NUM_V310 members, where the 950 kernels read them (the
// arch's Hccl<AICPU>::GetWindowsInAddr always returns 0). A larger group's other windows are not listed.
constexpr uint32_t CONTEXT_WINDOWS_V310 = 64U;  // HCCL_MAX_RANK_NUM_V310
struct HcclContextV310 {
    uint64_t workSpace = 0;
    uint64_t workSpaceSize = 0;
    uint32_t rankId = 0;
    uint32_t rankNum = 0;
    uint64_t winSize = 0;
    uint64_t windowsIn[CONTEXT_WINDOWS_V310] = {};
    uint64_t windowsOut[CONTEXT_WINDOWS_V310] = {};
};
static_assert(offsetof(HcclContextV310, winSize) == offsetof(HcclContextHead, winSize) &&
                  offsetof(HcclContextV310, rankNum) == offsetof(HcclContextHead, rankNum),
              "the 2201 head is the prefix of the 3510 context");

// The context of Atlas A3 (asc-devkit impl/adv_api/detail/hccl/common/hccl_inner_def.h, namespace
// HcclContextDef; the device's HcclOpResParam goes on past rWinStart, the twin's stops there): the same head, then
// the rank's own windows, its windowsExp and, at rWinStart bytes from the context, one RemoteResPtr per rank of
// the group, whose nextDevicePtr holds that rank's window addresses. A kernel reads windowsExp from it.
// rWinStart is where the device's HcclOpResParam holds its remoteRes array (asc-devkit impl/adv_api/detail/hccl/cc/
// src/aicpu_kfc/pub_inc/aicpu_operator_pub.h: "rWinStart: where HcclRankRelationRes starts"): the real kernels read
// remoteRes[rank] as a member of that struct (code: mc2/common/op_kernel/moe_distribute_base.h
// GetBaseWindAddrByRankId), asc-devkit's GetRemoteRankAddrs through rWinStart; both land on the same list.
constexpr size_t A3_REMOTE_RES_OFFSET = 2984U;  // offsetof(HcclOpResParam, remoteRes) in the device's LP64 layout
struct HcclRankRelationResV2 {
    uint32_t remoteUsrRankId = 0;
    uint32_t remoteWorldRank = 0;
    uint64_t windowsIn = 0;
    uint64_t windowsOut = 0;
    uint64_t windowsExp = 0;
};
struct RemoteResPtr {
    HcclRankRelationResV2* nextHostPtr = nullptr;
    HcclRankRelationResV2* nextDevicePtr = nullptr;
};
struct HcclOpResContext {
    uint64_t workSpace = 0;
    uint64_t workSpaceSize = 0;
    uint32_t rankId = 0;
    uint32_t rankNum = 0;
    uint64_t winSize = 0;
    uint64_t localWindowsIn = 0;
    uint64_t localWindowsOut = 0;
    char hcomId[128] = {};
    uint64_t winExpSize = 0;
    uint64_t localWindowsExp = 0;
    uint32_t rWinStart = 0;
};
static_assert(sizeof(HcclOpResContext) <= A3_REMOTE_RES_OFFSET && A3_REMOTE_RES_OFFSET % 8U == 0U,
              "the remote list lies past the fields the twin fills");
static_assert(offsetof(HcclOpResContext, winSize) == offsetof(HcclContextHead, winSize) &&
                  offsetof(HcclOpResContext, rankNum) == offsetof(HcclContextHead, rankNum),
              "the 2201 head is the prefix of the A3 context");

struct HcclGroup;
// What lies in front of every context GetHcclContext hands out: InitV2 finds its group through it.
struct ContextTag {
    uint64_t magic = 0x48434c47U;  // "HCLG": InitV2 rejects any other context address
    HcclGroup* group = nullptr;
};

// One HCCL communicator as one rank sees it: GetHcclContext<index>() hands the kernel Context(), the context as
// the product's device lays it out (ProductFacts: with windowsExp, Atlas A3's HcclOpResParam; else the
// HcclCombineOpParam of __NPU_ARCH__ 3510, whose head is all a 2201 kernel may read).
struct HcclGroup {
    uint32_t rankId = 0;
    std::vector<uint8_t*> windows;  // the window (windowsIn) of every member, by rank id within the group
    uint64_t windowBytes = 0;
    std::vector<uint8_t*> outWindows;  // the windowsOut of every member, windowBytes each (empty: none listed)
    std::vector<uint8_t*> expWindows;  // the windowsExp of every member (empty: the context lists none)
    uint64_t expBytes = 0;
    std::vector<uint64_t> block;  // ContextTag, then the context (and A3's remote lists), 8-byte aligned
    uint64_t contextBytes = 0;    // the bytes of the context the twin fills
    static constexpr size_t CONTEXT_GUARD = 64U * 1024U;  // past the device's largest context (950: sqs[] / cqs[])
    // An MC2 context domain (the job's `mc2_context`): the caller's op_api built the windows' addresses into this
    // input of the op, and HCCL hands the kernel no context for the group (GetHcclContext faults)
    std::string mc2Input;

    uint8_t* Context() { return reinterpret_cast<uint8_t*>(block.data()) + sizeof(ContextTag); }
    // The bytes of the context the twin fills: on 3510 HcclCombineOpParam up to windowsOut[]; on Atlas A3 up to
    // the end of its remote lists.
    uint64_t ContextBytes() const { return contextBytes; }
    // What the device's context holds past them, which the twin does not model (a read there faults naming it).
    std::string ContextNote() const
    {
        return expWindows.empty() ? "; HcclCombineOpParam up to windowsOut[], not the CCU registers or the URMA "
                                    "queues sqs[] / cqs[] past it"
                                  : "";
    }

    // What HCCL hands rank `rank` of a group whose members' windows (windowsIn, of `bytes` each) are `members`,
    // whose windowsOut (of the same size) are `outs`, and whose windowsExp (of `expBytes` each) are `exps` where
    // the product's context lists them: the context fields the device fills.
    void Attach(uint32_t rank, const std::vector<uint8_t*>& members, uint64_t bytes,
                const std::vector<uint8_t*>& exps = {}, uint64_t expSize = 0, const std::vector<uint8_t*>& outs = {})
    {
        rankId = rank;
        windows = members;
        windowBytes = bytes;
        outWindows = outs;
        expWindows = exps;
        expBytes = expSize;
        const size_t n = members.size();
        const size_t remoteAt = A3_REMOTE_RES_OFFSET;
        const size_t bytesNeeded = sizeof(ContextTag) + (exps.empty() ? sizeof(HcclContextV310)
            : remoteAt + n * (sizeof(RemoteResPtr) + sizeof(HcclRankRelationResV2)));
        // the context, then a guard no other GM region can occupy: a read past what the twin fills (the device
        // context's CCU registers and URMA queues) lands in no region and faults, never in a neighbour's buffer
        contextBytes = bytesNeeded - sizeof(ContextTag);
        block.assign((bytesNeeded + CONTEXT_GUARD + 7U) / 8U, 0U);
        new (block.data()) ContextTag{ContextTag{}.magic, this};
        if (exps.empty()) {
            auto* ctx = new (Context()) HcclContextV310{};
            ctx->rankId = rank;
            ctx->rankNum = static_cast<uint32_t>(n);
            ctx->winSize = bytes;
            for (size_t i = 0; i < n && i < CONTEXT_WINDOWS_V310; ++i) {
                ctx->windowsIn[i] = reinterpret_cast<uint64_t>(members[i]);
                ctx->windowsOut[i] = i < outs.size() ? reinterpret_cast<uint64_t>(outs[i]) : 0U;
            }
            return;
        }
        auto* ctx = new (Context()) HcclOpResContext{};
        ctx->rankId = rank;
        ctx->rankNum = static_cast<uint32_t>(n);
        ctx->winSize = bytes;
        ctx->localWindowsIn = reinterpret_cast<uint64_t>(members[rank]);
        ctx->localWindowsOut = rank < outs.size() ? reinterpret_cast<uint64_t>(outs[rank]) : 0U;
        ctx->winExpSize = expSize;
        ctx->localWindowsExp = reinterpret_cast<uint64_t>(exps[rank]);
        ctx->rWinStart = static_cast<uint32_t>(remoteAt);
        auto* remote = reinterpret_cast<RemoteResPtr*>(Context() + remoteAt);
        auto* relation = reinterpret_cast<HcclRankRelationResV2*>(Context() + remoteAt + n * sizeof(RemoteResPtr));
        for (size_t i = 0; i < n; ++i) {
            // its own entry stays 0: a kernel finds its own windows at localWindows*, as the real A3 ones do
            relation[i] = HcclRankRelationResV2{static_cast<uint32_t>(i), static_cast<uint32_t>(i),
                                                i == rank ? 0U : reinterpret_cast<uint64_t>(members[i]),
                                                i == rank || i >= outs.size() ? 0U : reinterpret_cast<uint64_t>(outs[i]),
                                                i == rank ? 0U : reinterpret_cast<uint64_t>(exps[i])};
            remote[i] = RemoteResPtr{&relation[i], &relation[i]};
        }
    }

    // The group a context address belongs to (nullptr: not one GetHcclContext handed out).
    static HcclGroup* Of(uint8_t* context)
    {
        if (context == nullptr) {
            return nullptr;
        }
        const auto* tag = reinterpret_cast<const ContextTag*>(context - sizeof(ContextTag));
        return tag->magic == ContextTag{}.magic ? tag->group : nullptr;
    }
};

// SyncAll of one rank: a reusable barrier that notices cores which finished without arriving.
struct RankBarrier {
    std::mutex mu;
    std::condition_variable cv;
    uint32_t arrived = 0;
    uint32_t finished = 0;
    std::atomic<uint64_t> generation{0};  // SyncAlls completed: the epoch of GM race checks
};

struct RankState {
    uint32_t blockDim = 0;
    uint32_t aicpuBlocks = 0;  // the AI CPU cores launched with the kernel (TilingContext::SetAicpuNumBlocks)
    std::vector<CoreCosts> costs;  // per core, filled in when the core finishes
    std::vector<HcclGroup> groups;
    RankBarrier barrier;
};

struct World {
    std::vector<GmRegion> regions;  // sorted by base, disjoint
    std::vector<RankState> ranks;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point deadline;
    double timeoutSeconds = 60.0;
    uint64_t ubBytes = 0;
    uint32_t serverRanks = 0;  // ranks per server: MTE reaches only the windows of the own server (0: all ranks)
    std::atomic<bool> aborted{false};
    std::mutex faultMu;
    std::vector<std::string> faults;
};

inline World* g_world = nullptr;

// Per-core state (one host thread per core).
struct CoreState {
    uint32_t rank = 0;
    uint32_t block = 0;
    uint32_t blockNum = 0;
    uint8_t* ub = nullptr;  // this core's UB, World::ubBytes long, 32-byte aligned
    float deqScale = 1.0f;  // SetDeqScale
    void* pipe = nullptr;   // the live TPipe (GetTPipePtr)
    // (HardEvent, event id) -> the SetFlags not yet waited for, each with the UB write count it was set at
    std::map<std::pair<int, int32_t>, std::deque<uint64_t>> flags;
    uintptr_t lastRead = 0;  // the last GM bytes this core read: a poll loop reads the same ones again
    uint64_t lastReadBytes = 0;
    uint64_t sameReads = 0;
    CoreCosts costs;
    uint64_t scalarSinceRead = 0;  // scalar accesses since the last GM read
    std::string printed;           // the last text the core printed (PRINTF)
    // SetAtomicAdd / Max / Min<T>: UB->GM copies combine with what GM holds, element by element as T (nullptr:
    // SetAtomicNone, plain stores); `atomicName` names the mode in faults
    void (*atomic)(uint8_t* gm, const uint8_t* ub, uint64_t bytes) = nullptr;
    const char* atomicName = nullptr;
    // An HCCL client of this core that sent the AICPU server a task and no Finalize yet (lib/hccl/hccl.h): what
    // it sent. A kernel that returns with one open leaves the server waiting (the device hangs).
    std::string hcclOpen;
    // The vector unit's mask register and mode (vec_mask.h): normal mode, every lane on, as a kernel starts
    bool maskCounter = false;
    uint64_t maskHigh = ~0ULL;
    uint64_t maskLow = ~0ULL;
    // The ACC_VAL register the count form of ReduceSum leaves its sum in (GetAccVal); accValSet: written at all
    uint64_t accVal = 0;
    bool accValSet = false;
    // The CTRL system register (sync.h SetCtrlSpr / GetCtrlSpr) as a kernel starts: CTRL[60] 1 (the global
    // saturation bits decide), CTRL[3] 1 and CTRL[48] 1, the runtime's Inf/NaN overflow mode, the only one of
    // Ascend 950 and the default of Atlas A2/A3 (doc: aclrtFloatOverflowMode). The twin's instructions do not read
    // it (opgen/sim/README.md: what it models of saturation).
    uint64_t ctrl = 0x1001000000000008ULL;
    // HCCL BatchWrite tasks this core committed and the AICPU server has not run yet (lib/hccl/hccl.h): run when the
    // core reads its own rank's window (a kernel waiting for what the peers' tasks deliver) or enters SyncAll (the
    // device's server progresses meanwhile: ServeTasks), at the latest at the core's Wait / Finalize
    std::vector<std::function<void()>> unserved;
};

inline thread_local CoreState* t_core = nullptr;

inline std::string Format(const char* fmt, va_list ap)
{
    char buf[2048];
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    return buf;
}

inline std::string Where()
{
    if (t_core == nullptr) {
        return "host";
    }
    return "rank " + std::to_string(t_core->rank) + " core " + std::to_string(t_core->block);
}

// Records a fault of the calling core and unwinds it.
[[noreturn]] inline void Raise(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void Raise(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string text = Where() + ": " + Format(fmt, ap);
    va_end(ap);
    if (g_world != nullptr) {
        std::lock_guard<std::mutex> lock(g_world->faultMu);
        if (!g_world->aborted.exchange(true) || g_world->faults.size() < 16U) {
            g_world->faults.push_back(text);
        }
    }
    throw Fault{text};
}

// This core's state, for an instruction that needs a core (``what`` names it in the fault outside one).
inline CoreState& Core(const char* what)
{
    if (t_core == nullptr) {
        Raise("%s outside a twin core", what);
    }
    return *t_core;
}

// CTRL as asc-devkit's InitSocStateImpl (__NPU_ARCH__ 3510) sets it at each TPipe construction and Reset, CTRL[48]
// kept (impl/basic_api/kernel_utils_base.h); ResetCtrlSpr's default too (dav_3510 kernel_operator_common_impl.h).
constexpr uint64_t CTRL_RESET = 0x1000000000000008ULL;

// The CTRL bits SetCtrlSpr / ResetCtrlSpr of __NPU_ARCH__ 3510 take (dav_3510 kernel_operator_common_impl.h).
constexpr bool CtrlBitsSettable3510(int startBit, int endBit)
{
    return (6 <= startBit && startBit <= 10 && 6 <= endBit && endBit <= 10) ||
           (startBit == endBit &&
            (startBit == 45 || startBit == 48 || startBit == 50 || startBit == 53 || startBit == 59 || startBit == 60));
}
constexpr uint64_t CTRL_KEPT_BY_RESET = 1ULL << 48;

inline void InitSocState()
{
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    if (t_core != nullptr) {
        t_core->ctrl = CTRL_RESET | (t_core->ctrl & CTRL_KEPT_BY_RESET);
    }
#endif
}

// The registered region holding [p, p + bytes), or nullptr.
inline const GmRegion* FindRegion(uintptr_t p, uint64_t bytes)
{
    if (g_world == nullptr) {
        return nullptr;
    }
    const std::vector<GmRegion>& rs = g_world->regions;
    auto it = std::upper_bound(rs.begin(), rs.end(), p, [](uintptr_t v, const GmRegion& r) { return v < r.base; });
    if (it == rs.begin()) {
        return nullptr;
    }
    --it;
    if (p - it->base + bytes > it->bytes) {
        return nullptr;
    }
    return &*it;
}

// "window of rank 1 (group 0) + 0x1f00000" for a GM address.
inline std::string DescribeGm(uintptr_t p)
{
    if (g_world != nullptr) {
        const std::vector<GmRegion>& rs = g_world->regions;
        auto it = std::upper_bound(rs.begin(), rs.end(), p, [](uintptr_t v, const GmRegion& r) { return v < r.base; });
        if (it != rs.begin()) {
            --it;
            char buf[64];
            std::snprintf(buf, sizeof(buf), " + %llu", static_cast<unsigned long long>(p - it->base));
            const bool inside = p - it->base < it->bytes;
            return it->name + buf + (inside ? "" : " (past its " + std::to_string(it->bytes) + " bytes)");
        }
    }
    char buf[48];
    std::snprintf(buf, sizeof(buf), "address 0x%llx", static_cast<unsigned long long>(p));
    return buf;
}

// An MTE access of another rank's window: on a product whose servers hold serverRanks ranks (Atlas A2), only
// the windows of the own server are reachable (HCCS), and only while the world is one server: in a world past one
// server the HCCL context is a multi-server one (multiFlag) and Hccl<AICPU>::GetWindowsInAddr(peer) returns the
// peer's RDMA memory region (IbVerbsData::remoteInput, for the AICPU server's BatchWrite), not an address an MTE
// copy may go through, for the ranks of the own server too (code: asc-devkit impl/adv_api/detail/hccl/impl/
// platform_v220/hccl_aicpu.h GetWindowsInAddr; impl/adv_api/detail/hccl/common/hccl_inner_def.h IbVerbsData).
inline void CheckServer(const GmRegion* region, uintptr_t a, uint64_t bytes, bool write)
{
    if (g_world->serverRanks == 0U || region == nullptr || region->windowOf < 0 ||
        static_cast<uint32_t>(region->windowOf) == t_core->rank) {
        return;
    }
    const uint32_t mine = t_core->rank / g_world->serverRanks;
    const uint32_t theirs = static_cast<uint32_t>(region->windowOf) / g_world->serverRanks;
    const char* access = write ? "MTE write of" : "MTE read of";
    if (mine != theirs) {
        Raise("%s %llu bytes at %s: the window of a rank on server %u, this rank is on server %u (%u ranks per "
              "server); MTE copies reach only the own server's windows, another server needs HCCL (RDMA)", access,
              static_cast<unsigned long long>(bytes), DescribeGm(a).c_str(), theirs, mine, g_world->serverRanks);
    }
    if (g_world->ranks.size() > g_world->serverRanks) {
        Raise("%s %llu bytes at %s: a world of %zu ranks spans more than one server (%u ranks per server), where "
              "Hccl::GetWindowsInAddr(%lld) returns rank %lld's RDMA memory region (multiFlag: IbVerbsData::"
              "remoteInput), not an address MTE copies reach; the ranks of the own server too need HCCL BatchWrite",
              access, static_cast<unsigned long long>(bytes), DescribeGm(a).c_str(), g_world->ranks.size(),
              g_world->serverRanks, static_cast<long long>(region->windowOf), static_cast<long long>(region->windowOf));
    }
}

// Every GM access of `bytes` at `p` by the API goes through here.
inline void CheckGm(const void* p, uint64_t bytes, const char* what)
{
    if (bytes == 0U) {
        return;
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (p == nullptr) {
        Raise("%s: %llu bytes at a null GM address", what, static_cast<unsigned long long>(bytes));
    }
    if (FindRegion(a, bytes) == nullptr) {
        Raise("%s: out-of-bounds GM access of %llu bytes at %s", what, static_cast<unsigned long long>(bytes),
              DescribeGm(a).c_str());
    }
}

// A GM read of `bytes` in `region` by this core: counted per input where the region is one.
inline void CountInputRead(const GmRegion* region, uint64_t bytes)
{
    if (region != nullptr && !region->inputName.empty()) {
        t_core->costs.inputReads[region->inputName] += bytes;
    }
}

// The AICPU server runs the BatchWrite tasks this core committed and it has not run yet (lib/hccl/hccl.h): called
// where the core waits (a read of its own rank's window, SyncAll), since the device's server progresses meanwhile.
inline void ServeTasks()
{
    if (t_core == nullptr || t_core->unserved.empty()) {
        return;
    }
    std::vector<std::function<void()>> run;
    run.swap(t_core->unserved);
    for (auto& task : run) {
        task();
    }
}

// Called on every GM read: unwinds when the world is aborted, faults past the deadline, and lets the other
// cores run while this one polls (the same bytes read again).
inline void PollPoint(const void* p, uint64_t bytes)
{
    if (g_world == nullptr || t_core == nullptr) {
        return;
    }
    if (g_world->aborted.load(std::memory_order_relaxed)) {
        throw Abort{};
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const GmRegion* region = FindRegion(a, bytes);
    CheckServer(region, a, bytes, false);
    // a poll reads again what someone may write: a window or a written region (not an input, not tiling data)
    const bool mayChange = region != nullptr && (region->windowOf >= 0 || region->writes);
    const bool window = region != nullptr && region->windowOf >= 0;
    if (window && region->windowOf == static_cast<int64_t>(t_core->rank)) {
        ServeTasks();
    }
    if (a == t_core->lastRead && bytes == t_core->lastReadBytes) {
        if (mayChange) {
            t_core->costs.bytes[COST_POLL_READ] += bytes;
            t_core->costs.scalar -= t_core->scalarSinceRead;  // the loop body that led back to this read
            t_core->costs.pollScalar += t_core->scalarSinceRead;
        } else {
            t_core->costs.bytes[COST_GM_READ] += bytes;  // the same input bytes loaded again
            CountInputRead(region, bytes);
        }
        t_core->scalarSinceRead = 0;
        ++t_core->sameReads;
        if (std::chrono::steady_clock::now() > g_world->deadline) {
            Raise("timeout: still waiting after %.0f s, polling %llu bytes at %s (a wait on a flag nobody sets?)",
                  g_world->timeoutSeconds, static_cast<unsigned long long>(bytes), DescribeGm(a).c_str());
        }
        std::this_thread::sleep_for(std::chrono::microseconds(t_core->sameReads < 64U ? 0 : 50));
    } else {
        t_core->costs.bytes[window ? COST_WINDOW_READ : COST_GM_READ] += bytes;
        CountInputRead(region, bytes);
        t_core->scalarSinceRead = 0;
        t_core->lastRead = a;
        t_core->lastReadBytes = bytes;
        t_core->sameReads = 0;
        if (std::chrono::steady_clock::now() > g_world->deadline) {
            Raise("timeout: still running after %.0f s (last GM read: %llu bytes at %s)", g_world->timeoutSeconds,
                  static_cast<unsigned long long>(bytes), DescribeGm(a).c_str());
        }
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);  // see the writes of the other cores
}

// One scalar-unit access of UB or GM by this core.
inline void CountScalar()
{
    if (t_core != nullptr) {
        ++t_core->costs.scalar;
        ++t_core->scalarSinceRead;
    }
}

// One vector instruction issue of `repeats` repeats computing `elements` lanes of `laneBytes` bytes each.
inline void CountVector(uint64_t repeats, uint64_t elements, uint64_t laneBytes)
{
    if (t_core != nullptr) {
        ++t_core->costs.vecCalls;
        t_core->costs.vecRepeats += repeats;
        t_core->costs.vecElements += elements;
        t_core->costs.vecBytes += elements * laneBytes;
    }
}

// A count-form (level 2) call over `count` lanes of `laneBytes`: the device runs it as one issue in counter mode.
inline void CountVectorCount(uint64_t count, uint64_t laneBytes)
{
    CountVector((count * laneBytes + 255U) / 256U, count, laneBytes);
}

inline void CountSync(SyncKind kind)
{
    if (t_core != nullptr) {
        ++t_core->costs.sync[kind];
    }
}

inline RankState& MyRank()
{
    return g_world->ranks[t_core->rank];
}

// A GM write of `bytes` at `p` by this core: counted by where it lands; the region it lands in (nullptr: none).
inline const GmRegion* GmWriteCounted(const void* p, uint64_t bytes)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const GmRegion* region = FindRegion(a, bytes);
    CheckServer(region, a, bytes, true);
    const int64_t owner = region == nullptr ? -1 : region->windowOf;
    t_core->costs.bytes[owner < 0 ? COST_GM_WRITE
                        : owner == static_cast<int64_t>(t_core->rank) ? COST_OWN_WINDOW_WRITE
                                                                       : COST_PEER_WINDOW_WRITE] += bytes;
    return region;
}

// The device's atomic UB->GM stores of all cores are serialised element by element; the twin serialises them whole.
inline std::mutex g_atomicMu;

// A GM write of `bytes` at `p` by this core: in a region whose writes are logged, bytes another core of the rank
// wrote since the last SyncAll make a race (the device gives no order between the cores' writes).
inline void GmWritten(const void* p, uint64_t bytes)
{
    if (g_world == nullptr || t_core == nullptr || bytes == 0U) {
        return;
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const GmRegion* region = GmWriteCounted(p, bytes);
    if (region == nullptr || !region->writes) {
        return;
    }
    const uint64_t begin = a - region->base, end = begin + bytes;
    const uint64_t epoch = MyRank().barrier.generation.load();
    WriteLog& log = *region->writes;
    std::unique_lock<std::mutex> lock(log.mu);
    auto it = log.spans.upper_bound(begin);
    if (it != log.spans.begin()) {
        --it;
    }
    std::vector<std::pair<uint64_t, WriteSpan>> keep;  // the parts of overlapped spans outside [begin, end)
    while (it != log.spans.end() && it->first < end) {
        const uint64_t b = it->first;
        const WriteSpan w = it->second;
        if (w.end <= begin) {
            ++it;
            continue;
        }
        if (w.epoch == epoch && (w.rank != t_core->rank || w.core != t_core->block)) {
            lock.unlock();
            Raise("GM race: writes %llu bytes at %s that core %u of rank %u also wrote since the last SyncAll (the "
                  "device does not order two cores' writes)", static_cast<unsigned long long>(bytes),
                  DescribeGm(region->base + std::max(b, begin)).c_str(), w.core, w.rank);
        }
        if (b < begin) {
            keep.push_back({b, WriteSpan{begin, w.rank, w.core, w.epoch}});
        }
        if (w.end > end) {
            keep.push_back({end, WriteSpan{w.end, w.rank, w.core, w.epoch}});
        }
        it = log.spans.erase(it);
    }
    for (const auto& [b, w] : keep) {
        log.spans.emplace(b, w);
    }
    log.spans.emplace(begin, WriteSpan{end, t_core->rank, t_core->block, epoch});
}

// SyncAll: every core of this rank arrives, or the barrier faults (a core finished without arriving,
// or the deadline passed).
inline void Barrier()
{
    if (g_world == nullptr || t_core == nullptr) {
        return;
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    RankState& rank = MyRank();
    RankBarrier& b = rank.barrier;
    std::unique_lock<std::mutex> lock(b.mu);
    const uint64_t gen = b.generation.load();
    if (++b.arrived == rank.blockDim) {
        b.arrived = 0;
        ++b.generation;
        b.cv.notify_all();
        return;
    }
    while (b.generation == gen) {
        if (g_world->aborted.load()) {
            --b.arrived;
            throw Abort{};
        }
        if (b.finished > 0U) {
            const uint32_t arrived = b.arrived, finished = b.finished;
            --b.arrived;
            lock.unlock();
            Raise("SyncAll: %u of %u cores of the rank arrived, %u finished the kernel without calling it (the device "
                  "hangs)", arrived, rank.blockDim, finished);
        }
        if (std::chrono::steady_clock::now() > g_world->deadline) {
            const uint32_t arrived = b.arrived;
            --b.arrived;
            lock.unlock();
            Raise("timeout in SyncAll after %.0f s: %u of %u cores of the rank arrived", g_world->timeoutSeconds,
                  arrived, rank.blockDim);
        }
        b.cv.wait_for(lock, std::chrono::milliseconds(20));
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

// A core returned from the kernel: cores blocked in SyncAll learn that it will never arrive.
inline void CoreFinished()
{
    MyRank().costs[t_core->block] = t_core->costs;
    RankBarrier& b = MyRank().barrier;
    std::lock_guard<std::mutex> lock(b.mu);
    ++b.finished;
    b.cv.notify_all();
}

// Runs `kernel(rank)` on every core of every rank of `world` (blockDim threads per rank) and returns when all
// have finished; faults are in world.faults.  The world's regions, ranks, ubBytes and timeout must be set.
inline void RunWorld(World& world, const std::function<void(uint32_t rank)>& kernel)
{
    constexpr uint8_t UB_POISON = 0xCD;  // UB holds garbage before a kernel writes it
    std::sort(world.regions.begin(), world.regions.end(),
              [](const GmRegion& a, const GmRegion& b) { return a.base < b.base; });
    g_world = &world;
    world.start = std::chrono::steady_clock::now();
    world.deadline = world.start + std::chrono::milliseconds(static_cast<int64_t>(world.timeoutSeconds * 1000.0));
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < world.ranks.size(); ++r) {
        const uint32_t blockDim = world.ranks[r].blockDim;
        world.ranks[r].costs.assign(blockDim, CoreCosts{});
        for (uint32_t b = 0; b < blockDim; ++b) {
            threads.emplace_back([&world, &kernel, r, b, blockDim]() {
                CoreState core;
                core.rank = r;
                core.block = b;
                core.blockNum = blockDim;
                const uint64_t ubBytes = (world.ubBytes + 63U) / 64U * 64U;
                std::unique_ptr<uint8_t, void (*)(void*)> ub(static_cast<uint8_t*>(std::aligned_alloc(64, ubBytes)),
                                                             std::free);
                std::memset(ub.get(), UB_POISON, ubBytes);
                core.ub = ub.get();
                t_core = &core;
                try {
                    kernel(r);
                    if (!core.hcclOpen.empty()) {
                        Raise("the kernel returned without Hccl::Finalize after %s: the AICPU server serves the "
                              "group until the client's Finalize message (the device hangs)", core.hcclOpen.c_str());
                    }
                } catch (const Fault&) {
                    // recorded by Raise
                } catch (const Abort&) {
                    // another core faulted
                } catch (const std::exception& e) {
                    try {
                        Raise("C++ exception: %s", e.what());
                    } catch (const Fault&) {
                    }
                }
                CoreFinished();
                t_core = nullptr;
            });
        }
    }
    for (std::thread& t : threads) {
        t.join();
    }
    g_world = nullptr;
}

}  // namespace opgen_sim

#endif  // OPGEN_SIM_WORLD_H
