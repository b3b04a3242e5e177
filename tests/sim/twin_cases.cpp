/**
 * Small kernels written against the twin's Ascend C API (opgen/sim/include), one per behaviour the twin must
 * have: the faults it must surface and the semantics of the instructions the templates emit.
 * `twin_cases CASE` runs CASE on a world of 2 ranks x 2 cores (UB 192 KiB, 1 s deadline), then prints
 * `fault <message>` per fault and `value <text>` per value the case reports; tests/test_sim_twin.py checks them.
 */
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// the host header first: the kernel headers define the DT_* / FORMAT_* ids as macros (basic_api/kernel_type.h,
// kernel code only, as in CANN), which would rewrite ge::DataType's enumerators after them
#include "tiling/hccl/hccl_tiling.h"
#include "kernel_operator.h"
#include "lib/hccl/hccl.h"
#include "adv_api/reduce/sum.h"

using namespace AscendC;

namespace {
constexpr uint64_t GM_BYTES = 4096;
constexpr uint64_t WINDOW_BYTES = 64 * 1024;
constexpr uint64_t EXP_BYTES = 16 * 1024;  // the windowsExp of the exp_* cases (an Atlas A3 context)
std::vector<uint8_t*> g_gm;  // per rank
std::mutex g_outMu;
std::vector<std::string> g_values;

void Report(const std::string& v)
{
    std::lock_guard<std::mutex> lock(g_outMu);
    g_values.push_back(v);
}

std::string Floats(const LocalTensor<float>& t, uint32_t n)
{
    std::string s;
    for (uint32_t i = 0; i < n; ++i) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%s%g", i ? "," : "", static_cast<double>(t.GetValue(i)));
        s += buf;
    }
    return s;
}

using Case = std::function<void(uint32_t rank)>;

// SetFlag then WaitFlag of one event: what the source pipe wrote is visible to the destination pipe.
template <HardEvent E>
void Sync()
{
    SetFlag<E>(0);
    WaitFlag<E>(0);
}

// One 32-byte UB buffer and the rank's GM as int32: the setting of the small kernels below.
struct OneBlock {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    LocalTensor<int32_t> ub;
    GlobalTensor<int32_t> gm;
    explicit OneBlock(uint32_t rank)
    {
        pipe.InitBuffer(buf, 32);
        ub = buf.Get<int32_t>();
        gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm[rank]));
    }
};

// ---- faults ---------------------------------------------------------------------------------------------------
void GmOutOfBounds(uint32_t rank)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 8192);
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(g_gm[rank]));
    DataCopy(buf.Get<float>(), gm[GM_BYTES / 4 - 8], 16);  // 32 bytes past the end
}

void GlobalTensorSize(uint32_t rank)
{
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm[rank]), 16);
    gm.SetValue(16, 1);
}

void UbOutOfBounds(uint32_t)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    Duplicate(buf.Get<float>(), 1.0f, 32);  // 128 bytes into a 64-byte buffer
}

void SliceOutOfBounds(uint32_t)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> slot = buf.GetWithOffset<float>(64, 256);  // bytes [256, 512)
    slot.SetValue(64, 0.0f);  // the first float of the next slot
}

void DeQueWithoutEnQue(uint32_t)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> que;
    pipe.InitBuffer(que, 2, 256);
    LocalTensor<float> t = que.AllocTensor<float>();
    (void)t;
    LocalTensor<float> u = que.DeQue<float>();
    (void)u;
}

void FlagNobodySets(uint32_t rank)
{
    OneBlock k(rank);
    LocalTensor<int32_t>& ub = k.ub;
    GlobalTensor<int32_t>& gm = k.gm;
    while (true) {  // the pattern of WaitEntries: poll until the flag is set
        DataCopy(ub, gm[64], 8);
        Sync<HardEvent::MTE2_S>();
        if (ub.GetValue(0) == 0x3F800000) {
            break;
        }
    }
}

void MissingSync(uint32_t rank)
{
    OneBlock k(rank);
    LocalTensor<int32_t>& ub = k.ub;
    GlobalTensor<int32_t>& gm = k.gm;
    DataCopy(ub, gm, 8);
    (void)ub.GetValue(3);  // no SetFlag/WaitFlag<MTE2_S> between the copy and the scalar read
}

void OverwriteWhileRead(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;  // one core: the other would race on the same GM bytes
    }
    OneBlock k(rank);
    LocalTensor<int32_t>& ub = k.ub;
    GlobalTensor<int32_t>& gm = k.gm;
    Duplicate(ub, 7, 8);
    Sync<HardEvent::V_MTE3>();
    DataCopy(gm, ub, 8);      // MTE3 reads ub ...
    DataCopy(ub, gm[8], 8);   // ... while MTE2 may already overwrite it: no MTE3_MTE2 sync between
}

// A SetFlag orders the writes before it: x[0] is safe for the vector pipe after the wait, x[8] is not.
void WriteAfterSetFlag(uint32_t rank, uint32_t readFrom)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 128);
    LocalTensor<float> x = buf.Get<float>();
    x.SetValue(0, 1.0f);
    SetFlag<HardEvent::S_V>(0);
    x.SetValue(8, 2.0f);
    WaitFlag<HardEvent::S_V>(0);
    LocalTensor<float> y = x[readFrom];
    Adds(y, y, 1.0f, 1);
    (void)rank;
}

// LocalTensor::operator() hands out a reference: reading through it, as the real dispatch does
// (`int32_t n = dstExpIdTensor_(0);`), orders nothing and needs no S_V before the next vector write; storing
// through it is a scalar write a vector read must wait for.
void ScalarReference(uint32_t, bool store)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    LocalTensor<int32_t> x = buf.Get<int32_t>();
    Duplicate(x, 5, 8);
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    const int32_t seen = x(0);
    if (store) {
        x(1) = seen + 1;
    }
    Adds(x, x, 1, 8);
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    Report("scalar reference " + std::to_string(x.GetValue(0)));
}

// A level-0 instruction touches the lanes its mask runs, nothing between them: with mask bits 0x0101... a
// Duplicate writes element 0 of each 32-byte block, so the scalar unit may read element 1 at once (the real
// dispatch fills sumCoreTensor and statusTensor_ so); element 8 needs a V_S first.
void MaskedLanes(uint32_t, uint32_t index)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<int32_t> x = buf.Get<int32_t>();
    uint64_t bits[2] = {0x0101010101010101ULL, 0ULL};
    Duplicate<int32_t>(x, 5, bits, 1, 1, 8);
    Report("masked lane " + std::to_string(x.GetValue(index)));
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
}

// What the real A2 kernels use: tensors made on a UB address (bounded by the UB, GetSize() the declared count, kept
// through ReinterpretCast), the ACC_VAL register a count-form ReduceSum leaves its sum in, Not.
void RawUbTensors(uint32_t, int which)
{
    TPipe pipe;
    LocalTensor<int16_t> a{TPosition::LCM, 0, 16};
    LocalTensor<float> f{TPosition::LCM, 1024, 64};
    LocalTensor<float> work{TPosition::LCM, 2048, 64};
    switch (which) {
        case 0: {
            Duplicate<int16_t>(a, static_cast<int16_t>(0x00F0), 16);
            PipeBarrier<PIPE_V>();
            Not(a, a, 16);
            for (uint32_t i = 0; i < 64; ++i) {
                f.SetValue(i, static_cast<float>(i));
            }
            SetFlag<HardEvent::S_V>(0);
            WaitFlag<HardEvent::S_V>(0);
            ReduceSum(work, f, work[32], 64);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            Report("raw " + std::to_string(a.GetValue(3)) + " " + std::to_string(a.ReinterpretCast<int32_t>().GetSize()) +
                   " " + std::to_string(static_cast<int>(GetAccVal<float>())));
            break;
        }
        case 1:  // no ReduceSum wrote ACC_VAL yet
            (void)GetAccVal<float>();
            break;
        default:  // past the end of the UB
        {
            LocalTensor<float> tail{TPosition::LCM, 192 * 1024 - 32, 16};
            (void)tail;
        }
    }
}

// The real A2 combine's token count (moe_distribute_combine_a2.h CalTokenActiveMask): a mask cast to half, summed
// by the count-form ReduceSum, read from ACC_VAL, then overwritten by the next DataCopy GM->UB with no sync of the
// kernel's own: ReduceSum waits V -> S inside (dav_c220 / dav_3510 ReduceSumImpl), so that is no race.
void ReduceSumDrainsVector(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    LocalTensor<half> mask{TPosition::LCM, 0, 16};
    LocalTensor<half> halves{TPosition::LCM, 32, 16};
    GlobalTensor<half> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(g_gm[rank]));
    Duplicate(mask, static_cast<half>(1.0f), 16);
    PipeBarrier<PIPE_V>();
    Adds(halves, mask, static_cast<half>(1.0f), 16);
    PipeBarrier<PIPE_V>();
    ReduceSum(mask, halves, mask, 16);
    const int sum = static_cast<int>(static_cast<float>(GetAccVal<half>()));
    DataCopy(mask, gm, 16);  // overwrites what Adds read and ReduceSum wrote
    Report("sum " + std::to_string(sum));
}

void MissingPipeBarrierV(uint32_t)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    LocalTensor<float> x = buf.Get<float>();
    Duplicate(x, 1.0f, 8);
    Muls(x, x, 2.0f, 8);  // depends on the Duplicate: PipeBarrier<PIPE_V> belongs in between
}

// Both cores of a rank write the same GM bytes; with `barrier`, a SyncAll orders the two writes.
void SameGmBytes(uint32_t rank, bool barrier)
{
    OneBlock k(rank);
    Duplicate(k.ub, static_cast<int32_t>(GetBlockIdx()), 8);
    Sync<HardEvent::V_MTE3>();
    if (GetBlockIdx() == 1 && barrier) {
        SyncAll<true>();
    }
    DataCopy(k.gm[8], k.ub, 8);
    if (GetBlockIdx() == 0 && barrier) {
        SyncAll<true>();
    }
}

void WaitFlagWithoutSetFlag(uint32_t)
{
    WaitFlag<HardEvent::MTE2_V>(0);
}

void UbCapacity(uint32_t)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> que;
    pipe.InitBuffer(que, 2, 100 * 1024);
}

void UnalignedDataCopy(uint32_t rank)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(g_gm[rank]));
    DataCopy(buf.Get<float>(), gm, 3);  // 12 bytes: DataCopyPad's job
}

void SyncAllMissing(uint32_t)
{
    if (GetBlockIdx() == 0) {
        return;  // core 0 never arrives
    }
    SyncAll<true>();
}

void StaleAfterReset(uint32_t)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<float> t = buf.Get<float>();
    pipe.Reset();
    t.SetValue(0, 1.0f);
}

// TPipe::Reset orders only the queue buffers freed and not allocated since (it waits for their free events): a
// TBuf's MTE3 read still runs when the buffer InitBuffer gives after the reset at the same UB is written, unless a
// PipeBarrier<PIPE_ALL> (`barrier`) stands before the reset; a freed queue buffer (`queue`) needs none.
void ReadAcrossReset(uint32_t rank, bool queue, bool barrier)
{
    if (GetBlockIdx() != 0) {
        return;  // one core: the other would race on the same GM bytes
    }
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm[rank]));
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    TQue<TPosition::VECOUT, 1> que;
    if (queue) {
        pipe.InitBuffer(que, 1, 32);
        LocalTensor<int32_t> out = que.AllocTensor<int32_t>();
        Duplicate(out, 7, 8);
        que.EnQue(out);
        out = que.DeQue<int32_t>();
        DataCopy(gm, out, 8);  // MTE3 reads the queue buffer ...
        que.FreeTensor(out);   // ... and its free event is what the reset waits for
    } else {
        pipe.InitBuffer(buf, 32);
        LocalTensor<int32_t> ub = buf.Get<int32_t>();
        Duplicate(ub, 7, 8);
        Sync<HardEvent::V_MTE3>();
        DataCopy(gm, ub, 8);  // MTE3 reads the TBuf: nothing the reset waits for
    }
    if (barrier) {
        PipeBarrier<PIPE_ALL>();
    }
    pipe.Reset();
    TBuf<TPosition::VECCALC> next;
    pipe.InitBuffer(next, 32);
    Duplicate(next.Get<int32_t>(), 5, 8);  // the same UB, on the vector pipe
}

// The HCCL tilings of one EP group as a host tiling builds them (the twin's Mc2CcTilingConfig), laid out as the
// generated tiling data start: the init tiling, then the cc tiling.
struct HcclTilings {
    Mc2InitTiling init;
    Mc2CcTiling cc;
};

HcclTilings BuildTilings(uint32_t opType, const char* algConfig)
{
    HcclTilings t{};
    AscendC::Mc2CcTilingConfig config("ep", opType, algConfig);
    if (config.GetTiling(t.init) != 0U || config.GetTiling(t.cc) != 0U) {
        std::abort();
    }
    return t;
}

const HcclTilings& EpTilings()
{
    static const HcclTilings tilings = BuildTilings(8U, "AlltoAll=level0:fullmesh;level1:pairwise");
    return tilings;
}

// The EP group's HCCL client, initialised as the generated kernels do it.
void InitEp(Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU>& hccl)
{
    hccl.InitV2(GetHcclContext<0>(), &EpTilings().init);
    hccl.SetCcTilingV2(offsetof(HcclTilings, cc));
}

// One core's EP HCCL client and a UB buffer of `ubBytes`.
struct EpCore {
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    explicit EpCore(uint32_t ubBytes)
    {
        InitEp(hccl);
        pipe.InitBuffer(buf, ubBytes);
    }
};

// InitV2 with no init tiling: the device reads its device type from it to decode the context.
void HcclInitWithoutTiling(uint32_t)
{
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    hccl.InitV2(GetHcclContext<0>(), nullptr);
}

// An init tiling Mc2CcTilingConfig::GetTiling never wrote.
void HcclInitUnwritten(uint32_t)
{
    static const HcclTilings zero{};
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    hccl.InitV2(GetHcclContext<0>(), &zero.init);
}

// SetCcTilingV2 at an offset where the host built no cc tiling.
void HcclCcOffsetUnlisted(uint32_t)
{
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    hccl.InitV2(GetHcclContext<0>(), &EpTilings().init);
    hccl.SetCcTilingV2(offsetof(HcclTilings, cc) + 8U);
}

// SetCcTilingV2 before InitV2.
void HcclCcBeforeInit(uint32_t)
{
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    hccl.SetCcTilingV2(offsetof(HcclTilings, cc));
}

// ---- semantics ------------------------------------------------------------------------------------------------
// The base of `rank`'s window: from the HCCL client, or (fromContext) from the context's windowsIn[] list, which
// only the 3510 context has.
GM_ADDR WindowOf(Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU>& hccl, uint32_t rank, bool fromContext)
{
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    if (fromContext) {
        return reinterpret_cast<GM_ADDR>(
            reinterpret_cast<__gm__ HcclCombineOpParam*>(GetHcclContext<0>())->windowsIn[rank]);
    }
#else
    (void)fromContext;
#endif
    return hccl.GetWindowsInAddr(rank);
}

// The 8 ints a rank sends: 100 * (rank + 1) + i, ready for MTE3.
void FillRankRow(const LocalTensor<int32_t>& ub, uint32_t rank)
{
    for (uint32_t i = 0; i < 8; ++i) {
        ub.SetValue(i, static_cast<int32_t>(100 * (rank + 1) + i));
    }
    Sync<HardEvent::S_MTE3>();
}

// Each rank writes {rank + 1} rows into its peer's window, then a flag; the peer polls the flag and reads.
void WindowExchange(uint32_t rank, bool fromContext)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    InitEp(hccl);
    if (GetBlockIdx() != 0) {
        return;
    }
    const uint32_t peer = 1U - hccl.GetRankId();
    LocalTensor<int32_t> ub = buf.Get<int32_t>();
    FillRankRow(ub, rank);
    GlobalTensor<int32_t> theirs;
    theirs.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(WindowOf(hccl, peer, fromContext)));
    DataCopy(theirs, ub, 8);
    PipeBarrier<PIPE_MTE3>();
    Sync<HardEvent::MTE3_S>();
    ub.SetValue(0, 0x3F800000);
    Sync<HardEvent::S_MTE3>();
    DataCopy(theirs[8], ub, 8);
    Sync<HardEvent::MTE3_MTE2>();  // ub is read by that copy before the polls below overwrite it
    GlobalTensor<int32_t> mine;
    mine.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(WindowOf(hccl, hccl.GetRankId(), fromContext)));
    do {
        DataCopy(ub, mine[8], 8);
        Sync<HardEvent::MTE2_S>();
    } while (ub.GetValue(0) != 0x3F800000);
    DataCopy(ub, mine, 8);
    Sync<HardEvent::MTE2_S>();
    Report("rank " + std::to_string(rank) + " got " + std::to_string(ub.GetValue(0)) + "," +
           std::to_string(ub.GetValue(7)) + " of " + std::to_string(hccl.GetRankDim()));
}

// A plain copy into the peer's window, run with one rank per server (Atlas A2 across servers): a fault.
void CrossServerCopy(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    EpCore core(32U);
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU>& hccl = core.hccl;
    LocalTensor<int32_t> ub = core.buf.Get<int32_t>();
    Duplicate(ub, static_cast<int32_t>(rank), 8);
    Sync<HardEvent::V_MTE3>();
    GlobalTensor<int32_t> peer;
    peer.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(hccl.GetWindowsInAddr(1U - rank)));
    DataCopy(peer, ub, 8);
}

// ---- BatchWrite: the AICPU server's writes into a peer's window (Atlas A2 across servers) -------------------
// The HCCL tilings of a BatchWrite group (opType HCCL_CMD_BATCH_WRITE), as the A2 tilings build them.
const HcclTilings& BatchWriteTilings()
{
    static const HcclTilings tilings = BuildTilings(18U, "BatchWrite=level1:fullmesh");
    return tilings;
}

enum class BatchWriteFlaw { NONE, NOT_WORKING_CORE, NO_CC_TILING, REMOTE_PAST_WINDOW, LOCAL_NOT_WINDOW,
                            SOURCE_CHANGED, ITEMS_CHANGED, NO_FINALIZE, COMMIT_AGAIN };

// Polls this rank's windowsIn until int `flagAt` of the 8 after its first 8 is 1 (the peer's flag), then reports the
// first 8 (the peer's ints).
void ReportDelivered(Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU>& hccl, const LocalTensor<int32_t>& ub, uint32_t rank,
                     uint32_t flagAt)
{
    GlobalTensor<int32_t> mine;
    mine.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(hccl.GetWindowsInAddr(hccl.GetRankId())));
    Sync<HardEvent::MTE3_MTE2>();
    do {
        DataCopy(ub, mine[8], 8);
        Sync<HardEvent::MTE2_S>();
    } while (ub.GetValue(flagAt) != 1);
    DataCopy(ub, mine, 8);
    Sync<HardEvent::MTE2_S>();
    Report("rank " + std::to_string(rank) + " got " + std::to_string(ub.GetValue(0)) + "," +
           std::to_string(ub.GetValue(7)));
}

// Core 0 of each rank stages 8 ints in its windowsOut and BatchWrites them into the peer's windowsIn, waits, then
// sends a flag the same way; the peer polls its own window for the flag and reads the ints. Run with one rank per
// server: the server's writes are not MTE copies, so they reach another server.
void BatchWriteExchange(uint32_t rank, BatchWriteFlaw flaw)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    const HcclTilings& tilings = flaw == BatchWriteFlaw::NO_CC_TILING ? EpTilings() : BatchWriteTilings();
    hccl.InitV2(GetHcclContext<0>(), &tilings.init);
    hccl.SetCcTilingV2(offsetof(HcclTilings, cc));
    const uint32_t working = flaw == BatchWriteFlaw::NOT_WORKING_CORE ? 1U : 0U;
    if (GetBlockIdx() != working) {
        return;
    }
    const uint32_t peer = 1U - hccl.GetRankId();
    LocalTensor<int32_t> ub = buf.Get<int32_t>();
    FillRankRow(ub, rank);
    GM_ADDR out = hccl.GetWindowsOutAddr(hccl.GetRankId());
    GlobalTensor<int32_t> staged;
    staged.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out));
    DataCopy(staged, ub, 8);
    Sync<HardEvent::MTE3_S>();
    // the items, in this rank's GM: {local, remote, count, dataType, remoteRankId}
    GlobalTensor<uint64_t> items;
    items.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t*>(g_gm[rank] + 1024));
    uint64_t local = reinterpret_cast<uint64_t>(out);
    if (flaw == BatchWriteFlaw::LOCAL_NOT_WINDOW) {
        local = reinterpret_cast<uint64_t>(g_gm[rank]);
    }
    const uint64_t remoteOffset = flaw == BatchWriteFlaw::REMOTE_PAST_WINDOW ? WINDOW_BYTES - 16U : 0U;
    items.SetValue(0, local);
    items.SetValue(1, reinterpret_cast<uint64_t>(hccl.GetWindowsInAddr(peer)) + remoteOffset);
    items.SetValue(2, 8U);
    items.SetValue(3, (static_cast<uint64_t>(peer) << 32) | HCCL_DATA_TYPE_INT32);
    HcclHandle data = hccl.BatchWrite<true>(g_gm[rank] + 1024, 1U);
    if (flaw == BatchWriteFlaw::COMMIT_AGAIN) {
        hccl.Commit(data);
    }
    if (flaw == BatchWriteFlaw::ITEMS_CHANGED) {
        items.SetValue(2, 4U);  // the server has not necessarily read the count yet
    }
    if (flaw == BatchWriteFlaw::SOURCE_CHANGED) {
        ub.SetValue(0, 0);
        Sync<HardEvent::S_MTE3>();
        DataCopy(staged, ub, 8);
        Sync<HardEvent::MTE3_S>();
    }
    hccl.Wait(data);
    // the flag: 1 at int 8 of the peer's window, sent once the rows are there
    ub.SetValue(0, 1);
    Sync<HardEvent::S_MTE3>();
    DataCopy(staged[8], ub, 8);
    Sync<HardEvent::MTE3_S>();
    items.SetValue(0, local + 32U);
    items.SetValue(1, reinterpret_cast<uint64_t>(hccl.GetWindowsInAddr(peer)) + 32U);
    HcclHandle flag = hccl.BatchWrite<true>(g_gm[rank] + 1024, 1U);
    hccl.Wait(flag);
    ReportDelivered(hccl, ub, rank, 0U);
    if (flaw != BatchWriteFlaw::NO_FINALIZE) {
        hccl.Finalize();
    }
}

// As the real A2 fullmesh kernels send (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/
// moe_distribute_dispatch_a2.h ConstructBatchWriteInfo, SendToMoeExpert, WaitDispatch): core 0 of each rank stages
// 8 ints and, after them, a flag in its windowsOut and sends both as one item of one task, with no Wait; the peer
// polls the flag at the item's end, then reads the ints; Finalize ends the calls. `changeAfter`: core 0 then
// changes the staged ints before Finalize, which the device may not have sent yet (a fault however early the twin
// ran the task). `coreWaits`: core 0 leaves the polling to core 1 and waits in SyncAll (the server still runs).
void BatchWriteFlagLast(uint32_t rank, bool changeAfter, bool coreWaits)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU> hccl;
    hccl.InitV2(GetHcclContext<0>(), &BatchWriteTilings().init);
    hccl.SetCcTilingV2(offsetof(HcclTilings, cc));
    const uint32_t peer = 1U - hccl.GetRankId();
    LocalTensor<int32_t> ub = buf.Get<int32_t>();
    GM_ADDR out = hccl.GetWindowsOutAddr(hccl.GetRankId());
    GlobalTensor<int32_t> staged;
    staged.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out));
    if (GetBlockIdx() == 0) {
        FillRankRow(ub, rank);
        DataCopy(staged, ub, 8);
        Sync<HardEvent::MTE3_S>();
        for (uint32_t i = 0; i < 8; ++i) {
            ub.SetValue(i, i == 7U ? 1 : 0);  // the flag: the item's last int
        }
        Sync<HardEvent::S_MTE3>();
        DataCopy(staged[8], ub, 8);
        Sync<HardEvent::MTE3_S>();
        GlobalTensor<uint64_t> items;
        items.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t*>(g_gm[rank] + 1024));
        items.SetValue(0, reinterpret_cast<uint64_t>(out));
        items.SetValue(1, reinterpret_cast<uint64_t>(hccl.GetWindowsInAddr(peer)));
        items.SetValue(2, 16U);
        items.SetValue(3, (static_cast<uint64_t>(peer) << 32) | HCCL_DATA_TYPE_INT32);
        (void)hccl.BatchWrite<true>(g_gm[rank] + 1024, 1U);
    }
    if (GetBlockIdx() == (coreWaits ? 1 : 0)) {
        ReportDelivered(hccl, ub, rank, 7U);
    }
    SyncAll<true>();
    if (GetBlockIdx() == 0 && changeAfter) {
        ub.SetValue(0, 0);
        Sync<HardEvent::S_MTE3>();
        DataCopy(staged, ub, 8);
        Sync<HardEvent::MTE3_S>();
    }
    hccl.Finalize();
}

// A rank's windowsExp as an Atlas A3 kernel finds it in the context (HcclContextDef::HcclOpResParam): its own at
// localWindowsExp, a peer's through the RemoteResPtr list at rWinStart.
GM_ADDR ExpWindowOf(uint32_t rank)
{
    auto ctx = reinterpret_cast<__gm__ HcclContextDef::HcclOpResParam*>(GetHcclContext<0>());
    if (rank == ctx->rankId) {
        return reinterpret_cast<GM_ADDR>(ctx->localWindowsExp);
    }
    auto remote = reinterpret_cast<__gm__ HcclContextDef::RemoteResPtr*>(
        reinterpret_cast<__gm__ uint8_t*>(ctx) + ctx->rWinStart);
    return reinterpret_cast<GM_ADDR>(remote[rank].nextDevicePtr->windowsExp);
}

// Each rank sets a flag at `at` bytes into its peer's windowsExp and polls its own (at < winExpSize), or writes
// 64 bytes that straddle the end of the peer's windowsExp (a fault).
void ExpWindowFlag(uint32_t rank, bool overrun)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    EpCore core(64U);
    LocalTensor<int32_t> ub = core.buf.Get<int32_t>();
    auto ctx = reinterpret_cast<__gm__ HcclContextDef::HcclOpResParam*>(GetHcclContext<0>());
    const uint64_t at = overrun ? ctx->winExpSize - 32U : 1024U;
    Duplicate(ub, 0x3F800000 + static_cast<int32_t>(rank), 16);
    Sync<HardEvent::V_MTE3>();
    GlobalTensor<int32_t> theirs;
    theirs.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(ExpWindowOf(1U - rank) + at));
    DataCopy(theirs, ub, overrun ? 16U : 8U);
    if (overrun) {
        return;
    }
    Sync<HardEvent::MTE3_MTE2>();
    GlobalTensor<int32_t> mine;
    mine.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(ExpWindowOf(rank) + at));
    do {
        DataCopy(ub, mine, 8);
        Sync<HardEvent::MTE2_S>();
    } while (ub.GetValue(0) == 0);
    Report("rank " + std::to_string(rank) + " got " + std::to_string(ub.GetValue(0) - 0x3F800000) + " of " +
           std::to_string(ctx->winExpSize) + " bytes");
}

// What the twin counts (opgen_sim::CoreCosts): known scalar accesses and copies on core 0 of each rank.
void Costs(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    EpCore core(128U);
    Hccl<HcclServerType::HCCL_SERVER_TYPE_AICPU>& hccl = core.hccl;
    LocalTensor<int32_t> ub = core.buf.Get<int32_t>();
    ub.SetValue(0, 1);
    ub.SetValue(1, 2);
    ub.SetValue(2, 3);
    const int32_t sum = ub.GetValue(0) + ub.GetValue(1);  // 5 scalar accesses of UB
    Sync<HardEvent::S_MTE3>();
    GlobalTensor<int32_t> own, peer, gm;
    own.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(hccl.GetWindowsInAddr(rank)));
    peer.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(hccl.GetWindowsInAddr(1U - rank)));
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm[rank]));
    DataCopy(own, ub, 8);    // 32 bytes into the own window
    DataCopy(peer, ub, 16);  // 64 bytes into the peer's
    DataCopy(gm, ub, 8);     // 32 bytes into GM
    gm.SetValue(64, sum);    // a scalar store: 4 bytes into GM
    Sync<HardEvent::MTE3_MTE2>();
    DataCopy(ub[8], gm[16], 8);  // 32 bytes from GM
    DataCopy(ub[16], own, 8);    // 32 bytes from a window
    (void)ub.GetValue(2);        // a poll loop's body
    DataCopy(ub[24], own, 8);    // the same 32 bytes again: a poll
    Sync<HardEvent::MTE2_S>();
}

// What the twin counts of vector instructions and synchronisation (opgen/sim/README.md "Costs"), on core 0 of each
// rank: one count-form Duplicate of 192 floats, two level-0 Max of mask 64 and repeatTime 3, two count-form Adds (64
// and 36 floats), three PipeBarriers, one SetFlag / WaitFlag pair, one EnQue / DeQue; every core: one SyncAll.
void VectorSyncCosts(uint32_t)
{
    if (GetBlockIdx() == 0) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        TQue<TPosition::VECOUT, 1> que;
        pipe.InitBuffer(buf, 1024);
        pipe.InitBuffer(que, 1, 256);
        LocalTensor<float> x = buf.Get<float>();
        Duplicate(x, 1.0f, 192);
        PipeBarrier<PIPE_V>();  // the twin, like the device, orders dependent vector instructions only so
        Max(x, x, x, 64, 3, BinaryRepeatParams());
        PipeBarrier<PIPE_V>();
        Max(x, x, x, 64, 3, BinaryRepeatParams());
        PipeBarrier<PIPE_V>();
        LocalTensor<float> y = que.AllocTensor<float>();
        Add(y, x, x, 64);
        que.EnQue(y);
        LocalTensor<float> z = que.DeQue<float>();
        Add(x[128], x, x, 36);
        que.FreeTensor(z);
        Sync<HardEvent::V_S>();
    }
    SyncAll();
}

void CompareSelect(uint32_t rank)
{
    if (rank != 0 || GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> x = buf.Get<float>();
    LocalTensor<uint8_t> mask = buf.GetWithOffset<uint8_t>(32, 512);
    LocalTensor<float> y = buf.GetWithOffset<float>(64, 768);
    for (uint32_t i = 0; i < 64; ++i) {
        x.SetValue(i, static_cast<float>(i) - 3.0f);
    }
    Sync<HardEvent::S_V>();
    CompareScalar(mask, x, 0.0f, CMPMODE::GE, 64);
    PipeBarrier<PIPE_V>();
    Select(y, mask, x, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 6);
    Sync<HardEvent::V_S>();
    Report("select " + Floats(y, 6));
    Report("mask " + std::to_string(mask.GetValue(0)));
}

void ReduceMaxes(uint32_t rank)
{
    if (rank != 0 || GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> x = buf.Get<float>();
    LocalTensor<float> out = buf.GetWithOffset<float>(8, 2048);
    LocalTensor<float> work = buf.GetWithOffset<float>(256, 3072);
    for (uint32_t i = 0; i < 256; ++i) {
        x.SetValue(i, static_cast<float>((i * 37U) % 128U + 1000U * (i / 128U)));  // a permutation per 128 block
    }
    Sync<HardEvent::S_V>();
    ReduceMax<float>(work, x, work[64], 200, false);
    Sync<HardEvent::V_S>();
    Report("reducemax " + Floats(work, 1));
    // block max over 128 (two repeats folded, then WholeReduceMax), as BlockMaxRow does
    Max(x, x, x[64], static_cast<uint64_t>(64), 2, BinaryRepeatParams(1, 1, 1, 16, 16, 16));
    PipeBarrier<PIPE_V>();
    WholeReduceMax<float>(out, x, 64, 2, 1, 1, 16, ReduceOrder::ORDER_ONLY_VALUE);
    LocalTensor<float> pairs = buf.GetWithOffset<float>(8, 2560);
    WholeReduceMax<float>(pairs, x, 64, 2, 1, 1, 16, ReduceOrder::ORDER_INDEX_VALUE);
    Sync<HardEvent::V_S>();
    Report("blockmax " + Floats(out, 2));
    LocalTensor<uint32_t> bits = pairs.ReinterpretCast<uint32_t>();
    Report("argmax " + std::to_string(bits.GetValue(0)) + "," + Floats(pairs[1], 1) + ";" +
           std::to_string(bits.GetValue(2)) + "," + Floats(pairs[3], 1));
}

void PadCopy(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<uint8_t> gm;
    gm.SetGlobalBuffer(g_gm[rank]);
    LocalTensor<uint8_t> ub = buf.Get<uint8_t>();
    for (uint32_t i = 0; i < 20; ++i) {
        gm.SetValue(i, static_cast<uint8_t>(i + 1));
    }
    // two blocks of 5 bytes, 5 bytes apart in GM, each landing on its own 32-byte UB block
    DataCopyPad(ub, gm, DataCopyExtParams(2, 5, 5, 0, 0), DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
    Sync<HardEvent::MTE2_S>();
    Report("pad " + std::to_string(ub.GetValue(0)) + "," + std::to_string(ub.GetValue(4)) + "," +
           std::to_string(ub.GetValue(32)) + "," + std::to_string(ub.GetValue(36)));
    Sync<HardEvent::MTE2_MTE3>();
    DataCopyPad(gm[100], ub, DataCopyExtParams(2, 5, 0, 1, 0));
    Sync<HardEvent::MTE3_S>();  // back out with a 1-byte gap
    std::string s;
    for (uint32_t i = 100; i < 111; ++i) {
        s += (i > 100 ? "," : "") + std::to_string(gm.GetValue(i));
    }
    Report("out " + s);
}

// DataCopyParams: bursts of whole 32-byte blocks, gaps in 32-byte blocks on both sides
void BurstCopy(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<int32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm[rank]));
    for (uint32_t i = 0; i < 48; ++i) {
        gm.SetValue(i, static_cast<int32_t>(i));
    }
    LocalTensor<int32_t> ub = buf.Get<int32_t>();
    // 2 bursts of 1 block (8 int32), 1 block apart in GM, 2 blocks apart in UB: GM [0, 8), [16, 24) -> UB 0, 24
    DataCopy(ub, gm, DataCopyParams(2, 1, 1, 2));
    Sync<HardEvent::MTE2_S>();
    Report("in " + std::to_string(ub.GetValue(0)) + "," + std::to_string(ub.GetValue(7)) + "," +
           std::to_string(ub.GetValue(24)) + "," + std::to_string(ub.GetValue(31)));
    Sync<HardEvent::MTE2_MTE3>();
    DataCopy(gm[64], ub, DataCopyParams(2, 1, 2, 0));  // back out, packed: GM [64, 80)
    Sync<HardEvent::MTE3_S>();
    Report("out " + std::to_string(gm.GetValue(64)) + "," + std::to_string(gm.GetValue(72)) + "," +
           std::to_string(gm.GetValue(79)));
}

// SetAtomicAdd / SetAtomicMax: both cores of a rank store into the same GM elements with no SyncAll between; no race
void AtomicStores(uint32_t rank)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64);
    GlobalTensor<float> sum;
    sum.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(g_gm[rank] + 512));
    GlobalTensor<int32_t> most;
    most.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(g_gm[rank] + 1024));
    LocalTensor<float> f = buf.Get<float>();
    Duplicate(f, 1.5f + GetBlockIdx(), 8);
    Sync<HardEvent::V_MTE3>();
    SetAtomicAdd<float>();
    DataCopy(sum, f, 8);
    SetAtomicNone();
    Sync<HardEvent::MTE3_V>();
    LocalTensor<int32_t> n = buf.Get<int32_t>();
    Duplicate(n, static_cast<int32_t>(10 * GetBlockIdx() - 5), 8);
    Sync<HardEvent::V_MTE3>();
    SetAtomicMax<int32_t>();
    DataCopy(most, n, 8);
    SetAtomicNone();
    SyncAll();
    if (GetBlockIdx() == 0) {
        Report("sum " + std::to_string(sum.GetValue(0)) + "," + std::to_string(sum.GetValue(7)) + " max " +
               std::to_string(most.GetValue(0)) + "," + std::to_string(most.GetValue(7)));
    }
}

// The level-0 forms (mask + repeats + strides) and the instructions the hand-written MoE kernels call.
struct Scratch {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    Scratch() { pipe.InitBuffer(buf, 16384); }
    template <typename T>
    LocalTensor<T> At(uint32_t byteOffset, uint32_t elems)
    {
        return buf.GetWithOffset<T>(elems, byteOffset);
    }
};

void Level0Forms(uint32_t rank)
{
    if (rank != 0 || GetBlockIdx() != 0) {
        return;
    }
    Scratch s;
    LocalTensor<float> x = s.At<float>(0, 512);
    LocalTensor<int32_t> d = s.At<int32_t>(2048, 256);
    LocalTensor<int32_t> idx = s.At<int32_t>(3072, 64);
    LocalTensor<uint32_t> pattern = s.At<uint32_t>(3328, 8);
    LocalTensor<int32_t> g = s.At<int32_t>(3584, 64);
    LocalTensor<float> out = s.At<float>(4096, 64);
    LocalTensor<float> work = s.At<float>(4352, 64);
    for (uint32_t i = 0; i < 512; ++i) {
        x.SetValue(i, static_cast<float>(i % 97U));
    }
    Sync<HardEvent::S_V>();
    // Duplicate, bit mask: lanes 0..3 and 40 of 64, 2 repeats 16 blocks apart, over a first fill of 4 whole repeats
    uint64_t bits[2] = {0xFULL | (1ULL << 40), 0ULL};
    Duplicate<int32_t>(d, -1, 64, 4, 1, 8);
    PipeBarrier<PIPE_V>();
    Duplicate<int32_t>(d, 7, bits, 2, 1, 16);
    // CreateVecIndex + GatherMask (counter mode, 10 elements a repeat, one pattern for both repeats)
    CreateVecIndex(idx, 100, 64);
    pattern.SetValue(0, 0x205U);  // elements 0, 2, 9
    Sync<HardEvent::S_V>();
    PipeBarrier<PIPE_V>();
    uint64_t kept = 0;
    GatherMask(g, idx, pattern, true, 10, {1, 2, 2, 0}, kept);  // repeat 1 starts 2 blocks (16 elements) on
    // ReduceSum level 0: element 0 of each of 5 blocks
    ReduceSum(out, x, work, 1, 5, 1);
    // Sum of 70 elements in 2 rows of 72
    PipeBarrier<PIPE_V>();
    Sum(out[8], x, work.ReinterpretCast<uint8_t>(), SumParams{2, 72, 70});
    // BlockReduceMax of 2 repeats, then Brcb of the 16 block maxima
    LocalTensor<float> bmax = s.At<float>(4608, 16);
    LocalTensor<float> wide = s.At<float>(5120, 128);
    BlockReduceMax(bmax, x, 2, 64, 1, 1, 8);
    PipeBarrier<PIPE_V>();
    Brcb(wide, bmax, 2, {1, 8});
    // Brcb with dstBlkStride 0 (the real one reads it as 1), and into every 4th block (block 4k: bmax[k]), then a
    // level-0 Mul of 32 lanes a repeat by one block of that (src1 block stride 0): prod[32r + j] = x[32r + j] * bmax[r]
    LocalTensor<float> flat = s.At<float>(6144, 64);
    LocalTensor<float> spread = s.At<float>(6400, 256);
    LocalTensor<float> prod = s.At<float>(7424, 256);
    Brcb(flat, bmax, 1, {0, 8});
    Brcb(spread, bmax, 1, {4, 32});
    PipeBarrier<PIPE_V>();
    Mul(prod, x, spread, 32, 8, {1, 1, 0, 4, 4, 4});
    // counter mode set by the kernel, used by a call with isSetMask = false: 70 elements of Copy
    LocalTensor<float> copy = s.At<float>(5632, 80);
    SetMaskCount();
    SetVectorMask<float, MaskMode::COUNTER>(0, 70);
    Copy<float, false>(copy, x, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});
    SetMaskNorm();
    ResetMask();
    Sync<HardEvent::V_S>();
    std::string dup;
    for (uint32_t i : {0U, 3U, 4U, 40U, 64U, 128U, 131U, 168U}) {
        dup += (dup.empty() ? "" : ",") + std::to_string(d.GetValue(i));
    }
    Report("duplicate " + dup);
    std::string gathered;
    for (uint64_t i = 0; i < kept; ++i) {
        gathered += (i ? "," : "") + std::to_string(g.GetValue(i));
    }
    Report("gathermask " + std::to_string(kept) + ":" + gathered);
    Report("reducesum " + Floats(out, 1));
    Report("sum " + Floats(out[8], 2));
    Report("blockmax " + Floats(bmax, 16));
    Report("brcb " + Floats(wide[8 * 9], 1) + "," + Floats(wide[8 * 15 + 7], 1));
    Report("copy " + Floats(copy[68], 2));
    Report("brcb0 " + Floats(flat[8 * 3], 1) + "," + Floats(flat[8 * 7 + 7], 1));
    Report("mul " + Floats(prod[32 * 5 + 3], 1) + "," + Floats(prod[32 * 7 + 31], 1));
    Report("sff " + std::to_string(ScalarGetSFFValue<1>(0x50ULL)) + "," + std::to_string(ScalarGetSFFValue<0>(~0ULL)));
}

void Level0Misuse(uint32_t rank, int which)
{
    if (rank != 0 || GetBlockIdx() != 0) {
        return;
    }
    Scratch s;
    LocalTensor<float> x = s.At<float>(0, 128);
    LocalTensor<float> y = s.At<float>(1024, 64);
    uint64_t kept = 0;
    switch (which) {
        case 0:  // a continuous mask wider than a repeat of float
            Duplicate<float>(x, 1.0f, 65, 1, 1, 8);
            break;
        case 1:  // reduceMode with mask 0
            GatherMask(y, x, static_cast<uint8_t>(7), true, 0, {1, 1, 0, 0}, kept);
            break;
        case 2:  // SumParams whose inner is not 32-byte aligned
            Sum(y, x, SumParams{1, 20, 20});
            break;
        case 3:  // 2 repeats, 8 blocks apart, past the 128 floats of x
            Duplicate<float>(x, 1.0f, 64, 3, 1, 8);
            break;
        case 5:  // Brcb from a tensor into itself (asc-devkit asserts src0 and dst differ)
            Brcb(x, x, 1, {1, 8});
            break;
        default:  // mask[1] set for a 32-bit type
        {
            uint64_t bits[2] = {1ULL, 1ULL};
            Duplicate<float>(x, 1.0f, bits, 1, 1, 8);
        }
    }
}

// The device calls of the Ascend 950 Setup/Teardown kernels (opgen_sim/device.h) and Sum's rows: 0, a Sum of 16
// floats whose total rounds differently in different orders (1 and fifteen 2^-24); 1, the same row of exact values
// (1 and fifteen 2^-4); 2, st_dev to an address in no GM buffer (a doorbell); 3, st_dev into GM; 4, a failed
// ascendc_assert.
void DeviceCalls(uint32_t r, int which)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    Scratch s;
    LocalTensor<float> x = s.At<float>(0, 64);
    LocalTensor<float> y = s.At<float>(1024, 8);
    GlobalTensor<uint32_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(g_gm[r]));
    static uint32_t doorbell = 0;
    switch (which) {
        case 0:
        case 1:
            for (uint32_t i = 0; i < 16; ++i) {
                x.SetValue(i, i == 0 ? 1.0f : (which == 0 ? 0x1p-24f : 0x1p-4f));
            }
            SetFlag<HardEvent::S_V>(0);
            WaitFlag<HardEvent::S_V>(0);
            Sum(y, x, SumParams{1, 16, 16});
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            Report("sum " + std::to_string(y.GetValue(0)));
            break;
        case 2:
            st_dev(7U, &doorbell, 0);
            break;
        case 3:
            st_dev(7U, reinterpret_cast<__gm__ uint32_t*>(g_gm[r]) + 8, 0);
            Report("stored " + std::to_string(gm.GetValue(8)));
            break;
        default:
            ascendc_assert(r > 7U, "rank %u is no peer", r);
    }
}

#ifdef OPGEN_SIM_REAL_CHECK_WINSIZE
// A real kernel helper of the hand-written ops (check_winsize.h of ../shared/cann, or a mutated temp copy): the
// window check traps the device on purpose with a DataCopy the hardware rejects when HCCL's window is smaller than
// the one tiling assumed (tests/test_real_kernel_twin.py).
#include OPGEN_SIM_REAL_CHECK_WINSIZE
void RealCheckWindowSize(uint32_t rank)
{
    if (GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    CheckWindowSize(2U << 20U, 1U << 20U, &pipe, reinterpret_cast<GM_ADDR>(g_gm[rank]));
}
#endif

void Casts(uint32_t rank)
{
    if (rank != 0 || GetBlockIdx() != 0) {
        return;
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> x = buf.Get<float>();
    const float in[8] = {2.5f, 3.5f, -2.5f, 1.49f, 300.0f, -300.0f, 0.5f, -0.5f};
    for (uint32_t i = 0; i < 8; ++i) {
        x.SetValue(i, in[i]);
    }
    Sync<HardEvent::S_V>();
    LocalTensor<int32_t> r = buf.GetWithOffset<int32_t>(8, 256);
    const RoundMode modes[] = {RoundMode::CAST_RINT, RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC,
                               RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL};
    const char* names[] = {"rint", "round", "trunc", "floor", "ceil"};
    for (uint32_t m = 0; m < 5; ++m) {
        Cast(r, x, modes[m], 8);
        Sync<HardEvent::V_S>();
        std::string s;
        for (uint32_t i = 0; i < 8; ++i) {
            s += (i ? "," : "") + std::to_string(r.GetValue(i));
        }
        Report(std::string(names[m]) + " " + s);
    }
}

#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
// The CTRL register on __NPU_ARCH__ 3510: CTRL[60] and CTRL[48] as a kernel starts, after SetCtrlSpr, after
// TPipe::Reset (which sets CTRL to its default and keeps CTRL[48]) and after ResetCtrlSpr<60, 60>.
void CtrlRegister(uint32_t)
{
    TPipe pipe;
    const auto bits = []() {
        return std::to_string(GetCtrlSpr<60, 60>()) + std::to_string(GetCtrlSpr<48, 48>());
    };
    std::string seen = bits();
    SetCtrlSpr<60, 60>(0);
    SetCtrlSpr<48, 48>(0);
    seen += " " + bits();
    pipe.Reset();
    seen += " " + bits() + " " + std::to_string(GetCtrlSpr<0, 63>());
    SetCtrlSpr<60, 60>(0);
    ResetCtrlSpr<60, 60>();
    seen += " " + bits();
    Report("ctrl " + seen);
}

#endif
const std::map<std::string, Case>& Cases()
{
    static const std::map<std::string, Case> cases = {
        {"gm_out_of_bounds", GmOutOfBounds},
        {"global_tensor_size", GlobalTensorSize},
        {"ub_out_of_bounds", UbOutOfBounds},
        {"slice_out_of_bounds", SliceOutOfBounds},
        {"deque_without_enque", DeQueWithoutEnQue},
        {"flag_nobody_sets", FlagNobodySets},
        {"waitflag_without_setflag", WaitFlagWithoutSetFlag},
        {"missing_sync", MissingSync},
        {"overwrite_while_read", OverwriteWhileRead},
        {"missing_pipe_barrier_v", MissingPipeBarrierV},
        {"gm_race", [](uint32_t r) { SameGmBytes(r, false); }},
        {"gm_writes_ordered_by_syncall", [](uint32_t r) { SameGmBytes(r, true); }},
        {"write_after_setflag", [](uint32_t r) { WriteAfterSetFlag(r, 8); }},
        {"write_before_setflag", [](uint32_t r) { WriteAfterSetFlag(r, 0); }},
        {"ub_capacity", UbCapacity},
        {"unaligned_datacopy", UnalignedDataCopy},
        {"syncall_missing", SyncAllMissing},
        {"stale_after_reset", StaleAfterReset},
        {"read_across_reset", [](uint32_t r) { ReadAcrossReset(r, false, false); }},
        {"read_across_reset_after_pipe_all", [](uint32_t r) { ReadAcrossReset(r, false, true); }},
        {"freed_queue_across_reset", [](uint32_t r) { ReadAcrossReset(r, true, false); }},
        {"trap", [](uint32_t) { Trap(); }},
        {"print_then_trap", [](uint32_t r) {
             PRINTF("flag %u of rank %u\n", 7U, r);
             Trap();
         }},
        {"hccl_init_without_tiling", HcclInitWithoutTiling},
        {"hccl_init_unwritten", HcclInitUnwritten},
        {"hccl_cc_offset_unlisted", HcclCcOffsetUnlisted},
        {"hccl_cc_before_init", HcclCcBeforeInit},
        {"window_exchange", [](uint32_t r) { WindowExchange(r, false); }},
        {"context_window_exchange", [](uint32_t r) { WindowExchange(r, true); }},
        {"costs", Costs},
        {"vector_sync_costs", VectorSyncCosts},
        {"cross_server_copy", CrossServerCopy},
        {"batch_write_exchange", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::NONE); }},
        {"batch_write_not_working_core", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::NOT_WORKING_CORE); }},
        {"batch_write_without_cc_tiling", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::NO_CC_TILING); }},
        {"batch_write_remote_past_window",
         [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::REMOTE_PAST_WINDOW); }},
        {"batch_write_local_not_window", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::LOCAL_NOT_WINDOW); }},
        {"batch_write_source_changed", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::SOURCE_CHANGED); }},
        {"batch_write_items_changed", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::ITEMS_CHANGED); }},
        {"batch_write_without_finalize", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::NO_FINALIZE); }},
        {"batch_write_commit_again", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::COMMIT_AGAIN); }},
        {"batch_write_without_aicpu", [](uint32_t r) { BatchWriteExchange(r, BatchWriteFlaw::NONE); }},
        {"batch_write_flag_last", [](uint32_t r) { BatchWriteFlagLast(r, false, false); }},
        {"batch_write_flag_last_core_waits", [](uint32_t r) { BatchWriteFlagLast(r, false, true); }},
        {"batch_write_source_changed_before_finalize", [](uint32_t r) { BatchWriteFlagLast(r, true, false); }},
        {"exp_window_flag", [](uint32_t r) { ExpWindowFlag(r, false); }},
        {"exp_window_overrun", [](uint32_t r) { ExpWindowFlag(r, true); }},
        {"compare_select", CompareSelect},
        {"reduce_maxes", ReduceMaxes},
        {"pad_copy", PadCopy},
        {"casts", Casts},
        {"burst_copy", BurstCopy},
        {"atomic_stores", AtomicStores},
        {"level0_forms", Level0Forms},
        {"masked_lane_untouched", [](uint32_t r) { MaskedLanes(r, 1); }},
        {"masked_lane_written", [](uint32_t r) { MaskedLanes(r, 8); }},
        {"raw_ub_tensors", [](uint32_t r) { RawUbTensors(r, 0); }},
        {"reduce_sum_drains_vector", ReduceSumDrainsVector},
        {"acc_val_unwritten", [](uint32_t r) { RawUbTensors(r, 1); }},
        {"raw_ub_tensor_past_ub", [](uint32_t r) { RawUbTensors(r, 2); }},
        {"scalar_reference_read", [](uint32_t r) { ScalarReference(r, false); }},
        {"scalar_reference_store", [](uint32_t r) { ScalarReference(r, true); }},
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        {"ctrl_register", CtrlRegister},
#endif
#ifdef OPGEN_SIM_REAL_CHECK_WINSIZE
        {"real_check_winsize", RealCheckWindowSize},
#endif
        {"level0_mask_too_wide", [](uint32_t r) { Level0Misuse(r, 0); }},
        {"gathermask_count_zero", [](uint32_t r) { Level0Misuse(r, 1); }},
        {"sum_inner_unaligned", [](uint32_t r) { Level0Misuse(r, 2); }},
        {"level0_repeat_past_buffer", [](uint32_t r) { Level0Misuse(r, 3); }},
        {"level0_high_mask_b32", [](uint32_t r) { Level0Misuse(r, 4); }},
        {"brcb_same_address", [](uint32_t r) { Level0Misuse(r, 5); }},
        {"sum_order_dependent", [](uint32_t r) { DeviceCalls(r, 0); }},
        {"sum_exact", [](uint32_t r) { DeviceCalls(r, 1); }},
        {"st_dev_register", [](uint32_t r) { DeviceCalls(r, 2); }},
        {"st_dev_gm", [](uint32_t r) { DeviceCalls(r, 3); }},
        {"ascendc_assert_failed", [](uint32_t r) { DeviceCalls(r, 4); }},
    };
    return cases;
}
}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2 || Cases().count(argv[1]) == 0U) {
        std::fprintf(stderr, "usage: %s CASE\n", argv[0]);
        return 3;
    }
    opgen_sim::World world;
    world.ubBytes = 192 * 1024;
    world.timeoutSeconds = 1.0;
    world.ranks = std::vector<opgen_sim::RankState>(2);
    std::vector<std::unique_ptr<uint8_t[]>> memory;
    std::vector<uint8_t*> windows, exps, outs;
    const bool withExp = std::string(argv[1]).rfind("exp_", 0) == 0;  // an Atlas A3 context, with windowsExp
    for (uint32_t r = 0; r < 2; ++r) {
        memory.emplace_back(new uint8_t[GM_BYTES]());
        g_gm.push_back(memory.back().get());
        world.regions.push_back({reinterpret_cast<uintptr_t>(g_gm.back()), GM_BYTES, "gm of rank " + std::to_string(r),
                                 std::make_shared<opgen_sim::WriteLog>()});
        memory.emplace_back(new uint8_t[WINDOW_BYTES]());
        windows.push_back(memory.back().get());
        world.regions.push_back({reinterpret_cast<uintptr_t>(windows.back()), WINDOW_BYTES,
                                 "window of rank " + std::to_string(r) + " (group 0)", nullptr,
                                 static_cast<int64_t>(r)});
        memory.emplace_back(new uint8_t[WINDOW_BYTES]());
        outs.push_back(memory.back().get());
        world.regions.push_back({reinterpret_cast<uintptr_t>(outs.back()), WINDOW_BYTES,
                                 "windowsOut of rank " + std::to_string(r) + " (group 0)", nullptr,
                                 static_cast<int64_t>(r)});
        if (withExp) {
            memory.emplace_back(new uint8_t[EXP_BYTES]());
            exps.push_back(memory.back().get());
            world.regions.push_back({reinterpret_cast<uintptr_t>(exps.back()), EXP_BYTES,
                                     "windowsExp of rank " + std::to_string(r) + " (group 0)", nullptr,
                                     static_cast<int64_t>(r)});
        }
    }
    // one rank per server: the cases that reach the peer across servers
    const std::string name = argv[1];
    world.serverRanks = (name == "cross_server_copy" || name.rfind("batch_write_", 0) == 0) ? 1U : 0U;
    for (uint32_t r = 0; r < 2; ++r) {
        world.ranks[r].blockDim = 2;
        world.ranks[r].aicpuBlocks = name == "batch_write_without_aicpu" ? 0U : 6U;  // mc2tiling::AICPU_NUM_BLOCKS_A2
        world.ranks[r].groups.resize(1);
        world.ranks[r].groups[0].Attach(r, windows, WINDOW_BYTES, exps, withExp ? EXP_BYTES : 0U, outs);
    }
    opgen_sim::RunWorld(world, Cases().at(argv[1]));
    std::sort(g_values.begin(), g_values.end());
    for (const std::string& v : g_values) {
        std::printf("value %s\n", v.c_str());
    }
    for (const std::string& f : world.faults) {
        std::printf("fault %s\n", f.c_str());
    }
    for (uint32_t r = 0; r < world.ranks.size(); ++r) {
        for (uint32_t c = 0; c < world.ranks[r].costs.size(); ++c) {
            std::printf("cost %u %u %s\n", r, c, opgen_sim::CostColumns(world.ranks[r].costs[c]).c_str());
        }
    }
    return world.faults.empty() ? 0 : 1;
}
