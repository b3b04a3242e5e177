"""A source range in a spec file (1-based lines and columns); every diagnostic and model node carries one."""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def find_span(source: str, file: str, pattern: str, within: Span | None = None) -> Span | None:
    """Span of group 1 (else the whole match) of the first match of regex ``pattern`` in ``source``, searched
    inside ``within`` when given; None when nothing matches. Back ends use it to point at the word of a
    declaration the model keeps as a string (a semantics name, a product id)."""
    starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]
    lo, hi = 0, len(source)
    if within is not None and 1 <= within.line <= within.end_line <= len(starts):
        lo = starts[within.line - 1] + within.col - 1
        hi = starts[within.end_line - 1] + within.end_col - 1
    m = re.compile(pattern).search(source, lo, hi)
    if m is None:
        return None
    g = 1 if m.groups() else 0

    def pos(offset: int) -> tuple[int, int]:
        line = max(i for i, s in enumerate(starts) if s <= offset)
        return line + 1, offset - starts[line] + 1

    (l1, c1), (l2, c2) = pos(m.start(g)), pos(m.end(g))
    return Span(file, l1, c1, l2, c2)
