"""The hand-written ops as the kernel oracle: the real op_host tiling and the real kernel entry of
``../shared/cann`` (both unmodified) run a positive world of the generated suites on the twin, and every output is
compared with the numpy reference (bit-exact where the spec is exact, else its tolerance; outputs the spec leaves
unspecified and elements the op does not write are not compared: ``opgen.harness.testkit.output_problems``).

Atlas A3 and Atlas A2 (one server), quant mode 0 then 2: the real DispatchV2 on the suite's first world of the
mode; on A3 then the real CombineV2
on the real dispatch's outputs (identity experts, ``testkit.combine_inputs``) with comm quant mode 0 and 2 (the
combine's own quant mode: DispatchV2's int8 rows are no CombineV2 input, its expandX is FLOAT16 / BFLOAT16).
Worlds run with ``opgen.sim.real_world.REAL_AIV`` vector cores per rank (the real dispatch assumes a multiple of 8).

Atlas A2 one-server CombineV2: its flag store lacks an S_MTE3 sync (a test pins the twin's fault); with the sync
added in a temp copy (``opgen.sim.real_fixes``) it agrees, on the suite's first world here and on
every one-server world in the slow tier.

CombineAddRmsNorm (DispatchV2's other partner: the real A3 entry instantiates CombineV2's kernel with
``HasAddRmsNorm``; its tiling calls CombineV2's): on Atlas A3 the real op on the real DispatchV2's outputs (its only
quant mode, 0), and in the slow tier on every A3 positive world of its suite.

Ascend 950 (arch35/*_apt.cpp, the MTE path): the real DispatchV2, quant modes 0, 2, 3 (per-group FP8) and 4 (MX
FP8), on the suite's first world of the mode (on the platform ``real_world.real_platform`` gives it: windows of
twice HCCL_BUFFSIZE, a 248 KiB UB reported to the tiling; modes 3 and 4 run the register-API vector functions of
quantize_functions.h, ``opgen_sim/reg_ops.h``), and in the slow tier on every Ascend 950 positive world of its suite
(MX FP4 computes a scale address past its buffer: A5_FP4_SCALE_ADDRESS, and with that line fixed in a temp copy
agrees; commAlg fullmesh_v2 has A3's FillTriple finding: strict xfails); the real CombineV2 and CombineAddRmsNorm on their
suites' first worlds fault in Init (A5_COMBINE_CONTEXT: strict xfail, the exception type pinned, the real code as
the evidence), past it in their row packing (A5_COMBINE_PACK_SOURCE, slow); with both fixed in a temp copy
(``opgen.sim.real_fixes.a5_combine_fixed``) they agree on the first quant-0 world (CombineAddRmsNorm's in the slow tier) and, in
the slow tier, on every Ascend 950 world of their suites (CombineV2's comm quant 2 included: its int8 dequant runs
the register-API loads and stores of moe_distribute_combine_v2_quant.h) but the constant-expert one
(A5_CONST_EXPERT_SUM).

The real tiling comes from ``opgen.sim.real_tiling`` (the real op_host tiling on the twin's host runtime); without
``../shared/cann`` the tests skip and say so.
"""
from __future__ import annotations


import pytest

from opgen.harness import testkit
from opgen.sim import real_fixes, real_tiling, real_world
from opgen.sim.job import TwinFault
from opgen.sim.real_world import Inputs
from opgen.sim.real_fixes import A5_INIT, A5_INIT_FIXED, a5_combine_fixed
from .real_ops import ADD_RMS_NORM, COMBINE, DISPATCH, MARKS, tree  # noqa: F401 - tree: the module's fixture

pytestmark = MARKS

A3 = "ascend910_93"
A2 = "ascend910b"  # one server: the suite's first worlds have 2 ranks
A5 = "ascend950"


def real_run(tree, ref, case: dict, world, work):
    """Per rank {output: ndarray} of the real op on the twin: the real tiling picks the key, the entry's instance
    of that key runs."""
    return real_world.run(tree, ref, case, world, work)


def first_world(cases, quant: int, product: str = A3, x_dtype: str | None = None) -> dict:
    """The suite's first world of ``quant`` on ``product`` (with tokens of ``x_dtype`` if given)."""
    return next(c for c in cases.POSITIVE if c["product"] == product and "ranks" not in c
                and int(c["attrs"].get(cases.QUANT_BY, 0)) == quant
                and (x_dtype is None or c["inputs"]["x"][0] == x_dtype))


def assert_agrees(ref, cases, case, world, got):
    want = testkit.run(ref, case, world)
    problems = [p for r in range(case["world"])
                for p in testkit.output_problems(ref, cases, case, world, r, got[r], want[r])]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("product,quant", [(A3, 0), (A3, 2), (A2, 0), (A2, 2), (A5, 0), (A5, 2), (A5, 3), (A5, 4)])
def test_real_dispatch_agrees_with_the_reference(tree, tmp_path, quant, product):
    ref, cases = DISPATCH
    case = first_world(cases, quant, product)
    world = testkit.build_world(ref, case)
    assert_agrees(ref, cases, case, world, real_run(tree, ref, case, world, tmp_path / "dispatch"))


@pytest.mark.parametrize("partner,comm_quant,x_dtype", [
    pytest.param(COMBINE, 0, None, id="CombineV2-q0"),
    pytest.param(COMBINE, 2, None, id="CombineV2-q2"),
    # its documents: commQuantMode 0 only, expandX BFLOAT16 only
    pytest.param(ADD_RMS_NORM, 0, "BFLOAT16", id="CombineAddRmsNorm-q0"),
])
def test_real_a3_combine_on_the_real_dispatch_agrees_with_the_reference(tree, tmp_path, partner, comm_quant, x_dtype):
    ref, cases = DISPATCH
    cref, ccases = partner
    case = first_world(cases, 0, x_dtype=x_dtype)
    world = testkit.build_world(ref, case)
    dispatched = real_run(tree, ref, case, world, tmp_path / "dispatch")
    cin, cattrs = testkit.combine_inputs(ref, case, world, dispatched, cref)
    attrs = {k: v for k, v in cattrs.items() if k in cref.ATTRS}
    attrs[cref.INFO.quant_by] = comm_quant
    ccase = {"id": f"{case['id']}-combine-q{comm_quant}", "world": case["world"], "product": A3, "attrs": attrs,
             "env": {k: v for k, v in cattrs.items() if k in cref.ENV}}
    cworld = Inputs(cin)
    assert_agrees(cref, ccases, ccase, cworld, real_run(tree, cref, ccase, cworld, tmp_path / "combine"))


# Ascend 950: the entries (arch35/*_apt.cpp, the MTE path) compile on the twin. The A5 MTE combine, which
# CombineAddRmsNorm's entry instantiates too, reads the HCCL context's winSize before it has the context: Init calls
# Mc2Kernel::GetWinSize(epWinContext_) while epWinContext_ is still nullptr (InitAttrs sets it afterwards), a read
# of address 0x18 (offsetof winSize), where no buffer is. Nothing sets it earlier: the member's initialiser is nullptr,
# the constructor is empty, InitInputAndOutput sets only the GM tensors, the entry hands contextGM0 to Init, which
# passes it on to InitAttrs -> InitCommContext, the one assignment. And the device takes this branch: Init skips it
# only when the tiling sets isMc2Context, which the CombineV2 tiling takes from CombineV2Config (default false;
# the 950 MTE path, MoeDistributeCombineA3TilingFuncImpl, keeps it); only CombineV3's tiling sets it true.
# code: mc2/moe_distribute_combine_v2/op_host/op_tiling/moe_distribute_combine_tiling_helper.h (CombineV2Config
#       isMc2Context = false), op_tiling/arch35/moe_distribute_combine_tiling_arch35.cpp
#       (MoeDistributeCombineTilingFuncImpl), op_tiling/moe_distribute_combine_v2_tiling.cpp
#       (moeDistributeCombineV2Info.isMc2Context = config.isMc2Context),
#       mc2/moe_distribute_combine_v3/op_host/op_tiling/moe_distribute_combine_v3_tiling.cpp (config.isMc2Context =
#       true), mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_apt.cpp
# code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h (Init: `auto realWinSize
#       = Mc2Kernel::GetWinSize(epWinContext_)` before InitAttrs: `epWinContext_ = (__gm__ Mc2Kernel::HcclOpParam
#       *)contextGM0`), mc2/common/op_kernel/moe_distribute_base.h (3510 GetWinSize: winContext->winSize),
#       mc2/moe_distribute_combine_add_rms_norm/op_kernel/arch35/moe_distribute_combine_add_rms_norm_apt.cpp
A5_COMBINE_CONTEXT = (
    "measured: the real Ascend 950 MTE combine (CombineV2's A5 kernel, CombineAddRmsNorm's too) reads winSize "
    "through a null HCCL context in Init (GetWinSize(epWinContext_) before InitAttrs sets epWinContext_): the "
    "kernel's own code accessed address 0x18, which no buffer of the twin holds")


@pytest.mark.xfail(strict=True, raises=TwinFault, reason=A5_COMBINE_CONTEXT)
@pytest.mark.parametrize("suite", [pytest.param(COMBINE, id="CombineV2"),
                                   pytest.param(ADD_RMS_NORM, id="CombineAddRmsNorm")])
def test_real_950_combine_agrees_with_the_reference(tree, tmp_path, suite):
    ref, cases = suite
    case = first_world(cases, 0, A5)
    world = testkit.build_world(ref, case)
    assert_agrees(ref, cases, case, world, real_run(tree, ref, case, world, tmp_path))


# Past its Init, the A5 MTE combine packs each expert row into 512-byte window blocks, 480 data bytes and a 32-byte
# flag, with two level-0 Copy calls of blockCntPerToken_ repeats 480 bytes apart in the source (srcRepStride 15
# blocks): they read blockCntPerToken_ * 480 bytes of the row's buffer, which holds Ceil(commDataBytes_, 32) * 32.
# Comm quant 0 reads the expandXInQueue_ buffer of hExpandXAlign32Size_ = Ceil(2H, 32) * 32 (H 1024 FLOAT16: 5
# repeats read 2400 bytes of 2048); comm quant 2 the quantResultBuf_ of the int8 row and its scales (tokenScaleCnt_
# = 512 + 128 halves at H 1024: 3 repeats read 1440 bytes of 1280).
# On the device the Copy reads the next UB bytes (the queue's next buffer or xOutPackageQueue_'s) into the data lanes
# of the last block past the row, which no reader uses: the receiver copies blockCntPerToken_ * 480 bytes into a
# moeMainSumQueue_ buffer sized for them (moeQueueBytes) and sums axisH_ elements; the flag lanes (floats 120-127 of
# each 128) are the Duplicate's 1.0, which the Copy's 120 floats per repeat never reach. The twin faults on a UB
# access past the tensor's buffer; the fix (real_ops.A5_PACK_SOURCE_FIXED) sizes the buffer to what the Copy reads.
# code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h
#       (ExpertAlltoAllDispatchInnerCopyAdd: Copy(packedfloat, srcfloat, uint64_t(64), uint8_t(blockCntPerToken_),
#       {1, 1, 16, 15}), Copy(packedfloat[64], srcfloat[64], uint64_t(56), ...); InitAttrs: blockCntPerToken_ =
#       Ceil(commDataBytes_, SPLIT_BLOCK_DATA_SIZE); BuffInit: InitBuffer(expandXInQueue_, dispatchBufferNum_,
#       hExpandXAlign32Size_), InitBuffer(quantResultBuf_, tokenScaleAlign32Size); the receiving side:
#       moeQueueBytes, ProcessMoeExpert), mc2/moe_distribute_combine_v2/op_kernel/moe_distribute_combine_v2_quant.h
#       (QuantInit: tokenScaleCnt_)
A5_COMBINE_PACK_SOURCE = (
    "measured: the real Ascend 950 MTE combine's row packing reads blockCntPerToken_ * 480 bytes of a "
    "Ceil(commDataBytes_, 32) * 32-byte buffer (expandXInQueue_, quantResultBuf_ under comm quant 2): its level-0 "
    "Copy reads past the tensor's buffer")


@pytest.mark.slow
def test_past_its_init_the_real_950_combine_packs_rows_from_past_the_tokens_buffer(tree, tmp_path):
    """With Init fixed alone (A5_COMBINE_PACK_SOURCE): the first Copy's 5th repeat reads floats 480-543 of the
    row, bytes [1920, 2176) of a 2048-byte buffer at UB offset 128."""
    ref, cases = COMBINE
    case = first_world(cases, 0, A5)
    world = testkit.build_world(ref, case)
    root = a5_combine_fixed(tree.ops, tmp_path / "ops", fixes=((A5_INIT, A5_INIT_FIXED),))
    with pytest.raises(TwinFault) as fault:
        real_world.run(tree, ref, case, world, tmp_path / "run", kernel_root=root)
    assert ("Copy: out-of-bounds UB access: float elements [0, 544) need bytes [128, 2304) of UB, the tensor's "
            "buffer is [128, 2176)") in str(fault.value), fault.value


@pytest.mark.parametrize("suite", [pytest.param(COMBINE, id="CombineV2"),
                                   pytest.param(ADD_RMS_NORM, id="CombineAddRmsNorm", marks=pytest.mark.slow)])
def test_real_950_combine_with_its_findings_fixed_agrees_with_the_reference(tree, tmp_path, suite):
    """The real A5 MTE combine with Init and the packing buffers fixed in a temp copy
    (``opgen.sim.real_fixes.a5_combine_fixed``: A5_COMBINE_CONTEXT, A5_COMBINE_PACK_SOURCE) on the suite's first
    quant-0 world."""
    ref, cases = suite
    case = first_world(cases, 0, A5)
    world = testkit.build_world(ref, case)
    root = a5_combine_fixed(tree.ops, tmp_path / "ops")
    assert_agrees(ref, cases, case, world, real_world.run(tree, ref, case, world, tmp_path / "run", kernel_root=root))


@pytest.mark.slow
def test_the_real_950_dispatch_overruns_a_ub_it_is_told_whole(tree, tmp_path):
    """The real 950 dispatch on a platform that reports the core's whole 256 KiB UB to its tiling (not the 248 KiB
    of the product table's ``platform_ub_bytes``): its tripleQueue ends 32 bytes past the UB, the runPosBuf RunPosRecord takes and
    its count misses (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h RunPosRecord,
    LocalWindowCopy), and the twin faults naming the InitBuffer."""
    ref, cases = DISPATCH
    case = first_world(cases, 0, A5)
    world = testkit.build_world(ref, case)
    with pytest.raises(TwinFault) as fault:
        real_world.run(tree, ref, case, world, tmp_path,
                       platform={"platform_ub": ref.INFO.fact(case["product"]).ub_bytes})
    assert ("TPipe::InitBuffer (queue): UB capacity exceeded: 2 x 128480 bytes at UB offset 5216 need 262176 bytes, "
            "the core has 262144") in str(fault.value), fault.value


# Known disagreements of the real ops on the A3 positive worlds, with the real code as the evidence.
FULLMESH_V2_TRIPLE = (
    "the real A3 fullmesh_v2 dispatch stores the (rank, token, k) triple past its input queue buffer: FillTriple "
    "writes int32 element tokenQuantAlign_ (H * 2 / 4 = 512 for H = 1024 FLOAT16) of an inQueue buffer of "
    "hAlignSize_ = Ceil(H * 2, 32) * 32 = 2048 bytes, and the Copy after it reads blockCntPerToken_ 480-byte rows "
    "from there (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2_full_mesh.h FillTriple, "
    "TokenToExpert, InitBuffer(inQueue, BUFFER_NUM, hAlignSize_); moe_distribute_dispatch_v2_quant.h QuantInit): "
    "on the device it lands in the next buffer; the twin faults on a UB access past the tensor's buffer")
KNOWN = {
    "ascend910_93-q0-bs4-h1024-k2-w2-commAlg-fullmesh_v2": FULLMESH_V2_TRIPLE,
}


def _known_a3(op: str, case_id: str) -> str | None:
    if op == ADD_RMS_NORM[0].OP:
        return None  # every A3 world agrees, const experts included (the reference computes the real softmax form)
    return KNOWN.get(case_id)


# Atlas A2
A2_COMBINE_FLAG = (
    "the real A2 fullmesh combine stores its flag into UB with the scalar unit and copies it out with MTE3 with no "
    "S_MTE3 sync between (code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h "
    "SingleServerDispatch: flagLocal_(0) = FLAG_VALUE; CopyUb2Gm(flagGlobal_, flagLocal_, 1)): MTE3 may read the "
    "old bytes; the twin faults on the unsynchronised read")
A2_COMBINE_REJECTED = ("the real A2 tiling rejects the world (code: mc2/moe_distribute_combine_v2/op_host/op_tiling/"
                       "arch22/moe_distribute_combine_tiling_arch22.cpp: comm quant 2 only when layered; no "
                       "const_expert_alpha_1/alpha_2/v)")
A2_SEND_COUNTS = (
    "the real A2 combine reads epSendCounts with a 32-byte DataCopy past the end of the tensor (6 int32 at "
    "globalBS 2: moeExpertNum + 2 * globalBS * K * serverNum); the twin's GM tensors end where their shape does")


def test_the_real_a2_one_server_combine_sends_its_flag_unsynchronised(tree, tmp_path):
    """A2_COMBINE_FLAG on the suite's first A2 world: each core's flag, stored at UB [160, 164) (flagLocal_), is
    read by the MTE3 copy with no sync after the scalar store."""
    ref, cases = COMBINE
    case = first_world(cases, 0, A2)
    with pytest.raises(TwinFault) as fault:
        real_run(tree, ref, case, testkit.build_world(ref, case), tmp_path)
    assert ("DataCopyPad UB->GM src: reads UB [160, 164) on pipe MTE3 (DataCopy UB->GM), written on pipe S (scalar) "
            "at [160, 164) with no sync between the two pipes") in str(fault.value), fault.value


def test_real_a2_one_server_combine_with_its_flag_synced_agrees_with_the_reference(tree, tmp_path):
    """The finding above is the only one on the way: with the sync added, the real one-server A2 CombineV2
    (SingleServerDispatch: MTE copies to the peers' windowsIn through GetWindowsInAddr) agrees."""
    ref, cases = COMBINE
    case = first_world(cases, 0, A2)
    world = testkit.build_world(ref, case)
    root = real_fixes.a2_combine_flag_synced(tree.ops, tmp_path / "ops")
    assert_agrees(ref, cases, case, world, real_world.run(tree, ref, case, world, tmp_path / "run", kernel_root=root))


def _known_a2(op: str, case: dict) -> str | None:
    if op == "MoeDistributeCombineV2":
        if "-q2-" in case["id"] or "constExpert" in case["id"]:
            return A2_COMBINE_REJECTED
        if case["id"].endswith("globalBS-2"):
            return A2_SEND_COUNTS
    return None


def _flag_synced(ref, case: dict) -> bool:
    """Whether the world runs the real A2 combine with A2_COMBINE_FLAG fixed: SingleServerDispatch runs on one
    server only (8 ranks); past it the unmodified combine agrees."""
    return ref.OP == "MoeDistributeCombineV2" and case["product"] == A2 and case["world"] <= 8


# Ascend 950: the real DispatchV2 on every positive world of its suite (the real combines, which fault in Init on
# every world, A5_COMBINE_CONTEXT, run with their findings fixed below). Quant modes 3 and 4 run the register-API vector functions of quantize_functions.h
# (opgen_sim/reg_ops.h). The MX FP4 instances stop at a finding: QuantDynamicMx takes the FP8 scale address
# outLocal[Align256(H)] before it replaces it with the FP4 one, and that element lies past the token's out buffer
# (H = 1024: element 1024 of a 576-byte buffer), which asc-devkit's LocalTensor::operator[] asserts against
# (impl/basic_api/kernel_tensor_impl.h: ASCENDC_DEBUG_ASSERT dataLen > offset * sizeof(PrimType)).
A5_FP4_SCALE_ADDRESS = (
    "measured: the real 950 DispatchV2 at quant mode 4 with FP4 output computes outLocal[Align256(H)] past the token's "
    "out buffer (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2_quant.h QuantDynamicMx, "
    "the FP8 mxScaleLocalAddr taken before the FP4 one replaces it; asc-devkit kernel_tensor_impl.h "
    "LocalTensor::operator[] asserts the offset lies inside the buffer)")
FP4_SCALE_ADDRESS = ("        __ubuf__ uint16_t *mxScaleLocalAddr = (__ubuf__ uint16_t *)outLocal[Align256<uint32_t>(axisH_)]"
                     ".GetPhyAddr();\n        if constexpr (Std::IsSame<ExpandXOutType, fp4x2_e2m1_t>::value ||")
FP4_SCALE_ADDRESS_FIX = ("        __ubuf__ uint16_t *mxScaleLocalAddr = (__ubuf__ uint16_t *)(outLocal.GetPhyAddr() + "
                         "Align256<uint32_t>(axisH_) * sizeof(XOutType));\n"
                         "        if constexpr (Std::IsSame<ExpandXOutType, fp4x2_e2m1_t>::value ||")


def fixed_fp4_dispatch(tree, tmp_path):
    """The tree in which QuantDynamicMx computes the FP8 scale address without LocalTensor::operator[] (the address
    the device computes), found exactly once (``opgen.sim.real_fixes.kernel_copy_with``)."""
    return real_fixes.kernel_copy_with(tree.ops, tmp_path / "fixed",
                                       "mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2_quant.h",
                                       ((FP4_SCALE_ADDRESS, FP4_SCALE_ADDRESS_FIX),))


def fp4_world(cases, code: str) -> dict:
    return next(c for c in cases.POSITIVE if c["product"] == A5 and "ranks" not in c
                and int(c["attrs"].get(cases.QUANT_BY, 0)) == 4 and c["id"].endswith(code))


@pytest.mark.xfail(strict=True, raises=TwinFault, reason=A5_FP4_SCALE_ADDRESS)
def test_real_950_dispatch_mx_fp4_agrees_with_the_reference(tree, tmp_path):
    ref, cases = DISPATCH
    case = fp4_world(cases, "float4_e2m1")
    world = testkit.build_world(ref, case)
    try:
        got = real_run(tree, ref, case, world, tmp_path / "dispatch")
    except TwinFault as err:
        assert "LocalTensor<uint8_t>::operator[](1024): outside the 576-byte buffer" in str(err), str(err)
        raise
    assert_agrees(ref, cases, case, world, got)


@pytest.mark.parametrize("code", ["float4_e2m1", pytest.param("float4_e1m2", marks=pytest.mark.slow)])
def test_real_950_dispatch_mx_fp4_with_the_finding_fixed_agrees_with_the_reference(tree, tmp_path, code):
    """A temp copy of the kernel with the scale address computed without operator[] (never the tarball's file): the
    register-API FP4 path (FP16Convert, the bf16 casts, the bf16 -> fp4x2 Cast) agrees bit-exact."""
    ref, cases = DISPATCH
    case = fp4_world(cases, code)
    world = testkit.build_world(ref, case)
    got = real_world.run(tree, ref, case, world, tmp_path / "dispatch", kernel_root=fixed_fp4_dispatch(tree, tmp_path))
    assert_agrees(ref, cases, case, world, got)


def _known_a5(op: str, case: dict) -> tuple[str, type] | None:
    if int(case["attrs"].get(DISPATCH[1].QUANT_BY, 0)) == 4 and "float4" in case["id"]:
        return A5_FP4_SCALE_ADDRESS, TwinFault
    if case["id"].endswith("commAlg-fullmesh_v2"):
        return FULLMESH_V2_TRIPLE, TwinFault  # the same FillTriple on Ascend 950 (its inQueue from a TBufPool)
    return None


def _every_world():
    out = []
    for suite in (DISPATCH, COMBINE, ADD_RMS_NORM):
        ref, cases = suite
        for case in cases.POSITIVE:
            a5 = case["product"] == A5 and ref.OP == DISPATCH[0].OP
            if (case["product"] not in (A3, A2) and not a5) or "ranks" in case:
                continue
            marks = [pytest.mark.slow]
            if a5:
                known_a5 = _known_a5(ref.OP, case)
                if known_a5 is not None:
                    marks.append(pytest.mark.xfail(strict=True, reason=known_a5[0], raises=known_a5[1]))
            else:
                known = _known_a3(ref.OP, case["id"]) if case["product"] == A3 else _known_a2(ref.OP, case)
                if known is not None:
                    marks.append(pytest.mark.xfail(strict=True, reason=known))
            out.append(pytest.param(suite, case, marks=marks, id=f"{ref.OP}-{case['id']}"))
    return out


@pytest.mark.parametrize("suite,case", _every_world())
def test_real_op_agrees_with_the_reference_on_every_positive_world(tree, tmp_path, suite, case):
    """Each op on the suite's own world (the combine's inputs as the reference's dispatch lays them out)."""
    ref, cases = suite
    world = testkit.build_world(ref, case)
    root = real_fixes.a2_combine_flag_synced(tree.ops, tmp_path / "ops") if _flag_synced(ref, case) else None
    assert_agrees(ref, cases, case, world, real_world.run(tree, ref, case, world, tmp_path / "run", kernel_root=root))


# The real 950 combines with their findings fixed (opgen.sim.real_fixes.a5_combine_fixed) on every Ascend 950
# positive world of their suites: what the twin cannot run, with the twin's side as the reason (no real-code finding).
# The constant expert's alpha is Sum(Wc * x) over H floats (CalConstExpertAlpha: Sum(weightFloatLocal,
# weightFloatLocal, {1, innerAlign, axisH_})); on __NPU_ARCH__ 3510 the twin faults when the row rounds differently
# in different orders of addition, since the order of Reg::ReduceSum is not documented (opgen_sim/vec_level0.h).
# code: mc2/moe_distribute_combine_v2/op_kernel/arch35/moe_distribute_combine_v2_a5_mte.h (CalConstExpertAlpha)
A5_CONST_EXPERT_SUM = (
    "measured: the twin does not model the order of the Ascend 950's Reg::ReduceSum, and the real A5 MTE combine's "
    "constant expert sums a 1024-float row (CalConstExpertAlpha) that rounds differently in different orders: the "
    "twin faults rather than pick one")


def _every_950_combine_world():
    out = []
    for suite in (COMBINE, ADD_RMS_NORM):
        ref, cases = suite
        for case in cases.POSITIVE:
            if case["product"] != A5 or "ranks" in case:
                continue
            marks = [pytest.mark.slow]
            if "constExpertNum" in case["id"]:
                marks.append(pytest.mark.xfail(strict=True, reason=A5_CONST_EXPERT_SUM, raises=TwinFault))
            out.append(pytest.param(suite, case, marks=marks, id=f"{ref.OP}-{case['id']}"))
    return out


@pytest.mark.parametrize("suite,case", _every_950_combine_world())
def test_real_950_combine_with_its_findings_fixed_agrees_on_every_positive_world(tree, tmp_path, suite, case):
    ref, cases = suite
    world = testkit.build_world(ref, case)
    root = a5_combine_fixed(tree.ops, tmp_path / "ops")
    assert_agrees(ref, cases, case, world, real_world.run(tree, ref, case, world, tmp_path / "run", kernel_root=root))


def test_an_op_library_with_its_partners_tiling_tiles_the_nodes_op_only(tree, tmp_path):
    """CombineAddRmsNorm's executable registers its own and CombineV2's tiling (its op library builds both): the
    runner calls the job's op type, and a type it does not register is a fault naming what it does."""
    ref, cases = ADD_RMS_NORM
    case = first_world(cases, 0)
    exe = real_tiling.build_tiling(tree, ref.OP, "arch22")
    job = tmp_path / "job"
    real_tiling.tile(exe, ref, case, testkit.build_world(ref, case), job, aiv=real_world.REAL_AIV)
    text = (job / "job.txt").read_text(encoding="utf-8")
    assert f"node {ref.OP}\n" in text
    (job / "job.txt").write_text(text.replace(f"node {ref.OP}\n", "node MoeDistributeDispatchV2\n"), encoding="utf-8")
    result = real_tiling.run_tiling(exe, job)
    assert result.status == "fault"
    assert result.faults == [f"rank {r} tiling: opgen sim: the executable registers no tiling function of op type "
                             "'MoeDistributeDispatchV2' (registered: MoeDistributeCombineAddRmsNorm, "
                             "MoeDistributeCombineV2)" for r in range(case["world"])], result.faults
