"""Parameter sets for the differential test of the C++ check core against the Python reference.

Everything is derived from the spec itself: integer and string pools from its literals, domains, length ranges
and constraint constants; valid base cases found by repairing random cases one failing check at a time (the
Python validator names the check, the spec says which fields it reads); then mutants of those bases (one or two
fields, boundary values) and fully random cases.  Deterministic for a given seed.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Call, Expr, Float, Int, Name, Str, walk
from opgen.lower.python import ScalarPy
from opgen.model.inline import inline as _inline
from opgen.model.decl import Op, ProductView, ShapeCond
from opgen.model.resolve import dim_bindings
from opgen.runtime import OpError
from opgen.runtime.scope import EvalError, Meta

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_EXTREMES = (2**31 - 1, 2**31, 2**32, 2**40, 2**53 + 1, 2**62, INT64_MAX, INT64_MIN, INT64_MIN + 1, -(2**31))


@dataclass
class Case:
    inputs: dict = field(default_factory=dict)   # name -> None | (shape tuple, dtype name)
    outputs: dict = field(default_factory=dict)  # name -> None (dtype rule) | dtype name
    attrs: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)

    def copy(self) -> "Case":
        return Case(dict(self.inputs), dict(self.outputs), dict(self.attrs), dict(self.env))

    def key(self) -> tuple:
        return tuple(sorted((k, repr(v)) for d in (self.inputs, self.outputs, self.attrs, self.env)
                            for k, v in d.items()))


def _exprs(op: Op, view: ProductView) -> list[Expr]:
    out: list[Expr] = []
    for c in view.checks:
        out += [c.expr, *c.conditions] + ([c.value] if c.value is not None else [])
    out += [l.expr for l in view.lets]
    for t in view.inputs + view.outputs:
        if t.shape is not None:
            out += t.shape.exprs()
    out += [t.dtype_rule for t in op.outputs if t.dtype_rule is not None]
    for a in view.attrs:
        if a.domain is not None:
            out += list(a.domain.items) + ([a.domain.range.lo, a.domain.range.hi] if a.domain.range else [])
        if a.length is not None:
            out += [a.length.lo, a.length.hi]
    return [_inline(op, e) for e in out]


def encode_scalar(v, typ: str) -> str:
    if typ == "int64":
        return str(int(v))
    if typ == "bool":
        return "1" if v else "0"
    if typ == "float":
        v = float(v)
        return "nan" if v != v else ("inf" if v == math.inf else "-inf" if v == -math.inf else v.hex())
    return "h" + str(v).encode("utf-8").hex()


def encode_value(v, typ: str) -> str:
    if typ.startswith("list<"):
        return "l" + ",".join(encode_scalar(x, typ[5:-1]) for x in v)
    return encode_scalar(v, typ)


def field_macros(op: Op) -> str:
    """The X-macro field list the C++ driver reads (tests/cpp/check_driver.cpp)."""
    from opgen.lower.cpp import cpp_ident
    kinds = {"int64": "INT", "float": "REAL", "bool": "BOOL", "string": "STR"}
    lines = [f"INPUT({cpp_ident(t.name)})" for t in op.inputs]
    lines += [f"OUTPUT({cpp_ident(t.name)})" for t in op.outputs]
    for decl in list(op.attrs) + list(op.envs):
        typ = decl.type
        kind = kinds[typ[5:-1]] + "_LIST" if typ.startswith("list<") else kinds[typ]
        if decl in op.envs:
            kind = "ENV_" + kind  # its value, or "?": tiling could not read it
        lines.append(f"{kind}({cpp_ident(decl.name)})")
    lines += [f"OUTPUT_FIELD({cpp_ident(t.name)})" for t in op.outputs]
    return "\n".join(lines) + "\n"


class CaseGen:
    """Random, boundary and repaired parameter sets for one product view of an op."""

    def __init__(self, op: Op, soc: str, ref, seed: int):
        self.op = op
        self.soc = soc
        self.view = op.views[soc]
        self.ref = ref
        self.rng = random.Random(seed)
        self.bound = dim_bindings(op)
        self.lowering = ScalarPy(self.view)
        self.checks = {c.id: c for c in self.view.checks}
        self.view_inputs = {t.name: t for t in self.view.inputs}
        self.view_outputs = {t.name: t for t in self.view.outputs}
        self.attr_decls = {a.name: a for a in self.view.attrs}
        self.env_decls = {e.name: e for e in op.envs}
        exprs = _exprs(op, self.view)
        ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 7168, -1, -2}
        strs = {"", "g", "ep", "tp", "group_ep", "hccl_world_group", "中文", "é" * 64, "中" * 43, "x" * 127,
                "x" * 128}
        floats = {0.0, -0.0, 0.5, 1.0, 1.5, -2.5, 1e300, -1e-300, math.inf, -math.inf, math.nan}
        for e in exprs:
            for n in walk(e):
                if isinstance(n, Int):
                    ints.add(n.value)
                elif isinstance(n, Str):
                    strs.add(n.value)
                elif isinstance(n, Float):
                    floats.add(n.value)
                elif isinstance(n, Name) and n.id in B.CONSTANTS and isinstance(B.CONSTANTS[n.id], int):
                    ints.add(B.CONSTANTS[n.id])
        for a in list(op.attrs) + list(op.envs):
            if isinstance(a.default, int) and not isinstance(a.default, bool):
                ints.add(a.default)
            elif isinstance(a.default, str):
                strs.add(a.default)
            elif isinstance(a.default, float):
                floats.add(a.default)
        self.constants = sorted(ints)
        derived = set(ints)
        for v in ints:
            derived |= {v - 1, v + 1, 2 * v, v // 2}
        self.ints = sorted(v for v in derived | set(_EXTREMES) if INT64_MIN <= v <= INT64_MAX)
        self.small = [v for v in self.ints if 0 <= v <= 1 << 16]
        lengths = {0, 1, 2, 127, 128, 129}
        for a in op.attrs:
            if a.length is not None:
                for b in (a.length.lo, a.length.hi):
                    if isinstance(b, Int):
                        lengths |= {b.value - 1, b.value, b.value + 1}
        for n in sorted(v for v in lengths if 0 <= v < 300):
            strs.add("a" * n)
            if n >= 3:
                strs.add("通" * (n // 3) + "b" * (n % 3))
        self.strs = sorted(strs)
        self.floats = sorted(floats, key=repr)
        self.dtypes = sorted(DTYPES)
        self.warn_ids = [c.id for c in self.view.checks if c.code == 0]
        self._compiled: dict[int, tuple] = {}  # id(expr) -> (code object, expr kept alive)

    # ---- the Python side ----------------------------------------------------------------------------
    def call_args(self, case: Case):
        inputs = {n: None if v is None else Meta(v[0], v[1]) for n, v in case.inputs.items()}
        attrs = dict(case.attrs)
        attrs.update(case.env)
        out_dtypes = {n: d for n, d in case.outputs.items() if d is not None}
        return inputs, attrs, out_dtypes

    def validate(self, case: Case) -> OpError | None:
        inputs, attrs, out_dtypes = self.call_args(case)
        try:
            self.ref.validate(inputs, attrs, self.soc, out_dtypes)
        except OpError as err:
            return err
        return None

    def warnings(self, case: Case) -> list[str]:
        """Messages of the warn-class checks that fail before the first failing error check, in order."""
        from dataclasses import replace
        inputs, attrs, out_dtypes = self.call_args(case)
        info = self.ref.INFO
        s = self.ref.reference.make_scope(info, inputs, attrs, self.soc, out_dtypes)
        out = []
        for check in info.checks[self.soc]:
            if check.code != 0:
                try:
                    check.run(s, info.name)
                except OpError:
                    break
                continue
            try:
                replace(check, code=1).run(s, info.name)  # a warning reported like an error, to see its message
            except OpError as err:
                out.append(err.message)
        return out

    def scope(self, case: Case):
        inputs, attrs, out_dtypes = self.call_args(case)
        return self.ref.reference.make_scope(self.ref.INFO, inputs, attrs, self.soc, out_dtypes)

    def eval(self, e: Expr, case: Case, scope=None):
        """Value of a spec expression for ``case`` (None when it has none); ``scope``: one made for ``case``."""
        code = self._compiled.get(id(e))
        if code is None:
            code = self._compiled[id(e)] = (compile(self.lowering(e), "<spec>", "eval"), e)
        try:
            return eval(code[0], vars(self.ref), {"s": scope or self.scope(case)})  # noqa: S307 - generated code
        except (EvalError, KeyError, TypeError, ValueError, OpError, ZeroDivisionError, OverflowError):
            return None

    # ---- random values ------------------------------------------------------------------------------
    def int_value(self, near=(), wild: bool = True) -> int:
        """A constant-derived, small or (when ``wild``) extreme int; ``near``: values to hit or miss by one."""
        r = self.rng.random()
        if near and r < (0.35 if wild else 0.6):
            v = self.rng.choice(list(near)) + self.rng.choice((0, 0, 0, -1, 1))
            return min(max(v, INT64_MIN), INT64_MAX)
        if r < 0.75 or not wild:
            return self.rng.choice(self.small)
        return self.rng.choice(self.ints)

    def scalar(self, typ: str, near=(), wild: bool = True):
        if typ == "int64":
            return self.int_value(near, wild)
        if typ == "bool":
            return self.rng.random() < 0.5
        if typ == "float":
            return self.rng.choice(self.floats)
        return self.rng.choice(self.strs)

    def value(self, typ: str, near=(), wild: bool = True):
        if typ.startswith("list<"):
            return tuple(self.scalar(typ[5:-1], wild=wild) for _ in range(self.rng.randrange(0, 4)))
        return self.scalar(typ, near, wild)

    def domain_value(self, a, case: Case):
        """A value in (or at the edge of) an attribute's domain, bounds evaluated for this case."""
        d = a.domain
        if d is None:
            return self.value(a.type)
        if not d.is_range:
            v = self.eval(self.rng.choice(d.items), case)
            return v if v is not None else self.value(a.type)
        lo, hi = self.eval(d.range.lo, case), self.eval(d.range.hi, case)
        if a.type != "int64" or not isinstance(lo, int) or not isinstance(hi, int):
            return self.value(a.type)
        lo_in = lo if d.range.lo_closed else lo + 1
        hi_in = hi if d.range.hi_closed else hi - 1
        if lo_in > hi_in:
            return lo
        r = self.rng.random()
        if r < 0.3:
            return self.rng.choice((lo_in, hi_in))
        inside = [v for v in self.small if lo_in <= v <= hi_in]
        if inside and r < 0.8:
            return self.rng.choice(inside)
        return self.rng.randint(lo_in, min(hi_in, lo_in + 4096))

    def tensor_dims(self, name: str, case: Case, conform: bool = False, scope=None) -> tuple:
        """A shape for input ``name``: one of its declared alternatives evaluated for ``case``, else random.

        ``conform``: keep the dims this tensor binds and the alternative of its current rank when there is one.
        """
        t = self.view_inputs[name]
        old = case.inputs.get(name)
        if t.shape is None:
            if conform and old is not None:
                return old[0]
            return tuple(self.rng.choice(self.small[:12]) for _ in range(self.rng.randrange(1, 4)))
        alts = list(t.shape.alts)
        same_rank = [a for a in alts if conform and old is not None and not isinstance(a, ShapeCond)
                     and len(a.dims) == len(old[0])]
        alt = self.rng.choice(same_rank or alts)
        scope = scope or self.scope(case)
        while isinstance(alt, ShapeCond):
            test = self.eval(alt.test, case, scope)
            alt = alt.then if test else alt.orelse
        dims = []
        self.undefined_dims = []
        for axis, d in enumerate(alt.dims):
            if isinstance(d, Name) and self.bound.get(d.id) == (name, axis):
                keep = old is not None and len(old[0]) > axis and (conform or self.rng.random() < 0.95)
                dims.append(old[0][axis] if keep else self.int_value(self.constants, wild=False))
                continue
            v = self.eval(d, case, scope)
            if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**40):
                self.undefined_dims.append(d)
                v = self.rng.choice(self.small)
            dims.append(v)
        return tuple(dims)

    def conform(self, case: Case, skip: str | None = None) -> None:
        """Re-derive the declared shapes of the present inputs (but ``skip``) from the current values."""
        scope = self.scope(case)  # the dims inputs bind are kept, so one scope serves every input
        for t in self.view.inputs:
            if t.name != skip and case.inputs.get(t.name) is not None:
                case.inputs[t.name] = (self.tensor_dims(t.name, case, conform=True, scope=scope),
                                       case.inputs[t.name][1])

    def fresh_input(self, name: str, case: Case):
        t = self.view_inputs[name]
        return (self.tensor_dims(name, case), self.rng.choice(t.dtypes))

    # ---- cases --------------------------------------------------------------------------------------
    def start(self) -> Case:
        case = Case()
        for a in self.view.attrs:
            if a.optional and self.rng.random() < 0.6:
                case.attrs[a.name] = a.default
            else:
                case.attrs[a.name] = (self.domain_value(a, case) if a.domain is not None
                                      else self.value(a.type, self.constants, wild=False))
        for e in self.op.envs:
            r = self.rng.random()
            case.env[e.name] = (e.default if r < 0.45 else None if r < 0.55  # None: tiling cannot read it
                                else self.rng.choice((1024, 4096, 2**20)))
        for t in self.view.inputs:
            case.inputs[t.name] = None
        for t in self.view.inputs:
            if not t.optional or self.rng.random() < 0.3:
                case.inputs[t.name] = self.fresh_input(t.name, case)
        for t in self.view.outputs:
            case.outputs[t.name] = self.rng.choice(t.dtypes) if self.rng.random() < 0.3 else None
        return case

    def repair(self, case: Case, steps: int = 300) -> Case | None:
        """Fix the first failing check until the case is accepted (None when the budget runs out)."""
        for _ in range(steps):
            err = self.validate(case)
            if err is None:
                return case
            check_id = err.message.rsplit("[", 1)[-1].rstrip("]")
            check = self.checks.get(check_id)
            if check is None:
                return None
            self.fix(case, check)
            if check.origin != "implicit" or check.id.startswith(("domain.", "unsupported.", "quant_mode.")):
                self.conform(case)  # attributes changed: the declared shapes follow
        return None

    def check_holds(self, check, case: Case) -> bool:
        """The check passes on ``case``: its conditions are false or its expression is true."""
        scope = self.scope(case)
        conds = [self.eval(c, case, scope) for c in check.conditions]
        if any(c is False for c in conds) and all(c is not None for c in conds):
            return True
        return self.eval(check.expr, case, scope) is True

    def fix(self, case: Case, check) -> None:
        kind, _, name = check.id.partition(".")
        name = name.split(".")[0]
        if check.origin == "implicit":
            if kind == "null" or (kind == "shape" and name in case.inputs):
                dtype = case.inputs[name][1] if case.inputs.get(name) else self.rng.choice(self.view_inputs[name].dtypes)
                case.inputs[name] = (self.tensor_dims(name, case), dtype)
                if self.undefined_dims:  # a dim with no value (or out of range): change what it is made of
                    self.mutate_fields(case, self.related(self.undefined_dims), [])
                return
            if kind == "unsupported":
                if name in case.inputs:
                    case.inputs[name] = None
                else:
                    case.attrs[name] = self.attr_decls[name].default
                return
            if kind == "dtype":
                if name in case.inputs:
                    shape = case.inputs[name][0] if case.inputs[name] else self.tensor_dims(name, case)
                    case.inputs[name] = (shape, self.rng.choice(self.view_inputs[name].dtypes))
                else:
                    case.outputs[name] = self.rng.choice(self.view_outputs[name].dtypes)
                return
            if kind == "len":
                r = self.attr_decls[name].length
                lo, hi = self.eval(r.lo, case) or 1, self.eval(r.hi, case) or 2
                n = self.rng.randint(lo + (not r.lo_closed), max(lo + (not r.lo_closed), hi - (not r.hi_closed)))
                case.attrs[name] = "g" * n
                return
            if kind == "domain":
                case.attrs[name] = self.domain_value(self.attr_decls[name], case)
                return
            if kind == "quant_mode":
                case.attrs[name] = self.rng.choice(self.view.quant_modes)
                return
        for _ in range(10):  # greedy: a change that makes this check pass, with shapes following it
            candidate = case.copy()
            self.mutate_related(candidate, check)
            self.conform(candidate)
            if self.check_holds(check, candidate):
                case.__dict__.update(candidate.__dict__)
                return
        self.mutate_related(case, check)

    def related(self, exprs) -> list[tuple[str, str]]:
        """(kind, name) of every field the expressions read, lets and bound dims followed to their sources."""
        lets = {l.name: l for l in self.view.lets}
        out: dict[tuple[str, str], None] = {}
        seen: set[str] = set()
        todo = list(exprs)
        while todo:
            e = _inline(self.op, todo.pop())
            for n in walk(e):
                if isinstance(n, Call) and n.args and isinstance(n.args[0], Name):
                    t = n.args[0].id
                    if t in self.view_inputs:
                        out[("input", t)] = None
                    elif t in self.view_outputs:
                        out[("output", t)] = None
                if not isinstance(n, Name):
                    continue
                if n.id in self.attr_decls:
                    out[("attr", n.id)] = None
                elif n.id in self.env_decls:
                    out[("env", n.id)] = None
                elif n.id in lets and n.id not in seen:
                    seen.add(n.id)
                    todo.append(lets[n.id].expr)
                elif n.id in self.bound:
                    out[("dim", n.id)] = None
        return list(out)

    def literals(self, exprs) -> list[int]:
        """Int literals of the expressions, negated too, and integral float literals (``k != 2.0 ** 53``)."""
        out = []
        for e in exprs:
            for n in walk(_inline(self.op, e)):
                if isinstance(n, Int) or (isinstance(n, Float) and math.isfinite(n.value) and
                                          n.value == int(n.value) and abs(n.value) < 2**63):
                    out += [int(n.value), -int(n.value)]
        return out

    def float_literals(self, exprs) -> list[float]:
        return [float(n.value) for e in exprs for n in walk(_inline(self.op, e)) if isinstance(n, (Int, Float))]

    def strings(self, exprs) -> list[str]:
        return [n.value for e in exprs for n in walk(_inline(self.op, e)) if isinstance(n, Str)]

    def mutate_related(self, case: Case, check) -> None:
        exprs = [check.expr, *check.conditions]
        self.mutate_fields(case, self.related(exprs), self.literals(exprs), self.strings(exprs),
                           self.float_literals(exprs))

    def mutate_fields(self, case: Case, fields: list, constants: list, strings: list = (),
                      floats: list = ()) -> None:
        """Change one of ``fields`` (from ``related``) toward the given constants or its domain."""
        if not fields:
            self.mutate(case)
            return
        constants = constants or self.constants
        kind, name = self.rng.choice(fields)
        if kind == "attr":
            a = self.attr_decls[name]
            r = self.rng.random()
            if a.domain is not None and r < 0.4:
                case.attrs[name] = self.domain_value(a, case)
            elif a.type == "int64" and r < 0.45:  # overflow and the int / float boundary
                case.attrs[name] = self.rng.choice(self.ints)
            elif a.type == "float" and floats and r < 0.8:
                case.attrs[name] = self.rng.choice(floats) + self.rng.choice((0.0, 0.0, 0.5, -0.5))
            elif a.type == "int64" and r < 0.7:  # the check's own literals first: `probe == 3`, `k != 5`
                case.attrs[name] = self.int_value(constants, wild=False)
            elif a.type == "int64":
                case.attrs[name] = self.int_value(constants + self.current_ints(case), wild=False)
            elif a.type == "string" and strings and r < 0.8:
                case.attrs[name] = self.rng.choice(list(strings))
            else:
                case.attrs[name] = self.value(a.type)
        elif kind == "env":
            cur = case.env[name]
            case.env[name] = (None if self.rng.random() < 0.1  # None: tiling cannot read it
                              else cur * 4 if isinstance(cur, int) and 0 < cur < 2**40 else self.rng.choice((200, 4096)))
        elif kind == "dim":
            t, axis = self.bound[name]
            if case.inputs.get(t) is None or len(case.inputs[t][0]) <= axis:
                case.inputs[t] = self.fresh_input(t, case)
            else:
                shape, dtype = case.inputs[t]
                dims = list(shape)
                dims[axis] = self.int_value(constants, wild=False)
                case.inputs[t] = (tuple(dims), dtype)
        elif kind == "input":
            t = self.view_inputs[name]
            cur = case.inputs.get(name)
            r = self.rng.random()
            if r < 0.3:
                case.inputs[name] = None if cur is not None else self.fresh_input(name, case)
            elif r < 0.45 and cur is not None:
                case.inputs[name] = (cur[0], self.rng.choice(self.dtypes))
            elif r < 0.6 and cur is not None and cur[0]:
                dims = list(cur[0])
                dims[self.rng.randrange(len(dims))] = self.int_value(constants + self.current_ints(case), wild=False)
                case.inputs[name] = (tuple(dims), cur[1])
            elif r < 0.7 and cur is not None:
                case.inputs[name] = (cur[0][:-1] if cur[0] and self.rng.random() < 0.5 else cur[0] + (1,), cur[1])
            else:
                case.inputs[name] = self.fresh_input(name, case) if t.optional or r < 0.9 else None
        else:
            case.outputs[name] = self.rng.choice(self.view_outputs[name].dtypes + (None,) +
                                                 tuple(self.rng.sample(self.dtypes, 2)))

    def current_ints(self, case: Case) -> list[int]:
        vals = [v for v in case.attrs.values() if isinstance(v, int) and not isinstance(v, bool)]
        vals += [d for v in case.inputs.values() if v is not None for d in v[0]]
        small = [v for v in vals if 0 < abs(v) < 2**20][:12]
        prods = [a * b * k for a in small for b in small for k in (1, 2) if abs(a * b * k) < 2**40]
        return vals + prods

    def mutate(self, case: Case) -> None:
        """Change one field to a random, boundary or related value."""
        fields = ([("attr", a.name) for a in self.op.attrs] + [("env", e.name) for e in self.op.envs] +
                  [("input", t.name) for t in self.op.inputs] + [("output", t.name) for t in self.op.outputs])
        kind, name = self.rng.choice(fields)
        r = self.rng.random()
        if kind == "attr":
            a = self.attr_decls[name]
            if a.domain is not None and r < 0.3:
                case.attrs[name] = self.domain_value(a, case)
            elif a.type == "int64" and r < 0.6:
                case.attrs[name] = self.int_value(self.current_ints(case))
            else:
                case.attrs[name] = self.value(a.type)
        elif kind == "env":
            e = self.env_decls[name]
            case.env[name] = self.value(e.type) if r < 0.7 else 2 ** self.rng.randrange(0, 62)
        elif kind == "input":
            cur = case.inputs.get(name)
            if r < 0.2:
                case.inputs[name] = None
            elif r < 0.4 or cur is None:
                case.inputs[name] = self.fresh_input(name, case)
            elif r < 0.55:
                case.inputs[name] = (cur[0], self.rng.choice(self.dtypes))
            elif r < 0.7:
                dims = list(cur[0])
                if dims and self.rng.random() < 0.5:
                    dims.pop(self.rng.randrange(len(dims)))
                else:
                    dims.insert(self.rng.randrange(len(dims) + 1), self.rng.choice(self.small[:10]))
                case.inputs[name] = (tuple(dims), cur[1])
            else:
                dims = list(cur[0])
                if dims:
                    dims[self.rng.randrange(len(dims))] = self.int_value(self.constants + self.current_ints(case))
                case.inputs[name] = (tuple(dims), cur[1])
        else:
            t = self.view_outputs[name]
            case.outputs[name] = (None if r < 0.4 else self.rng.choice(t.dtypes) if r < 0.8
                                  else self.rng.choice(self.dtypes))

    def random_case(self) -> Case:
        case = self.start()
        for _ in range(self.rng.randrange(1, 8)):
            self.mutate(case)
        return case

    def bases(self, want: int = 6, tries: int = 30) -> list[Case]:
        found: dict[tuple, Case] = {}
        for _ in range(tries):
            case = self.repair(self.start(), steps=150)
            if case is not None:
                found.setdefault(case.key(), case)
                if len(found) >= want:
                    break
        return list(found.values())

    def first_failure(self, case: Case, check) -> bool:
        """Whether ``check`` is the first check to fail on ``case`` (for a warning: whether it is reported)."""
        if check.code == 0:
            return any(m.endswith(f"[{check.id}]") for m in self.warnings(case))
        err = self.validate(case)
        return err is not None and err.message.endswith(f"[{check.id}]")

    def holds(self, conditions, case: Case) -> bool:
        scope = self.scope(case) if conditions else None
        return all(self.eval(c, case, scope) is True for c in conditions)

    def targeted(self, bases: list[Case], attempts: int = 8, steps: int = 10) -> list[Case]:
        """For each check, a mutant of a base on which that check is the first to fail (when one is found):
        first the check's `when` conditions are made true, then the fields its expression reads are changed."""
        out = []
        for check in self.view.checks:
            conds, expr = list(check.conditions), [check.expr]
            found = False
            for _ in range(attempts):
                case = self.rng.choice(bases).copy()
                for _ in range(steps):
                    if self.holds(conds, case):
                        break
                    self.mutate_fields(case, self.related(conds), self.literals(conds), self.strings(conds))
                    self.conform(case)
                else:
                    continue
                repaired = self.repair(case.copy(), steps=25)  # an accepted case where the conditions hold
                if repaired is not None and self.holds(conds, repaired):
                    case = repaired
                for _ in range(steps):
                    self.mutate_fields(case, self.related(expr), self.literals(expr), self.strings(expr))
                    if not check.id.startswith("shape.") and self.rng.random() < 0.7:
                        self.conform(case)
                    if self.first_failure(case, check):
                        out.append(case)
                        found = True
                        break
                    if not self.holds(conds, case):
                        break
                if found:
                    break
        return out

    def cases(self, n: int) -> tuple[list[Case], int]:
        """``n`` cases (bases, one per check where possible, then mutants and random ones) and the number of bases."""
        bases = self.bases()
        out = [b.copy() for b in bases]
        if bases:
            out += self.targeted(bases)
        while len(out) < n:
            r = self.rng.random()
            if bases and r < 0.8:
                case = self.rng.choice(bases).copy()
                for _ in range(1 if r < 0.5 else 2):
                    self.mutate(case)
                if self.rng.random() < 0.3:
                    self.conform(case)
                if self.rng.random() < 0.3:  # often walk back to an accepted case nearby: new accepted sets
                    repaired = self.repair(case.copy(), steps=30)
                    case = repaired if repaired is not None else case
            else:
                case = self.random_case()
            out.append(case)
        return out, len(bases)

    # ---- the driver's line format ----------------------------------------------------------------------
    def encode(self, case: Case) -> str:
        tokens = []
        for t in self.op.inputs:
            v = case.inputs.get(t.name)
            tokens.append("-" if v is None else f"{DTYPES[v[1]].ge_value}:" + ",".join(str(d) for d in v[0]))
        for t in self.op.outputs:
            d = case.outputs.get(t.name)
            tokens.append("-" if d is None else str(DTYPES[d].ge_value))
        for a in self.op.attrs:
            tokens.append(encode_value(case.attrs[a.name], a.type))
        for e in self.op.envs:
            v = case.env[e.name]
            tokens.append("?" if v is None else encode_value(v, e.type))
        return " ".join(tokens)


def decode_result(line: str, outputs: list[str]) -> dict:
    """One result line of the driver as a dict (see tests/cpp/check_driver.cpp)."""
    tok = line.split(" ")

    def text(t: str) -> str:
        return bytes.fromhex(t[1:]).decode("utf-8")

    n_warn = int(tok[4])
    i = 5 + n_warn
    shapes_ok = tok[i] == "S1"
    shapes = {}
    for k, name in enumerate(outputs):
        dims = tok[i + 1 + k]
        shapes[name] = () if dims == "_" else tuple(int(d) for d in dims.split(","))
    i += 1 + len(outputs)
    dtypes_ok = tok[i] == "D1"
    dtypes = {name: int(tok[i + 1 + k]) for k, name in enumerate(outputs)}
    return dict(code=int(tok[0]), id=text(tok[1]), param=text(tok[2]), message=text(tok[3]),
                warnings=[text(t) for t in tok[5:5 + n_warn]], shapes_ok=shapes_ok, shapes=shapes,
                dtypes_ok=dtypes_ok, dtypes=dtypes)
