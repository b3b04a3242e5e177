"""The static kinds of scalar spec expressions (int, float, bool, string, dtype, shape, list).

Both scalar lowerings (Python references and the C++ check core) follow these kinds, so an expression
means the same number on both sides."""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str, Unary
from opgen.core.errors import LoweringError
from opgen.model.decl import Op, ProductView
from opgen.model.inline import inline as _inline
from opgen.model.resolve import dim_bindings

INT, FLOAT, BOOL, STR, DTYPE = B.INT, B.FLOAT, B.BOOL, B.STR, B.DTYPE
SHAPE, LIST = "shape", "list"

_ATTR_KINDS = {"int64": INT, "float": FLOAT, "bool": BOOL, "string": STR}
_COMPARE = frozenset(("==", "!=", "<", "<=", ">", ">="))
# Builtins over a tensor parameter (their C++ accessors in opgen.lower.cpp), with their kinds from the table.
TENSOR_FNS = {n: b.result for n, b in B.BUILTINS.items() if b.param_kinds[:1] == ("param",) and "scalar" in b.contexts}


def attr_kind(typ: str) -> str:
    return LIST if typ.startswith("list<") else _ATTR_KINDS[typ]


class ScalarKinds:
    """Static kinds of (already inlined) scalar expressions of one product view."""

    def __init__(self, view: ProductView):
        self.view = view
        self.op: Op = view.op
        self.bound = dim_bindings(self.op)
        self.lets = {l.name: l for l in view.lets}
        self.attrs = {a.name: a for a in self.op.attrs}
        self.envs = {e.name: e for e in self.op.envs}
        self.inputs = {t.name for t in self.op.inputs}
        self.outputs = {t.name for t in self.op.outputs}
        self._let_kinds: dict[str, str] = {}
        self._busy: set[str] = set()

    def let_kind(self, name: str) -> str:
        if name not in self._let_kinds:
            if name in self._busy:
                raise LoweringError(f"let {name} depends on itself")
            self._busy.add(name)
            try:
                self._let_kinds[name] = self(_inline(self.op, self.lets[name].expr))
            finally:
                self._busy.discard(name)
        return self._let_kinds[name]

    def name(self, n: str) -> str:
        # the same order as ScalarPy.name: attributes, lets, env, bound dims, constants, dtypes
        if n in self.attrs:
            return attr_kind(self.attrs[n].type)
        if n in self.lets:
            return self.let_kind(n)
        if n in self.envs:
            return attr_kind(self.envs[n].type)
        if n in self.bound:
            return INT
        if n in B.CONSTANTS:
            return FLOAT if isinstance(B.CONSTANTS[n], float) else INT
        if n in DTYPES:
            return DTYPE
        raise LoweringError(f"name {n} has no scalar value")

    def __call__(self, e: Expr) -> str:
        if isinstance(e, Int):
            return INT
        if isinstance(e, Float):
            return FLOAT
        if isinstance(e, Str):
            return STR
        if isinstance(e, Bool):
            return BOOL
        if isinstance(e, Name):
            return self.name(e.id)
        if isinstance(e, Unary):
            return BOOL if e.op == "not" else self(e.operand)
        if isinstance(e, Binary):
            if e.op in ("and", "or") or e.op in _COMPARE:
                return BOOL
            if e.op == "/":
                return FLOAT
            return FLOAT if FLOAT in (self(e.lhs), self(e.rhs)) else INT
        if isinstance(e, (InRange, InSet)):
            return BOOL
        if isinstance(e, Cond):
            return self.join(self(e.then), self(e.orelse))
        if isinstance(e, Call):
            return self.call(e)
        raise LoweringError(f"cannot type {e!r}")

    @staticmethod
    def join(a: str, b: str) -> str:
        if a == b:
            return a
        if {a, b} == {INT, FLOAT}:
            return FLOAT
        raise LoweringError(f"'if' branches of kinds {a} and {b}")

    def call(self, e: Call) -> str:
        b = B.BUILTINS.get(e.fn)
        if b is None or "scalar" not in b.contexts:
            raise LoweringError(f"builtin {e.fn} is not available in scalar expressions", e.span)
        tensor_args = {i for i, pk in enumerate(b.param_kinds) if pk == "param"}
        return B.call_result(b, [self(a) for i, a in enumerate(e.args) if i not in tensor_args])

    def mixed(self, e: Expr) -> bool:
        """A float ``if`` / ``min`` / ``max`` with an int branch or argument (converted to float first)."""
        if isinstance(e, Cond):
            parts = [e.then, e.orelse]
        elif isinstance(e, Call) and e.fn in ("min", "max"):
            parts = list(e.args)
        else:
            return False
        return self(e) == FLOAT and INT in [self(p) for p in parts]
