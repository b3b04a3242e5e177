"""How the generated kernels reach the other ranks' HCCL windows, per product, and the worlds that follows.

The kernels move rows with MTE copies into the other ranks' HCCL windows. On Atlas A2 (8 NPUs per server,
ProductFacts.ranks_per_server) those reach only the windows of the own server (HCCS); the real A2 fullmesh ops
send to the other servers with HCCL BatchWrite, served by the AI CPU, and so do the generated DispatchV2 and
CombineV2 kernels (Family.batch_write): they stage what another server's rank gets in their windowsOut and core 0
hands the server one item per block (CombineV2: per owner region), rows first, flags after. The host tiling says where the servers end
(tiling.serverRanks), launches the AI CPU cores and sizes the items' workspace. The CPU twin faults an MTE copy
into another server's window and holds BatchWrite to the client's contract (test_sim_twin).

On Ascend 950 (__NPU_ARCH__ 3510) Hccl<AICPU>::GetWindowsInAddr gives no address (it always returns 0), so the
kernels read the peers' windows from the HCCL context's windowsIn[], which lists 64 ranks
(ProductFacts.context_windows): a larger world is rejected (an implicit check, transport.epWorldSize).
"""
from __future__ import annotations

import re

import pytest

from opgen.lang.expr import Binary, Int, Name
from opgen.runtime import OpError

from .conftest import ROOT, build_reference, load_ok

GENERATED = ROOT / "generated"


def test_a2_accepts_worlds_across_servers_and_950_keeps_its_context_limit():
    for name in ("dispatch_v2", "combine_v2"):
        op = load_ok(ROOT / "specs" / f"{name}.spec")
        for soc in ("ascend910b", "ascend910_93"):
            assert "transport.epWorldSize" not in {c.id for c in op.views[soc].checks}, (name, soc)
        a5 = {c.id: c for c in op.views["ascend950"].checks}["transport.epWorldSize"]
        assert a5.expr == Binary("<=", Name("epWorldSize"), Int(64))
        assert a5.message.startswith("at most 64, the windows the HCCL context lists on Ascend 950DT")
        # the A2 hierarchy template is not generated: the op rejects it, after the documents' own hierarchy rules
        no_hierarchy = [c for c in op.views["ascend910b"].checks
                        if "\"hierarchy\" (the layered template) is not built by opgen" in c.message]
        assert [(c.param, c.error_class) for c in no_hierarchy] == [("commAlg", "tiling")], name
    # Ascend 950 only, epWorldSize in {2, 8}: the domain keeps the world within both limits, so no check
    for name in ("dispatch_setup", "dispatch_teardown", "combine_setup", "combine_teardown"):
        family = load_ok(ROOT / "specs" / f"{name}.spec")
        assert not [c for v in family.views.values() for c in v.checks if c.id.startswith("transport.")], name


@pytest.fixture(scope="module")
def dispatch(tmp_path_factory):
    return build_reference("dispatch_v2.spec", tmp_path_factory.mktemp("transport"))


def _inputs(bs=2, h=32, k=1):
    import numpy as np
    return {"x": np.zeros((bs, h), dtype=np.float16), "expertIds": np.zeros((bs, k), dtype=np.int32)}


def test_the_reference_accepts_two_a2_servers_and_names_what_it_rejects(dispatch):
    attrs = {"groupEp": "ep", "epWorldSize": 16, "epRankId": 0, "moeExpertNum": 16, "commAlg": "fullmesh"}
    dispatch.validate(_inputs(), attrs, "ascend910b")  # two servers: BatchWrite between them
    dispatch.validate(_inputs(), dict(attrs, epWorldSize=384, moeExpertNum=384), "ascend910b")  # the documents' top
    hierarchy = dict(attrs, commAlg="hierarchy")
    import numpy as np
    with pytest.raises(OpError) as err:
        dispatch.validate(dict(_inputs(), expertScalesOptional=np.zeros((2, 1), np.float32)), hierarchy, "ascend910b")
    assert "commAlg \"hierarchy\" (the layered template) is not built by opgen" in str(err.value)
    # Ascend 950: 64 ranks, the windows its HCCL context lists (the documents accept up to 1024)
    a5 = dict(attrs, commAlg="", epWorldSize=128, moeExpertNum=128)
    with pytest.raises(OpError) as err:
        dispatch.validate(_inputs(h=1024), a5, "ascend950")
    assert "epWorldSize" in str(err.value) and "at most 64, the windows the HCCL context lists" in str(err.value)
    dispatch.validate(_inputs(h=1024), dict(a5, epWorldSize=64, moeExpertNum=64), "ascend950")


@pytest.mark.parametrize("op", ["moe_distribute_dispatch_v2", "moe_distribute_combine_v2"])
def test_the_host_tiling_marks_the_servers_launches_the_ai_cpu_and_sizes_the_items(op):
    tiling = (GENERATED / op / "op_host" / "op_tiling" / f"{op}_tiling.cpp").read_text(encoding="utf-8")
    a2 = tiling[tiling.index("case check::Soc::kAscend910b:", tiling.index("FillHcclTiling(")):]
    a2 = a2[:a2.index("break;")]
    assert "tiling->serverRanks = 8U;" in a2 and '"BatchWrite=level1:fullmesh"' in a2
    assert tiling.count("tiling->serverRanks =") == 1  # A3 and 950 keep 0: MTE reaches every rank
    assert "context->SetAicpuBlockDim(mc2tiling::AICPU_NUM_BLOCKS_A2)" in tiling
    assert ("units += static_cast<size_t>(tilingData->moeExpertNum);\n"
            "        units += static_cast<size_t>(tilingData->epWorldSize);") in tiling
    assert "userWorkspace += 2UL * 32UL * units;" in tiling
    # the class every entry runs: the op's body header and the plain C++ headers of common/op_kernel it includes
    body = "".join(p.read_text(encoding="utf-8") for p in sorted((GENERATED / op / "op_kernel").glob("*.h")))
    common = GENERATED / "common" / "op_kernel"
    todo, seen, kernel = re.findall(r'#include "\.\./\.\./common/op_kernel/([\w.]+)"', body), set(), body
    while todo:  # the shared headers include one another by plain name (moe_dispatch_kernel.h: opgen_batch_write.h)
        name = todo.pop()
        if name in seen or not (common / name).is_file():
            continue
        seen.add(name)
        text = (common / name).read_text(encoding="utf-8")
        kernel += text
        todo += re.findall(r'#include "([\w.]+)"', text)
    assert "hccl.template BatchWrite<true>(itemsAddr_, count_)" in kernel and "hccl_.Finalize();" in kernel


def test_every_suite_of_a_family_with_batch_write_runs_a_world_across_a2_servers_on_the_twin():
    import importlib
    import sys
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    for op in ("moe_distribute_dispatch_v2", "moe_distribute_combine_v2"):
        cases = importlib.import_module(f"{op}.tests.cases")
        by_id = {c["id"]: c for c in cases.POSITIVE}
        across = [i for i in cases.TWIN_SUBSET if by_id[i]["product"] == "ascend910b" and by_id[i]["world"] > 8]
        assert across and by_id[across[0]]["run"] is None, op


# ---- the twin: the generated kernels across two A2 servers, and what a wrong transport does there ------------

CASE = "ascend910b-q0-bs4-h32-k1-w16-moeExpertNum-16"


def _suite(op):
    import importlib
    import sys
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")


DISPATCH = ("moe_distribute_dispatch_v2", "moe_dispatch_kernel.h", CASE)
COMBINE = ("moe_distribute_combine_v2", "moe_combine_kernel.h", "ascend910b-q0-bs2-h32-k1-w16-moeExpertNum-16")
SPECS = {"moe_distribute_dispatch_v2": "dispatch_v2.spec", "moe_distribute_combine_v2": "combine_v2.spec"}
MTE_TO_OWN_SERVER = (
    r"MTE (write|read) of \d+ bytes at window of rank (\d+) \(group 0\) \+ \d+: a world of 16 ranks spans more than "
    r"one server \(8 ranks per server\), where Hccl::GetWindowsInAddr\(\2\) returns rank \2's RDMA memory region")


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("kernel, line, wrong, fault", [
    # the ranks of the own server by MTE, through the address GetWindowsInAddr gives in a world past one server (the
    # path before the real kernel's): that is the peer's RDMA memory region, and the twin stops the first copy
    (DISPATCH, "        return ReachedByBatchWrite(serverRanks_, epWorld_, epRank_, rank);\n",
     "        return rank / serverRanks_ != epRank_ / serverRanks_;\n", MTE_TO_OWN_SERVER),
    (COMBINE, "        return ReachedByBatchWrite(serverRanks_, epWorld_, epRank_, rank);\n",
     "        return rank / serverRanks_ != epRank_ / serverRanks_;\n", MTE_TO_OWN_SERVER),
    # every row and flag by MTE, as if one server held the world: the twin stops the first copy to another rank
    (DISPATCH, "        return ReachedByBatchWrite(serverRanks_, epWorld_, epRank_, rank);\n",
     "        return false;\n",
     r"MTE (write|read) of \d+ bytes at window of rank \d+ \(group 0\) \+ \d+: (the window of a rank on server \d, this "
     r"rank is on server \d \(8 ranks per server\); MTE copies reach only the own server's windows|a world of 16 "
     r"ranks spans more than one server)"),
    # the AI CPU server is never told the kernel is done (its one task: rows and entries, each item ending with a flag)
    (DISPATCH, "        hccl_.Finalize(); // no more BatchWrite tasks: the AICPU server may exit\n", "",
     r"the kernel returned without Hccl::Finalize after Hccl::BatchWrite \(handle 0\)"),
    (COMBINE, "        hccl_.Finalize(); // no more BatchWrite tasks: the AICPU server may exit\n", "",
     r"the kernel returned without Hccl::Finalize after Hccl::BatchWrite \(handle 0\)"),
])
def test_a_wrong_transport_across_a2_servers_faults_on_the_twin(kernel, line, wrong, fault, monkeypatch, tmp_path):
    from opgen import sim
    from opgen.harness import testkit

    from .test_sim_mutations import _build_mutated, _require_twin

    op, header, case_id = kernel
    ref, cases = _suite(op)
    _require_twin()
    case = {c["id"]: c for c in cases.POSITIVE}[case_id]
    world = testkit.build_world(ref, case)
    results = testkit.run(ref, case, world)
    good = lambda product: sim.build_for(GENERATED / op, ref, product)  # noqa: E731
    testkit.twin(ref, cases, case, world, results, good, tmp_path / "good")
    mutated = _build_mutated(monkeypatch, tmp_path / "out", f"cpp/common/op_kernel/{header}", line, wrong,
                             spec=SPECS[op], op=op)
    bad = lambda product: sim.build_for(mutated, ref, product)  # noqa: E731
    with pytest.raises(sim.TwinFault) as err:
        testkit.twin(ref, cases, case, world, results, bad, tmp_path / "bad")
    assert re.search(fault, str(err.value)), str(err.value)[:2000]


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("line, wrong", [
    # the block's item no longer ends with a flag: the receiver cannot know its rows landed
    ("    const int32_t tail = (staged && last) ? FLAG_SET : 0;", "    const int32_t tail = 0;"),
    # the status entry's item no longer ends with a flag: its rows count may not have landed with its first word
    ("            const bool flag = w == 0U || w == WS_SLOT_INTS - 1U;", "            const bool flag = w == 0U;"),
])
def test_the_a2_dispatch_trusts_only_a_flag_that_ends_its_batch_write_item(line, wrong, monkeypatch, tmp_path):
    """One BatchWrite task with no Wait, as the real A2 fullmesh dispatch sends: the items land in no order, the bytes
    of one item in ascending order, so the receiver waits for the flag that ends each item (an entry's last word, a
    block's last message's tail). A sender that leaves either unset is waited for until HCCL_EXEC_TIMEOUT (here
    1 s): the receiver reports another rank (of either server: past one server every other rank sends by
    BatchWrite) as the one that owes the flag."""
    text = _timed_out(DISPATCH, line, wrong, monkeypatch, tmp_path)
    report = re.search(POLL_REPORT + r"rank (\d+)", text)
    assert report, text[:2000]
    # past one server every other rank sends by BatchWrite, the own server's too: any other rank may owe the flag
    assert int(report.group(1)) != int(report.group(2)), text[:2000]


@pytest.mark.slow
@pytest.mark.cpu_twin
def test_the_a2_combine_trusts_only_the_flag_that_ends_each_region_item(monkeypatch, tmp_path):
    """CombineV2 past one server: one BatchWrite task with no Wait, one item per owner (this rank's rows in its
    region of the owner, then the region's header ending with the flag), as the real A2 fullmesh combine sends. A
    sender whose staged headers carry no flag (the item ends with a 0) is waited for until HCCL_EXEC_TIMEOUT (here
    1 s): the owner reports the rank that owes the flag, another rank than its own."""
    text = _timed_out(COMBINE, "        header.SetValue(a2HeaderBytes_ / 4U - 1U, FLAG_SET);\n",
                      "        header.SetValue(a2HeaderBytes_ / 4U - 1U, ByBatchWrite(owner) ? 0 : FLAG_SET);\n",
                      monkeypatch, tmp_path)
    report = re.search(POLL_REPORT + r"rank (\d+)", text)
    assert report, text[:2000]
    assert int(report.group(1)) != int(report.group(2)), text[:2000]


POLL_REPORT = (r"rank (\d+) core \d+: AscendC::Trap: the kernel aborted itself after printing: opgen: rank \1 gave up "
               r"after 1000000 us \(HCCL_EXEC_TIMEOUT\) waiting for flag \d+ of its window, set by ")


def _timed_out(kernel, line, wrong, monkeypatch, tmp_path) -> str:
    """The fault of `kernel`'s A2 two-server case run with `line` of its family header mutated to `wrong`, with
    HCCL_EXEC_TIMEOUT 1 s."""
    from opgen import sim
    from opgen.harness import testkit

    from .test_sim_mutations import _build_mutated, _require_twin

    op, header, case_id = kernel
    ref, cases = _suite(op)
    _require_twin()
    case = {c["id"]: c for c in cases.POSITIVE}[case_id]
    world = testkit.build_world(ref, case)
    mutated = _build_mutated(monkeypatch, tmp_path / "out", f"cpp/common/op_kernel/{header}", line, wrong,
                             spec=SPECS[op], op=op)
    monkeypatch.setenv("HCCL_EXEC_TIMEOUT", "1")
    with pytest.raises(sim.TwinFault) as err:
        sim.run(sim.build_for(mutated, ref, case["product"]), ref, case, world, tmp_path / "bad", timeout=60)
    return str(err.value)
