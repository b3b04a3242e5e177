"""Shared fixtures: the repository root and loaders for the real specs."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The tests never read (or fill) a developer's build cache: every run, and every `opgen` it starts, gets an
# empty one of its own (opgen/core/cache_dir.py), so a result never depends on what an earlier build left there.
_CACHE = tempfile.mkdtemp(prefix="opgen-test-cache-")
os.environ["OPGEN_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)

from opgen.core.diagnostics import Diagnostics
from opgen.frontend.loader import load, load_text

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.spec"))
# the source documents the specs encode (copies of the seeds, so the tests read nothing outside the repository)
SEEDS = ROOT / "specs" / "sources"


def load_ok(path) -> "object":
    d = Diagnostics()
    op = load(path, d)
    assert op is not None, d.render()
    return op


def load_src(text: str, file: str = "t.spec"):
    """(op or None, diagnostics) for spec text."""
    d = Diagnostics()
    return load_text(text, file, d), d


@pytest.fixture(scope="session")
def dispatch_v2():
    return load_ok(ROOT / "specs" / "dispatch_v2.spec")


def write_ops(out_dir: Path, outputs: list) -> None:
    """Write ops' outputs into ``out_dir`` as `opgen build` does: with the shared folder (opgen.core.layout) whose
    header every op's check core includes."""
    from opgen.core.layout import SHARED_DIR
    from opgen.emit.pipeline import emit_shared
    from opgen.tools.write import build, shared_output

    build(out_dir, [*outputs, shared_output(SHARED_DIR, emit_shared())])


def build_reference(spec_name: str, out_dir: Path):
    """Build one spec into ``out_dir`` and import its generated reference module."""
    import importlib
    import sys

    from opgen.emit.pipeline import emit
    from opgen.tools.write import op_output

    op = load_ok(ROOT / "specs" / spec_name)
    write_ops(out_dir, [op_output(op.snake_name, spec_name, op.source, emit(op))])
    if str(out_dir) not in sys.path:
        sys.path.insert(0, str(out_dir))
    module = importlib.import_module(f"{op.snake_name}.reference")
    return importlib.reload(module)


def build_seed_era(spec_name: str, out_dir: Path, tag: str):
    """Build a spec of specs/history/ into ``out_dir`` and load its reference and test cases as the modules
    ``<tag>_reference`` and ``<tag>_cases`` (the generated package name is the current op's, so importing it
    by that name would give whichever build was imported first)."""
    import importlib.util

    from opgen.emit.pipeline import emit
    from opgen.tools.write import op_output

    op = load_ok(ROOT / "specs" / "history" / spec_name)
    write_ops(out_dir, [op_output(op.snake_name, f"history/{spec_name}", op.source, emit(op))])
    loaded = []
    for part, path in (("reference", "reference.py"), ("cases", "tests/cases.py")):
        spec = importlib.util.spec_from_file_location(f"{tag}_{part}", out_dir / op.snake_name / path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded.append(module)
    return tuple(loaded)


@pytest.fixture(scope="session")
def seed_era_dispatch(tmp_path_factory):
    """(reference, cases) of DispatchV2 as the seed era declared it: the last revision whose A3 takes TP (the
    current documents: TP域通信不再支持). The runtime's and the twin's TP paths stay tested through it."""
    return build_seed_era("dispatch_v2_2026_05.spec", tmp_path_factory.mktemp("seed_era"), "seed_era_dispatch_v2")


@pytest.fixture(scope="session")
def generated_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated")


@pytest.fixture(scope="session")
def dispatch_ref(generated_dir):
    """The generated numpy reference of MoeDistributeDispatchV2 (built fresh from the spec)."""
    return build_reference("dispatch_v2.spec", generated_dir)


def skip_without_torch() -> None:
    """Skip the calling test module when torch is absent (a clone without the ``npu-rehearsal`` extra), but fail it
    where the NPU rehearsal must run (OPGEN_NPU_REHEARSAL=required: .ci/run installs the extra)."""
    import importlib.util
    if importlib.util.find_spec("torch") is not None:
        return
    why = "torch is not installed (pip install -e '.[npu-rehearsal]')"
    if os.environ.get("OPGEN_NPU_REHEARSAL") == "required":
        pytest.fail(f"the NPU rehearsal must run here: {why}", pytrace=False)
    pytest.skip(why, allow_module_level=True)
