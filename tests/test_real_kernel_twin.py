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
