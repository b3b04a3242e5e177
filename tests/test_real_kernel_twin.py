"""The hand-written DispatchV2 / CombineV2 kernel entries of the real ops (``../shared/cann``), unmodified, on the
twin: they compile against the twin's Ascend C API (opgen/sim/include) for the tiling keys the real tiling
sets on Atlas A3 and A2, quant modes 0 and 2.

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

from opgen.harness import testkit
from opgen.sim import job as jobs
from opgen.sim.real_kernel import kernel_object
from opgen.sim.real_world import column
from .conftest import ROOT
from .real_cann import MISSING, OPS_TRANSFORMER, SHARED_CANN, cache_root, unpacked

pytestmark = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(), reason=MISSING),
    pytest.mark.skipif(shutil.which("g++") is None, reason="compiles C++: needs g++"),
]

A3 = "ascend910_93"
A2 = "ascend910b"
# (op folder, product, tiling key, quant mode of the suite world whose OpDef column the instance is built for):
# dispatch key = QuantMode index | ScaleMode << 4 | FullMesh << 5 | CommMode << 7 | ArchTag index << 9 (A2 0, A3 1);
# combine key = QuantMode index (0, INT8 1) | LayeredMode << 2 | ArchTag index << 4. The columns are the suite's
# first worlds', as tests/test_real_ops_world.py runs them: the objects are shared through the build cache.
SLOW = pytest.mark.slow
INSTANCES = [
    pytest.param("moe_distribute_dispatch_v2", A3, 512, 0, id="a3-dispatch-512"),            # quant 0
    pytest.param("moe_distribute_dispatch_v2", A3, 514, 2, id="a3-dispatch-514"),            # quant 2 (per token)
    pytest.param("moe_distribute_dispatch_v2", A3, 544, 0, id="a3-dispatch-544", marks=SLOW),  # fullmesh_v2
    pytest.param("moe_distribute_combine_v2", A3, 16, 0, id="a3-combine-16"),                # comm quant 0
    pytest.param("moe_distribute_combine_v2", A3, 17, 2, id="a3-combine-17"),                # comm quant 2 (int8)
    pytest.param("moe_distribute_dispatch_v2", A2, 0, 0, id="a2-dispatch-0"),
    pytest.param("moe_distribute_dispatch_v2", A2, 2, 2, id="a2-dispatch-2"),
    # the A2 tiling takes comm quant 2 only when layered
    pytest.param("moe_distribute_combine_v2", A2, 0, 0, id="a2-combine-0", marks=SLOW),
]


@pytest.fixture(scope="module")
def ops_root(tmp_path_factory):
    return unpacked(OPS_TRANSFORMER, cache_root(tmp_path_factory.mktemp("cann")), "ops-transformer")


def suite(snake: str):
    generated = str(ROOT / "generated")
    if generated not in sys.path:
        sys.path.insert(0, generated)
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


@pytest.mark.parametrize("snake,product,key,quant", INSTANCES)
def test_real_entry_compiles_unmodified_on_the_twin(ops_root, tmp_path, snake, product, key, quant):
    ref, cases = suite(snake)
    case = next(c for c in cases.POSITIVE if c["product"] == product and "ranks" not in c
                and int(c["attrs"].get(cases.QUANT_BY, 0)) == quant)
    world = testkit.build_world(ref, case)
    obj = kernel_object(ops_root, ref, product, key, column(ref, world, jobs.write_job(ref, case, world, tmp_path)))
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
    pytest.param(8, None, marks=SLOW),  # one whole block: what MTE2 moves (the control)
    (12, "DataCopy GM->UB: 12 int32_t elements are 48 bytes, not a whole number of 32-byte blocks (use DataCopyPad)"),
])
def test_a_mutated_real_kernel_file_faults_on_a_misaligned_datacopy_length(ops_root, tmp_path, count, fault):
    header = _mutated(ops_root, tmp_path, f"AscendC::DataCopy(exceptionLocal, exceptionGlobal, {count});")
    _, faults = _run_check_winsize(header, tmp_path)
    if fault is None:
        assert not faults
    else:
        assert faults and all(f.endswith(fault) for f in faults), faults
