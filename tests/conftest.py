"""Shared fixtures: the repository root and loaders for the real specs."""
from __future__ import annotations

from pathlib import Path

import pytest

from opgen.diagnostics import Diagnostics
from opgen.loader import load, load_text

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.spec"))
SEEDS = ROOT.parent / "shared" / "seeds"


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
