"""The one three-valued static evaluator of spec expressions (true / false / unknown) and what builds on it.

``eval3(e, env)`` evaluates under a partial assignment (``StaticEnv``: attribute/let/dim values, presence,
dtypes, ranks, dims); anything it does not know stays unknown, so a check is only taken as failing when it
certainly fails. Used by the kernel emitter (which (tiling key, dtype) combinations a product can reach),
the OpDef emitter (which dtype columns the checks allow) and the tiling-key solver below.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from opgen.core import builtins as B
from opgen.core.dtypes import DTYPES
from opgen.core.errors import LoweringError
from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str, Unary, to_spec
from opgen.model.decl import Op


@dataclass(frozen=True)
class Excluded:
    """A name known to differ from every listed value (the else-branch of a key field chain)."""
    values: frozenset


@dataclass(frozen=True)
class Sym:
    """A symbolic dim value (``H``): equal to itself, assumed different from any other value."""
    name: str


@dataclass
class StaticEnv:
    names: dict = field(default_factory=dict)     # attr/let/dim name → value | Excluded | Sym
    present: dict = field(default_factory=dict)   # tensor → bool
    dtypes: dict = field(default_factory=dict)    # tensor → dtype name
    ranks: dict = field(default_factory=dict)     # tensor → int
    dims: dict = field(default_factory=dict)      # (tensor, axis) → int | Sym


_UNKNOWN = None


def _eq(a, b):
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    if isinstance(a, Excluded) or isinstance(b, Excluded):
        ex, other = (a, b) if isinstance(a, Excluded) else (b, a)
        if isinstance(other, Excluded):
            return _UNKNOWN
        return False if other in ex.values else _UNKNOWN
    if isinstance(a, Sym) or isinstance(b, Sym):
        return a == b  # distinct symbols / symbol vs number: assumed different (H is not 1)
    if isinstance(a, bool) != isinstance(b, bool) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return _UNKNOWN
    return a == b


def _not(v):
    return _UNKNOWN if v is _UNKNOWN else (not v)


def _and(a, b):
    if a is False or b is False:
        return False
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    return True


def _or(a, b):
    if a is True or b is True:
        return True
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    return False


def _known_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def eval3(e: Expr, env: StaticEnv):
    """Evaluate ``e`` under ``env``: a Python value, or None when it depends on something unknown."""
    if isinstance(e, (Int, Float, Str, Bool)):
        return e.value
    if isinstance(e, Name):
        if e.id in env.names:
            return env.names[e.id]
        if e.id in DTYPES:
            return e.id
        if e.id in B.CONSTANTS:
            return B.CONSTANTS[e.id]
        return _UNKNOWN
    if isinstance(e, Unary):
        v = eval3(e.operand, env)
        if e.op == "not":
            return _not(v) if v is _UNKNOWN or isinstance(v, bool) else _UNKNOWN
        return -v if _known_num(v) else _UNKNOWN
    if isinstance(e, Binary):
        if e.op == "and":
            return _and(eval3(e.lhs, env), eval3(e.rhs, env))
        if e.op == "or":
            return _or(eval3(e.lhs, env), eval3(e.rhs, env))
        a, b = eval3(e.lhs, env), eval3(e.rhs, env)
        if e.op == "==":
            return _eq(a, b)
        if e.op == "!=":
            return _not(_eq(a, b))
        if not (_known_num(a) and _known_num(b)):
            return _UNKNOWN
        try:
            if e.op in ("<", "<=", ">", ">="):
                return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[e.op]
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            if e.op == "//":
                return a // b
            if e.op == "%":
                return a % b
            if e.op == "/":
                return a / b
        except (ZeroDivisionError, OverflowError):
            return _UNKNOWN
        return _UNKNOWN
    if isinstance(e, InSet):
        v = eval3(e.operand, env)
        result = False
        for item in e.items:
            result = _or(result, _eq(v, eval3(item, env)))
        return _not(result) if e.negated else result
    if isinstance(e, InRange):
        v, lo, hi = eval3(e.operand, env), eval3(e.lo, env), eval3(e.hi, env)
        if not (_known_num(v) and _known_num(lo) and _known_num(hi)):
            return _UNKNOWN
        return (v >= lo if e.lo_closed else v > lo) and (v <= hi if e.hi_closed else v < hi)
    if isinstance(e, Cond):
        t = eval3(e.test, env)
        if t is True:
            return eval3(e.then, env)
        if t is False:
            return eval3(e.orelse, env)
        a, b = eval3(e.then, env), eval3(e.orelse, env)
        return a if a is not _UNKNOWN and _eq(a, b) is True else _UNKNOWN
    if isinstance(e, Call):
        arg0 = e.args[0].id if e.args and isinstance(e.args[0], Name) else None
        if e.fn == "present":
            return env.present.get(arg0, _UNKNOWN)
        if e.fn == "dtype":
            return env.dtypes.get(arg0, _UNKNOWN)
        if e.fn == "rank":
            return env.ranks.get(arg0, _UNKNOWN)
        if e.fn == "dim":
            axis = eval3(e.args[1], env)
            return env.dims.get((arg0, axis), _UNKNOWN) if _known_num(axis) else _UNKNOWN
        args = [eval3(a, env) for a in e.args]
        if any(not _known_num(a) for a in args):
            return _UNKNOWN
        if e.fn == "min":
            return min(args)
        if e.fn == "max":
            return max(args)
        if e.fn == "abs":
            return abs(args[0])
        if e.fn == "ceil_div" and args[1]:
            return -(-args[0] // args[1])
        if e.fn == "align" and args[1]:
            return -(-args[0] // args[1]) * args[1]
        return _UNKNOWN
    return _UNKNOWN


def fails(check, env: StaticEnv) -> bool:
    """True when a check (conditions → expr) certainly fails under ``env``.

    Memoised on the part of ``env`` the check reads (kernel planning asks the same question for every
    dtype combination, and most checks read one dtype or none)."""
    entry = _READS.get(id(check))
    if entry is None or entry[0] is not check:
        reads: list = []
        for c in check.conditions:
            _reads(c, reads)
        _reads(check.expr, reads)
        entry = _READS[id(check)] = (check, tuple(dict.fromkeys(reads)))
    try:
        key = (id(check), tuple(_project(kind, name, env) for kind, name in entry[1]))
        verdict = _FAILS.get(key)
    except TypeError:  # an unhashable value: evaluate without the memo
        return _fails(check, env)
    if verdict is None:
        verdict = _FAILS[key] = _fails(check, env)
    return verdict


_READS: dict[int, tuple] = {}    # id(check) -> (check, what of a StaticEnv its evaluation reads)
_FAILS: dict[tuple, bool] = {}   # (id(check), the values read) -> fails()
_MISSING = object()
_ENV_PART = {"present": "present", "dtype": "dtypes", "rank": "ranks"}


def _reads(e: Expr, out: list) -> None:
    """What of a StaticEnv eval3(e, env) may read: ("names"|"present"|"dtypes"|"ranks"|"dims", name)."""
    if isinstance(e, Name):
        out.append(("names", e.id))
    elif isinstance(e, Unary):
        _reads(e.operand, out)
    elif isinstance(e, Binary):
        _reads(e.lhs, out)
        _reads(e.rhs, out)
    elif isinstance(e, InSet):
        _reads(e.operand, out)
        for item in e.items:
            _reads(item, out)
    elif isinstance(e, InRange):
        _reads(e.operand, out)
        _reads(e.lo, out)
        _reads(e.hi, out)
    elif isinstance(e, Cond):
        _reads(e.test, out)
        _reads(e.then, out)
        _reads(e.orelse, out)
    elif isinstance(e, Call):
        arg0 = e.args[0].id if e.args and isinstance(e.args[0], Name) else None
        if e.fn in _ENV_PART:
            out.append((_ENV_PART[e.fn], arg0))
        elif e.fn == "dim":
            out.append(("dims", arg0))
            _reads(e.args[1], out)
        else:
            for a in e.args:
                _reads(a, out)


def _project(kind: str, name, env: StaticEnv):
    """The value(s) ``env`` holds for one read, typed (True, 1 and 1.0 evaluate differently)."""
    if kind == "dims":
        return frozenset((k, type(v), v) for k, v in env.dims.items() if k[0] == name)
    v = getattr(env, kind).get(name, _MISSING)
    return (type(v), v)


def dtype_reads(check) -> frozenset:
    """The tensors whose ``dtype(...)`` a check's evaluation (``fails``) may read."""
    fails(check, StaticEnv())
    return frozenset(name for kind, name in _READS[id(check)][1] if kind == "dtypes")


def _fails(check, env: StaticEnv) -> bool:
    for c in check.conditions:
        if eval3(c, env) is not True:
            return False
    return eval3(check.expr, env) is False


def possible_values(e: Expr, op: Op) -> list[int]:
    """The values a tiling-key field expression can take (one decimal digit each)."""
    if isinstance(e, Int):
        return [e.value]
    if isinstance(e, Cond):
        return sorted(set(possible_values(e.then, op)) | set(possible_values(e.orelse, op)))
    if isinstance(e, Name):
        if e.id == op.quant_by:
            return sorted(q.value for q in op.quant_modes)
        a = op.attr(e.id)
        if a is not None and a.domain is not None and not a.domain.is_range:
            vals = [i.value for i in a.domain.items if isinstance(i, Int)]
            if len(vals) == len(a.domain.items):
                return sorted(vals)
    raise LoweringError(f"cannot enumerate the values of tiling-key field {to_spec(e)}")


def solve_key_field(e: Expr, value: int) -> list[StaticEnv]:
    """Partial assignments under which key-field expression ``e`` equals ``value`` (one per way)."""
    if isinstance(e, Int):
        return [StaticEnv()] if e.value == value else []
    if isinstance(e, Name):
        return [StaticEnv(names={e.id: value})]
    if isinstance(e, Cond):
        out = []
        for truth, branch in ((True, e.then), (False, e.orelse)):
            for sub in solve_key_field(branch, value):
                test = _assume(e.test, truth)
                if test is not None:
                    merged = _merge(sub, test)
                    if merged is not None:
                        out.append(merged)
        return out
    raise LoweringError(f"cannot decode tiling-key field {to_spec(e)}")


def _assume(test: Expr, truth: bool) -> StaticEnv | None:
    """The assignment making ``test`` have truth value ``truth`` (present(T), name == literal)."""
    if isinstance(test, Call) and test.fn == "present" and isinstance(test.args[0], Name):
        return StaticEnv(present={test.args[0].id: truth})
    if isinstance(test, Unary) and test.op == "not":
        return _assume(test.operand, not truth)
    if isinstance(test, Binary) and test.op in ("==", "!=") and isinstance(test.lhs, Name) \
            and isinstance(test.rhs, (Str, Int, Bool)):
        equal = truth if test.op == "==" else not truth
        v = test.rhs.value
        return StaticEnv(names={test.lhs.id: v if equal else Excluded(frozenset([v]))})
    raise LoweringError(f"cannot decode tiling-key test {to_spec(test)}")


def _merge(a: StaticEnv, b: StaticEnv) -> StaticEnv | None:
    out = StaticEnv(dict(a.names), dict(a.present), dict(a.dtypes), dict(a.ranks), dict(a.dims))
    for k, v in b.names.items():
        cur = out.names.get(k)
        if cur is None:
            out.names[k] = v
        elif isinstance(cur, Excluded) and isinstance(v, Excluded):
            out.names[k] = Excluded(cur.values | v.values)
        elif isinstance(cur, Excluded):
            if v in cur.values:
                return None
            out.names[k] = v
        elif isinstance(v, Excluded):
            if cur in v.values:
                return None
        elif cur != v:
            return None
    for k, v in b.present.items():
        if out.present.get(k, v) != v:
            return None
        out.present[k] = v
    return out


def merge_env(a: StaticEnv, b: StaticEnv) -> StaticEnv | None:
    return _merge(a, b)


# ---- quant formula lowering --------------------------------------------------------------------
