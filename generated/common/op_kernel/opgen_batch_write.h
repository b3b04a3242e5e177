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
 * A file of opgen's kernel helpers, copied into the generated tree's common/op_kernel/ (not generated: edit it in
 * opgen's templates/cpp/common/op_kernel/). The kernels whose ranks reach the ranks of other servers through HCCL
 * BatchWrite (DispatchV2's and the combine families') include it inside the op's namespace, after the kernel helpers
 * and what templates/cpp/op_kernel/_batch_write.j2 renders from the spec and the product table, BatchWriteItemsAt;
 * WindowOut is opgen_kernel_context.h's. BW_ITEM_U64 and BW_CHUNK are opgen.emit.tiling_layout's
 * BATCH_WRITE_ITEM_BYTES / 8 and BATCH_WRITE_CHUNK, which the host tiling's workspace and UB plan count
 * (tests/test_kernel_share.py checks them against it).
 *
 * Where MTE copies stop at the server (tiling.serverRanks, the product table's ranks_per_server: Atlas A2, whose
 * servers reach each other over RDMA only) and the world spans more than one server, a kernel stages what it sends
 * to every other rank (ReachedByBatchWrite) in its own windowsOut; core 0 then hands the AICPU server one item per
 * contiguous piece ({local, remote, count, dataType, rank}: asc-devkit include/adv_api/hccl/hccl.h BatchWriteItem).
 * DispatchV2 and CombineV2 each send one task with no Wait whose items each end with a flag (the bytes of one item
 * land in ascending order, the items of a task in no order), as the real A2 fullmesh kernels do.
 */
#ifndef OPGEN_BATCH_WRITE_H
#define OPGEN_BATCH_WRITE_H

constexpr uint32_t BW_ITEM_U64 = 4U; // one item: 4 uint64 words (asc-devkit include/adv_api/hccl/hccl.h BatchWriteItem)
constexpr uint32_t BW_CHUNK = 16U;   // items built in UB per copy to the workspace
constexpr uint32_t BW_UB_BYTES = BW_CHUNK * BW_ITEM_U64 * 8U + FLAG_BYTES; // the item chunk and one staged flag

// Whether rank `me` sends to rank `rank` by BatchWrite rather than by MTE, in a world of `world` ranks where MTE
// copies reach the ranks of servers of `serverRanks` (0: every rank). A world past one server sends to every other
// rank by BatchWrite, the ranks of its own server too: there the HCCL context is a multi-server one (multiFlag) and
// Hccl<AICPU>::GetWindowsInAddr(peer) returns the peer's RDMA memory region (IbVerbsData::remoteInput), no address
// an MTE copy may go through (code: asc-devkit impl/adv_api/detail/hccl/impl/platform_v220/hccl_aicpu.h
// GetWindowsInAddr, impl/adv_api/detail/hccl/common/hccl_inner_def.h IbVerbsData); the real A2 fullmesh kernels do
// so (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h Process, isSingleServer_
// = worldSize_ <= A2_RANK_NUM_PER_SERVER; ConstructBatchWriteInfo writes one item per rank of the world).
__aicore__ inline bool ReachedByBatchWrite(uint32_t serverRanks, uint32_t world, uint32_t me, uint32_t rank)
{
    return serverRanks != 0U && world > serverRanks && rank != me;
}

// One BatchWrite task in the making, on core 0 (the HcclServerConfig's working core, the only one whose messages
// reach the server): items are built in UB and copied to the workspace BW_CHUNK at a time.
class BatchWriteList {
public:
    __aicore__ inline void Init(GM_ADDR items, uint32_t capacity, const LocalTensor<uint64_t> &ub)
    {
        itemsAddr_ = items;
        items_.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t *>(items));
        capacity_ = capacity;
        ub_ = ub;
        count_ = 0U;
    }
    // A write of `bytes` from this rank's window at `local` to rank `rank`'s windowsIn at `remote`.
    __aicore__ inline void Add(GM_ADDR local, GM_ADDR remote, uint64_t bytes, uint32_t rank)
    {
        RequireFits(static_cast<uint64_t>(count_) + 1UL, capacity_);
        const uint32_t at = (count_ % BW_CHUNK) * BW_ITEM_U64;
        ub_.SetValue(at, reinterpret_cast<uint64_t>(local));
        ub_.SetValue(at + 1U, reinterpret_cast<uint64_t>(remote));
        ub_.SetValue(at + 2U, bytes); // elements of HCCL_DATA_TYPE_INT8: bytes
        ub_.SetValue(at + 3U, (static_cast<uint64_t>(rank) << 32U) | static_cast<uint64_t>(HCCL_DATA_TYPE_INT8));
        ++count_;
        if (count_ % BW_CHUNK == 0U) {
            Flush(BW_CHUNK);
        }
    }
    // Sends the items added since the last Send as one task, committed (BatchWrite<true>), with no Wait, as the real
    // A2 fullmesh kernels send (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h
    // SendToMoeExpert): the server writes the items while the kernel goes on, Finalize waits for the last task. The
    // items and their source bytes stay as they are until then; the items land in no order, the bytes of one item
    // in ascending order, so a flag a receiver may trust ends the item of the bytes it announces.
    template <typename HcclClient>
    __aicore__ inline HcclHandle Send(HcclClient &hccl)
    {
        if (count_ % BW_CHUNK != 0U) {
            Flush(count_ % BW_CHUNK);
        }
        if (count_ == 0U) {
            return -1; // a task of no items is invalid (the client returns handle -1): none is sent
        }
        PipeBarrier<PIPE_ALL>(); // the items are in GM before the server reads them
        const HcclHandle handle = hccl.template BatchWrite<true>(itemsAddr_, count_);
        if (handle < 0) {
            Trap(); // the client refused the task (too many tasks in one kernel): nothing was sent
        }
        count_ = 0U;
        return handle;
    }

private:
    __aicore__ inline void Flush(uint32_t n)
    {
        SyncFunc<HardEvent::S_MTE3>();
        DataCopy(items_[static_cast<uint64_t>(count_ - n) * BW_ITEM_U64], ub_, n * BW_ITEM_U64);
        SyncFunc<HardEvent::MTE3_S>();
    }

    GM_ADDR itemsAddr_{nullptr};
    GlobalTensor<uint64_t> items_;
    LocalTensor<uint64_t> ub_;
    uint32_t capacity_{0U};
    uint32_t count_{0U};
};

#endif // OPGEN_BATCH_WRITE_H
