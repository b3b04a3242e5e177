"""What the tests running the hand-written ops on the twin share: their skip marks, the generated DispatchV2 /
CombineV2 / CombineAddRmsNorm suites (reference and cases) and the unpacked real CANN tree (the real kernels with
their findings fixed in temp copies: ``opgen.sim.real_fixes``)."""
from __future__ import annotations

import importlib
import shutil
import sys

import pytest

from opgen.sim import real_tiling
from .conftest import ROOT
from .real_cann import MISSING, SHARED_CANN, cache_root

GENERATED = ROOT / "generated"
MARKS = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(), reason=MISSING),
    pytest.mark.skipif(shutil.which("g++") is None, reason="compiles C++: needs g++"),
]


def suite(snake: str):
    """(reference, cases) of the generated op ``snake``."""
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


DISPATCH = suite("moe_distribute_dispatch_v2")
COMBINE = suite("moe_distribute_combine_v2")
ADD_RMS_NORM = suite("moe_distribute_combine_add_rms_norm")  # DispatchV2's other partner: CombineV2 + Add + RmsNorm


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The real CANN tarballs unpacked (``real_tiling.CannTree``)."""
    return real_tiling.unpack(SHARED_CANN, cache_root(tmp_path_factory.mktemp("cann")))
