"""The one place model values are written as spec text: literals, ranges, domains, shapes.

Two registers, both used verbatim in generated files and messages, so they must never drift apart:

* *spec syntax* (``literal``, ``range_text``, ``domain_text``, ``alt_text``, ``shape_text``): what the
  printer writes back (``load_text(print_op(op)) == op``), what ``opgen diff`` / ``opgen products`` show and
  what the docs quote;
* *the expectation a failing check states* (``domain_expected``, ``shape_expected``): the "It should be …"
  part of CANN's message (``one of {…}`` for sets, ``or`` between shape alternatives).
"""
from __future__ import annotations

from opgen.lang.expr import format_float, quote, to_spec
from opgen.model.decl import Domain, Range, Shape, ShapeCond


def literal(v) -> str:
    """A default value (Python literal from the model) in spec syntax."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, tuple):
        return "[" + ", ".join(literal(x) for x in v) + "]"
    if isinstance(v, float):
        return format_float(v) if v >= 0 else "-" + format_float(-v)
    if isinstance(v, int):
        return str(v)
    raise TypeError(f"no spec literal for {type(v).__name__}")


def range_text(r: Range) -> str:
    return f"{'[' if r.lo_closed else '('}{to_spec(r.lo)}, {to_spec(r.hi)}{']' if r.hi_closed else ')'}"


def _items(d: Domain) -> str:
    return "{" + ", ".join(to_spec(i) for i in d.items) + "}"


def domain_text(d: Domain) -> str:
    """``in [lo, hi]`` or ``in {a, b}``: the domain clause of an attribute."""
    return "in " + (range_text(d.range) if d.range is not None else _items(d))


def alt_text(a) -> str:
    """One shape alternative: ``(BS, H)``, ``(BS,)``, ``()`` or ``if c then (…) else (…)``."""
    if isinstance(a, ShapeCond):
        return f"if {to_spec(a.test)} then {alt_text(a.then)} else {alt_text(a.orelse)}"
    dims = [(">= " if a.is_at_least(i) else "") + to_spec(d) for i, d in enumerate(a.dims)]
    if not dims:
        return "()"
    return "(" + dims[0] + ",)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def shape_text(s: Shape) -> str:
    return " | ".join(alt_text(a) for a in s.alts)


def domain_expected(d: Domain) -> str:
    return "in " + range_text(d.range) if d.range is not None else "one of " + _items(d)


def _alt_expected(a) -> str:
    if isinstance(a, ShapeCond):
        return f"(if {to_spec(a.test)} then {_alt_expected(a.then)} else {_alt_expected(a.orelse)})"
    inner = ", ".join((">= " if a.is_at_least(i) else "") + to_spec(d) for i, d in enumerate(a.dims))
    return f"({inner},)" if len(a.dims) == 1 else f"({inner})"


def shape_expected(s: Shape) -> str:
    return " or ".join(_alt_expected(a) for a in s.alts)
