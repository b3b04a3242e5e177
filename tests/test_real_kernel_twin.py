"""The hand-written DispatchV2 / CombineV2 kernel entries of the real ops (``../shared/cann``), unmodified, on the
twin: they compile against the twin's Ascend C API (opgen/sim/include) for the tiling keys the real A3 tiling
sets, quant modes 0 and 2.

The keys are CANN's own encoding of the entries' template arguments (asc-devkit FastEncodeTilingKeyDirect over
the ops' ASCENDC_TPL_ARGS_DECL; tests/test_sim_tiling_key.py checks the twin decodes them the same way):
DispatchV2 (QuantMode, ScaleMode, FullMesh, CommMode, ArchTag) and CombineV2 (QuantMode, LayeredMode, ArchTag).
# code: mc2/moe_distribute_dispatch_v2/op_host/op_tiling/arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp
#       (GET_TPL_TILING_KEY(tilingKeyQuantMode, scaleMode, templateDispatch, commMode, TILINGKEY_TPL_A3))
"""
from __future__ import annotations

import importlib
import subprocess
import shutil
import sys

import pytest

from opgen.sim.real_kernel import kernel_object
from .conftest import ROOT
from .real_cann import MISSING, OPS_TRANSFORMER, SHARED_CANN, cache_root, unpacked

pytestmark = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(), reason=MISSING),
    pytest.mark.skipif(shutil.which("g++") is None, reason="compiles C++: needs g++"),
]

A3 = "ascend910_93"
# (op folder, key, OpDef column the instance is built for): the A3 MTE instances of quant modes 0 and 2
# dispatch key = QuantMode index | ScaleMode << 4 | FullMesh << 5 | CommMode << 7 | ArchTag index (A3: 1) << 9;
# combine key = QuantMode index (0, INT8 1) | LayeredMode << 2 | ArchTag index << 4
INSTANCES = [
    ("moe_distribute_dispatch_v2", 512, {"x": "BFLOAT16", "expand_x": "BFLOAT16"}),       # quant 0
    ("moe_distribute_dispatch_v2", 514, {"x": "BFLOAT16", "expand_x": "INT8"}),           # quant 2 (per token)
    ("moe_distribute_dispatch_v2", 544, {"x": "BFLOAT16", "expand_x": "BFLOAT16"}),       # quant 0, fullmesh_v2
    ("moe_distribute_combine_v2", 16, {"expand_x": "BFLOAT16", "x": "BFLOAT16"}),         # quant 0
    ("moe_distribute_combine_v2", 17, {"expand_x": "BFLOAT16", "x": "BFLOAT16"}),         # quant 2 (int8 comm)
]
A2 = "ascend910b"
# the Atlas A2 instances (ArchTag index 0): the dispatch of quant 0 and 2, the fullmesh combine (comm quant 0 only:
# the A2 tiling takes comm quant 2 only when layered)
INSTANCES_A2 = [
    ("moe_distribute_dispatch_v2", 0, {"x": "BFLOAT16", "expand_x": "BFLOAT16"}),
    ("moe_distribute_dispatch_v2", 2, {"x": "BFLOAT16", "expand_x": "INT8"}),
    ("moe_distribute_combine_v2", 0, {"expand_x": "BFLOAT16", "x": "BFLOAT16"}),
]


@pytest.fixture(scope="module")
def ops_root(tmp_path_factory):
    return unpacked(OPS_TRANSFORMER, cache_root(tmp_path_factory.mktemp("cann")), "ops-transformer")


def reference(snake: str):
    generated = str(ROOT / "generated")
    if generated not in sys.path:
        sys.path.insert(0, generated)
    return importlib.import_module(f"{snake}.reference")


@pytest.mark.parametrize("snake,key,column", INSTANCES, ids=[f"{s.split('_')[2]}-{k}" for s, k, _ in INSTANCES])
def test_real_a3_entry_compiles_unmodified_on_the_twin(ops_root, snake, key, column):
    obj = kernel_object(ops_root, reference(snake), A3, key, column)
    assert obj.stat().st_size > 0


@pytest.mark.parametrize("snake,key,column", INSTANCES_A2,
                         ids=[f"{s.split('_')[2]}-{k}" for s, k, _ in INSTANCES_A2])
def test_real_a2_entry_compiles_unmodified_on_the_twin(ops_root, snake, key, column):
    obj = kernel_object(ops_root, reference(snake), A2, key, column)
    assert obj.stat().st_size > 0


# ---- the twin's strictness on code this project did not write ----------------------------------------------------
# code: mc2/moe_distribute_dispatch_v2/op_kernel/check_winsize.h CheckWindowSize: when HCCL's window is smaller than
# the one tiling assumed, the real kernel aborts the device on purpose with `DataCopy(exceptionLocal[1],
# exceptionGlobal, 1)`, 4 bytes, which MTE2 rejects (a DataCopy moves whole 32-byte blocks).
CHECK_WINSIZE = "mc2/moe_distribute_dispatch_v2/op_kernel/check_winsize.h"
TRAP_COPY = "AscendC::DataCopy(exceptionLocal[1], exceptionGlobal, 1);"
TRAP_BUFFER = "tpipe_->InitBuffer(exceptionBuf, 1);"


def _run_check_winsize(header, tmp_path):
    from .test_sim_twin import INCLUDE as TWIN_INCLUDE, SOURCE, run
    exe = tmp_path / "twin_cases"
    cmd = ["g++", "-std=c++17", "-O1", "-pthread", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1",
           f"-I{TWIN_INCLUDE}", f"-I{header.parent}", f'-DOPGEN_SIM_REAL_CHECK_WINSIZE="{header}"', str(SOURCE),
           "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return run(exe, "real_check_winsize")


def _mutated(ops_root, tmp_path, copy: str):
    """A temp copy of the real op_kernel folder whose check_winsize.h copies with ``copy`` into a 64-byte buffer."""
    folder = tmp_path / "op_kernel"
    shutil.copytree((ops_root / CHECK_WINSIZE).parent, folder)
    text = (folder / "check_winsize.h").read_text()
    assert TRAP_COPY in text and TRAP_BUFFER in text, "the real check_winsize.h changed: update the mutation"
    (folder / "check_winsize.h").write_text(text.replace(TRAP_COPY, copy).replace(
        TRAP_BUFFER, "tpipe_->InitBuffer(exceptionBuf, 64);"))
    return folder / "check_winsize.h"


def test_the_real_window_check_faults_at_its_datacopy(ops_root, tmp_path):
    _, faults = _run_check_winsize(ops_root / CHECK_WINSIZE, tmp_path)
    assert faults and all(f.endswith("DataCopy GM->UB: 1 int32_t elements are 4 bytes, not a whole number of "
                                     "32-byte blocks (use DataCopyPad)") for f in faults), faults


@pytest.mark.parametrize("count,fault", [
    (8, None),  # one whole block: what MTE2 moves
    (12, "DataCopy GM->UB: 12 int32_t elements are 48 bytes, not a whole number of 32-byte blocks (use DataCopyPad)"),
])
def test_a_mutated_real_kernel_file_faults_on_a_misaligned_datacopy_length(ops_root, tmp_path, count, fault):
    header = _mutated(ops_root, tmp_path, f"AscendC::DataCopy(exceptionLocal, exceptionGlobal, {count});")
    _, faults = _run_check_winsize(header, tmp_path)
    if fault is None:
        assert not faults
    else:
        assert faults and all(f.endswith(fault) for f in faults), faults
