"""A source range in a spec file (1-based lines and columns); every diagnostic and model node carries one."""
from __future__ import annotations

import bisect
import functools
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
    starts = _line_starts(source)
    lo, hi = 0, len(source)
    if within is not None and 1 <= within.line <= within.end_line <= len(starts):
        lo = starts[within.line - 1] + within.col - 1
        hi = starts[within.end_line - 1] + within.end_col - 1
    m = re.compile(pattern).search(source, lo, hi)
    if m is None:
        return None
    g = 1 if m.groups() else 0

    def pos(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset) - 1  # the last line starting at or before offset
        return line + 1, offset - starts[line] + 1

    (l1, c1), (l2, c2) = pos(m.start(g)), pos(m.end(g))
    return Span(file, l1, c1, l2, c2)


@functools.lru_cache(maxsize=8)
def _line_starts(source: str) -> tuple[int, ...]:
    """Offsets at which the lines of ``source`` start (a spec is searched many times: computed once)."""
    return (0, *(m.end() for m in re.finditer("\n", source)))
