"""The generated op folder drops into ops-transformer in place of the real one (issue 34).

The repository's top-level configure cannot run here: its first step fetches the shared ``cann/cmake`` scripts
with git (cmake/fetch_cann_cmake.cmake), and ``init_cann_project`` and everything after it come from there and
from the CANN toolkit.  What runs is the repository's own CMake from ``mc2/`` down: ``mc2/CMakeLists.txt`` adds
the op folders, each op's CMakeLists adds its sub-folders.  The repository functions they call (defined by
cmake/obj_func.cmake and func.cmake over the toolkit) are replaced by recorders that log every call with its
arguments, and ``op_host_aclnnInner`` is an empty library for ``target_sources``.  The same configure runs over
the real tree and over the tree with the generated op swapped in, for each SoC, and the logs of the op must match:
the generated folder drives the repository's build exactly as the hand-written one does.  The file kinds of the
two folders are compared too.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from opgen.core.layout import SHARED_DIR

from .conftest import ROOT
from .real_cann import HEADERS, MISSING, OPS_TRANSFORMER, SHARED_CANN, cache_root, unpacked

OP = "moe_distribute_dispatch_v2"
GENERATED = ROOT / "generated" / OP
SHARED = ROOT / "generated" / SHARED_DIR
SOCS = ("ascend910b", "ascend910_93", "ascend950")
CMAKE = shutil.which("cmake")

pytestmark = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(), reason=MISSING),
    pytest.mark.skipif(CMAKE is None, reason="cmake is not installed"),
]

# The driver: the repository's mc2/ tree under a project whose repository functions record their calls.
DRIVER = """cmake_minimum_required(VERSION 3.16)
project(dropin LANGUAGES NONE)
set(BUILD_OPEN_PROJECT ON)
set(ENABLE_TEST OFF)
set(ASCEND_COMPUTE_UNIT ${SOC})
add_library(op_host_aclnnInner INTERFACE)
function(record what)
    file(APPEND ${LOG} "${what} [${CMAKE_CURRENT_SOURCE_DIR}] ${ARGN}\\n")
endfunction()
macro(add_modules_sources_with_soc)
    record(add_modules_sources_with_soc ${ARGN})
endmacro()
macro(add_mc2_modules_sources)
    record(add_mc2_modules_sources ${ARGN})
endmacro()
macro(add_graph_plugin_sources)
    record(add_graph_plugin_sources ${ARGN})
endmacro()
function(add_ops_compile_options)
    record(add_ops_compile_options ${ARGN})
endfunction()
add_subdirectory(${TREE}/mc2 mc2)
get_directory_property(op_vars DIRECTORY ${TREE}/mc2/OP VARIABLES)
foreach(v ${op_vars})
    if(v MATCHES "_depends$|^MC2_COMPILE$|^SUB_MC2_COMPILE$|^MC2_OPT$")
        get_directory_property(value DIRECTORY ${TREE}/mc2/OP DEFINITION ${v})
        record(variable ${v}=${value})
    endif()
endforeach()
get_target_property(srcs op_host_aclnnInner SOURCES)
record(op_host_aclnnInner_sources ${srcs})
"""


def _tree(tmp: Path, name: str, generated: bool) -> Path:
    """A copy of the repository's mc2/ with only the op (and the shared folders), real or generated."""
    src = unpacked(OPS_TRANSFORMER, cache_root(tmp / "cache"), "ops-transformer")
    tree = tmp / name
    (tree / "mc2").mkdir(parents=True)
    shutil.copy(src / "mc2" / "CMakeLists.txt", tree / "mc2")
    for shared in ("common", "3rd"):
        (tree / "mc2" / shared).mkdir()  # present as in the repository; their own CMake is not the op's
    shutil.copytree(GENERATED if generated else src / "mc2" / OP, tree / "mc2" / OP)
    if generated:  # the generated tree's shared folder drops into mc2/common beside the repository's own files
        shutil.copytree(SHARED, tree / "mc2" / "common", dirs_exist_ok=True)
    return tree


def _configure(tmp: Path, tree: Path, soc: str) -> list[str]:
    driver = tmp / f"driver-{tree.name}-{soc}"
    driver.mkdir()
    (driver / "CMakeLists.txt").write_text(DRIVER.replace("mc2/OP", f"mc2/{OP}"), encoding="utf-8")
    log = driver / "calls.log"
    run = subprocess.run([CMAKE, "-S", str(driver), "-B", str(driver / "build"), f"-DTREE={tree}", f"-DSOC={soc}",
                          f"-DLOG={log}"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # paths inside the tree are compared relative to it, so the two trees' logs meet
    return [line.replace(str(tree), "<tree>").replace(str(driver), "<driver>")
            for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("soc", SOCS)
def test_generated_folder_configures_as_the_real_op(tmp_path, soc):
    real = _configure(tmp_path, _tree(tmp_path, "real", False), soc)
    gen = _configure(tmp_path, _tree(tmp_path, "gen", True), soc)
    assert any(line.startswith("add_modules_sources_with_soc") for line in real)  # the recorders saw the op
    assert gen == real
    assert f"op_host_aclnnInner_sources [<driver>] <tree>/mc2/{OP}/op_host/{OP}_def.cpp" in gen
    auto_sync = [line for line in gen if line.startswith("add_ops_compile_options")]
    assert bool(auto_sync) == (soc != "ascend950")  # --cce-auto-sync=off for A2/A3 only


def _kind(rel: Path) -> str:
    """A file's kind: its folder under the op (arch and SoC folders generalised) and its name's ending."""
    parts = list(rel.parts[:-1])
    parts = ["<arch>" if p.startswith("arch") else "<soc>" if p.startswith("ascend") else p for p in parts]
    name = rel.name
    endings = ("_binary.json", "_simplified_key.ini", "_proto.h") + (("_base.h", "_base.cpp") if parts[:1] == ["op_api"]
                                                                       else ())
    ending = next((e for e in endings if name.endswith(e)), "." + name.rsplit(".", 1)[-1])
    if parts[:1] == ["op_api"] and name.startswith("aclnn_"):
        ending = "aclnn_*" + ending
    return "/".join(parts + ["*" + ending])


def _kinds(folder: Path) -> set[str]:
    return {_kind(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_file_kinds_match_the_real_op(tmp_path):
    src = unpacked(OPS_TRANSFORMER, cache_root(tmp_path / "cache"), "ops-transformer")
    real, gen = _kinds(src / "mc2" / OP), _kinds(GENERATED)
    # what the real folder has and the generated one does not: not derivable from the spec, or not built yet
    assert real - gen == {
        "*.md",                               # the op README (hand-written prose)
        "op_graph/*.cpp",                     # fallback_<op>.cpp, <op>_gen_task.cpp: not generated yet
        "op_host/op_tiling/<arch>/*.cpp",     # per-arch tiling files: the generated tiling is one file
        "op_host/op_tiling/<arch>/*.h",
    }  # op_kernel/<arch>/*.h: each entry's ASCENDC_TPL_SEL header, as the real arch22/<op>_tiling_key.h
    # what the generated folder adds: opgen's own (the reference, its tests, the manifest)
    assert gen - real == {"*.json", "*.py", "tests/*.py", "tests/*.cpp"}


def test_shared_folder_lands_where_the_real_tree_keeps_the_mc2_ops_shared_host_headers(tmp_path):
    """generated/common/ holds what every op's host code includes (the check core's shared header); dropped into
    mc2/common/ its headers sit beside the real tree's shared host headers, in the folder the repository puts on
    the include path of every op's tiling, infershape and op_api objects."""
    src = unpacked(OPS_TRANSFORMER, cache_root(tmp_path / "cache"), "ops-transformer")
    shared = sorted(p.relative_to(SHARED) for p in (SHARED / "op_host").rglob("*") if p.is_file())
    assert [p.as_posix() for p in shared] == ["op_host/op_tiling/opgen_check_common.h"]
    real = src / "mc2" / "common" / "op_host" / "op_tiling"
    assert {_kind(p.relative_to(src / "mc2" / "common")) for p in real.glob("*.h")} == {"op_host/op_tiling/*.h"}
    assert not (real / shared[0].name).exists()  # no name clash with the repository's own headers
    obj_func = (src / "cmake" / "obj_func.cmake").read_text(encoding="utf-8")
    # the tiling and op_api objects' include directories, and the infershape object's (INFER_OBJ_INCLUDE)
    for start, end in (("function(add_tiling_modules)", "endfunction()"), ("function(add_opapi_modules)",
                                                                            "endfunction()"),
                       ("set(INFER_OBJ_INCLUDE", "\n)\n")):
        body = obj_func[obj_func.index(start):]
        body = body[:body.index(end)]
        assert "${OPS_TRANSFORMER_DIR}/mc2/common/op_host/op_tiling" in body, start
    included = (GENERATED / "op_host" / "op_tiling" / f"{OP}_check.h").read_text(encoding="utf-8")
    assert f'#include "{shared[0].name}"' in included


def test_shared_kernel_headers_land_beside_the_real_mc2_ops_shared_kernel_headers(tmp_path):
    """generated/common/op_kernel/ holds the C++ family kernels (the Dispatch, Combine and Setup/Teardown class
    templates, the Setup/Teardown window layout, the BatchWrite helpers); dropped into mc2/common/ they sit beside the
    real ops' shared kernel headers (moe_distribute_base.h)
    with no name clash, and each family op's op_kernel/<op>_gen.h includes them by the paths the real ops include
    mc2/common/op_kernel with (code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h)."""
    src = unpacked(OPS_TRANSFORMER, cache_root(tmp_path / "cache"), "ops-transformer")
    ours = sorted(p.name for p in (SHARED / "op_kernel").iterdir())
    assert ours == ["moe_combine_kernel.h", "moe_combine_setup_kernel.h", "moe_combine_teardown_kernel.h",
                    "moe_dispatch_kernel.h", "moe_dispatch_setup_kernel.h", "moe_dispatch_teardown_kernel.h",
                    "opgen_batch_write.h", "opgen_family_window.h", "opgen_kernel.h", "opgen_kernel_context.h",
                    "opgen_kernel_helpers.h", "opgen_kernel_types.h"]
    real = src / "mc2" / "common" / "op_kernel"
    assert (real / "moe_distribute_base.h").is_file() and not any((real / n).exists() for n in ours)
    real_include = (src / "mc2" / "moe_distribute_dispatch_v2" / "op_kernel" / "moe_distribute_dispatch_v2.h")\
        .read_text(encoding="utf-8")
    assert '#include "../../common/op_kernel/mc2_moe_context.h"' in real_include
    for op in ("moe_distribute_dispatch_setup", "moe_distribute_dispatch_teardown", "moe_distribute_combine_setup",
               "moe_distribute_combine_teardown"):
        gen = (ROOT / "generated" / op / "op_kernel" / f"{op}_gen.h").read_text(encoding="utf-8")
        assert '#include "../../common/op_kernel/opgen_family_window.h"' in gen, op
    for op in ("moe_distribute_combine_v2", "moe_distribute_combine_v3", "moe_distribute_combine_add_rms_norm"):
        gen = (ROOT / "generated" / op / "op_kernel" / f"{op}_gen.h").read_text(encoding="utf-8")
        assert '#include "../../common/op_kernel/moe_combine_kernel.h"' in gen, op
    for op in ("moe_distribute_dispatch_v2", "moe_distribute_dispatch_v3"):
        gen = (ROOT / "generated" / op / "op_kernel" / f"{op}_gen.h").read_text(encoding="utf-8")
        assert '#include "../../common/op_kernel/moe_dispatch_kernel.h"' in gen, op


def _value(arg: str) -> str:
    """An attribute default as a value: a C float literal (``1e-6f``, ``1.0e-06f``) by its number."""
    kind, _, default = (x.strip() for x in arg.partition(","))
    if kind == "Float" and default:
        return f"{kind}, {float(default.rstrip('fF'))!r}"
    return arg


def _reg_op(text: str) -> list[tuple[str, str, str]]:
    """(kind, name, arguments) of every REG_OP line, whitespace folded, dtype lists as sorted sets, defaults as
    values."""
    body = re.sub(r"\s+", " ", text[text.index("REG_OP("):text.index(".OP_END_FACTORY_REG")])
    items = re.findall(r"\.(\w+)\((\w+), ((?:[^()]|\([^()]*\))*)\)", body)
    return [(k, n, " ".join(sorted(re.findall(r"DT_\w+", a))) if "TensorType" in a else _value(a))
            for k, n, a in items]


GENERATED_OPS = sorted(p.parent.name for p in (ROOT / "generated").glob("*/MANIFEST.json") if p.parent.name != SHARED_DIR)


@pytest.mark.parametrize("op", GENERATED_OPS)
def test_graph_proto_is_the_real_ops(tmp_path, op):
    """Each op's REG_OP against the real one: inputs, outputs and attributes with their kinds, in order, with the
    same dtype sets and defaults (where the real proto differs from the OpDef, the spec's `graph` facts say so)."""
    src = unpacked(OPS_TRANSFORMER, cache_root(tmp_path / "cache"), "ops-transformer")
    real_proto = src / "mc2" / op / "op_graph" / f"{op}_proto.h"
    assert real_proto.is_file(), f"every generated op stands in for a real one with a proto: {real_proto}"
    real = _reg_op(real_proto.read_text(encoding="utf-8"))
    gen = _reg_op((ROOT / "generated" / op / "op_graph" / f"{op}_proto.h").read_text(encoding="utf-8"))
    assert len(real) > 10 and real[-1][0] in ("ATTR", "REQUIRED_ATTR")  # the parse saw the whole REG_OP
    assert gen == real


def test_proto_comparison_sees_a_changed_default():
    """The comparison is value-exact: a default written differently compares equal, a different one does not."""
    proto = "REG_OP(X)\n    .ATTR(eps, Float, {})\n    .OP_END_FACTORY_REG(X)"
    assert _reg_op(proto.format("1e-6f")) == _reg_op(proto.format("1.0e-06f"))
    assert _reg_op(proto.format("1e-6f")) != _reg_op(proto.format("1e-5f"))


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_every_graph_proto_compiles_against_the_real_headers(tmp_path):
    """Each generated REG_OP against the real graph/operator_reg.h (hicann/ge, hicann/metadef)."""
    repos = unpacked(HEADERS, cache_root(tmp_path / "cache"), "cann_subset")
    includes = [repos / "hicann+ge/inc/graph_metadef/external", repos / "hicann+ge/inc/graph_metadef",
                repos / "hicann+metadef/inc/external", repos / "hicann+metadef/inc",
                repos / "openeuler-mirror+libboundscheck/include"]
    protos = sorted((ROOT / "generated").glob("*/op_graph/*_proto.h"))
    assert len(protos) == len(GENERATED_OPS)
    for proto in protos:
        run = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-x", "c++",
                              *[f"-I{i}" for i in includes], str(proto)], capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0, f"{proto}:\n{run.stderr[:3000]}"
