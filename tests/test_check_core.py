"""The generated C++ check core against the generated Python reference (the CI differential test).

For every spec and product: thousands of parameter sets derived from the spec (valid bases found by repair,
their one- and two-field mutants, boundary values, random sets) go through one C++ driver process and through
the Python ``validate``; both must give the same decision, aclnn code, parameter, message and warnings, and for
accepted sets ``InferShapes`` / ``InferDtypes`` must equal the Python ``infer``.
"""
from __future__ import annotations

import importlib.util
import math
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from opgen.core.dtypes import DTYPES
from opgen.core.artifact import Artifact
from opgen.emit.reference import reference_context
from opgen.emit.render import render
from opgen.emit.check_core import emit_check_core
from opgen.runtime import OpError
from opgen.core.layout import CHECK_COMMON, shared_host_include
from opgen.tools.write import op_output

from .check_cases import CaseGen, decode_result, field_macros
from .conftest import ROOT, SPECS, build_reference, load_ok, load_src, write_ops

CXX = shutil.which("g++")
DRIVER = ROOT / "tests" / "cpp" / "check_driver.cpp"
SEMANTICS_SPEC = ROOT / "tests" / "cpp" / "check_semantics.spec"
CASES_PER_PRODUCT = 2000

pytestmark = pytest.mark.skipif(CXX is None, reason="the check-core tests need g++")


def _header_dir(out: Path, op) -> Path:
    return out / op.snake_name / "op_host" / "op_tiling"


def _driver_command(op, header_dir: Path, fields: Path, exe: Path, opt: str = "-O1") -> list[str]:
    return [CXX, "-std=c++17", opt, f"-I{header_dir}", f"-I{shared_host_include(header_dir.parent.parent)}",
            f"-I{fields.parent}",
            f'-DOPGEN_CHECK_HEADER="{op.snake_name}_check.h"', f"-DOPGEN_CHECK_NS=opgen_check::{op.snake_name}",
            f'-DOPGEN_CHECK_FIELDS="{fields.name}"', str(DRIVER), "-o", str(exe)]


def _compile_all(commands: list[list[str]]) -> None:
    """Run the compilers concurrently; fail with the first compiler's errors."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cmd in commands]
    failures = []
    for cmd, proc in zip(commands, procs):
        _, err = proc.communicate()
        if proc.returncode != 0:
            failures.append(f"{' '.join(cmd)}\n{err[:4000]}")
    assert not failures, failures[0]


@pytest.fixture(scope="session")
def cores(tmp_path_factory):
    """spec name -> (op, generated reference module, compiled driver, check header), built and compiled once."""
    out = tmp_path_factory.mktemp("check_core")
    drivers = out / "drivers"
    drivers.mkdir()
    built, commands = {}, []
    for spec in SPECS:
        op = load_ok(spec)
        ref = build_reference(spec.name, out)
        fields = drivers / f"{op.snake_name}_fields.inc"
        fields.write_text(field_macros(op), encoding="utf-8")
        exe = drivers / f"{op.snake_name}_driver"
        commands.append(_driver_command(op, _header_dir(out, op), fields, exe))
        built[spec.name] = (op, ref, exe, _header_dir(out, op) / f"{op.snake_name}_check.h")
    _compile_all(commands)
    return built


def _product_params():
    for spec in SPECS:
        op = load_ok(spec)
        for i, p in enumerate(op.products):  # every op's first product by default, the others in the slow tier
            yield pytest.param(spec.name, p.soc, id=f"{spec.stem}-{p.soc}",
                               marks=(pytest.mark.slow,) if i else ())


def _run_driver(exe: Path, soc: str, lines: list[str]) -> list[str]:
    proc = subprocess.run([str(exe), soc], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          check=True)
    return proc.stdout.splitlines()


def _python_result(err: OpError | None) -> tuple:
    return (0, "", "") if err is None else (err.code, err.param, err.message)


def _differential(op, ref, exe: Path, soc: str, n_cases: int, seed: int) -> tuple[int, Counter, int]:
    """Run ``n_cases`` generated parameter sets through C++ and Python; (accepted, failed check ids, bases)."""
    gen = CaseGen(op, soc, ref, seed=seed)
    cases, n_bases = gen.cases(n_cases)
    results = _run_driver(exe, soc, [gen.encode(c) for c in cases])
    assert len(results) == len(cases)
    outputs = [t.name for t in op.outputs]
    mismatches, failed_ids, accepted = [], Counter(), 0
    for n, (case, line) in enumerate(zip(cases, results)):
        got = decode_result(line, outputs)
        err = gen.validate(case)
        want = _python_result(err)
        have = (got["code"], got["param"], got["message"])
        problems = []
        if have != want:
            problems.append(f"check: C++ {have} != Python {want}")
        if got["code"] != 0 and not got["message"].endswith(f"[{got['id']}]"):
            problems.append(f"CheckResult.id {got['id']!r} is not the message's")
        if gen.warn_ids:
            py_warnings = gen.warnings(case)
            if py_warnings != got["warnings"]:
                problems.append(f"warnings: C++ {got['warnings']} != Python {py_warnings}")
        if err is None:
            accepted += 1
            inputs, attrs, out_dtypes = gen.call_args(case)
            try:
                inferred = ref.infer(inputs, attrs, soc, out_dtypes)
            except OpError:  # an output shape without a value
                if got["shapes_ok"]:
                    problems.append("InferShapes succeeded where Python infer found no shape")
            else:
                shapes = {k: v[0] for k, v in inferred.items()}
                dtypes = {k: DTYPES[v[1]].ge_value for k, v in inferred.items()}
                if not got["shapes_ok"] or got["shapes"] != shapes:
                    problems.append(f"shapes: C++ {got['shapes_ok']} {got['shapes']} != Python {shapes}")
                if not got["dtypes_ok"] or got["dtypes"] != dtypes:
                    problems.append(f"dtypes: C++ {got['dtypes_ok']} {got['dtypes']} != Python {dtypes}")
        else:
            failed_ids[got["id"]] += 1
        if problems:
            mismatches.append(f"case {n}: {gen.encode(case)}\n  " + "\n  ".join(problems))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} cases differ; the first ones:\n" + \
        "\n".join(mismatches[:5])
    return accepted, failed_ids, n_bases


@pytest.mark.parametrize("spec_name,soc", list(_product_params()))
def test_cpp_check_matches_python_reference(cores, spec_name, soc):
    op, ref, exe, _ = cores[spec_name]
    accepted, failed_ids, n_bases = _differential(op, ref, exe, soc, CASES_PER_PRODUCT,
                                                  seed=zlib.crc32(f"{spec_name}/{soc}".encode()))
    assert n_bases >= 1 and accepted >= 20, f"only {accepted} accepted cases ({n_bases} bases)"
    assert len(failed_ids) >= min(10, len(op.views[soc].checks) // 3), f"few checks exercised: {sorted(failed_ids)}"


@pytest.fixture(scope="module")
def semantics_core(tmp_path_factory):
    """The spec of every builtin (tests/cpp/check_semantics.spec), built and compiled."""
    out = tmp_path_factory.mktemp("check_semantics")
    op, module, header_dir = _build_from_text(SEMANTICS_SPEC.read_text(encoding="utf-8"), SEMANTICS_SPEC.name, out)
    fields = out / "fields.inc"
    fields.write_text(field_macros(op), encoding="utf-8")
    exe = out / "driver"
    _compile_all([_driver_command(op, header_dir, fields, exe)])
    return op, module, exe, header_dir / f"{op.snake_name}_check.h"


@pytest.mark.parametrize("soc", ["ascend910b", "ascend950"])
def test_every_builtin_agrees_with_python(semantics_core, soc):
    op, ref, exe, _ = semantics_core
    accepted, failed_ids, _ = _differential(op, ref, exe, soc, CASES_PER_PRODUCT, seed=zlib.crc32(soc.encode()))
    assert accepted >= 20
    declared = {c.id for c in op.views[soc].checks if c.origin == "declared" and c.code != 0}
    assert len(declared & set(failed_ids)) >= len(declared) // 2, sorted(declared - set(failed_ids))


def _shared_header(header: Path) -> Path:
    """The shared header an op's check core includes: in the shared folder beside the op folder."""
    return shared_host_include(header.parent.parent.parent) / Path(CHECK_COMMON).name


def test_headers_compile_alone_without_warnings(cores, semantics_core):
    headers = [header for _, _, _, header in cores.values()] + [semantics_core[3]]
    shared = _shared_header(headers[0])
    _compile_all([[CXX, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-x", "c++",
                   f"-I{shared_host_include(header.parent.parent.parent)}", str(header)]
                  for header in [*headers, shared]])


def test_headers_use_only_standard_headers_and_the_shared_one(cores):
    def includes(header: Path) -> list[str]:
        return re.findall(r"^#include\s*(\S+)", header.read_text(encoding="utf-8"), re.M)

    for _, _, _, header in cores.values():
        found = includes(header)
        assert [i for i in found if not i.startswith("<")] == [f'"{Path(CHECK_COMMON).name}"'], found
    shared = includes(_shared_header(header))
    assert shared and all(i.startswith("<") for i in shared), shared


def _doubles() -> list[float]:
    import random
    rng = random.Random(1234)
    values = [0.0, -0.0, 1.0, -1.5, 0.1, 1e16, 1e15, 1234567890123456.0, 1e-4, 1e-5, 0.0001234, 5e-324,
              2.2250738585072014e-308, 1.7976931348623157e308, 123456789.0, 1.0 / 3.0, 100.0, 1e22, 9.5e-05,
              math.inf, -math.inf, math.nan, 448.0, 57344.0, 3.4028234663852886e38]
    values += [2.0 ** k for k in range(-1074, 1024, 7)] + [-(2.0 ** k) * 3 for k in range(-60, 60, 3)]
    values += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(3000)]
    values += [round(rng.uniform(-1e6, 1e6), rng.randrange(0, 8)) for _ in range(1000)]
    return values


def test_float_display_is_python_repr(cores):
    op, _, exe, _ = next(iter(cores.values()))
    values = _doubles()
    lines = ["nan" if v != v else "inf" if v == math.inf else "-inf" if v == -math.inf else v.hex() for v in values]
    proc = subprocess.run([str(exe), op.products[0].soc, "--show-float"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, check=True)
    shown = proc.stdout.splitlines()
    wrong = [(v, s) for v, s in zip(values, shown) if s != repr(v)]
    assert len(shown) == len(values) and not wrong, wrong[:10]


def _build_from_text(text: str, spec_name: str, out: Path):
    """(op, reference module, header dir) of spec text: its numpy reference and its check core (only those two, so
    a spec without `semantics` works), the reference imported under a unique module name."""
    op, diags = load_src(text, spec_name)
    assert op is not None, diags.render()
    reference = render("reference/reference.py.j2", **reference_context(op))
    artifacts = emit_check_core(op) + [Artifact("reference.py", reference)]
    write_ops(out, [op_output(op.snake_name, spec_name, op.source, artifacts)])
    spec = importlib.util.spec_from_file_location(f"check_core_{out.name}_reference",
                                                  out / op.snake_name / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return op, module, _header_dir(out, op)


@pytest.mark.slow
def test_an_added_constraint_reaches_both_validators(cores, tmp_path):
    """One extra `require` in a spec copy changes the Python validator and the C++ check alike, no hand edit."""
    spec_name, soc = "dispatch_v2.spec", "ascend910_93"
    op, ref, _, _ = cores[spec_name]
    base = CaseGen(op, soc, ref, seed=7).bases(want=1)[0]
    text = (ROOT / "specs" / spec_name).read_text(encoding="utf-8")
    rank = base.attrs["epRankId"]
    extra = f'    require added_rank: epRankId != {rank} else tiling epRankId "anything but {rank}";\n'
    first_product = re.search(r"^    product ", text, re.M).start()
    changed = text[:first_product] + extra + text[first_product:]

    results = {}
    for name, spec_text in (("original", text), ("changed", changed)):
        out = tmp_path / name
        new_op, module, header_dir = _build_from_text(spec_text, spec_name, out)
        fields = out / "fields.inc"
        fields.write_text(field_macros(new_op), encoding="utf-8")
        exe = out / "driver"
        _compile_all([_driver_command(new_op, header_dir, fields, exe, opt="-O0")])
        gen = CaseGen(new_op, soc, module, seed=7)
        got = decode_result(_run_driver(exe, soc, [gen.encode(base)])[0], [t.name for t in new_op.outputs])
        results[name] = (_python_result(gen.validate(base)), (got["code"], got["param"], got["message"]))

    assert results["original"] == ((0, "", ""), (0, "", ""))
    python, cpp = results["changed"]
    assert python == cpp
    assert python[:2] == (561002, "epRankId")
    assert python[2] == (f"Parameter epRankId of operator MoeDistributeDispatchV2 has incorrect value {rank}. "
                         f"It should be anything but {rank}. [op.added_rank]")
