"""Spec file → validated model, with diagnostics (the front end's one entry point)."""
from __future__ import annotations

from pathlib import Path

from .analyze import analyze
from .diagnostics import Diagnostics
from .expr import Span
from .model import Op
from .parse import parse_text


def load_text(text: str, file: str, diags: Diagnostics) -> Op | None:
    tree = parse_text(text, file, diags)
    if tree is None:
        return None
    return analyze(tree, file, text, diags)


def load(path: str | Path, diags: Diagnostics, display: str | None = None) -> Op | None:
    """Load one spec; ``display`` is the file name used in diagnostics (default: the path as given)."""
    name = display or str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        diags.error("E003", f"cannot read {name}: {reason}", Span(name, 1, 1, 1, 1))
        return None
    return load_text(text, name, diags)
