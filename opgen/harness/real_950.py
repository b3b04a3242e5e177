"""The Ascend 950 Setup/Teardown family's real kernels (``op_kernel/arch35``) on the twin: the real CombineTeardown
after the window state the real CombineSetup leaves, and the real DispatchTeardown after the real DispatchSetup's.

The real CombineSetup sends with URMA (AI-core work requests into HCCL's jetty queues, then a doorbell), which the
twin does not model: it faults on its first URMA access (the queue descriptors past the context's windowsOut[]).
So the pages CombineTeardown reads are written here, at the addresses the real CombineSetup's work requests name,
with what they carry (``combine_setup_pages``; every rule cites the real kernel); the teardown itself is the real
entry, unmodified, on its real tiling.

    outputs = run_combine_teardown(tree, ref, pref, case, world, work)   # per rank {output: ndarray}
    outputs, inputs = run_dispatch_teardown(tree, ref, pref, case, world, work)   # the setup's outputs fed

The real DispatchSetup sends with URMA too; ``dispatch_setup_pages`` writes what its work requests write.

Interop: the generated CombineSetup (``setup_twin``: its ``opgen.sim.build_for``) fills the windows instead, by MTE at
the places the real work requests name (templates/cpp/common/op_kernel/opgen_family_window.h), and the real
CombineTeardown reads them:

    setup_outputs, outputs = run_generated_setup_then_real_teardown(tree, ref, pref, setup_twin, case, world, work)

and the other way: the generated CombineTeardown (``teardown_twin``) reads the pages the real CombineSetup leaves:

    outputs = run_generated_teardown_after_real_setup(tree, ref, pref, teardown_twin, case, world, work)

The Dispatch pair alike: the generated DispatchSetup then the real DispatchTeardown, and the real DispatchSetup's
pages then the generated DispatchTeardown:

    setup_outputs, outputs, inputs = run_generated_dispatch_setup_then_real_teardown(tree, ref, pref, setup_twin,
                                                                                     case, world, work, kernel_root)
    outputs, inputs = run_generated_dispatch_teardown_after_real_setup(tree, ref, pref, teardown_twin, case, world,
                                                                       work)
"""
from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import numpy as np

from opgen.harness import testkit
from opgen.sim import job as jobs
from opgen.sim import real_tiling, real_world
from opgen.runtime.scope import data
from opgen.sim.job import WINDOWS_IN, WINDOWS_OUT, write_windows

# code: mc2/moe_distribute_combine_setup/op_kernel/moe_distribute_base.h
WIN_STATE_OFFSET = 350 * 1024      # the second state half of windowsOut (dataState 1)
STATE_WIN_OFFSET = 950 * 1024      # windowsOut: each core's 0/1 data-state word, STATE_SIZE_PER_CORE apart
STATE_SIZE_PER_CORE = 512
# code: mc2/moe_distribute_combine_setup/op_kernel/arch35/moe_distribute_combine_setup_arch35.h
STATE_OFFSET = 512                 # a source rank's status slot (half of it past STATE_COUNT_THRESHOLD states)
STATE_COUNT_THRESHOLD = 512
FLAG_ONE = 0x3F800000              # 1.0f: the notify data of a rank's last expert block
# code: mc2/moe_distribute_combine_teardown/op_kernel/moe_distribute_combine_teardown_tiling_data.h
# MoeDistributeCombineTeardownInfo ends the TilingData: 12 uint32, 2 bool, then uint64 totalUbSize, totalWinSize
TOTAL_WIN_SIZE_FROM_END = 8
# code: mc2/moe_distribute_dispatch_teardown/op_kernel/moe_distribute_dispatch_teardown_tiling.h
# MoeDistributeDispatchTeardownInfo ends the TilingData: ... uint64 totalUbSize, totalWinSize, then uint32
# expertTokenNumsType, sdmaUsedStreamPerCore
DISPATCH_TEARDOWN_INFO_TAIL = 8 + 4 + 4


class OverlappingBlocks(ValueError):
    """Two of the real CombineSetup's work requests write the same window bytes: the device's result depends on
    their order."""


def _place(pages: dict, rank: int, at: int, block: bytes, who: str, sizes: str) -> None:
    """``block`` into rank's windowsIn pages at ``at``: OverlappingBlocks when another work request's block is
    there (``sizes``: how the expert block size follows from the attributes)."""
    spans = pages.setdefault((WINDOWS_IN, rank), {})
    clash = next((o for o, b in spans.items() if o < at + len(block) and at < o + len(b)), None)
    if clash is not None:
        raise OverlappingBlocks(
            f"{who} writes {len(block)} bytes at windowsIn + {at} of rank {rank}, over the block another work "
            f"request writes at + {clash} (expert block size {sizes}): what lands there depends on the order of the "
            "URMA writes, which the twin does not model")
    spans[at] = block


def state_offset(world_size: int, local_experts: int) -> int:
    """A source rank's status slot in windowsOut (``stateOffset_``)."""
    return STATE_OFFSET // 2 if world_size * local_experts > STATE_COUNT_THRESHOLD else STATE_OFFSET


def combine_setup_pages(setup_inputs: list[dict], attrs: dict, total_win_size: int, data_state: int = 0) -> dict:
    """{(kind, rank): {offset: bytes}} the real CombineSetup of every rank leaves in the windows of data state
    ``data_state`` (each core's state word, 0 in fresh windows), from its inputs (expandX, assistInfoForCombine).

    code: moe_distribute_combine_setup_arch35.h Communication, CurRankComm, CallJfsDoorbell; expert index i of
    rank d (W ranks, L = curRankExpertNum_ experts) goes to rank i % W, its local expert i / W: rows
    [assist[i-1], assist[i]) of expandX, at least one row (``max(curTokenNum, 1U)``: an empty block sends expandX's
    first row, except to itself: ``if (likely(curTokenNum > 0U)) CurRankComm``), into windowsIn + data_state *
    totalWinSize / 2 + (d * L + i / W) * maxBs * H * sizeof(T); the block of its last local expert carries the
    notify 1.0f into windowsOut + data_state * WIN_STATE_OFFSET + d * stateOffset (its own rank: a scalar store of
    the same word), the others a notify of 0 eight bytes further."""
    world_size = int(attrs["epWorldSize"])
    shared_ranks = int(attrs.get("sharedExpertRankNum", 0))
    if shared_ranks:
        raise ValueError("combine_setup_pages: shared-expert ranks are not modelled here")
    local = int(attrs["moeExpertNum"]) // world_size
    # the tiling keeps the globalBs attribute as given, 0 included (code: op_host/op_tiling/
    # moe_distribute_combine_setup_tiling_base.cpp: info.globalBs = *globalBsPtr), and the kernel divides it:
    # axisMaxBS_ = globalBs / epWorldSize, so at globalBs 0 every expert block starts at the same offset
    max_bs = int(attrs.get("globalBs", 0)) // world_size
    slot = state_offset(world_size, local)
    pages: dict = {}
    for d, inp in enumerate(setup_inputs):
        rows = np.ascontiguousarray(inp["expandX"])
        row_bytes = rows.shape[1] * rows.itemsize
        per_expert = max_bs * row_bytes
        assist = np.asarray(inp["assistInfoForCombine"], dtype=np.int64).reshape(-1)
        raw = rows.view(np.uint8).reshape(rows.shape[0], row_bytes)
        for i in range(world_size * local):
            to, expert = i % world_size, i // world_size
            pre = int(assist[i - 1]) if i > 0 else 0
            count = int(assist[i]) - pre
            if to != d or count > 0:
                first = pre if count > 0 else 0
                block = raw[first:first + max(count, 1)].tobytes()
                at = data_state * (total_win_size // 2) + (d * local + expert) * per_expert
                _place(pages, to, at, block, f"the real CombineSetup of rank {d}",
                       f"maxBs * H * sizeof(T) = {per_expert}, maxBs = globalBs / epWorldSize = {max_bs}")
            if expert == local - 1:
                flag = data_state * WIN_STATE_OFFSET + d * slot
                pages.setdefault((WINDOWS_OUT, to), {})[flag] = struct.pack("<I", FLAG_ONE)
    return pages


# code: mc2/moe_distribute_dispatch_setup/op_kernel/arch35/moe_distribute_dispatch_setup_arch35.h Init: the status
# block of every expert is 8 int32, its first the flag (Duplicate<int32_t>(statusTensor_, 0x40000000, mask, ...): 2.0f;
# the teardown waits for the flags of its slots to sum to 2.0f each), its second the token count (SetStatus)
DISPATCH_FLAG = 0x40000000
STATUS_BLOCK_WORDS = 8
WIN_ADDR_ALIGN = 512               # a token's window row: Ceil(hOutSizeAlign_, 512) * 512 bytes


class SharedExpertRanksNotSent(ValueError):
    """The real DispatchSetup sends nothing to a shared-expert rank, whose DispatchTeardown then waits for ever."""


def dispatch_setup_pages(setup_inputs: list[dict], setup_outputs: list[dict], attrs: dict, total_win_size: int,
                         data_state: int = 0) -> dict:
    """{(kind, rank): {offset: bytes}} the real DispatchSetup of every rank leaves in the windows of data state
    ``data_state`` (each core's state word, 0 in fresh windows), from its inputs (expertIds) and its output yOut.

    code: moe_distribute_dispatch_setup_arch35.h. TokenScatter sorts the (token, k) pairs by expert id and
    SendToMoeExpert writes them into yOut in that order, one ``hAlignWinSize_`` row each (yOut's row: the op's
    tokenMsgSize); SetStatus counts the pairs of every expert e (``statusTensor_(e * 8 + 1)``). Communication, for
    destination rank r and its local expert j (global expert e = r * L + j): the rows of e, ``count * hAlignWinSize_``
    bytes from yOut row ``moeStartToken + calCnt`` (the pairs of the experts before e), into windowsIn[r] + data_state
    * totalWinSize / 2 + (d * L + j) * maxBs * hAlignWinSize_ (only when count > 0; CurRankComm copies the same to
    itself); and the expert's 32-byte status block (flag, count, 0 ...) into windowsOut[r] + data_state *
    WIN_STATE_OFFSET + (d + j * W) * stateOffset (``offset = stateOffset_ * epRankId_`` when L is 1, the same)."""
    world_size = int(attrs["epWorldSize"])
    if int(attrs.get("sharedExpertRankNum", 0)):
        # code: Communication: `if (rankId < sharedExpertRankNum_) { // 给共享专家卡发数据和状态 ... }` is empty,
        # so a shared-expert rank's DispatchTeardown waits in WaitDispatch for status blocks nobody writes
        raise SharedExpertRanksNotSent(
            "the real Ascend 950 DispatchSetup sends nothing to a shared-expert rank (code: mc2/"
            "moe_distribute_dispatch_setup/op_kernel/arch35/moe_distribute_dispatch_setup_arch35.h Communication: "
            "the branch `if (rankId < sharedExpertRankNum_)` is empty), so that rank's DispatchTeardown waits for "
            "ever for its status blocks (WaitDispatch)")
    local = int(attrs["moeExpertNum"]) // world_size
    max_bs = int(attrs.get("globalBs", 0)) // world_size
    slot = state_offset(world_size, local)
    pages: dict = {}
    for d, (inp, out) in enumerate(zip(setup_inputs, setup_outputs)):
        rows = np.ascontiguousarray(out["yOut"])
        row_bytes = rows.shape[1] * rows.itemsize
        if row_bytes % WIN_ADDR_ALIGN:
            raise ValueError(f"yOut rows of {row_bytes} bytes: the real kernel's rows are {WIN_ADDR_ALIGN}-aligned")
        raw = rows.view(np.uint8).reshape(rows.shape[0], row_bytes)
        counts = np.bincount(np.asarray(inp["expertIds"], dtype=np.int64).reshape(-1), minlength=world_size * local)
        first = np.concatenate(([0], np.cumsum(counts)))
        for e in range(world_size * local):
            r, j = e // local, e % local
            count = int(counts[e])
            if count > 0:
                at = data_state * (total_win_size // 2) + (d * local + j) * max_bs * row_bytes
                _place(pages, r, at, raw[first[e]:first[e] + count].tobytes(), f"the real DispatchSetup of rank {d}",
                       f"maxBs * hAlignWinSize = {max_bs * row_bytes}, maxBs = globalBs / epWorldSize = {max_bs}")
            status = np.zeros(STATUS_BLOCK_WORDS, dtype="<i4")
            status[0], status[1] = DISPATCH_FLAG, count
            flag = data_state * WIN_STATE_OFFSET + (d + j * world_size) * slot
            pages.setdefault((WINDOWS_OUT, r), {})[flag] = status.tobytes()
    return pages


def run_dispatch_teardown(tree, ref, pref, case: dict, world, work: Path,
                          kernel_root: Path | None = None) -> tuple[list[dict], list[dict]]:
    """(per rank {output: ndarray}, per rank inputs) of the real DispatchTeardown on one world: the real tiling, the
    windows the real DispatchSetup (``pref``: the generated DispatchSetup's reference, whose outputs feed this op)
    leaves (``dispatch_setup_pages``), then the real entry's binary of the tiling's key, which saves its windows
    (``work/run/windows.bin``; ``kernel_root``: as ``real_world.run``). The inputs are the world's with the setup's
    outputs in the inputs they feed."""
    fed, pages = real_dispatch_setup_pages(tree, ref, pref, case, world, work)
    windows = work / "setup_windows.bin"
    write_windows(windows, pages)
    return real_world.run(tree, ref, case, fed, work, windows_in=windows, windows_out=True,
                          kernel_root=kernel_root), fed.inputs


def real_dispatch_setup_pages(tree, ref, pref, case: dict, world, work: Path) -> tuple:
    """(the world with the setup's outputs in the inputs they feed, the pages ``dispatch_setup_pages`` the real
    DispatchSetup (``pref``) leaves in front of the DispatchTeardown ``ref`` world, at the totalWinSize of the real
    DispatchTeardown tiling, ``work/tiling``)."""
    plan = testkit.prelude_plan(ref, case, world, pref)
    if isinstance(plan, str):
        raise jobs.TwinError(plan)
    _pcase, pworld, feeds, expected = plan
    fed = dataclasses.replace(world, inputs=testkit.fed_inputs(world, feeds, expected))
    arch = real_tiling.arch_of(ref, case["product"])
    tiled = real_tiling.tile(real_tiling.build_tiling(tree, ref.OP, arch), ref, case, fed, work / "tiling",
                             aiv=real_world.REAL_AIV)
    if tiled.status != "ok":
        raise jobs.TwinTilingRejected(f"the real {ref.OP} tiling: {tiled.status} {tiled.tilings} {tiled.faults}")
    sizes = {total_win_size(tiled.data[r], DISPATCH_TEARDOWN_INFO_TAIL) for r in range(case["world"])}
    if len(sizes) != 1:
        raise jobs.TwinError(f"the ranks' real tilings give different totalWinSize {sorted(sizes)}")
    pages = dispatch_setup_pages([{n: data(v) for n, v in inp.items()} for inp in pworld.inputs], expected,
                                 testkit.read_attrs(ref, case), sizes.pop())
    return fed, pages


def run_generated_dispatch_setup_then_real_teardown(tree, ref, pref, setup_twin, case: dict, world, work: Path,
                                                    kernel_root: Path | None = None) -> tuple:
    """(the generated DispatchSetup's per rank {output: ndarray}, the real DispatchTeardown's, the teardown's per
    rank inputs) on one communicator: the generated Setup (``pref``, its twin ``setup_twin``) on the world's prelude
    inputs, on as many vector cores as the real op, from fresh windows, leaves its windows
    (``work/setup/windows.bin``), and the real Teardown's entry (``kernel_root``: as ``real_world.run``) on its real
    tiling, fed the Setup's outputs (the reference's), starts from them (its own windows: ``work/run/windows.bin``)."""
    plan = testkit.prelude_plan(ref, case, world, pref)
    if isinstance(plan, str):
        raise jobs.TwinError(plan)
    pcase, pworld, feeds, expected = plan
    setup_outputs = jobs.run(setup_twin, pref, pcase, pworld, work / "setup", aiv=real_world.REAL_AIV,
                             windows_out=True)
    # fed the reference's outputs, as testkit.twin feeds a prelude's (the caller compares the generated Setup's)
    fed = dataclasses.replace(world, inputs=testkit.fed_inputs(world, feeds, expected))
    outputs = real_world.run(tree, ref, case, fed, work, windows_in=work / "setup" / jobs.WINDOWS_FILE,
                             windows_out=True, kernel_root=kernel_root)
    return setup_outputs, outputs, fed.inputs


def run_generated_dispatch_teardown_after_real_setup(tree, ref, pref, teardown_twin, case: dict, world,
                                                     work: Path) -> tuple[list[dict], list[dict]]:
    """(per rank {output: ndarray}, per rank inputs) of the generated DispatchTeardown (``ref``, its twin
    ``teardown_twin``) on as many vector cores as the real op, from the windows the real DispatchSetup leaves
    (``real_dispatch_setup_pages``); it leaves its own in ``work/op/windows.bin``."""
    fed, pages = real_dispatch_setup_pages(tree, ref, pref, case, world, work)
    windows = work / "setup_windows.bin"
    write_windows(windows, pages)
    return jobs.run(teardown_twin, ref, case, fed, work / "op", aiv=real_world.REAL_AIV, windows_in=windows,
                    windows_out=True), fed.inputs


def total_win_size(tiling_data: bytes, from_end: int = TOTAL_WIN_SIZE_FROM_END) -> int:
    """The totalWinSize of a rank's real TilingData, ``from_end`` bytes before its end (CombineTeardown: its last
    field)."""
    return struct.unpack_from("<Q", tiling_data, len(tiling_data) - from_end)[0]


def setup_inputs(ref, pref, case: dict, world) -> list[dict]:
    """Per rank {input: ndarray} of the CombineSetup (``pref``) in front of a CombineTeardown world (its world
    builder's prelude inputs: the same tokens and routes)."""
    plan = testkit.prelude_plan(ref, case, world, pref)
    if isinstance(plan, str):
        raise jobs.TwinError(plan)
    _pcase, pworld, _feeds, _expected = plan
    return [{n: data(v) for n, v in inp.items()} for inp in pworld.inputs]


def run_combine_teardown(tree, ref, pref, case: dict, world, work: Path) -> list[dict]:
    """Per rank {output: ndarray} of the real CombineTeardown on one world: the real tiling, the windows the real
    CombineSetup (``pref``: the generated CombineSetup's reference, whose world builder gives its inputs) leaves
    (``combine_setup_pages``), then the real entry's instance of the tiling's key, which saves its windows
    (``work/run/windows.bin``)."""
    return real_world.run(tree, ref, case, world, work, windows_in=real_setup_windows(tree, ref, pref, case, world, work),
                          windows_out=True)


def real_setup_windows(tree, ref, pref, case: dict, world, work: Path) -> Path:
    """A windows file (``work/setup_windows.bin``) of the pages the real CombineSetup leaves in front of the world of
    CombineTeardown ``ref`` (``combine_setup_pages`` at the real tiling's totalWinSize)."""
    win_size = real_tiling_win_size(tree, ref, case, world, work / "tiling")
    pages = combine_setup_pages(setup_inputs(ref, pref, case, world), testkit.read_attrs(ref, case), win_size)
    windows = work / "setup_windows.bin"
    write_windows(windows, pages)
    return windows


def run_generated_teardown_after_real_setup(tree, ref, pref, teardown_twin, case: dict, world,
                                            work: Path) -> list[dict]:
    """Per rank {output: ndarray} of the generated CombineTeardown (``ref``, its twin ``teardown_twin``) on as many
    vector cores as the real op, from the windows the real CombineSetup leaves (``real_setup_windows``); it leaves
    its own in ``work/op/windows.bin``."""
    return jobs.run(teardown_twin, ref, case, world, work / "op", aiv=real_world.REAL_AIV,
                    windows_in=real_setup_windows(tree, ref, pref, case, world, work), windows_out=True)


def real_tiling_win_size(tree, ref, case: dict, world, work: Path) -> int:
    """The totalWinSize every rank's real ``ref`` tiling gives (one for all ranks)."""
    arch = real_tiling.arch_of(ref, case["product"])
    tiled = real_tiling.tile(real_tiling.build_tiling(tree, ref.OP, arch), ref, case, world, work,
                             aiv=real_world.REAL_AIV)
    if tiled.status != "ok":
        raise jobs.TwinTilingRejected(f"the real {ref.OP} tiling: {tiled.status} {tiled.tilings} {tiled.faults}")
    sizes = {total_win_size(tiled.data[r]) for r in range(case["world"])}
    if len(sizes) != 1:
        raise jobs.TwinError(f"the ranks' real tilings give different totalWinSize {sorted(sizes)}")
    return sizes.pop()


def run_generated_setup_then_real_teardown(tree, ref, pref, setup_twin, case: dict, world, work: Path,
                                           windows_in: Path | None = None) -> tuple[list[dict], list[dict]]:
    """(the generated CombineSetup's per rank {output: ndarray}, the real CombineTeardown's) on one communicator:
    the generated Setup (``pref``, its twin ``setup_twin``) on the world's prelude inputs, on as many vector cores as
    the real op, from the windows ``windows_in`` (a previous call's; None: fresh), leaves its windows
    (``work/setup/windows.bin``), and the real Teardown's entry, unmodified, on its real tiling, starts from them
    (its own windows: ``work/run/windows.bin``)."""
    plan = testkit.prelude_plan(ref, case, world, pref)
    if isinstance(plan, str):
        raise jobs.TwinError(plan)
    pcase, pworld, _feeds, _expected = plan
    setup_outputs = jobs.run(setup_twin, pref, pcase, pworld, work / "setup", aiv=real_world.REAL_AIV,
                             windows_in=windows_in, windows_out=True)
    outputs = real_world.run(tree, ref, case, world, work, windows_in=work / "setup" / jobs.WINDOWS_FILE,
                             windows_out=True)
    return setup_outputs, outputs


__all__ = ["OverlappingBlocks", "SharedExpertRanksNotSent", "combine_setup_pages", "dispatch_setup_pages",
           "real_dispatch_setup_pages", "real_setup_windows", "real_tiling_win_size", "run_combine_teardown",
           "run_dispatch_teardown", "run_generated_dispatch_setup_then_real_teardown",
           "run_generated_dispatch_teardown_after_real_setup", "run_generated_setup_then_real_teardown",
           "run_generated_teardown_after_real_setup", "setup_inputs",
           "state_offset", "total_win_size"]
