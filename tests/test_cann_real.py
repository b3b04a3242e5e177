"""The committed generated C++ (generated/<op>/) against the real public CANN headers.

opgen's own declarations (opgen/sim/include) are an imitation of CANN; this compiles the committed generated
files with ``../shared/cann/tools/cann_syntax_check.sh`` (``g++ -fsyntax-only``) against the public CANN headers
of ``../shared/cann/headers.tar.gz``, which live beside the clone (developers' machines and CI), not in it.

- host files (``op_host/*.cpp``, ``op_host/op_tiling/*.cpp``) and op_api files (``op_api/*.cpp``): once each.  The
  script passes the ``--arch`` defines only to kernel compiles, so these do not depend on the arch.
- kernels: each kernel entry an OpDef config names (``opFile.value``: ``op_kernel/<arch dir>/<opFile>.cpp``, none:
  ``op_kernel/<op>.cpp``), once per arch of the SoCs whose configs name it: ``dav-2201-vec`` for ascend910b /
  ascend910_93, ``dav-3510-vec`` for ascend950.  The FP8 / HiF8 / FP4 / E8M0 types and casts exist
  only for ``__NPU_ARCH__ == 3510``; the generated kernels guard what names them (``opgen.emit.kernel.ArchGuards``),
  and ``test_an_arch35_type_in_a_2201_kernel_fails`` shows the 2201 check is not vacuous.

The headers are unpacked once per session into ``$OPGEN_CANN_CACHE`` (kept across sessions, keyed by the
tarball's hash; the script's ``--work`` dirs, whose kernel stub takes 20-30 s to grow, are kept there too) or
else the pytest tmp dir.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen.core.layout import SHARED_DIR, shared_host_include

from .conftest import ROOT, SPECS, load_ok
from .real_cann import HEADERS, SHARED_CANN, cache_root, unpacked

SCRIPT = SHARED_CANN / "tools" / "cann_syntax_check.sh"
GENERATED = ROOT / "generated"

# the kernel arch each SoC's vector cores compile for
SOC_ARCH = {"ascend910b": "dav-2201-vec", "ascend910_93": "dav-2201-vec", "ascend950": "dav-3510-vec"}
# kernel archs checked here: every arch of a product the ops ship for
KERNEL_ARCHS = ("dav-2201-vec", "dav-3510-vec")
# where each SoC's kernel entries live when its config names an opFile (the real ops' op_kernel/arch22, arch35)
SOC_KERNEL_DIR = {"ascend910b": "arch22", "ascend910_93": "arch22", "ascend950": "arch35"}

_missing = [t for t in ("g++", "python3", "bash", "tar") if shutil.which(t) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not SHARED_CANN.is_dir(),
                       reason="../shared/cann not found: the real-CANN compile checks need the CANN headers "
                              "beside the clone"),
    pytest.mark.skipif(bool(_missing), reason=f"the real-CANN compile checks need {', '.join(_missing)}"),
]

# generated files known to fail against the real headers, run as xfail(strict=True):
# {(op, path in the op dir, kernel arch or None): the real error}.  None today: every host, op_api and kernel
# file passes, each kernel for every arch its products need.
KNOWN_FAILURES: dict[tuple[str, str, str | None], str] = {}


def op_dirs() -> list[Path]:
    return sorted(p.parent for p in GENERATED.glob("*/MANIFEST.json") if p.parent.name != SHARED_DIR)


def op_entries(op_dir: Path) -> dict[str, list[str]]:
    """Kernel entry (path in the op dir) -> the SoCs whose OpDef configs name it, read from the op's def as CANN's
    build reads it: ``AddConfig("<soc>", cfg)``, the config function that fills ``cfg``, its ``opFile.value``."""
    text = (op_dir / "op_host" / f"{op_dir.name}_def.cpp").read_text(encoding="utf-8")
    out: dict[str, list[str]] = {}
    for soc, var in re.findall(r'AddConfig\(\s*"(\w+)",\s*(\w+)\)', text):
        fn = re.search(rf"(\w+)\({var}\);", text).group(1)
        body = text[text.index(f"static void {fn}("):]
        body = body[:body.index("\n    }\n")]
        op_file = re.search(r'ExtendCfgInfo\("opFile\.value", "(\w+)"\)', body)
        rel = f"op_kernel/{SOC_KERNEL_DIR[soc]}/{op_file.group(1)}.cpp" if op_file else f"op_kernel/{op_dir.name}.cpp"
        out.setdefault(rel, []).append(soc)
    return out


def cases():
    out = []
    for op_dir in op_dirs():
        op = op_dir.name
        host = sorted([*op_dir.glob("op_host/*.cpp"), *op_dir.glob("op_host/op_tiling/*.cpp")])
        for kind, files in (("host", host), ("aclnn", sorted(op_dir.glob("op_api/*.cpp")))):
            for f in files:
                out.append((op, kind, f.relative_to(op_dir).as_posix(), None))
        for rel, socs in sorted(op_entries(op_dir).items()):
            for arch in sorted({SOC_ARCH[s] for s in socs if s in SOC_ARCH} & set(KERNEL_ARCHS)):
                out.append((op, "kernel", rel, arch))
    params = []
    for op, kind, rel, arch in out:
        marks = []
        reason = KNOWN_FAILURES.get((op, rel, arch))
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(op, kind, rel, arch, marks=marks, id=f"{op}/{rel}" + (f"@{arch}" if arch else "")))
    return params


@pytest.fixture(scope="session")
def cann(tmp_path_factory):
    """(repos dir, work root): the headers unpacked once (cached by the tarball's hash)."""
    root = cache_root(tmp_path_factory.mktemp("cann"))
    repos = unpacked(HEADERS, root, "cann_subset")
    digest = repos.parent.name.rsplit("-", 1)[1]
    return repos, root / f"work-{digest}"


def syntax_check(cann, op_dir: Path, rel: str, arch: str | None, work: str,
                 defines=()) -> subprocess.CompletedProcess:
    repos, work_root = cann
    cmd = ["bash", str(SCRIPT), "--repos", str(repos), "--ops-transformer", str(repos / "mirror-cann+ops-transformer"),
           "--work", str(work_root / work), "--def", f"op_host/{op_dir.name}_def.cpp",
           "-I", "op_kernel", "-I", "op_host", "-I", "op_host/op_tiling", "-I", str(shared_host_include(op_dir)),
           *defines, rel]
    if arch:
        cmd[2:2] = ["--arch", arch]
    return subprocess.run(cmd, cwd=op_dir, capture_output=True, text=True, timeout=600)


def kernel_columns(op_name: str, rel: str, arch: str) -> list[list[str]]:
    """The -D flags of the OpDef columns whose builds instantiate every kernel instance of the entry ``rel`` for the
    arch (opgen.emit.kernel.column_builds over the SoCs whose configs name it), as CANN's op build defines them."""
    from opgen.emit.kernel import column_builds
    from opgen.sim.build import column_defines

    op = next(o for o in map(load_ok, SPECS) if o.snake_name == op_name)
    socs = op_entries(GENERATED / op_name)[rel]
    cover, empty = column_builds(op, socs, int(arch.split("-")[1]))
    assert cover and not empty, (op_name, arch, empty)
    return [column_defines({op.tensor(t).ir_name: d for t, d in col.items()}) for col in cover]


def instantiated(op_name: str, rel: str, tmp: Path) -> tuple[Path, str]:
    """A copy of the op folder (and the shared folder beside it) holding, beside the kernel entry ``rel``, a unit
    that includes it and instantiates it for every template tiling key combination its ASCENDC_TPL_SEL lists (the
    kernel plan's combinations of its SoCs, tests/test_tpl_key.py), as CANN's kernel build instantiates the
    template: the op folder and that unit's path in it. Without it g++ would check the entry's template body
    unevaluated."""
    from opgen.emit.kernel import plan_instances

    op = next(o for o in map(load_ok, SPECS) if o.snake_name == op_name)
    socs = set(op_entries(GENERATED / op_name)[rel])
    combos = sorted({i.key_values for i in plan_instances(op).instances if i.products & socs})
    shutil.copytree(GENERATED / op_name, tmp / op_name)
    shutil.copytree(GENERATED / SHARED_DIR, tmp / SHARED_DIR)
    params = ", ".join(["GM_ADDR"] * (len(op.inputs) + len(op.outputs) + 2))
    lines = [f'#include "{Path(rel).name}"'] + [
        f"template __global__ __aicore__ void {op_name}<{', '.join(f'{v}U' for v in c)}>({params});" for c in combos]
    unit = rel.removesuffix(".cpp") + "_instances.cpp"
    (tmp / op_name / unit).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp / op_name, unit


@pytest.mark.parametrize("op,kind,rel,arch", cases())
def test_generated_file_compiles_against_real_cann(cann, op, kind, rel, arch, tmp_path):
    # host and op_api files share one work dir (the arch does not reach them), each kernel arch has its own; a
    # kernel is checked once per OpDef column of a cover, two at a time, each of the two in a work dir of its own:
    # the script grows its intrinsic stub and writes its generated headers there, which two checks at once would
    # race on (one reads a stub the other is rewriting)
    builds = kernel_columns(op, rel, arch) if kind == "kernel" else [[]]
    workers = min(2, len(builds))
    # a kernel entry is a template over the template tiling key: checked instantiated for each listed combination
    op_dir, unit = instantiated(op, rel, tmp_path) if kind == "kernel" else (GENERATED / op, rel)

    def check(lane: int) -> list[tuple[list[str], subprocess.CompletedProcess]]:
        work = f"{arch}-{lane}" if arch else "host"
        return [(d, syntax_check(cann, op_dir, unit, arch, work, d)) for d in builds[lane::workers]]

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = [r for lane in pool.map(check, range(workers)) for r in lane]
    for defines, res in results:
        out = res.stdout + res.stderr
        assert res.returncode == 0, " ".join(defines) + "\n" + out[-6000:]
        assert re.search(rf"^PASS \[{kind}\] {re.escape(unit)} ", res.stdout, re.M), out[-3000:]


def test_the_set_of_checked_files_covers_every_op():
    ops = op_dirs()
    assert len(ops) == len(list((ROOT / "specs").glob("*.spec")))
    params = cases()
    for op_dir in ops:
        entries = op_entries(op_dir)
        socs = {s for v in entries.values() for s in v}
        assert socs, f"no AddConfig(...) in {op_dir.name}'s OpDef"
        # the def and the tree agree: every entry a config names exists, and no other entry does
        assert sorted(entries) == sorted(p.relative_to(op_dir).as_posix() for p in op_dir.glob("op_kernel/**/*.cpp"))
        kinds = {p.values[1] for p in params if p.values[0] == op_dir.name}
        assert {"host", "aclnn"} <= kinds, op_dir.name
        if "ascend950" in socs:
            assert "kernel" in kinds, op_dir.name


def test_an_undeclared_name_in_a_generated_file_fails(cann, tmp_path):
    """The check is not vacuous: one unknown identifier in a copy of a host file fails it, naming the line."""
    op = "moe_distribute_dispatch_v2"
    op_dir = tmp_path / op
    shutil.copytree(GENERATED / op, op_dir)
    shutil.copytree(GENERATED / SHARED_DIR, tmp_path / SHARED_DIR)  # the check core's shared header
    tiling = op_dir / "op_host" / "op_tiling" / f"{op}_tiling.cpp"
    tiling.write_text(tiling.read_text(encoding="utf-8") + "\nstatic int opgenBroken = opgenUndeclaredName;\n",
                      encoding="utf-8")
    res = syntax_check(cann, op_dir, tiling.relative_to(op_dir).as_posix(), None, "host")
    assert res.returncode != 0, res.stdout
    assert "FAIL [host]" in res.stdout and "opgenUndeclaredName" in res.stdout, res.stdout


def unguarded_kernel(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of DispatchV2 whose kernel compiles its arch35 code everywhere (the guards of its body header
    op_kernel/<op>_gen.h made always-true), and its Atlas A3 entry."""
    op = "moe_distribute_dispatch_v2"
    op_dir = tmp_path / op
    shutil.copytree(GENERATED / op, op_dir)
    # the shared check-core header the op's check.h includes, beside the op folder as in generated/
    shutil.copytree(GENERATED / SHARED_DIR, tmp_path / SHARED_DIR)
    body = op_dir / "op_kernel" / f"{op}_gen.h"
    text = body.read_text(encoding="utf-8")
    guard = "#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)"
    assert guard in text
    body.write_text(text.replace(guard, "#if 1"), encoding="utf-8")
    return op_dir, op_dir / "op_kernel" / "arch22" / f"{op}_a3.cpp"


# an Ascend 950 column of DispatchV2 (MX quant: FP8 rows, E8M0 scales): its instances name arch35 types
ARCH35_COLUMN = ["-DORIG_DTYPE_X=DT_BF16", "-DORIG_DTYPE_EXPAND_X=DT_FLOAT8_E4M3FN",
                 "-DORIG_DTYPE_DYNAMIC_SCALES=DT_FLOAT8_E8M0"]


def test_an_arch35_type_in_a_2201_kernel_fails(cann, tmp_path):
    """The 2201 check is not vacuous: without its guards, DispatchV2's kernel names fp8_e8m0_t for Atlas A2/A3."""
    op_dir, kernel = unguarded_kernel(tmp_path)
    res = syntax_check(cann, op_dir, kernel.relative_to(op_dir).as_posix(), "dav-2201-vec", "dav-2201-vec",
                       ARCH35_COLUMN)
    assert res.returncode != 0 and "FAIL [kernel]" in res.stdout, res.stdout


def test_a_kernel_without_an_opdef_column_fails(cann):
    """The generated kernels select their dtype instances at build time: compiled without a column's
    ORIG_DTYPE_<NAME> (as no CANN op build does) they stop with #error rather than hold no instance."""
    op_dir = GENERATED / "moe_distribute_dispatch_v2"
    res = syntax_check(cann, op_dir, "op_kernel/arch22/moe_distribute_dispatch_v2_a3.cpp", "dav-2201-vec",
                       "dav-2201-vec")
    assert res.returncode != 0 and "ORIG_DTYPE_<NAME> is not defined" in res.stdout, res.stdout


def test_the_950_window_facts_follow_the_real_hccl_client(cann):
    """ProductFacts.context_windows and the twin's 3510 context follow the public asc-devkit: on 3510 the AICPU
    client's GetWindowsInAddr returns 0, and the context lists HCCL_MAX_RANK_NUM_V310 windows."""
    from opgen.core.products import PRODUCTS

    hccl = cann[0] / "mirror-cann+asc-devkit" / "impl" / "adv_api" / "detail" / "hccl"
    inner = (hccl / "common" / "hccl_inner_def.h").read_text(encoding="utf-8")
    listed = int(re.search(r"HCCL_MAX_RANK_NUM_V310 = (\d+)U;", inner).group(1))
    assert re.search(r"#if defined\(__NPU_ARCH__\) && __NPU_ARCH__ == 3510\s+uint64_t windowsIn\[HCCL_MAX_RANK_NUM_V310\];",
                     inner)
    v310 = (hccl / "impl" / "platform_v310" / "hccl_aicpu.h").read_text(encoding="utf-8")
    body = re.search(r"::GetWindowsInAddr\(uint32_t rankId\)\s*\{(.*?)\}", v310, re.S).group(1)
    assert body.split() == ["return", "0UL;"]
    arch3510 = [f for f in PRODUCTS.values() if f.npu_arch == 3510]
    assert arch3510 and all(f.context_windows == listed for f in arch3510)
    assert all(f.context_windows is None for f in PRODUCTS.values() if f.npu_arch != 3510)
    world = (ROOT / "opgen" / "sim" / "include" / "opgen_sim" / "world.h").read_text(encoding="utf-8")
    assert f"constexpr uint32_t CONTEXT_WINDOWS_V310 = {listed}U;" in world
