"""The generated Ascend 950 DispatchV2's status wait, counted by the twin on one small world (the benchmark's smoke
world: ep 8, one MoE expert per rank, BS 8, H 1024, K 8, 8 vector cores a rank), so that a regression of its cost
shows as a failing count, not only in a README table.

The wait (moe_dispatch_kernel.h WaitFlagWords, __NPU_ARCH__ 3510) loads only the flag word of each of the core's
status entries per round, packed by one DataCopyPad<Compact>, adds them with one vector Sum and reads the sum with
one scalar access, as the real arch35 dispatch's WaitStatusA5 does (code: mc2/moe_distribute_dispatch_v2/op_kernel/
moe_distribute_dispatch_v2.h). How many rounds a core polls depends on the peers' timing, so the counts pinned here are
those of one round, exactly: 4 poll bytes per entry and 1 poll scalar access a round (the scalar wait before it read
each entry's 32-byte entry and its flag word: 32 bytes and 1 access per entry a round), and the scalar accesses
outside the polls, which no timing moves.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from .conftest import ROOT

GENERATED = ROOT / "generated"
OP = "moe_distribute_dispatch_v2"
EP, BS, H, K, AIV = 8, 8, 1024, 8, 8
ENTRIES_PER_CORE = 1  # EP (local expert, source rank) entries a rank over AIV cores
# the scalar accesses outside the polls: core 0 of each rank 109 (it also writes expertTokenNumsOut from the row
# counts: WriteTokenNums), every other core 100. 72 of them are the 8 (token, k) pairs a core sends, 9 a pair:
# CountSlots 3 (the expert id, its count read and written), the send loop 3 (the id again, the slot read and
# written), FillInfo's triple 3 (README, "Ascend 950 DispatchV2, real vs generated"); the wait: the sum's first
# read 1, the entry's row count 3, the row offsets across cores 1 + 8, the window copy 2; the core's data-state
# word 10: since issue 33 it is the real ops' InitWinState block, read for the data state and the call count (2),
# written back at Init with the state flipped, the position, epRankId, moeExpertNum, epWorldSize, globalBS and the
# call count (7), its position set past the wait (1) (code: mc2/moe_distribute_dispatch_v2/op_kernel/
# moe_distribute_v2_base.h InitWinState, moe_distribute_dispatch_v2.h RunPosRecord); before, 2: the data state
# read at Init, the flip written at the end.
SCALAR = {0: 109, **{c: 100 for c in range(1, AIV)}}

pytestmark = pytest.mark.cpu_twin


def _case() -> dict:
    return {"id": f"wait-cost-ascend950-q0-bs{BS}-h{H}-k{K}-w{EP}", "product": "ascend950", "world": EP,
            "attrs": {"groupEp": "ep", "epWorldSize": EP, "moeExpertNum": EP, "quantMode": 0},
            "env": {}, "inputs": {"x": ("BFLOAT16", (BS, H)), "expertIds": ("INT32", (BS, K))},
            "rank_shapes": {}, "out_dtypes": {}, "data": {}, "run": None}


@pytest.fixture(scope="module")
def costs(tmp_path_factory):
    """(rank, core) -> the twin's costs of the generated DispatchV2 on the world, its outputs checked first."""
    from opgen import sim
    from opgen.harness import testkit

    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{OP}.reference"), importlib.import_module(f"{OP}.tests.cases")
    case = _case()
    try:
        exe = sim.build_for(GENERATED / OP, ref, case["product"])
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    world = testkit.build_world(ref, case)
    want = testkit.run(ref, case, world)
    work = tmp_path_factory.mktemp("wait")
    got = sim.run(exe, ref, case, world, work, aiv=AIV)
    problems = [p for r in range(EP) for p in testkit.output_problems(ref, cases, case, world, r, got[r], want[r])]
    assert not problems, "\n".join(problems[:20])
    return sim.job.read_costs(work)


def test_every_core_of_every_rank_is_counted(costs):
    assert sorted(costs) == [(r, c) for r in range(EP) for c in range(AIV)]


def test_a_wait_round_reads_the_flag_words_and_the_sum_once(costs):
    """poll bytes = 4 x entries x rounds and poll scalar accesses = rounds, on every core, however many rounds it
    polled (0 when every flag was there at the first read, which is no poll)."""
    wrong = {key: (c["poll_read"], c["poll_scalar"]) for key, c in costs.items()
             if c["poll_read"] != 4 * ENTRIES_PER_CORE * c["poll_scalar"]}
    assert not wrong, f"(rank, core): (poll bytes, poll scalar accesses) not 4 bytes per entry a round: {wrong}"
    # the relation was exercised: some core of the 64 waited for a slower rank (in every run so far dozens did)
    assert sum(c["poll_scalar"] for c in costs.values()) > 0, "no core polled: the wait round was not counted"


def test_the_scalar_accesses_outside_the_polls_are_exact(costs):
    got = {key: c["scalar"] for key, c in costs.items()}
    assert got == {(r, c): SCALAR[c] for r in range(EP) for c in range(AIV)}
    assert max(got.values()) == 109  # the README table's "busiest core's scalar accesses" at this size
