"""Expression nodes of the spec language.

Expressions are immutable values shared by the model and every lowering.
Each node carries the source span it came from; spans never take part in
equality, so a model printed back to text and re-parsed compares equal.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from opgen.core.span import Span  # re-exported: the nodes below carry it


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Int:
    value: int
    span: Span | None = _span()


@dataclass(frozen=True)
class Float:
    value: float
    span: Span | None = _span()


@dataclass(frozen=True)
class Str:
    value: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Bool:
    value: bool
    span: Span | None = _span()


@dataclass(frozen=True)
class Name:
    id: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "not"
    operand: "Expr"
    span: Span | None = _span()


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / // % ** == != < <= > >= and or
    lhs: "Expr"
    rhs: "Expr"
    span: Span | None = _span()


@dataclass(frozen=True)
class InRange:
    operand: "Expr"
    lo: "Expr"
    hi: "Expr"
    lo_closed: bool
    hi_closed: bool
    span: Span | None = _span()


@dataclass(frozen=True)
class InSet:
    operand: "Expr"
    items: tuple["Expr", ...]
    negated: bool = False
    span: Span | None = _span()


@dataclass(frozen=True)
class Cond:
    test: "Expr"
    then: "Expr"
    orelse: "Expr"
    span: Span | None = _span()


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple["Expr", ...]
    kwargs: tuple[tuple[str, "Expr"], ...] = ()
    span: Span | None = _span()

    def kwarg(self, name: str) -> "Expr | None":
        for key, value in self.kwargs:
            if key == name:
                return value
        return None


Expr = Union[Int, Float, Str, Bool, Name, Unary, Binary, InRange, InSet, Cond, Call]

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
ARITHMETIC = ("+", "-", "*", "/", "//", "%", "**")
LOGICAL = ("and", "or")

# Binding strength used by the printer (higher binds tighter).
_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "-": 5,
         "*": 6, "/": 6, "//": 6, "%": 6, "neg": 7, "**": 8}


def children(e: Expr) -> Iterator[Expr]:
    if isinstance(e, Unary):
        yield e.operand
    elif isinstance(e, Binary):
        yield e.lhs
        yield e.rhs
    elif isinstance(e, InRange):
        yield from (e.operand, e.lo, e.hi)
    elif isinstance(e, InSet):
        yield e.operand
        yield from e.items
    elif isinstance(e, Cond):
        yield from (e.test, e.then, e.orelse)
    elif isinstance(e, Call):
        yield from e.args
        for _, v in e.kwargs:
            yield v


def walk(e: Expr) -> Iterator[Expr]:
    """Pre-order traversal."""
    yield e
    for c in children(e):
        yield from walk(c)


def names(e: Expr) -> list[str]:
    """Names referenced by ``e`` in first-use order (no duplicates)."""
    seen: dict[str, None] = {}
    for node in walk(e):
        if isinstance(node, Name):
            seen.setdefault(node.id, None)
    return list(seen)


def quote(s: str) -> str:
    """A spec string literal (the inverse of the parser's unquoting)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def format_float(v: float) -> str:
    text = repr(float(v))
    if "e" in text and "." not in text.split("e")[0]:
        mant, exp = text.split("e")
        text = f"{mant}.0e{exp}"
    return text


def _prec(e: Expr) -> int:
    if isinstance(e, Binary):
        return _PREC["cmp"] if e.op in COMPARISONS else _PREC[e.op]
    if isinstance(e, Unary):
        return _PREC["not"] if e.op == "not" else _PREC["neg"]
    if isinstance(e, (InRange, InSet)):
        return _PREC["cmp"]
    if isinstance(e, Cond):
        return 0
    return 100


precedence = _prec  # binding strength of a node: every lowering that prints infix text parenthesises by it


def to_spec(e: Expr) -> str:
    """Spec-language text of ``e`` that parses back to an equal node."""
    def sub(child: Expr, min_prec: int) -> str:
        text = to_spec(child)
        return f"({text})" if _prec(child) < min_prec else text

    if isinstance(e, Int):
        return str(e.value) if e.value >= 0 else f"({e.value})"
    if isinstance(e, Float):
        return format_float(e.value) if e.value >= 0 else f"({format_float(e.value)})"
    if isinstance(e, Str):
        return quote(e.value)
    if isinstance(e, Bool):
        return "true" if e.value else "false"
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Unary):
        if e.op == "not":
            return "not " + sub(e.operand, _PREC["not"])
        return "-" + sub(e.operand, _PREC["neg"])
    if isinstance(e, Binary):
        p = _prec(e)
        if e.op in COMPARISONS:
            return f"{sub(e.lhs, p + 1)} {e.op} {sub(e.rhs, p + 1)}"
        if e.op == "**":
            return f"{sub(e.lhs, 100)} ** {sub(e.rhs, _PREC['neg'])}"
        # left-associative: the right operand needs strictly higher precedence
        return f"{sub(e.lhs, p)} {e.op} {sub(e.rhs, p + 1)}"
    if isinstance(e, InRange):
        lo = "[" if e.lo_closed else "("
        hi = "]" if e.hi_closed else ")"
        return f"{sub(e.operand, _PREC['+'])} in {lo}{to_spec(e.lo)}, {to_spec(e.hi)}{hi}"
    if isinstance(e, InSet):
        items = ", ".join(to_spec(i) for i in e.items)
        word = "not in" if e.negated else "in"
        return f"{sub(e.operand, _PREC['+'])} {word} {{{items}}}"
    if isinstance(e, Cond):
        return f"if {to_spec(e.test)} then {to_spec(e.then)} else {to_spec(e.orelse)}"
    if isinstance(e, Call):
        parts = [to_spec(a) for a in e.args] + [f"{k}={to_spec(v)}" for k, v in e.kwargs]
        return f"{e.fn}({', '.join(parts)})"
    raise TypeError(f"not an expression: {e!r}")
