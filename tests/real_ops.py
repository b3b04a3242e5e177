"""What the tests running the hand-written ops on the twin share: their skip marks, the generated DispatchV2 /
CombineV2 / CombineAddRmsNorm suites (reference and cases) and the unpacked real CANN tree."""
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


def kernel_copy_with(ops_root, tmp, header: str, old: str, new: str):
    """An ``ops-transformer/`` whose mc2 folders link the tarball's, but for a copy of the op_kernel folder holding
    ``header`` (a path under ``mc2/``) in which ``old``, found exactly once, reads ``new``: a finding of the real
    code fixed in a temp copy (never the tarball's file), so the op runs on past it."""
    op, rest = header.split("/", 1)
    assert rest.startswith("op_kernel/"), header
    for entry in (ops_root / "mc2").iterdir():
        (tmp / "mc2").mkdir(parents=True, exist_ok=True)
        if entry.name == op:
            (tmp / "mc2" / op).mkdir()
            for part in entry.iterdir():
                if part.name == "op_kernel":
                    shutil.copytree(part, tmp / "mc2" / op / "op_kernel")
                else:
                    (tmp / "mc2" / op / part.name).symlink_to(part)
        else:
            (tmp / "mc2" / entry.name).symlink_to(entry)
    path = tmp / "mc2" / header
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the real {header} changed: update the fix"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return tmp
