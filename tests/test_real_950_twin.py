"""The Ascend 950 Setup/Teardown family's real kernels (``op_kernel/arch35``, unmodified, from ``../shared/cann``) on
the twin, driven by their real op_host tilings.

CombineTeardown: the real entry runs after the window state the real CombineSetup leaves (``opgen.harness.real_950``:
the pages its URMA work requests write, at the addresses the real kernel names) and every output is compared with
the generated op's numpy reference, bit-exact. The worlds are the generated suite's with ``globalBs = BS *
epWorldSize`` (what the documents give when every rank has the same BS): at ``globalBs 0`` the real tilings keep 0
and both real kernels divide it (``axisMaxBS_ = globalBs / epWorldSize``), so every expert block of the window starts
at the same offset and what a rank reads depends on the order of the URMA writes (``OverlappingBlocks``).

CombineSetup: its real entry compiles and runs on the twin up to its first URMA access, where the twin faults naming
the call: the queue descriptors (``HcclCombinOpParam::sqs``) lie past the context the twin fills.

Interop: the generated CombineSetup fills the windows (by MTE, at the places the real work requests name) and the
real CombineTeardown, unmodified, reduces them on one communicator; the generated Setup's window pages equal
``combine_setup_pages`` byte for byte where the real Teardown reads (default tier one world, slow every positive one).
The other way, the generated CombineTeardown reduces the pages the real CombineSetup leaves (``combine_setup_pages``)
and agrees with the reference, masked worlds included (it honours xActiveMask), and flips each of its cores' data-state
words as the real one does. A second call of the mixed pair uses data half 1 (at HCCL_BUFFSIZE / 4, the specs'
``window ep: HCCL_BUFFSIZE // 2``) and status half 1 where the second real Teardown reads.

The Dispatch pair alike: the generated DispatchSetup's pages equal ``dispatch_setup_pages`` where the real
DispatchTeardown (the copy with its two findings fixed) reads, which agrees with the reference; the generated
DispatchTeardown reads the real DispatchSetup's pages and agrees (default tier one world, slow every world the real
pair reaches).
"""
from __future__ import annotations

import dataclasses
import shutil
import struct

import pytest

from opgen import sim
from opgen.harness import real_950, testkit
from opgen.sim import job as jobs
from opgen.sim import real_tiling, real_world
from opgen.sim.real_kernel import kernel_object
from .real_ops import GENERATED, MARKS, suite, tree  # noqa: F401 - tree: the module's fixture

pytestmark = MARKS

TEARDOWN = suite("moe_distribute_combine_teardown")
SETUP = suite("moe_distribute_combine_setup")
PRODUCT = "ascend950"

# the real kernel ignores xActiveMask: Init takes it as `GM_ADDR /*xActiveMask*/` and LocalWindowCopy reduces every
# token of its core, where the documents say the mask marks the tokens that take part (inactive rows: 0)
MASK_IGNORED = (
    "the real Ascend 950 CombineTeardown ignores xActiveMask (code: mc2/moe_distribute_combine_teardown/op_kernel/"
    "arch35/moe_distribute_combine_teardown_arch35.h Init: GM_ADDR /*xActiveMask*/; LocalWindowCopy loops "
    "[beginIndex_, endIndex_) of all BS tokens): it writes a reduced row for an inactive token, whose row the "
    "reference (docs: aclnnMoeDistributeCombineTeardown.md xActiveMaskOptional, 表示token是否参与通信) "
    "leaves 0")


def with_global_bs(case: dict) -> dict:
    """The case with globalBs = BS * epWorldSize (docs: aclnnMoeDistributeCombineTeardown.md globalBs)."""
    bs = case["inputs"]["expertIds"][1][0]
    attrs = dict(case["attrs"], globalBs=bs * case["attrs"]["epWorldSize"])
    return dict(case, id=f"{case['id']}-globalBs-{attrs['globalBs']}", attrs=attrs)


def state_words(pages: dict, rank: int) -> list[int]:
    """Each real vector core's data-state word in rank ``rank``'s windowsOut (``jobs.read_windows`` pages)."""
    return [struct.unpack("<i", jobs.window_bytes(pages, jobs.WINDOWS_OUT, rank, real_950.STATE_WIN_OFFSET
                                                  + c * real_950.STATE_SIZE_PER_CORE, 4))[0]
            for c in range(real_world.REAL_AIV)]


def assert_agrees(ref, cases, case, world, got):
    want = testkit.run(ref, case, world)
    problems = [p for r in range(case["world"])
                for p in testkit.output_problems(ref, cases, case, world, r, got[r], want[r])]
    assert not problems, "\n".join(problems)


def teardown_run(tree, case, work):
    ref, cases = TEARDOWN
    world = testkit.build_world(ref, case)
    got = real_950.run_combine_teardown(tree, ref, SETUP[0], case, world, work)
    return ref, cases, world, got


def test_real_950_combine_teardown_agrees_with_the_reference(tree, tmp_path):
    case = with_global_bs(TEARDOWN[1].POSITIVE[0])
    ref, cases, world, got = teardown_run(tree, case, tmp_path)
    assert_agrees(ref, cases, case, world, got)
    # what it leaves for the next layer (code: Init flips each core's data-state word; WaitDispatch clears the
    # status slots it waited on): every core's word 1, no status word left
    pages = jobs.read_windows(tmp_path / "run" / jobs.WINDOWS_FILE)
    words = {r: state_words(pages, r) for r in range(case["world"])}
    assert words == {r: [1] * real_world.REAL_AIV for r in range(case["world"])}
    assert all(jobs.window_bytes(pages, jobs.WINDOWS_OUT, r, 0, 64 * 1024) == bytes(64 * 1024)
               for r in range(case["world"]))


def test_at_global_bs_0_the_real_combine_setup_writes_every_expert_block_at_one_offset():
    ref, _cases = TEARDOWN
    case = TEARDOWN[1].POSITIVE[0]
    assert case["attrs"].get("globalBs", 0) == 0
    world = testkit.build_world(ref, case)
    inputs = real_950.setup_inputs(ref, SETUP[0], case, world)
    attrs = testkit.read_attrs(ref, case)
    with pytest.raises(real_950.OverlappingBlocks, match=r"maxBs = globalBs / epWorldSize = 0\)"):
        real_950.combine_setup_pages(inputs, attrs, 100 << 20)
    # at globalBs = BS * W every block has its own place, and its last expert's block carries the flag
    pages = real_950.combine_setup_pages(inputs, dict(attrs, globalBs=16), 100 << 20)
    flags = {k: v for k, v in pages.items() if k[0] == jobs.WINDOWS_OUT}
    assert flags == {(jobs.WINDOWS_OUT, r): {d * real_950.STATE_OFFSET: struct.pack("<I", real_950.FLAG_ONE)
                                             for d in range(2)} for r in range(2)}


def test_real_950_combine_setup_faults_at_its_first_urma_access(tree, tmp_path):
    ref, _cases = TEARDOWN
    case = with_global_bs(TEARDOWN[1].POSITIVE[0])
    world = testkit.build_world(ref, case)
    pcase, pworld, _feeds, _expected = testkit.prelude_plan(ref, case, world, SETUP[0])
    with pytest.raises(jobs.TwinFault) as err:
        real_world.run(tree, SETUP[0], pcase, pworld, tmp_path)
    # code: moe_distribute_combine_setup/op_kernel/moe_distribute_base.h GetURMASqInfoTensor: DataCopyPad of
    # sizeof(HcclAiRMAWQ) = 80 bytes from &hcclContext->sqs[dstRankId], sqs at byte 1128 of HcclCombinOpParam; the
    # first core to get there (of either rank) stops the world
    faults = [line.strip() for line in str(err.value).splitlines()[1:]]
    assert faults, str(err.value)
    for fault in faults:
        rank = int(fault.split()[1])
        assert fault.endswith(
            f": DataCopyPad GM->UB src: out-of-bounds GM access of 80 bytes at HCCL context of rank {rank} (group 0; "
            "HcclCombineOpParam up to windowsOut[], not the CCU registers or the URMA queues sqs[] / cqs[] past it) "
            f"+ {1128 + 80 * (1 - rank)} (past its 1056 bytes)"), faults


def _global_bs_worlds():
    """Every positive world at globalBs = BS * epWorldSize (slow; the masked ones xfail: MASK_IGNORED)."""
    out = []
    for case in TEARDOWN[1].POSITIVE:
        marks = [pytest.mark.slow]
        if "xActiveMaskOptional" in case["inputs"]:
            marks.append(pytest.mark.xfail(strict=True, reason=MASK_IGNORED))
        out.append(pytest.param(with_global_bs(case), marks=marks, id=case["id"]))
    return out


def _every_world():
    return _global_bs_worlds() + [
        pytest.param(case, marks=[pytest.mark.slow, pytest.mark.xfail(
            strict=True, raises=real_950.OverlappingBlocks,
            reason="globalBs 0: the real kernels place every expert block at one window offset")],
            id=f"{case['id']}-globalBs-0") for case in TEARDOWN[1].POSITIVE]


@pytest.mark.parametrize("case", _every_world())
def test_real_950_combine_teardown_on_every_positive_world(tree, tmp_path, case):
    ref, cases, world, got = teardown_run(tree, case, tmp_path)
    assert_agrees(ref, cases, case, world, got)


# ---- DispatchTeardown ---------------------------------------------------------------------------------------------
# The real entry is keyed by TILING_KEY_IS (the twin builds the binary of the key the real tiling set) and runs after
# the windows the real DispatchSetup leaves (real_950.dispatch_setup_pages). Two findings in the real kernel stop it
# before its outputs; a temp copy with exactly those two lines changed (never the tarball's file) shows that the rest
# of it agrees with the reference.
D_TEARDOWN = suite("moe_distribute_dispatch_teardown")
D_SETUP = suite("moe_distribute_dispatch_setup")
D_KERNEL = "mc2/moe_distribute_dispatch_teardown/op_kernel/arch35/moe_distribute_dispatch_teardown_arch35.h"
# code: LocalWindowCopy builds its pad parameters from `*reinterpret_cast<ExpandXOutType *>(uint8_t(0))`, a read of
# address 0 (the pad value is unused: isPad false), on every core that has status slots to copy
NULL_PAD_READ = "*reinterpret_cast<ExpandXOutType *>(uint8_t(0))"
NULL_PAD_FIX = "ExpandXOutType{}"
# code: LocalWindowCopy stores each slot's cumulative count with outCountLocal.SetValue (the scalar unit) and copies
# outCountLocal out with DataCopyPad (MTE3) with no S_MTE3 between: a core whose slots received no token (nothing
# between the two) copies out what the UB held before the stores
COUNTS_COPY = "    DataCopyPad(sendCountsGlobal[startExpertId_], outCountLocal, dataCopyOutParams);"
COUNTS_COPY_FIX = "    SyncFunc<AscendC::HardEvent::S_MTE3>();\n" + COUNTS_COPY
D_FINDINGS = (
    "the real Ascend 950 DispatchTeardown reads address 0 (code: mc2/moe_distribute_dispatch_teardown/op_kernel/"
    "arch35/moe_distribute_dispatch_teardown_arch35.h LocalWindowCopy: DataCopyPadExtParams<ExpandXOutType> "
    "copyPadExtParams{false, 0U, 0U, *reinterpret_cast<ExpandXOutType *>(uint8_t(0))}), and stores its counts with "
    "the scalar unit and copies them out on MTE3 with no S_MTE3 sync between (outCountLocal.SetValue ... "
    "DataCopyPad(sendCountsGlobal[startExpertId_], outCountLocal, ...))")
SHARED_NOT_SENT = (
    "the real Ascend 950 DispatchSetup sends nothing to a shared-expert rank (code: mc2/moe_distribute_dispatch_setup/"
    "op_kernel/arch35/moe_distribute_dispatch_setup_arch35.h Communication: `if (rankId < sharedExpertRankNum_) {}` "
    "is empty): that rank's DispatchTeardown waits for ever")


def fixed_dispatch_teardown(tree, tmp_path):
    """An ops-transformer/ of the real DispatchTeardown's kernel folders (and the setup's and mc2/common's it
    includes) in which the two findings' lines are changed, each found exactly once."""
    root = tmp_path / "fixed" / "ops-transformer"
    for sub in ("mc2/moe_distribute_dispatch_teardown/op_kernel", "mc2/moe_distribute_dispatch_setup/op_kernel",
                "mc2/common/op_kernel"):
        shutil.copytree(tree.ops / sub, root / sub)
    header = root / D_KERNEL
    text = header.read_text()
    assert text.count(NULL_PAD_READ) == 1 and text.count(COUNTS_COPY) == 1, "the real kernel changed: update the fix"
    header.write_text(text.replace(NULL_PAD_READ, NULL_PAD_FIX).replace(COUNTS_COPY, COUNTS_COPY_FIX))
    return root


def dispatch_teardown_run(tree, case, work, kernel_root=None):
    ref, cases = D_TEARDOWN
    world = testkit.build_world(ref, case)
    got, inputs = real_950.run_dispatch_teardown(tree, ref, D_SETUP[0], case, world, work, kernel_root=kernel_root)
    return ref, cases, dataclasses.replace(world, inputs=inputs), got


@pytest.mark.xfail(strict=True, raises=jobs.TwinFault, reason=D_FINDINGS)
def test_real_950_dispatch_teardown_agrees_with_the_reference(tree, tmp_path):
    case = with_global_bs(D_TEARDOWN[1].POSITIVE[0])
    try:
        ref, cases, world, got = dispatch_teardown_run(tree, case, tmp_path)
    except jobs.TwinFault as err:
        # the first finding stops it: every core with slots to copy reads address 0 (the first to get there stops
        # the world)
        assert "the kernel's own code accessed address 0x0, which no GM, UB or window buffer of the twin holds" \
            in str(err), str(err)
        raise
    assert_agrees(D_TEARDOWN[0], D_TEARDOWN[1], case, world, got)


def test_real_950_dispatch_teardown_with_its_two_findings_fixed_agrees_with_the_reference(tree, tmp_path):
    case = with_global_bs(D_TEARDOWN[1].POSITIVE[0])
    ref, cases, world, got = dispatch_teardown_run(tree, case, tmp_path, fixed_dispatch_teardown(tree, tmp_path))
    assert_agrees(ref, cases, case, world, got)
    # what it leaves (code: Init flips each core's data-state word; WaitDispatch zeroes the flag word of every status
    # block it waited on, DataCopy of the blocks back with their first int32 0): words 1, no flag left
    pages = jobs.read_windows(tmp_path / "run" / jobs.WINDOWS_FILE)
    assert {r: state_words(pages, r) for r in range(case["world"])} == {r: [1] * real_world.REAL_AIV
                                                                    for r in range(case["world"])}
    world_size, slots = case["world"], case["attrs"]["moeExpertNum"]
    slot = real_950.state_offset(world_size, slots // world_size)
    flags = {r: {struct.unpack("<i", jobs.window_bytes(pages, jobs.WINDOWS_OUT, r, s * slot, 4))[0]
                 for s in range(slots)} for r in range(world_size)}
    assert flags == {r: {0} for r in range(world_size)}


def test_a_real_dispatch_teardown_binary_whose_key_no_tiling_key_is_holds_faults(tree, tmp_path):
    """CANN builds one binary per key the entry names for the OpDef column: key 10000 (quant 0) has a branch only
    under the FLOAT16 / BFLOAT16 expand_x `#if`; the binary of key 10000 for an INT8 column runs no branch, which
    the twin faults on (the device has no such binary)."""
    ref, _cases = D_TEARDOWN
    case = with_global_bs(D_TEARDOWN[1].POSITIVE[0])
    world = testkit.build_world(ref, case)
    job = jobs.write_job(ref, case, world, tmp_path / "run")
    col = dict(real_world.column(ref, world, job), y="INT8", expand_x="INT8")
    arch = real_tiling.arch_of(ref, case["product"])
    exe = real_world.executable(kernel_object(tree.ops, ref, case["product"], 10000, col),
                                real_tiling.tiling_objects(tree, ref.OP, arch))
    with pytest.raises(jobs.TwinFault) as err:
        jobs.run_job(exe, job)
    faults = [line.strip() for line in str(err.value).splitlines()[1:] if line.strip()]
    assert faults and all(f.endswith("tiling key 10000: no TILING_KEY_IS of the entry holds it for this OpDef "
                                     "column: CANN builds no kernel for it") for f in faults), faults


# code: mc2/moe_distribute_dispatch_teardown/op_host/op_tiling/moe_distribute_dispatch_teardown_tiling_base.cpp
# CheckOutputTensorShapeDim: quantMode 3 / 4 need a 2-D dynamicScalesOut (the kernel writes Align2(Ceil32(H)) E8M0
# scales per row, CopyScalesToOut); the document says 1-D (A,) (docs: aclnnMoeDistributeDispatchTeardown.md
# dynamicScalesOut: 要求为1D Tensor, (A, )), which the spec follows
MX_SCALES_2D = (
    "the real Ascend 950 DispatchTeardown tiling rejects the documented 1-D dynamicScalesOut (A,) at quantMode 4: "
    "CheckOutputTensorShapeDim wants 2 dims (code: mc2/moe_distribute_dispatch_teardown/op_host/op_tiling/"
    "moe_distribute_dispatch_teardown_tiling_base.cpp; docs: aclnnMoeDistributeDispatchTeardown.md 要求为1D Tensor)")


def _dispatch_finding(case: dict):
    """The xfail mark of the first finding a world meets (the real tiling runs first, then the setup's pages), or
    None."""
    attrs = case["attrs"]
    if attrs.get("quantMode", 0) == 4:
        return pytest.mark.xfail(strict=True, raises=jobs.TwinTilingRejected, reason=MX_SCALES_2D)
    if attrs.get("sharedExpertRankNum", 0):
        return pytest.mark.xfail(strict=True, raises=real_950.SharedExpertRanksNotSent, reason=SHARED_NOT_SENT)
    if not attrs.get("globalBs", 0):
        return pytest.mark.xfail(strict=True, raises=real_950.OverlappingBlocks,
                                 reason="globalBs 0: the real kernels place every expert block at one window offset")
    return None


def _every_dispatch_world():
    out = []
    for case in D_TEARDOWN[1].POSITIVE:
        for world_case, suffix in ((with_global_bs(case), ""), (case, "-globalBs-0")):
            finding = _dispatch_finding(world_case)
            marks = [pytest.mark.slow] + ([finding] if finding else [])
            out.append(pytest.param(world_case, marks=marks, id=case["id"] + suffix))
    return out


@pytest.mark.parametrize("case", _every_dispatch_world())
def test_real_950_dispatch_teardown_fixed_on_every_positive_world(tree, tmp_path, case):
    ref, _cases = D_TEARDOWN
    plan = testkit.prelude_plan(ref, case, testkit.build_world(ref, case), D_SETUP[0])
    if isinstance(plan, str):
        pytest.skip(f"no real pipeline reaches this world: {plan}")
    ref, cases, world, got = dispatch_teardown_run(tree, case, tmp_path, fixed_dispatch_teardown(tree, tmp_path))
    assert_agrees(ref, cases, case, world, got)


def generated_twin(snake: str, ref):
    """The generated op ``snake`` on the twin (``opgen.sim.build_for``), or a skip saying why it cannot be built."""
    try:
        return sim.build_for(GENERATED / snake, ref, PRODUCT)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")


@pytest.fixture(scope="module")
def setup_twin():
    return generated_twin("moe_distribute_combine_setup", SETUP[0])


def assert_pages_are_the_real_setups(tree, case, world, work):
    """The generated Setup's windows (``work/setup``) hold, byte for byte, what the real CombineSetup's work requests
    leave where the real Teardown reads: every data block ``combine_setup_pages`` writes in windowsIn, both status
    halves of windowsOut (its 1.0f words and zeros around them), and the cores' data-state words, still 0."""
    ref, _cases = TEARDOWN
    want = real_950.combine_setup_pages(real_950.setup_inputs(ref, SETUP[0], case, world),
                                        testkit.read_attrs(ref, case),
                                        real_950.real_tiling_win_size(tree, ref, case, world, work / "tiling"))
    got = jobs.read_windows(work / "setup" / jobs.WINDOWS_FILE)
    status = 2 * real_950.WIN_STATE_OFFSET
    for r in range(case["world"]):
        spans = want.get((jobs.WINDOWS_IN, r), {})
        assert spans, f"rank {r}: the real CombineSetup writes no block there"
        for at, block in spans.items():
            assert jobs.window_bytes(got, jobs.WINDOWS_IN, r, at, len(block)) == block, (r, at, len(block))
        image = bytearray(status)
        for at, word in want.get((jobs.WINDOWS_OUT, r), {}).items():
            image[at:at + len(word)] = word
        assert jobs.window_bytes(got, jobs.WINDOWS_OUT, r, 0, status) == bytes(image), r
        assert jobs.window_bytes(got, jobs.WINDOWS_OUT, r, real_950.STATE_WIN_OFFSET,
                                 real_world.REAL_AIV * real_950.STATE_SIZE_PER_CORE) == bytes(
                                     real_world.REAL_AIV * real_950.STATE_SIZE_PER_CORE), r


def generated_setup_real_teardown(tree, setup_twin, case, work):
    ref, cases = TEARDOWN
    world = testkit.build_world(ref, case)
    _setup_outputs, got = real_950.run_generated_setup_then_real_teardown(tree, ref, SETUP[0], setup_twin, case,
                                                                          world, work)
    assert_pages_are_the_real_setups(tree, case, world, work)
    assert_agrees(ref, cases, case, world, got)


def test_generated_combine_setup_then_real_combine_teardown_agrees_with_the_reference(tree, setup_twin, tmp_path):
    generated_setup_real_teardown(tree, setup_twin, with_global_bs(TEARDOWN[1].POSITIVE[0]), tmp_path)


def test_a_second_call_of_the_mixed_pair_uses_the_other_half_and_agrees(tree, setup_twin, tmp_path):
    """Two layers on one communicator: the real Teardown flipped every core's data-state word, so the second generated
    Setup writes data half 1 (totalWinSize / 2 on) and status half 1 (windowsOut + 350K), where the second real
    Teardown reads; both calls agree with the reference, and the words are back at 0."""
    ref, cases = TEARDOWN
    case = with_global_bs(TEARDOWN[1].POSITIVE[0])
    world = testkit.build_world(ref, case)
    real_950.run_generated_setup_then_real_teardown(tree, ref, SETUP[0], setup_twin, case, world, tmp_path / "call1")
    _setup, got = real_950.run_generated_setup_then_real_teardown(
        tree, ref, SETUP[0], setup_twin, case, world, tmp_path / "call2",
        windows_in=tmp_path / "call1" / "run" / jobs.WINDOWS_FILE)
    assert_agrees(ref, cases, case, world, got)
    half = real_950.real_tiling_win_size(tree, ref, case, world, tmp_path / "tiling") // 2
    setup2 = jobs.read_windows(tmp_path / "call2" / "setup" / jobs.WINDOWS_FILE)
    slot = real_950.state_offset(case["world"], testkit.read_attrs(ref, case)["moeExpertNum"] // case["world"])
    flag = struct.pack("<I", real_950.FLAG_ONE)
    for r in range(case["world"]):
        assert state_words(setup2, r) == [1] * real_world.REAL_AIV, r
        assert [jobs.window_bytes(setup2, jobs.WINDOWS_OUT, r, real_950.WIN_STATE_OFFSET + d * slot, 4)
                for d in range(case["world"])] == [flag] * case["world"], r
        assert jobs.window_bytes(setup2, jobs.WINDOWS_IN, r, half, 64) != bytes(64), r  # rank 0's first block
    after = jobs.read_windows(tmp_path / "call2" / "run" / jobs.WINDOWS_FILE)
    assert all(state_words(after, r) == [0] * real_world.REAL_AIV for r in range(case["world"]))


@pytest.mark.parametrize("case", _global_bs_worlds())
def test_generated_combine_setup_then_real_combine_teardown_on_every_positive_world(tree, setup_twin, tmp_path,
                                                                                      case):
    generated_setup_real_teardown(tree, setup_twin, case, tmp_path)


@pytest.fixture(scope="module")
def teardown_twin():
    return generated_twin("moe_distribute_combine_teardown", TEARDOWN[0])


def real_setup_generated_teardown(tree, teardown_twin, case, work):
    ref, cases = TEARDOWN
    world = testkit.build_world(ref, case)
    got = real_950.run_generated_teardown_after_real_setup(tree, ref, SETUP[0], teardown_twin, case, world, work)
    assert_agrees(ref, cases, case, world, got)
    # what it leaves for the next call, as the real teardown: each core's data-state word 1, the status cleared
    pages = jobs.read_windows(work / "op" / jobs.WINDOWS_FILE)
    for r in range(case["world"]):
        assert state_words(pages, r) == [1] * real_world.REAL_AIV, r
        assert jobs.window_bytes(pages, jobs.WINDOWS_OUT, r, 0, 2 * real_950.WIN_STATE_OFFSET) == bytes(
            2 * real_950.WIN_STATE_OFFSET), r


def test_real_combine_setup_pages_then_generated_combine_teardown_agrees_with_the_reference(tree, teardown_twin,
                                                                                           tmp_path):
    real_setup_generated_teardown(tree, teardown_twin, with_global_bs(TEARDOWN[1].POSITIVE[0]), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", [pytest.param(with_global_bs(c), id=c["id"]) for c in TEARDOWN[1].POSITIVE])
def test_real_combine_setup_pages_then_generated_combine_teardown_on_every_positive_world(tree, teardown_twin,
                                                                                          tmp_path, case):
    real_setup_generated_teardown(tree, teardown_twin, case, tmp_path)


# ---- Dispatch pair interop ----------------------------------------------------------------------------------------
# The generated DispatchSetup writes where the real one's work requests write (data blocks (source rank * L + local
# expert) * maxBs * tokenMsgSize bytes into the data half, 32-byte status blocks {2.0f, rows} (local expert * W +
# source rank) * stateOffset into windowsOut's status half, the data state from each core's word at windowsOut +
# 950K), so the real DispatchTeardown (the copy with its two findings fixed: D_FINDINGS) reads them; the generated
# DispatchTeardown reads the pages the real DispatchSetup leaves (dispatch_setup_pages) and flips the words as the
# real one. The worlds: those the real pair reaches (no finding of _dispatch_finding at globalBs = BS * W).
def _interop_dispatch_worlds():
    out = []
    for case in D_TEARDOWN[1].POSITIVE:
        world_case = with_global_bs(case)
        if _dispatch_finding(world_case) is None:
            out.append(pytest.param(world_case, marks=[pytest.mark.slow], id=case["id"]))
    return out


@pytest.fixture(scope="module")
def dispatch_setup_twin():
    return generated_twin("moe_distribute_dispatch_setup", D_SETUP[0])


@pytest.fixture(scope="module")
def dispatch_teardown_twin():
    return generated_twin("moe_distribute_dispatch_teardown", D_TEARDOWN[0])


def assert_dispatch_pages_are_the_real_setups(tree, case, world, work):
    """The generated DispatchSetup's windows (``work/setup``) hold, byte for byte, what the real DispatchSetup's work
    requests leave where the real DispatchTeardown reads: every data block ``dispatch_setup_pages`` writes in
    windowsIn, the status half of data state 0 of windowsOut (its {2.0f, rows} blocks and zeros around them), and the
    cores' data-state words, still 0."""
    ref, _cases = D_TEARDOWN
    _fed, want = real_950.real_dispatch_setup_pages(tree, ref, D_SETUP[0], case, world, work / "pages")
    got = jobs.read_windows(work / "setup" / jobs.WINDOWS_FILE)
    blocks = 0
    for r in range(case["world"]):
        for at, block in want.get((jobs.WINDOWS_IN, r), {}).items():
            assert jobs.window_bytes(got, jobs.WINDOWS_IN, r, at, len(block)) == block, (r, at, len(block))
            blocks += 1
        image = bytearray(real_950.WIN_STATE_OFFSET)
        for at, word in want[(jobs.WINDOWS_OUT, r)].items():
            image[at:at + len(word)] = word
        assert jobs.window_bytes(got, jobs.WINDOWS_OUT, r, 0, real_950.WIN_STATE_OFFSET) == bytes(image), r
        assert state_words(got, r) == [0] * real_world.REAL_AIV, r
    assert blocks, "the real DispatchSetup writes no data block in this world"


def generated_dispatch_setup_real_teardown(tree, setup_twin, case, work):
    ref, cases = D_TEARDOWN
    pref, pcases = D_SETUP
    world = testkit.build_world(ref, case)
    plan = testkit.prelude_plan(ref, case, world, pref)
    assert not isinstance(plan, str), plan
    pcase, pworld, _feeds, pexpected = plan
    setup_outputs, got, inputs = real_950.run_generated_dispatch_setup_then_real_teardown(
        tree, ref, pref, setup_twin, case, world, work, fixed_dispatch_teardown(tree, work))
    problems = [p for r in range(case["world"])
                for p in testkit.output_problems(pref, pcases, pcase, pworld, r, setup_outputs[r], pexpected[r])]
    assert not problems, "\n".join(problems)
    assert_dispatch_pages_are_the_real_setups(tree, case, world, work)
    assert_agrees(ref, cases, case, dataclasses.replace(world, inputs=inputs), got)
    # the real Teardown flipped every core's word: the Combine pair of this layer uses data state 1
    after = jobs.read_windows(work / "run" / jobs.WINDOWS_FILE)
    assert all(state_words(after, r) == [1] * real_world.REAL_AIV for r in range(case["world"]))


def test_generated_dispatch_setup_then_real_dispatch_teardown_agrees_with_the_reference(tree, dispatch_setup_twin,
                                                                                       tmp_path):
    generated_dispatch_setup_real_teardown(tree, dispatch_setup_twin, with_global_bs(D_TEARDOWN[1].POSITIVE[0]),
                                           tmp_path)


@pytest.mark.parametrize("case", _interop_dispatch_worlds())
def test_generated_dispatch_setup_then_real_dispatch_teardown_on_every_positive_world(tree, dispatch_setup_twin,
                                                                                     tmp_path, case):
    generated_dispatch_setup_real_teardown(tree, dispatch_setup_twin, case, tmp_path)


def real_dispatch_setup_generated_teardown(tree, teardown_twin, case, work):
    ref, cases = D_TEARDOWN
    world = testkit.build_world(ref, case)
    got, inputs = real_950.run_generated_dispatch_teardown_after_real_setup(tree, ref, D_SETUP[0], teardown_twin,
                                                                           case, world, work)
    assert_agrees(ref, cases, case, dataclasses.replace(world, inputs=inputs), got)
    # what it leaves for the CombineSetup, as the real DispatchTeardown: each core's data-state word 1, the flag word
    # of every status block it waited on 0 (its row count stays, as the real WaitDispatch leaves it)
    pages = jobs.read_windows(work / "op" / jobs.WINDOWS_FILE)
    world_size, slots = case["world"], case["attrs"]["moeExpertNum"]
    slot = real_950.state_offset(world_size, slots // world_size)
    for r in range(world_size):
        assert state_words(pages, r) == [1] * real_world.REAL_AIV, r
        assert {struct.unpack("<i", jobs.window_bytes(pages, jobs.WINDOWS_OUT, r, s * slot, 4))[0]
                for s in range(slots)} == {0}, r


def test_real_dispatch_setup_pages_then_generated_dispatch_teardown_agrees_with_the_reference(
        tree, dispatch_teardown_twin, tmp_path):
    real_dispatch_setup_generated_teardown(tree, dispatch_teardown_twin, with_global_bs(D_TEARDOWN[1].POSITIVE[0]),
                                           tmp_path)


@pytest.mark.parametrize("case", _interop_dispatch_worlds())
def test_real_dispatch_setup_pages_then_generated_dispatch_teardown_on_every_positive_world(
        tree, dispatch_teardown_twin, tmp_path, case):
    real_dispatch_setup_generated_teardown(tree, dispatch_teardown_twin, case, tmp_path)
