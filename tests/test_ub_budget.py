"""The combine family's UB plan (opgen/families/moe_combine/kernel.py ub_plan, opgen/emit/ub_plan.py): what one
vector core of the kernel holds in UB, phase by phase, checked by the generated tiling against the core's UB.

- The plan's numbers, exactly, where they matter: the phases at H 8192, a UB one block short of the plan.
- SendBack reads its rows' triples TRIPLE_BATCH rows at a time: its UB does not grow with the rows of a core (it
  held all of them and overran Atlas A3's 192 KiB past ~2,300 rows a core at H 8192, comm quant 2).
- On the CPU twin: a core whose UB is exactly the plan runs the kernel (the twin faults any buffer past its UB);
  one block less and the generated tiling rejects the call with the real DispatchV2's "exceeds the size limit"
  message; a world of 2,400 rows on one core runs and agrees with the reference.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from opgen.core.diagnostics import Diagnostics
from opgen.emit.kernel import kernel_context
from opgen.emit.ub_plan import evaluate
from opgen.families.moe_combine.kernel import TRIPLE_BATCH
from opgen.frontend.loader import load

from .conftest import ROOT

GENERATED = ROOT / "generated"
A3_UB = 196608
A5_UB, A5_PLATFORM_UB = 262144, 253952  # Ascend 950: a vector core's UB, and what the platform reports to tiling


def _plan(spec: str):
    return kernel_context(load(ROOT / "specs" / f"{spec}.spec", Diagnostics()))["ub"]["plan"]


def _env(**kw) -> dict:
    """The tiling fields the plan reads, of a one-server Atlas A3 call (no mask, no special or shared experts)."""
    env = dict(H=8192, BS=8, K=2, commQuantMode=0, serverRanks=0, isSharedRank=0, localExpertNum=2, epWorldSize=2,
               isA2=0, blockFlags=0, moeExpertNum=4, aivNum=4, totalUbSize=A3_UB, sharedExpertRankNum=0,
               sharedExpertNum=0, maskRank=0, zeroExpertNum=0, copyExpertNum=0, constExpertNum=0, core=0)
    env.update(kw)
    return env


def test_add_rms_norm_plan_at_h_8192():
    # reduce: 4 calc slots of 34048 (8192 fp32, 1024 mask bytes and a repeat, each 256-aligned), 3 x 32 of ids,
    # weights and slots, 32 of mask, 2 x 32 of flags and as many zeros to clear them, the fp32 gamma row (32768)
    # PostInvariants computes once
    assert evaluate(_plan("combine_add_rms_norm"), _env()) == {
        "init": 32, "sendBack": 34048 + TRIPLE_BATCH * 12 + 32 + 2 * 16384, "waitBlocks": 0,
        "reduce": 4 * 34048 + 96 + 32 + 2 * 64 + 32768, "total": 169216}


def test_combine_v2_quant_2_plan_does_not_grow_with_the_rows():
    # comm quant 2: 3 calc slots to quantise (a cast that needs no scratch row takes no scratch slot), 5 to receive;
    # one buffer of each queue (2 do not fit); the triples of TRIPLE_BATCH rows, whatever the rows of the core (no
    # field of the plan counts them)
    plan = _plan("combine_v2")
    got = evaluate(plan, _env(commQuantMode=2, maskRank=1, BS=300, K=8, localExpertNum=4, moeExpertNum=8, aivNum=1))
    assert got == {"init": 32, "sendBack": 3 * 34048 + 3072 + 32 + 16384 + 16384, "waitBlocks": 0,
                   "reduce": 5 * 34048 + 96 + 320 + 2 * 256 + 16384, "total": 187552}
    assert got["total"] < A3_UB


def test_the_largest_a3_combine_v2_call_fits():
    """BS 512, K 16, a 2-D mask and 4 shared experts at H 8192, comm quant 2: the largest reduce Atlas A3 accepts."""
    got = evaluate(_plan("combine_v2"), _env(commQuantMode=2, maskRank=2, BS=512, K=16, localExpertNum=1,
                                             moeExpertNum=2, sharedExpertRankNum=1, sharedExpertNum=4))
    assert got["reduce"] == 5 * 34048 + 3 * 64 + 512 * 16 + 2 * 20 * 32 + 16384 == 196288
    assert got["total"] == 196288 <= A3_UB


def test_core_0_stages_batch_write_items_where_ranks_span_servers():
    """Atlas A2 past 8 ranks: core 0 holds BW_UB_BYTES (16 items of 32 bytes and a flag) more in SendBackBlocks."""
    env = _env(H=10240, isA2=1, serverRanks=8, epWorldSize=16, localExpertNum=1, moeExpertNum=16, aivNum=4)
    plan = _plan("combine_v2")
    core0, other = evaluate(plan, dict(env, core=0)), evaluate(plan, dict(env, core=1))
    assert core0["sendBack"] - other["sendBack"] == 16 * 32 + 32  # one queue buffer each at H 10240 either way
    # one calc slot (comm quant 0), epSendCounts' 16 blocks + 1 (96), a flag, the items, a row buffer per queue
    assert core0["sendBack"] == 42496 + 96 + 32 + 544 + 2 * 20480 == 84128
    assert core0["waitBlocks"] == other["waitBlocks"] == (4 + 1) * 32 + 32


def test_a_ub_one_block_short_changes_no_phase_but_the_verdict():
    plan = _plan("combine_add_rms_norm")
    for ub in (169216, 169184):
        assert evaluate(plan, _env(totalUbSize=ub))["total"] == 169216


# ---- on the CPU twin -------------------------------------------------------------------------------------------

def _ref(op):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")


def _case(op, product, bs, h, k, ep, moe, quant=None, extra=None):
    L = moe // ep
    A = bs * ep * min(L, k)
    inputs = {"expandX": ("BFLOAT16", (A, h)), "expertIds": ("INT32", (bs, k)),
              "assistInfoForCombine": ("INT32", (A * 128,)), "epSendCounts": ("INT32", (ep * L,)),
              "expertScales": ("FLOAT32", (bs, k)), **(extra or {})}
    attrs = {"groupEp": "ep", "epWorldSize": ep, "moeExpertNum": moe}
    if quant is not None:
        attrs["commQuantMode"] = quant
    return {"id": f"{product}-ub-bs{bs}-h{h}-k{k}", "product": product, "world": ep, "attrs": attrs, "env": {},
            "inputs": inputs, "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}


def _twin(op, product):
    from opgen import sim

    ref, cases = _ref(op)
    try:
        return ref, cases, sim.build_for(GENERATED / op, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")


def _run_with_ub(twin, ref, case, world, job_dir, ub: int, aiv: int = 4, product_ub: int = A3_UB,
                 platform_ub: int | None = None):
    """Run ``case`` on cores of ``ub`` bytes of UB (the twin's, and the platform's UB the tiling reads unless
    ``platform_ub`` says otherwise)."""
    from opgen.sim import job

    written = job.write_job(ref, case, world, job_dir, aiv=aiv, platform_ub=ub if platform_ub is None else platform_ub)
    text = (job_dir / "job.txt").read_text(encoding="utf-8")
    assert f"\nub {product_ub}\n" in text
    (job_dir / "job.txt").write_text(text.replace(f"\nub {product_ub}\n", f"\nub {ub}\n"), encoding="utf-8")
    return job.run_job(job.executable(twin, ref, world, written), written)


@pytest.mark.cpu_twin
def test_twin_runs_in_exactly_the_plan_and_tiling_rejects_one_block_less(tmp_path):
    from opgen.harness import testkit
    from opgen.sim import job

    op, product = "moe_distribute_combine_add_rms_norm", "ascend910_93"
    ref, cases, twin = _twin(op, product)
    case = _case(op, product, 8, 8192, 2, 2, 4, extra={"residualX": ("BFLOAT16", (8, 1, 8192)),
                                                         "gamma": ("BFLOAT16", (8192,))})
    world = testkit.build_world(ref, case)
    outs = _run_with_ub(twin, ref, case, world, tmp_path / "fits", 169216)
    want = testkit.run(ref, case, world)
    problems = [p for r, (got, exp) in enumerate(zip(outs, want))
                for p in testkit.output_problems(ref, cases, case, world, r, got, exp)]
    assert not problems, "\n".join(problems)
    with pytest.raises(job.TwinTilingRejected) as err:
        _run_with_ub(twin, ref, case, world, tmp_path / "short", 169184)
    for rank in (0, 1):
        assert (f"rank {rank}: [ERROR] MoeDistributeCombineAddRmsNorm: Current scenario is exceeds the size limit, "
                f"BS = 8, H = 8192, K = 2, moeExpertNum = 4, aivNum available = 4, used UBsize = 169216, "
                f"UB size = 169184.") in str(err.value)


def test_950_combine_v2_plan_counts_the_block_slots():
    # Ascend 950 (blockFlags): a row of H 8192 travels as Ceil(16384, 480) = 35 blocks of 512 bytes. SendBack: one
    # calc slot, the triples, a flag, two buffers of the row read as 35 * 480 bytes and two of its packed blocks;
    # reduce: 4 calc slots, ids / weights / slots, the mask, the flags of 2 slots x 35 blocks x 8 fp32 (560, compared
    # as 576: 2304 bytes), their compare bits (72 bytes, 96) and 560 zeros to clear them, the round-robin status of
    # the core's Ceil(BS 8, 4 cores) = 2 tokens (an int32 each: 32), two output rows
    got = evaluate(_plan("combine_v2"), _env(blockFlags=1, totalUbSize=A5_PLATFORM_UB))
    assert got == {"init": 32, "sendBack": 34048 + TRIPLE_BATCH * 12 + 32 + 2 * 16800 + 2 * 17920, "waitBlocks": 0,
                   "reduce": 4 * 34048 + 96 + 32 + 2304 + 96 + 2240 + 32 + 2 * 16384, "total": 173760}
    # comm quant 2: the message (8,192 int8 and 1,024 bf16 scales: 10,240 bytes) is quantised into packBuf_ and
    # packed from there in Ceil(10240, 480) = 22 blocks; the row is still read whole (16,384)
    got = evaluate(_plan("combine_v2"), _env(blockFlags=1, commQuantMode=2, totalUbSize=A5_PLATFORM_UB))
    assert got["sendBack"] == 3 * 34048 + TRIPLE_BATCH * 12 + 32 + 2 * 16384 + 2 * 22 * 512 + 22 * 480 == 171104


@pytest.mark.cpu_twin
def test_950_twin_runs_in_exactly_the_plan_and_tiling_rejects_one_block_less(tmp_path):
    """The 950 CombineV2 at H 8192: on the platform's UB its queues are two deep and the plan is 173,760 bytes (the
    reduce's max: 4 calc slots, 96, 32, 4,640 of flags, 32 of token status, two output rows of 16,384), which a twin
    core of exactly that UB runs; told a UB below what two deep take, the queues are one deep (plan 157,376 = 173,760
    - 16,384: one output row), a core of exactly that runs, and one block less is rejected by the generated tiling."""
    from opgen.harness import testkit
    from opgen.sim import job

    op, product = "moe_distribute_combine_v2", "ascend950"
    ref, cases, twin = _twin(op, product)
    case = _case(op, product, 8, 8192, 2, 2, 4)
    world = testkit.build_world(ref, case)
    want = testkit.run(ref, case, world)
    for name, ub, platform in (("deep", 173760, A5_PLATFORM_UB), ("shallow", 157376, None)):
        outs = _run_with_ub(twin, ref, case, world, tmp_path / name, ub, product_ub=A5_UB, platform_ub=platform)
        problems = [p for r, (got, exp) in enumerate(zip(outs, want))
                    for p in testkit.output_problems(ref, cases, case, world, r, got, exp)]
        assert not problems, "\n".join(problems)
    with pytest.raises(job.TwinTilingRejected) as err:
        _run_with_ub(twin, ref, case, world, tmp_path / "short", 157344, product_ub=A5_UB)
    assert "used UBsize = 157376, UB size = 157344." in str(err.value)


@pytest.mark.slow
@pytest.mark.cpu_twin
def test_twin_returns_2400_rows_from_one_core(tmp_path):
    """CombineV2, comm quant 2, H 8192 on one vector core a rank: 2,400 rows to send back (the kernel held every
    row's triple in UB before, and overran the UB past 2,301 rows); now it runs and agrees with the reference."""
    from opgen import sim
    from opgen.harness import testkit

    op, product = "moe_distribute_combine_v2", "ascend910_93"
    ref, cases, twin = _twin(op, product)
    case = _case(op, product, 300, 8192, 8, 2, 8, quant=2)
    world = testkit.build_world(ref, case)
    assert [len(world.inputs[r]["expandX"]) >= 2400 for r in range(2)] == [True, True]
    outs = sim.run(twin, ref, case, world, tmp_path, aiv=1, timeout=1200.0)  # ~0.1 s a row on the twin
    want = testkit.run(ref, case, world)
    problems = [p for r, (got, exp) in enumerate(zip(outs, want))
                for p in testkit.output_problems(ref, cases, case, world, r, got, exp)]
    assert not problems, "\n".join(problems)


def test_the_plan_s_constants_are_the_kernel_helpers_header_s():
    """The combine UB plan (opgen/families/moe_combine/kernel.py) counts bytes with the constants the plain C++
    kernel helpers and the family's class template define; an edit of the headers that the plan does not follow
    fails here, not on a device."""
    import re
    from opgen.families.moe_combine import kernel as plan
    header = (ROOT / "templates" / "cpp" / "common" / "op_kernel" / "opgen_kernel_helpers.h").read_text(
        encoding="utf-8")
    consts = {m.group(1): int(m.group(2)) for m in re.finditer(r"constexpr uint32_t (\w+) = (\d+)U;", header)}
    assert (consts["UB_BLOCK"], consts["FLAG_BYTES"], consts["REPEAT_BYTES"], consts["TRIPLE"] * 4) == \
        (plan.UB_BLOCK, plan.FLAG_BYTES, plan.REPEAT_BYTES, plan.TRIPLE_BYTES)
    # the batch of triples SendBack reads is the family class template's (moe_combine_kernel.h)
    kernel = (ROOT / "templates" / "cpp" / "common" / "op_kernel" / "moe_combine_kernel.h").read_text(encoding="utf-8")
    assert re.findall(r"static constexpr uint32_t TRIPLE_BATCH = (\d+)U;", kernel) == [str(plan.TRIPLE_BATCH)]
