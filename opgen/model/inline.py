"""Spec `def` macros expanded by substitution: every lowering and analysis reads inlined expressions."""
from __future__ import annotations

from opgen.lang.expr import Binary, Call, Cond, Expr, InRange, InSet, Name, Unary
from opgen.model.decl import Op


def inline(op: Op, e: Expr) -> Expr:
    """Expand calls to spec `def` macros by substitution (every node keeps its span: a def's body its own)."""
    return _substitute(e, {}, {d.name: d for d in op.defs})


def substitute(e: Expr, names: dict[str, Expr]) -> Expr:
    """``e`` with every Name in ``names`` replaced by its expression (spans kept)."""
    return _substitute(e, names, {})


def _substitute(e: Expr, names: dict[str, Expr], defs: dict) -> Expr:
    def sub(x: Expr, env: dict[str, Expr]) -> Expr:
        if isinstance(x, Name):
            return env.get(x.id, x)
        if isinstance(x, Unary):
            return Unary(x.op, sub(x.operand, env), span=x.span)
        if isinstance(x, Binary):
            return Binary(x.op, sub(x.lhs, env), sub(x.rhs, env), span=x.span)
        if isinstance(x, InRange):
            return InRange(sub(x.operand, env), sub(x.lo, env), sub(x.hi, env), x.lo_closed, x.hi_closed,
                           span=x.span)
        if isinstance(x, InSet):
            return InSet(sub(x.operand, env), tuple(sub(i, env) for i in x.items), x.negated, span=x.span)
        if isinstance(x, Cond):
            return Cond(sub(x.test, env), sub(x.then, env), sub(x.orelse, env), span=x.span)
        if isinstance(x, Call):
            args = tuple(sub(a, env) for a in x.args)
            if x.fn in defs:
                d = defs[x.fn]
                return sub(d.body, dict(zip(d.params, args)))
            return Call(x.fn, args, tuple((k, sub(v, env)) for k, v in x.kwargs), span=x.span)
        return x

    return sub(e, names)
