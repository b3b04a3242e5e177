/**
 * The Ascend C HCCL client the generated kernels use to reach the HCCL windows, implemented by the twin: the
 * context GetHcclContext<index>() returns is the rank's opgen_sim::HcclGroup, whose windows are GM regions of
 * the world.  Mirrors cannmirror/asc-devkit: include/adv_api/hccl/hccl.h (class Hccl) and hccl_common.h
 * (server type, server config).  InitV2 and SetCcTilingV2 hold the kernel to the contract of the real AICPU
 * implementation (impl/adv_api/detail/hccl/impl/platform_v220/hccl_aicpu.h): InitV2 needs the init tiling the
 * host's Mc2CcTilingConfig wrote (the device reads the debug mode, queue count and device type from it, and
 * the device type decides how the context is read), SetCcTilingV2 needs InitV2 first and a cc tiling whose
 * opType is a valid HcclCMDType.  Stricter than the device where the device would go on with garbage: a
 * missing tiling, an init tiling GetTiling never wrote (version), or an offset the init tiling does not list.
 * On __NPU_ARCH__ 3510 GetWindowsInAddr faults: the real one always returns 0 there (platform_v310).
 *
 * BatchWrite (the AICPU server's RDMA writes, how Atlas A2 reaches another server's windows) follows the same
 * client (include/adv_api/hccl/hccl.h, impl/adv_api/detail/hccl/common/hccl_aicpu_impl.h CommonPrepareImpl / Wait /
 * Commit / Finalize, platform_v220 BatchWrite, which always commits; platform_v310 BatchWrite, which returns -1).
 * The twin's server runs a task's items when the core waits for it (Wait, or Finalize, which waits for the last
 * task), or earlier when the core waits otherwise: it reads its own rank's window, waiting for what the peers send,
 * or enters SyncAll (opgen_sim::ServeTasks; the device's server progresses on its own from the commit, which
 * BatchWrite<true> makes: the real A2 kernels with ranks on two servers never Wait, they poll the flags the peers'
 * BatchWrites deliver and Finalize at the end; code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/
 * moe_distribute_dispatch_a2.h SendToMoeExpert, WaitDispatch, Process). So a kernel that reads the written bytes in
 * the peer's window before its Wait returned (and waits in no other way in between) finds them absent. The device
 * may complete a task at once or as late as its Wait / Finalize, so a source or an item the kernel changes between
 * BatchWrite and that moment is a fault, however early the twin ran the task. Within a task the items land in no
 * order (the twin: last item first), the bytes of one item in ascending order (Complete, WriteAscending). Only the working core (the config's blockId, 0) sends messages to the
 * server: the device silently drops another core's; the twin faults. Stricter than the device where the device
 * logs an error and goes on: an item the server would reject or whose bytes lie outside the windows (its local
 * buffer in this rank's windowsIn / windowsOut, its remote one in the peer's windowsIn), a Commit or Wait the task does not allow, a kernel returning without Finalize.
 * Atlas A3's context is HcclContextDef::HcclOpResParam with the ranks' windowsExp (of the product's size, the
 * job's `exp_window`); on every other product the context has no windowsExp.
 */
#ifndef OPGEN_TEST_LIB_HCCL_HCCL_H
#define OPGEN_TEST_LIB_HCCL_HCCL_H

#include "kernel_operator.h"
#include "opgen_sim/hccl_tiling_msg.h"

namespace AscendC {
// hccl_inner_def.h: the RDMA memory descriptors of an Atlas A2 context (the twin's contexts list none: a kernel that
// posts RDMA work requests from the AI core itself reads them, which the twin does not model; see README) and the
// rank bounds of the contexts' window lists
struct MemDetails {
    uint64_t size;
    uint64_t addr;
    uint32_t key;
};
struct IbVerbsData {
    MemDetails remoteInput;
    MemDetails remoteOutput;
    MemDetails localInput;
    MemDetails localOutput;
    uint8_t res[24];
};
constexpr uint32_t HCCL_MAX_RANK_NUM = 32U;
constexpr uint32_t HCCL_MAX_RANK_NUM_V310 = 64U;

// What a kernel may read of the context GetHcclContext returns: on __NPU_ARCH__ 3510 the head and the windowsIn /
// windowsOut lists (hccl_inner_def.h); on 2201 the head only (an Atlas A3 context is an HcclOpResParam past it).
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
using HcclCombineOpParam = opgen_sim::HcclContextV310;
#else
using HcclCombineOpParam = opgen_sim::HcclContextHead;
#endif
// Atlas A3's context (hccl_inner_def.h declares it for every arch): only a product whose context it is
// (ProductFacts.exp_window) fills its fields past the head; elsewhere they read what the arch's context holds there.
namespace HcclContextDef {
using HcclRankRelationResV2 = opgen_sim::HcclRankRelationResV2;
using RemoteResPtr = opgen_sim::RemoteResPtr;
using HcclOpResParam = opgen_sim::HcclOpResContext;
}  // namespace HcclContextDef

using HcclHandle = int8_t;

// HcclDataType as include/adv_api/hccl/hccl_common.h numbers it
enum HcclDataType {
    HCCL_DATA_TYPE_INT8 = 0,
    HCCL_DATA_TYPE_INT16 = 1,
    HCCL_DATA_TYPE_INT32 = 2,
    HCCL_DATA_TYPE_FP16 = 3,
    HCCL_DATA_TYPE_FP32 = 4,
    HCCL_DATA_TYPE_INT64 = 5,
    HCCL_DATA_TYPE_UINT64 = 6,
    HCCL_DATA_TYPE_UINT8 = 7,
    HCCL_DATA_TYPE_UINT16 = 8,
    HCCL_DATA_TYPE_UINT32 = 9,
    HCCL_DATA_TYPE_FP64 = 10,
    HCCL_DATA_TYPE_BFP16 = 11,
    HCCL_DATA_TYPE_INT128 = 12,
    HCCL_DATA_TYPE_HIF8 = 14,
    HCCL_DATA_TYPE_FP8E4M3 = 15,
    HCCL_DATA_TYPE_FP8E5M2 = 16,
    HCCL_DATA_TYPE_FP8E8M0 = 17,
    HCCL_DATA_TYPE_MXFP8 = 18,
    HCCL_DATA_TYPE_RESERVED = 255
};

enum HcclServerType : uint8_t {
    HCCL_SERVER_TYPE_AICPU = 0,
    HCCL_SERVER_TYPE_CCU = 5,  // hccl_common.h: the Ascend 950 collective communication unit (not modelled)
    HCCL_SERVER_TYPE_END,
};

enum class CoreType : uint8_t {
    DEFAULT = 0,
    ON_AIV,
    ON_AIC,
};

struct HcclServerConfig {
    CoreType type;
    int64_t blockId;
};

inline constexpr HcclServerConfig DEFAULT_CFG = {CoreType::DEFAULT, 0};

template <HcclServerType serverType = HcclServerType::HCCL_SERVER_TYPE_AICPU, const auto& config = DEFAULT_CFG>
class Hccl {
public:
    __aicore__ void InitV2(GM_ADDR context, const void* initTiling)
    {
        if constexpr (serverType == HcclServerType::HCCL_SERVER_TYPE_CCU) {
            opgen_sim::Raise("Hccl<HCCL_SERVER_TYPE_CCU>::InitV2: the twin does not model the CCU server (the "
                             "Ascend 950 CCU paths of the real ops cannot run on it)");
        }
        if (initTiling == nullptr) {
            opgen_sim::Raise("Hccl::InitV2: Call InitV2 failed, ensure initTiling is not nullptr!");
        }
        init_ = static_cast<const opgen_sim::Mc2InitTilingInner*>(initTiling);
        if (init_->version != opgen_sim::INIT_TILING_VERSION) {
            opgen_sim::Raise("Hccl::InitV2: the init tiling has version %u, not %u: Mc2CcTilingConfig::GetTiling "
                             "did not write it", init_->version, opgen_sim::INIT_TILING_VERSION);
        }
        group_ = opgen_sim::HcclGroup::Of(context);
        if (group_ == nullptr) {
            opgen_sim::Raise("Hccl::InitV2: the context is not one GetHcclContext returned");
        }
    }
    __aicore__ int32_t SetCcTilingV2(uint64_t offset)
    {
        if (init_ == nullptr) {
            opgen_sim::Raise("Hccl::SetCcTilingV2: Call SetCcTiling failed, ensure Hccl::InitV2 func has been "
                             "called successfully!");
        }
        bool listed = false;
        for (uint32_t i = 0; i < init_->mc2HcommCnt && i < opgen_sim::MAX_CC_TILING_NUM; ++i) {
            listed = listed || init_->offset[i] == offset;
        }
        if (!listed) {
            opgen_sim::Raise("Hccl::SetCcTilingV2(%llu): no cc tiling the host built lies at this offset from the "
                             "init tiling (%u listed)", static_cast<unsigned long long>(offset), init_->mc2HcommCnt);
        }
        const auto* cc = reinterpret_cast<const opgen_sim::Mc2CcTilingInner*>(
            reinterpret_cast<const uint8_t*>(init_) + offset);
        if (cc->opType == 0U || cc->opType >= opgen_sim::HCCL_CMD_ALL) {
            opgen_sim::Raise("Hccl::SetCcTilingV2: Call SetCcTiling failed, ensure cmdType is valid (opType %u)",
                             cc->opType);
        }
        ccSet_[cc->opType] = true;  // the client's table of cc tilings by HcclCMDType (ccOpTilingDataTable_)
        return 0;
    }

    // include/adv_api/hccl/hccl.h AlltoAllvWrite: a CCU server task (InitV2 of a CCU client already faulted)
    template <bool commit = false>
    __aicore__ HcclHandle AlltoAllvWrite(GM_ADDR usrIn, GM_ADDR sendOffsets, GM_ADDR sendSizes,
                                         uint64_t remoteWinOffset, uint64_t localDataSize)
    {
        (void)usrIn, (void)sendOffsets, (void)sendSizes, (void)remoteWinOffset, (void)localDataSize;
        opgen_sim::Raise("Hccl::AlltoAllvWrite: not modelled by the twin (a CCU server task)");
    }

    // One task of BatchWrite: itemNum items of 32 bytes at batchWriteInfo (GM), each a write of `count` elements of
    // `dataType` from this rank's window to `remoteRankId`'s windowsIn.
    template <bool commit = false>
    __aicore__ HcclHandle BatchWrite(GM_ADDR batchWriteInfo, uint32_t itemNum, uint16_t queueID = 0U)
    {
        Ready("BatchWrite");
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        (void)batchWriteInfo;
        (void)itemNum;
        (void)queueID;
        opgen_sim::Raise("Hccl::BatchWrite: on __NPU_ARCH__ 3510 the AICPU client's BatchWrite always returns -1 "
                         "(platform_v310): no task is sent");
#else
        constexpr bool committed = true;  // platform_v220: CommonPrepareImpl<true> whatever `commit` says
        (void)commit;
        Working("BatchWrite");
        if (opgen_sim::MyRank().aicpuBlocks == 0U) {
            opgen_sim::Raise("Hccl::BatchWrite: the launch has no AI CPU core to serve the task: the host tiling "
                             "set none (TilingContext::SetAicpuBlockDim)");
        }
        if (!ccSet_[opgen_sim::HCCL_CMD_BATCH_WRITE]) {
            opgen_sim::Raise("Hccl::BatchWrite: no cc tiling of opType HCCL_CMD_BATCH_WRITE (%u) was set with "
                             "SetCcTilingV2: the server has no tiling for the task", opgen_sim::HCCL_CMD_BATCH_WRITE);
        }
        if (queueID != 0U && queueID >= init_->queueNum) {
            opgen_sim::Raise("Hccl::BatchWrite: queue %u, the init tiling has %u queues", queueID, init_->queueNum);
        }
        if (itemNum == 0U) {  // CheckCommonPrepareParamValid: a count of 0 is invalid, the device returns -1
            opgen_sim::Raise("Hccl::BatchWrite: Call Prepare[%u] failed, param sendCount/recvCount is 0, invalid "
                             "(the device returns handle -1 and sends nothing)", opgen_sim::HCCL_CMD_BATCH_WRITE);
        }
        if (tasks_.size() + 1U >= static_cast<size_t>(HCCL_MAX_HANDLE_ID) || messages_ + 1U >= HCCL_MSG_CNT) {
            opgen_sim::Raise("Hccl::BatchWrite: Prepare interface call num is %zu, expected no more than %d "
                             "(messages: %u of %u)", tasks_.size() + 1U, HCCL_MAX_HANDLE_ID, messages_ + 1U,
                             HCCL_MSG_CNT);
        }
        opgen_sim::CheckGm(batchWriteInfo, static_cast<uint64_t>(itemNum) * sizeof(BatchWriteItem),
                           "Hccl::BatchWrite items");
        Task task;
        task.items.resize(itemNum);
        std::memcpy(task.items.data(), batchWriteInfo, itemNum * sizeof(BatchWriteItem));
        task.itemsAt = batchWriteInfo;  // the server reads them after the message: they must stay as they are
        task.itemsSum = Sum(batchWriteInfo, itemNum * sizeof(BatchWriteItem));
        for (uint32_t i = 0; i < itemNum; ++i) {
            task.sums.push_back(Checked(task.items[i], i));
        }
        task.committed = committed;
        tasks_.push_back(std::move(task));
        ++messages_;
        const HcclHandle handle = static_cast<HcclHandle>(tasks_.size() - 1U);
        opgen_sim::t_core->hcclOpen = "Hccl::BatchWrite (handle " + std::to_string(handle) + ")";
        opgen_sim::t_core->unserved.push_back([this, handle]() {
            Task& t = tasks_[static_cast<size_t>(handle)];
            if (t.committed && !t.done) {
                Complete(handle, t);
            }
        });
        return handle;
#endif
    }
    __aicore__ void Commit(HcclHandle handleId)
    {
        Task& task = TaskOf("Commit", handleId);
        Working("Commit");
        if (task.committed) {
            opgen_sim::Raise("Hccl::Commit(%d): call num is 2, expected no larger than task num 1 (BatchWrite on "
                             "__NPU_ARCH__ 2201 commits its task itself)", handleId);
        }
        task.committed = true;
    }
    // Blocks until the task is done; 0. The twin's server runs the task here.
    __aicore__ int32_t Wait(HcclHandle handleId)
    {
        Task& task = TaskOf("Wait", handleId);
        if (!task.committed) {
            opgen_sim::Raise("Hccl::Wait(%d): Failed to wait, call num of Wait is 1, expected to be no larger than "
                             "Commit num 0", handleId);
        }
        if (task.waited) {
            opgen_sim::Raise("Hccl::Wait(%d): Failed to wait, call num of Wait is 2, expected to be no larger than "
                             "Commit num 1", handleId);
        }
        Complete(handleId, task);
        task.waited = true;
        return 0;
    }
    // No more tasks: the working core waits for the last one (sync), the server exits.
    template <bool sync = true>
    __aicore__ void Finalize()
    {
        Ready("Finalize");
        static_assert(sync, "the twin implements Finalize<true> only");
        if (!WorkingCore()) {  // the device only advances the message position of another core
            return;
        }
        for (size_t h = 0; h < tasks_.size(); ++h) {
            if (!tasks_[h].committed) {
                opgen_sim::Raise("Hccl::Finalize: task %zu was never committed: the server never runs it", h);
            }
            if (!tasks_[h].done) {
                Complete(static_cast<HcclHandle>(h), tasks_[h]);
            } else if (!tasks_[h].waited) {
                Verify(static_cast<HcclHandle>(h), tasks_[h]);  // run early (ServeTasks): the device may run it now
            }
        }
        finalized_ = true;
        opgen_sim::t_core->hcclOpen.clear();
        opgen_sim::t_core->unserved.clear();
    }
    __aicore__ GM_ADDR GetWindowsOutAddr(uint32_t rankId)
    {
        Ready("GetWindowsOutAddr");
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        opgen_sim::Raise("Hccl::GetWindowsOutAddr(%u): on __NPU_ARCH__ 3510 the AICPU client always returns 0; "
                         "read windowsOut[] of the HCCL context (HcclCombineOpParam)", rankId);
#endif
        if (rankId >= group_->outWindows.size()) {
            opgen_sim::Raise("Hccl::GetWindowsOutAddr(%u): the group has %zu ranks with windowsOut", rankId,
                             group_->outWindows.size());
        }
        return group_->outWindows[rankId];
    }
    __aicore__ GM_ADDR GetWindowsInAddr(uint32_t rankId)
    {
        Ready("GetWindowsInAddr");
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        // The device's AICPU client returns 0 here (impl/adv_api/detail/hccl/impl/platform_v310/hccl_aicpu.h): a
        // kernel that used the address would write to GM 0. The twin stops at the call instead.
        opgen_sim::Raise("Hccl::GetWindowsInAddr(%u): on __NPU_ARCH__ 3510 the AICPU client always returns 0; "
                         "read windowsIn[] of the HCCL context (HcclCombineOpParam)", rankId);
#endif
        if (rankId >= group_->windows.size()) {
            opgen_sim::Raise("Hccl::GetWindowsInAddr(%u): the group has %zu ranks", rankId, group_->windows.size());
        }
        return group_->windows[rankId];
    }
    __aicore__ uint32_t GetRankId()
    {
        Ready("GetRankId");
        return group_->rankId;
    }
    __aicore__ uint32_t GetRankDim()
    {
        Ready("GetRankDim");
        return static_cast<uint32_t>(group_->windows.size());
    }

private:
    static constexpr int8_t HCCL_MAX_HANDLE_ID = 63;  // include/adv_api/hccl/internal/hccl_msg.h
    static constexpr uint32_t HCCL_MSG_CNT = 64U;
    // BatchWriteItem, as include/adv_api/hccl/hccl.h documents it
    struct BatchWriteItem {
        uint64_t localBuf;
        uint64_t remoteBuf;
        uint64_t count;
        uint32_t dataType;
        uint32_t remoteRankId;
    };
    static_assert(sizeof(BatchWriteItem) == 32U, "32-byte items");
    struct Task {
        std::vector<BatchWriteItem> items;
        const uint8_t* itemsAt = nullptr;
        uint64_t itemsSum = 0;
        std::vector<uint64_t> sums;  // of each item's source bytes when the task was sent
        bool committed = false;
        bool done = false;
        bool waited = false;
    };

    void Ready(const char* what) const
    {
        if (group_ == nullptr) {
            opgen_sim::Raise("Hccl::%s before InitV2", what);
        }
    }
    bool WorkingCore() const { return GetBlockIdx() == config.blockId; }
    void Working(const char* what) const
    {
        if (!WorkingCore()) {
            opgen_sim::Raise("Hccl::%s on block %lld: only block %lld (the HcclServerConfig's blockId) sends messages "
                             "to the server; the device drops this one", what, static_cast<long long>(GetBlockIdx()),
                             static_cast<long long>(config.blockId));
        }
    }
    Task& TaskOf(const char* what, HcclHandle handleId)
    {
        Ready(what);
        if (handleId < 0 || static_cast<size_t>(handleId) >= tasks_.size()) {
            opgen_sim::Raise("Hccl::%s(%d): handleId[%d] was not got by Prepare interface (%zu tasks)", what, handleId,
                             handleId, tasks_.size());
        }
        if (finalized_) {
            opgen_sim::Raise("Hccl::%s(%d) after Finalize", what, handleId);
        }
        return tasks_[static_cast<size_t>(handleId)];
    }
    static uint64_t ElementBytes(uint32_t dataType)
    {
        switch (dataType) {
            case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: case HCCL_DATA_TYPE_HIF8:
            case HCCL_DATA_TYPE_FP8E4M3: case HCCL_DATA_TYPE_FP8E5M2: case HCCL_DATA_TYPE_FP8E8M0:
                return 1U;
            case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16:
            case HCCL_DATA_TYPE_BFP16:
                return 2U;
            case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32:
                return 4U;
            case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64:
                return 8U;
            case HCCL_DATA_TYPE_INT128:
                return 16U;
            default:
                return 0U;
        }
    }
    static bool Inside(uint64_t p, uint64_t bytes, const uint8_t* base, uint64_t size)
    {
        const uint64_t b = reinterpret_cast<uint64_t>(base);
        return base != nullptr && p >= b && p - b <= size && bytes <= size - (p - b);
    }
    static uint64_t Sum(const uint8_t* p, uint64_t bytes)
    {
        uint64_t h = 1469598103934665603ULL;  // FNV-1a
        for (uint64_t i = 0; i < bytes; ++i) {
            h = (h ^ p[i]) * 1099511628211ULL;
        }
        return h;
    }
    // The item's byte count, after the checks of its addresses; the sum of its source bytes.
    uint64_t Checked(const BatchWriteItem& it, uint32_t i) const
    {
        const uint64_t size = ElementBytes(it.dataType);
        if (size == 0U) {
            opgen_sim::Raise("Hccl::BatchWrite: item %u has dataType %u, not an HcclDataType of fixed size", i,
                             it.dataType);
        }
        if (it.count == 0U) {
            opgen_sim::Raise("Hccl::BatchWrite: item %u writes 0 elements", i);
        }
        const uint64_t bytes = it.count * size;
        const uint32_t me = group_->rankId;
        // the rank itself is a valid target: the real A2 dispatch sends every rank's slice, its own included, by
        // BatchWrite (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h
        // ConstructBatchWriteInfo loops over all ranks of its share)
        if (it.remoteRankId >= group_->windows.size()) {
            opgen_sim::Raise("Hccl::BatchWrite: item %u writes to rank %u, not one of the group's %zu ranks", i,
                             it.remoteRankId, group_->windows.size());
        }
        const uint64_t win = group_->windowBytes;
        const uint8_t* out = me < group_->outWindows.size() ? group_->outWindows[me] : nullptr;
        if (!Inside(it.localBuf, bytes, group_->windows[me], win) && !Inside(it.localBuf, bytes, out, win)) {
            opgen_sim::Raise("Hccl::BatchWrite: item %u reads %llu bytes at %s: the local buffer must lie in this "
                             "rank's windowsIn or windowsOut (%llu bytes each)", i,
                             static_cast<unsigned long long>(bytes), opgen_sim::DescribeGm(it.localBuf).c_str(),
                             static_cast<unsigned long long>(win));
        }
        if (!Inside(it.remoteBuf, bytes, group_->windows[it.remoteRankId], win)) {
            opgen_sim::Raise("Hccl::BatchWrite: item %u writes %llu bytes at %s: the remote buffer must lie in the "
                             "windowsIn of rank %u (%llu bytes)", i, static_cast<unsigned long long>(bytes),
                             opgen_sim::DescribeGm(it.remoteBuf).c_str(), it.remoteRankId,
                             static_cast<unsigned long long>(win));
        }
        return Sum(reinterpret_cast<const uint8_t*>(it.localBuf), bytes);
    }
    // The items and their source bytes as BatchWrite saw them: the server may read them at any moment up to the
    // task's end (a Wait, else Finalize, which waits for the last task).
    void Verify(HcclHandle handleId, const Task& task) const
    {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (Sum(task.itemsAt, task.items.size() * sizeof(BatchWriteItem)) != task.itemsSum) {
            opgen_sim::Raise("Hccl::BatchWrite (handle %d): its %zu items at %s changed before the task's end: the "
                             "server reads them after BatchWrite returns", handleId, task.items.size(),
                             opgen_sim::DescribeGm(reinterpret_cast<uintptr_t>(task.itemsAt)).c_str());
        }
        for (size_t i = 0; i < task.items.size(); ++i) {
            const BatchWriteItem& it = task.items[i];
            const uint64_t bytes = it.count * ElementBytes(it.dataType);
            if (Sum(reinterpret_cast<const uint8_t*>(it.localBuf), bytes) != task.sums[i]) {
                opgen_sim::Raise("Hccl::BatchWrite (handle %d): the %llu source bytes of item %zu at %s changed "
                                 "between BatchWrite and the task's end: the server may have sent either", handleId,
                                 static_cast<unsigned long long>(bytes), i, opgen_sim::DescribeGm(it.localBuf).c_str());
            }
        }
    }
    // The bytes of one item land in ascending address order, its last bytes last: the server posts each item as one
    // RDMA write work request (code: asc-devkit impl/adv_api/detail/hccl/cc/src/aicpu_kfc/pub_inc/transport_mem.h
    // BatchWrite: "AICPU侧批量下发读、写操作，下发wr后敲Doorbell", the items posted as WRs, then the doorbell), and the real
    // A2 fullmesh kernels end each item with the flag its receiver polls before it reads the item's other bytes
    // (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h ConstructBatchWriteInfo,
    // WaitDispatch; mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h
    // ConstructBatchWriteInfo, WaitDispatch). Release stores, 8 bytes at a time where both ends are aligned: a core
    // that sees a byte of the item sees every byte before it.
    static void WriteAscending(uint8_t* dst, const uint8_t* src, uint64_t bytes)
    {
        uint64_t i = 0U;
        for (; i < bytes && ((reinterpret_cast<uintptr_t>(dst + i) | reinterpret_cast<uintptr_t>(src + i)) & 7U) != 0U;
             ++i) {
            __atomic_store_n(dst + i, src[i], __ATOMIC_RELEASE);
        }
        for (; i + 8U <= bytes; i += 8U) {
            uint64_t v;
            std::memcpy(&v, src + i, 8U);
            __atomic_store_n(reinterpret_cast<uint64_t*>(dst + i), v, __ATOMIC_RELEASE);
        }
        for (; i < bytes; ++i) {
            __atomic_store_n(dst + i, src[i], __ATOMIC_RELEASE);
        }
    }
    // The server runs the task: every item's bytes land in the peer's window, last item first (the device gives the
    // items of a task no order: a flag sent as another item of the same task may arrive before the rows; the real
    // kernels put it in the rows' own item, after them), each item's bytes in ascending order (WriteAscending).
    void Complete(HcclHandle handleId, Task& task)
    {
        Verify(handleId, task);
        for (size_t i = task.items.size(); i-- > 0;) {
            const BatchWriteItem& it = task.items[i];
            WriteAscending(reinterpret_cast<uint8_t*>(it.remoteBuf), reinterpret_cast<const uint8_t*>(it.localBuf),
                           it.count * ElementBytes(it.dataType));
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);
        task.done = true;
    }

    opgen_sim::HcclGroup* group_ = nullptr;
    const opgen_sim::Mc2InitTilingInner* init_ = nullptr;
    bool ccSet_[opgen_sim::HCCL_CMD_ALL] = {};
    std::vector<Task> tasks_;
    uint32_t messages_ = 0U;
    bool finalized_ = false;
};
}  // namespace AscendC

#endif  // OPGEN_TEST_LIB_HCCL_HCCL_H
