"""One source for the HCCL window: the spec's `window` is what tiling checks and what the kernels address.

The tiling check (window.<domain>) is compared with the layout written out by hand here (the documents' areas
plus the generated kernels' 2MB status area where it shares windowsIn; Atlas A3 keeps it in windowsExp), not
with the spec's formula; the twin, whose windows are exactly
HCCL_BUFFSIZE bytes and which faults any access past one, runs the largest worlds it can hold at the smallest
window tiling accepts for them, on every product of the DispatchV2 / CombineV2 pair; and a window smaller than
the one tiling checked makes the kernel trap, as the real kernels' CheckWindowSize aborts them.
"""
from __future__ import annotations

import importlib
import math
import sys

import pytest

from .conftest import ROOT, load_ok

GENERATED = ROOT / "generated"
MB = 1024 * 1024


def _align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def _generated(op: str):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")


# the status area's bytes in windowsIn: Atlas A3 keeps it in windowsExp, as the real A3 ops do; Ascend 950 1 MiB a
# rank, rank r's starting r KiB in, and its data halves after it (code: mc2/common/op_kernel/moe_distribute_base.h
# A5_MTE_STATE_WIN_SIZE, EP_RANK_OFFSET_STEP), so the last rank's data starts 1 MiB + (epWorldSize - 1) KiB in
STATUS_IN_WINDOW = {"ascend910b": lambda ep: 2 * MB, "ascend910_93": lambda ep: 0,
                    "ascend950": lambda ep: MB + (ep - 1) * 1024}
# the check that rejects a window one MB smaller than the smallest tiling accepts: the kernels' layout check, or on
# Atlas A3 the documents' rule, whose formula is exactly the layout of the data halves there; on Ascend 950 the
# documents' rule too, which asks more than the layout in the twice HCCL_BUFFSIZE window there (_dispatch_min_mb)
SMALLER_REJECTED_BY = {"ascend910b": "window.ep", "ascend910_93": "buffer.window", "ascend950": "buffer.window"}


def _dispatch_min_mb(product: str, bs: int, h: int, k: int, ep: int, moe: int) -> int:
    """The smallest HCCL_BUFFSIZE (MB) of the generated DispatchV2 kernels' layout, written out by hand: the
    status area (where it shares windowsIn), then two data halves (bf16 rows, no quant, no shared expert ranks).
    A3 / 950: [CombineV2 rows | DispatchV2 messages], one row per (token, k) and per shared expert
    (sharedExpertNum's default, 1, which the documents' formula counts), one block of bs 512-aligned messages per
    (source rank, local expert). A2, the real A2 kernels' packing: one region per source rank holding the rows it
    sends one rank, bs * min(local experts, K) of them (DispatchV2's messages back to back; CombineV2's rows and a
    header of an int32 per local expert and the flag), DispatchV2's regions over CombineV2's; its status area is
    the two halves' 1 MiB reserves."""
    if product == "ascend910b":
        rows = bs * min(moe // ep, k)
        message = _align(2 * h, 32) + 32  # the row, then 32 bytes of the expert scale (no triple on A2)
        combine = ep * (rows * _align(2 * h, 32) + _align(4 * (moe // ep + 1), 32))
        return math.ceil((2 * max(combine, ep * rows * message) + STATUS_IN_WINDOW[product](ep)) / MB)
    message = _align(_align(2 * h, 32) + 64, 512)  # the row, then 64 bytes of (srcRank, tokenIdx, k) | scale
    # Ascend 950: the real A5 MTE combine's row slots, Ceil(2H, 480) blocks of 512 bytes (480 data bytes and a flag),
    # counting no shared expert (the real tiling reads sharedExpertNum 1 as 0 without shared expert ranks)
    combine = (bs * k * -(-2 * h // 480) * 512 if product == "ascend950" else bs * (k + 1) * _align(2 * h, 512))
    dispatch = (moe // ep) * ep * bs * message
    if product == "ascend950":
        # the real 950 MTE ops' window, twice HCCL_BUFFSIZE: two halves of it less 1 MiB of status and a KiB a
        # rank (totalWinSizeEp); and the documents' formula (A3's)
        layout = math.ceil((2 * (combine + dispatch) + MB + ep * 1024) / 2 / MB)
        documented = 2 * ((moe // ep) * bs * ep * message + (k + 1) * bs * _align(2 * h, 512))
        return max(layout, math.ceil(documented / MB))
    return math.ceil((2 * (combine + dispatch) + STATUS_IN_WINDOW[product](ep)) / MB)


def _case(product: str, bs: int, h: int, k: int, ep: int, moe: int, window_mb: int) -> dict:
    return {"id": f"{product}-window{window_mb}", "product": product, "world": ep,
            "attrs": {"groupEp": "ep", "epWorldSize": ep, "moeExpertNum": moe},
            "env": {"HCCL_BUFFSIZE": window_mb},
            "inputs": {"x": ("BFLOAT16", (bs, h)), "expertIds": ("INT32", (bs, k))},
            "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}


# the largest worlds the twin holds on this machine: BS and H at their product maxima, K = 8, 8 local experts
LARGEST = {"ascend910b": (256, 7168, 8, 2, 16), "ascend910_93": (512, 8192, 8, 2, 16),
           "ascend950": (512, 8192, 8, 2, 16)}
# and, on Atlas A2, two servers (16 ranks, one local expert each): the rows and flags for the other server are
# staged in windowsOut, laid out as the first data half of windowsIn, and sent by BatchWrite
WORLDS = [(p, LARGEST[p]) for p in sorted(LARGEST)] + [("ascend910b", (256, 7168, 8, 16, 16))]
WORLD_IDS = [f"{p}-ep{dims[3]}" for p, dims in WORLDS]


@pytest.mark.parametrize("product, dims", WORLDS, ids=WORLD_IDS)
def test_tiling_accepts_exactly_the_windows_the_layout_fits(product, dims):
    ref, _ = _generated("moe_distribute_dispatch_v2")
    from opgen.harness import testkit

    smallest = _dispatch_min_mb(product, *dims)
    testkit.accept(ref, _case(product, *dims, smallest), ranks=[0])
    rejecter = SMALLER_REJECTED_BY[product].replace(".", r"\.")
    with pytest.raises(AssertionError, match=rf"HCCL_BUFFSIZE >= .*\[{rejecter}\]"):
        testkit.accept(ref, _case(product, *dims, smallest - 1), ranks=[0])


def test_a3_asks_for_exactly_the_documents_formula():
    """On Atlas A3 the documents' formula is the layout of the data halves, and the status area is in windowsExp
    (where the real A3 op keeps it), so tiling accepts the documented minimum and nothing less."""
    from opgen.harness import testkit

    ref, _ = _generated("moe_distribute_dispatch_v2")
    bs, h, k, ep, moe = LARGEST["ascend910_93"]
    documented = 2 * ((moe // ep) * bs * ep * _align(_align(2 * h, 32) + 64, 512) + (k + 1) * bs * _align(2 * h, 512))
    assert _dispatch_min_mb("ascend910_93", bs, h, k, ep, moe) == math.ceil(documented / MB)
    testkit.accept(ref, _case("ascend910_93", bs, h, k, ep, moe, math.ceil(documented / MB)), ranks=[0])


def test_the_pair_lays_out_one_window():
    """DispatchV2 and CombineV2 share the window of their EP domain: per product, the same halves, the same
    status area and the same CombineV2 area (DispatchV2's rows follow it)."""
    dispatch, combine = load_ok(ROOT / "specs" / "dispatch_v2.spec"), load_ok(ROOT / "specs" / "combine_v2.spec")
    for soc in dispatch.views:
        d, c = dispatch.view(soc).window, combine.view(soc).window
        assert (d.domain, d.env, d.halves, d.state_in, d.state) == (c.domain, c.env, c.halves, c.state_in, c.state)
        assert d.areas[0].name == c.areas[0].name == "combine" and d.areas[0].expr == c.areas[0].expr, soc


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("product, dims", WORLDS, ids=WORLD_IDS)
@pytest.mark.parametrize("op", ("moe_distribute_dispatch_v2", "moe_distribute_combine_v2"))
def test_the_largest_world_runs_in_the_smallest_window(op, product, dims, tmp_path):
    """The twin's windows are exactly HCCL_BUFFSIZE bytes and any access past one faults: the kernels fit the
    smallest window tiling accepts, with the largest rows and the most local experts the twin holds."""
    from opgen import sim
    from opgen.harness import testkit

    ref, cases = _generated(op)
    bs, h, k, ep, moe = dims
    case = _case(product, bs, h, k, ep, moe, _dispatch_min_mb(product, bs, h, k, ep, moe))
    if op == "moe_distribute_combine_v2":
        case = _combine_case(ref, case)
    try:
        exe = sim.build_for(GENERATED / op, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    outs = sim.run(exe, ref, case, world, tmp_path, timeout=LARGEST_WORLD_TIMEOUT)
    problems = [p for r, (got, want) in enumerate(zip(outs, results))
                for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
    assert not problems, "\n".join(problems)


# seconds a core of these worlds may wait for a flag (the process is killed after 4x that): the A2 ep16 CombineV2
# world ran 2-4 minutes on two busy cores and was once killed at the default 60 s x 4; a flag nobody sets still
# faults, later
LARGEST_WORLD_TIMEOUT = 150.0


def _combine_case(ref, case: dict) -> dict:
    """CombineV2's world over the same routes: expandX holds A rows of H, the assist info A * 128 ints."""
    bs, h = case["inputs"]["x"][1]
    k = case["inputs"]["expertIds"][1][1]
    ep, moe = case["attrs"]["epWorldSize"], case["attrs"]["moeExpertNum"]
    a = bs * ep * min(moe // ep, k)
    # the documents' epSendCounts: Atlas A2 (moeExpertNum + 2 * globalBS * K * serverNum,), else (ep * local,)
    counts = moe + 2 * bs * ep * k * max(ep // 8, 1) if case["product"] == "ascend910b" else ep * (moe // ep)
    inputs = {"expandX": ("BFLOAT16", (a, h)), "expertIds": ("INT32", (bs, k)),
              "assistInfoForCombine": ("INT32", (a * 128,)), "epSendCounts": ("INT32", (counts,)),
              "expertScales": ("FLOAT32", (bs, k))}
    return dict(case, inputs=inputs)


def test_the_combine_status_flags_bound_max_bs_where_the_kernel_keeps_them_per_slot():
    """CombineV2's kernel keeps one status flag per (token, k) and shared-expert slot of maxBS tokens, 10240 per
    data state (templates/cpp/common/op_kernel/opgen_kernel_helpers.h, combineBytes / FLAG_BYTES of both
    StatusLayout rows: OWN_STATUS's COMBINE_FLAGS_HALF, and REAL_STATUS's, the real ops' layout): tiling
    rejects a globalBS past that with kernel.status_slots, after the documents' rules, instead of a kernel that traps. Atlas A2 flags per
    expert rank's region (its header's last word) and has no such check."""
    from opgen.harness import testkit
    from opgen.lang.expr import to_spec

    op = load_ok(ROOT / "specs" / "combine_v2.spec")
    tables = {soc: [c for c in op.view(soc).checks if c.id.startswith("kernel.")] for soc in op.views}
    assert {soc: [c.id for c in cs] for soc, cs in tables.items()} == {
        "ascend910b": [], "ascend910_93": ["kernel.status_slots"], "ascend950": ["kernel.status_slots"]}
    check = tables["ascend910_93"][0]
    assert (to_spec(check.expr), check.param) == ("maxBS * (K + sharedExpertNum) <= 10240", "globalBS")

    ref, _ = _generated("moe_distribute_combine_v2")
    bs, h, k, ep, moe = 8, 1024, 8, 2, 16  # K + sharedExpertNum (default 1) = 9 slots per token

    def case(max_bs: int) -> dict:
        a = max_bs * ep * min(moe // ep, k)
        return {"id": f"a3-maxbs{max_bs}", "product": "ascend910_93", "world": ep,
                "attrs": {"groupEp": "ep", "epWorldSize": ep, "moeExpertNum": moe, "globalBS": max_bs * ep},
                "env": {"HCCL_BUFFSIZE": 200},
                "inputs": {"expandX": ("BFLOAT16", (a, h)), "expertIds": ("INT32", (bs, k)),
                           "assistInfoForCombine": ("INT32", (a * 128,)), "epSendCounts": ("INT32", (moe,)),
                           "expertScales": ("FLOAT32", (bs, k))},
                "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}

    testkit.accept(ref, case(10240 // 9), ranks=[0])  # 1137 * 9 = 10233 slots
    with pytest.raises(AssertionError, match=r"\[kernel\.status_slots\]"):
        testkit.accept(ref, case(10240 // 9 + 1), ranks=[0])


@pytest.mark.cpu_twin
def test_a_window_smaller_than_tiling_checked_traps(tmp_path):
    """The kernel compares the window tiling checked with the one its HCCL context reports (winSize) and traps
    on a shorter one, instead of writing past it."""
    from opgen import sim
    from opgen.harness import testkit

    ref, cases = _generated("moe_distribute_dispatch_v2")
    case = next(c for c in cases.POSITIVE if c["id"] == cases.TWIN_SUBSET[0])
    try:
        exe = sim.build_for(GENERATED / "moe_distribute_dispatch_v2", ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    job = sim.job.write_job(ref, case, world, tmp_path)
    exe = sim.job.executable(exe, ref, world, job)  # the world's OpDef column
    text = (job.dir / "job.txt").read_text()
    window = int(next(line for line in text.splitlines() if line.startswith("window ")).split()[1])
    sim.job.run_job(exe, job)  # as written: it fits
    # tiling hears of a window 1MB larger than the one HCCL allocated (say, GetCclBufferSize's size is stale)
    (job.dir / "job.txt").write_text(text + f"ccl_buffer {window + MB}\n")
    with pytest.raises(sim.job.TwinFault, match="AscendC::Trap"):
        sim.job.run_job(exe, job)


def _window_pages(path) -> dict[tuple[int, int, int], list[int]]:
    """The pages a twin job left (runner.cpp SaveWindows: kind u32, group u32, rank u32, offset u64, page), as
    (kind, group, rank) -> page offsets; kind 0 is windowsIn, 1 windowsExp, 2 windowsOut."""
    import struct

    data, at, pages = path.read_bytes(), 0, {}
    while at < len(data):
        kind, group, rank, offset = struct.unpack_from("<IIIQ", data, at)
        at += 20 + 4096  # the twin's windows are whole pages (HCCL_BUFFSIZE MB, 1 MiB windowsExp)
        pages.setdefault((kind, group, rank), []).append(offset)
    return pages


@pytest.mark.cpu_twin
@pytest.mark.parametrize("op", ("moe_distribute_dispatch_v2", "moe_distribute_combine_v2"))
def test_on_atlas_a3_the_status_lives_in_windows_exp(op, tmp_path):
    """The A3 kernels write their status flags into windowsExp (1 MiB, ProductFacts.exp_window), as the real A3
    ops do, and touch windowsIn only inside its two data halves."""
    from opgen import sim
    from opgen.harness import testkit

    ref, cases = _generated(op)
    case = next(c for c in cases.POSITIVE if c["product"] == "ascend910_93" and "ranks" not in c
                and c["id"] in cases.TWIN_SUBSET)
    try:
        exe = sim.build_for(GENERATED / op, ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    job = sim.job.write_job(ref, case, world, tmp_path, windows_out=True)
    assert f"exp_window {MB}" in (job.dir / "job.txt").read_text().splitlines()
    sim.job.run_job(sim.job.executable(exe, ref, world, job), job)
    pages = _window_pages(job.dir / sim.job.WINDOWS_FILE)
    scope = ref.reference.make_scope(ref.INFO, _meta_inputs(case), _attrs(ref, case), "ascend910_93")
    data_end = int(scope.let("win_data_at")) + 2 * int(scope.let("win_half"))
    exp_ranks = {rank for (kind, _, rank) in pages if kind == 1}
    assert exp_ranks == set(range(case["world"])), pages.keys()  # every rank's status: flags and data states
    for (kind, group, rank), offsets in pages.items():
        assert max(offsets) < (MB if kind == 1 else data_end), (kind, group, rank, max(offsets))


def test_a_product_inherits_or_replaces_the_window_and_tiling_carries_its_fields():
    from opgen.emit.tiling_layout import tiling_fields
    from opgen.lang.expr import to_spec

    history = load_ok(ROOT / "specs" / "history" / "dispatch_v2_2026_05.spec")
    assert history.view("ascend950").window is history.view("ascend910_93").window  # extends, declares none
    op = load_ok(ROOT / "specs" / "dispatch_v2.spec")
    a2, a3, a950 = (op.view(s).window for s in ("ascend910b", "ascend910_93", "ascend950"))
    # Ascend 950 replaces Atlas A3's: the same dispatch area, CombineV2's rows in the real A5 MTE combine's slots of
    # Ceil(2H, 480) 512-byte blocks, the status area first
    assert a2 != a3 and a950 is not a3
    assert (a950.areas[1:], a950.lets, a950.state_at_start) == (a3.areas[1:], a3.lets, True)
    # (Atlas A3: the real tiling's sharedExpertNum, 0 without shared-expert ranks: tests/test_interop_world.py
    # test_a3_real_and_generated_dispatch_leave_the_same_row_messages)
    assert [to_spec(a.expr) for a in (a3.areas[0], a950.areas[0])] == [
        "maxBS * (K + (if sharedExpertRankNum == 0 then 0 else sharedExpertNum)) * Align512(2 * H)",
        "maxBS * (K + (if sharedExpertRankNum == 0 then 0 else sharedExpertNum)) * ceil_div(2 * H, 480) * 512"]
    assert (a2.state_in, a3.state_in, a950.state_in) == ("windowsIn", "windowsExp", "windowsIn")
    assert not a3.state_at_start and not a2.state_at_start
    # Atlas A2 keeps the real A2 ops' halves: a 1 MiB reserve each, the half-select word at 1 MiB - 512, the status
    # area in the last half's reserve (code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/
    # moe_distribute_a2_constant.h ADUMP_WIN_SIZE, FULLMESH_BUFFERID_ADDR)
    assert (to_spec(a2.reserve), to_spec(a2.buffer_id), a2.state_in_reserve) == ("1 * MB", "1 * MB - 512", True)
    assert (a3.reserve, a3.buffer_id, a3.state_in_reserve) == (None, None, False)
    names = [f.name for f in tiling_fields(op) if f.name.startswith("win") and f.source == "let"]
    assert names == ["winRowBytes", "winScaleBytes", "winMsgBytes", "win_reserve", "win_buffer_id",
                     "win_buffer_id_at", "win_combine", "win_combine_at", "win_dispatch",
                     "win_dispatch_at", "win_need", "win_window", "win_halves", "win_state", "win_state_exp",
                     "win_state_at", "win_data_at", "win_half", "win_ranks", "win_rank_step"]


@pytest.mark.parametrize("op", ("moe_distribute_dispatch_v2", "moe_distribute_combine_v2"))
def test_the_status_area_sits_where_the_real_ops_keep_it(op):
    """Atlas A2: the real A2 ops' halves (window / 2 each, 1 MiB reserved at the start of each, the half-select word
    at 1 MiB - 512 in the first reserve; code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/
    moe_distribute_a2_constant.h), the status area in the second half's reserve, which the real ops leave unused;
    Atlas A3: at the start of windowsExp, the data halves taking all of windowsIn; Ascend 950: at the start of
    windowsIn, 1 MiB a rank, rank r's from r KiB (A5_MTE_STATE_WIN_SIZE, EP_RANK_OFFSET_STEP), its data halves from
    1 MiB + r KiB, each half of the window (twice HCCL_BUFFSIZE) less 1 MiB and epWorldSize KiB (the real A3 and 950
    ops, mc2/common/op_kernel/moe_distribute_base.h GetBaseWindAddrByRankId; the 950 tilings' totalWinSizeEp,
    mc2/moe_distribute_dispatch_v2/op_host/op_tiling/moe_distribute_check_win_size.h CheckWinSize).
    The halves' data, the reserves and a status area in windowsIn tile the window without overlap."""
    ref, cases = _generated(op)
    case = next(c for c in cases.POSITIVE if c["product"] == "ascend950" and "ranks" not in c)
    window = 200 * MB
    for product in ("ascend910b", "ascend910_93", "ascend950"):
        c = dict(case, product=product)
        scope = ref.reference.make_scope(ref.INFO, _meta_inputs(c), _attrs(ref, c), product)
        state, state_at = int(scope.let("win_state")), int(scope.let("win_state_at"))
        data_at, half = int(scope.let("win_data_at")), int(scope.let("win_half"))
        in_exp = int(scope.let("win_state_exp"))
        if product == "ascend910_93":  # 1 MiB of windowsExp (ProductFacts.exp_window), none of windowsIn
            assert (in_exp, state, state_at, data_at) == (1, MB, 0, 0) and half == window // 2 // 512 * 512
            continue
        if product == "ascend910b":
            reserve, word = int(scope.let("win_reserve")), int(scope.let("win_buffer_id_at"))
            assert (in_exp, state, reserve, data_at, word, int(scope.let("win_buffer_id"))) == (0, MB, MB, MB,
                                                                                                  MB - 512, 1)
            assert half == window // 2 // 512 * 512 and state_at == half  # the second half's reserve
            spans = sorted([(word, word + 4), (state_at, state_at + state), (data_at, half),
                            (half + reserve, 2 * half)])
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= window, spans
            continue
        # Ascend 950: the window is twice HCCL_BUFFSIZE, a half of it less 1 MiB of status and a KiB a rank (the
        # real totalWinSizeEp / 2); rank r's status area from r KiB, its halves from 1 MiB + r KiB, the areas
        # inside the window on every rank
        ep, step, need = c["world"], int(scope.let("win_rank_step")), int(scope.let("win_need"))
        assert (in_exp, state, state_at, data_at, step, int(scope.let("win_ranks"))) == (0, MB, 0, MB, 1024, ep)
        assert (int(scope.let("win_window")), half) == (2 * window, (2 * window - MB - ep * 1024) // 2)
        for r in range(ep):
            at = data_at + r * step
            spans = [(r * step, r * step + state), (at, at + need), (at + half, at + half + need)]
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= 2 * window, spans


def _meta_inputs(case: dict) -> dict:
    from opgen.harness import testworld

    metas = testworld.rank_metas(case)
    return testworld.meta_inputs(case, 0, metas[0])


def _attrs(ref, case: dict) -> dict:
    from opgen.harness import testkit

    return testkit.call_args(ref, case, 0)[0]


# The Setup/Teardown pipelines (Ascend 950 only) at their largest worlds: epWorldSize 8, moeExpertNum 32 (their
# only values past 2), DispatchSetup / DispatchTeardown at H 7168, BS 256, K 8 (their largest values); the
# CombineSetup shapes (H 4096, BS 16, K 6: the only ones it accepts). Per pipeline: (setup op, its case,
# teardown op, its case); the prelude feeds the teardown's y / commCmdInfo (or quantExpandX / commCmdInfo).
def _family_cases() -> dict:
    base = {"product": "ascend950", "world": 8, "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}
    attrs = {"groupEp": "ep", "epWorldSize": 8, "moeExpertNum": 32, "commType": 2}
    bs, h, k = 256, 7168, 8
    rows = bs * k + bs  # yOut: BS * K pair rows, then the BS rows of sharedExpertNum's default 1 shared expert
    dispatch_setup = dict(base, id="family-dispatch-setup", attrs=attrs,
                          inputs={"x": ("BFLOAT16", (bs, h)), "expertIds": ("INT32", (bs, k))})
    dispatch_teardown = dict(base, id="family-dispatch-teardown", attrs=attrs,
                             inputs={"x": ("BFLOAT16", (bs, h)), "y": ("BFLOAT16", (rows, h)),
                                     "expertIds": ("INT32", (bs, k)), "commCmdInfo": ("INT32", (37376,))})
    cattrs = dict(attrs, sharedExpertNum=0)
    bs, h, k = 16, 4096, 6
    a = bs * 8 * min(32 // 8, k)
    combine_setup = dict(base, id="family-combine-setup", attrs=cattrs,
                         inputs={"expandX": ("BFLOAT16", (a, h)), "expertIds": ("INT32", (bs, k)),
                                 "assistInfoForCombine": ("INT32", (a * 128,))})
    combine_teardown = dict(base, id="family-combine-teardown", attrs=cattrs,
                            inputs={"expandX": ("BFLOAT16", (a, h)), "quantExpandX": ("INT8", (a, 6144)),
                                    "expertIds": ("INT32", (bs, k)), "expandIdx": ("INT32", (bs * k,)),
                                    "expertScales": ("FLOAT32", (bs, k)), "commCmdInfo": ("INT32", (8320,))})
    return {"dispatch": ("moe_distribute_dispatch_setup", dispatch_setup,
                         "moe_distribute_dispatch_teardown", dispatch_teardown),
            "combine": ("moe_distribute_combine_setup", combine_setup,
                        "moe_distribute_combine_teardown", combine_teardown)}


def _smallest_window_mb(pairs) -> int:
    """The smallest HCCL_BUFFSIZE (MB) every (reference, case) accepts: a bisection over the generated checks
    (the twin run then shows, without trusting their formulas, that the kernels stay inside that window)."""
    from opgen.harness import testkit

    def accepted(mb: int) -> bool:
        try:
            for ref, case in pairs:
                testkit.accept(ref, dict(case, env={"HCCL_BUFFSIZE": mb}))
        except AssertionError as err:
            assert "HCCL_BUFFSIZE" in str(err), err  # only the window may be what a world lacks
            return False
        return True

    lo, hi = 1, 1 << 14
    assert accepted(hi) and not accepted(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if accepted(mid) else (mid, hi)
    return hi


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("family", ("dispatch", "combine"))
def test_the_family_pipelines_run_their_largest_worlds_in_the_smallest_window(family, tmp_path):
    """As the pair above, for the Setup/Teardown family: both ops accept the window, both run in it on the twin
    (windows of exactly HCCL_BUFFSIZE bytes, any access past one faults) and match their references."""
    from opgen import sim
    from opgen.harness import testkit

    setup_op, setup_case, teardown_op, case = _family_cases()[family]
    pref, pcases = _generated(setup_op)
    ref, cases = _generated(teardown_op)
    mb = _smallest_window_mb([(pref, setup_case), (ref, case)])
    case = dict(case, env={"HCCL_BUFFSIZE": mb}, id=f"{case['id']}-window{mb}")
    try:
        prelude = (pref, pcases, sim.build_for(GENERATED / setup_op, pref, case["product"]))
        exe = sim.build_for(GENERATED / teardown_op, ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    assert testkit.twin(ref, cases, case, world, testkit.run(ref, case, world), exe, tmp_path, prelude) is None


def test_a_window_sized_by_attributes_is_read_by_tiling_and_blames_the_attribute():
    """`window ep: cclBufferSize - 1 * MB {` (the MC2 context ops' ccl_buffer_size less 1 MiB): the window's bytes
    are that expression of attributes, which tiling reads like any attribute; a too small window blames the
    attribute; the printer writes the expression back."""
    from opgen.lang.expr import to_spec
    from opgen.model.printer import print_op

    from .conftest import load_src
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    # (an MC2 context's holder addresses each rank's window with no step: Ascend 950's `rank_step` goes too)
    src = src.replace("window ep: HCCL_BUFFSIZE {", "window ep: cclBufferSize - 1 * MB {").replace(
        "window ep: 2 * HCCL_BUFFSIZE {", "window ep: cclBufferSize - 1 * MB {").replace(
        "            rank_step epWorldSize = 1024;\n", "")
    at = src.index("    optional attr commAlg")
    src = src[:at] + '    optional attr cclBufferSize: int64 = 210763776 in [1, MAX_INT32) doc "bytes";\n' + src[at:]
    op, diags = load_src(src, "attr_window.spec")
    assert op is not None, diags.render()
    for soc, view in op.views.items():
        check = next(c for c in view.checks if c.id == "window.ep")
        assert check.param == "cclBufferSize" and check.message.startswith("cclBufferSize - 1 * MB >= "), soc
        assert to_spec(next(l for l in view.lets if l.name == "win_window").expr) == "cclBufferSize - 1 * MB"
    again, diags = load_src(print_op(op), "printed.spec")
    assert again is not None and again.products[0].window.size == op.products[0].window.size, diags.render()


# a small world of every product: BS, H, K, epWorldSize, moeExpertNum
SMALL = (4, 1024, 2, 2, 4)


def _small_min_mb(product: str) -> int:
    """The smallest window tiling accepts for SMALL: the layout's, and at least the documents' 2MB on A3 and 950."""
    return max(_dispatch_min_mb(product, *SMALL), 2 if product in ("ascend910_93", "ascend950") else 1)


@pytest.mark.parametrize("product", sorted(LARGEST))
def test_a_window_size_tiling_cannot_read_skips_the_checks_that_read_it(product):
    """Where tiling cannot read HCCL_BUFFSIZE (online compilation, super kernels: GetCclBufferSize fails), the
    real tilings skip their window checks instead of assuming 200MB (code: mc2/moe_distribute_dispatch_v2/op_host/
    op_tiling/arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp "Can't get HCCL_BUFFSIZE and skip validation."):
    validate() with HCCL_BUFFSIZE None accepts a call whose window a read size rejects, and only that check is
    skipped (the generated C++ check core agrees: tests/test_check_core.py draws unreadable sizes too)."""
    from opgen.harness import testkit

    ref, _ = _generated("moe_distribute_dispatch_v2")
    smallest = _small_min_mb(product)
    with pytest.raises(AssertionError, match=r"Parameter HCCL_BUFFSIZE .* incorrect value 1\."):
        testkit.accept(ref, _case(product, *SMALL, 1), ranks=[0])
    testkit.accept(ref, _case(product, *SMALL, None), ranks=[0])
    testkit.accept(ref, _case(product, *SMALL, smallest), ranks=[0])
    bad = _case(product, *SMALL, None)
    bad["attrs"] = dict(bad["attrs"], epWorldSize=1)  # every other check still runs
    with pytest.raises(AssertionError, match=r"Parameter epWorldSize"):
        testkit.accept(ref, bad, ranks=[0])


@pytest.mark.cpu_twin
@pytest.mark.parametrize("product", sorted(LARGEST))
@pytest.mark.parametrize("op", ("moe_distribute_dispatch_v2", "moe_distribute_combine_v2"))
def test_where_tiling_cannot_read_the_window_the_kernels_split_the_one_they_see(op, product, tmp_path):
    """GetCclBufferSize fails (`ccl_buffer unreadable`): tiling skips its window checks and hands the kernels no
    window size (win_window 0), and they split the window their HCCL context reports as tiling would have: the
    world runs in its smallest window and agrees with the reference (with a 200MB default, as before, the kernels
    trapped on any smaller window). One MB less than the layout needs traps instead of writing past the window
    (on Atlas A3, whose status lives in windowsExp, SMALL's data halves fit in 1MB: no smaller window to try)."""
    from opgen import sim
    from opgen.harness import testkit

    ref, cases = _generated(op)
    smallest = _small_min_mb(product)
    try:
        exe = sim.build_for(GENERATED / op, ref, product)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    tries = [(smallest, True)] + ([(smallest - 1, False)] if _dispatch_min_mb(product, *SMALL) == smallest else [])
    case = _case(product, *SMALL, smallest)
    if op == "moe_distribute_combine_v2":
        case = _combine_case(ref, case)
    world = testkit.build_world(ref, case)
    for window_mb, fits in tries:
        job = sim.job.write_job(ref, case, world, tmp_path / str(window_mb))
        run = sim.job.executable(exe, ref, world, job)
        text = (job.dir / "job.txt").read_text(encoding="utf-8")
        per = ref.INFO.fact(product).window_per_buffsize  # HCCL's window per HCCL_BUFFSIZE (Ascend 950: twice it)
        assert f"\nwindow {per * smallest * MB}\n" in text
        text = text.replace(f"\nwindow {per * smallest * MB}\n", f"\nwindow {per * window_mb * MB}\n")
        (job.dir / "job.txt").write_text(text + "ccl_buffer unreadable\n", encoding="utf-8")
        if not fits:
            with pytest.raises(sim.job.TwinFault, match="AscendC::Trap"):
                sim.job.run_job(run, job)
            continue
        results = testkit.run(ref, case, world)
        outs = sim.job.run_job(run, job)
        problems = [p for r, (got, want) in enumerate(zip(outs, results))
                    for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
        assert not problems, "\n".join(problems)


def test_atlas_a2_accepts_the_documented_window_and_rejects_only_what_its_layout_overruns():
    """Issue 33's world on Atlas A2: BS 256, H 7168, K 8, 256 experts, 16 ranks (bf16, no quant).

    doc: aclnnMoeDistributeDispatchV4.md 环境变量约束, A2 "fullmesh": HCCL_BUFFSIZE >= 2 * (BS * epWorldSize *
    min(localExpertNum, K) * H * sizeof(uint16) + 2MB), 900MB here; code: moe_distribute_dispatch_v2_tiling_arch22.cpp
    MoeDistributeDispatchA2CheckWinSize checks the same formula and only warns ("为避免兼容性问题"). The generated
    tiling warns as the real one does (buffer.fullmesh_window: 899MB warns, 900MB does not). Its kernels pack each
    source rank's rows into its region of a data half, as the real A2 kernels (code: mc2/moe_distribute_dispatch_v2/
    op_kernel/arch22/moe_distribute_dispatch_a2.h dataSizePerRank_; mc2/moe_distribute_combine_v2/op_kernel/arch22/
    moe_distribute_combine_a2.h rankSizeOnWin_): a region holds BS * min(localExpertNum, K) DispatchV2 messages of
    2H + 32 bytes (the row, then the expert scale), CombineV2's rows and header over them, so a half needs the 1 MiB
    reserve and 16 * 2048 * 14368 bytes, the documents' 2MB a half exactly (measured 2026-12-07: the layout's
    minimum is the documented 900MB, before the packing 3651MB). window.ep accepts 900MB and rejects 899MB, which
    the kernels would overrun."""
    from dataclasses import replace

    from opgen.harness import testkit, testworld
    from opgen.runtime import OpError

    ref, _ = _generated("moe_distribute_dispatch_v2")
    bs, h, k, ep, moe = 256, 7168, 8, 16, 256
    documented = math.ceil(2 * (bs * ep * min(moe // ep, k) * h * 2 + 2 * MB) / MB)
    layout = _dispatch_min_mb("ascend910b", bs, h, k, ep, moe)
    assert (documented, layout) == (900, 900)

    def warned(window_mb: int) -> list[str]:
        case = _case("ascend910b", bs, h, k, ep, moe, window_mb)
        inputs = testworld.meta_inputs(case, 0, testworld.rank_metas(case)[0])
        attrs, out_dtypes = testkit.call_args(ref, case, 0)
        s = ref.reference.make_scope(ref.INFO, inputs, attrs, "ascend910b", out_dtypes)
        out = []
        for check in (c for c in ref.INFO.checks["ascend910b"] if c.code == 0):
            try:
                replace(check, code=1).run(s, ref.INFO.name)  # a warning reported like an error
            except OpError:
                out.append(check.id)
        return out

    assert warned(documented - 1) == ["buffer.fullmesh_window"] and warned(documented) == []
    testkit.accept(ref, _case("ascend910b", bs, h, k, ep, moe, layout), ranks=[0])
    with pytest.raises(AssertionError, match=r"incorrect value 899\. .*\[window\.ep\]"):
        testkit.accept(ref, _case("ascend910b", bs, h, k, ep, moe, layout - 1), ranks=[0])


@pytest.mark.parametrize("op", ("moe_distribute_dispatch_setup", "moe_distribute_dispatch_teardown",
                                "moe_distribute_combine_setup", "moe_distribute_combine_teardown"))
def test_the_setup_teardown_window_is_half_the_env_and_its_dispatch_area_lies_over_the_combine_area(op):
    """`window ep: HCCL_BUFFSIZE // 2 {` (the real 950 tilings' totalWinSize = GetMaxWindowSize() / 2, code: mc2/
    moe_distribute_combine_setup/op_host/op_tiling/moe_distribute_combine_setup_tiling_base.cpp): tiling sees half
    the env's bytes, so data half 1 starts at HCCL_BUFFSIZE / 4 as the real kernels'; `area dispatch over combine`
    starts at the combine area's offset (0), as the real DispatchSetup's blocks, and a half must hold the longer of
    the two, not their sum. The printer writes both back."""
    from opgen.lang.expr import to_spec
    from opgen.model.printer import print_op

    from .conftest import load_src
    ref, cases = _generated(op)
    case = next(c for c in cases.POSITIVE if c["product"] == "ascend950")
    for window_mb in (200, 64):
        c = dict(case, env=dict(case.get("env", {}), HCCL_BUFFSIZE=window_mb))
        scope = ref.reference.make_scope(ref.INFO, _meta_inputs(c), _attrs(ref, c), "ascend950")
        assert int(scope.let("win_window")) == window_mb * MB // 2
        assert int(scope.let("win_half")) == window_mb * MB // 4 and int(scope.let("win_data_at")) == 0
        assert int(scope.let("win_combine_at")) == 0
        combine_end = int(scope.let("win_combine"))
        if "dispatch" in op:
            assert int(scope.let("win_dispatch_at")) == 0
            assert int(scope.let("win_need")) == max(combine_end, int(scope.let("win_dispatch")))
            assert int(scope.let("win_need")) < combine_end + int(scope.let("win_dispatch"))
        else:
            assert int(scope.let("win_need")) == combine_end
    spec = {"moe_distribute_dispatch_setup": "dispatch_setup", "moe_distribute_dispatch_teardown": "dispatch_teardown",
            "moe_distribute_combine_setup": "combine_setup", "moe_distribute_combine_teardown": "combine_teardown"}[op]
    loaded, diags = load_src((ROOT / "specs" / f"{spec}.spec").read_text(encoding="utf-8"), f"{spec}.spec")
    assert loaded is not None, diags.render()
    view = loaded.views["ascend950"]
    assert to_spec(next(l for l in view.lets if l.name == "win_window").expr) == "HCCL_BUFFSIZE * MB // 2"
    check = next(c for c in view.checks if c.id == "window.ep")
    assert check.param == "HCCL_BUFFSIZE" and check.message.startswith("HCCL_BUFFSIZE // 2 >= ")
    again, diags = load_src(print_op(loaded), "printed.spec")
    assert again is not None, diags.render()
    w, w2 = loaded.products[0].window, again.products[0].window
    assert (w2.size, w2.size_env, w2.env, [(a.name, a.over) for a in w2.areas]) == (
        w.size, True, "HCCL_BUFFSIZE", [(a.name, a.over) for a in w.areas])


@pytest.mark.cpu_twin
def test_where_tiling_cannot_read_the_window_the_setup_teardown_kernels_trap(tmp_path):
    """The family's window is HCCL_BUFFSIZE // 2 (`window ep: HCCL_BUFFSIZE // 2`), which a kernel cannot derive from
    the window its HCCL context reports: where tiling could not read the size (`ccl_buffer unreadable`, win_window 0)
    the DispatchSetup kernel traps instead of splitting the whole window (its half 1 would not be the real ops');
    with the size read, the same world runs and agrees with the reference."""
    from opgen import sim
    from opgen.harness import testkit

    op = "moe_distribute_dispatch_setup"
    ref, cases = _generated(op)
    case = next(c for c in cases.POSITIVE if c["product"] == "ascend950")
    try:
        exe = sim.build_for(GENERATED / op, ref, "ascend950")
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    for unreadable in (False, True):
        job = sim.job.write_job(ref, case, world, tmp_path / str(unreadable))
        run = sim.job.executable(exe, ref, world, job)
        if unreadable:
            text = (job.dir / "job.txt").read_text(encoding="utf-8")
            (job.dir / "job.txt").write_text(text + "ccl_buffer unreadable\n", encoding="utf-8")
            with pytest.raises(sim.job.TwinFault, match="AscendC::Trap"):
                sim.job.run_job(run, job)
            continue
        outs = sim.job.run_job(run, job)
        problems = [p for r, (got, want) in enumerate(zip(outs, results))
                    for p in testkit.output_problems(ref, cases, case, world, r, got, want)]
        assert not problems, "\n".join(problems)
