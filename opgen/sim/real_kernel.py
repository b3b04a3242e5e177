"""The hand-written kernel entries of the real ops (``../shared/cann/ops-transformer.tar.gz``), unmodified, compiled
as the twin's kernel unit for one template tiling key.

    obj = kernel_object(ops_root, ref, "ascend910_93", key=512, column={"x": "bfloat16", "expand_x": "bfloat16"})

``ops_root`` is the unpacked ``ops-transformer/``; the entry is the file the product's OpDef config builds (the
generated reference's ``INFO.kernels``, the same path in the real op folder: ``mc2/<op>/op_kernel/arch22/..._a3.cpp``).
CANN builds one kernel binary per selected template-argument combination and OpDef column; the twin builds the
instance of one tiling key (``-DOPGEN_SIM_TILING_KEY``, decoded as ``include/opgen_sim/tiling_key.h`` says) with
the column's ``DTYPE_<NAME>`` / ``ORIG_DTYPE_<NAME>``, against the twin's Ascend C headers (``include/``). The include
path is the entry's own folder and its op_kernel folder, as the op's kernel build has them. Objects are cached under
``opgen.sim.build.cache_dir()`` keyed by the compiler, the command line and every source the unit can read.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from opgen.sim.build import FLAGS, INCLUDE, SIM_DIR, TwinCompileError, cache_dir, column_defines, compiler

MC2 = "mc2"
# The real entries keyed by tiling-key numbers (`if (TILING_KEY_IS(10000)) ... else if ...`, no ASCENDC_TPL_ARGS_DECL
# template): the twin builds the binary of the tiling's key with -DOPGEN_SIM_TILING_KEY_IS (opgen_sim/tiling_key_is.h).
# code: mc2/moe_distribute_dispatch_teardown/op_kernel/moe_distribute_dispatch_teardown.cpp,
#       mc2/moe_distribute_dispatch_setup/op_kernel/moe_distribute_dispatch_setup.cpp
TILING_KEY_IS_OPS = frozenset({"MoeDistributeDispatchTeardown", "MoeDistributeDispatchSetup"})


def entry_path(ops_root: Path, ref, product: str) -> Path:
    """The real kernel entry the product's OpDef config builds for the op of ``ref``."""
    return ops_root / MC2 / _snake(ref) / ref.INFO.kernels[product]


def _snake(ref) -> str:
    # the op folder: the generated op's directory name, the real op's folder under mc2/ (same snake_case name)
    return Path(ref.__file__).resolve().parent.name


def kernel_command(cxx: list[str], entry: Path, arch: int, key: int, column: dict[str, str],
                   keyed_by_number: bool = False) -> list[str]:
    """The kernel unit's command line (without -o) for the entry's instance of tiling key ``key`` (an entry keyed by
    ``TILING_KEY_IS``: ``keyed_by_number``)."""
    op_kernel = next(p for p in entry.parents if p.name == "op_kernel")
    # the op build injects the tiling data definitions into the kernel source with -include (code: cmake/
    # func_utest.cmake: "在 NPU 编译时, 编译框架使用 ccec 编译器并使用 -include 编译选项注入所需的多个 TilingData 定义头文件")
    return [*cxx, *FLAGS, f"-I{INCLUDE}", f"-I{entry.parent}", f"-I{op_kernel}", "-include", "kernel_tiling/kernel_tiling.h",
            f"-D__NPU_ARCH__={int(arch)}",
            *column_defines(column), f'-DOPGEN_SIM_KERNEL_SOURCE="{entry}"',
            f"-DOPGEN_SIM_KERNEL={op_kernel.parent.name}",
            f"-DOPGEN_SIM_TILING_KEY{'_IS' if keyed_by_number else ''}={int(key)}",
            "-c", str(SIM_DIR / "kernel_entry.cpp")]


def _sources(entry: Path) -> list[Path]:
    """What the unit can read: the twin's headers and entry, and the real mc2 kernel folders (the entries include
    their partner op's and mc2/common's headers)."""
    mc2 = next(p for p in entry.parents if p.name == MC2)
    real = [p for p in mc2.glob("*/op_kernel/**/*") if p.is_file()] + \
        [p for p in (mc2 / "common" / "op_kernel").rglob("*") if p.is_file()]
    twin = [SIM_DIR / "kernel_entry.cpp"] + [p for p in INCLUDE.rglob("*") if p.is_file()]
    return sorted(twin) + sorted(set(real))


def kernel_object(ops_root: Path, ref, product: str, key: int, column: dict[str, str]) -> Path:
    """The compiled kernel unit of the real entry of ``ref``'s op for ``product``, instance of tiling ``key``, OpDef
    column ``column`` (IR name -> dtype); cached."""
    cxx = compiler()
    entry = entry_path(Path(ops_root).resolve(), ref, product)
    if not entry.is_file():
        raise FileNotFoundError(f"{entry}: the real kernel entry of {ref.OP} for {product} is missing")
    cmd = kernel_command(cxx, entry, ref.INFO.fact(product).npu_arch, key, column, ref.OP in TILING_KEY_IS_OPS)
    h = hashlib.sha256()
    h.update(subprocess.run([*cxx, "--version"], capture_output=True, text=True).stdout.encode())
    root = str(Path(ops_root).resolve())
    h.update("\0".join(cmd).replace(root, "<ops>").encode())
    for path in _sources(entry):
        h.update(str(path).replace(root, "<ops>").encode() + b"\0")
        h.update(path.read_bytes())
    out = cache_dir() / "obj" / f"real-{entry.stem}-{int(key)}-{h.hexdigest()[:32]}.o"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=".o", dir=out.parent)
    os.close(fd)
    try:
        proc = subprocess.run([*cmd, "-o", tmp], capture_output=True, text=True)
        if proc.returncode != 0:
            raise TwinCompileError(f"{shlex.join(cmd)}\nfailed ({proc.returncode}):\n{proc.stderr[-12000:]}")
        os.replace(tmp, out)  # one rename: parallel sessions never see half an object
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
