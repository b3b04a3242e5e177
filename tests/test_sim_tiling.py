"""The CPU twin's tiling TU runs every generated host tiling function on the host (opgen/sim/tiling_entry.cpp).

For each op under generated/, tiling_entry.cpp (which #includes the op's op_host/op_tiling/<op>_tiling.cpp) is
compiled with the flags the twin uses (g++ -std=c++17 -O1 -Wall -Werror) against the implemented CANN host API of
opgen/sim/include and linked with tests/sim/tiling_driver.cpp, which reads tiling requests from stdin.  The op's own
suite data (generated/<op>/tests/cases.py) then drives it:

* every rank of every positive world tiles: block dim = the vector cores, batch schedule mode, the workspace of the
  generated formula, and every field of <Op>TilingData equal to what the numpy reference says of that rank
  (attributes, bound dims, lets, ge dtypes, presence flags, the platform figures), in graph mode (every output's
  dtype fixed, every attribute given) and in aclnn mode (outputs and omitted attributes left to the spec);
* every negative call fails with its check's message (the check core's text ends in "[<check id>]") on an ERROR
  line; a warning's call tiles and reports it on a WARNING line; a call only its data makes invalid tiles.
"""
from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import re
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from opgen.core.dtypes import DTYPES, FORMAT_VALUES
from opgen.core.layout import SHARED_DIR, shared_host_include
from opgen.runtime import OpError
from opgen.harness import testkit
from opgen.harness import testworld

from opgen.emit.kernel import plan_instances
from opgen.emit.tpl_key import encode, key_params
from opgen.lower.python import py_expr

from .conftest import ROOT, SPECS, load_ok

GENERATED = ROOT / "generated"
SIM = ROOT / "opgen" / "sim"
DRIVER = ROOT / "tests" / "sim" / "tiling_driver.cpp"
GXX = shutil.which("g++")
OPS = sorted(p.name for p in GENERATED.iterdir() if (p / "op_host" / "op_tiling").is_dir() and p.name != SHARED_DIR) \
    if GENERATED.is_dir() else []
FLAGS = ["-std=c++17", "-O1", "-Wall", "-Werror"]

pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

# The platform every request reports (any values do: the tests check the tiling passes them on).
AIV, AIC, UB = 40, 20, 192 * 1024
SOC = {"ascend910b": "Ascend910B", "ascend910_93": "Ascend910_93", "ascend950": "Ascend950"}
MIB = 1 << 20
FORMAT_ND = FORMAT_VALUES["ND"]
DT_UNDEFINED = 28
# The generated tiling functions' constants (op_tiling/<op>_tiling.cpp).
SYSTEM_NEED_WORKSPACE, WORKSPACE_PER_CORE_PAIR, BATCH_MODE = 16 * MIB, 512, 1
CTYPES = {"int64_t": ctypes.c_int64, "float": ctypes.c_float, "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
          "uint64_t": ctypes.c_uint64, "Mc2InitTiling": ctypes.c_uint8 * 64, "Mc2CcTiling": ctypes.c_uint8 * 512}
# What the real MoE tilings put in their HCCL cc tilings, per product (hicann/ops-transformer mc2/
# moe_distribute_{dispatch,combine}_v2 op_tiling: A3 and the 950 MTE path SetHcommCfg, A2 arch22): opType
# (HcclCMDType), algConfig and the comm engine (mc2tiling::AIV_ENGINE = 3 on A3/950, the default 0 on A2).
HCCL_CC = {"ascend910b": (18, "BatchWrite=level1:fullmesh", 0),
           "ascend910_93": (8, "AlltoAll=level0:fullmesh;level1:pairwise", 3),
           "ascend950": (8, "AlltoAll=level0:fullmesh;level1:pairwise", 3)}
KINDS = {"int64": "i", "bool": "b", "float": "f", "string": "s", "list<int64>": "I"}


def poll_timeout_us(env: str | None) -> int:
    """HCCL_EXEC_TIMEOUT as CANN reads it for communication the AI vector cores orchestrate (CANN 8.5 environment
    variable reference): whole seconds; unset, 0, above 1091 or not a number mean 1091 s."""
    seconds = int(env) if env is not None and env.isdigit() else 0
    return (seconds if 0 < seconds <= 1091 else 1091) * 1_000_000


@dataclass
class Twin:
    snake: str
    ref: object        # generated/<op>/reference.py
    cases: object      # generated/<op>/tests/cases.py
    exe: Path
    struct: type       # <Op>TilingData as a ctypes.Structure
    docs: dict         # field -> its comment in op_kernel/<op>_tiling.h (the field rule)
    required: set      # inputs the tiling reads with GetInputShape (instance index)

    def run(self, requests: list[list[str]]) -> list[dict]:
        text = "".join("\n".join(r) + "\nrun\n" for r in requests)
        proc = subprocess.run([str(self.exe)], input=text, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        lines = proc.stdout.splitlines()
        assert len(lines) == len(requests), f"{len(requests)} requests, {len(lines)} results"
        return [_decode(line) for line in lines]


def _decode(line: str) -> dict:
    status, key, block_dim, mode, workspace, data, log = line.split(" ")
    return dict(ok=status == "ok", key=int(key), block_dim=int(block_dim), mode=int(mode),
                workspace=int(workspace), data=b"" if data == "-" else bytes.fromhex(data),
                log=[] if log == "-" else bytes.fromhex(log).decode("utf-8").split("\n"))


def _module(path: Path, name: str):
    """A generated module under a private name: the generated suites import the same packages from elsewhere."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _struct(header: Path) -> tuple[type, dict]:
    text = header.read_text(encoding="utf-8")
    body = re.search(r"struct (\w+TilingData) \{\n(.*?)\n\};", text, re.S)
    assert body, f"{header}: no tiling data struct"
    fields = re.findall(r"^\s+(\w+) (\w+);\s*// (.*)$", body.group(2), re.M)
    struct = type(body.group(1), (ctypes.Structure,), {"_fields_": [(n, CTYPES[t]) for t, n, _ in fields]})
    return struct, {n: doc for _, n, doc in fields}


def _required(tiling_cpp: Path, fields) -> set:
    text = tiling_cpp.read_text(encoding="utf-8")
    index = {name: int(i) for name, i in re.findall(r"constexpr size_t (INPUT_\w+_INDEX) = (\d+);", text)}
    inputs = [name for kind, name, _ in fields if kind == "input"]
    return {inputs[index[c]] for c in re.findall(r"GetInputShape\((INPUT_\w+_INDEX)\)", text)}


def _compile(snake: str, driver_obj: Path, work: Path) -> Path:
    op_dir = GENERATED / snake
    tiling = op_dir / "op_host" / "op_tiling" / f"{snake}_tiling.cpp"
    func = re.search(r"^ge::graphStatus (\w+TilingFunc)\(gert::TilingContext \*context\)$",
                     tiling.read_text(encoding="utf-8"), re.M)
    assert func, f"{tiling}: no tiling function"
    obj, exe = work / f"{snake}_tiling.o", work / f"{snake}_tiling_driver"
    cmd = [GXX, *FLAGS, "-I", str(SIM / "include"), "-I", str(tiling.parent), "-I", str(shared_host_include(op_dir)),
           f'-DOPGEN_SIM_TILING_SOURCE="{tiling}"', f"-DOPGEN_SIM_TILING_FUNC=optiling::{func.group(1)}",
           "-c", str(SIM / "tiling_entry.cpp"), "-o", str(obj)]
    for step in (cmd, [GXX, str(obj), str(driver_obj), "-o", str(exe)]):
        proc = subprocess.run(step, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{' '.join(step)}\n{proc.stderr[-4000:]}"
    return exe


@pytest.fixture(scope="session")
def twins(tmp_path_factory) -> dict[str, Twin]:
    work = tmp_path_factory.mktemp("sim_tiling")
    driver_obj = work / "tiling_driver.o"
    cmd = [GXX, *FLAGS, "-I", str(SIM / "include"), "-c", str(DRIVER), "-o", str(driver_obj)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        exes = dict(zip(OPS, pool.map(lambda s: _compile(s, driver_obj, work), OPS)))
    out = {}
    for snake in OPS:
        op_dir = GENERATED / snake
        cases = _module(op_dir / "tests" / "cases.py", f"_sim_tiling_{snake}_cases")
        struct, docs = _struct(op_dir / "op_kernel" / f"{snake}_tiling.h")
        out[snake] = Twin(snake, _module(op_dir / "reference.py", f"_sim_tiling_{snake}_reference"), cases,
                          exes[snake], struct, docs,
                          _required(op_dir / "op_host" / "op_tiling" / f"{snake}_tiling.cpp", cases.FIELDS))
    return out


# ---- requests --------------------------------------------------------------------------------------------------

def _ints(values) -> str:
    return ",".join(str(int(v)) for v in values) or "''"


def _attr(kind: str, value) -> str:
    if kind in ("i", "b"):
        return f"attr {kind} {int(value)}"
    if kind == "f":
        return f"attr f {float(value).hex()}"
    if kind == "s":
        return f"attr s {str(value).encode('utf-8').hex() or chr(39) * 2}"
    return f"attr I {_ints(value)}"


def _request(twin: Twin, call: dict, metas: dict, rank, *, graph: bool) -> tuple[list[str], dict]:
    """The driver lines of one call, and what the tiling should see.

    graph: every attribute given (defaults filled in) and every output's dtype fixed to the inferred one, as a
    graph node has them; else only the case's attributes and output dtypes (aclnn leaves the rest to the spec)."""
    ref = twin.ref
    attrs, out_dtypes = testkit.call_args(ref, call, rank)
    full = ref.reference.normalize_attrs(ref.INFO, {k: v for k, v in attrs.items() if k in ref.ATTRS})
    try:  # the buffers of the outputs: what the op writes (a negative case may give a smaller one)
        inferred = ref.infer(testworld.meta_inputs(call, rank, metas), attrs, call["product"], out_dtypes,
                             validate=False)
    except OpError:
        inferred = {}
    given = call.get("out_shapes") or {}
    formats = call.get("out_formats") or {}  # an output buffer of another format (negatives of format checks)
    buffsize = attrs.get("HCCL_BUFFSIZE", ref.ENV.get("HCCL_BUFFSIZE", 200))
    lines = [f"node {ref.OP}_{call['id']}_{rank}", f"soc {SOC[call['product']]}", f"aiv {AIV}", f"aic {AIC}",
             f"ub {UB}", f"window {int(buffsize) * MIB}"]
    for kind, name, typ in twin.cases.FIELDS:
        if kind == "input":
            m = metas.get(name)
            fmt = FORMAT_VALUES[m[2]] if m is not None and len(m) > 2 else FORMAT_ND  # negatives of format checks
            lines.append("input -" if m is None else f"input {DTYPES[m[0]].ge_value} {fmt} {_ints(m[1])}")
        elif kind == "output":
            # a graph node fixes every output's dtype; an aclnn call the ones it chose (the rest: the spec's rule,
            # no desc, so no buffer the output shape checks could read), and any whose buffer the case gives
            shape, dtype = inferred.get(name, ((), None))
            if not graph and name not in given and name not in formats:
                dtype = out_dtypes.get(name)
            shape = given.get(name, shape)
            fmt = FORMAT_VALUES[formats[name]] if name in formats else FORMAT_ND
            lines.append("output -" if dtype is None else f"output {DTYPES[dtype].ge_value} {fmt} {_ints(shape)}")
        elif kind == "attr":
            lines.append(_attr(KINDS[typ], full[name]) if graph or name in attrs else "attr -")
    return lines, dict(attrs=attrs, full=full, window=int(buffsize) * MIB)


@functools.cache
def _key_facts(snake: str, product: str):
    """The op of the generated folder ``snake`` and the key combinations its kernel plan has instances for on
    ``product``."""
    op = next(o for o in map(load_ok, SPECS) if o.snake_name == snake)
    return op, {i.key_values for i in plan_instances(op).instances if product in i.products}


def _expected_key(twin: Twin, case: dict, rank, metas: dict) -> int:
    """The template tiling key the spec gives this rank: GET_TPL_TILING_KEY of its key parameters' values (the
    spec's expressions, evaluated by the numpy reference's scope), a combination the ASCENDC_TPL_SEL of the
    product's kernel entry lists (the kernel plan's instances of the product)."""
    ref, product = twin.ref, case["product"]
    op, selected = _key_facts(twin.snake, product)
    attrs, out_dtypes = testkit.call_args(ref, case, rank)
    scope = ref.reference.make_scope(ref.INFO, testworld.meta_inputs(case, rank, metas), attrs, product, out_dtypes)
    params = key_params(op)
    # the expressions as the reference's lets are written (opgen.lower.python), in its module's namespace
    values = tuple(int(eval(py_expr(kp.expr, op.views[product]), dict(vars(ref)), {"s": scope})) for kp in params)
    assert values in selected, f"{case['id']} rank {rank}: key {values} is no combination ASCENDC_TPL_SEL lists"
    return encode(params, values)


def _expected_fields(twin: Twin, case: dict, rank, metas: dict, seen: dict, key: int) -> dict:
    """Every tiling data field as the numpy reference computes it for this rank."""
    ref, product = twin.ref, case["product"]
    attrs, out_dtypes = testkit.call_args(ref, case, rank)
    scope = ref.reference.make_scope(ref.INFO, testworld.meta_inputs(case, rank, metas), attrs, product, out_dtypes)
    inferred = ref.infer(testworld.meta_inputs(case, rank, metas), attrs, product, out_dtypes)
    # winSizeBytes is the HCCL_BUFFSIZE window the tiling read; an MC2-context op reads none (its window is the
    # let of its ccl_buffer_size attribute, a field of its own), so the field stays 0
    window = 0 if getattr(ref, "MC2_CONTEXT", {}) else seen["window"]
    platform = {"tilingKey": key, "aivNum": AIV, "totalUbSize": UB, "winSizeBytes": window,
                "pollTimeoutUs": poll_timeout_us(os.environ.get("HCCL_EXEC_TIMEOUT")) if ref.COMM else 0,
                # the ranks of one server where MTE copies stop at the server (Atlas A2: 8): the kernels reach
                # the other servers through BatchWrite
                "serverRanks": {"ascend910b": 8}.get(product, 0) if ref.COMM else 0}
    out = {}
    for name, doc in twin.docs.items():
        if doc.startswith("hccl "):
            continue  # opaque HCCL tilings: _check_hccl
        if m := re.fullmatch(r"attr (\w+) \((?:int64|bool)\)", doc):
            # an ignored attribute is what the op reads, its default, whatever the call passed
            ignored = m.group(1) in ref.INFO.ignored_attrs.get(product, ())
            out[name] = int(scope.attrs[m.group(1)] if ignored else seen["full"][m.group(1)])
        elif m := re.fullmatch(r"attr (\w+) \(float\)", doc):
            out[name] = float(np.float32(seen["full"][m.group(1)]))  # fp32, as the kernels compute with it
        elif m := re.fullmatch(r"let (\w+)(?:, (?:product|window) \w+)?", doc):
            # a let the product lacks is never filled in: the field keeps its zero
            out[name] = int(scope.let(m.group(1))) if m.group(1) in ref.INFO.lets[product] else 0
        elif m := re.fullmatch(r"dim\((\w+), (\d+)\)", doc):
            out[name] = int(metas[m.group(1)][1][int(m.group(2))])
        elif m := re.fullmatch(r"ge::DataType of (\w+)", doc):
            t = m.group(1)
            dtype = inferred[t][1] if t in ref.OUTPUTS else (metas[t][0] if metas.get(t) is not None else None)
            out[name] = DT_UNDEFINED if dtype is None else DTYPES[dtype].ge_value
        elif m := re.fullmatch(r"present\((\w+)\): 1 when it is passed .*", doc):
            out[name] = int(scope.present(m.group(1)))  # passed, and not an empty tensor that means absent
        elif name in platform:
            out[name] = platform[name]
        else:
            raise AssertionError(f"{twin.snake}: no rule for tiling data field {name} ({doc})")
    return out


def _check_hccl(twin: Twin, case: dict, seen: dict, fields: dict, where: str) -> None:
    """The HCCL tilings as asc-devkit's Mc2InitTilingInner / Mc2CcTilingInner lay them out
    (include/adv_api/hccl/internal/hccl_tiling_msg.h): the init tiling lists the cc tilings of the groups in use by
    their offsets from it, each cc tiling names its group and the product's HCCL algorithm."""
    groups = [(name, *m.groups()) for name, doc in twin.docs.items()
              if (m := re.fullmatch(r"hccl cc tiling of the (\w+) group (\w+)", doc))]
    if not groups:
        assert "mc2InitTiling" not in fields, where
        return
    init = bytes(fields["mc2InitTiling"])
    version, count = struct.unpack_from("<II", init, 0)
    offsets = struct.unpack_from("<8I", init, 8)
    dev_type = init[46]
    # every group after the first is in use only with its domain's world size above 1 (no current product)
    in_use = [g for i, g in enumerate(groups) if i == 0 or int(seen["full"].get(f"{g[1]}WorldSize", 0)) > 1]
    assert (version, count, dev_type) == (100, len(in_use), 0xFF), f"{where}: init tiling {version, count, dev_type}"
    op_type, alg, engine = HCCL_CC[case["product"]]
    base = twin.struct.mc2InitTiling.offset
    for i, (name, domain, attr) in enumerate(groups):
        cc = bytes(fields[name])
        if (name, domain, attr) not in in_use:
            assert cc == bytes(512), f"{where}: {name} filled for the unused {domain} group"
            continue
        assert offsets[in_use.index((name, domain, attr))] == getattr(twin.struct, name).offset - base, where
        group_name = cc[16:144].rstrip(b"\0").decode()
        alg_config = cc[144:272].rstrip(b"\0").decode()
        got = (group_name, alg_config, struct.unpack_from("<I", cc, 272)[0], cc[13], cc[3])
        assert got == (seen["full"][attr], alg, op_type, engine, 1), f"{where}: {name} {got}"


def _fields(twin: Twin, data: bytes) -> dict:
    size = ctypes.sizeof(twin.struct)
    assert len(data) == size, f"{len(data)} tiling data bytes, sizeof {size}"
    value = twin.struct.from_buffer_copy(data)
    return {name: getattr(value, name) for name, _ in twin.struct._fields_}


# ---- tests -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("snake", OPS)
def test_every_positive_rank_tiles_as_the_reference_says(twins, snake):
    twin = twins[snake]
    calls, requests = [], []
    for case in twin.cases.POSITIVE:
        for rank, metas in testworld.rank_metas(case).items():
            for graph in (True, False):
                lines, seen = _request(twin, case, metas, rank, graph=graph)
                calls.append((case, rank, metas, seen, graph))
                requests.append(lines)
    assert calls, f"{snake}: no positive case"
    graph_data = {}
    for (case, rank, metas, seen, graph), got in zip(calls, twin.run(requests)):
        where = f"{case['id']} rank {rank} ({'graph' if graph else 'aclnn'} mode)"
        assert got["ok"], f"{where}: tiling failed: {got['log']}"
        assert not [line for line in got["log"] if line.startswith("[ERROR]")], f"{where}: {got['log']}"
        workspace = SYSTEM_NEED_WORKSPACE + WORKSPACE_PER_CORE_PAIR * AIV * AIV
        if twin.ref.INFO.semantics == "moe_dispatch":  # + each core's slot counts: one int32 per MoE expert
            workspace += AIV * -(-int(seen["full"]["moeExpertNum"]) * 4 // 32) * 32
        if case["product"] == "ascend910b":  # + the BatchWrite items to the other servers: 2 of 32 bytes per unit
            workspace += 2 * 32 * (int(seen["full"]["moeExpertNum"]) + int(seen["full"]["epWorldSize"]))
        assert (got["block_dim"], got["mode"], got["workspace"]) == (AIV, BATCH_MODE, workspace), where
        fields = _fields(twin, got["data"])
        assert got["key"] == fields["tilingKey"] == _expected_key(twin, case, rank, metas), where
        want = _expected_fields(twin, case, rank, metas, seen, got["key"])
        diff = {k: (fields[k], v) for k, v in want.items() if fields[k] != v}
        assert not diff, f"{where}: fields (tiling, reference) differ: {diff}"
        _check_hccl(twin, case, seen, fields, where)
        if graph:
            graph_data[(case["id"], rank)] = (got["key"], got["data"])
        else:
            assert graph_data[(case["id"], rank)] == (got["key"], got["data"]), \
                f"{where}: the spec's defaults and dtype rules tile differently from the given values"


@pytest.mark.parametrize("env,seconds", [(None, 1091), ("5", 5), ("1091", 1091), ("0", 1091), ("1092", 1091),
                                         ("-3", 1091), ("5s", 1091)])
def test_the_polls_wait_what_hccl_exec_timeout_says(twins, monkeypatch, env, seconds):
    twin = twins["moe_distribute_dispatch_v2"]
    if env is None:
        monkeypatch.delenv("HCCL_EXEC_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("HCCL_EXEC_TIMEOUT", env)
    case = twin.cases.POSITIVE[0]
    rank, metas = next(iter(testworld.rank_metas(case).items()))
    lines, _ = _request(twin, case, metas, rank, graph=True)
    got = twin.run([lines])[0]
    assert got["ok"], got["log"]
    assert _fields(twin, got["data"])["pollTimeoutUs"] == seconds * 1_000_000 == poll_timeout_us(env)
    warned = [line for line in got["log"] if "HCCL_EXEC_TIMEOUT" in line]
    if env in ("-3", "5s"):  # not a whole number of seconds: a warning naming the value, and the default
        assert [w.split(": ", 1)[1] for w in warned] == \
            [f"HCCL_EXEC_TIMEOUT={env} is not a whole number of seconds; the polls wait 1091 s."]
        assert warned[0].startswith("[WARNING] "), warned
    else:
        assert not warned


@pytest.mark.parametrize("snake", OPS)
def test_every_negative_call_fails_with_its_check(twins, snake):
    twin = twins[snake]
    calls, requests = [], []
    for neg in twin.cases.NEGATIVE:
        if any(neg["inputs"].get(name) is None for name in twin.required):
            # a graph node or an aclnn call never reaches tiling without a required input: the context numbers
            # inputs by instance (GetInputShape), so a request cannot leave one out
            continue
        lines, _ = _request(twin, neg, neg["inputs"], None, graph=False)
        calls.append(neg)
        requests.append(lines)
    assert len(calls) >= len(twin.cases.NEGATIVE) // 2, f"{snake}: too few negative calls reach tiling"
    for neg, got in zip(calls, twin.run(requests)):
        tag = f"[{neg['check']}]"
        if neg["data_check"]:
            assert got["ok"], f"{neg['id']}: tiling never sees tensor data, yet it failed: {got['log']}"
        elif neg["code"] == 0:
            assert got["ok"], f"{neg['id']}: a warning rejected the call: {got['log']}"
            assert any(line.startswith("[WARNING]") and line.endswith(tag) for line in got["log"]), \
                f"{neg['id']}: warning {tag} not logged: {got['log']}"
        else:
            assert not got["ok"], f"{neg['id']}: accepted, but {neg['check']} should reject it ({neg['change']})"
            assert any(line.startswith("[ERROR]") and line.endswith(tag) for line in got["log"]), \
                f"{neg['id']}: no ERROR line ends in {tag}: {got['log']}"
