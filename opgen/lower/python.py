"""Spec expressions → Python source for the generated numpy reference.

Two contexts, mirroring the C++ lowering:

* **scalar** (checks, lets, shapes, dtype rules): code over a ``Scope`` named
  ``s``; integer arithmetic is int64 with errors for /0 (``opgen.runtime.scope``).
* **quant** (one quant mode's formula): numpy code over a ``RowBatch`` named
  ``q`` holding every row a destination receives, so a formula written for one
  token row is evaluated for all rows at once.  Float arithmetic is float32
  (constants are ``np.float32``), as on the device.
"""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str, Unary
from opgen.core.errors import LoweringError
from opgen.lower.literals import py_literal
from opgen.model.inline import inline as _inline
from opgen.model.kinds import ScalarKinds
from opgen.model.decl import Op, ProductView
from opgen.lang.expr import children
from opgen.model.decl import ShapeCond, TextChoice
from opgen.model.resolve import dim_bindings


class ScalarPy:
    """Lowering of scalar expressions for one product view."""

    def __init__(self, view: ProductView):
        self.view = view
        self.op = view.op
        self.bound = dim_bindings(self.op)
        self.lets = {l.name for l in view.lets}
        self.tensors = {t.name for t in self.op.inputs + self.op.outputs}
        self.attrs = {a.name for a in self.op.attrs}
        self.envs = {e.name for e in self.op.envs}

    def __call__(self, e: Expr) -> str:
        return self.lower(_inline(self.op, e))

    def float_parts(self, e: Expr, parts: list[str]) -> list[str]:
        """Int branches / arguments of a float ``if``, ``min`` or ``max`` become floats first (as in C++)."""
        kinds = ScalarKinds(self.view)
        if not kinds.mixed(e):
            return parts
        exprs = [e.then, e.orelse] if isinstance(e, Cond) else list(e.args)
        return [f"float({p})" if kinds(x) == B.INT else p for x, p in zip(exprs, parts)]

    def name(self, n: str) -> str:
        if n in self.attrs:
            return f"s.attr({py_literal(n)})"
        if n in self.lets:
            return f"s.let({py_literal(n)})"
        if n in self.envs:
            return f"s.env({py_literal(n)})"
        if n in self.bound:
            t, axis = self.bound[n]
            return f"s.dim({py_literal(t)}, {axis})"
        if n in B.CONSTANTS:
            return py_literal(B.CONSTANTS[n])
        if n in DTYPES:
            return py_literal(n)
        raise LoweringError(f"name {n} has no scalar value")

    def lower(self, e: Expr) -> str:
        L = self.lower
        if isinstance(e, (Int, Float, Str, Bool)):
            return py_literal(e.value)
        if isinstance(e, Name):
            return self.name(e.id)
        if isinstance(e, Unary):
            return f"(not {L(e.operand)})" if e.op == "not" else f"i64(-{L(e.operand)})"
        if isinstance(e, Binary):
            a, b = L(e.lhs), L(e.rhs)
            if e.op == "//":
                return f"floordiv({a}, {b})"
            if e.op == "%":
                return f"mod({a}, {b})"
            if e.op == "/":
                return f"div({a}, {b})"
            if e.op == "**":
                return f"power({a}, {b})"
            if e.op in ("+", "-", "*"):
                return f"i64({a} {e.op} {b})"
            return f"({a} {e.op} {b})"
        if isinstance(e, InRange):
            return (f"in_range({L(e.operand)}, {L(e.lo)}, {L(e.hi)}, "
                    f"{py_literal(e.lo_closed)}, {py_literal(e.hi_closed)})")
        if isinstance(e, InSet):
            items = ", ".join(L(i) for i in e.items)
            items = f"({items},)" if len(e.items) == 1 else f"({items})"
            return f"({L(e.operand)} {'not in' if e.negated else 'in'} {items})"
        if isinstance(e, Cond):
            then, orelse = self.float_parts(e, [L(e.then), L(e.orelse)])
            return f"({then} if {L(e.test)} else {orelse})"
        if isinstance(e, Call):
            return self.call(e)
        raise LoweringError(f"cannot lower {e!r}")

    def call(self, e: Call) -> str:
        fn = e.fn
        tensor = py_literal(e.args[0].id) if e.args and isinstance(e.args[0], Name) else ""
        if fn in ("present", "passed", "rank", "numel", "dtype", "shape", "format", "shaped", "prefix_true", "all_true"):
            return f"s.{fn}({tensor})"
        if fn == "dim":
            return f"s.dim({tensor}, {self.lower(e.args[1])})"
        if fn == "len":
            if isinstance(e.args[0], Name) and e.args[0].id in self.attrs:
                return f"s.len({tensor})"
            return f"len({self.lower(e.args[0])}.encode(\"utf-8\"))"
        args = [self.lower(a) for a in e.args]
        if fn in ("min", "max"):
            return f"{fn}({', '.join(self.float_parts(e, args))})"
        if fn == "abs":
            return f"i64(abs({args[0]}))"
        if fn in ("ceil_div", "align"):
            return f"{fn}({args[0]}, {args[1]})"
        if fn in ("floor", "log2", "exp2", "qmax", "emax", "ge_dtype"):
            return f"{fn}({args[0]})"
        raise LoweringError(f"builtin {fn} is not available in scalar expressions")


def local_name(n: str) -> str:
    """Python name of a quant-formula local (prefixed: a spec may call a local `q`, `np` or `out`)."""
    return f"v_{n}"


class QuantPy:
    """Lowering of one quant mode's formula over a batch of rows ``q``."""

    def __init__(self, op: Op):
        self.op = op
        self.tensors = {t.name for t in op.inputs + op.outputs}
        self.inputs = {t.name for t in op.inputs}
        self.locals: set[str] = set()
        self.bound = dim_bindings(op)  # shape variables (H, BS ...): a dim of the tensor that binds them

    def __call__(self, e: Expr) -> str:
        return self.lower(_inline(self.op, e))

    def lower(self, e: Expr) -> str:
        L = self.lower
        if isinstance(e, Int):
            return py_literal(e.value)
        if isinstance(e, Float):
            return f"np.float32({py_literal(e.value)})"
        if isinstance(e, (Str, Bool)):
            return py_literal(e.value)
        if isinstance(e, Name):
            n = e.id
            if n in self.locals:
                return local_name(n)
            if n in self.inputs:
                return f"q.rows({py_literal(n)})"
            if n in DTYPES:
                return py_literal(n)
            if n in B.CONSTANTS:
                v = B.CONSTANTS[n]
                return f"np.float32({py_literal(v)})" if isinstance(v, float) else py_literal(v)
            if n in self.bound:
                t, axis = self.bound[n]
                return f"q.dim({py_literal(t)}, {axis})"
            return f"q.attr({py_literal(n)})"
        if isinstance(e, Unary):
            return f"np.logical_not({L(e.operand)})" if e.op == "not" else f"(-{L(e.operand)})"
        if isinstance(e, Binary):
            a, b = L(e.lhs), L(e.rhs)
            if e.op == "and":
                return f"np.logical_and({a}, {b})"
            if e.op == "or":
                return f"np.logical_or({a}, {b})"
            if e.op == "//":
                return f"np.floor_divide({a}, {b})"
            return f"({a} {'%' if e.op == '%' else e.op} {b})"
        if isinstance(e, InSet):
            items = ", ".join(L(i) for i in e.items)
            neg = "not " if e.negated else ""
            return f"({neg}{L(e.operand)} in ({items},))"
        if isinstance(e, Cond):
            if self.is_static(e.test):  # decided once per batch: the untaken branch may not exist
                return f"({L(e.then)} if {L(e.test)} else {L(e.orelse)})"
            return f"np.where({L(e.test)}, {L(e.then)}, {L(e.orelse)})"
        if isinstance(e, Call):
            return self.call(e)
        raise LoweringError(f"cannot lower {e!r} in a quant formula")

    def is_static(self, e: Expr) -> bool:
        """True when ``e`` depends on no row data (only presence, dtypes, attributes, literals)."""
        if isinstance(e, Call):
            if e.fn in ("present", "dtype", "qmax", "emax"):
                return True
            if e.fn in ("routed", "row", "exponent", "cast", "reduce_max", "reduce_sum", "block_max", "per_block"):
                return False
        if isinstance(e, Name):
            return e.id not in self.locals and e.id not in self.inputs
        return all(self.is_static(c) for c in children(e))

    def call(self, e: Call) -> str:
        fn = e.fn
        tensor = py_literal(e.args[0].id) if e.args and isinstance(e.args[0], Name) else ""
        if fn in ("present", "dtype", "routed", "row", "exponent"):
            if not isinstance(e.args[0], Name):
                raise LoweringError(f"{fn}() takes a tensor parameter")
            return f"q.{fn}({tensor})"
        args = [self.lower(a) for a in e.args]
        if fn == "cast":
            rnd = e.kwarg("round")
            sat = e.kwarg("sat")
            return (f"q.cast({args[0]}, {args[1]}, round={py_literal(rnd.id if rnd else 'rint')}, "
                    f"sat={self.lower(sat) if sat is not None else 'False'})")
        if fn == "abs":
            return f"np.abs({args[0]})"
        if fn in ("min", "max"):
            out = args[0]
            for a in args[1:]:
                out = f"np.{'minimum' if fn == 'min' else 'maximum'}({out}, {a})"
            return out
        if fn in ("reduce_max", "reduce_sum", "sqrt", "rsqrt", "exp"):
            return f"q.{fn}({args[0]})"
        if fn == "block_max":
            return f"q.block_max({args[0]}, {args[1]})"
        if fn == "per_block":
            return f"q.per_block({args[0]}, {args[1]})"
        if fn in ("qmax", "emax", "e8m0", "pad_even", "exp2", "floor", "log2"):
            return f"q.{fn}({args[0]})"
        raise LoweringError(f"builtin {fn} is not available in quant formulas")


# ---- Jinja filters ----------------------------------------------------------------------------

def py_expr(e: Expr, view: ProductView) -> str:
    return ScalarPy(view)(e)


def py_all(conds, view: ProductView) -> str:
    low = ScalarPy(view)
    return " and ".join(low(c) for c in conds)


def py_text(parts, view: ProductView) -> str:
    """A check's concrete expectation (``decl.TextPart`` parts) as a str expression over ``s``: values shown as
    ``opgen.runtime.scope.show`` prints them, a choice as a conditional."""
    low = ScalarPy(view)

    def text(ps) -> str:
        code = []
        for p in ps:
            if isinstance(p, str):
                code.append(py_literal(p))
            elif isinstance(p, TextChoice):
                code.append(f"({text(p.then)} if {low(p.test)} else {text(p.orelse)})")
            else:
                code.append(f"show({low(p)})")
        return " + ".join(code) if code else '""'

    return text(parts)


def py_shape(shape, view: ProductView) -> str:
    """An output shape as a Python tuple expression (conditional shapes become conditional tuples)."""
    low = ScalarPy(view)
    if shape is None:
        raise LoweringError("output without a shape")

    def alt(a) -> str:
        if isinstance(a, ShapeCond):
            return f"({alt(a.then)} if {low(a.test)} else {alt(a.orelse)})"
        dims = [low(d) for d in a.dims]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    if len(shape.alts) != 1:
        raise LoweringError("an output shape must have exactly one alternative")
    return alt(shape.alts[0])


def py_quant_body(q, op: Op) -> list[str]:
    """Statements of one quant mode (a special expert's, the post stage's) as Python lines (4-space indents for
    `when` blocks); the post stage's reduced row is the local of its name."""
    low = QuantPy(op)
    if getattr(q, "name", None) is not None and q is op.post:
        low.locals.add(q.name)
    lines: list[str] = []
    for s in q.body:
        depth = 0
        for c in s.conditions:
            lines.append("    " * depth + f"if {low(c)}:")
            depth += 1
        target = local_name(s.name) if s.kind == "let" else f"out[{py_literal(s.name)}]"
        lines.append("    " * depth + f"{target} = {low(s.expr)}")
        if s.kind == "let":
            low.locals.add(s.name)
    return lines


FILTERS = {
    "py_expr": py_expr,
    "py_all": py_all,
    "py_shape": py_shape,
    "py_text": py_text,
    "py_quant_body": py_quant_body,
    "py_local": local_name,
}
