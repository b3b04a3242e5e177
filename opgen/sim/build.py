"""Compile the twin executable of one generated op (cached, safe under parallel pytest sessions).

Three translation units compiled in parallel, then linked: ``runner.cpp``, ``kernel_entry.cpp`` (which
#includes the op's generated kernel entry) and ``tiling_entry.cpp`` (which #includes its generated tiling); see
``include/opgen_sim/launch.h``.  One executable per kernel entry and arch: the kernel unit compiles the entry the
OpDef config of the product a world runs on names (its own, e.g. op_kernel/arch22/<op>_a2.cpp, or the op's one
entry), with that product's ``__NPU_ARCH__`` (2201 for Atlas A2/A3, 3510 for Ascend 950; the product table's
``npu_arch``), as CANN compiles each SoC's opFile for its arch, and the twin's headers then declare only that arch's element
types (``include/opgen_sim/numeric.h``); host code is compiled without it, as on the host. And one per OpDef
column: CANN compiles the kernel once per column with DTYPE_<NAME> / ORIG_DTYPE_<NAME> defined, and the generated
kernels select their dtype instances with those macros (``Twin``). The kernel unit holds the instance of every
template tiling key combination the entry's ``ASCENDC_TPL_SEL`` lists (``-DOPGEN_SIM_TILING_KEY_SEL``,
``kernel_entry.cpp``) and launches the one of the key the rank's tiling set; any other key faults. Each object is cached on its own, so a new
column compiles the kernel unit alone.  The executable is cached under ``$OPGEN_SIM_CACHE`` (default
``~/.cache/opgen/sim``) keyed by the compiler, the command lines and every source they can read.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from opgen.core.dtypes import DTYPES
from opgen.core.layout import SHARED_DIR, shared_host_include, shared_kernel_include

SIM_DIR = Path(__file__).resolve().parent
INCLUDE = SIM_DIR / "include"
# -O0: the kernels compile about 3.4x faster than at -O1 (benchmarks/bench_twin.py), and the worlds the suites
# run are small enough that the unoptimised twin still runs each in milliseconds.
FLAGS = ("-std=c++17", "-O0", "-g0", "-pthread", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1")


class TwinUnavailable(FileNotFoundError):
    """The twin cannot be built on this machine: no C++ compiler."""


class TwinCompileError(RuntimeError):
    """A translation unit or the link failed; the message carries the compiler's output."""


def cache_dir() -> Path:
    return Path(os.environ.get("OPGEN_SIM_CACHE") or Path.home() / ".cache" / "opgen" / "sim")


def compiler() -> list[str]:
    """$CXX (may carry a launcher such as ``ccache g++``), else g++."""
    cxx = shlex.split(os.environ.get("CXX", "")) or ["g++"]
    if shutil.which(cxx[0]) is None:
        raise TwinUnavailable(f"no C++ compiler: {cxx[0]!r} is not on PATH (set $CXX or install g++)")
    return cxx


def column_defines(column: dict[str, str]) -> list[str]:
    """The defines CANN's op build gives the kernel of one OpDef column: DTYPE_<NAME> (the element type) and
    ORIG_DTYPE_<NAME> (the DT_ id of basic_api/kernel_type.h) per tensor; ``column`` maps the IR name to the dtype
    (code: cmake/scripts/util/ascendc_impl_build.py add_dtype_fmt_option_single, its DTYPE_MAP: the same element
    types, e.g. fp4x2_e2m1_t for float4_e2m1; the generated entries' Run takes them)."""
    out = []
    for ir, dtype in sorted(column.items()):
        row = DTYPES[dtype]
        out += [f"-DDTYPE_{ir.upper()}={row.ascendc}", f"-DORIG_DTYPE_{ir.upper()}={row.ge_enum}"]
    return out


def compile_commands(cxx: list[str], op_dir: Path, op_name: str, arch: int,
                     column: dict[str, str] | None = None, kernel: str | None = None) -> list[tuple[Path, list[str]]]:
    """(source, command without -o) of the three translation units; the kernel's for ``__NPU_ARCH__`` ``arch``, the
    OpDef column ``column`` (IR name -> dtype; the generated kernels stop with #error without one) and the kernel
    entry ``kernel`` (relative to ``op_dir``: the file the product's OpDef config builds, the reference's
    ``INFO.kernels``; None: the op's one entry, op_kernel/<op>.cpp)."""
    op_dir = op_dir.resolve()
    snake = op_dir.name
    kernel = op_dir / (kernel or f"op_kernel/{snake}.cpp")
    tiling = op_dir / "op_host" / "op_tiling" / f"{snake}_tiling.cpp"
    common = [*cxx, *FLAGS, f"-I{INCLUDE}", f"-I{op_dir / 'op_kernel'}", f"-I{op_dir / 'op_host' / 'op_tiling'}",
              f"-I{shared_host_include(op_dir)}"]
    units = [
        (SIM_DIR / "runner.cpp", []),
        (SIM_DIR / "kernel_entry.cpp", [f"-D__NPU_ARCH__={int(arch)}", *column_defines(column or {}),
                                        f'-DOPGEN_SIM_KERNEL_SOURCE="{kernel}"', f"-DOPGEN_SIM_KERNEL={snake}",
                                        "-DOPGEN_SIM_TILING_KEY_SEL"]),
        (SIM_DIR / "tiling_entry.cpp", [f'-DOPGEN_SIM_TILING_SOURCE="{tiling}"',
                                        f"-DOPGEN_SIM_TILING_FUNC=optiling::{op_name}TilingFunc"]),
    ]
    return [(src, [*common, *defines, "-c", str(src)]) for src, defines in units]


def _sources(op_dir: Path) -> list[Path]:
    """Every file a translation unit can read: the twin's C++, the op's generated kernel and host tiling, and the
    shared host and kernel headers beside the op folder."""
    sim = [p for p in SIM_DIR.glob("*") if p.suffix in (".cpp", ".h")] + \
        [p for p in INCLUDE.rglob("*") if p.is_file()]
    op = [p for sub in ("op_kernel", "op_host/op_tiling") for p in (op_dir / sub).rglob("*") if p.is_file()]
    shared = [p for d in (shared_host_include(op_dir), shared_kernel_include(op_dir)) for p in d.glob("*")
              if p.is_file()]
    return sorted(sim) + sorted(op) + sorted(shared)


def cache_key(cxx: list[str], commands: list[list[str]], link: list[str], op_dir: Path) -> str:
    """sha256 of the compiler's identity, the command lines and the sources' contents.

    The op directory's location is left out (its files' names and contents are in), and so is that of the shared
    folder beside it: the same generated op built into another directory, as the tests do, reuses the executable."""
    shared = op_dir.parent / SHARED_DIR
    h = hashlib.sha256()
    # a compiler upgrade behind the same name must rebuild
    version = subprocess.run([*cxx, "--version"], capture_output=True, text=True)
    h.update(version.stdout.encode())
    for cmd in [*commands, link]:
        h.update("\0".join(cmd).replace(str(shared), "<shared>").replace(str(op_dir), "<op_dir>").encode() + b"\n")
    for path in _sources(op_dir):
        name = f"<op_dir>/{path.relative_to(op_dir)}" if path.is_relative_to(op_dir) else \
            f"<shared>/{path.relative_to(shared)}" if path.is_relative_to(shared) else str(path)
        h.update(f"{name}\0".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Twin:
    """The twins of one generated op for one kernel arch: as CANN builds a kernel binary per OpDef column, the twin
    builds one executable per column, the first time a world of that column runs (``opgen.sim.run`` resolves it
    from the world's tensors and the job's inferred outputs)."""
    op_dir: Path
    op_name: str
    arch: int
    ir_names: dict  # aclnn parameter name -> IR name (the reference's IR_NAMES)
    kernel: str | None = None  # the kernel entry the product's OpDef config builds (the reference's INFO.kernels)

    def column(self, inputs: dict, outputs: dict) -> dict[str, str]:
        """IR name -> dtype of one rank's present inputs (name -> CANN dtype) and outputs."""
        return {self.ir_names[n]: d for n, d in {**inputs, **outputs}.items()}

    def exe(self, column: dict[str, str]) -> Path:
        return build(self.op_dir, self.op_name, self.arch, column, self.kernel)


def build_for(op_dir: Path, ref, product: str) -> Twin:
    """The twins of the op for ``product``: its kernel entry (the file its OpDef config builds) compiled for its kernel
    arch, from the op's generated reference (its product facts, kernel entries and IR names); each OpDef column's
    executable is built when a world of it runs."""
    compiler()  # no compiler: TwinUnavailable now, not at the first run
    return Twin(Path(op_dir).resolve(), ref.OP, ref.INFO.fact(product).npu_arch, dict(ref.IR_NAMES),
                ref.INFO.kernels[product])


def build(op_dir: Path, op_name: str, arch: int, column: dict[str, str] | None = None,
          kernel: str | None = None) -> Path:
    """The twin executable of the op generated in ``op_dir`` (``OpName`` as in the tiling function's name), its
    kernel compiled for ``__NPU_ARCH__`` ``arch`` (``ProductFacts.npu_arch`` of the product a world runs on) and
    the OpDef column ``column`` (IR name -> dtype)."""
    cxx = compiler()
    op_dir = op_dir.resolve()
    units = compile_commands(cxx, op_dir, op_name, arch, column, kernel)
    for src, _ in units:
        if not src.is_file():
            raise FileNotFoundError(f"{src}: a translation unit of the twin is missing")
    link = [*cxx, "-pthread"]
    key = cache_key(cxx, [cmd for _, cmd in units], link, op_dir)
    cache = cache_dir()
    exe = cache / f"{op_dir.name}-{int(arch)}-{key[:32]}"
    if exe.is_file():
        return exe
    cache.mkdir(parents=True, exist_ok=True)
    # a private directory, then one rename: parallel sessions never see a half-written executable
    work = Path(tempfile.mkdtemp(prefix=f"{op_dir.name}-", dir=cache))
    try:
        # each object is cached on its own (keyed like the executable): the runner and the tiling unit do not
        # depend on the kernel's arch or OpDef column, so a new column compiles the kernel unit alone
        objects = [cache / "obj" / f"{src.stem}-{cache_key(cxx, [cmd], [], op_dir)[:32]}.o" for src, cmd in units]
        todo = [(cmd, obj) for (_, cmd), obj in zip(units, objects) if not obj.is_file()]
        commands = [cmd + ["-o", str(work / obj.name)] for cmd, obj in todo]
        with ThreadPoolExecutor(max_workers=max(len(commands), 1)) as pool:
            procs = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), commands))
        failed = [(cmd, p) for cmd, p in zip(commands, procs) if p.returncode != 0]
        if failed:
            raise TwinCompileError("\n\n".join(f"{shlex.join(cmd)}\nfailed ({p.returncode}):\n{p.stderr[-12000:]}"
                                               for cmd, p in failed))
        (cache / "obj").mkdir(exist_ok=True)
        for _, obj in todo:
            os.replace(work / obj.name, obj)
        out = work / "twin"
        cmd = [*link, *map(str, objects), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise TwinCompileError(f"{shlex.join(cmd)}\nfailed ({proc.returncode}):\n{proc.stderr[-12000:]}")
        os.replace(out, exe)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exe
