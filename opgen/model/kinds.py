"""The one static typer of spec expressions: kinds (int, float, bool, string, dtype, shape, list, tensor).

:class:`Typer` holds every typing rule. It runs in two places, which differ only in what a name means and in
what a type error does:

- the front-end checker (``opgen.frontend.analyze``) types the unvalidated op: names resolve against the op's
  declarations (a product's lets are not typed yet: ``any``), and errors become diagnostics, after which
  typing goes on with an unknown kind (``None``) so one run reports every error;
- the lowerings (:class:`ScalarKinds`: the Python reference and the C++ check core) type the inlined scalar
  expressions of one product view, where every name has a kind and an error (a model the checker should
  have rejected) raises a ``LoweringError``.

Both scalar lowerings follow these kinds, so an expression means the same number on both sides.
"""
from __future__ import annotations

import re
from typing import Protocol

from opgen.core import builtins as B
from opgen.core.diagnostics import count_args as _count, guess_help as _guess
from opgen.core.dtypes import DTYPES
from opgen.core.errors import LoweringError
from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Span, Str, Unary, walk
from opgen.model.decl import Def, Op, ProductView
from opgen.model.inline import inline as _inline
from opgen.model.resolve import dim_bindings

INT, FLOAT, BOOL, STR, DTYPE = B.INT, B.FLOAT, B.BOOL, B.STR, B.DTYPE
SHAPE, LIST = "shape", "list"
MISSING = object()  # Names.let_kind: the name is no let

_COMPARE = frozenset(("==", "!=", "<", "<=", ">", ">="))
# Builtins over a tensor parameter (their C++ accessors in opgen.lower.cpp), with their kinds from the table.
TENSOR_FNS = {n: b.result for n, b in B.BUILTINS.items() if b.param_kinds[:1] == ("param",) and "scalar" in b.contexts}


def attr_kind(typ: str) -> str | None:
    """The kind of an attribute or env type; None (unknown) for a misspelt type, whose E113 is reported
    where it is declared, so uses of the attribute add no type errors of their own."""
    return {"int64": INT, "float": FLOAT, "bool": BOOL, "string": STR}.get(
        typ, LIST if typ.startswith("list<") else None)


class Reporter(Protocol):
    """What a type error does (a diagnostic, or an exception) and how a span narrows to the word it is about."""

    def error(self, code: str, message: str, span: Span | None, help: str | None = None) -> None: ...

    def unknown(self, code: str, what: str, word: str, candidates, span: Span | None) -> None: ...

    def at(self, span: Span | None, pattern: str) -> Span | None: ...


class Names(Protocol):
    """What a name means where the expression stands."""
    op: Op
    bound: dict
    defs: dict[str, Def]

    def let_kind(self, name: str, let_stack: list[str] | None):
        """The kind of let ``name`` (None: unknown), ``ANY`` for one not typed here, MISSING for no let."""

    def symbols(self) -> list[str]:
        """Every name a misspelling may have meant."""


class Typer:
    def __init__(self, names: Names, report: Reporter):
        self.names = names
        self.report = report
        op = names.op
        self._tensors = {t.name for t in op.inputs + op.outputs}
        self._types = {a.name: a.type for a in op.attrs}
        for env in op.envs:
            self._types.setdefault(env.name, env.type)

    def kind(self, e: Expr, scope=("scalar", frozenset()), let_stack=None, skip_names=False) -> str | None:
        """Kind of ``e`` (see builtins); reports unknown names and type errors. None = unknown.

        ``scope``: (context, local names): "scalar" or "quant", and a def's parameters or a quant mode's
        locals (tensors in quant bodies). ``skip_names``: unknown names are reported elsewhere."""
        ctx, local = scope
        d = self.report
        k = lambda x: self.kind(x, scope, let_stack, skip_names)
        if isinstance(e, Int):
            return B.INT
        if isinstance(e, Float):
            return B.FLOAT
        if isinstance(e, Str):
            return B.STR
        if isinstance(e, Bool):
            return B.BOOL
        if isinstance(e, Name):
            # Declared names are unique (E104), so the order of these lookups decides nothing.
            n = e.id
            if n in local:
                return B.TENSOR if ctx == "quant" else B.ANY
            if n in self._tensors:
                if ctx == "quant":
                    return B.TENSOR
                # Outside builtins that take a tensor (dim, dtype, present, ...) a tensor has no value.
                d.error("E111", f"tensor '{n}' has no scalar value", e.span,
                        "a tensor only appears inside dim(), rank(), numel(), shape(), dtype() or present()")
                return None
            if n in self._types:  # an attribute or an env variable
                return attr_kind(self._types[n])
            let = self.names.let_kind(n, let_stack)
            if let is not MISSING:
                return let
            if n in B.CONSTANTS:
                return B.FLOAT if isinstance(B.CONSTANTS[n], float) else B.INT
            if n in self.names.bound:
                return B.INT
            if n in DTYPES:
                return B.DTYPE
            if n in B.ROUND_MODES:
                d.error("E102", f"rounding mode '{n}' is not a value", e.span,
                        f"rounding modes only appear as cast(..., round={n})")
            elif not skip_names:
                d.unknown("E102", "name", n, self.names.symbols() + list(local), e.span)
            return None
        if isinstance(e, Unary):
            inner = k(e.operand)
            if e.op == "not":
                if inner not in (None, B.BOOL, B.ANY, B.TENSOR):
                    d.error("E111", f"'not' needs a boolean, got {inner}", e.span)
                return B.BOOL
            if inner not in (None, B.INT, B.FLOAT, B.ANY, B.TENSOR):
                d.error("E111", f"unary '-' needs a number, got {inner}", e.span)
            return inner
        if isinstance(e, Binary):
            l, r = k(e.lhs), k(e.rhs)
            if e.op in ("and", "or"):
                for side, kk in ((e.lhs, l), (e.rhs, r)):
                    if kk not in (None, B.BOOL, B.ANY, B.TENSOR):
                        d.error("E111", f"'{e.op}' needs booleans, got {kk}", side.span)
                return B.BOOL
            if e.op in ("==", "!="):
                if None not in (l, r) and B.ANY not in (l, r) and l != r and not {l, r} <= {B.INT, B.FLOAT} \
                        and B.TENSOR not in (l, r):
                    quoted = next((x.value for x in (e.lhs, e.rhs) if isinstance(x, Str)), "")
                    d.error("E111", f"cannot compare {l} with {r}", e.span,
                            f"write {quoted} without quotes" if {l, r} == {B.INT, B.STR} and
                            re.fullmatch(r"-?[0-9]+", quoted) else None)
                return B.BOOL
            if e.op in ("<", "<=", ">", ">="):
                for side, kk in ((e.lhs, l), (e.rhs, r)):
                    if kk not in (None, B.INT, B.FLOAT, B.ANY, B.TENSOR):
                        d.error("E111", f"'{e.op}' needs numbers, got {kk}", side.span)
                return B.BOOL
            for side, kk in ((e.lhs, l), (e.rhs, r)):
                if kk not in (None, B.INT, B.FLOAT, B.ANY, B.TENSOR):
                    d.error("E111", f"'{e.op}' needs numbers, got {kk}", side.span)
            if B.TENSOR in (l, r):
                return B.TENSOR
            if e.op == "/" or B.FLOAT in (l, r):
                return B.FLOAT
            return B.INT if (l, r) == (B.INT, B.INT) else (B.ANY if None not in (l, r) else None)
        if isinstance(e, InRange):
            ok = k(e.operand)
            for b in (e.lo, e.hi):
                kb = k(b)
                if kb not in (None, B.INT, B.FLOAT, B.ANY):
                    d.error("E111", f"range bound must be a number, got {kb}", b.span)
            if ok not in (None, B.INT, B.FLOAT, B.ANY):
                d.error("E111", f"only numbers can be in a range, got {ok}", e.operand.span)
            return B.BOOL
        if isinstance(e, InSet):
            ok = k(e.operand)
            for item in e.items:
                ki = k(item)
                if None not in (ok, ki) and B.ANY not in (ok, ki) and ok != ki and not {ok, ki} <= {B.INT, B.FLOAT}:
                    d.error("E111", f"set item of kind {ki} cannot match a {ok}", item.span)
            return B.BOOL
        if isinstance(e, Cond):
            t = k(e.test)
            if t not in (None, B.BOOL, B.ANY, B.TENSOR):
                d.error("E111", f"'if' needs a boolean condition, got {t}", e.test.span)
            a, b = k(e.then), k(e.orelse)
            if None in (a, b):
                return a or b
            if a == b:
                return a
            if {a, b} <= {B.INT, B.FLOAT}:
                return B.FLOAT
            if B.TENSOR in (a, b) or B.ANY in (a, b):
                return B.TENSOR if B.TENSOR in (a, b) else B.ANY
            d.error("E111", f"'if' branches have different kinds: {a} and {b}", e.span)
            return None
        if isinstance(e, Call):
            return self.call_kind(e, scope, let_stack, skip_names)
        return None

    def call_kind(self, e: Call, scope, let_stack, skip_names) -> str | None:
        ctx, local = scope
        d = self.report
        defs = self.names.defs
        b = B.BUILTINS.get(e.fn) if e.fn not in defs else None
        tensor_args = {i for i, pk in enumerate(b.param_kinds) if pk == "param"} if b is not None else set()
        # Tensor arguments are names, checked below; everything else gets typed (in the builtin's own context when
        # it is misplaced, which is reported once below, so its arguments do not add errors of their own).
        arg_scope = (b.contexts[0], local) if b is not None and ctx not in b.contexts else scope
        kinds = [None if i in tensor_args else self.kind(a, arg_scope, let_stack, skip_names)
                 for i, a in enumerate(e.args)]
        if e.fn in defs:
            df = defs[e.fn]
            if len(e.args) != len(df.params) or e.kwargs:
                d.error("E106", f"'{e.fn}' takes {_count(len(df.params))}, got {len(e.args)}", e.span)
            if let_stack is not None and e.fn in let_stack:
                d.error("E112", f"def '{e.fn}' calls itself", e.span)
                return None
            if any(isinstance(n, Call) and n.fn == e.fn for n in walk(df.body)):
                d.error("E112", f"def '{e.fn}' calls itself", d.at(df.span, rf"(?s)=.*?\b({re.escape(e.fn)})\s*\("))
                return None
            return B.INT if all(x == B.INT for x in kinds) else B.ANY
        b = B.BUILTINS.get(e.fn)
        if b is None:
            d.unknown("E106", "function", e.fn, list(B.BUILTINS) + list(defs),
                      d.at(e.span, rf"({re.escape(e.fn)})\b"))
            return None
        if ctx not in b.contexts:
            d.error("E106", f"'{e.fn}' cannot be used in {ctx} expressions "
                            f"(only in {' and '.join(b.contexts)})", e.span)
        n = len(e.args)
        if n < b.min_args or (b.max_args is not None and n > b.max_args):
            want = _count(b.min_args) if b.max_args == b.min_args else f"at least {_count(b.min_args)}"
            d.error("E106", f"'{e.fn}' takes {want}, got {n}", e.span)
            return None
        for key, value in e.kwargs:
            if key not in b.kwargs:
                d.error("E106", f"'{e.fn}' has no keyword '{key}'", d.at(e.span, rf"\b({re.escape(key)})\s*="),
                        _guess(key, b.kwargs) or (f"keywords: {', '.join(b.kwargs)}" if b.kwargs else None))
            elif key == "round":
                if not (isinstance(value, Name) and value.id in B.ROUND_MODES):
                    d.unknown("E106", "rounding mode", getattr(value, "id", "?"), B.ROUND_MODES, value.span)
            else:
                self.kind(value, scope, let_stack, skip_names)
        op = self.names.op
        for i, pk in enumerate(b.param_kinds[:n]):
            arg = e.args[i]
            if pk == "param":
                if not (isinstance(arg, Name) and arg.id in self._tensors):
                    d.error("E106", f"'{e.fn}' expects a tensor parameter name", arg.span,
                            _guess(getattr(arg, "id", ""), [t.name for t in op.inputs + op.outputs]))
            elif pk in (B.INT, B.STR, B.DTYPE) and kinds[i] not in (None, pk, B.ANY):
                d.error("E111", f"argument {i + 1} of '{e.fn}' must be {pk}, got {kinds[i]}", arg.span)
            elif pk == B.TENSOR and kinds[i] in (B.INT, B.FLOAT, B.BOOL, B.STR, B.DTYPE):
                d.error("E111", f"argument {i + 1} of '{e.fn}' must be a tensor (a row), got {kinds[i]}",
                        arg.span)
            elif pk == B.VALUE and kinds[i] in (B.BOOL, B.STR, B.DTYPE):
                d.error("E111", f"argument {i + 1} of '{e.fn}' must be a number or a row, got {kinds[i]}",
                        arg.span)
        if b.result == "num":
            return B.call_result(b, [x for i, x in enumerate(kinds) if i not in tensor_args])
        if ctx == "quant" and e.fn in ("floor", "log2", "exp2", "exp", "sqrt", "rsqrt") and B.TENSOR in kinds:
            return B.TENSOR
        return b.result


# ---- the lowerings' side: one product view, every name typed, errors raise ------------------------------------

class _Raise:
    """A type error in a validated model is a generator bug or a construct the target cannot express."""

    def error(self, code, message, span, help=None):
        raise LoweringError(message, span)

    def unknown(self, code, what, word, candidates, span):
        raise LoweringError(f"unknown {what} '{word}'", span)

    def at(self, span, pattern):
        return span


class _ViewNames:
    """Names of one product view: its lets (the product's own included) are typed inlined, like the lowerings."""

    def __init__(self, view: ProductView, typer_of):
        self.op: Op = view.op
        self.bound = dim_bindings(self.op)
        self.defs = {}  # inlined expressions call no defs
        self._lets = {l.name: l for l in view.lets}
        self._kinds: dict[str, str | None] = {}
        self._busy: set[str] = set()
        self._typer_of = typer_of

    def let_kind(self, name: str, let_stack):
        if name not in self._lets:
            return MISSING
        if name not in self._kinds:
            if name in self._busy:
                raise LoweringError(f"let {name} depends on itself")
            self._busy.add(name)
            try:
                self._kinds[name] = self._typer_of()(_inline(self.op, self._lets[name].expr))
            finally:
                self._busy.discard(name)
        return self._kinds[name]

    def symbols(self) -> list[str]:
        return []


class ScalarKinds:
    """Static kinds of (already inlined) scalar expressions of one product view."""

    def __init__(self, view: ProductView):
        self.view = view
        self.op: Op = view.op
        # What each name is, for the lowerings that ask (cpp: what a check shows for its blamed parameter).
        self.inputs = {t.name for t in self.op.inputs}
        self.outputs = {t.name for t in self.op.outputs}
        self.attrs = {a.name: a for a in self.op.attrs}
        self.envs = {e.name: e for e in self.op.envs}
        self.lets = {l.name: l for l in view.lets}
        names = _ViewNames(view, lambda: self)
        self.bound = names.bound
        self.typer = Typer(names, _Raise())

    def __call__(self, e: Expr) -> str:
        k = self.typer.kind(e)
        if k is None or k == B.ANY:
            raise LoweringError(f"cannot type {e!r}", getattr(e, "span", None))
        return k

    def mixed(self, e: Expr) -> bool:
        """A float ``if`` / ``min`` / ``max`` with an int branch or argument (converted to float first)."""
        if isinstance(e, Cond):
            parts = [e.then, e.orelse]
        elif isinstance(e, Call) and e.fn in ("min", "max"):
            parts = list(e.args)
        else:
            return False
        return self(e) == FLOAT and INT in [self(p) for p in parts]
