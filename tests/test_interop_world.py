"""Interop worlds: the hand-written ops and the generated ones in one twin world, compared with the numpy reference.

On a device an MoE layer's DispatchV2 and CombineV2 share the EP communicator, so each op finds the HCCL windows
(windowsIn, and windowsExp on Atlas A3) as the op before it left them. The twin carries the windows from job to
job (``windows_out`` / ``windows_in``, opgen/sim/README.md). Every op's outputs are checked against the reference
in order; the first disagreement or fault ends the world.

Atlas A3 (the suite's first quant-0 world: 2 ranks, BS 4, H 1024, K 2): real DispatchV2 -> generated CombineV2,
generated DispatchV2 -> real CombineV2, and two MoE layers on one communicator (the real pair, then the generated
pair; and the other order, slow). They agree with the reference. Since issue 33 the generated A3 ops keep the
real ops' windowsExp layout itself (templates/cpp/common/op_kernel/opgen_kernel_helpers.h REAL_STATUS): the
dispatch status entries at data state s * 384K, the combine's slot flags at 64K + s * 384K, each core's state
record at 768K (DispatchV2) and 818K (CombineV2) + core * 512, flipped at Init; the real and the generated pair
leave byte-identical windowsExp after every op, and a generated op continues the data states and call counts a
real one left (tests below; before, each kept its own words: generated 256K and 936K, and the generated combine's
flags in [296K, 936K) reached the real records at 768K past BS * (K + S) = 4864). What the twin cannot show here:
it runs each op as a job that ends on every rank
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
Since issue 33 the generated 950 pair keeps the real MTE ops' status area (1 MiB a rank from r KiB, their entries
and per-core InitWinState words): the real and the generated DispatchV2 leave byte-identical status areas on one
world, and real pair -> generated pair -> real pair runs with each op flipping the per-core word the other kind
reads. (Before, with the generated words elsewhere, that sequence agreed only because each kind kept its own.)

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
        self.exp_windows: list[dict[int, bytes]] = []  # after each op: rank -> its windowsExp (exp_windows)

    def run(self, kind: str, suite, case: dict, world, skip: tuple = ()) -> list[dict]:
        """Per rank outputs of the ``kind`` (REAL or GEN) op of ``suite`` on the windows the last op left; its
        outputs but ``skip`` are checked against the reference (AssertionError naming the op and every
        disagreement)."""
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
                    for p in testkit.output_problems(ref, cases, case, world, r, got[r], want[r], skip)]
        assert not problems, f"{kind} {ref.OP} (step {self.step}):\n" + "\n".join(problems)
        self.buffer_ids.append(buffer_ids(self.windows, case["world"]))
        self.exp_windows.append(exp_windows(self.windows, case["world"]))
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


def exp_windows(windows: Path, world: int, size: int = MB) -> dict[int, bytes]:
    """Each rank's windowsExp (the pages of kind 1, runner.cpp SaveWindows; the rest zero) in what a job left."""
    import struct

    data, at, out = windows.read_bytes(), 0, {r: bytearray(size) for r in range(world)}
    while at < len(data):
        kind, _group, rank, offset = struct.unpack_from("<IIIQ", data, at)
        if kind == 1 and _group == 0:
            out[rank][offset:offset + PAGE] = data[at + 20:at + 20 + PAGE]
        at += 20 + PAGE
    return {r: bytes(w) for r, w in out.items()}


def moe_layer(comm: Communicator, dispatch: str, combine: str, case: dict, partner=COMBINE, skip: tuple = ()):
    """One MoE layer on ``comm``: the ``dispatch`` kind's DispatchV2 on the case's world, identity experts, the
    ``combine`` kind's ``partner`` (CombineV2, or CombineAddRmsNorm) on what the dispatch produced (its outputs
    ``skip`` not checked); the world and the combine's outputs."""
    ref, _ = DISPATCH
    cref, _ = partner
    world = testkit.build_world(ref, case)
    dispatched = comm.run(dispatch, DISPATCH, case, world)
    cin, cattrs = testkit.combine_inputs(ref, case, world, dispatched, cref)
    ccase = {"id": f"{case['id']}-combine", "world": case["world"], "product": case["product"],
             "attrs": {k: v for k, v in cattrs.items() if k in cref.ATTRS},
             "env": {k: v for k, v in cattrs.items() if k in cref.ENV}}
    return world, comm.run(combine, partner, ccase, real_world.Inputs(cin), skip)


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


def exp_differences(real: dict[int, bytes], gen: dict[int, bytes]) -> list[str]:
    """Per rank, the runs of bytes in which two windowsExp differ: [start, end) with both sides' first words."""
    out = []
    for r in real:
        a, b, at = real[r], gen[r], 0
        while at < len(a):
            if a[at] == b[at]:
                at += 1
                continue
            end = at
            while end < len(a) and a[end] != b[end]:
                end += 1
            w = at // 4 * 4
            out.append(f"rank {r} [{at:#x}, {end:#x}): real {a[w:w + 16].hex()} generated {b[w:w + 16].hex()}")
            at = end
    return out


def masked_world(product: str, mask: str, bs: int = 16) -> dict:
    """The dispatch suite's quant-0 world of ``product`` with the token mask ``mask`` (case id suffix), at ``bs``
    tokens: more than the REAL_AIV cores, so the real combine's split of the active tokens over the cores differs from
    a split of all BS (BS 16: the 1-D mask keeps 11 tokens; with the layer's id, the 2-D one leaves one of rank 0's
    tokens 12 and 13 inactive)."""
    ref, cases = DISPATCH
    case = next(c for c in cases.POSITIVE if c["product"] == product and c["id"].endswith(f"-{mask}"))
    return dict(case, id=f"{case['id']}-bs{bs}",
                inputs={k: (dtype, (bs,) + tuple(shape[1:])) for k, (dtype, shape) in case["inputs"].items()})


@pytest.mark.parametrize("layers,mask", [pytest.param(1, None, id="one-layer"),
                                         pytest.param(1, "xActiveMask4", id="one-layer-1d-mask"),
                                         pytest.param(1, "xActiveMask4x2", id="one-layer-2d-mask"),
                                         pytest.param(2, None, id="two-layers", marks=pytest.mark.slow)])
def test_a3_real_and_generated_ops_leave_the_same_windows_exp(tree, tmp_path, layers, mask):
    """The real pair and the generated pair, each on a fresh communicator, leave byte-identical windowsExp after
    every op: the dispatch status entries {1.0f, count, 0 ...} at data state s * 384K + (src + j * epWorldSize) * 32
    with their flag cleared and count kept, the combine's 8 x 1.0f slot flags at 64K + s * 384K cleared, and each
    core's state record (dataState flipped at Init, position, epRankId, moeExpertNum, epWorldSize, globalBS, the call
    count) at 768K / 818K + core * 512 (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_v2_base.h
    InitWinState; moe_distribute_v2_constant.h; templates/cpp/common/op_kernel/opgen_kernel_helpers.h REAL_STATUS).
    Before issue 33's change the generated ops kept their own layout there (entries at s * 128K, state words at 256K
    and 936K, one-word combine flags in [296K, 936K)), and the generated entries' words 2-7 were never written.
    With a token mask (the suite's masked worlds) the combine record's position, 1 + the core's share of the active
    tokens as the real op splits them (a 2-D mask's tokens with any pair set, over the cores in order), is the real
    one's too; before, the generated record counted the active tokens of its own split of all BS tokens (BS 16, 8
    cores, the 1-D mask's 11 active tokens: the real records read 3, 3, 3, 2, 2, 2, 2, 2, the generated ones read 3,
    3, 3, 3, 3, 2, 1, 1; the 2-D mask's 15 on rank 0: real 3 x 7, 2, generated 3 x 6, 2, 3)."""
    import numpy as np

    case = first_world(A3) if mask is None else masked_world(A3, mask)
    comms = {kind: Communicator(tree, tmp_path / kind) for kind in (REAL, GEN)}
    xout = {}
    for kind, comm in comms.items():
        for layer in range(layers):
            # the real A3 combine leaves an inactive token's xOut row unwritten (combine_v2.spec, output xOut), where
            # the reference and the generated op write zeros: its active rows are compared with the generated's below
            skip = ("xOut",) if kind == REAL and mask else ()
            world, xout[kind] = moe_layer(comm, kind, kind, dict(case, id=f"{case['id']}-layer{layer}"), skip=skip)
    if mask:
        actives = [np.asarray(world.masks[r]).reshape(len(world.masks[r]), -1).any(axis=1)
                   for r in range(case["world"])]
        assert not all(a.all() for a in actives)  # the world has inactive tokens
        for r, active in enumerate(actives):
            real_rows, gen_rows = (np.asarray(testkit.data(xout[k][r]["xOut"])) for k in (REAL, GEN))
            assert real_rows[active].tobytes() == gen_rows[active].tobytes(), r
    ops = ["dispatch", "combine"] * layers
    problems = [f"after {op} {n}: {d}" for n, op in enumerate(ops)
                for d in exp_differences(comms[REAL].exp_windows[n], comms[GEN].exp_windows[n])]
    assert not problems, "\n".join(problems)
    # what they agree on is the protocol's, not zeros: after the first dispatch the entries of data state 0 carry the
    # counts, and every record its flipped state (1) and position (2 after the wait)
    first = comms[GEN].exp_windows[0][0]  # rank 0
    assert [first[768 * 1024 + c * 512:768 * 1024 + c * 512 + 8] for c in range(real_world.REAL_AIV)] == \
        [bytes([1, 0, 0, 0, 2, 0, 0, 0])] * real_world.REAL_AIV
    assert any(first[i * 32 + 4:i * 32 + 8] != bytes(4) for i in range(2048))



# The Atlas A3 DispatchV2 row messages in windowsIn (issue 33). code: mc2/moe_distribute_dispatch_v2/op_kernel/
# moe_distribute_dispatch_v2.h Init (winDataSizeOffsetEp_: data state 0 starts after the combine's maxBS * (K + S)
# slots of Ceil(2H, 512) * 512 bytes; hAlignWinSize_ = Ceil(hScaleIdxSize_, 512) * 512; expertPerSizeOnWin_ =
# maxBS * hAlignWinSize_; expertScaleAlign_ = tokenQuantAlign_ + EXPAND_IDX_INFO), SendToMoeExpert (message of
# (src, expert e) slot c at block src * L + e % L, + c * hAlignWinSize_), ProcessToken / FillTriple (one MTE3 copy
# of hScaleIdxSize_ bytes); moe_distribute_dispatch_v2_quant.h QuantInit, QuantDynamicPerToken (the pertoken scale
# at Align32(H), the triple at the scales' 32-byte aligned end).
WIN_FILL = 0xEE  # the windowsIn bytes before the op: what neither op writes keeps it
WIN_FILLED = 256 * 1024


def dispatch_case(case_id: str) -> dict:
    ref, cases = DISPATCH
    return next(c for c in cases.POSITIVE if c["id"] == case_id)


@pytest.mark.parametrize("case_id", [
    pytest.param("ascend910_93-q0-bs4-h1024-k2-w2-expertScales4x2", id="quant0-expert-scales"),
    pytest.param("ascend910_93-q2-bs4-h1024-k2-w2", id="quant2"),
    pytest.param("ascend910_93-q0-bs4-h1024-k2-w5-sharedExpertNum-4-sharedExpertRankNum-4", id="shared-experts",
                 marks=pytest.mark.slow),
])
def test_a3_real_and_generated_dispatch_leave_the_same_row_messages(tree, tmp_path, case_id):
    """The real and the generated A3 DispatchV2 on one world, each on windowsIn filled with 0xEE, leave the same
    windowsIn byte for byte: data state 0 after the combine's maxBS * (K + S) slots (S: sharedExpertNum, 0 without
    shared-expert ranks), then each message [row | pertoken scale at Align32(H) (quant 2) | (src, token, k) at the
    scales' 32-byte aligned end | expert scale right after the triple], 512-aligned, in the block of its (source,
    local expert) at its slot (the count of the source's earlier pairs to that expert), on a shared-expert rank
    in the block of its source at the token's index (k = K + s), its bytes written up to the triple's or the expert
    scale's end and none after, nothing else. The one exception: under quant 2 the real op sends the 28 bytes after
    the 4-byte scale (up to the triple) from its UB buffer as it found them (QuantDynamicPerToken writes only the row
    and the scale there), device garbage, so there both only have to write or not write. Before issue 33's change
    the generated data started after maxBS * (K + 1) slots when sharedExpertRankNum was 0 (the real tiling makes
    the default sharedExpertNum 1 a 0 there), and its expert scale lay in the next 32-byte block (byte +32 from the
    triple, the sender writing the 20 bytes between), where the real one is at +12."""
    import struct

    from opgen.sim import job as jobs

    ref, _ = DISPATCH
    case = dispatch_case(case_id)
    world, ranks = testkit.build_world(ref, case), case["world"]
    attrs = case["attrs"]
    quant = int(attrs.get("quantMode", 0))
    shared = int(attrs.get("sharedExpertNum", 1)) if int(attrs.get("sharedExpertRankNum", 0)) else 0
    expert_scales = "expertScalesOptional" in case["inputs"]
    bs, h = case["inputs"]["x"][1]
    k = case["inputs"]["expertIds"][1][1]
    fill = tmp_path / "filled.bin"
    jobs.write_windows(fill, {(jobs.WINDOWS_IN, r): {0: bytes([WIN_FILL]) * WIN_FILLED} for r in range(ranks)})
    got = {}
    for kind in (REAL, GEN):
        comm = Communicator(tree, tmp_path / kind)
        comm.windows = fill
        comm.run(kind, DISPATCH, case, world)
        pages = jobs.read_windows(comm.windows)
        got[kind] = {r: jobs.window_bytes(pages, jobs.WINDOWS_IN, r, 0, WIN_FILLED) for r in range(ranks)}
    row = h * (1 if quant == 2 else 2)
    triple_at = -(-row // 32) * 32 + (32 if quant == 2 else 0)
    sent = triple_at + 12 + (4 if expert_scales else 0)
    stride = -(-sent // 512) * 512
    area = bs * (k + shared) * -(-2 * h // 512) * 512
    garbage = (row + 4, triple_at) if quant == 2 else (0, 0)
    messages = 0
    for r in range(ranks):
        real, gen = bytearray(got[REAL][r]), bytearray(got[GEN][r])
        assert real[:area] == bytes([WIN_FILL]) * area, f"rank {r}: the real op wrote the combine's slots"
        for m in range(area, WIN_FILLED - stride, stride):
            if real[m + triple_at:m + sent] == bytes([WIN_FILL]) * (sent - triple_at):
                continue  # no message in this slot
            messages += 1
            src, token, pair = struct.unpack_from("<3i", real, m + triple_at)
            assert 0 <= src < ranks and 0 <= token < bs and 0 <= pair < k + shared, (r, m, src, token, pair)
            lo, hi = m + garbage[0], m + garbage[1]
            assert (real[lo:hi] == bytes([WIN_FILL]) * (hi - lo)) == (gen[lo:hi] == bytes([WIN_FILL]) * (hi - lo))
            real[lo:hi] = gen[lo:hi] = bytes(hi - lo)
            assert real[m + sent:m + stride] == bytes([WIN_FILL]) * (stride - sent), (r, m)
        assert real == gen, f"rank {r}: first difference at byte {next(i for i in range(len(real)) if real[i] != gen[i])}"
    assert messages == ranks * bs * (k + shared)  # every (token, k) pair's message and each token's per shared expert


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
def test_a3_generated_combine_flags_clear_of_the_state_records(tree, tmp_path):
    """Real pair, two generated pairs, real pair on one communicator, at BS * K = 5120 slots. Before issue 33's change
    the second generated combine's flags (then the upper half, [616K, 936K) of windowsExp) reached 768K and zeroed
    the real dispatch's state records, which the last real pair survived. Now both ops keep the real layout: the
    combine's flags of data state 1 lie in [448K, 448K + 5120 * 32), and after every op each core's records at 768K
    (DispatchV2) and 818K (CombineV2) hold the data state the next call of that op uses (1 after an odd count of
    its calls) and the uint64 call count, whichever kind ran. code: mc2/moe_distribute_dispatch_v2/op_kernel/
    moe_distribute_v2_base.h InitWinState, moe_distribute_v2_constant.h DISPATCH_STATE_WIN_OFFSET,
    COMBINE_STATE_WIN_OFFSET"""
    import struct

    comm = Communicator(tree, tmp_path)
    case = {"id": "interop-ascend910_93-bs512-h1024-k10-w2", "product": A3, "world": 2,
            "attrs": {"groupEp": "ep", "epWorldSize": 2, "moeExpertNum": 10}, "env": {},
            "inputs": {"x": ("FLOAT16", (512, 1024)), "expertIds": ("INT32", (512, 10))},
            "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}
    for layer, kind in enumerate((REAL, GEN, GEN, REAL)):  # the second generated call uses its flags' upper half
        moe_layer(comm, kind, kind, dict(case, id=f"{case['id']}-layer{layer}"))
    records = []
    for n, windows in enumerate(comm.exp_windows):
        calls = {768 * 1024: n // 2 + 1, 818 * 1024: (n + 1) // 2}  # dispatches and combines so far
        records.append({(r, at, c): (struct.unpack_from("<I", w, at + c * 512)[0],
                                     struct.unpack_from("<Q", w, at + c * 512 + 24)[0])
                        for r, w in windows.items() for at in calls for c in range(real_world.REAL_AIV)})
    assert records == [{(r, at, c): (k % 2, k)
                        for r in range(2) for at, k in ((768 * 1024, n // 2 + 1), (818 * 1024, (n + 1) // 2))
                        for c in range(real_world.REAL_AIV)} for n in range(8)]

A5 = "ascend950"


def test_950_real_dispatch_then_generated_combine(tree, tmp_path):
    moe_layer(Communicator(tree, tmp_path), REAL, GEN, first_world(A5))


def test_950_generated_dispatch_then_real_combine_with_its_findings_fixed(tree, tmp_path):
    """The real 950 CombineV2 with its two findings fixed in a temp copy (tests/test_real_ops_world.py
    A5_COMBINE_CONTEXT, A5_COMBINE_PACK_SOURCE), on the windows the generated DispatchV2 left."""
    comm = Communicator(tree, tmp_path, {COMBINE[0].OP: a5_combine_fixed(tree.ops, tmp_path / "ops")})
    moe_layer(comm, GEN, REAL, first_world(A5))


# The Ascend 950 status area (issue 33): the generated pair keeps the real MTE ops' 1 MiB at the start of windowsIn,
# laid out as theirs (templates/cpp/common/op_kernel/opgen_kernel_helpers.h, __NPU_ARCH__ 3510). code: mc2/common/
# op_kernel/moe_distribute_base.h A5_MTE_STATE_WIN_SIZE, EP_RANK_OFFSET_STEP (rank r's area starts r * 1 KiB into its
# windowsIn); mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_v2_constant.h DISPATCH_STATE_WIN_OFFSET,
# COMBINE_STATE_WIN_OFFSET, WIN_ADDR_ALIGN.
A5_STATE = MB
A5_RANK_STEP = 1024
A5_DISPATCH_WORDS, A5_COMBINE_WORDS, A5_WORD_STRIDE = 768 * 1024, 818 * 1024, 512


def windows_in(windows: Path, world: int) -> dict[int, bytearray]:
    """Each rank's windowsIn (HCCL group 0) up to 2 MiB, as the pages a job left (zero where never written)."""
    import struct

    data, at, out = windows.read_bytes(), 0, {r: bytearray(2 * MB) for r in range(world)}
    while at < len(data):
        kind, group, rank, offset = struct.unpack_from("<IIIQ", data, at)
        if kind == 0 and group == 0 and offset < 2 * MB:
            out[rank][offset:offset + PAGE] = data[at + 20:at + 20 + PAGE]
        at += 20 + PAGE
    return out


def status_area(windows: Path, world: int) -> dict[int, bytes]:
    """Each rank's 950 status area: 1 MiB from rank * 1 KiB of its windowsIn."""
    return {r: bytes(w[r * A5_RANK_STEP:r * A5_RANK_STEP + A5_STATE]) for r, w in windows_in(windows, world).items()}


def core_words(area: bytes, at: int, cores: int) -> list[tuple[int, ...]]:
    """The InitWinState block of each core (8 uint32) at ``at`` + core * 512 of a status area."""
    import struct

    return [struct.unpack_from("<8I", area, at + c * A5_WORD_STRIDE) for c in range(cores)]


def test_950_real_and_generated_dispatch_leave_the_same_status_area(tree, tmp_path):
    """The real and the generated 950 DispatchV2 on one world, each on fresh windows: the status areas they leave
    agree byte for byte (rank r's from r KiB into its windowsIn, nothing before it): the entries of data
    state 0, {flag cleared to 0, rows, 0 x 6} at (source rank + local expert * epWorldSize) * 32, and each core's
    InitWinState block at 768K + core * 512: data state flipped to 1, position 2 (past the wait), epRankId,
    moeExpertNum, epWorldSize, globalBS, the call count 1 (code: moe_distribute_v2_base.h InitWinState;
    moe_distribute_dispatch_v2.h SetStatus, WaitDispatchClearStatus, RunPosRecord)."""
    ref, _ = DISPATCH
    case = first_world(A5)
    world, ranks = testkit.build_world(ref, case), case["world"]
    areas = {}
    for kind in (REAL, GEN):
        comm = Communicator(tree, tmp_path / kind)
        comm.run(kind, DISPATCH, case, world)
        areas[kind] = status_area(comm.windows, ranks)
        for r, w in windows_in(comm.windows, ranks).items():
            assert not any(w[:r * A5_RANK_STEP]), f"{kind} rank {r}: bytes before its status area"
    attrs = case["attrs"]
    global_bs = int(attrs.get("globalBS", 0)) or case["inputs"]["x"][1][0] * ranks
    for r in range(ranks):
        words = core_words(areas[GEN][r], A5_DISPATCH_WORDS, real_world.REAL_AIV)
        assert words == [(1, 2, r, attrs["moeExpertNum"], ranks, global_bs, 1, 0)] * real_world.REAL_AIV
        assert areas[GEN][r] == areas[REAL][r], f"rank {r}: the status areas differ"


def test_950_real_and_generated_pairs_share_the_data_state_words(tree, tmp_path):
    """Real pair, generated pair, real pair on one communicator: each op reads the per-core word the op of its kind
    before it left and flips it, whoever ran before (DispatchV2's at 768K, CombineV2's at 818K, + core * 512), so the
    three layers address data states 0, 1, 0 and every op agrees with the reference; after them each word holds
    data state 1 and the call count 3."""
    comm = Communicator(tree, tmp_path, {COMBINE[0].OP: a5_combine_fixed(tree.ops, tmp_path / "ops")})
    case = first_world(A5)
    ranks, seen = case["world"], []
    for layer, kind in enumerate((REAL, GEN, REAL)):
        moe_layer(comm, kind, kind, dict(case, id=f"{case['id']}-layer{layer}"))
        area = status_area(comm.windows, ranks)
        seen.append([(core_words(area[r], A5_DISPATCH_WORDS, 1)[0][0::6],
                      core_words(area[r], A5_COMBINE_WORDS, 1)[0][0::6]) for r in range(ranks)])
    # (data state, call count) of core 0's dispatch and combine word on each rank, after each layer
    assert seen == [[((1, 1), (1, 1))] * ranks, [((0, 2), (0, 2))] * ranks, [((1, 3), (1, 3))] * ranks]


@pytest.mark.parametrize("mask", ["xActiveMask4", "xActiveMask4x2"], ids=["1d-mask", "2d-mask"])
def test_950_real_and_generated_combine_records_agree_with_a_mask(tree, tmp_path, mask):
    """The real pair (the combine's findings fixed) and the generated pair, each on fresh windows, on a masked world
    of BS 16 (masked_world): every core's CombineV2 InitWinState block at 818K + core * 512 is the same in both,
    word 1 (the position) 1 + the core's share of the active tokens as the real op splits them (code: mc2/
    moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h LocalWindowCopy). Before, the
    generated position counted the active tokens of its own split of all 16 tokens (the 1-D mask's 11 active:
    3, 3, 3, 3, 3, 2, 1, 1 where the real reads 3, 3, 3, 2, 2, 2, 2, 2). The real combine leaves an inactive token's
    xOut row unwritten (the reference and the generated op write zeros): its active rows equal the generated's."""
    import numpy as np

    case = masked_world(A5, mask)
    ranks, records, xout = case["world"], {}, {}
    fixed = {COMBINE[0].OP: a5_combine_fixed(tree.ops, tmp_path / "ops")}
    for kind in (REAL, GEN):
        comm = Communicator(tree, tmp_path / kind, fixed)
        world, xout[kind] = moe_layer(comm, kind, kind, case, skip=("xOut",) if kind == REAL else ())
        area = status_area(comm.windows, ranks)
        records[kind] = [core_words(area[r], A5_COMBINE_WORDS, real_world.REAL_AIV) for r in range(ranks)]
    actives = [np.asarray(world.masks[r]).reshape(len(world.masks[r]), -1).any(axis=1) for r in range(ranks)]
    for r, active in enumerate(actives):
        share = [len(part) for part in np.array_split(np.arange(int(active.sum())), real_world.REAL_AIV)]
        assert [w[1] for w in records[GEN][r]] == [1 + s for s in share], r
        real_rows, gen_rows = (np.asarray(testkit.data(xout[k][r]["xOut"])) for k in (REAL, GEN))
        assert real_rows[active].tobytes() == gen_rows[active].tobytes(), r
    assert not all(a.all() for a in actives)
    assert records[GEN] == records[REAL]


def first_data_byte(windows: Path, rank: int, start: int) -> int | None:
    """The offset of the first non-zero byte at or past ``start`` of rank ``rank``'s windowsIn (HCCL group 0) in
    the pages a job left; None when there is none."""
    import struct

    data, at, pages = windows.read_bytes(), 0, {}
    while at < len(data):
        kind, group, r, offset = struct.unpack_from("<IIIQ", data, at)
        if kind == 0 and group == 0 and r == rank and offset + PAGE > start:
            pages[offset] = data[at + 20:at + 20 + PAGE]
        at += 20 + PAGE
    for offset in sorted(pages):
        page = pages[offset]
        hit = next((i for i in range(max(start - offset, 0), PAGE) if page[i]), None)
        if hit is not None:
            return offset + hit
    return None


def test_950_real_and_generated_dispatch_write_their_data_halves_at_the_same_offsets(tree, tmp_path):
    """Two DispatchV2 calls (data states 0, then 1) of the real and of the generated 950 op, each kind on fresh
    windows of one world: on every rank each call's first row byte lands at the same offset of its windowsIn for
    both kinds. Rank r's first half starts 1 MiB + r KiB in, so the real op's rows lie exactly 1 KiB further on
    rank r + 1 than on rank r, and its second call's totalWinSizeEp / 2 = (2 * HCCL_BUFFSIZE - 1 MiB - epWorldSize
    KiB) / 2 past its first (code: mc2/common/op_kernel/moe_distribute_base.h GetBaseWindAddrByRankId;
    moe_distribute_dispatch_v2.h, dataState_ * (totalWinSizeEp_ / 2)); the dispatch area follows CombineV2's
    row slots, counted without a shared expert where there are no shared expert ranks, as the real tiling reads
    sharedExpertNum. Measured 2026-12-07 (2 ranks, BS 4, H 1024, K 2, HCCL_BUFFSIZE 200): the first call's rows at
    1 MiB + 20 KiB + r KiB, the second's 209189888 bytes later. Before the 950 `window`'s rank_step the generated
    halves began 1 MiB + (epWorldSize - 1) KiB in on every rank, each (the window the group reported - 1 MiB -
    (epWorldSize - 1) KiB) / 2 long, after a combine area of K + 1 slots a token: the generated rows lay at 1 MiB +
    31 KiB on both ranks (11 and 10 KiB after the real ones), and 11.5 and 10.5 KiB after them in the second call."""
    ref, _ = DISPATCH
    case = first_world(A5)
    world, ranks = testkit.build_world(ref, case), case["world"]
    env = {**ref.ENV, **case.get("env", {})}
    # code: mc2/moe_distribute_dispatch_v2/op_host/op_tiling/moe_distribute_check_win_size.h CheckWinSize
    # (totalWinSizeEp = 2 * HCCL_BUFFSIZE - MTE_STATE_ZONE_SIZE - epWorldSize * EP_RANK_OFFSET_STEP)
    buffsize = int(env.get("HCCL_BUFFSIZE", sim.job.HCCL_BUFFSIZE_DEFAULT)) * MB
    half = (2 * buffsize - A5_STATE - ranks * A5_RANK_STEP) // 2
    rows: dict[str, list[list[int | None]]] = {}
    for kind in (REAL, GEN):
        comm = Communicator(tree, tmp_path / kind)
        rows[kind] = []
        for call in range(2):
            comm.run(kind, DISPATCH, dict(case, id=f"{case['id']}-call{call}"), world)
            rows[kind].append([first_data_byte(comm.windows, r, A5_STATE + call * half) for r in range(ranks)])
    real = rows[REAL]
    assert all(at is not None for call in real for at in call), real
    assert [[at - r * A5_RANK_STEP for r, at in enumerate(call)] for call in real] == [
        [real[0][0]] * ranks, [real[0][0] + half] * ranks], real
    assert A5_STATE <= real[0][0] < A5_STATE + half
    assert rows[GEN] == real, rows


def _constants(text: str, names: tuple[str, ...]) -> dict[str, int]:
    """The value of each `constexpr <type> NAME = <integer expression>;` of a C++ header (U / UL suffixes and the
    names defined before it allowed)."""
    import ast
    import operator
    import re

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.floordiv}

    def value(node, found):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in found:
            return found[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](value(node.left, found), value(node.right, found))
        raise ValueError(ast.dump(node))

    found: dict[str, int] = {}
    for m in re.finditer(r"constexpr\s+\w+\s+(\w+)\s*=\s*([^;]+);", text):
        expr = re.sub(r"(\d+)U?L?\b", r"\1", m.group(2))
        try:
            found[m.group(1)] = value(ast.parse(expr, mode="eval").body, found)
        except (ValueError, SyntaxError):
            continue
    return {n: found[n] for n in names}


def test_950_status_offsets_are_the_real_ones(tree):
    """The generated kernels' status layout of the real ops (opgen_kernel_helpers.h REAL_STATUS, which Ascend 950
    keeps in windowsIn and Atlas A3 in windowsExp) and the 950 windows' status bytes and per-rank step (the
    `state` and `rank_step` of the 950 `window` of DispatchV2, CombineV2 and CombineAddRmsNorm) are the real ops'
    numbers, read from the real headers."""
    from opgen.lang.expr import Int, to_spec

    from .conftest import ROOT, load_ok

    helpers = (ROOT / "templates/cpp/common/op_kernel/opgen_kernel_helpers.h").read_text(encoding="utf-8")
    ours = _constants(helpers, ("REAL_STATE_STRIDE", "REAL_COMBINE_FLAGS_AT", "REAL_DISPATCH_WORDS_AT",
                                "REAL_COMBINE_WORDS_AT", "REAL_WORD_STRIDE"))
    windows = {spec: load_ok(ROOT / "specs" / spec).view(A5).window
               for spec in ("dispatch_v2.spec", "combine_v2.spec", "combine_add_rms_norm.spec")}
    assert all(isinstance(w.rank_step, Int) and w.rank_count == "epWorldSize" for w in windows.values()), windows
    steps = {w.rank_step.value for w in windows.values()}
    assert len(steps) == 1 and all(to_spec(w.state) == "1 * MB" for w in windows.values())
    ours["STATE_RANK_STEP"] = steps.pop()
    mc2 = tree.ops / "mc2"
    base = _constants((mc2 / "common/op_kernel/moe_distribute_base.h").read_text(encoding="utf-8"),
                      ("A5_MTE_STATE_WIN_SIZE", "EP_RANK_OFFSET_STEP"))
    v2 = _constants((mc2 / "moe_distribute_dispatch_v2/op_kernel/moe_distribute_v2_constant.h").read_text(
        encoding="utf-8"), ("WIN_STATE_OFFSET", "DISPATCH_STATE_WIN_OFFSET", "WIN_ADDR_ALIGN",
                            "COMBINE_STATE_WIN_OFFSET", "COMBINE_STATE_OFFSET"))
    assert ours == {"REAL_STATE_STRIDE": v2["WIN_STATE_OFFSET"], "REAL_COMBINE_FLAGS_AT": v2["COMBINE_STATE_OFFSET"],
                    "REAL_DISPATCH_WORDS_AT": v2["DISPATCH_STATE_WIN_OFFSET"],
                    "REAL_COMBINE_WORDS_AT": v2["COMBINE_STATE_WIN_OFFSET"], "REAL_WORD_STRIDE": v2["WIN_ADDR_ALIGN"],
                    "STATE_RANK_STEP": base["EP_RANK_OFFSET_STEP"]}
    assert (A5_STATE, A5_RANK_STEP, A5_DISPATCH_WORDS, A5_COMBINE_WORDS, A5_WORD_STRIDE) == (
        base["A5_MTE_STATE_WIN_SIZE"], base["EP_RANK_OFFSET_STEP"], v2["DISPATCH_STATE_WIN_OFFSET"],
        v2["COMBINE_STATE_WIN_OFFSET"], v2["WIN_ADDR_ALIGN"])


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


def _slot_base(window: bytes, slots: dict[int, bytes], stride: int,
               defined: list[tuple[int, int]] | None = None) -> int | None:
    """Where slot 0 of a combine area lies in ``window`` such that every slot of ``slots`` (index -> the row bytes
    its sender returned, or its message) holds them in the first 480 bytes of each 512-byte block (only the byte
    ranges ``defined``, all by default) and a zero (cleared) flag in the last 32; None when no place fits."""
    first = min(slots)
    spans = defined or [(0, len(slots[first]))]
    probe = slots[first][spans[0][0]:min(spans[0][1], BLOCK_DATA)]
    at = window.find(probe)
    while at >= 0:
        base = at - spans[0][0] - first * stride
        if base >= 0 and all(_slot_holds(window, base + s * stride, row, spans) for s, row in slots.items()):
            return base
        at = window.find(probe, at + 1)
    return None


def _slot_holds(window: bytes, at: int, row: bytes, spans: list[tuple[int, int]]) -> bool:
    blocks = -(-len(row) // BLOCK_DATA)
    data = b"".join(window[at + b * BLOCK:at + b * BLOCK + BLOCK_DATA] for b in range(blocks))
    tails = [window[at + b * BLOCK + BLOCK_DATA:at + (b + 1) * BLOCK] for b in range(blocks)]
    return all(data[a:e] == row[a:e] for a, e in spans) and all(t == bytes(BLOCK_FLAG) for t in tails)


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


def _int8_message(row, h: int) -> tuple[bytes, list[tuple[int, int]]]:
    """The real 950 combine's comm-quant-2 message of one returned row (float16 here) and its defined byte ranges:
    the int8 row at byte 0, then at Ceil(H, 32) the block scales in the row's dtype, one per 8 elements and
    Ceil(H, 128) * 16 of them (the scales of the zero padding 0), commDataBytes = Ceil(H, 32) + 2 * that count. The
    bytes between the int8 row and the scales are UB the kernel never writes.
    code: mc2/moe_distribute_combine_v2/op_kernel/moe_distribute_combine_v2_quant.h (QuantInit: hAlign32Size_,
    quantScaleNum_ = (hFloatAlign256Size_ / 4) / 8 with hFloatAlign256Size_ = Ceil(4H, 512), tokenScaleCnt_;
    Int8QuantProcess: BlockReduceMax over the zeroed xAbsBuf_, Muls 1/127, Cast RINT of the scales at byte
    hAlign32Size_, Div by the fp32 scales, Cast fp16 RINT, Cast int8 RINT), arch35/moe_distribute_combine_v2_a5_mte.h
    (InitAttrs: hFloatA5FusedQuantSize, commDataBytes_ = tokenScaleCnt_ * sizeof(ExpandXType); BuffInit:
    Duplicate(absFloatTensor_, 0, hFloatAlign256Cnt))"""
    import numpy as np

    scales = -(-h // 128) * 16
    v = np.zeros(scales * 8, np.float32)
    v[:h] = np.asarray(row, np.float16).astype(np.float32)
    s = np.abs(v).reshape(-1, 8).max(axis=1) * np.float32(np.float32(1.0) / np.float32(127.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.rint((v[:h] / np.repeat(s, 8)[:h]).astype(np.float16).astype(np.float32))
    q = np.clip(q, -128, 127).astype(np.int8)
    at = -(-h // 32) * 32
    message = bytearray(at + 2 * scales)
    message[:h] = q.tobytes()
    message[at:] = s.astype(np.float16).tobytes()
    return bytes(message), [(0, h), (at, len(message))]


@pytest.mark.parametrize("h", [1024, 1032])
def test_950_generated_quant_2_combine_packs_its_window_slots_as_the_real_one(tree, tmp_path, h):
    """One real DispatchV2, then the generated and the real (findings fixed) CombineV2 with commQuantMode 2 each on
    the windows it left: on every rank both leave each returned row's message (_int8_message, the real op's) in its
    slot token * (K + S) + k of Ceil(commDataBytes, 480) 512-byte blocks, 480 message bytes then the cleared flag in
    each block (H 1024: 1280 bytes, 3 blocks). H 1032, not a multiple of 128 (1056 + 288 = 1344 bytes, 3 blocks):
    the message's last 15 scales are those of the zero padding, 0 (before, the generated op left them unwritten UB,
    the twin's 0xCD poison). There the real op does not run on the twin: its fused A5 dequantisation
    (Int8DequantProcessA5) stores the tail repeat's registers with a partial mask through a dual DIST_INTLV_B32
    store, which the documents do not define and the twin refuses, so the generated one is checked against the real
    op's layout alone."""
    import numpy as np

    case = dict(first_world(A5))
    case["inputs"] = dict(case["inputs"], x=(case["inputs"]["x"][0], (case["inputs"]["x"][1][0], h)))
    case["id"] = f"{case['id']}-h{h}"
    cref, _ = COMBINE
    ref, _ = DISPATCH
    world = testkit.build_world(ref, case)
    gen = Communicator(tree, tmp_path / "gen")
    dispatched = gen.run(REAL, DISPATCH, case, world)
    real = Communicator(tree, tmp_path / "real", {cref.OP: a5_combine_fixed(tree.ops, tmp_path / "ops")})
    real.windows = gen.windows
    cin, cattrs = testkit.combine_inputs(ref, case, world, dispatched, cref)
    attrs = {k: v for k, v in cattrs.items() if k in cref.ATTRS}
    attrs[cref.INFO.quant_by] = 2
    ccase = {"id": f"{case['id']}-combine-q2", "world": case["world"], "product": case["product"], "attrs": attrs,
             "env": {k: v for k, v in cattrs.items() if k in cref.ENV}}
    gen.run(GEN, COMBINE, ccase, real_world.Inputs(cin))
    kinds = ((GEN, gen),)
    if h % 128 == 0:
        real.run(REAL, COMBINE, ccase, real_world.Inputs(cin))
        kinds += ((REAL, real),)
    k = case["inputs"]["expertIds"][1][1]
    want: dict[int, dict[int, bytes]] = {r: {} for r in range(case["world"])}
    defined = None
    for s, c in enumerate(cin):
        rows = np.asarray(testkit.data(c["expandX"]))
        info = np.asarray(testkit.data(c["assistInfoForCombine"])).reshape(-1)
        count = int(np.asarray(testkit.data(c["epSendCounts"])).reshape(-1)[-1])
        for i in range(count):
            owner, token, pair = (int(v) for v in info[3 * i:3 * i + 3])
            want[owner][token * k + pair], defined = _int8_message(rows[i], h)
    message = len(next(iter(want[0].values())))
    assert message == {1024: 1280, 1032: 1344}[h]
    stride = -(-message // BLOCK_DATA) * BLOCK
    assert sum(len(w) for w in want.values()) == case["world"] * case["inputs"]["x"][1][0] * k
    for r in range(case["world"]):
        for kind, comm in kinds:
            runs = _windows_in(comm.windows, r)
            assert any(_slot_base(run, want[r], stride, defined) is not None for run in runs), (kind, r)
