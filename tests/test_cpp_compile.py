"""Compile check of the generated CANN host C++ (op_host, op_api) against opgen/sim/include.

Every spec under specs/ is built into a temporary directory and every generated host ``.cpp`` / ``.h`` is
run through ``g++ -std=c++17 -fsyntax-only -Wall -Werror`` with the CANN API declarations of
``opgen/sim/include`` (two compiles at a time).  Kernel files (op_kernel) are checked by the kernel test.
Also checked here: the declarations keep ``ge::DataType`` / ``aclDataType`` equal to ``opgen/dtypes.py``,
the generated C++ is deterministic, OpDef dtype columns line up, and the aclnn API takes the spec's parameters
in aclnn order (inputs, attributes, outputs).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen.core.dtypes import DTYPES
from opgen.emit.pipeline import emit
from opgen.core.layout import shared_host_include
from opgen.tools.write import op_output

from .conftest import ROOT, SPECS, load_ok, write_ops

CANN_API = ROOT / "opgen" / "sim" / "include"
GXX = shutil.which("g++")
HOST_DIRS = ("op_host", "op_api")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """spec file name → the op's generated directory."""
    out = tmp_path_factory.mktemp("cpp")
    dirs: dict[str, Path] = {}
    for spec in SPECS:
        op = load_ok(spec)
        write_ops(out, [op_output(op.snake_name, spec.name, op.source, emit(op))])
        dirs[spec.name] = out / op.snake_name
    return dirs


def _host_files(op_dir: Path) -> list[Path]:
    files: list[Path] = []
    for d in HOST_DIRS:
        if (op_dir / d).is_dir():
            files += [p for p in sorted((op_dir / d).rglob("*")) if p.suffix in (".cpp", ".h")]
    return files


def _compile(op_dir: Path, src: Path) -> tuple[Path, int, str]:
    cmd = [GXX, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-x", "c++",
           "-I", str(CANN_API), "-I", str(op_dir / "op_host" / "op_tiling"), "-I", str(shared_host_include(op_dir)),
           "-I", str(op_dir / "op_kernel"),
           str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return src, proc.returncode, proc.stderr


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_generated_host_cpp_compiles(built):
    jobs = [(op_dir, src) for op_dir in built.values() for src in _host_files(op_dir)]
    assert jobs, "no host C++ was generated"
    for op_dir in built.values():
        names = {p.relative_to(op_dir).as_posix() for p in _host_files(op_dir)}
        s = op_dir.name
        for need in (f"op_host/{s}_def.cpp", f"op_host/{s}_infershape.cpp", f"op_host/op_tiling/{s}_tiling.cpp",
                     f"op_host/op_tiling/{s}_tiling.h", f"op_api/{s}_base.cpp", f"op_api/{s}_base.h"):
            assert need in names, f"{need} was not generated"
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: _compile(*job), jobs))
    failures = [f"{src}:\n{err}" for src, rc, err in results if rc != 0]
    assert not failures, "\n".join(failures)


def _enum_values(header: Path, prefix: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2))
            for m in re.finditer(rf"\b({prefix}\w+)\s*=\s*(-?\d+)", header.read_text(encoding="utf-8"))}


def test_cann_api_dtype_values_match_opgen():
    ge = _enum_values(CANN_API / "graph" / "types.h", "DT_")
    acl = _enum_values(CANN_API / "acl" / "acl_base.h", "ACL_")
    for info in DTYPES.values():
        assert ge.get(info.ge_enum) == info.ge_value, info.name
        assert acl.get(info.acl_enum) == info.acl_value, info.name


def test_generated_cpp_is_deterministic():
    """Two builds give the same C++ (clang-format included); the layout itself is clang-format's
    (tests/test_cpp_format.py)."""
    for spec in SPECS:
        first = {a.path: a.content for a in emit(load_ok(spec)) if a.path.endswith((".cpp", ".h"))}
        again = {a.path: a.content for a in emit(load_ok(spec)) if a.path.endswith((".cpp", ".h"))}
        assert first == again, f"{spec.name}: two builds differ"
        for path, text in first.items():
            # outside comments and string literals (the check core spells Python's booleans in its messages)
            code = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', "", text, flags=re.S)
            assert not re.search(r"\b(None|True|False)\b|<\w+ object at", code), f"{path}: a Python value leaked"


def _dtype_lists(block: str) -> list[int]:
    return [len(m.group(1).split(",")) for m in re.finditer(r"\.DataType\(\{([^}]*)\}\)", block)]


def test_opdef_columns_line_up(built):
    for spec in SPECS:
        op = load_ok(spec)
        op_dir = built[spec.name]
        text = (op_dir / "op_host" / f"{op_dir.name}_def.cpp").read_text(encoding="utf-8")
        # the op-level definitions, then one block per SoC config
        blocks = re.split(r"\n    (?:// .*\n    )?static void Define\w+Config", text)
        assert len(blocks) == 1 + len(op.products), spec.name
        for p in op.products:
            assert f'this->AICore().AddConfig("{p.soc}", aicore_config_{p.soc});' in text, (spec.name, p.soc)
        spec_name = spec.name
        for block in blocks:
            counts = set(_dtype_lists(block))
            assert len(counts) <= 1, f"{spec_name}: DataType columns of different lengths {counts}"


def test_aclnn_signature_follows_spec_order(built):
    """Each entry point's header declares its parameters in the order its `aclnn` declaration gives; the base
    every entry point calls takes every parameter of the OpDef in IR order."""
    def declared(header: str, fn: str) -> list[str]:
        m = re.search(rf"\b{fn}\((.*?)\);", header, re.S)
        assert m, f"no {fn}"
        return [re.split(r"[\s*&]+", p.strip())[-1] for p in m.group(1).split(",")]

    for spec in SPECS:
        op = load_ok(spec)
        api = built[spec.name] / "op_api"
        base = (api / f"{op.snake_name}_base.h").read_text(encoding="utf-8")
        assert declared(base, f"{op.name}GetWorkspaceSizeBase") == \
            [p.name for p in op.params] + ["workspaceSize", "executor"], spec.name
        for entry in op.entries:
            if entry.two_stage:
                header = (api / f"aclnn_{entry.stem}.h").read_text(encoding="utf-8")
                assert declared(header, f"{entry.name}GetWorkspaceSize") == \
                    [p.c_name for p in entry.params] + ["workspaceSize", "executor"], (spec.name, entry.name)
            else:  # a size function: in the header of the op's first two-stage entry point
                header = (api / f"aclnn_{op.files_entry.stem}.h").read_text(encoding="utf-8")
                assert declared(header, entry.name) == \
                    [p.c_name for p in entry.params] + [z.name for z in entry.sizes], (spec.name, entry.name)