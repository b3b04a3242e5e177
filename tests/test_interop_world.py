"""Interop worlds: the hand-written ops and the generated ones in one twin world, compared with the numpy reference.

On a device an MoE layer's DispatchV2 and CombineV2 share the EP communicator, so each op finds the HCCL windows
(windowsIn, and windowsExp on Atlas A3) as the op before it left them. The twin carries the windows from job to
job (``windows_out`` / ``windows_in``, opgen/sim/README.md). Every op's outputs are checked against the reference
in order; the first disagreement or fault ends the world.

Atlas A3 (the suite's first quant-0 world: 2 ranks, BS 4, H 1024, K 2): real DispatchV2 -> generated CombineV2,
generated DispatchV2 -> real CombineV2, and two MoE layers on one communicator (the real pair, then the generated
pair; and the other order, slow). Issue 32 expected them to fail; measured, they agree with the reference, and
why: both protocols clear each flag after reading it, and the words they keep across calls lie apart at this
size (windowsExp: generated dispatch data state at 256K, real dispatch state at 768K, real combine at 818K-820K,
generated combine at 936K; the generated combine flags in [296K, 936K) reach 768K only from slot 4864, in a world
with BS * (K + S) > 4864, where they zero the real state words on every rank alike, which the next real pair
survives: slow test below). What the twin cannot show here: it runs each op as a job that ends on every rank
before the next starts, a barrier the device does not have; the real ops' double-buffered halves exist for a fast
rank's next op writing into a window a slow rank still reads, and that race is not modelled.

CombineAddRmsNorm as DispatchV2's partner on Atlas A3 (slow; the dispatch suite's first BFLOAT16 quant-0 world,
the partner's only dtype and comm quant mode): real DispatchV2 -> generated CombineAddRmsNorm and generated
DispatchV2 -> real CombineAddRmsNorm agree with the reference, measured, for the reason above: the real
CombineAddRmsNorm is CombineV2's real kernel with HasAddRmsNorm (its windowsExp words those of the real
CombineV2), and the generated one keeps the generated CombineV2's combine protocol.

Atlas A2 (2 ranks, BS 128, H 7168, K 2, FLOAT16): real DispatchV2 -> generated CombineV2, twice; and the generated
pair, then real DispatchV2 -> generated CombineV2. The real A2 ops reserve the first 1 MiB of each window half and
keep at windowsIn + 1 MiB - 512 the word that selects the half they address, flipped by every call (code: mc2/
moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h Init, SingleServerSendToMoeExpert;
moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h Init, AlltoAllDispatch); the generated A2
kernels keep the same halves and word (dispatch_v2.spec's A2 `window`), so each world checks the word after every
op: 1, 0, 1, 0 on both ranks. (Before, the generated combine wrote rows from offset 0 of windowsIn over that word,
and the second real dispatch addressed windowsIn + 1 MiB + totalSize * 0x422843f0: out of bounds.) Generated
dispatch -> real combine on A2 stops at the real one-server combine's own missing S_MTE3 sync before its flag's
copy (tests/test_real_ops_world.py A2_COMBINE_FLAG), so it runs with that one line fixed in a temp copy: the
generated dispatch, then the real combine; and (slow) the generated pair, the real pair, then generated dispatch ->
real combine, the word flipping on every op.

Ascend 950 (the suite's first quant-0 world): real DispatchV2 -> generated CombineV2 agrees with the reference,
measured (the generated op runs on the real platform too: ``real_world.real_platform``, windows of twice
HCCL_BUFFSIZE). The real 950 CombineV2 faults in its own Init (tests/test_real_ops_world.py ``A5_COMBINE_CONTEXT``)
and, past it, in its row packing (``A5_COMBINE_PACK_SOURCE``); with both fixed in a temp copy
(``opgen.sim.real_fixes.a5_combine_fixed``), generated DispatchV2 -> real CombineV2 agrees with the reference too, measured.

Worlds run with ``real_world.REAL_AIV`` vector cores per rank (the real dispatch assumes a multiple of 8) and a
short twin timeout (``TIMEOUT``), so a flag nobody sets costs seconds.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from opgen import sim
from opgen.harness import testkit
from opgen.sim import real_fixes, real_world
from opgen.sim.real_fixes import a5_combine_fixed
from .real_ops import ADD_RMS_NORM, COMBINE, DISPATCH, GENERATED, MARKS, tree  # noqa: F401 - tree: the module's fixture

pytestmark = MARKS

A3 = "ascend910_93"
TIMEOUT = 10.0  # seconds a twin core may wait for a flag (the runner kills a looping one after 4x that)
REAL, GEN = "real", "generated"


def first_world(product: str, quant: int = 0, x_dtype: str | None = None) -> dict:
    ref, cases = DISPATCH
    return next(c for c in cases.POSITIVE if c["product"] == product and "ranks" not in c
                and int(c["attrs"].get(cases.QUANT_BY, 0)) == quant
                and (x_dtype is None or c["inputs"]["x"][0] == x_dtype))


class Communicator:
    """The HCCL windows of one EP communicator, carried from each op's job to the next."""

    def __init__(self, tree, work: Path, kernel_roots: dict[str, Path] | None = None):
        self.tree, self.work, self.windows, self.step = tree, work, None, 0
        # op -> an ops-transformer/ with real-code findings fixed (opgen.sim.real_fixes)
        self.kernel_roots = kernel_roots or {}
        self.buffer_ids: list[dict[int, int]] = []  # after each op: rank -> the A2 half-select word (buffer_ids)

    def run(self, kind: str, suite, case: dict, world) -> list[dict]:
        """Per rank outputs of the ``kind`` (REAL or GEN) op of ``suite`` on the windows the last op left; its
        outputs are checked against the reference (AssertionError naming the op and every disagreement)."""
        ref, cases = suite
        self.step += 1
        work = self.work / f"{self.step}-{kind}-{ref.OP}"
        if kind == REAL:
            got = real_world.run(self.tree, ref, case, world, work, timeout=TIMEOUT, windows_in=self.windows,
                                 windows_out=True, kernel_root=self.kernel_roots.get(ref.OP))
            self.windows = work / "run" / sim.job.WINDOWS_FILE
        else:  # on the windows and platform the real CANN gives the product (the real op's partner)
            exe = sim.build_for(GENERATED / Path(ref.__file__).parent.name, ref, case["product"])
            got = sim.run(exe, ref, case, world, work, aiv=real_world.REAL_AIV, timeout=TIMEOUT,
                          windows_in=self.windows, windows_out=True, **real_world.real_platform(ref, case))
            self.windows = work / sim.job.WINDOWS_FILE
        want = testkit.run(ref, case, world)
        problems = [p for r in range(case["world"])
                    for p in testkit.output_problems(ref, cases, case, world, r, got[r], want[r])]
        assert not problems, f"{kind} {ref.OP} (step {self.step}):\n" + "\n".join(problems)
        self.buffer_ids.append(buffer_ids(self.windows, case["world"]))
        return got


MB = 1024 * 1024
PAGE = 4096  # the twin saves windows as whole pages (runner.cpp SaveWindows: kind u32, group u32, rank u32, offset u64)
BUFFER_ID_AT = MB - 512  # code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_a2_constant.h


def buffer_ids(windows: Path, world: int) -> dict[int, int]:
    """Each rank's uint32 at windowsIn + 1 MiB - 512 (FULLMESH_BUFFERID_ADDR) in the pages a job left (0 where the
    page was never written)."""
    import struct

    data, at, out = windows.read_bytes(), 0, dict.fromkeys(range(world), 0)
    while at < len(data):
        kind, _group, rank, offset = struct.unpack_from("<IIIQ", data, at)
        if kind == 0 and offset == BUFFER_ID_AT // PAGE * PAGE:
            out[rank] = struct.unpack_from("<I", data, at + 20 + BUFFER_ID_AT % PAGE)[0]
        at += 20 + PAGE
    return out


def moe_layer(comm: Communicator, dispatch: str, combine: str, case: dict, partner=COMBINE) -> None:
    """One MoE layer on ``comm``: the ``dispatch`` kind's DispatchV2 on the case's world, identity experts, the
    ``combine`` kind's ``partner`` (CombineV2, or CombineAddRmsNorm) on what the dispatch produced."""
    ref, _ = DISPATCH
    cref, _ = partner
    world = testkit.build_world(ref, case)
    dispatched = comm.run(dispatch, DISPATCH, case, world)
    cin, cattrs = testkit.combine_inputs(ref, case, world, dispatched, cref)
    ccase = {"id": f"{case['id']}-combine", "world": case["world"], "product": case["product"],
             "attrs": {k: v for k, v in cattrs.items() if k in cref.ATTRS},
             "env": {k: v for k, v in cattrs.items() if k in cref.ENV}}
    comm.run(combine, partner, ccase, real_world.Inputs(cin))


A2 = "ascend910b"
A2_CASE = {"id": "interop-ascend910b-bs128-h7168-k2-w2", "product": A2, "world": 2,
           "attrs": {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 2}, "env": {},
           "inputs": {"x": ("FLOAT16", (128, 7168)), "expertIds": ("INT32", (128, 2))},
           "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}


def test_a3_real_dispatch_then_generated_combine(tree, tmp_path):
    moe_layer(Communicator(tree, tmp_path), REAL, GEN, first_world(A3))


def test_a3_generated_dispatch_then_real_combine(tree, tmp_path):
    moe_layer(Communicator(tree, tmp_path), GEN, REAL, first_world(A3))


# CombineAddRmsNorm (its documents: BFLOAT16 tokens, comm quant 0) as DispatchV2's partner, real and generated mixed
@pytest.mark.parametrize("dispatch,combine", [
    pytest.param(REAL, GEN, id="real-dispatch-generated-combine-add-rms-norm", marks=pytest.mark.slow),
    pytest.param(GEN, REAL, id="generated-dispatch-real-combine-add-rms-norm", marks=pytest.mark.slow),
])
def test_a3_dispatch_then_combine_add_rms_norm_mixed(tree, tmp_path, dispatch, combine):
    moe_layer(Communicator(tree, tmp_path), dispatch, combine, first_world(A3, x_dtype="BFLOAT16"), ADD_RMS_NORM)


@pytest.mark.parametrize("first,second", [
    pytest.param(REAL, GEN, id="real-pair-then-generated-pair"),
    pytest.param(GEN, REAL, id="generated-pair-then-real-pair", marks=pytest.mark.slow),
])
def test_a3_two_moe_layers_on_one_communicator(tree, tmp_path, first, second):
    comm = Communicator(tree, tmp_path)
    case = first_world(A3)
    moe_layer(comm, first, first, case)
    moe_layer(comm, second, second, dict(case, id=f"{case['id']}-layer2"))  # fresh tokens: stale rows show


def test_a2_real_dispatch_then_generated_combine_twice_on_one_communicator(tree, tmp_path):
    comm = Communicator(tree, tmp_path)
    case = A2_CASE
    moe_layer(comm, REAL, GEN, case)  # rows of 14336 bytes: the combine's reach past 1 MiB of windowsIn
    moe_layer(comm, REAL, GEN, dict(case, id=f"{case['id']}-layer2"))
    assert comm.buffer_ids == [{0: b, 1: b} for b in (1, 0, 1, 0)]  # every op flips the one word on every rank


def test_a2_generated_pair_then_real_dispatch_and_generated_combine(tree, tmp_path):
    """The generated pair, then the real dispatch on the half the generated combine's flip selected, then the
    generated combine on the half the real dispatch's flip selected."""
    comm = Communicator(tree, tmp_path)
    moe_layer(comm, GEN, GEN, A2_CASE)
    moe_layer(comm, REAL, GEN, dict(A2_CASE, id=f"{A2_CASE['id']}-layer2"))  # fresh tokens: stale rows show
    assert comm.buffer_ids == [{0: b, 1: b} for b in (1, 0, 1, 0)]


@pytest.mark.parametrize("layers", [
    pytest.param(((GEN, REAL),), id="generated-dispatch-real-combine"),
    pytest.param(((GEN, GEN), (REAL, REAL), (GEN, REAL)), id="generated-pair-real-pair-then-mixed",
                 marks=pytest.mark.slow),
])
def test_a2_generated_dispatch_then_real_combine_with_its_flag_synced(tree, tmp_path, layers):
    """The real one-server combine with its finding fixed in a temp copy (A2_COMBINE_FLAG: the S_MTE3 sync before
    its flag's copy, tests/test_real_ops_world.py) on what the generated dispatch left: rows, counts and the
    half-select word."""
    comm = Communicator(tree, tmp_path, {COMBINE[0].OP: real_fixes.a2_combine_flag_synced(tree.ops, tmp_path / "ops")})
    for n, (dispatch, combine) in enumerate(layers):
        moe_layer(comm, dispatch, combine, dict(A2_CASE, id=f"{A2_CASE['id']}-layer{n}"))  # fresh tokens each
    assert comm.buffer_ids == [{0: b, 1: b} for b in (1, 0) * len(layers)]


@pytest.mark.slow
def test_a3_generated_combine_flags_over_the_real_state_words(tree, tmp_path):
    """Real pair, two generated pairs, real pair on one communicator, at BS * K = 5120 slots: the second generated
    combine's flags (the upper half, [616K, 936K) of windowsExp) reach 768K, the real dispatch's state words.
    Measured: after it the page at 768K is zero on both ranks (dataState, opCnt and the DFX words gone), and the
    last real pair still agrees with the reference: both ranks read dataState 0 and address the same halves.
    code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_v2_base.h InitWinState"""
    comm = Communicator(tree, tmp_path)
    case = {"id": "interop-ascend910_93-bs512-h1024-k10-w2", "product": A3, "world": 2,
            "attrs": {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 10}, "env": {},
            "inputs": {"x": ("FLOAT16", (512, 1024)), "expertIds": ("INT32", (512, 10))},
            "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}
    for layer, kind in enumerate((REAL, GEN, GEN, REAL)):  # the second generated call uses its flags' upper half
        moe_layer(comm, kind, kind, dict(case, id=f"{case['id']}-layer{layer}"))


A5 = "ascend950"


def test_950_real_dispatch_then_generated_combine(tree, tmp_path):
    moe_layer(Communicator(tree, tmp_path), REAL, GEN, first_world(A5))


def test_950_generated_dispatch_then_real_combine_with_its_findings_fixed(tree, tmp_path):
    """The real 950 CombineV2 with its two findings fixed in a temp copy (tests/test_real_ops_world.py
    A5_COMBINE_CONTEXT, A5_COMBINE_PACK_SOURCE), on the windows the generated DispatchV2 left."""
    comm = Communicator(tree, tmp_path, {COMBINE[0].OP: a5_combine_fixed(tree.ops, tmp_path / "ops")})
    moe_layer(comm, GEN, REAL, first_world(A5))


def _windows_in(windows: Path, rank: int) -> list[bytes]:
    """Rank ``rank``'s windowsIn as the runs of adjacent pages a job left (the pages never written are not saved)."""
    import struct

    data, at, pages = windows.read_bytes(), 0, {}
    while at < len(data):
        kind, _group, r, offset = struct.unpack_from("<IIIQ", data, at)
        if kind == 0 and r == rank:
            pages[offset] = data[at + 20:at + 20 + PAGE]
        at += 20 + PAGE
    runs: list[list[bytes]] = []
    for offset in sorted(pages):
        if not runs or offset - PAGE not in pages:
            runs.append([])
        runs[-1].append(pages[offset])
    return [b"".join(run) for run in runs]


# code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h (SPLIT_BLOCK_SIZE,
# SPLIT_BLOCK_DATA_SIZE, SPLIT_BLOCK_FLAG_SIZE; hAlignWinSize_ = Ceil(commDataBytes_, 480) * 512 per slot, slot
# tokenId * (K + sharedExpertNum) + topkId; ClearPackedTokenFlags zeroes each block's flag after the token is summed)
BLOCK, BLOCK_DATA, BLOCK_FLAG = 512, 480, 32


def _slot_base(window: bytes, slots: dict[int, bytes], stride: int) -> int | None:
    """Where slot 0 of a combine area lies in ``window`` such that every slot of ``slots`` (index -> the row bytes
    its sender returned) holds its row in the first 480 bytes of each 512-byte block and a zero (cleared) flag in
    the last 32; None when no place fits."""
    first = min(slots)
    probe = slots[first][:BLOCK_DATA]
    at = window.find(probe)
    while at >= 0:
        base = at - first * stride
        if base >= 0 and all(_slot_holds(window, base + s * stride, row) for s, row in slots.items()):
            return base
        at = window.find(probe, at + 1)
    return None


def _slot_holds(window: bytes, at: int, row: bytes) -> bool:
    blocks = -(-len(row) // BLOCK_DATA)
    data = b"".join(window[at + b * BLOCK:at + b * BLOCK + BLOCK_DATA] for b in range(blocks))
    tails = [window[at + b * BLOCK + BLOCK_DATA:at + (b + 1) * BLOCK] for b in range(blocks)]
    return data[:len(row)] == row and all(t == bytes(BLOCK_FLAG) for t in tails)


def test_950_generated_combine_lays_out_its_window_slots_as_the_real_one(tree, tmp_path):
    """One real DispatchV2, then the generated and the real (findings fixed) CombineV2 each on the windows it left:
    on every rank both leave each returned row in its slot token * (K + S) + k of Ceil(2H, 480) 512-byte blocks,
    480 row bytes then the 32-byte flag in each block, the flags cleared after the sum; the slots lie at the same
    stride in both windows (H 1024: 5 blocks, 2560 bytes, where Align512(2H) would be 2048)."""
    import numpy as np

    case = first_world(A5)
    ref, _ = DISPATCH
    cref, _ = COMBINE
    world = testkit.build_world(ref, case)
    gen = Communicator(tree, tmp_path / "gen")
    dispatched = gen.run(REAL, DISPATCH, case, world)
    real = Communicator(tree, tmp_path / "real", {cref.OP: a5_combine_fixed(tree.ops, tmp_path / "ops")})
    real.windows = gen.windows
    cin, cattrs = testkit.combine_inputs(ref, case, world, dispatched, cref)
    ccase = {"id": f"{case['id']}-combine", "world": case["world"], "product": case["product"],
             "attrs": {k: v for k, v in cattrs.items() if k in cref.ATTRS},
             "env": {k: v for k, v in cattrs.items() if k in cref.ENV}}
    gen.run(GEN, COMBINE, ccase, real_world.Inputs(cin))
    real.run(REAL, COMBINE, ccase, real_world.Inputs(cin))
    bs, h = case["inputs"]["x"][1]
    k = case["inputs"]["expertIds"][1][1]
    stride = -(-2 * h // BLOCK_DATA) * BLOCK
    assert stride == 2560
    # the rows each owner receives: row i of sender s's expandX goes to slot tokenIdx * K + k of the owner named by
    # the triple (owner, tokenIdx, k) at assistInfoForCombine[3i] (no shared experts here)
    want: dict[int, dict[int, bytes]] = {r: {} for r in range(case["world"])}
    for s, c in enumerate(cin):
        rows = np.ascontiguousarray(np.asarray(testkit.data(c["expandX"])))
        info = np.asarray(testkit.data(c["assistInfoForCombine"])).reshape(-1)
        count = int(np.asarray(testkit.data(c["epSendCounts"])).reshape(-1)[-1])
        for i in range(count):
            owner, token, pair = (int(v) for v in info[3 * i:3 * i + 3])
            want[owner][token * k + pair] = rows[i].tobytes()
    assert sum(len(w) for w in want.values()) == case["world"] * bs * k
    for r in range(case["world"]):
        for kind, comm in ((GEN, gen), (REAL, real)):
            runs = _windows_in(comm.windows, r)
            assert any(_slot_base(run, want[r], stride) is not None for run in runs), (kind, r)
