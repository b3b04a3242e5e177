"""The kernel instances an entry's Dispatch holds, read from its text: each ``#if`` block (opgen.emit.kernel_lib
dispatch_blocks) names the OpDef column dtypes it is compiled for and calls Run with the column's DTYPE_<NAME>
macros; expanded here, one Run per dtype combination its ``#if`` admits, the macros replaced by the element types
CANN's op build defines them as (cmake/scripts/util/ascendc_impl_build.py DTYPE_MAP, opgen/sim/build.py
column_defines)."""
from __future__ import annotations

import itertools
import re

from opgen.core.dtypes import DTYPES

CTYPE_OF = {d.ge_enum: d.ascendc for d in DTYPES.values()}
BLOCK = re.compile(r"(?:#if (.*)\n)?[ \t]*(?:if \((.*?)\) \{\n\s+)?Run<(.*?)>\(args, tiling\);")


def _conjuncts(guard: str) -> list[str]:
    """``guard``'s operands of its top-level &&."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(guard):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and guard.startswith(" && ", i):
            out.append(guard[start:i])
            start = i + 4
    return out + [guard[start:]]


def runs(text: str) -> list[tuple[str, str]]:
    """(condition, Run<...> arguments) of every Dispatch block: its #if guard (arch, OpDef columns) and its run-time
    test, joined by &&; the arguments as written (DTYPE_<NAME> macros)."""
    flat = re.sub(r"[ \t]*\\\n[ \t]*", " ", text)  # a guard's continuation lines
    return [(" && ".join(c for c in (guard, test) if c), args) for guard, test, args in BLOCK.findall(flat)]


def expanded_runs(text: str) -> list[tuple[str, str]]:
    """runs(), one per dtype combination a block admits: (condition, Run arguments with element types)."""
    out = []
    for cond, args in runs(text):
        lists = []
        for part in _conjuncts(cond):
            found = re.findall(r"ORIG_DTYPE_(\w+) == (DT_\w+)", part)
            if found:
                assert len({m for m, _ in found}) == 1, part  # one tensor's dtypes per operand
                lists.append([(m, d) for m, d in found])
        for combo in itertools.product(*lists):
            expanded = args
            for macro, dt in combo:
                expanded = re.sub(rf"\bDTYPE_{macro}\b", CTYPE_OF[dt], expanded)
            out.append((cond, expanded))
    return out
