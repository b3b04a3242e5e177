"""The shape and dtype checker of quant formulas (``quant N name "doc" { ... }``), run by ``opgen check``.

A formula is written for one token row. Each value it computes has one of three shapes, the ones the two
lowerings produce (``opgen.lower.python.QuantPy`` over a ``RowBatch``, ``opgen.lower.ascendc.QuantLowering``):

* ``scalar`` — one value per token (or a constant): literals, attributes, ``reduce_max(row)``, ``qmax``, ...
* ``row`` — one value per element of the token's row: an input read by name, ``row(T)``, ``routed(T)``,
  ``exponent(T)``, ``per_block(v, n)``, a cast or arithmetic of a row;
* ``block n`` — one value per block of ``n`` elements: ``block_max(row, n)``.

An assignment must fit its output's declared shape under the mode (rank 1: one scalar per token; rank 2 and up:
a row or per-block values), and a value whose dtype the formula fixes (``cast(v, D)``, ``e8m0``, an input
read unchanged) must be one of the output's dtypes. Errors: E123 (shape), E124 (dtype). The checker only runs
on bodies that typed cleanly (``Analyzer.kind``), so it never repeats an E1xx error.
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.core import builtins as B
from opgen.core.diagnostics import Diagnostics
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, InSet, Int, Name, Unary
from opgen.model.decl import Op, QuantMode, ShapeCond, ShapeTuple
from opgen.model.inline import inline

_FLOAT_FAMILY = frozenset(("FLOAT32", "FLOAT16", "BFLOAT16"))


@dataclass(frozen=True)
class Shape:
    kind: str            # "scalar" | "row" | "block" | "unknown"
    block: int = 0       # elements per block ("block")

    def __str__(self) -> str:
        return {"scalar": "a per-token scalar", "row": "a row", "block": f"per-block values (blocks of {self.block})",
                "unknown": "a value"}[self.kind]


SCALAR, ROW, UNKNOWN = Shape("scalar"), Shape("row"), Shape("unknown")


class _Bad(Exception):
    def __init__(self, message: str, at: Expr):
        super().__init__(message)
        self.message = message
        self.at = at


class FormulaChecker:
    """Shapes and dtypes of one op's quant formulas; reports E123/E124 into ``diags``."""

    def __init__(self, op: Op, diags: Diagnostics):
        self.op = op
        self.d = diags
        self.inputs = {t.name: t for t in op.inputs}
        self.outputs = {t.name: t for t in op.outputs}

    def check(self) -> None:
        for q in self.op.quant_modes:
            self.check_mode(q)

    def check_mode(self, q: QuantMode) -> None:
        lets: dict[str, tuple[Shape, frozenset | None]] = {}
        for s in q.body:
            try:
                e = inline(self.op, s.expr)
                shape, dtypes = self.value(e, lets)
            except _Bad as bad:
                self.d.error("E123", f"quant mode {q.value}: {bad.message}", bad.at.span or s.span)
                if s.kind == "let":
                    lets[s.name] = (UNKNOWN, None)
                continue
            if s.kind == "let":
                lets[s.name] = (shape, dtypes)
            elif s.name in self.outputs:
                self.check_assign(q, s, e, shape, dtypes)

    # ---- assignments --------------------------------------------------------------------------------------
    def check_assign(self, q: QuantMode, s, e: Expr, shape: Shape, dtypes: frozenset | None) -> None:
        out = self.outputs[s.name]
        ranks = self.output_ranks(q, out)
        where = s.expr.span or s.span
        if ranks and shape.kind != "unknown":
            if shape.kind == "scalar" and min(ranks) >= 2:
                self.d.error("E123", f"quant mode {q.value} assigns {shape} to {s.name}, whose shape gives each "
                                     f"token a row (rank {min(ranks)})", where,
                             "a per-token value fits a rank-1 output; reduce or broadcast the row explicitly")
            elif shape.kind in ("row", "block") and max(ranks) == 1:
                self.d.error("E123", f"quant mode {q.value} assigns {shape} to {s.name}, which holds one value per "
                                     f"token (rank 1)", where,
                             "reduce the row to one value per token (e.g. reduce_max(...)) or give the output a "
                             "second dim")
        if dtypes is not None and not any(v == w or (w == "FLOAT32" and v in _FLOAT_FAMILY)
                                          for v in dtypes for w in out.dtypes):
            at = e.args[1] if isinstance(e, Call) and e.fn == "cast" and len(e.args) > 1 and \
                getattr(e.args[1], "span", None) else e
            self.d.error("E124", f"quant mode {q.value} gives {s.name} dtype {' or '.join(sorted(dtypes))}, which "
                                 f"is not one of its dtypes ({' | '.join(out.dtypes)})", at.span or where,
                         f"cast to one of {', '.join(out.dtypes)} (or dtype({s.name}))")

    def output_ranks(self, q: QuantMode, out) -> set[int]:
        """Ranks the output's shape may have under mode ``q`` (empty: no product specifies it in this mode)."""
        views = [v for v in self.op.views.values() if q.value in v.quant_modes]
        if out.shape is None or (views and all(out.name in v.unspecified_outputs for v in views)):
            return set()
        ranks: set[int] = set()

        def leaves(alt) -> None:
            if isinstance(alt, ShapeTuple):
                ranks.add(len(alt.dims))
                return
            t = self.mode_test(alt.test, q.value)
            if t is not False:
                leaves(alt.then)
            if t is not True:
                leaves(alt.orelse)

        for alt in out.shape.alts:
            leaves(alt)
        return ranks

    def mode_test(self, e: Expr, mode: int) -> bool | None:
        """A shape test decided by the quant mode alone (``quantMode == 3``, and/or/not of those); else None."""
        qb = self.op.quant_by
        if isinstance(e, Binary) and e.op in ("==", "!=") and isinstance(e.lhs, Name) and e.lhs.id == qb \
                and isinstance(e.rhs, Int):
            return (e.rhs.value == mode) == (e.op == "==")
        if isinstance(e, Binary) and e.op in ("and", "or"):
            a, b = self.mode_test(e.lhs, mode), self.mode_test(e.rhs, mode)
            if e.op == "and":
                return False if False in (a, b) else (True if (a, b) == (True, True) else None)
            return True if True in (a, b) else (False if (a, b) == (False, False) else None)
        if isinstance(e, Unary) and e.op == "not":
            a = self.mode_test(e.operand, mode)
            return None if a is None else not a
        if isinstance(e, Bool):
            return e.value
        return None

    # ---- values ---------------------------------------------------------------------------------------------
    def tensor_shape(self, name: str) -> Shape:
        t = self.inputs.get(name) or self.outputs.get(name)
        ranks: set[int] = set()
        for alt in (t.shape.alts if t is not None and t.shape is not None else ()):
            stack = [alt]
            while stack:
                a = stack.pop()
                if isinstance(a, ShapeCond):
                    stack += [a.then, a.orelse]
                else:
                    ranks.add(len(a.dims))
        return SCALAR if ranks == {1} else ROW

    def static_dtypes(self, e: Expr) -> frozenset | None:
        """The dtypes a dtype-valued argument may name (``INT8``, ``dtype(T)``)."""
        if isinstance(e, Name) and e.id in DTYPES:
            return frozenset((e.id,))
        if isinstance(e, Call) and e.fn == "dtype" and e.args and isinstance(e.args[0], Name):
            t = self.inputs.get(e.args[0].id) or self.outputs.get(e.args[0].id)
            return frozenset(t.dtypes) if t is not None else None
        return None

    def value(self, e: Expr, lets: dict) -> tuple[Shape, frozenset | None]:
        """(shape, dtypes the value may have; None when the formula leaves the dtype to the lowering)."""
        if isinstance(e, Name):
            if e.id in lets:
                return lets[e.id]
            if e.id in self.inputs:
                return ROW, frozenset(self.inputs[e.id].dtypes)
            return SCALAR, None
        if isinstance(e, Unary):
            return self.value(e.operand, lets)[0], None
        if isinstance(e, Binary):
            a = self.value(e.lhs, lets)[0]
            b = self.value(e.rhs, lets)[0]
            return self.join(a, b, e), None
        if isinstance(e, InSet):
            return self.value(e.operand, lets)[0], None
        if isinstance(e, Cond):
            test = self.value(e.test, lets)[0]
            (a, da), (b, db) = self.value(e.then, lets), self.value(e.orelse, lets)
            shape = self.join(self.join(a, b, e), test, e) if test.kind != "scalar" else self.join(a, b, e)
            return shape, (da | db if da is not None and db is not None else None)
        if isinstance(e, Call):
            return self.call(e, lets)
        return SCALAR, None

    def join(self, a: Shape, b: Shape, e: Expr) -> Shape:
        if "unknown" in (a.kind, b.kind):
            return UNKNOWN
        if a.kind == "scalar":
            return b
        if b.kind == "scalar" or a == b:
            return a
        raise _Bad(f"'{getattr(e, 'op', 'if')}' combines {a} with {b}", e)

    def call(self, e: Call, lets: dict) -> tuple[Shape, frozenset | None]:
        fn = e.fn
        shape_rule = B.BUILTINS[fn].row_shape if fn in B.BUILTINS else ""
        if shape_rule == "scalar":
            return SCALAR, None
        if shape_rule == "row":
            name = e.args[0].id if e.args and isinstance(e.args[0], Name) else None
            if fn == "row" and name is not None and name not in self.inputs:
                raise _Bad(f"row({name}) reads a token's row of an input, but {name} is an output", e)
            if fn == "row" and name is not None:
                return self.tensor_shape(name), frozenset(self.inputs[name].dtypes)
            return ROW, None
        args = [self.value(a, lets) for a in e.args]
        shapes = [s for s, _ in args]
        if shape_rule == "reduce":
            if shapes[0].kind == "scalar":
                raise _Bad("reduce_max() of a per-token scalar (it reduces a row to one value per token)", e)
            return SCALAR, None
        if shape_rule in ("block", "broadcast"):
            n = e.args[1]
            if not (isinstance(n, Int) and n.value > 0):
                raise _Bad(f"the block size of {fn}() must be a positive integer literal", n)
            if shape_rule == "block":
                if shapes[0].kind in ("scalar", "block"):
                    raise _Bad(f"block_max() of {shapes[0]} (it reduces a full row per block of {n.value})", e)
                return Shape("block", n.value), None
            if shapes[0].kind == "row" or (shapes[0].kind == "block" and shapes[0].block != n.value):
                raise _Bad(f"per_block(v, {n.value}) of {shapes[0]} (it broadcasts one value per block of "
                           f"{n.value} over the row)", e)
            return ROW, None
        if shape_rule == "elementwise":
            shape = SCALAR
            for a, s in zip(e.args, shapes):
                if fn == "cast" and a is not e.args[0]:
                    break
                shape = self.join(shape, s, e)
            if fn == "cast":
                return shape, self.static_dtypes(e.args[1]) if len(e.args) > 1 else None
            if fn == "e8m0":
                return shape, frozenset(("FLOAT8_E8M0",))
            if fn == "pad_even":
                return shape, args[0][1]
            return shape, None
        return UNKNOWN, None
