"""The kernel instances an entry's Dispatch holds, read from its text: each ``#if`` block (opgen.emit.kernel_lib
dispatch_blocks) names the OpDef column dtypes it is compiled for and calls Run with the column's DTYPE_<NAME>
macros; expanded here, one Run per dtype combination its ``#if`` admits, the macros replaced by the element types
CANN's op build defines them as (cmake/scripts/util/ascendc_impl_build.py DTYPE_MAP, opgen/sim/build.py
column_defines)."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

from opgen.core.dtypes import DTYPES

CTYPE_OF = {d.ge_enum: d.ascendc for d in DTYPES.values()}
BLOCK = re.compile(r"(?:#if (.*)\n)?[ \t]*(?:if \((.*?)\) \{\n\s+)?Run<(.*?)>\(args, tiling\);")


def _split(expr: str, op: str) -> list[str]:
    """``expr``'s operands of its top-level ``op`` (" && " or " || "), outer parentheses around all of it dropped."""
    while expr.startswith("("):
        depth = 0
        for i, ch in enumerate(expr):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                break
        if i != len(expr) - 1:
            break
        expr = expr[1:-1]
    out, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and expr.startswith(op, i):
            out.append(expr[start:i])
            start = i + len(op)
    return out + [expr[start:]]


def columns(expr: str) -> list[dict]:
    """The dtype macro values (tensor macro name -> DT_ id) ``expr`` admits; a test of no dtype admits any."""
    alts = _split(expr, " || ")
    if len(alts) > 1:
        return [c for a in alts for c in columns(a)]
    parts = _split(expr, " && ")
    if len(parts) > 1:
        return [dict(kv for c in combo for kv in c.items()) for combo in itertools.product(*map(columns, parts))]
    m = re.fullmatch(r"ORIG_DTYPE_(\w+) == (DT_\w+)", parts[0])
    return [{m.group(1): m.group(2)}] if m else [{}]


def runs(text: str) -> list[tuple[str, str]]:
    """(condition, Run<...> arguments) of every Dispatch block: its #if guard (arch, OpDef columns) and its run-time
    test, joined by &&; the arguments as written (DTYPE_<NAME> macros)."""
    flat = re.sub(r"[ \t]*\\\n[ \t]*", " ", text)  # a guard's continuation lines
    return [(" && ".join(c for c in (guard, test) if c), args) for guard, test, args in BLOCK.findall(flat)]


def expanded_runs(text: str) -> list[tuple[str, str]]:
    """runs(), one per dtype combination a block admits: (condition, Run arguments with element types)."""
    out = []
    for cond, args in runs(text):
        for column in columns(cond):
            expanded = args
            for macro, dt in column.items():
                expanded = re.sub(rf"\bDTYPE_{macro}\b", CTYPE_OF[dt], expanded)
            out.append((cond, expanded))
    return out


def dispatch_text(op_dir: Path, entry: str) -> str:
    """The text of the kernel instances the entry ``entry`` (a path under ``op_dir``) runs: the entry's own (in its
    __global__ function), or, where every entry's are the same text, the Dispatch in op_kernel/<op>_gen.h
    (opgen.emit.kernel emit_cpp_kernel)."""
    text = (op_dir / entry).read_text(encoding="utf-8")
    if "Dispatch<" not in text:
        return text
    gen = (op_dir / "op_kernel" / f"{op_dir.name}_gen.h").read_text(encoding="utf-8")
    assert "inline void Dispatch(" in gen, entry
    return gen[gen.index("inline void Dispatch("):]
