"""Spec file → validated model, with diagnostics (the front end's one entry point)."""
from __future__ import annotations

from pathlib import Path

from opgen.frontend.analyze import analyze
from opgen.core.diagnostics import Diagnostics
from opgen.lang.expr import Span
from opgen.model.decl import Op
from opgen.frontend.formulas import FormulaChecker
from opgen.frontend.marks import check_marks
from opgen.model.resolve import attach_views
from opgen.lang.parse import parse_text


def load_text(text: str, file: str, diags: Diagnostics) -> Op | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:  # lone surrogates (text decoded with surrogateescape): no file can hold them
        line = text.count("\n", 0, err.start) + 1
        col = err.start - (text.rfind("\n", 0, err.start) + 1) + 1
        diags.sources[file] = text
        diags.error("E003", f"the spec is not valid Unicode (lone surrogate U+{ord(text[err.start]):04X})",
                    Span(file, line, col, line, col + 1))
        return None
    tree = parse_text(text, file, diags)
    if tree is None:
        return None
    op = analyze(tree, file, text, diags)
    if op is None:
        return None
    op = attach_views(op)
    before = len(diags.items)
    FormulaChecker(op, diags).check()  # the quant formulas' shapes and dtypes (needs the product views)
    check_marks(op, diags)  # the unreachable marks name checks of their product's view (needs the views too)
    return op if len(diags.items) == before else None


def load(path: str | Path, diags: Diagnostics, display: str | None = None) -> Op | None:
    """Load one spec; ``display`` is the file name used in diagnostics (default: the path as given)."""
    name = display or str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        diags.error("E003", f"cannot read {name}: {err.strerror or err}", Span(name, 1, 1, 1, 1))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        # Point at the first bad byte; the caret line shows the text decoded with U+FFFD for what is not UTF-8.
        line = data.count(b"\n", 0, err.start) + 1
        line_start = data.rfind(b"\n", 0, err.start) + 1
        col = len(data[line_start:err.start].decode("utf-8", "replace")) + 1
        diags.sources[name] = data.decode("utf-8", "replace")
        diags.error("E003", f"the spec is not valid UTF-8 (byte 0x{data[err.start]:02x}: {err.reason})",
                    Span(name, line, col, line, col + 1), "save the spec as UTF-8")
        return None
    return load_text(text, name, diags)
