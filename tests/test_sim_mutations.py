"""A wrong line in a kernel template makes the CPU twin fail: its comparison with the reference, or a fault.

Each mutation changes one line of a kernel template, rebuilds DispatchV2 from its spec into a temporary
directory, runs worlds of the generated suite on the twin built from the mutated kernel and expects a
difference from the reference (or a fault); the same worlds pass on the kernel of the unmutated templates.
"""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from opgen import cli
from opgen.core.layout import SHARED_DIR, SHARED_KERNEL_INCLUDE
from opgen.emit import render as emit

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
OP = "moe_distribute_dispatch_v2"

pytestmark = pytest.mark.cpu_twin

# name -> (template, the line as written, the wrong line, case ids of the generated suite)
MUTATIONS = {
    # every pair to an expert takes the next slot: skipping one misplaces rows (a world where a core sends
    # several pairs to one expert: each core counts its own pairs after the slots of the cores before it)
    "slot_count_off_by_one": ("cpp/common/op_kernel/moe_dispatch_kernel.h",
                              "cnt.SetValue(e, static_cast<int32_t>(slot + 1U));",
                              "cnt.SetValue(e, static_cast<int32_t>(slot + 2U));",
                              ("ascend910_93-q0-bs512-h1024-k2-w2",)),
    # WaitStatus clears the whole status entries, not only their flags: core 0 reads the row counts there for
    # expertTokenNumsOut (after the SyncAll of the row-count exchange, without one of its own)
    "status_counts_cleared": ("cpp/common/op_kernel/moe_dispatch_kernel.h",
                              "uint64_t flagWords[2] = {FLAG_WORDS_OF_BLOCKS, 0UL};",
                              "uint64_t flagWords[2] = {~0UL, 0UL};",
                              ("ascend910_93-q0-bs4-h1024-k2-w2",)),
    # the window copy reads a batch of messages as if they lay back to back, not msgStride_ apart (the blocks of
    # this world hold several rows each)
    "batch_copy_stride": ("cpp/common/op_kernel/moe_dispatch_kernel.h",
                          "DataCopy(msg, src, DataCopyParams(count, msgBlocks, winGap, 0U));",
                          "DataCopy(msg, src, DataCopyParams(count, msgBlocks, 0U, 0U));",
                          ("ascend910_93-q0-bs4-h1024-k2-w2",)),
    # a quant-0 row message's info tail is written by the scalar unit while MTE3 may still send the previous
    # destination's message from the same buffer (SendRow's MTE3_S sync dropped; a world where a core sends
    # several rows, two messages each)
    "missing_mte3_s_sync": ("cpp/common/op_kernel/moe_dispatch_kernel.h",
                            "        SyncFunc<HardEvent::MTE3_S>();\n        FillInfo(",
                            "        FillInfo(",
                            ("ascend910_93-q0-bs512-h1024-k2-w2",)),
    # the next token row is loaded over the message MTE3 may still be sending (TokenRow's MTE3_MTE2 sync dropped)
    "missing_mte3_mte2_sync": ("cpp/common/op_kernel/moe_dispatch_kernel.h",
                               "SyncFunc<Traits::SENDS_ROW ? HardEvent::MTE3_MTE2 : HardEvent::V_MTE2>();",
                               "if constexpr (!Traits::SENDS_ROW) { SyncFunc<HardEvent::V_MTE2>(); }",
                               ("ascend910_93-q0-bs512-h1024-k2-w2",)),
    # the int8 chain rounds half away from zero instead of to even (the tokens carry exact ties)
    "rint_as_round": ("cpp/common/op_kernel/opgen_kernel_helpers.h",
                      "Cast(asInt, scratch, RM, count);",
                      "Cast(asInt, scratch, RoundMode::CAST_ROUND, count);",
                      ("ascend910b-q2-bs4-h32-k1-w2", "ascend950-q2-bs4-h1024-k2-w2")),
    # a row loaded by MTE2 is read by the vector pipe without waiting for the copy (LoadRow's sync dropped)
    "missing_mte2_v_sync": ("cpp/common/op_kernel/opgen_kernel_helpers.h",
                            "DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));\n    SyncFunc<HardEvent::MTE2_V>();",
                            "DataCopyPadExtParams<uint8_t>(false, 0U, 0U, 0U));",
                            ("ascend910b-q2-bs4-h32-k1-w2-scales2x32",)),
    # the next row is loaded over a slot the vector pipe may still be reading (LoadRow's V_MTE2 sync dropped).
    # A static-quant world (q1): its chain (Cast, Mul by the scales row, Cast) has no scalar wait between the
    # vector reads of a slot and the LoadRow of the scales over it. The pertoken chain (q2) is no witness:
    # ReduceMaxRow's WaitFlag<V_S> stops the scalar unit, which issues the next DataCopy, until the vector reads
    # are done, so there the sync is redundant on the device as on the twin (hazard.h MakeVisible; the real
    # WaitStatus relies on it: code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h)
    "missing_v_mte2_sync": ("cpp/common/op_kernel/opgen_kernel_helpers.h",
                            "    SyncFunc<HardEvent::V_MTE2>(); // the slot may still be read by earlier vector "
                            "instructions\n",
                            "",
                            ("ascend950-q1-bs4-h1024-k2-w2-scales1024",)),
    # the int8 chain's clamp reads the previous vector instruction's result without a V barrier
    "missing_pipe_barrier_v": ("cpp/common/op_kernel/opgen_kernel_helpers.h",
                               "? -128.0f : 0.0f, n);\n        PipeBarrier<PIPE_V>();\n",
                               "? -128.0f : 0.0f, n);\n",
                               ("ascend910b-q2-bs4-h32-k1-w2",)),
}


def _suite(op: str = OP):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")


def _require_twin() -> None:
    from opgen import sim

    try:
        sim.compiler()
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")


def _build_mutated(monkeypatch, out: Path, template: str, line: str, wrong: str, spec: str = "dispatch_v2.spec",
                   op: str = OP) -> Path:
    original = emit._load_template

    def mutated(name: str) -> str:
        text = original(name)
        if name == template:
            assert text.count(line) == 1, f"{template} no longer has exactly one {line!r}: update the mutation"
            text = text.replace(line, wrong)
        return text

    monkeypatch.setattr(emit, "_load_template", mutated)
    emit.environment.cache_clear()
    try:
        # --no-cache: the build cache knows the templates on disk, not this mutation
        assert cli.main(["build", str(ROOT / "specs" / spec), "-o", str(out), "--no-cache"]) == 0
    finally:
        emit.environment.cache_clear()
    kernel, before = _kernel_code(out, op), _kernel_code(GENERATED, op)
    wrong_code, line_code = (re.sub(r"\s+", "", s) for s in (wrong, line))
    # a removed line may stand in another header as well (the shared folder holds every family's kernel): one
    # fewer is the mutation
    assert (wrong_code in kernel) if wrong else (kernel.count(line_code) < before.count(line_code)), \
        f"the mutation of {template} did not reach the kernel"
    return out / op


def _kernel_code(tree: Path, op: str) -> str:
    """The kernel class and its entries, and the C++ family kernels of the shared folder, of ``op`` in ``tree``,
    without whitespace (clang-format lays the generated kernel out: opgen/emit/cpp_format.py)."""
    files = [*(tree / op / "op_kernel").rglob("*"), *(tree / SHARED_DIR / SHARED_KERNEL_INCLUDE).glob("*")]
    return re.sub(r"\s+", "", "".join(p.read_text(encoding="utf-8") for p in sorted(files) if p.suffix in (".h", ".cpp")))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_wrong_template_line_fails_the_twin(name, monkeypatch, tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    template, line, wrong, case_ids = MUTATIONS[name]
    ref, cases = _suite()
    _require_twin()
    mutated = _build_mutated(monkeypatch, tmp_path / "out", template, line, wrong)
    good = lambda product: sim.build_for(GENERATED / OP, ref, product)  # noqa: E731 - one twin per kernel arch
    bad = lambda product: sim.build_for(mutated, ref, product)  # noqa: E731
    by_id = {c["id"]: c for c in cases.POSITIVE}
    for case_id in case_ids:
        case = by_id[case_id]
        world = testkit.build_world(ref, case)
        results = testkit.run(ref, case, world)
        testkit.twin(ref, cases, case, world, results, good, tmp_path / "good" / case_id)
        with pytest.raises((AssertionError, sim.TwinFault)):
            testkit.twin(ref, cases, case, world, results, bad, tmp_path / "bad" / case_id)


@pytest.mark.slow
def test_a_wrong_line_in_a_family_kernel_header_fails_the_twin(monkeypatch, tmp_path):
    """The Setup/Teardown kernels are C++ headers the build copies into common/op_kernel/: a wrong line there
    (DispatchSetup's expandIdxOut gives every valid pair the next pair's slot) reaches the twin through the op's
    op_kernel/<op>_gen.h and fails it; the same world passes on the unmutated header."""
    from opgen import sim
    from opgen.harness import testkit

    op = "moe_distribute_dispatch_setup"
    ref, cases = _suite(op)
    _require_twin()
    mutated = _build_mutated(monkeypatch, tmp_path / "out", "cpp/common/op_kernel/moe_dispatch_setup_kernel.h",
                             "idx.SetValue(i - pairBegin, slot);", "idx.SetValue(i - pairBegin, slot + 1);",
                             "dispatch_setup.spec", op)
    case = next(c for c in cases.POSITIVE if c["id"] == cases.TWIN_SUBSET[0])
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    good = lambda product: sim.build_for(GENERATED / op, ref, product)  # noqa: E731
    bad = lambda product: sim.build_for(mutated, ref, product)  # noqa: E731
    assert testkit.twin(ref, cases, case, world, results, good, tmp_path / "good") is None
    with pytest.raises((AssertionError, sim.TwinFault)):
        testkit.twin(ref, cases, case, world, results, bad, tmp_path / "bad")


# CombineV2's class template: name -> (the line as written, the wrong line, the case id of the generated suite)
COMBINE_MUTATIONS = {
    # the reduce adds the experts' rows unweighted
    "unweighted_add": ("AddRow(acc, term, weight, hasWeights_);", "AddRow(acc, term, 1.0f, false);",
                       "ascend910_93-q0-bs2-h1024-k2-w2"),
    # the weighted add's Add reads the term its Muls wrote with no PipeBarrier<PIPE_V> between (the barrier of
    # AddRow the reduce keeps: the Add's own and the accumulator's Duplicate's were dropped as the real op has none)
    "add_row_no_pipe_v": ("        Muls(term, term, weight, n);\n        PipeBarrier<PIPE_V>();\n",
                          "        Muls(term, term, weight, n);\n", "ascend910_93-q0-bs2-h1024-k2-w2"),
    # the state record's position word is copied out before the scalar unit's store into UB is ordered before MTE3
    # (Atlas A3 keeps the real ops' records, opgen_kernel_helpers.h StoreRecordPosition: the combine's last store)
    "state_record_no_s_mte3": ("    word.SetValue(0U, position);\n    SyncFunc<HardEvent::S_MTE3>();\n",
                               "    word.SetValue(0U, position);\n", "ascend910_93-q0-bs2-h1024-k2-w2",
                               "cpp/common/op_kernel/opgen_kernel_helpers.h"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMBINE_MUTATIONS))
def test_a_wrong_line_in_the_combine_class_template_fails_the_twin(name, monkeypatch, tmp_path):
    """CombineV2's kernel is the moe_combine family's C++ class template (common/op_kernel/moe_combine_kernel.h)
    around the Traits and formulas of op_kernel/<op>_gen.h: a wrong line there (a wrong weight, a barrier or sync
    it keeps dropped) reaches the twin and fails it; the same world passes on the unmutated header."""
    from opgen import sim
    from opgen.harness import testkit

    op = "moe_distribute_combine_v2"
    line, wrong, case_id, *where = COMBINE_MUTATIONS[name]  # where: another header than the class template's
    ref, cases = _suite(op)
    _require_twin()
    header = where[0] if where else "cpp/common/op_kernel/moe_combine_kernel.h"
    mutated = _build_mutated(monkeypatch, tmp_path / "out", header, line, wrong, "combine_v2.spec", op)
    case = next(c for c in cases.POSITIVE if c["id"] == case_id)
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    good = lambda product: sim.build_for(GENERATED / op, ref, product)  # noqa: E731
    bad = lambda product: sim.build_for(mutated, ref, product)  # noqa: E731
    assert testkit.twin(ref, cases, case, world, results, good, tmp_path / "good") is None
    with pytest.raises((AssertionError, sim.TwinFault)):
        testkit.twin(ref, cases, case, world, results, bad, tmp_path / "bad")


# rank 1 never sets the flags it owes its peers: name -> (spec, op, template, line, case id, the report of rank 0)
SILENT_PEERS = {
    # DispatchV2: rank 1's status entries (local expert, source rank) never reach any window
    "dispatch_status": ("dispatch_v2.spec", OP, "cpp/common/op_kernel/moe_dispatch_kernel.h",
                        "        DataCopy(flag, status[(target - begin) * WS_SLOT_INTS], WS_SLOT_INTS);",
                        "ascend910_93-q0-bs4-h1024-k2-w2", "set by rank 1"),
    # the same on Ascend 950, whose wait sums the entries' flag words (WaitFlagWords) and names the first unset one
    "dispatch_status_950": ("dispatch_v2.spec", OP, "cpp/common/op_kernel/moe_dispatch_kernel.h",
                            "        DataCopy(flag, status[(target - begin) * WS_SLOT_INTS], WS_SLOT_INTS);",
                            "ascend950-q0-bs4-h1024-k2-w2", "set by rank 1"),
    # CombineV2 (Atlas A3): the rows rank 1's expert returns land, their slot flags never do
    "combine_slots": ("combine_v2.spec", "moe_distribute_combine_v2", "cpp/common/op_kernel/moe_combine_kernel.h",
                      "        DataCopy(slotFlag, flag, WS_SLOT_INTS);",
                      "ascend910_93-q0-bs2-h1024-k2-w2", "set by the rank of expert 1"),
    # CombineV2 (Ascend 950): rank 1's rows, whose blocks carry their flags, never land; the owner's round-robin
    # passes (CombineRoundRobin) skip the token until the deadline, then name its first slot not in
    "combine_blocks_950": ("combine_v2.spec", "moe_distribute_combine_v2", "cpp/common/op_kernel/moe_combine_kernel.h",
                           "    DataCopy(win, packed, blocks_ * BLOCK_BYTES / 4U);",
                           "ascend950-q0-bs2-h1024-k2-w2", "set by the rank of expert 1"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SILENT_PEERS))
def test_a_peer_that_never_sets_its_flag_is_reported_and_the_kernel_traps(name, monkeypatch, tmp_path):
    """A poll gives up after HCCL_EXEC_TIMEOUT (read by the host tiling, here 1 s, below the twin's own watchdog):
    the kernel prints which flag of its window it waited for and who sets it, then traps, instead of hanging."""
    from opgen import sim
    from opgen.harness import testkit

    spec, op, template, line, case_id, setter = SILENT_PEERS[name]
    ref, cases = _suite(op)
    _require_twin()
    pad = line[:len(line) - len(line.lstrip())]
    indented = (f"{pad}if (epRank_ != 1U) {{  // opgen mutation: rank 1 stays silent\n{pad}    {line.lstrip()}\n"
                f"{pad}}}")
    mutated = _build_mutated(monkeypatch, tmp_path / "out", template, line, indented, spec, op)
    case = next(c for c in cases.POSITIVE if c["id"] == case_id)
    world = testkit.build_world(ref, case)
    monkeypatch.setenv("HCCL_EXEC_TIMEOUT", "1")
    with pytest.raises(sim.TwinFault) as err:
        sim.run(sim.build_for(mutated, ref, case["product"]), ref, case, world, tmp_path / "bad", timeout=30)
    # every rank waits on rank 1 (rank 1 on its own silent flags too): whichever deadline passes first is the
    # twin's first fault, and its report must name the silent rank as the one that owes the flag
    report = re.search(r"rank (\d) core \d+: AscendC::Trap: the kernel aborted itself after printing: opgen: rank \1 "
                       r"gave up after 1000000 us \(HCCL_EXEC_TIMEOUT\) waiting for flag (\d+) of its window, (.*)",
                       str(err.value))
    assert report, str(err.value)
    assert report.group(3) == setter, str(err.value)


@pytest.mark.slow
def test_a_950_kernel_that_asks_hccl_for_window_addresses_faults(monkeypatch, tmp_path):
    """On __NPU_ARCH__ 3510 the real Hccl<AICPU>::GetWindowsInAddr always returns 0, so the generated kernels read
    the context's windowsIn[] (WindowIn); one that asks the client instead faults on the twin, as it would write
    to GM 0 on the device."""
    from opgen import sim
    from opgen.harness import testkit

    ref, cases = _suite()
    _require_twin()
    mutated = _build_mutated(monkeypatch, tmp_path / "out", "cpp/common/op_kernel/opgen_kernel_context.h",
                             "    return reinterpret_cast<GM_ADDR>(ctx->windowsIn[rank]);",
                             "    return hccl.GetWindowsInAddr(rank);")
    case = next(c for c in cases.POSITIVE if c["product"] == "ascend950" and c["run"] is None and c["world"] == 2)
    world = testkit.build_world(ref, case)
    with pytest.raises(sim.TwinFault, match=r"Hccl::GetWindowsInAddr\(\d+\): on __NPU_ARCH__ 3510 the AICPU client "
                                            r"always returns 0"):
        sim.run(sim.build_for(mutated, ref, case["product"]), ref, case, world, tmp_path / "bad")


@pytest.mark.slow
def test_a_barrier_the_formula_lowering_places_by_dependency_is_needed(monkeypatch, tmp_path):
    """The quant formulas get PipeBarrier<PIPE_V> only where a vector instruction reads a row an earlier one wrote
    (opgen/lower/ascendc.py QuantLowering.vec): dropping the one before the comm-quant sender's Div (it reads the
    block scales Brcb broadcast into a row) makes CombineV2's Atlas A3 quant-2 world fault on the twin, naming the
    missing barrier; the same world passes on the unmutated kernel."""
    from opgen import sim
    from opgen.harness import testkit
    from opgen.lower import ascendc

    op = "moe_distribute_combine_v2"
    ref, cases = _suite(op)
    _require_twin()
    original = ascendc.QuantLowering.vec
    dropped = []

    def vec(self, line, reads=(), writes=(), ends="open"):
        if line.startswith("Div(") and self.dirty & self.buffers(*reads):
            dropped.append(line)
            self.dirty.clear()  # the lowering goes on as if the barrier were there
        return original(self, line, reads, writes, ends)

    monkeypatch.setattr(ascendc.QuantLowering, "vec", vec)
    out = tmp_path / "out"
    assert cli.main(["build", str(ROOT / "specs" / "combine_v2.spec"), "-o", str(out), "--no-cache"]) == 0
    monkeypatch.setattr(ascendc.QuantLowering, "vec", original)
    assert dropped, "the comm-quant sender's Div no longer follows a barrier the lowering placed: update the mutation"
    # one barrier fewer in the kernel: the op's one row Div (lowered twice: a first pass finds the message)
    barriers = [_kernel_code(tree, op).count("PipeBarrier<PIPE_V>();") for tree in (GENERATED, out)]
    assert barriers[1] == barriers[0] - 1, barriers
    case = next(c for c in cases.POSITIVE if c["id"] == "ascend910_93-q2-bs2-h1024-k2-w2")
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    good = lambda product: sim.build_for(GENERATED / op, ref, product)  # noqa: E731
    assert testkit.twin(ref, cases, case, world, results, good, tmp_path / "good") is None
    with pytest.raises(sim.TwinFault, match=r"Div: reads UB \[\d+, \d+\) that an earlier vector instruction wrote "
                                            r"at \[\d+, \d+\) with no PipeBarrier<PIPE_V> between the two"):
        sim.run(sim.build_for(out / op, ref, case["product"]), ref, case, world, tmp_path / "bad")
