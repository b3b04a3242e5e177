"""The twin's Ascend C API on its own: the faults it must surface and the semantics of the instructions.

``tests/sim/twin_cases.cpp`` holds one small kernel per behaviour, run on a world of 2 ranks x 2 cores;
the expected values are computed here, independently of the twin.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "opgen" / "sim" / "include"
SOURCE = ROOT / "tests" / "sim" / "twin_cases.cpp"


def _build_cases(tmp_path_factory, *defines: str, source: Path = SOURCE) -> Path:
    cxx = os.environ.get("CXX") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler (g++ or $CXX)")
    exe = tmp_path_factory.mktemp("twin") / "twin_cases"
    cmd = [cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread", "-DASCENDC_CPU_DEBUG=1",
           "-D__CCE_KT_TEST__=1", *defines, f"-I{INCLUDE}", str(source), "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return exe


@pytest.fixture(scope="module")
def twin_cases(tmp_path_factory) -> Path:
    return _build_cases(tmp_path_factory)


@pytest.fixture(scope="module")
def twin_cases_3510(tmp_path_factory) -> Path:
    """The same cases built as a kernel for __NPU_ARCH__ 3510 (Ascend 950)."""
    return _build_cases(tmp_path_factory, "-D__NPU_ARCH__=3510")


def run(exe: Path, case: str) -> tuple[list[str], list[str]]:
    proc = subprocess.run([str(exe), case], capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    lines = proc.stdout.splitlines()
    values = [ln[len("value "):] for ln in lines if ln.startswith("value ")]
    faults = [ln[len("fault "):] for ln in lines if ln.startswith("fault ")]
    assert (proc.returncode == 1) == bool(faults)
    return values, faults


FAULTS = {
    "gm_out_of_bounds": "DataCopy GM->UB src: out-of-bounds GM access of 64 bytes at gm of rank {r} + 4064",
    "global_tensor_size": "GlobalTensor::SetValue: out-of-bounds GlobalTensor access: int32_t elements [16, 17) "
                          "of a tensor of 16",
    "ub_out_of_bounds": "Duplicate: out-of-bounds UB access: float elements [0, 32) need bytes [0, 128) of UB, "
                        "the tensor's buffer is [0, 64)",
    "slice_out_of_bounds": "LocalTensor::SetValue: out-of-bounds UB access: float elements [64, 65) need bytes "
                           "[512, 516) of UB, the tensor's buffer is [256, 512)",
    "deque_without_enque": "DeQue without EnQue: the queue is empty",
    "flag_nobody_sets": "timeout: still waiting after 1 s, polling 32 bytes at gm of rank {r} + 256 "
                        "(a wait on a flag nobody sets?)",
    "overwrite_while_read": "DataCopy GM->UB dst: overwrites UB [0, 32) on pipe MTE2 (DataCopy GM->UB), read on "
                            "pipe MTE3 (DataCopy UB->GM) at [0, 32) with no sync between the two pipes",
    "write_after_setflag": "Adds: reads UB [32, 36) on pipe V (vector), written on pipe S (scalar) at [32, 36)",
    "missing_pipe_barrier_v": "Muls: reads UB [0, 32) that an earlier vector instruction wrote at [0, 32) with no "
                              "PipeBarrier<PIPE_V> between the two",
    "gm_race": "GM race: writes 32 bytes at gm of rank {r} + 32 that core",
    "waitflag_without_setflag": "WaitFlag<HardEvent 4>(0) with no SetFlag before it",
    "missing_sync": "LocalTensor::GetValue: reads UB [12, 16) on pipe S (scalar), written on pipe MTE2 "
                    "(DataCopy GM->UB) at [0, 32) with no sync between the two pipes",
    "ub_capacity": "UB capacity exceeded: 2 x 102400 bytes at UB offset 0 need 204800 bytes, the core has 196608",
    "unaligned_datacopy": "DataCopy GM->UB: 3 float elements are 12 bytes, not a whole number of 32-byte blocks",
    "syncall_missing": "SyncAll: 1 of 2 cores of the rank arrived, 1 finished the kernel without calling it",
    "stale_after_reset": "a LocalTensor of a buffer released by TPipe::Reset (UB [0, 256))",
    # TPipe::Reset waits for the free events of freed queue buffers only (asc-devkit impl/basic_api/
    # kernel_tpipe_impl.h TPipe::Reset): a TBuf's pending MTE3 read is not ordered before the next buffer's writes
    "read_across_reset": "Duplicate: overwrites UB [0, 32) on pipe V (vector), read on pipe MTE3 (DataCopy UB->GM) "
                         "at [0, 32) with no sync between the two pipes",
    "trap": "AscendC::Trap: the kernel aborted itself",
    "print_then_trap": "AscendC::Trap: the kernel aborted itself after printing: flag 7 of rank {r}",
    # Atlas A2: MTE reaches the windows of the own server only (run with one rank per server)
    "cross_server_copy": "MTE write of 32 bytes at window of rank {p} (group 0) + 0: the window of a rank on server "
                         "{p}, this rank is on server {r} (1 ranks per server); MTE copies reach only the own "
                         "server's windows, another server needs HCCL (RDMA)",
    # the HCCL contract (asc-devkit impl/adv_api/detail/hccl/impl/platform_v220/hccl_aicpu.h InitV2/SetCcTilingV2)
    "hccl_init_without_tiling": "Hccl::InitV2: Call InitV2 failed, ensure initTiling is not nullptr!",
    "hccl_init_unwritten": "Hccl::InitV2: the init tiling has version 0, not 100",
    "hccl_cc_offset_unlisted": "Hccl::SetCcTilingV2(72): no cc tiling the host built lies at this offset from the "
                               "init tiling (1 listed)",
    "hccl_cc_before_init": "Hccl::SetCcTilingV2: Call SetCcTiling failed, ensure Hccl::InitV2 func has been called",
    # BatchWrite (asc-devkit include/adv_api/hccl/hccl.h, common/hccl_aicpu_impl.h, platform_v220/hccl_aicpu.h):
    # the server's writes to another A2 server's windows, by the contract of the AICPU client
    "batch_write_not_working_core": "Hccl::BatchWrite on block 1: only block 0 (the HcclServerConfig's blockId) "
                                    "sends messages to the server; the device drops this one",
    "batch_write_without_cc_tiling": "Hccl::BatchWrite: no cc tiling of opType HCCL_CMD_BATCH_WRITE (18) was set "
                                     "with SetCcTilingV2",
    "batch_write_remote_past_window": "Hccl::BatchWrite: item 0 writes 32 bytes at window of rank {p} (group 0) + "
                                      "65520: the remote buffer must lie in the windowsIn of rank {p} (65536 bytes)",
    "batch_write_local_not_window": "Hccl::BatchWrite: item 0 reads 32 bytes at gm of rank {r} + 0: the local "
                                    "buffer must lie in this rank's windowsIn or windowsOut",
    "batch_write_source_changed": "Hccl::BatchWrite (handle 0): the 32 source bytes of item 0 at windowsOut of rank "
                                  "{r} (group 0) + 0 changed between BatchWrite and the task's end",
    "batch_write_items_changed": "Hccl::BatchWrite (handle 0): its 1 items at gm of rank {r} + 1024 changed before "
                                 "the task's end: the server reads them after BatchWrite returns",
    "batch_write_commit_again": "Hccl::Commit(0): call num is 2, expected no larger than task num 1 (BatchWrite on "
                                "__NPU_ARCH__ 2201 commits its task itself)",
    "batch_write_without_aicpu": "Hccl::BatchWrite: the launch has no AI CPU core to serve the task: the host "
                                 "tiling set none (TilingContext::SetAicpuBlockDim)",
    "batch_write_without_finalize": "the kernel returned without Hccl::Finalize after Hccl::BatchWrite (handle 1)",
    # the server may run a task as late as Finalize, so its source must hold until then, however early the twin ran it
    "batch_write_source_changed_before_finalize": "Hccl::BatchWrite (handle 0): the 64 source bytes of item 0 at "
                                                  "windowsOut of rank {r} (group 0) + 0 changed between BatchWrite "
                                                  "and the task's end",
    # Atlas A3's windowsExp is exactly winExpSize bytes (ProductFacts.exp_window for a product's jobs)
    "exp_window_overrun": "DataCopy UB->GM dst: out-of-bounds GM access of 64 bytes at windowsExp of rank {p} "
                          "(group 0) + 16352",
    # level-0 vector forms: the mask, the repeats and the strides as asc-devkit checks and the device addresses them
    "level0_mask_too_wide": "Duplicate: mask 65 outside [1, 64] for float",
    "level0_high_mask_b32": "Duplicate: mask[1] = 0x1 for float: a repeat has 64 lanes, mask[1] must be 0",
    "brcb_same_address": "Brcb: src0 and dst at one address (UB offset 0)",
    "level0_repeat_past_buffer": "Duplicate: out-of-bounds UB access: float elements [0, 192) need bytes [0, 768) "
                                 "of UB, the tensor's buffer is [0, 512)",
    "scalar_reference_store": "Adds: reads UB [0, 32) on pipe V (vector), written on pipe S (scalar) at [4, 8)",
    "masked_lane_written": "LocalTensor::GetValue: reads UB [32, 36) on pipe S (scalar), written on pipe V (vector) at "
                           "[32, 36)",
    "acc_val_unwritten": "GetAccVal: no ReduceSum has written the ACC_VAL register",
    "raw_ub_tensor_past_ub": "LocalTensor(pos, addr 196576, 16 float elements): 32 bytes past the 196608-byte UB",
    "gathermask_count_zero": "GatherMask: reduceMode with mask 0: at least 1 element a repeat",
    "sum_inner_unaligned": "Sum: SumParams {{outter 1, inner 20, n 20}}: need outter >= 1, 1 <= n <= inner and "
                           "inner * 4 bytes a multiple of 32",
    # the device calls of the Ascend 950 Setup/Teardown kernels (opgen_sim/device.h)
    "st_dev_register": "a store of 4 bytes to an address in no GM buffer: a device register (the URMA JFS / JFC "
                       "doorbell of the context's sqs[] / cqs[]), whose engine the twin does not model",
    "ascendc_assert_failed": "ascendc_assert(r > 7U) failed: rank %u is no peer (",
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_fault_is_reported_with_the_core_and_the_cause(twin_cases, case):
    values, faults = run(twin_cases, case)
    assert faults, f"{case}: the twin ran on without a fault"
    for f in faults:
        where, _, what = f.partition(": ")
        rank = int(where.split()[1])
        assert where.startswith("rank ") and " core " in where, f
        assert FAULTS[case].format(r=rank, p=1 - rank) in what, f


def test_st_dev_into_gm_is_a_scalar_store(twin_cases):
    values, faults = run(twin_cases, "st_dev_gm")
    assert (values, faults) == (["stored 7", "stored 7"], [])


def test_on_3510_dependent_vector_instructions_need_no_pipe_barrier(twin_cases_3510):
    """3510's vector functions run in order (its PipeBarrier<PIPE_V> issues nothing: asc-devkit
    impl/basic_api/kernel_reg.h), so the Duplicate -> Muls of ``missing_pipe_barrier_v`` runs there."""
    assert run(twin_cases_3510, "missing_pipe_barrier_v") == ([], [])


def test_on_3510_sum_adds_only_rows_every_order_adds_alike(twin_cases, twin_cases_3510):
    """2201 adds a row as vcadd's tree of adjacent pairs; 3510's register ReduceSum has no documented order, so the
    twin runs a row there only when every partial sum is exact (1 and fifteen 2^-4), and faults on one whose total
    depends on the order (1 and fifteen 2^-24: the tree gives 1 + 7 * 2^-23, left to right 1)."""
    lanes = np.array([1.0] + [2.0 ** -24] * 15, dtype=np.float32)
    while len(lanes) > 1:
        lanes = (lanes[0::2] + lanes[1::2]).astype(np.float32)
    assert lanes[0] == np.float32(1 + 7 * 2.0 ** -23)
    assert run(twin_cases, "sum_order_dependent") == ([f"sum {lanes[0]:.6f}"] * 2, [])
    for exe in (twin_cases, twin_cases_3510):
        assert run(exe, "sum_exact") == (["sum 1.937500"] * 2, [])
    values, faults = run(twin_cases_3510, "sum_order_dependent")
    assert values == [] and len(faults) == 2
    assert all(f.endswith("Sum (__NPU_ARCH__ 3510): row 0 of 16 float values rounds differently in different orders "
                          "of addition, and the order of Reg::ReduceSum is not documented") for f in faults), faults


def test_window_exchange_through_hccl_windows_and_a_polled_flag(twin_cases):
    values, faults = run(twin_cases, "window_exchange")
    assert not faults
    assert values == ["rank 0 got 200,207 of 2", "rank 1 got 100,107 of 2"]


def test_batch_write_reaches_another_servers_window_where_mte_copies_fault(twin_cases, twin_cases_3510):
    """One rank per server: the plain copy faults (cross_server_copy), the AICPU server's BatchWrite delivers, and
    the flag sent after Wait returned finds the rows there. On 3510 the client gives no windowsOut address."""
    values, faults = run(twin_cases, "batch_write_exchange")
    assert not faults
    assert values == ["rank 0 got 200,207", "rank 1 got 100,107"]
    values, faults = run(twin_cases_3510, "batch_write_exchange")
    assert values == [] and len(faults) == 2, faults
    for f in faults:
        assert "Hccl::GetWindowsOutAddr" in f and "on __NPU_ARCH__ 3510 the AICPU client always returns 0" in f, f


@pytest.mark.parametrize("case", ["batch_write_flag_last", "batch_write_flag_last_core_waits"])
def test_batch_write_with_no_wait_delivers_an_item_whose_last_bytes_are_its_flag(twin_cases, case):
    """As the real A2 fullmesh kernels send: one task, no Wait, the flag the item's last bytes; the peer that sees
    the flag finds the rows (an item lands in ascending address order). The server runs the task while core 0
    waits: polling its own window, or, where core 1 polls, in SyncAll."""
    values, faults = run(twin_cases, case)
    assert not faults
    assert sorted(values) == ["rank 0 got 200,207", "rank 1 got 100,107"]


def test_on_3510_the_windows_come_from_the_context_and_get_windows_in_addr_faults(twin_cases_3510):
    """No more permissive than the device: on __NPU_ARCH__ 3510 the real Hccl<AICPU>::GetWindowsInAddr returns 0
    (asc-devkit impl/adv_api/detail/hccl/impl/platform_v310/hccl_aicpu.h), so the twin faults at the call; the
    context's windowsIn[] (HcclCombineOpParam on 3510) lists the windows, and the exchange works through it."""
    values, faults = run(twin_cases_3510, "window_exchange")
    assert values == [] and len(faults) == 2, faults
    for f in faults:
        rank = int(f.split()[1])
        assert f.endswith(f"Hccl::GetWindowsInAddr({1 - rank}): on __NPU_ARCH__ 3510 the AICPU client always "
                          "returns 0; read windowsIn[] of the HCCL context (HcclCombineOpParam)"), f
    values, faults = run(twin_cases_3510, "context_window_exchange")
    assert not faults
    assert values == ["rank 0 got 200,207 of 2", "rank 1 got 100,107 of 2"]


def test_an_a3_context_lists_every_ranks_windows_exp(twin_cases):
    """Atlas A3's context is HcclContextDef::HcclOpResParam (asc-devkit hccl_inner_def.h): the rank's own
    windowsExp at localWindowsExp, a peer's through the RemoteResPtr list at rWinStart, winExpSize bytes each."""
    values, faults = run(twin_cases, "exp_window_flag")
    assert not faults
    assert values == ["rank 0 got 1 of 16384 bytes", "rank 1 got 0 of 16384 bytes"]


def test_the_twin_counts_scalar_accesses_and_bytes_by_where_they_go(twin_cases):
    """The cost lines of a run (opgen/sim/README.md) at known accesses: what benchmarks/bench_kernel_cost.py reads."""
    from opgen.sim.job import COST_FIELDS, parse_result

    proc = subprocess.run([str(twin_cases), "costs"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    costs = parse_result(proc.stdout).costs
    idle = dict.fromkeys(COST_FIELDS, 0)
    core0 = dict(idle, scalar=6, gm_read=32, gm_write=36, window_read=32, own_window_write=32, peer_window_write=64,
                 poll_read=32, poll_scalar=1, set_flag=3, wait_flag=3)  # three Sync<> pairs
    assert costs == {(0, 0): core0, (0, 1): idle, (1, 0): core0, (1, 1): idle}


def test_the_twin_counts_vector_instructions_and_synchronisation(twin_cases):
    """A level-0 call of repeatTime 3 is one issue of 3 repeats; a count-form call one issue of
    ceil(count x lane bytes / 256) repeats (opgen/sim/README.md "Costs"): twin_cases.cpp VectorSyncCosts."""
    from opgen.sim.job import COST_FIELDS, parse_result

    proc = subprocess.run([str(twin_cases), "vector_sync_costs"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    costs = parse_result(proc.stdout).costs
    idle = dict.fromkeys(COST_FIELDS, 0)
    # Duplicate 192 floats: 3 repeats; 2 x Max mask 64 repeatTime 3: 6 repeats, 384 lanes; Add 64: 1; Add 36: 1
    core0 = dict(idle, vec_calls=5, vec_repeats=3 + 6 + 1 + 1, vec_elements=192 + 384 + 64 + 36,
                 vec_bytes=4 * (192 + 384 + 64 + 36), set_flag=1, wait_flag=1, pipe_barrier=3, sync_all=1, enque=1,
                 deque=1)
    core1 = dict(idle, sync_all=1)
    assert costs == {(0, 0): core0, (0, 1): core1, (1, 0): core0, (1, 1): core1}


def test_a_wait_orders_the_writes_before_its_setflag(twin_cases):
    values, faults = run(twin_cases, "write_before_setflag")
    assert not faults


@pytest.mark.parametrize("case", ["read_across_reset_after_pipe_all", "freed_queue_across_reset"])
def test_a_reset_orders_freed_queue_buffers_and_a_pipe_all_before_it_orders_the_rest(twin_cases, case):
    values, faults = run(twin_cases, case)
    assert not faults


def test_a_syncall_orders_two_cores_writes(twin_cases):
    values, faults = run(twin_cases, "gm_writes_ordered_by_syncall")
    assert not faults


def test_compare_scalar_and_select(twin_cases):
    values, faults = run(twin_cases, "compare_select")
    assert not faults
    x = np.arange(64, dtype=np.float32) - 3
    bits = np.packbits(x >= 0, bitorder="little")
    want = np.where(x[:6] >= 0, x[:6], -1.0)
    assert values == [f"mask {bits[0]}", "select " + ",".join(f"{v:g}" for v in want)]


def test_reduce_max_and_the_block_max_of_repeats(twin_cases):
    values, faults = run(twin_cases, "reduce_maxes")
    assert not faults
    i = np.arange(256)
    x = ((i * 37) % 128 + 1000 * (i // 128)).astype(np.float32)
    blocks = x.reshape(2, 128).max(axis=1)
    folded = np.maximum(x.reshape(2, 2, 64)[:, 0], x.reshape(2, 2, 64)[:, 1])  # Max of each block's halves
    argmax = ";".join(f"{int(f.argmax())},{f.max():g}" for f in folded)  # ORDER_INDEX_VALUE pairs
    assert values == [f"argmax {argmax}", "blockmax " + ",".join(f"{v:g}" for v in blocks),
                      f"reducemax {x[:200].max():g}"]


def test_datacopy_pad_blocks_and_strides(twin_cases):
    values, faults = run(twin_cases, "pad_copy")
    assert not faults
    # GM bytes 1..20; blocks [0, 5) and [10, 15) land at UB 0 and 32; written back 1 byte apart
    assert sorted(set(values)) == ["out 1,2,3,4,5,0,11,12,13,14,15", "pad 1,5,11,15"]


def test_datacopy_params_bursts_and_block_gaps(twin_cases):
    values, faults = run(twin_cases, "burst_copy")
    assert not faults
    # GM int32 0..47: bursts GM [0, 8) and [16, 24) land at UB elements 0 and 24, go back packed to GM [64, 80)
    assert sorted(set(values)) == ["in 0,7,16,23", "out 0,16,23"]


def test_atomic_stores_combine_with_gm_and_are_no_race(twin_cases):
    values, faults = run(twin_cases, "atomic_stores")
    assert not faults
    # GM starts at 0: 0 + 1.5 + 2.5 (the two cores' floats); max(0, -5, 5) as int32
    assert sorted(set(values)) == ["sum 4.000000,4.000000 max 5,5"]


def test_cast_round_modes_to_int32(twin_cases):
    values, faults = run(twin_cases, "casts")
    assert not faults
    x = np.array([2.5, 3.5, -2.5, 1.49, 300.0, -300.0, 0.5, -0.5])
    want = {"rint": np.rint(x), "round": np.sign(x) * np.floor(np.abs(x) + 0.5), "trunc": np.trunc(x),
            "floor": np.floor(x), "ceil": np.ceil(x)}
    got = dict(v.split(" ", 1) for v in values)
    for mode, w in want.items():
        assert got[mode] == ",".join(str(int(v)) for v in w), mode


@pytest.mark.slow
def test_the_twin_has_no_arch35_type_in_a_2201_kernel(tmp_path):
    """No more permissive than the real headers (test_cann_real.test_an_arch35_type_in_a_2201_kernel_fails): the
    unguarded DispatchV2 kernel fails the twin's 2201 build on an arch35 type, and builds for 3510."""
    from opgen import sim

    from .test_cann_real import unguarded_kernel

    try:
        sim.compiler()
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    op_dir, a3_entry = unguarded_kernel(tmp_path)
    # an Ascend 950 column (MX quant: FP8 rows, E8M0 scales), by IR name
    column = {"x": "BFLOAT16", "expand_x": "FLOAT8_E4M3FN", "dynamic_scales": "FLOAT8_E8M0"}
    with pytest.raises(sim.TwinCompileError) as err:
        sim.build(op_dir, "MoeDistributeDispatchV2", 2201, column, a3_entry.relative_to(op_dir).as_posix())
    assert "moe_distribute_dispatch_v2_gen.h" in str(err.value) and "fp8_e8m0_t" in str(err.value)
    # the same class builds for 3510, in the 950 entry: what fails on 2201 is the arch's missing types
    assert sim.build(op_dir, "MoeDistributeDispatchV2", 3510, column,
                     "op_kernel/arch35/moe_distribute_dispatch_v2_apt.cpp").is_file()


def test_level0_forms_address_lanes_by_mask_repeat_and_strides(twin_cases):
    """Duplicate / GatherMask / ReduceSum / Sum / BlockReduceMax / Brcb / Copy / Mul / CreateVecIndex / ScalarGetSFFValue,
    the forms the hand-written MoE kernels call; expected values computed here from the documented addressing."""
    values, faults = run(twin_cases, "level0_forms")
    assert not faults
    x = np.arange(512) % 97
    idx = 100 + np.arange(64)
    gathered = [idx[r * 16 + j] for r in range(2) for j in (0, 2, 9)]
    block_max = [int(x[b * 8:b * 8 + 8].max()) for b in range(16)]
    fmt = ",".join
    assert values == sorted([
        "duplicate 7,7,-1,7,-1,7,7,7",
        f"gathermask 6:{fmt(map(str, gathered))}",
        f"reducesum {int(x[0:40:8].sum())}",
        f"sum {int(x[0:70].sum())},{int(x[72:142].sum())}",
        f"blockmax {fmt(map(str, block_max))}",
        f"brcb {block_max[9]},{block_max[15]}",
        "copy 68,69",
        f"brcb0 {block_max[3]},{block_max[7]}",
        f"mul {x[163] * block_max[5]},{x[255] * block_max[7]}",
        "sff 4,-1",
    ])


def test_a_read_through_local_tensor_operator_call_needs_no_scalar_to_vector_sync(twin_cases):
    values, faults = run(twin_cases, "scalar_reference_read")
    assert not faults and values == ["scalar reference 6", "scalar reference 6", "scalar reference 6",
                                     "scalar reference 6"]


def test_a_masked_instruction_leaves_the_lanes_it_does_not_run_untouched(twin_cases):
    values, faults = run(twin_cases, "masked_lane_untouched")
    # element 1 keeps the bytes the twin fills a core's UB with (0xCD), on each of the 4 cores
    poison = int(np.frombuffer(bytes([0xCD] * 4), dtype=np.int32)[0])
    assert not faults and values == [f"masked lane {poison}"] * 4


def test_tensors_on_ub_addresses_acc_val_and_not(twin_cases):
    """~0x00F0 as int16 is -241; the int16 tensor of 16 elements is 8 int32 through ReinterpretCast; the count-form
    ReduceSum of 0..63 leaves 2016 in ACC_VAL."""
    values, faults = run(twin_cases, "raw_ub_tensors")
    assert not faults and values == ["raw -241 8 2016"] * 4



@pytest.fixture(scope="module")
def twin_cases_2201(tmp_path_factory) -> Path:
    """The cases built as a kernel for __NPU_ARCH__ 2201 (Atlas A2 / A3)."""
    return _build_cases(tmp_path_factory, "-D__NPU_ARCH__=2201")


def test_the_count_form_reduce_sum_drains_the_vector_pipe(twin_cases_2201, twin_cases_3510, twin_cases):
    """The count-form ReduceSum waits V -> S before it returns: dav_c220's ReduceSumImpl then stores the sum with
    the scalar unit and waits S -> V and S -> MTE3 (three SetFlag / WaitFlag pairs), dav_3510's reads it (one pair).
    So a DataCopy GM->UB over the bytes the vector instructions before it read needs no sync of the kernel's (the
    real A2 combine's CalTokenActiveMask relies on it), and the pairs are counted. Built for no __NPU_ARCH__ the
    twin knows no such wait and faults."""
    from opgen.sim.job import parse_result

    for exe, pairs in ((twin_cases_2201, 3), (twin_cases_3510, 1)):
        proc = subprocess.run([str(exe), "reduce_sum_drains_vector"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert [ln for ln in proc.stdout.splitlines() if ln.startswith("value ")] == ["value sum 32"] * 2
        costs = parse_result(proc.stdout).costs
        assert [(costs[(r, 0)]["set_flag"], costs[(r, 0)]["wait_flag"]) for r in (0, 1)] == [(pairs, pairs)] * 2
    _values, faults = run(twin_cases, "reduce_sum_drains_vector")
    assert faults and all("DataCopy GM->UB dst: overwrites UB [0, 32) on pipe MTE2 (DataCopy GM->UB), read on pipe "
                          "V (vector)" in f for f in faults), faults


def test_the_ctrl_register_on_3510_as_tpipe_resets_it(twin_cases_3510):
    """CTRL[60] (1: the global saturation bits decide, 0: each instruction's own) and CTRL[48] on __NPU_ARCH__ 3510:
    1 and 1 as a kernel starts (the runtime's Inf/NaN mode), as SetCtrlSpr sets them, and after TPipe::Reset the
    default 0x1000000000000008 with CTRL[48] kept (asc-devkit kernel_utils_base.h InitSocStateImpl), which is why the
    real 950 kernels select per-instruction saturation again after each reset; ResetCtrlSpr restores one bit."""
    values, faults = run(twin_cases_3510, "ctrl_register")
    assert not faults
    assert values == [f"ctrl 11 00 10 {0x1000000000000008} 10"] * 4  # 2 ranks x 2 cores


def _syntax_check(snippet: str, arch: int | None, tmp_path: Path) -> subprocess.CompletedProcess:
    cxx = os.environ.get("CXX") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler (g++ or $CXX)")
    src = tmp_path / "ctrl.cpp"
    src.write_text('#include "kernel_operator.h"\nvoid Probe() { ' + snippet + ' }\n', encoding="utf-8")
    defines = [] if arch is None else [f"-D__NPU_ARCH__={arch}"]
    return subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1",
                           *defines, f"-I{INCLUDE}", str(src)], capture_output=True, text=True)


# (snippet, the arch it fails on, the error, the arch it compiles on or None)
CTRL_API = [
    ("AscendC::SetCtrlSpr<60, 60>(0);", 2201, "startBit and endBit must be both 48 on current platform", 3510),
    ("AscendC::ResetCtrlSpr<60, 60>();", 2201, "ResetCtrlSpr", 3510),
    ("AscendC::SetCtrlSpr<49, 49>(0);", 3510, "Invalid startBit/endBit on current device", None),
    ("(void)AscendC::GetCtrlSpr<48, 48>();", None, "GetCtrlSpr", 2201),
]


@pytest.mark.parametrize("snippet, arch, error, compiles_on", CTRL_API)
def test_the_ctrl_register_api_exists_only_where_the_headers_declare_it(snippet, arch, error, compiles_on, tmp_path):
    """As the asc-devkit headers declare them: SetCtrlSpr / GetCtrlSpr on __NPU_ARCH__ 2201 (CTRL[48] only) and
    3510 (its bit list), ResetCtrlSpr on 3510 only, none without an arch."""
    bad = _syntax_check(snippet, arch, tmp_path)
    assert bad.returncode != 0 and error in bad.stderr, bad.stderr[-2000:]
    if compiles_on is not None:
        ok = _syntax_check(snippet, compiles_on, tmp_path)
        assert ok.returncode == 0, ok.stderr[-2000:]
