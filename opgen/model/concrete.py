"""The concrete expectation of a shape check: the shape a call must pass, in numbers, beside the spec's rule.

A failing shape check says ``shape (4, 2) = (BS, K) with BS=4`` rather than the rule alone: each dim that the
call's other tensors and attributes decide is shown as its value, a dim the tensor itself defines (``K`` of
``expertIds (BS, K)``) as its name, and the names the rule reads as ``name=value``. A conditional shape states
the branch the call takes, never the ``if … then … else`` (``TextChoice``). The parts are model values
(``decl.TextPart``) that both validators lower (opgen.lower.python, opgen.lower.cpp).
"""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Expr, Name, walk
from opgen.model.decl import Op, ShapeCond, ShapeTuple, Tensor, TextChoice
from opgen.model.spec_text import alt_text


def shape_detail(op: Op, t: Tensor, bound: dict[str, tuple[str, int]]) -> tuple | None:
    """The parts of ``t``'s concrete expected shape; None where the rule has nothing to fill in (every dim a
    literal or defined by ``t`` itself, and no branch to choose)."""
    own = {n for n, (tensor, _) in bound.items() if tensor == t.name}
    skip = own | {x.name for x in op.inputs + op.outputs} | set(B.CONSTANTS) | set(DTYPES)
    alts = list(t.shape.alts)
    if not any(isinstance(a, ShapeCond) for a in alts) and not _values(alts, (), skip):
        return None
    return _choose(t.name, alts, (), bound, skip)


def _choose(name: str, alts: list, tests: tuple, bound, skip) -> tuple:
    """Parts for ``alts``, the first conditional alternative split into a choice on its test."""
    i = next((i for i, a in enumerate(alts) if isinstance(a, ShapeCond)), None)
    if i is None:
        return _leaf(name, alts, tests, bound, skip)
    a = alts[i]
    then = _choose(name, alts[:i] + [a.then] + alts[i + 1:], tests + (a.test,), bound, skip)
    orelse = _choose(name, alts[:i] + [a.orelse] + alts[i + 1:], tests + (a.test,), bound, skip)
    return (TextChoice(a.test, then, orelse),)


def _leaf(name: str, alts: list[ShapeTuple], tests: tuple, bound, skip) -> tuple:
    parts: list = ["shape "]
    for n, a in enumerate(alts):
        parts.append(" or (" if n else "(")
        for axis, d in enumerate(a.dims):
            parts.append((", " if axis else "") + (">= " if a.is_at_least(axis) else ""))
            parts.append(d.id if isinstance(d, Name) and bound.get(d.id) == (name, axis) else d)
        parts.append(",)" if len(a.dims) == 1 else ")")
    parts.append(" = " + " or ".join(alt_text(a) for a in alts))
    for n, v in enumerate(_values(alts, tests, skip)):
        parts += [(", " if n else " with ") + v + "=", Name(v)]
    return _merged(parts)


def _values(alts: list, tests: tuple, skip: set[str]) -> list[str]:
    """The names the tests and dims read whose values the message shows, in order of first use."""
    exprs: list[Expr] = list(tests)
    for a in alts:
        exprs += [a.test] if isinstance(a, ShapeCond) else list(a.dims)
    names = [n.id for e in exprs for n in walk(e) if isinstance(n, Name) and n.id not in skip]
    return list(dict.fromkeys(names))


def _merged(parts: list) -> tuple:
    """Adjacent text parts joined (fewer concatenations in the generated code)."""
    out: list = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return tuple(out)
