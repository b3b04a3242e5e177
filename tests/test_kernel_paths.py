"""Everything accepted runs: the kernel-path table (opgen/model/kernel_paths.py) over the accepted matrix.

Each cell is a product x commAlg value x quant mode x world-size class of an op (the classes split where the
product's transport changes: past one Atlas A2 server, past the 64 windows Ascend 950's HCCL context lists); on
Atlas A2 commAlg "" comes again with HCCL_INTRA_PCIE_ENABLE=1 and HCCL_INTRA_ROCE_ENABLE=0, which make the real op
run its layered template past one server (ProductFacts.layered_env). The
table says which path the generated kernel runs there, or why it has none (the real op's path opgen does not
build). Per cell, the case search of the generated suites (opgen/testgen) looks for an accepted call:

- a cell without a path must accept none, and a call in the cell that passes every earlier check is rejected by a
  check naming the parameter that decides the cell (commAlg, or the world size), with a message saying what it
  asks for: no accepted configuration runs a path built for another;
- a cell with a path must accept one (a world of it runs on the CPU twin in the slow tier), unless NOT_ACCEPTED
  says why the spec accepts none there.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from opgen.core.families import FAMILIES
from opgen.lang.expr import Binary, InRange, Int, Name
from opgen.model.kernel_paths import (MTE_BATCH_WRITE, MTE_CONTEXT, MTE_HCCL, cells, world_classes)
from opgen.core.products import PRODUCTS
from opgen.testgen.solve import Solver
from opgen.testgen.space import Space, default_case
from opgen.testgen.suite import _positive

from .conftest import ROOT, load_ok

GENERATED = ROOT / "generated"
SPECS = sorted((ROOT / "specs").glob("*.spec"))

# Cells with a path where the spec accepts no call: (op, product, commAlg, quant mode) -> why.
NOT_ACCEPTED = {
    ("MoeDistributeCombineV2", "ascend910b", "", 2): "commQuantMode 2 needs commAlg \"hierarchy\" on Atlas A2 "
                                                      "(ascend910b.commQuantMode), which the op rejects",
    ("MoeDistributeCombineV2", "ascend910b", "fullmesh", 2): "as for \"\"",
}

# Cells without a path that the op's own rules reject before its kernel-path check: (op, product, commAlg, lowest
# world size of the class) -> the rule.
EARLIER_RULES = {
    ("MoeDistributeDispatchV2", "ascend910b", "hierarchy", 2): "ascend910b.epWorldSize.2: one of 16, 32, 64",
    ("MoeDistributeCombineV2", "ascend910b", "hierarchy", 2): "ascend910b.epWorldSize.2: one of 16, 32, 64",
}


def _load(path):
    op = load_ok(path)
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return op, importlib.import_module(f"{op.snake_name}.reference")


OPS = {p.stem: _load(p) for p in SPECS}
CELLS = [(name, c) for name, (op, _) in OPS.items() for c in cells(op)]
_SPACES: dict = {}


def _space(name: str, soc: str) -> tuple[Space, Solver]:
    if (name, soc) not in _SPACES:
        op, ref = OPS[name]
        space = Space(op, soc, ref)
        _SPACES[(name, soc)] = (space, Solver(space))
    return _SPACES[(name, soc)]


def _pins(op, cell) -> tuple[dict, tuple]:
    pins = {}
    if cell.comm_alg is not None:
        pins[("attr", op.named(FAMILIES[op.semantics].comm_path.attr))] = cell.comm_alg
    if cell.quant_mode is not None:
        pins[("attr", op.quant_by)] = cell.quant_mode
    for name, value in cell.env:
        pins[("env", name)] = value
    w = Name(cell.world_attr)
    goal = (InRange(w, Int(cell.world.lo), Int(cell.world.hi), True, True) if cell.world.hi is not None
            else Binary(">=", w, Int(cell.world.lo)))
    return pins, (goal,)


def _accepted(name: str, cell):
    """An accepted call of the cell the case search finds (None: none)."""
    op, _ = OPS[name]
    space, solver = _space(name, cell.soc)
    pins, goals = _pins(op, cell)
    return solver.solve(default_case(space), pins, goals=goals)


def _cell_id(p) -> str:
    name, c = p
    q = "" if c.quant_mode is None else f"-q{c.quant_mode}"
    alg = ("no_alg" if c.comm_alg is None else c.comm_alg or "empty") + "".join(f"-{k}={v}" for k, v in c.env)
    return f"{name}-{c.soc}-{alg}{q}-w{c.world.lo}-{c.world.hi or 'up'}"


def test_the_table_splits_the_worlds_where_the_transport_changes():
    a2, a3, a5 = PRODUCTS["ascend910b"], PRODUCTS["ascend910_93"], PRODUCTS["ascend950"]
    assert [(w.lo, w.hi, w.name) for w in world_classes(a2, True, 2, None)] == [
        (2, 8, "one server"), (9, None, "across servers")]
    assert [(w.lo, w.hi) for w in world_classes(a3, True, 2, 768)] == [(2, 768)]
    assert [(w.lo, w.hi) for w in world_classes(a5, True, 2, 1024)] == [(2, 64), (65, 1024)]
    assert [(w.lo, w.hi) for w in world_classes(a5, True, 2, 8)] == [(2, 8)]  # the Setup / Teardown domain
    table = {(n, c.soc, c.comm_alg, c.world.lo): c for n, c in CELLS if c.quant_mode in (0, None)}
    # the paths the issue names: A3 and A2 hierarchy, Ascend 950 past 64 ranks have none; A2 past one server runs
    # BatchWrite between the servers, labelled where the real kernel differs
    for spec in ("dispatch_v2", "combine_v2"):
        assert table[(spec, "ascend910_93", "hierarchy", 2)].path is None
        assert table[(spec, "ascend910b", "hierarchy", 9)].path is None
        assert table[(spec, "ascend950", "", 65)].path is None and "CCU" in table[(spec, "ascend950", "", 65)].missing
        assert table[(spec, "ascend910_93", "fullmesh_v2", 2)].path.transport == MTE_HCCL
        assert table[(spec, "ascend950", "", 2)].path.transport == MTE_CONTEXT
        across = table[(spec, "ascend910b", "fullmesh", 9)].path
        assert across.transport == MTE_BATCH_WRITE and "BatchWrite" in across.differs
        # both send as the real kernel does (every other rank, one task, items ending with their flags, no Wait); only
        # the items' granularity differs
        assert across.differs.startswith("the real A2 fullmesh kernel packs one BatchWrite item per rank; the "
                                         "generated kernel sends one per (local expert, rank) block"), across.differs
        assert table[(spec, "ascend910b", "fullmesh", 2)].path.differs == ""
        # the env variables that select the real A2 op's layered template for "": a cell of its own, without a path
        # past one server, and the fullmesh one within it (the real tiling reads them past 8 ranks only)
        by_env = {c.world.lo: c for n, c in CELLS if n == spec and c.soc == "ascend910b" and c.env
                  and c.quant_mode == 0}
        assert sorted(by_env) == [2, 9] and by_env[2].path.transport == MTE_HCCL
        assert by_env[9].env == (("HCCL_INTRA_PCIE_ENABLE", "1"), ("HCCL_INTRA_ROCE_ENABLE", "0"))
        assert by_env[9].path is None and by_env[9].algorithm == "hierarchy"
        assert by_env[9].missing == ("the value with HCCL_INTRA_PCIE_ENABLE=1 and HCCL_INTRA_ROCE_ENABLE=0 selects "
                                     "the real op's hierarchy path; the generated kernel implements fullmesh only")
    # ops whose spec does not declare the variables have no such cell (the real op's tiling does not read them)
    assert not [c for n, c in CELLS if c.env and n not in ("dispatch_v2", "combine_v2")]
    setup = table[("dispatch_setup", "ascend950", "", 2)].path
    assert setup.transport == MTE_CONTEXT and "URMA" in setup.differs


@pytest.mark.parametrize("cell", CELLS, ids=[_cell_id(p) for p in CELLS])
def test_every_accepted_cell_has_a_kernel_path(cell):
    name, c = cell
    op, _ = OPS[name]
    found = _accepted(name, c)
    if c.path is not None:
        why = NOT_ACCEPTED.get((op.name, c.soc, c.comm_alg, c.quant_mode))
        assert (found is None) == (why is not None), (
            f"{op.name} on {c.soc}: the cell has a path but no accepted call was found" if why is None else
            f"{op.name} on {c.soc}: listed as accepting no call ({why}), but this one is accepted: {found.values}")
        return
    assert found is None, (f"{op.name} on {c.soc} accepts a call without a kernel path ({c.missing}): "
                           f"{found.values}")
    # the call of the cell that passes every earlier check is rejected by the kernel-path check: the one on the
    # parameter deciding the cell whose message names the value or the limit it is about and says opgen does not
    # build it
    space, _ = _space(name, c.soc)
    comm = FAMILIES[op.semantics].comm_path
    param = op.named(comm.attr) if c.algorithm != comm.algorithm else c.world_attr
    wanted = c.env_text if c.env else f'"{c.comm_alg}"' if param != c.world_attr else f"at most {c.world.lo - 1}"
    path_checks = [(i, k) for i, k in enumerate(space.view.checks)
                   if k.param == param and wanted in k.message and "not built by opgen" in k.message]
    assert len(path_checks) == 1, f"{op.name} on {c.soc}: the checks rejecting {wanted} on {param}: {path_checks}"
    i, check = path_checks[0]
    # opgen's own rule, not the documents': a `limit` (or the implicit transport check), which `opgen diff` keeps
    # out of the release change list
    assert check.limit, f"{op.name} on {c.soc}: {check.id} rejects what opgen does not build but is no `limit`"
    pins, goals = _pins(op, c)
    near = Solver(space, steps=12, pair_budget=120, upto=i).solve(default_case(space), pins, goals=goals)
    earlier = EARLIER_RULES.get((op.name, c.soc, c.comm_alg, c.world.lo))
    if earlier is not None:
        assert near is None, f"listed as rejected by the op's own rules first ({earlier}), but {near.values} is not"
        return
    assert near is not None, f"{op.name} on {c.soc}: no call of the cell passes the checks before {check.id}"
    failure = space.first_failure(near)
    assert failure is not None and failure[1] == check.id, failure
    assert failure[2].param == param, str(failure[2])


def test_the_docs_say_what_is_not_built():
    doc = (GENERATED / "moe_distribute_dispatch_v2" / "docs" / "aclnnMoeDistributeDispatchV2.md").read_text("utf-8")
    assert ("- 生成的kernel的通信路径（commAlg = \"hierarchy\"，epWorldSize ∈ [2, 768]）：未生成，tiling报错："
            "该取值选择实际算子的分层（hierarchy）模板，opgen未生成该路径。") in doc
    assert ("- 生成的kernel的通信路径（commAlg = \"\"，epWorldSize ∈ [65, 1024]）：未生成，tiling报错：HCCL上下文最多列出64个"
            "卡的窗口（实际算子的MTE路径同样），超过64卡需走实际算子的CCU路径，opgen未生成该路径。") in doc
    assert ("- 生成的kernel的通信路径（commAlg = \"fullmesh\"，epWorldSize ≥ 9）：跨server时经HCCL BatchWrite（AI CPU，RDMA）"
            "发送至其他所有卡（含本server的卡）：一次BatchWrite，条目末尾为标志位，不等待；与实际算子不同：") in doc
    for op_dir, entry in (("moe_distribute_dispatch_v2", "aclnnMoeDistributeDispatchV2"),
                          ("moe_distribute_combine_v2", "aclnnMoeDistributeCombineV2")):
        doc = (GENERATED / op_dir / "docs" / f"{entry}.md").read_text("utf-8")
        assert ("- 生成的kernel的通信路径（commAlg = \"\"，HCCL_INTRA_PCIE_ENABLE=1，HCCL_INTRA_ROCE_ENABLE=0，"
                "epWorldSize ≥ 9）：未生成，tiling报错：该取值在HCCL_INTRA_PCIE_ENABLE=1且HCCL_INTRA_ROCE_ENABLE=0时选择"
                "实际算子的分层（hierarchy）模板，opgen未生成该路径。") in doc
        assert ("- 生成的kernel的通信路径（commAlg = \"\"，HCCL_INTRA_PCIE_ENABLE=1，HCCL_INTRA_ROCE_ENABLE=0，"
                "epWorldSize ∈ [2, 8]）：MTE直接写入各卡的HCCL窗口（Hccl::GetWindowsInAddr）。") in doc
        assert "| commAlg | - | $\\lnot \\mathrm{envLayered}$ | ACLNN_ERR_INNER_TILING_ERROR |" in doc


# ---- one world per accepted cell on the CPU twin ----------------------------------------------------------------

RUN_CELLS = [p for p in CELLS if p[1].path is not None
             and (OPS[p[0]][0].name, p[1].soc, p[1].comm_alg, p[1].quant_mode) not in NOT_ACCEPTED]


@pytest.mark.slow
@pytest.mark.cpu_twin
@pytest.mark.parametrize("cell", RUN_CELLS, ids=[_cell_id(p) for p in RUN_CELLS])
def test_a_world_of_every_accepted_cell_runs_on_the_twin(cell, tmp_path):
    """The cell's accepted call, as a world of the generated suite: the generated tiling and kernel on the CPU twin
    give every rank's outputs of the reference (the prelude op first for a Teardown)."""
    from opgen import sim
    from opgen.harness import testkit

    name, c = cell
    op, ref = OPS[name]
    space, _ = _space(name, c.soc)
    cases = importlib.import_module(f"{op.snake_name}.tests.cases")
    found = _accepted(name, c)
    assert found is not None, f"{op.name} on {c.soc}: no accepted call of the cell"
    searched = _positive(space, found, found, set(), set())
    assert searched is not None, f"no BOOL data every rank accepts for {found.values}"
    # the suite's runnable worlds of the cell first (a Teardown's must be a Setup's outputs), then the search's
    worlds = [w for w in cases.POSITIVE if w["run"] is None and _in_cell(op, c, w)] + [searched]
    op_dir = GENERATED / op.snake_name
    try:
        found_prelude = testkit.twin_prelude(op_dir, ref.INFO.semantics)
        prelude = None
        if found_prelude is not None:
            pdir = op_dir.parent / found_prelude[1].__name__.split(".")[0]
            prelude = found_prelude + (lambda product: sim.build_for(pdir, found_prelude[0], product),)
        exe = sim.build_for(op_dir, ref, c.soc)
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    skipped = []
    for case in worlds:
        world = testkit.build_world(ref, case)
        results = testkit.run(ref, case, world)
        why_not = testkit.twin(ref, cases, case, world, results, exe, tmp_path / case["id"], prelude)
        if why_not is None:
            return
        skipped.append(f"{case['id']}: {why_not}")
    pytest.fail("no world of the cell runs on the twin:\n" + "\n".join(skipped))


def _in_cell(op, c, case: dict) -> bool:
    """Whether a world of the generated suite lies in the cell (its commAlg, quant mode and world size)."""
    attrs = dict(OPS_DEFAULTS[op.name], **case["attrs"])
    comm = FAMILIES[op.semantics].comm_path
    if c.comm_alg is not None and attrs.get(op.named(comm.attr)) != c.comm_alg:
        return False
    if c.quant_mode is not None and attrs.get(op.quant_by) != c.quant_mode:
        return False
    if any((case.get("env") or {}).get(k, OPS_ENV[op.name][k]) != v for k, v in c.env):
        return False
    return case["product"] == c.soc and c.world.contains(attrs[c.world_attr])


OPS_DEFAULTS = {op.name: {a.name: a.default for a in op.attrs if a.optional} for op, _ in OPS.values()}
OPS_ENV = {op.name: {e.name: e.default for e in op.envs} for op, _ in OPS.values()}
