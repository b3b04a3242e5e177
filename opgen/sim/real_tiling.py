"""The real op_host tilings of the hand-written ops (``../shared/cann/ops-transformer.tar.gz``), unmodified, on the
twin's host runtime (``real_host/``): build a tiling-only twin executable and run a job's tiling with it.

    tree = unpack(Path("../shared/cann"), cache)                       # the tarballs, unpacked once (by digest)
    exe = build_tiling(tree, "MoeDistributeDispatchV2", "arch22")      # runner + the real tiling sources
    tilings = tile(exe, ref, case, world, job_dir)                     # rank -> Tiling (with the TilingData bytes)

The real sources compile against the real public CANN headers (``headers.tar.gz``, the include layout an
installed CANN has); ``real_host/`` supplies the out-of-line host libraries they link against (see its README).
Each object is cached on its own under ``$OPGEN_SIM_CACHE`` (``opgen.sim.build.cache_dir``), keyed by the
compiler, the command line, the tarballs' digests and the twin's own sources; compiles run one at a time.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from opgen.core.dtypes import DTYPES, FORMAT_VALUES
from opgen.sim import job as jobs
from opgen.sim.build import SIM_DIR, TwinCompileError, cache_dir, compiler

REAL_HOST = SIM_DIR / "real_host"
LAUNCH_H = SIM_DIR / "include" / "opgen_sim" / "launch.h"
FLAGS = ("-std=c++17", "-O0", "-g0", "-w", "-pthread")
# the version CANN's build writes into version/<pkg>_version.h; the headers' snapshot is of the 9.2 line
VERSION = ("9.2.0", 90200000)
VERSION_PACKAGES = ("runtime", "metadef", "hcomm", "hccl", "opbase", "ge", "asc_devkit", "driver")

# The real host tiling of each op: its op_tiling folder, the sources every arch builds, and the arch folder's own.
# code: mc2/<op>/op_host/CMakeLists.txt (add_modules_sources_with_soc: the op_host sources plus the arch
# directory of the SoC, arch22 for ascend910b / ascend910_93, arch35 for ascend950) and the mc2/common depends.
MC2_COMMON = ("mc2/common/op_host/op_tiling/mc2_tiling_utils.cpp", "mc2/common/op_host/op_tiling/moe_tiling_base.cpp")


@dataclass(frozen=True)
class RealTiling:
    folder: str                       # op_tiling folder in ops-transformer
    common: tuple[str, ...]           # sources every arch compiles (relative to the folder)
    arch: dict                        # arch folder -> its sources (relative to the folder)


REAL_TILINGS = {
    "MoeDistributeDispatchV2": RealTiling(
        "mc2/moe_distribute_dispatch_v2/op_host/op_tiling",
        ("moe_distribute_dispatch_v2_tiling.cpp", "moe_distribute_dispatch_tiling_helper.cpp"),
        {"arch22": ("arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp",),
         "arch35": ("arch35/moe_distribute_dispatch_v2_tiling_arch35.cpp",)}),
    "MoeDistributeCombineV2": RealTiling(
        "mc2/moe_distribute_combine_v2/op_host/op_tiling",
        ("moe_distribute_combine_v2_tiling.cpp", "moe_distribute_combine_tiling_helper.cpp"),
        {"arch22": ("arch22/moe_distribute_combine_tiling_arch22.cpp",),
         "arch35": ("arch35/moe_distribute_combine_tiling_arch35.cpp",)}),
    # CombineAddRmsNorm's tiling calls CombineV2's (MoeDistributeCombineV2TilingFuncA2A3): its op library builds
    # CombineV2's op_tiling sources with its own, so the executable registers both ops' tiling and the runner
    # calls the job's op (its node name).
    # code: mc2/moe_distribute_combine_add_rms_norm/op_host/CMakeLists.txt (moe_distribute_combine_add_rms_norm_depends
    #       ... mc2/moe_distribute_combine_v2); op_tiling/arch22/moe_distribute_combine_add_rms_norm_tiling_a2a3.cpp
    "MoeDistributeCombineAddRmsNorm": RealTiling(
        "mc2/moe_distribute_combine_add_rms_norm/op_host/op_tiling",
        ("moe_distribute_combine_add_rms_norm_tiling.cpp",
         "../../../moe_distribute_combine_v2/op_host/op_tiling/moe_distribute_combine_v2_tiling.cpp",
         "../../../moe_distribute_combine_v2/op_host/op_tiling/moe_distribute_combine_tiling_helper.cpp"),
        {"arch22": ("arch22/moe_distribute_combine_add_rms_norm_tiling_a2a3.cpp",
                    "../../../moe_distribute_combine_v2/op_host/op_tiling/arch22/"
                    "moe_distribute_combine_tiling_arch22.cpp"),
         "arch35": ("arch35/moe_distribute_combine_add_rms_norm_tiling_a5.cpp",
                    "../../../moe_distribute_combine_v2/op_host/op_tiling/arch35/"
                    "moe_distribute_combine_tiling_arch35.cpp")}),
    # the Ascend 950 Setup/Teardown family: the arch35 tiling only (arch22 is their Atlas A3 tiling)
    "MoeDistributeCombineTeardown": RealTiling(
        "mc2/moe_distribute_combine_teardown/op_host/op_tiling",
        ("moe_distribute_combine_teardown_tiling.cpp", "moe_distribute_combine_teardown_tiling_base.cpp"),
        {"arch35": ("arch35/moe_distribute_combine_teardown_tiling_arch35.cpp",)}),
    "MoeDistributeCombineSetup": RealTiling(
        "mc2/moe_distribute_combine_setup/op_host/op_tiling",
        ("moe_distribute_combine_setup_tiling.cpp", "moe_distribute_combine_setup_tiling_base.cpp"),
        {"arch35": ("arch35/moe_distribute_combine_setup_tiling_arch35.cpp",)}),
    "MoeDistributeDispatchTeardown": RealTiling(
        "mc2/moe_distribute_dispatch_teardown/op_host/op_tiling",
        ("moe_distribute_dispatch_teardown_tiling.cpp", "moe_distribute_dispatch_teardown_tiling_base.cpp"),
        {"arch35": ("arch35/moe_distribute_dispatch_teardown_tiling_arch35.cpp",)}),
    "MoeDistributeDispatchSetup": RealTiling(
        "mc2/moe_distribute_dispatch_setup/op_host/op_tiling",
        ("moe_distribute_dispatch_setup_tiling.cpp", "moe_distribute_dispatch_setup_tiling_base.cpp"),
        {"arch35": ("arch35/moe_distribute_dispatch_setup_tiling_arch35.cpp",)}),
}
# asc-devkit's own sources of the host libraries the twin does not re-implement, compiled unchanged
ASC_SOURCES = ("impl/utils/tiling/platform/platform_ascendc.cpp",)


class RealCannMissing(FileNotFoundError):
    """../shared/cann (the real CANN tarballs) is not beside the clone."""


@dataclass(frozen=True)
class CannTree:
    subset: Path      # headers.tar.gz unpacked: cann_subset/<owner>+<name>
    ops: Path         # ops-transformer.tar.gz unpacked: ops-transformer/
    layout: Path      # the installed-CANN include layout and generated headers (built here)
    digest: str       # both tarballs' digests: the cache key of everything compiled from them

    def repo(self, name: str) -> Path:
        hits = sorted(self.subset.glob(f"*+{name}"))
        if not hits:
            raise RealCannMissing(f"{self.subset}: no {name} snapshot in the CANN headers")
        return hits[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _unpack_once(tarball: Path, root: Path, name: str, inner: str) -> Path:
    """``tarball`` unpacked under root/<name>-<digest>/ (atomic: parallel sessions reuse the first one's)."""
    target = root / f"{name}-{_digest(tarball)}"
    if not (target / inner).is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        subprocess.run(["tar", "xzf", str(tarball), "-C", str(tmp)], check=True)
        try:
            tmp.rename(target)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    if not (target / inner).is_dir():
        raise RealCannMissing(f"{tarball} did not unpack to {inner}/")
    return target / inner


def unpack(shared: Path, root: Path) -> CannTree:
    """The CANN headers and the hand-written ops of ``shared`` (``../shared/cann``) unpacked under ``root``."""
    headers, ops = shared / "headers.tar.gz", shared / "ops-transformer.tar.gz"
    for tarball in (headers, ops):
        if not tarball.is_file():
            raise RealCannMissing(f"{tarball} not found: the real op tilings need ../shared/cann beside the clone")
    root.mkdir(parents=True, exist_ok=True)
    subset = _unpack_once(headers, root, "headers", "cann_subset")
    ops_dir = _unpack_once(ops, root, "ops-transformer", "ops-transformer")
    digest = hashlib.sha256((_digest(headers) + _digest(ops)).encode()).hexdigest()[:16]
    tree = CannTree(subset, ops_dir, root / f"layout-{digest}", digest)
    _layout(tree)
    return tree


def _layout(tree: CannTree) -> None:
    """What an installed CANN has and the tarballs lack: asc-devkit's include/tiling links (its cmake lists
    them: CREATE_LINK in impl/adv_api/cmake/*_headers.cmake) and version/<pkg>_version.h. (The twin's launch.h is
    not in it: the layout is shared by every clone using the cache, ``_launch_dir``.)"""
    done = tree.layout / ".done"
    if done.is_file():
        return
    tmp = Path(tempfile.mkdtemp(prefix=".layout-", dir=tree.layout.parent))
    asc = tree.repo("asc-devkit")
    inst = tmp / "inst" / "asc" / "include"
    inst.mkdir(parents=True)
    # adv_api: a folder of links to asc-devkit's entries, which the kernel header links then go into
    (inst / "adv_api").mkdir()
    for entry in sorted((asc / "include" / "adv_api").iterdir()):
        (inst / "adv_api" / entry.name).symlink_to(entry)
    (inst / "tiling").mkdir()
    for entry in sorted((asc / "include").iterdir()):  # the rest of the install root
        if not (inst / entry.name).exists():
            (inst / entry.name).symlink_to(entry)
    (inst.parent / "impl").symlink_to(asc / "impl")
    for cmake in ("kernel_headers.cmake", "tiling_headers.cmake"):
        text = (asc / "impl" / "adv_api" / "cmake" / cmake).read_text(encoding="utf-8")
        for src, dest in re.findall(r"CREATE_LINK\s+(\S+)\s+\$\{ASCENDC_INSTALL_BASE_PATH\}/asc/include/(\S+)", text):
            link = inst / dest
            if link.exists() or link.is_symlink():
                continue
            _real_dir(link.parent)
            link.symlink_to(src)
    (tmp / "shim").mkdir()
    (tmp / "shim" / "tiling").symlink_to(Path("..") / "inst" / "asc" / "include" / "tiling")
    (tmp / "shim" / "ascendc" / "host_api").mkdir(parents=True)  # the installed host_api folder
    for name in ("tiling", "log"):
        (tmp / "shim" / "ascendc" / "host_api" / name).symlink_to(asc / "include" / "utils" / name)
    # kernel_tiling/kernel_tiling.h: CANN's build generates it from the adv_api tiling data headers
    (tmp / "gen" / "kernel_tiling").mkdir(parents=True)
    subprocess.run([sys.executable, "impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py", "include/adv_api",
                    str(tmp / "gen" / "kernel_tiling" / "kernel_tiling.h")], cwd=asc, check=True,
                   capture_output=True)
    version = tmp / "gen" / "version"
    version.mkdir()
    text, num = VERSION
    major, minor, patch = text.split(".")
    for pkg in VERSION_PACKAGES:
        p = pkg.upper()
        (version / f"{pkg}_version.h").write_text(
            f"#ifndef {p}_VERSION_H\n#define {p}_VERSION_H\n#define {p}_VERSION_STR \"{text}\"\n"
            f"#define {p}_MAJOR {major}\n#define {p}_MINOR {minor}\n#define {p}_PATCH {patch}\n"
            f"#define {p}_PRERELEASE \"\"\n#define {p}_VERSION_NUM {num}\n#define {p}_TIMESTAMP 0\n#endif\n")
    (tmp / ".done").write_text("")
    try:
        tmp.rename(tree.layout)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)


def _real_dir(path: Path) -> None:
    """``path`` as a real folder: a linked folder becomes a folder of links to its entries (links go inside)."""
    if path.is_symlink():
        target = path.resolve()
        path.unlink()
        path.mkdir()
        for entry in sorted(target.iterdir()):
            (path / entry.name).symlink_to(entry)
    elif not path.is_dir():
        _real_dir(path.parent)
        path.mkdir()


def _launch_dir() -> Path:
    """A folder holding only the twin's launch.h (the twin's other headers would shadow CANN's): a copy named by its
    content. A link in the shared cache would point into the clone that made it, which other clones then include
    (changed or deleted since: measured, a layout linking a removed worktree's launch.h failed every real tiling)."""
    data = LAUNCH_H.read_bytes()
    folder = cache_dir() / "real" / f"launch-{hashlib.sha256(data).hexdigest()[:16]}"
    header = folder / "opgen_sim" / "launch.h"
    if not header.is_file():
        header.parent.mkdir(parents=True, exist_ok=True)
        tmp = header.with_name(f".launch.h.{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, header)
    return folder


def host_includes(tree: CannTree) -> list[str]:
    """The include path of a host TU of the real ops: the public headers in an installed CANN's layout, then the
    folders ops-transformer's cmake adds for op_host code (cmake/variables.cmake)."""
    asc, meta, ge = tree.repo("asc-devkit"), tree.repo("metadef"), tree.repo("ge")
    opb, rt = tree.repo("opbase"), tree.repo("runtime")
    sec = tree.repo("libboundscheck") / "include"
    lay, ops = tree.layout, tree.ops
    dirs = [sec, meta / "inc", meta / "inc/external", meta / "inc/external/asc", meta / "inc/common/util",
            ge / "inc/graph_metadef/external", lay / "shim", lay / "gen", asc, asc / "include/utils",
            asc / "include/utils/tiling", asc / "include/utils/tiling/platform",
            asc / "include/adv_api/hccl/internal/hcomm/pkg_inc", asc / "include/adv_api/hccl/internal/hcomm",
            rt / "pkg_inc", rt / "pkg_inc/base", rt / "pkg_inc/runtime", rt / "include/external",
            rt / "include/dfx", opb / "include", opb / "include/op_common", opb / "include/op_common/op_host",
            opb / "include/nnopbase", ops, ops / "common/include", ops / "common/include/external",
            ops / "common/include/common", ops / "common/include/static", ops / "common/stub/op_tiling",
            ops / "common/stub/op_api", ops / "mc2/common", ops / "mc2/common/inc", ops / "mc2/common/utils",
            ops / "mc2/common/op_host/op_tiling", ops / "mc2/common/op_kernel", ops / "mc2/common/op_host",
            ops / "mc2/3rd", ops / "mc2", _launch_dir()]
    return [f"-I{d}" for d in dirs]


def _units(tree: CannTree, op: str, arch: str) -> list[tuple[Path, list[str]]]:
    """(source, extra flags) of every host TU of the executable but the runner."""
    real = REAL_TILINGS[op]
    folder = tree.ops / real.folder
    if arch not in real.arch:
        raise ValueError(f"{op}: no real tiling for the arch folder {arch!r} (known: {sorted(real.arch)})")
    units = []
    for src in (*real.common, *real.arch[arch]):
        # a partner op's source (CombineV2's under CombineAddRmsNorm) compiles with its own op_tiling folder, as
        # in that op's build: the same command, so the same cached object
        path = os.path.normpath(folder / src)
        own = next((p for p in Path(path).parents if p.name == "op_tiling"), folder)
        units.append((Path(path), [f"-I{own}", f"-I{Path(path).parent}"]))
    units += [(tree.ops / src, [f"-I{(tree.ops / src).parent}"]) for src in MC2_COMMON]
    units += [(tree.repo("asc-devkit") / src, [f"-I{(tree.repo('asc-devkit') / src).parent}"]) for src in ASC_SOURCES]
    units += [(src, []) for src in sorted(REAL_HOST.glob("*.cpp"))]
    return units


def _key(cxx: list[str], cmd: list[str], tree: CannTree, sources: list[Path]) -> str:
    h = hashlib.sha256()
    h.update(subprocess.run([*cxx, "--version"], capture_output=True, text=True).stdout.encode())
    h.update(tree.digest.encode())
    h.update("\0".join(cmd).replace(str(tree.subset.parent.parent), "<cann>").encode())
    for path in sources:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:32]


def _compile(cmd: list[str], obj: Path) -> None:
    obj.parent.mkdir(parents=True, exist_ok=True)
    tmp = obj.with_name(f".{obj.name}.{os.getpid()}")
    proc = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise TwinCompileError(f"{shlex.join(cmd)}\nfailed ({proc.returncode}):\n{proc.stderr[-12000:]}")
    os.replace(tmp, obj)


def tiling_objects(tree: CannTree, op: str, arch: str) -> list[Path]:
    """The compiled host objects of the real ``op`` (``REAL_TILINGS``) for the arch folder ``arch`` (``arch22``:
    Atlas A2 and A3, ``arch35``: Ascend 950) and of the twin's host runtime: a tiling TU (``OpgenSimTiling``) for
    any runner; link with ``-ldl``."""
    cxx = compiler()
    twin_own = sorted(REAL_HOST.glob("*")) + [LAUNCH_H]
    objects = []
    for src, extra in _units(tree, op, arch):
        cmd = [*cxx, *FLAGS, *extra, *host_includes(tree), "-c", str(src)]
        obj = cache_dir() / "real" / "obj" / f"{src.stem}-{_key(cxx, cmd, tree, [src, *twin_own])}.o"
        if not obj.is_file():
            _compile(cmd, obj)
        objects.append(obj)
    return objects


def build_tiling(tree: CannTree, op: str, arch: str) -> Path:
    """The tiling-only twin executable of the real ``op`` for ``arch`` (``tiling_objects``): ``<exe> <job dir>``
    tiles every rank of the job and writes each rank's TilingData (``tiling_data R HEX``)."""
    cxx = compiler()
    objects = tiling_objects(tree, op, arch)
    runner = SIM_DIR / "runner.cpp"
    cmd = [*cxx, "-std=c++17", "-O0", "-g0", "-pthread", f"-I{SIM_DIR / 'include'}", "-DOPGEN_SIM_TILING_ONLY",
           "-c", str(runner)]
    sim_sources = [runner, *sorted((SIM_DIR / "include" / "opgen_sim").glob("*.h"))]
    cache = cache_dir() / "real"
    obj = cache / "obj" / f"runner-tiling-{_key(cxx, cmd, tree, sim_sources)}.o"
    if not obj.is_file():
        _compile(cmd, obj)
    objects.append(obj)
    link = [*cxx, "-pthread", *map(str, objects), "-ldl"]
    exe = cache / f"{op}-{arch}-{hashlib.sha256(' '.join(link).encode()).hexdigest()[:24]}"
    if not exe.is_file():
        tmp = exe.with_name(f".{exe.name}.{os.getpid()}")
        proc = subprocess.run([*link, "-o", str(tmp)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise TwinCompileError(f"{shlex.join(link)}\nfailed ({proc.returncode}):\n{proc.stderr[-12000:]}")
        os.replace(tmp, exe)
    return exe


def arch_of(ref, product: str) -> str:
    """The arch folder of the real tiling a product builds: the folder of its OpDef config's kernel entry
    (op_kernel/arch22/..._a3.cpp -> arch22), as CANN's build picks the op_host arch folder of the SoC; an entry at
    op_kernel/ itself includes the arch folder's kernel by __NPU_ARCH__ (the Ascend 950 Setup/Teardown ops): the
    product's kernel folder."""
    folder = Path(ref.INFO.kernels[product]).parent.name
    return ref.INFO.fact(product).kernel_dir if folder == "op_kernel" else folder


@dataclass
class RealTilingResult:
    status: str                 # ok | tiling | fault
    tilings: dict               # rank -> jobs.Tiling (ok ranks: key, block dim, workspace)
    data: dict                  # rank -> the TilingData bytes (status ok)
    faults: list                # what the twin could not model
    aicpu_blocks: dict = field(default_factory=dict)  # rank -> the context's AI CPU block count (status ok)
    logs: dict = field(default_factory=dict)          # rank -> what an accepting tiling logged (status ok)

    def errors_logged(self, rank: int) -> list[str]:
        """The ERROR lines an accepted rank's tiling logged: a check that reported a failure the call did not take."""
        return [line for line in self.logs.get(rank, "").splitlines() if line.startswith("[ERROR]")]


def write_call_job(ref, product: str, attrs: dict, inputs: dict, outputs: dict, job_dir: Path,
                   env: dict | None = None, aiv: int = jobs.DEFAULT_AIV) -> None:
    """A one-rank tiling job of a single call (a negative case): ``attrs`` every attribute by name (None: not
    given), ``inputs`` name -> (CANN dtype, shape, format) or None, ``outputs`` name -> (CANN dtype, shape),
    ``env`` the environment (None: the op's defaults), ``aiv`` the platform's vector cores.  The tensors' files
    are named but not written: a tiling-only runner reads descriptors only."""
    lines = [f"# {ref.OP} single call (opgen.sim.real_tiling)",
             *jobs.header_lines(ref, product, 1, ref.ENV if env is None else env, aiv, jobs.DEFAULT_TIMEOUT),
             "rank 0",
             *jobs.attr_lines(ref, attrs)]
    for i, name in enumerate(ref.INPUTS):
        meta = inputs.get(name)
        if meta is None:
            lines.append(f"input {i} {name} -")
            continue
        dtype, shape, fmt = meta
        lines.append(f"input {i} {name} {DTYPES[dtype].ge_value} {FORMAT_VALUES[fmt]} {jobs._ints(shape)} "
                     f"r0.in{i}.bin")
    for i, name in enumerate(ref.OUTPUTS):
        dtype, shape = outputs[name]
        lines.append(f"output {i} {name} {DTYPES[dtype].ge_value} {jobs.FORMAT_ND} {jobs._ints(shape)} r0.out{i}.bin")
    lines.append("end")
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "job.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def tile(exe: Path, ref, case: dict, world, job_dir: Path, *, aiv: int = jobs.DEFAULT_AIV,
         **platform) -> RealTilingResult:
    """Every rank of one world tiled by the real tiling ``exe`` (``build_tiling``), through the job protocol, on a
    platform of ``aiv`` vector cores (``platform``: ``jobs.write_job``'s window / hccl_buffsize / platform_ub)."""
    jobs.write_job(ref, case, world, job_dir, aiv=aiv, **platform)
    return run_tiling(exe, job_dir)


def run_tiling(exe: Path, job_dir: Path) -> RealTilingResult:
    """The tiling-only runner ``exe`` on the job written in ``job_dir``."""
    (job_dir / "result.txt").unlink(missing_ok=True)
    proc = subprocess.run([str(exe), str(job_dir)], cwd=job_dir, capture_output=True, text=True, timeout=120)
    result_file = job_dir / "result.txt"
    if proc.returncode == 3 or not result_file.is_file():
        raise jobs.TwinError(f"the tiling runner failed ({proc.returncode}) on {job_dir}:\n{proc.stderr[-4000:]}")
    text = result_file.read_text(encoding="utf-8")
    parsed = jobs.parse_result(text)
    data, aicpu, logs = {}, {}, {}
    for line in text.splitlines():
        tok = line.split()
        if len(tok) == 3 and tok[0] == "tiling_data":
            data[int(tok[1])] = b"" if tok[2] == "_" else bytes.fromhex(tok[2])
        elif len(tok) == 4 and tok[0] == "tiling_context":
            aicpu[int(tok[1])] = int(tok[2])
        elif len(tok) == 3 and tok[0] == "tiling_log":
            logs[int(tok[1])] = bytes.fromhex(tok[2]).decode("utf-8", "replace")
    return RealTilingResult(parsed.status, parsed.tilings, data, parsed.faults, aicpu, logs)
