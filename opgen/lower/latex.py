"""Spec expressions → LaTeX for the generated aclnn documents.

The documents write formulas as CANN's own aclnn documents do (``$$ … $$`` blocks, ``/`` spelled out as a
fraction or a floor), e.g. ../shared/cann/docs/current/aclnnMoeDistributeCombineV4.md 计算公式. A formula is
lowered for one product view (or the op's base lets) because two spec facts are rewritten on the way:

* a *product flag*, a ``let`` whose value is a literal ``true`` / ``false`` (``castsUnquantised``), is an
  internal switch of the generator, not an API parameter: its value is substituted and the boolean structure
  around it folded (``quantMode == 0 and not false`` → ``quantMode = 0``);
* an int attribute that carries a dtype (declared ``omitted = dtype(t)``, as ``yDtype``) is compared with
  ``ge::DataType`` numbers; the number is written as its enumerator (``DT_UNDEFINED``), never raw.
"""
from __future__ import annotations

from opgen.core.dtypes import DTYPES, GE_SPECIAL
from opgen.lang.expr import (COMPARISONS, Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str,
                             Unary, format_float, precedence)
from opgen.model.decl import Op, ProductView, ShapeCond, ShapeTuple

_CMP = {"==": "=", "!=": r"\neq", "<": "<", "<=": r"\leq", ">": ">", ">=": r"\geq"}
# Builtins with a mathematical spelling; every other call is written \mathrm{name}(args).
_FUNCS = {"min": r"\min", "max": r"\max", "log2": r"\log_{2}"}
# Builtins written as mathematics around their arguments ({0}, {1}: the arguments' LaTeX).
_SPELLED = {
    "abs": r"\lvert {0} \rvert",
    "ceil_div": r"\left\lceil \frac{{{0}}}{{{1}}} \right\rceil",
    "align": r"\left\lceil \frac{{{0}}}{{{1}}} \right\rceil \times {1}",
    "floor": r"\left\lfloor {0} \right\rfloor",
    "sqrt": r"\sqrt{{{0}}}",
    "rsqrt": r"\frac{{1}}{{\sqrt{{{0}}}}}",
    "exp2": r"2^{{{0}}}",
    "exp": r"e^{{{0}}}",
    "reduce_sum": r"\sum_{{h}} \left( {0} \right)",  # a quant formula's reduce_sum runs along the row (H)
}
# Operators whose operands need no parentheses: a fraction holds them whole.
_WHOLE_OPERANDS = {"/": r"\frac{{{0}}}{{{1}}}", "//": r"\left\lfloor \frac{{{0}}}{{{1}}} \right\rfloor"}
_GE_NAMES = {**{d.ge_value: d.ge_enum for d in DTYPES.values()}, **GE_SPECIAL}


def _ident(name: str) -> str:
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def _text(s: str) -> str:
    return r'\text{"' + s.replace("\\", r"\backslash ").replace("_", r"\_") + r'"}'


def product_flags(lets) -> dict[str, bool]:
    """The lets that are literal booleans: the generator's per-product switches."""
    return {l.name: l.expr.value for l in lets if isinstance(l.expr, Bool)}


def dtype_attrs(op: Op) -> frozenset[str]:
    """Int attributes whose value is a ge::DataType (an entry point that omits them passes ``dtype(t)``)."""
    return frozenset(a.name for a in op.attrs
                     if isinstance(a.omitted, Call) and a.omitted.fn == "dtype" and a.type == "int64")


def ge_dtype_name(value: int) -> str:
    """The ge::DataType enumerator of a number (graph/types.h)."""
    return _GE_NAMES[value]


def declared_lets(op: Op) -> frozenset[str]:
    """The lets a spec writes (the op's, every product's, every window's own); a view's other lets are the
    generator's (the window layout's ``win_*`` fields), which a document writes out as their values."""
    windows = [w for w in (op.window, *(p.window for p in op.products)) if w is not None]
    return frozenset(l.name for l in (*op.lets, *(l for p in op.products for l in p.lets),
                                      *(l for w in windows for l in w.lets)))


def fold(e: Expr, flags: dict[str, bool], generated: dict[str, Expr] | None = None) -> Expr:
    """Substitute the product flags and the generator's lets, and fold what they leave (and/or/not/if with a
    literal, ``0 + x``)."""
    generated = generated or {}

    def f(x: Expr) -> Expr:
        if isinstance(x, Name) and x.id in flags:
            return Bool(flags[x.id])
        if isinstance(x, Name) and x.id in generated:
            return f(generated[x.id])
        if isinstance(x, Unary):
            inner = f(x.operand)
            if x.op == "not" and isinstance(inner, Bool):
                return Bool(not inner.value)
            return Unary(x.op, inner)
        if isinstance(x, Binary):
            lhs, rhs = f(x.lhs), f(x.rhs)
            if x.op in ("and", "or"):
                absorbing = x.op == "or"  # true absorbs `or`, false absorbs `and`
                for a, b in ((lhs, rhs), (rhs, lhs)):
                    if isinstance(a, Bool):
                        return Bool(absorbing) if a.value == absorbing else b
            if x.op == "+" and Int(0) in (lhs, rhs):
                return rhs if lhs == Int(0) else lhs
            return Binary(x.op, lhs, rhs)
        if isinstance(x, Cond):
            test = f(x.test)
            if isinstance(test, Bool):
                return f(x.then if test.value else x.orelse)
            return Cond(test, f(x.then), f(x.orelse))
        if isinstance(x, InRange):
            return InRange(f(x.operand), f(x.lo), f(x.hi), x.lo_closed, x.hi_closed)
        if isinstance(x, InSet):
            return InSet(f(x.operand), tuple(f(i) for i in x.items), x.negated)
        if isinstance(x, Call):
            return Call(x.fn, tuple(f(a) for a in x.args), tuple((k, f(v)) for k, v in x.kwargs))
        return x
    return f(e)


class Latex:
    """LaTeX of expressions for one product view (``scope`` a ProductView) or for the op's base lets."""

    def __init__(self, scope: Op | ProductView):
        self.op = scope if isinstance(scope, Op) else scope.op
        self.flags = product_flags(scope.lets)
        # the generator's lets, and a switch a product computes (yDtypeRead = yDtype != 28), by their values
        declared = declared_lets(self.op) - set(product_flags(self.op.lets))
        self.generated = {l.name: l.expr for l in scope.lets if l.name not in declared and l.name not in self.flags}
        self.dtype_attrs = dtype_attrs(self.op)

    def __call__(self, e: Expr) -> str:
        return self.lower(fold(e, self.flags, self.generated))

    def name(self, name: str) -> str:
        return _ident(name)

    def cases(self, e: Expr) -> list[tuple[str, str | None]]:
        """An ``if`` chain as (value, condition) rows, the last one's condition None (否则)."""
        e = fold(e, self.flags, self.generated)
        rows = []
        while isinstance(e, Cond):
            rows.append((self.lower(e.then), self.lower(e.test)))
            e = e.orelse
        rows.append((self.lower(e), None))
        return rows

    def sub(self, e: Expr, min_prec: int) -> str:
        text = self.lower(e)
        return rf"\left({text}\right)" if precedence(e) < min_prec else text

    def _value(self, e: Expr, other: Expr) -> str:
        """A literal compared with a dtype attribute is a ge::DataType number: write its enumerator."""
        if isinstance(e, Int) and isinstance(other, Name) and other.id in self.dtype_attrs:
            return _ident(ge_dtype_name(e.value))
        return self.lower(e)

    def lower(self, e: Expr) -> str:
        L = self.lower
        if isinstance(e, Int):
            return str(e.value)
        if isinstance(e, Float):
            return format_float(e.value) if e.value >= 0 else "-" + format_float(-e.value)
        if isinstance(e, Str):
            return _text(e.value)
        if isinstance(e, Bool):
            return r"\mathrm{true}" if e.value else r"\mathrm{false}"
        if isinstance(e, Name):
            return _ident(e.id)
        if isinstance(e, Unary):
            if e.op == "not":
                return r"\lnot " + self.sub(e.operand, precedence(e) + 1)
            return "-" + self.sub(e.operand, precedence(e))
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, InRange):
            lo, hi = ("[" if e.lo_closed else "("), ("]" if e.hi_closed else ")")
            return rf"{self.sub(e.operand, precedence(e) + 1)} \in {lo}{L(e.lo)}, {L(e.hi)}{hi}"
        if isinstance(e, InSet):
            items = ", ".join(self._value(i, e.operand) for i in e.items)
            rel = r"\notin" if e.negated else r"\in"
            return rf"{self.sub(e.operand, precedence(e) + 1)} {rel} \{{{items}\}}"
        if isinstance(e, Cond):
            rows = [rf"{v}, & {c}" if c is not None else rf"{v}, & \text{{否则}}" for v, c in self.cases(e)]
            return r"\begin{cases}" + r" \\ ".join(rows) + r"\end{cases}"
        if isinstance(e, Call):
            return self._call(e)
        raise TypeError(f"no LaTeX for {type(e).__name__}")

    def _binary(self, e: Binary) -> str:
        p = precedence(e)
        if e.op in COMPARISONS:
            return f"{self.sub(e.lhs, p + 1)} {_CMP[e.op]} {self._value(e.rhs, e.lhs) if isinstance(e.rhs, Int) else self.sub(e.rhs, p + 1)}"
        if e.op in _WHOLE_OPERANDS:
            return _WHOLE_OPERANDS[e.op].format(self.lower(e.lhs), self.lower(e.rhs))
        if e.op == "**":
            return rf"{self.sub(e.lhs, 100)}^{{{self.lower(e.rhs)}}}"
        op = {"*": r"\times", "%": r"\bmod", "and": r"\land", "or": r"\lor"}.get(e.op, e.op)
        # left-associative: a right operand of equal precedence keeps its parentheses (a - (b - c))
        return f"{self.sub(e.lhs, p)} {op} {self.sub(e.rhs, p + 1)}"

    def _call(self, e: Call) -> str:
        L = self.lower
        a = e.args
        if e.fn in _SPELLED:
            return _SPELLED[e.fn].format(*(L(x) for x in a))
        head = _FUNCS.get(e.fn, _ident(e.fn))
        args = [L(x) for x in a]
        if e.fn == "cast":  # the rounding mode and saturation of the device Cast, as a subscript
            mode = [_ident(v.id) for k, v in e.kwargs if k == "round" and isinstance(v, Name)]
            mode += [_ident("sat") for k, v in e.kwargs if k == "sat" and isinstance(v, Bool) and v.value]
            if mode:
                head += "_{" + ",".join(mode) + "}"
        return head + "(" + ", ".join(args) + ")"

    def shape(self, alt) -> str:
        """One shape alternative: ``(BS, H)``; a capacity dim is written ``\\geq A``."""
        if isinstance(alt, ShapeCond):
            rows = []
            while isinstance(alt, ShapeCond):
                rows.append(rf"{self.shape(alt.then)}, & {self(alt.test)}")
                alt = alt.orelse
            rows.append(rf"{self.shape(alt)}, & \text{{否则}}")
            return r"\begin{cases}" + r" \\ ".join(rows) + r"\end{cases}"
        assert isinstance(alt, ShapeTuple)
        dims = [(r"\geq " if alt.is_at_least(i) else "") + self(d) for i, d in enumerate(alt.dims)]
        return "(" + (dims[0] + ",)" if len(dims) == 1 else ", ".join(dims) + ")")


def latex(e: Expr, scope: Op | ProductView) -> str:
    return Latex(scope)(e)


def latex_shape(alt, scope: Op | ProductView) -> str:
    return Latex(scope).shape(alt)


FILTERS = {"latex": latex, "latex_shape": latex_shape, "latex_name": _ident}
