"""The Python side of the CPU twin (opgen.sim): job files, result parsing, output comparison, the build's guards.

Nothing here needs the C++ runner: a shell script stands in for it where a process has to run.
"""
from __future__ import annotations

import importlib
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from opgen import cli
from opgen import sim
from opgen.core.dtypes import DTYPES
from opgen.harness import testkit
from opgen.runtime.scope import data
from opgen.sim import job

sim_build = importlib.import_module("opgen.sim.build")  # the package re-exports build(), which hides the module

MIB = 1 << 20


@pytest.fixture(scope="module")
def dispatch(dispatch_ref):
    """(reference, cases) of DispatchV2, built fresh from the spec."""
    return dispatch_ref, importlib.import_module("moe_distribute_dispatch_v2.tests.cases")


def _case(cases, product: str, **attrs):
    return next(c for c in cases.POSITIVE if c["run"] is None and c["product"] == product and "ranks" not in c
                and all(c["attrs"].get(k, 0) == v for k, v in attrs.items()))


def _blocks(text: str) -> tuple[list[list[str]], dict[int, list[list[str]]]]:
    """(header lines, {rank: lines}) of a job.txt, split into fields."""
    header, ranks, rank = [], {}, None
    for line in text.splitlines():
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        if f[0] == "rank":
            rank = int(f[1])
            ranks[rank] = []
        elif f[0] == "end":
            rank = None
        elif rank is None:
            header.append(f)
        else:
            ranks[rank].append(f)
    return header, ranks


# ---- the job file --------------------------------------------------------------------------------------------

def test_an_a2_job_groups_its_ranks_into_servers_of_8(seed_era_dispatch, tmp_path):
    """Atlas A2 servers hold 8 NPUs (the product table): the twin faults an MTE copy into another server's window."""
    ref, cases = seed_era_dispatch
    case = _case(cases, "ascend910b")
    job.write_job(ref, case, testkit.build_world(ref, case), tmp_path)
    header, _ = _blocks((tmp_path / "job.txt").read_text(encoding="utf-8"))
    assert ["server", "8"] in header and ["soc", "Ascend910B"] in header
    assert ["exp_window", "0"] in header  # an A2 context lists no windowsExp (A3's does: ProductFacts.exp_window)


def test_tp_world_job_has_groups_attrs_inputs_and_outputs_per_rank(seed_era_dispatch, tmp_path):
    """A TP world (the seed era's A3; the current documents removed TP): groups, attrs and tensors per rank."""
    ref, cases = seed_era_dispatch
    case = _case(cases, "ascend910_93", tpWorldSize=2)
    assert case["world"] == 4 and case["attrs"]["epWorldSize"] == 2
    world = testkit.build_world(ref, case)
    written = job.write_job(ref, case, world, tmp_path, aiv=8, timeout=7)
    header, ranks = _blocks((tmp_path / "job.txt").read_text(encoding="utf-8"))
    assert header == [["world", "4"], ["soc", "Ascend910_93"], ["npu_arch", "2201"], ["node", "MoeDistributeDispatchV2"], ["aiv", "8"],
                      ["aic", "4"], ["ub", "196608"], ["platform_ub", "196608"], ["window", str(200 * MIB)], ["exp_window", str(MIB)],
                      ["timeout", "7"], ["server", "0"]]  # A3: MTE reaches every rank (A2: 8 ranks per server)
    assert ref.COMM == ("ep", "tp")
    for r, lines in sorted(ranks.items()):
        ep, tp = divmod(r, 2)
        # EP group: the ranks of the same TP slot; TP group: the two TP neighbours
        assert [f for f in lines if f[0] == "group"] == [
            ["group", "0", str(ep), str(tp), str(tp + 2)],
            ["group", "1", str(tp), str(2 * ep), str(2 * ep + 1)]]
        attrs = {f[2]: (int(f[1]), f[3], f[4] if len(f) > 4 else None) for f in lines if f[0] == "attr"}
        assert list(attrs) == list(ref.ATTRS)  # every attribute, in IR order
        assert [a[0] for a in attrs.values()] == list(range(len(ref.ATTRS)))
        assert attrs["epRankId"][1:] == ("i", str(ep)) and attrs["tpRankId"][1:] == ("i", str(tp))
        assert attrs["groupEp"][1:] == ("s", b"ep".hex()) and attrs["groupTp"][1:] == ("s", "_")
        assert attrs["tpWorldSize"][1:] == ("i", "2") and attrs["expertTokenNumsType"][1:] == ("i", "1")
        inputs = {f[2]: f for f in lines if f[0] == "input"}
        assert list(inputs) == list(ref.INPUTS)
        assert inputs["scalesOptional"] == ["input", "2", "scalesOptional", "-"]
        x = inputs["x"]
        assert x[:6] == ["input", "0", "x", "1", "2", "4,1024"]  # DT_FLOAT16, FORMAT_ND
        assert (tmp_path / x[6]).read_bytes() == data(world.inputs[r]["x"]).tobytes()
        ids = inputs["expertIds"]
        assert ids[3:6] == ["3", "2", "4,2"]
        assert (tmp_path / ids[6]).read_bytes() == np.asarray(world.inputs[r]["expertIds"]).tobytes()
        call_attrs, out_dtypes = testkit.call_args(ref, case, r)
        inferred = ref.infer(world.inputs[r], call_attrs, case["product"], out_dtypes)
        outputs = [f for f in lines if f[0] == "output"]
        assert [f[2] for f in outputs] == list(ref.OUTPUTS)
        for f in outputs:
            shape, dtype = inferred[f[2]]
            assert f[3:6] == [str(DTYPES[dtype].ge_value), "2", ",".join(map(str, shape))]
        assert written.outputs[r]["expandXOut"][:2] == (tuple(inferred["expandXOut"][0]), "FLOAT16")


def test_attribute_and_tensor_encodings():
    assert job.attr_value("int64", -3) == "i -3"
    assert job.attr_value("bool", True) == "b 1"
    assert job.attr_value("float", 0.1) == f"f {(0.1).hex()}"
    assert job.attr_value("string", "") == "s _" and job.attr_value("string", "ä") == "s c3a4"
    assert job.attr_value("list<int64>", (1, 2)) == "I 1,2" and job.attr_value("list<int64>", ()) == "I _"
    assert job.attr_value("int64", None) == "-"
    # FP4: two codes per byte, element 2i in the low nibble; read back unpacked
    import ml_dtypes
    fp4 = np.array([0.5, 6.0, -6.0], dtype=ml_dtypes.float4_e2m1fn)
    assert job.tensor_bytes(fp4, "FLOAT4_E2M1") == bytes([0x71, 0x0F])


def test_outputs_read_back_with_their_shapes_and_storage_dtypes(tmp_path):
    import ml_dtypes
    (tmp_path / "a").write_bytes(bytes([0x71, 0x0F]))
    got = job.read_output(tmp_path / "a", (3,), "FLOAT4_E2M1")
    assert got.dtype == ml_dtypes.float4_e2m1fn and got.astype(np.float32).tolist() == [0.5, 6.0, -6.0]
    (tmp_path / "b").write_bytes(np.arange(6, dtype=np.int32).tobytes())
    assert job.read_output(tmp_path / "b", (2, 3), "INT32").tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(job.TwinError, match="20 bytes"):
        (tmp_path / "c").write_bytes(bytes(20))
        job.read_output(tmp_path / "c", (2, 3), "INT32")


def test_groups_without_tp_are_one_rank_each():
    assert job.groups(("ep", "tp"), 1, 2, {"epWorldSize": 2, "epRankId": 1, "tpWorldSize": 0, "tpRankId": 0}) == [
        (0, 1, [0, 1]), (1, 0, [1])]
    with pytest.raises(ValueError, match="epRankId 0"):
        job.groups(("ep",), 1, 2, {"epWorldSize": 2, "epRankId": 0})


# ---- result.txt and the runner's exit status -----------------------------------------------------------------

def test_result_parsing():
    text = ("tiling 0 ok 1000 8 4096\ntiling 1 fail " + "HCCL_BUFFSIZE too small".encode().hex() + "\n"
            "fault " + "rank 1 core 3: GM read out of bounds".encode().hex() + "\nfault\nstatus fault\n")
    res = job.parse_result(text)
    assert res.status == "fault"
    assert res.tilings[0] == job.Tiling(True, 1000, 8, 4096)
    assert res.tilings[1] == job.Tiling(False, message="HCCL_BUFFSIZE too small")
    assert res.faults == ["rank 1 core 3: GM read out of bounds", ""]


def test_cost_and_input_read_lines_parse_per_core():
    cost = " ".join(str(i) for i in range(len(job.COST_FIELDS)))
    res = job.parse_result(f"cost 1 2 {cost}\ninput_read 1 2 gamma 14336\ninput_read 1 2 expandX 28\nstatus ok\n")
    assert res.costs == {(1, 2): dict(zip(job.COST_FIELDS, range(len(job.COST_FIELDS))))}
    assert res.input_reads == {(1, 2): {"gamma": 14336, "expandX": 28}}


@pytest.mark.parametrize("line", [
    "cost 0 0 1 2 3",                                                   # too few columns
    "cost 0 0 " + " ".join(["1"] * (len(job.COST_FIELDS) + 1)),         # too many
    "cost 0 0 " + " ".join(["1"] * (len(job.COST_FIELDS) - 1)) + " x",  # not a count
    "cost 0 0 " + " ".join(["-1"] * len(job.COST_FIELDS)),              # negative
    "input_read 0 0 gamma",                                             # no bytes
    "input_read 0 0 gamma 12 13",
    "input_read 0 0 gamma 1.5",
])
def test_a_malformed_cost_line_is_a_twin_error(line):
    with pytest.raises(job.TwinError, match="result.txt: an? (cost|input_read) line"):
        job.parse_result(f"{line}\nstatus ok\n")


def test_a_core_reported_twice_is_a_twin_error():
    cost = " ".join(["1"] * len(job.COST_FIELDS))
    with pytest.raises(job.TwinError, match="a second cost line of rank 0 core 1"):
        job.parse_result(f"cost 0 1 {cost}\ncost 0 1 {cost}\n")
    with pytest.raises(job.TwinError, match="a second input_read line of gamma"):
        job.parse_result("input_read 0 1 gamma 4\ninput_read 0 1 gamma 4\n")


def _fake_runner(tmp_path: Path, result: str, status: int) -> Path:
    """A stand-in for the twin executable: writes ``result`` as result.txt into its job dir and exits."""
    exe = tmp_path / "fake_twin"
    (tmp_path / "result.txt.in").write_text(result, encoding="utf-8")
    exe.write_text(f'#!/bin/sh\ncp "{tmp_path / "result.txt.in"}" "$1/result.txt"\nexit {status}\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


@pytest.fixture
def small_world(dispatch, tmp_path):
    ref, cases = dispatch
    case = _case(cases, "ascend910_93", quantMode=0)
    world = testkit.build_world(ref, case)
    return ref, cases, case, world, job.write_job(ref, case, world, tmp_path / "job")


def test_faults_and_tiling_rejections_raise_with_their_messages(small_world, tmp_path):
    *_, written = small_world
    msg = "rank 0 core 1: WaitFlag timed out".encode().hex()
    with pytest.raises(sim.TwinFault, match="WaitFlag timed out"):
        job.run_job(_fake_runner(tmp_path, f"tiling 0 ok 1 1 0\nfault {msg}\nstatus fault\n", 1), written)
    msg = "epWorldSize is invalid".encode().hex()
    with pytest.raises(sim.TwinTilingRejected, match="rank 1: epWorldSize is invalid"):
        job.run_job(_fake_runner(tmp_path, f"tiling 0 ok 1 1 0\ntiling 1 fail {msg}\nstatus tiling\n", 2), written)
    with pytest.raises(sim.TwinError, match="malformed"):
        job.run_job(_fake_runner(tmp_path, "", 3), written)
    with pytest.raises(sim.TwinFault, match="status 139"):
        job.run_job(_fake_runner(tmp_path, "", 139), written)


def test_a_world_the_host_cannot_map_is_a_host_limit_and_the_suite_says_so(small_world, tmp_path):
    """The runner's exit status 4 (a calloc that fails: a window of cclBufferSize 2^63 - 1) is no verdict on the
    op: TwinHostLimit, which the generated suites' twin test reports as the reason it skips that world."""
    ref, cases, case, world, written = small_world
    exe = _fake_runner(tmp_path, "", 4)
    with pytest.raises(job.TwinHostLimit) as err:
        job.run_job(exe, written)
    assert not isinstance(err.value, (sim.TwinFault, sim.TwinTilingRejected))
    why = testkit.twin(ref, cases, case, world, testkit.run(ref, case, world), exe, tmp_path / "twin")
    assert why is not None and why.startswith("the CPU twin cannot host this world on this machine: "), why


def test_a_run_reads_the_outputs_and_finds_a_one_byte_difference(small_world, tmp_path):
    ref, cases, case, world, written = small_world
    expected = testkit.run(ref, case, world)
    for r, outs in enumerate(written.outputs):
        for name, (_, _, file) in outs.items():
            (written.dir / file).write_bytes(data(expected[r][name]).tobytes())
    exe = _fake_runner(tmp_path, "tiling 0 ok 1 2 0\ntiling 1 ok 1 2 0\nstatus ok\n", 0)
    got = job.run_job(exe, written)
    assert _problems(ref, cases, case, world, got, expected) == []
    # one byte of a written expandXOut row
    raw = bytearray((written.dir / written.outputs[1]["expandXOut"][2]).read_bytes())
    raw[3] ^= 0x40
    (written.dir / written.outputs[1]["expandXOut"][2]).write_bytes(bytes(raw))
    problems = _problems(ref, cases, case, world, job.run_job(exe, written), expected)
    assert len(problems) == 1 and problems[0].startswith("rank 1 expandXOut (FLOAT16): 1 of "), problems
    assert "first (0, 1): " in problems[0], problems


def _problems(ref, cases, case, world, got, expected) -> list[str]:
    out = []
    for r in range(case["world"]):
        out += testkit.output_problems(ref, cases, case, world, r, got[r], expected[r])
    return out


# ---- the comparison -----------------------------------------------------------------------------------------------

def _poisoned(expected: dict, name: str, region) -> dict:
    """A copy of one rank's outputs with ``region`` of ``name`` filled with the runner's 0xA5 poison."""
    got = {k: np.array(data(v), copy=True) for k, v in expected.items()}
    got[name].view(np.uint8)[region] = 0xA5  # rows of a 2-D output: the byte view keeps the row index
    return got


def test_unspecified_outputs_and_unwritten_rows_are_not_compared(dispatch):
    ref, cases = dispatch
    case = _case(cases, "ascend910b", quantMode=0)
    assert "tpRecvCountsOut" in cases.UNSPECIFIED["ascend910b"]
    world = testkit.build_world(ref, case)
    expected = testkit.run(ref, case, world)
    r = 0
    W, L = case["attrs"]["epWorldSize"], len(expected[r]["expertTokenNumsOut"])
    rows = int(expected[r]["epRecvCountsOut"][W * L - 1])  # cumulative counts (A2 pads the output past W * L)
    assert rows < expected[r]["expandXOut"].shape[0]
    got = _poisoned(expected[r], "expandXOut", np.s_[rows:])
    got["tpRecvCountsOut"][:] = -1
    n_idx = np.asarray(world.inputs[r]["expertIds"]).size  # A2: the sender's expandIdx, then unwritten
    got["assistInfoForCombineOut"][n_idx:] = 0x5A5A5A5A
    got["dynamicScalesOut"][:] = -1.0  # quantMode 0 without scales: the op does not write them
    got["epRecvCountsOut"][W * L:] = -1  # past the cumulative counts
    assert testkit.output_problems(ref, cases, case, world, r, got, expected[r]) == []
    got["expandXOut"] = _poisoned(expected[r], "expandXOut", np.s_[rows - 1:])["expandXOut"]
    found = testkit.output_problems(ref, cases, case, world, r, got, expected[r])
    assert len(found) == 1 and f"rank 0 expandXOut (FLOAT16): {got['expandXOut'].shape[1]} of " in found[0], found
    assert f"first ({rows - 1}, 0): " in found[0] and "(0xa5a5) != " in found[0], found


def test_assist_info_and_counts_are_compared_unlike_the_npu_mode(dispatch):
    ref, cases = dispatch
    case = _case(cases, "ascend910_93", quantMode=0)
    world = testkit.build_world(ref, case)
    expected = testkit.run(ref, case, world)
    got = {k: np.array(v, copy=True) for k, v in expected[0].items()}
    got["assistInfoForCombineOut"][1] += 1
    got["epRecvCountsOut"][0] += 1
    found = testkit.output_problems(ref, cases, case, world, 0, got, expected[0])
    assert [p.split(":")[0] for p in found] == ["rank 0 assistInfoForCombineOut (INT32)",
                                               "rank 0 epRecvCountsOut (INT32)"], found
    skipped = testkit.output_problems(ref, cases, case, world, 0, got, expected[0],
                                      skip=("assistInfoForCombineOut", "epRecvCountsOut"))
    assert skipped == []


def test_tp_rows_are_both_slices(seed_era_dispatch):
    ref, cases = seed_era_dispatch
    case = _case(cases, "ascend910_93", tpWorldSize=2)
    world = testkit.build_world(ref, case)
    expected = testkit.run(ref, case, world)
    r = 1
    tp = expected[r]["tpRecvCountsOut"].astype(np.int64)
    mask = testkit.written(ref, case, world, r, "expandXOut", expected[r])
    assert mask.any(axis=1).sum() == tp.sum()
    assert testkit.written(ref, case, world, r, "assistInfoForCombineOut", expected[r]).sum() == 3 * tp[1]


def test_dynamic_scales_are_compared_where_the_quant_formula_writes_them(dispatch):
    ref, cases = dispatch
    for q, writes in ((0, False), (2, True)):
        case = _case(cases, "ascend910_93", quantMode=q)
        world = testkit.build_world(ref, case)
        expected = testkit.run(ref, case, world)
        W, L = case["attrs"]["epWorldSize"], len(expected[0]["expertTokenNumsOut"])
        rows = int(expected[0]["epRecvCountsOut"][W * L - 1])
        mask = testkit.written(ref, case, world, 0, "dynamicScalesOut", expected[0])
        assert mask.sum() == (rows if writes else 0), q


# ---- the subset the default backend runs ----------------------------------------------------------------------

def test_twin_subset_is_the_cheapest_world_per_product_and_quant_mode(dispatch):
    from opgen.emit.tests import TWIN_MAX_WORLD, _input_elements
    ref, cases = dispatch
    groups: dict = {}
    servers = {"ascend910b": 8}  # and, where MTE copies stop at a server, the cheapest world across servers
    for c in cases.POSITIVE:
        if c["run"] is not None or "ranks" in c:
            continue
        if c["world"] > servers.get(c["product"], c["world"]):
            groups.setdefault((c["product"], "servers"), []).append(c)
        elif c["world"] <= TWIN_MAX_WORLD:
            groups.setdefault((c["product"], c["attrs"].get("quantMode", 0)), []).append(c)
    assert len(cases.TWIN_SUBSET) == len(groups) and len(set(cases.TWIN_SUBSET)) == len(groups)
    by_id = {c["id"]: c for c in cases.POSITIVE}
    for case_id in cases.TWIN_SUBSET:
        c = by_id[case_id]
        across = c["world"] > servers.get(c["product"], c["world"])
        rivals = groups[(c["product"], "servers" if across else c["attrs"].get("quantMode", 0))]
        assert min((r["world"], _input_elements(r), r["id"]) for r in rivals)[2] == case_id


# ---- building --------------------------------------------------------------------------------------------------

def test_build_reports_a_missing_compiler_as_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with pytest.raises(sim.TwinUnavailable, match="no C\\+\\+ compiler"):
        sim.build(tmp_path, "Op", 3510)
    assert issubclass(sim.TwinUnavailable, FileNotFoundError)


def test_compile_commands_define_the_generated_sources(tmp_path):
    op_dir = tmp_path / "moe_x"
    units = sim_build.compile_commands(["g++"], op_dir, "MoeX", 2201)
    assert [src.name for src, _ in units] == ["runner.cpp", "kernel_entry.cpp", "tiling_entry.cpp"]
    kernel, tiling = units[1][1], units[2][1]
    # the kernel is compiled for one arch, as CANN compiles it; host code and the runner have none
    assert "-D__NPU_ARCH__=2201" in kernel and not any("__NPU_ARCH__" in a for a in units[0][1] + tiling)
    assert f'-DOPGEN_SIM_KERNEL_SOURCE="{op_dir}/op_kernel/moe_x.cpp"' in kernel and "-DOPGEN_SIM_KERNEL=moe_x" in kernel
    assert f'-DOPGEN_SIM_TILING_SOURCE="{op_dir}/op_host/op_tiling/moe_x_tiling.cpp"' in tiling
    assert "-DOPGEN_SIM_TILING_FUNC=optiling::MoeXTilingFunc" in tiling
    for _, cmd in units:
        assert cmd[1:7] == list(sim_build.FLAGS) and f"-I{sim_build.INCLUDE}" in cmd


def test_the_kernel_unit_compiles_the_entry_the_product_builds(tmp_path, generated_dir, dispatch_ref):
    """A product whose OpDef config names its own kernel entry runs that entry on the twin: the reference's
    INFO.kernels gives it, and the kernel unit #includes it (A2 and A3 share an arch, not an entry)."""
    op_dir = tmp_path / "moe_x"
    units = sim_build.compile_commands(["g++"], op_dir, "MoeX", 2201, None, "op_kernel/arch22/moe_x_a2.cpp")
    assert f'-DOPGEN_SIM_KERNEL_SOURCE="{op_dir}/op_kernel/arch22/moe_x_a2.cpp"' in units[1][1]
    ref = dispatch_ref
    assert ref.INFO.kernels == {"ascend910b": "op_kernel/arch22/moe_distribute_dispatch_v2_a2.cpp",
                                "ascend910_93": "op_kernel/arch22/moe_distribute_dispatch_v2_a3.cpp",
                                "ascend950": "op_kernel/arch35/moe_distribute_dispatch_v2_apt.cpp"}
    try:
        twins = {p: sim.build_for(generated_dir / "moe_distribute_dispatch_v2", ref, p) for p in ref.PRODUCTS}
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    assert {p: (t.arch, t.kernel) for p, t in twins.items()} == {
        p: (ref.INFO.fact(p).npu_arch, ref.INFO.kernels[p]) for p in ref.PRODUCTS}
    assert all((t.op_dir / t.kernel).is_file() for t in twins.values())


def test_the_kernel_is_compiled_for_one_opdef_column(tmp_path):
    """As CANN's op build, the kernel unit gets DTYPE_<NAME> and ORIG_DTYPE_<NAME> of each tensor of one OpDef
    column (IR names; the DT_ ids of basic_api/kernel_type.h); the runner and the tiling unit get none, so their
    objects are shared between columns."""
    op_dir = tmp_path / "moe_x"
    units = sim_build.compile_commands(["g++"], op_dir, "MoeX", 2201, {"expand_x": "BFLOAT16", "x": "INT8"})
    runner, kernel, tiling = (cmd for _, cmd in units)
    assert [a for a in kernel if "DTYPE" in a] == ["-DDTYPE_EXPAND_X=bfloat16_t", "-DORIG_DTYPE_EXPAND_X=DT_BF16",
                                                     "-DDTYPE_X=int8_t", "-DORIG_DTYPE_X=DT_INT8"]
    assert not any("DTYPE" in a for a in runner + tiling)
    assert units[0][1] == sim_build.compile_commands(["g++"], op_dir, "MoeX", 3510, {"x": "FLOAT16"})[0][1]


def test_a_twin_picks_the_column_of_the_world(tmp_path):
    twin = sim.Twin(tmp_path, "MoeX", 2201, {"x": "x", "expertIds": "expert_ids", "expandXOut": "expand_x"})
    assert twin.column({"x": "BFLOAT16", "expertIds": "INT32"}, {"expandXOut": "INT8"}) == \
        {"x": "BFLOAT16", "expert_ids": "INT32", "expand_x": "INT8"}


def test_the_cache_key_follows_contents_not_location(tmp_path):
    cxx = [sys.executable]  # answers --version like a compiler

    def key(op_dir: Path) -> str:
        commands = [cmd for _, cmd in sim_build.compile_commands(cxx, op_dir, "MoeX", 3510)]
        return sim_build.cache_key(cxx, commands, [*cxx, "-pthread"], op_dir)

    dirs = [tmp_path / where / "moe_x" for where in ("a", "b")]
    for d in dirs:
        (d / "op_kernel").mkdir(parents=True)
        (d / "op_host" / "op_tiling").mkdir(parents=True)
        (d / "op_kernel" / "moe_x.cpp").write_text("// kernel\n")
        (d / "op_host" / "op_tiling" / "moe_x_tiling.cpp").write_text("// tiling\n")
    assert key(dirs[0]) == key(dirs[1])
    (dirs[1] / "op_host" / "op_tiling" / "moe_x_check.h").write_text("// check\n")
    assert key(dirs[0]) != key(dirs[1])
    # the shared header the check core includes, in the shared folder beside the op folder: its contents count
    for d, text in zip(dirs, ("// shared\n", "// shared, changed\n")):
        (d.parent / "common" / "op_host" / "op_tiling").mkdir(parents=True)
        (d.parent / "common" / "op_host" / "op_tiling" / "opgen_check_common.h").write_text(text)
    (dirs[0] / "op_host" / "op_tiling" / "moe_x_check.h").write_text("// check\n")
    assert key(dirs[0]) != key(dirs[1])
    (dirs[1].parent / "common" / "op_host" / "op_tiling" / "opgen_check_common.h").write_text("// shared\n")
    assert key(dirs[0]) == key(dirs[1])


def test_cache_directory_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("OPGEN_SIM_CACHE", str(tmp_path))
    assert sim_build.cache_dir() == tmp_path
    monkeypatch.delenv("OPGEN_SIM_CACHE")
    assert sim_build.cache_dir() == Path.home() / ".cache" / "opgen" / "sim"


def test_opgen_test_takes_a_backend():
    args = cli.make_parser().parse_args(["test", "x.spec", "--backend", "cpu-twin"])
    assert args.backend == "cpu-twin"
    assert cli.make_parser().parse_args(["test", "x.spec"]).backend is None
