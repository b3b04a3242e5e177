"""Negative cases: one accepted call, one parameter changed, exactly one check rejects it.

For every check of a product view (and, for a check whose expression branches on ``if``, for each branch)
the search takes accepted single-rank calls (the ranks of the positive worlds) on which the check's `when`
conditions hold, then tries single-parameter changes of the fields the check reads: an attribute or
environment value, a bound dim (every tensor that has it follows), an input's presence, dtype or shape, an
output's dtype, or a BOOL input's contents.  A change counts only when the generated reference rejects the
call with exactly this check's id, code and parameter, and the conditions still hold.  Where every such change
is caught first by an earlier check, a second change of a field that earlier check reads may let the call through
to this one (epWorldSize past a limit together with a moeExpertNum it still divides).  A check no change can
trip is recorded as unreachable with the reason the search saw (which earlier check catches the changes, or
that no accepted call meets its conditions); nothing is faked.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from opgen.core.dtypes import DTYPE_NAMES, FORMATS
from opgen.lang.expr import Binary, Call, Cond, Expr, Int, Name, Str, Unary, to_spec, walk
from opgen.model.inline import inline as _inline
from opgen.model.decl import Check
from opgen.testgen.solve import Solver, int_candidates
from opgen.testgen.space import Case, Field, Space
from opgen.harness import testdata
from opgen.runtime import OpError

DATA_RECIPES = ("not_prefix",)


@dataclass(frozen=True)
class Negative:
    id: str
    check: Check
    branch: str          # "" or the branch taken, e.g. "if commAlg == \"fullmesh_v2\": true"
    case: Case           # the rejected single-rank call
    change: str          # what differs from the accepted call, for people
    data_check: bool     # the check reads tensor data (tiling, hence the C++ check core, cannot see it)


@dataclass(frozen=True)
class Unreachable:
    check: Check
    branch: str
    reason: str
    declared: bool  # the product's own declarations switch it off (unsupported, ignored, a domain): no mark needed


def rank_case(space: Space, case: Case, rank: int) -> Case:
    """The single call rank ``rank`` of a world case makes."""
    values = {k: v for k, v in case.items if k[0] != "ranks"}
    values.update({("attr", k): v for k, v in space.call_attrs(case, rank).items() if k in space.attrs})
    values.update({("dim", k): v for k, v in space.dims(case, rank).items()})
    return Case.make(case.product, values, world=False)


def data_arrays(space: Space, case: Case, key: str) -> dict:
    """Real tensors for the BOOL inputs of a call (the only data checks read), built as the suite builds them."""
    inputs = space.metas(case, None if not case.world else 0)
    out = {}
    for name, meta in inputs.items():
        if meta is not None and meta.dtype == "BOOL":
            out[name] = testdata.mask(f"{key}/{name}", meta.shape, case.get(("data", name), "random"))
    return out


_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _holds(op: str, a, b) -> bool:
    try:
        return bool(_COMPARE[op](a, b))
    except TypeError:  # a string against an integer: never equal, never ordered
        return op == "!="


def _finite(domain) -> list | None:
    """The values of a domain of literals, or of an integer range of at most 64 values; None otherwise."""
    if domain is None:
        return None
    if not domain.is_range:
        items = domain.items
        return [i.value for i in items] if all(isinstance(i, (Int, Str)) for i in items) else None
    r = domain.range
    if not (isinstance(r.lo, Int) and isinstance(r.hi, Int)):
        return None
    lo, hi = r.lo.value + (0 if r.lo_closed else 1), r.hi.value - (0 if r.hi_closed else 1)
    return list(range(lo, hi + 1)) if 0 <= hi - lo < 64 else None


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == "and":
        return _conjuncts(e.lhs) + _conjuncts(e.rhs)
    return [e]


def _disjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == "or":
        return _disjuncts(e.lhs) + _disjuncts(e.rhs)
    return [e]


def is_data_check(check: Check) -> bool:
    return any(n.fn in ("prefix_true", "all_true") for n in walk(check.expr) if hasattr(n, "fn"))


def branches(space: Space, check: Check) -> list[tuple[str, tuple[Expr, ...]]]:
    """("", ()) for a plain check; (label, goal) for each value of each `if` test inside its expression."""
    tests = [n.test for n in walk(_inline(space.op, check.expr)) if isinstance(n, Cond)]
    if not tests:
        return [("", ())]
    out = []
    for t in dict.fromkeys(tests):
        out.append((f"if {to_spec(t)}: true", (t,)))
        out.append((f"if {to_spec(t)}: false", (Unary("not", t),)))
    return out


class NegativeSearch:
    def __init__(self, space: Space, solver: Solver, bases: list[Case]):
        self.space = space
        self.solver = solver
        self.bases = bases
        self._declared: dict = {}

    # ---- one-parameter changes ---------------------------------------------------------------------------
    def changes(self, base: Case, field: Field, exprs) -> list:
        sp = self.space
        kind, name = field
        cur = base.get(field)
        if kind == "attr":
            a = sp.attrs[name]
            if a.type == "int64":
                extra = [cur - 1, cur + 1, -1, 2**31, 2**40] if isinstance(cur, int) else []
                vals = int_candidates(sp, base, field, exprs) + extra
                return [v for v in dict.fromkeys(vals) if v != cur]
            if a.type == "string":
                pool = sp.strings(exprs) + [x for x in (base.get(("attr", n)) for n in sp.attrs)
                                            if isinstance(x, str)] + ["", "x" * 128, "ep", "tp", "fullmesh"]
                return [v for v in dict.fromkeys(pool) if v != cur]
            if a.type == "bool":
                return [not cur]
            if a.type == "float":
                return [v for v in (0.0, -1.0, 1.0, 1e30) if v != cur]
            return []
        if kind == "env" and sp.envs[name].type == "string":
            return sp.env_candidates(base, field, exprs)
        if kind == "env":
            return [v for v in dict.fromkeys([0, 1, 2, 3, 4, 8, 16, 64] + int_candidates(sp, base, field, exprs))
                    if v != cur]
        if kind == "dim":
            return [v for v in int_candidates(sp, base, field, exprs) + [0] if v != cur]
        if kind == "present":
            if cur:
                return [False]
            # passing a null tensor is one parameter change, whatever dtype and shape it comes with
            rules = sp.shape_rules(name)
            dtypes = [d for d in dict.fromkeys(list(sp.inputs[name].dtypes) + list(DTYPE_NAMES))]
            out = [("given", d, r, None) for d in dtypes for r in rules]
            if "BOOL" in sp.inputs[name].dtypes:  # a mask passed with contents a data check rejects
                out += [("given", "BOOL", r, recipe) for r in rules for recipe in DATA_RECIPES]
            return out
        if kind == "dtype":
            first = list(sp.inputs[name].dtypes)
            return [d for d in dict.fromkeys(first + list(DTYPE_NAMES)) if d != cur]
        if kind == "format":  # a format the tensor's declaration does not list (FRACTAL_NZ first: the real one)
            declared = sp.inputs[name].formats
            return [f for f in sorted(FORMATS, key=lambda f: f != "FRACTAL_NZ") if f not in declared and f != cur]
        if kind == "oformat":  # an output buffer of a format its declaration does not list (FRACTAL_NZ first)
            declared = sp.outputs[name].formats
            return [f for f in sorted(FORMATS, key=lambda f: f != "FRACTAL_NZ") if f not in declared and f != cur]
        if kind == "oshape":  # the buffer the caller gives: the shape the op writes, one dim or the rank off
            shape = sp.inferred_shape(base, name)
            if shape is None:
                return []
            out = []
            for i in range(len(shape)):
                if shape[i] > 0:
                    out.append(("fixed", shape[:i] + (shape[i] - 1,) + shape[i + 1:]))
                out.append(("fixed", shape[:i] + (shape[i] + 1,) + shape[i + 1:]))
            out += [("fixed", shape[:-1]), ("fixed", shape + (1,))]
            return [v for v in dict.fromkeys(out) if v != cur]
        if kind == "out":
            first = [None] + list(sp.outputs[name].dtypes)
            return [d for d in dict.fromkeys(first + list(DTYPE_NAMES)) if d != cur]
        if kind == "shape":
            out = [r for r in sp.shape_rules(name) if r != cur]
            if base.get(("present", name)):
                inputs = sp.metas(base, None)
                shape = inputs[name].shape
                for i in range(len(shape)):
                    out += [("fixed", shape[:i] + (shape[i] + 1,) + shape[i + 1:])]
                    if shape[i] > 1:
                        out += [("fixed", shape[:i] + (shape[i] - 1,) + shape[i + 1:])]
                out += [("fixed", shape[:-1]), ("fixed", shape + (1,))]
            return out
        if kind == "data":
            return [r for r in DATA_RECIPES if r != cur]
        return []

    def apply(self, base: Case, field: Field, value) -> Case:
        if field[0] == "present" and isinstance(value, tuple):
            _, dtype, rule, recipe = value
            changes = {field: True, ("dtype", field[1]): dtype, ("shape", field[1]): rule}
            if recipe is not None:
                changes[("data", field[1])] = recipe
            return base.update(changes)
        if field[0] in ("shape", "format") and not base.get(("present", field[1])):
            return base.update({field: value, ("present", field[1]): True})
        return base.set(field, value)

    # ---- verdicts ---------------------------------------------------------------------------------------
    def verdict(self, case: Case, check: Check, goals, key: str):
        """("hit", None) when exactly ``check`` rejects ``case``; otherwise ("other", what happened)."""
        sp = self.space
        if goals and not sp.holds(goals, case):
            return "off", None
        data = data_arrays(sp, case, key)
        fail = sp.first_failure(case, ranks=[None], data={None: data})
        if check.code == 0:  # a warning: the call is accepted and the warning is reported
            if fail is not None:
                return "other", fail[1]
            s = sp.scope(case, None, data)
            try:  # reported like an error to see whether it fires
                replace(sp.checks[sp.check_index[check.id]], code=1).run(s, sp.info.name)
            except OpError:
                return "hit", None
            return "other", "accepted"
        if fail is None:
            return "other", "accepted"
        _, cid, err = fail
        if cid == check.id and err.code == check.code and err.param == check.param:
            return "hit", None
        return "other", cid

    def impossible(self, g: Expr) -> str | None:
        """Why a condition can never hold in an accepted call, when the product's declarations say so."""
        v = self.space.view
        for part in _conjuncts(g):  # a part that reads nothing of the call: the product's lets fix it
            if not self.space.related([part]) and self.bases and \
                    self.space.eval(part, self.space.scope(self.bases[0])) is False:
                return f"{to_spec(part)} is false on this product (its lets fix it), so the condition {to_spec(g)} never holds"
        if isinstance(g, Call) and g.fn == "present" and g.args[0].id in v.unsupported_inputs:
            return (f"{g.args[0].id} is not supported on this product: an accepted call passes it null "
                    f"(unsupported.{g.args[0].id}), so the condition {to_spec(g)} never holds")
        if isinstance(g, Binary) and g.op in _COMPARE and isinstance(g.lhs, Name) and \
                isinstance(g.rhs, (Int, Str)) and g.lhs.id in self.space.attrs:
            a = self.space.attrs[g.lhs.id]
            if a.name == self.space.op.quant_by and v.quant_modes:
                allowed = list(v.quant_modes)
                why = f"{a.name} is one of the product's quant modes {{{', '.join(map(str, allowed))}}}"
            elif a.name in v.unsupported_attrs:
                allowed = [a.default]
                why = f"{a.name} is not supported on this product (it keeps its default {_show(a.default)})"
            elif a.ignored:
                allowed = [a.default]
                why = f"{a.name} is ignored on this product (it is read as its default {_show(a.default)})"
            elif a.domain is not None and not a.domain.is_range and \
                    all(isinstance(i, (Int, Str)) for i in a.domain.items):
                allowed = [i.value for i in a.domain.items]
                why = f"{a.name} is one of {{{', '.join(_show(x) for x in allowed)}}} on this product"
            else:
                return None
            if not any(_holds(g.op, x, g.rhs.value) for x in allowed):
                return f"{why}, so the condition {to_spec(g)} never holds"
        return None

    def closest(self, goals) -> list[Case]:
        """Accepted calls ordered by how many of ``goals`` they meet (all goals counted, stable)."""
        parts = [c for g in goals for c in _conjuncts(g)]

        def met(b):
            s = self.space.scope(b)
            return sum(1 for g in parts if self.space.eval(g, s) is True)
        return sorted(self.bases, key=met, reverse=True)

    def bases_for(self, goals) -> list[Case]:
        """Accepted calls on which ``goals`` hold: from the positive worlds, else repaired from them."""
        ok = [b for b in self.bases if not goals or self.space.holds(goals, b)]
        if ok or not goals:
            return ok
        for b in self.closest(goals)[:3]:
            found = self.solver.solve(b, goals=tuple(goals), steps=20)
            if found is not None:
                return [found]
        return []

    def declared_off(self, check: Check, goal: tuple) -> str | None:
        """Why the product's declarations alone switch ``check`` (or its branch) off, or None: a condition they
        make impossible, or an expression that holds for every value their finite domains allow."""
        key = (check.id, goal)
        if key not in self._declared:
            goals = tuple(check.conditions) + goal
            self._declared[key] = next((r for r in map(self.impossible, goals) if r is not None), None) or \
                self.always_holds(check, goals)
        return self._declared[key]

    def always_holds(self, check: Check, goals: tuple) -> str | None:
        """The reason ``check`` can never fail when every field it reads is an attribute the product pins to a
        finite set (a domain of literals, or unsupported / ignored: its default): each combination is evaluated
        on an accepted call, none fails. None when a field is free (a dim, a range, a tensor) or one fails."""
        if check.value is None:  # `P or Q`: one part that always holds is enough
            for part in _disjuncts(_inline(self.space.op, check.expr)):
                reason = self._always_true(check, part)
                if reason is not None:
                    return reason
            return None
        return self._always_true(check, check.expr, check.value)

    def _always_true(self, check: Check, expr: Expr, value: Expr | None = None) -> str | None:
        sp, v = self.space, self.space.view
        # only what the expression reads: the conditions decide whether it runs, not whether it can fail
        fields = sp.related([expr] + ([value] if value is not None else []))
        if check.code == 0 or not fields or not self.bases or \
                any(f[0] != "attr" and f != ("present", f[1]) for f in fields):
            return None
        values, said = [], []
        here = sp.check_index[check.id]

        def pinned_before(kind: str, name: str) -> bool:  # the check that enforces the pin runs first
            return sp.check_index.get(f"{kind}.{name}", here) < here

        for kind, name in fields:
            if kind == "present":  # an unsupported input is null in every call that gets this far
                if name not in v.unsupported_inputs or not pinned_before("unsupported", name):
                    return None
                values.append([False])
                said.append(f"{name} unsupported (null)")
                continue
            a = sp.attrs[name]
            if a.ignored or (name in v.unsupported_attrs and pinned_before("unsupported", name)):
                values.append([a.default])
                said.append(f"{name} {'unsupported' if name in v.unsupported_attrs else 'ignored'} "
                            f"({_show(a.default)})")
            elif pinned_before("domain", name) and _finite(a.domain) is not None:
                values.append(_finite(a.domain))
                said.append(f"{name} in {{{', '.join(_show(x) for x in values[-1])}}}")
            else:
                return None
        combos = [[]]
        for vs in values:
            combos = [c + [x] for c in combos for x in vs]
            if len(combos) > 256:
                return None
        for combo in combos:
            case = self.bases[0].update(dict(zip(fields, combo)))
            try:
                if sp.eval(expr, sp.scope(case)) is not True:
                    return None
            except Exception:  # the combination does not make a call (cannot be bound): nothing proven
                return None
        return (f"holds for every value the product's declarations allow ({'; '.join(said)}), so it never "
                f"rejects a call")

    def search(self, check: Check, branch: str, goal: tuple, key: str):
        goals = tuple(check.conditions) + goal
        reason = self.declared_off(check, goal)
        if reason is not None:
            return None, reason
        hit, seen, bases_found = self._search(check, goals, key)
        if hit is not None:
            return hit, None
        # `P or Q`: a call where only Q holds, so that breaking Q breaks the check (tried when plain bases fail)
        disjuncts = _disjuncts(_inline(self.space.op, check.expr))
        for i in range(len(disjuncts) if len(disjuncts) > 1 else 0):
            others = tuple(Unary("not", d) for j, d in enumerate(disjuncts) if j != i)
            hit, more, found = self._search(check, goals + others, key, extra_goals=len(others))
            seen.update(more)
            bases_found = bases_found or found
            if hit is not None:
                return hit, None
        if not bases_found:
            conds = " and ".join(to_spec(g) for g in goals)
            caught = [cid for cid, _ in seen.most_common(3) if cid != "accepted"]
            also = f"; the changes that make them hold are rejected first by {', '.join(caught)}" if caught else ""
            return None, f"no accepted call satisfies its conditions ({conds}){also}"
        caught = [(cid, n) for cid, n in seen.most_common() if cid != "accepted"]
        if caught:
            top = ", ".join(f"{cid} ({n})" for cid, n in caught[:3])
            return None, (f"shadowed: every single-parameter change of an accepted call that breaks it is "
                          f"rejected first by an earlier check, and no second change satisfying that check "
                          f"lets it through: {top} of {sum(seen.values())} changes")
        return None, "no single-parameter change of an accepted call makes it fail"

    def _search(self, check: Check, goals: tuple, key: str, extra_goals: int = 0, budget: int = 300):
        sp = self.space
        bases = self.bases_for(goals)
        met = bool(bases)
        if not bases and not extra_goals:  # a change may also be what makes the conditions hold
            bases = self.closest(goals)[:8]
        if any(getattr(n, "fn", None) == "prefix_true" for n in walk(check.expr)):  # needs a true after a false
            bases = [b for b in bases if all(d >= 2 for d in self._data_dims(b, check))] or \
                [c for c in (self.solver.solve(b, pins=self._two_rows(b, check), goals=goals, steps=15)
                             for b in bases[:2]) if c is not None]
        seen: Counter = Counter()
        if not bases:
            return None, seen, False
        check_goals = goals[:len(goals) - extra_goals] if extra_goals else goals
        fields = sp.related([check.expr]) + sp.related(list(check.conditions))
        if check.value is not None:
            fields += sp.related([check.value])
        fields = list(dict.fromkeys(fields))
        if is_data_check(check):
            fields = [f for f in fields if f[0] == "data"] + fields
        exprs = [check.expr, *check.conditions]
        blocked = []  # (trial, field, earlier check): changes that break this check but an earlier one catches
        for base in bases:
            for field in fields:
                for value in self.changes(base, field, exprs)[:32]:
                    budget -= 1
                    if budget < 0:
                        return self._pair(check, check_goals, key, blocked) or \
                            self._through(check, check_goals, key, bases), seen, met
                    trial = self.apply(base, field, value)
                    verdict, what = self.verdict(trial, check, check_goals, key)
                    if verdict == "hit":
                        return (base, [field], trial), seen, True
                    if what is not None:
                        seen[what] += 1
                    if what in self.space.check_index and self.breaks(trial, check, check_goals, key):
                        blocked.append((base, field, trial, what))
        return self._pair(check, check_goals, key, blocked) or self._through(check, check_goals, key, bases), \
            seen, met

    def _through(self, check: Check, goals, key: str, bases: list[Case]):
        """A call that passes every check before ``check`` and breaks it, found by the repair search from an
        accepted call (several fields at once: epWorldSize, sharedExpertRankNum and a moeExpertNum that
        together exceed a per-product limit). Tried only when no one- or two-field change got through."""
        if check.code == 0 or check.id not in self.space.check_index:
            return None
        solver = Solver(self.space, steps=12, pair_budget=120, upto=self.space.check_index[check.id])
        breaking = (Unary("not", check.expr),) + tuple(goals)
        for base in bases[:2]:
            found = solver.solve(base, goals=breaking)
            if found is not None and self.verdict(found, check, goals, key)[0] == "hit":
                return base, [f for f, _ in found.items if base.get(f) != found.get(f)], found
        return None

    def breaks(self, case: Case, check: Check, goals, key: str) -> bool:
        """Whether ``check`` on its own rejects ``case`` (with its code and parameter) and its goals hold."""
        sp = self.space
        if check.code == 0 or (goals and not sp.holds(goals, case)):
            return False
        try:
            sp.checks[sp.check_index[check.id]].run(sp.scope(case, None, data_arrays(sp, case, key)), sp.info.name)
        except OpError as err:
            return err.code == check.code and err.param == check.param
        except Exception:  # the call itself is malformed (e.g. a shape the scope cannot bind)
            return False
        return False

    def _pair(self, check: Check, goals, key: str, blocked: list, budget: int = 240):
        """A second change that satisfies the earlier check which caught a breaking change, so that this check
        is the first to reject (e.g. epWorldSize past a transport limit and a moeExpertNum it still divides).
        The repair may not touch the field the first change broke; the verdict is the full one."""
        sp = self.space
        tried: set = set()
        per_field: Counter = Counter()
        for base, field, trial, caught in blocked:
            # the same breaking value caught by the same check repairs the same way on every base; a few values
            # per field (epWorldSize 9 may be refused where 16 is not)
            if (field, trial.get(field), caught) in tried or per_field[field, caught] >= 3:
                continue
            tried.add((field, trial.get(field), caught))
            per_field[field, caught] += 1
            earlier = next(c for c in sp.view.checks if c.id == caught)
            exprs2 = [earlier.expr, *earlier.conditions]
            for field2 in sp.related(exprs2):
                if field2 == field or field2[0] == "data":
                    continue
                for value in self.changes(trial, field2, exprs2)[:24]:
                    budget -= 1
                    if budget < 0:
                        return None
                    trial2 = self.apply(trial, field2, value)
                    if self.verdict(trial2, check, goals, key)[0] == "hit":
                        return base, [field, field2], trial2
        return None

    def _data_dims(self, case: Case, check: Check) -> list[int]:
        names = [n.args[0].id for n in walk(check.expr) if getattr(n, "fn", None) in ("prefix_true", "all_true")]
        inputs = self.space.metas(case, None)
        return [inputs[n].shape[0] if inputs.get(n) is not None and inputs[n].shape else 0 for n in names]

    def _two_rows(self, case: Case, check: Check) -> dict:
        names = [n.args[0].id for n in walk(check.expr) if getattr(n, "fn", None) in ("prefix_true", "all_true")]
        dims = {}
        for name in names:
            t = self.space.inputs[name]
            if t.shape is not None and t.shape.alts and hasattr(t.shape.alts[0], "dims"):
                d = t.shape.alts[0].dims[0]
                if getattr(d, "id", None) in self.space.bound:
                    dims[("dim", d.id)] = max(case.get(("dim", d.id), 1), 2)
        return dims


def describe(space: Space, base: Case, field: Field, trial: Case) -> str:
    kind, name = field
    before, after = base.get(field), trial.get(field)
    if kind == "shape":
        b_in = space.metas(base, None)
        t_in = space.metas(trial, None)
        b = b_in[name].shape if b_in.get(name) is not None else None
        return f"{name} shape {_show(b)} -> {_show(t_in[name].shape)}"
    if kind == "present":
        if after and not before:
            inputs = space.metas(trial, None)
            recipe = trial.get(("data", name))
            data = f", {recipe} data" if recipe != base.get(("data", name)) else ""
            return f"{name} given as {trial.get(('dtype', name))} {_show(inputs[name].shape)}{data} (was null)"
        return f"{name} null (was given)"
    if kind == "format":
        return f"{name} format {before or 'ND'} -> {after}"
    if kind == "oformat":
        return f"{name} buffer format {before or 'ND'} -> {after}"
    if kind == "oshape":
        return f"{name} given as a buffer of shape {_show(tuple(after[1]))} (the op writes {_show(space.inferred_shape(base, name))})"
    label = {"attr": name, "env": name, "dim": name, "dtype": f"{name} dtype", "out": f"{name} dtype",
             "data": f"{name} data"}[kind]
    return f"{label} {_show(before)} -> {_show(after)}"


def _show(v) -> str:
    if v is None:
        return "default"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, tuple):
        return "(" + ", ".join(str(d) for d in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def negatives(space: Space, solver: Solver, positives: list[Case]) -> tuple[list[Negative], list[Unreachable]]:
    bases: list[Case] = []
    for p in positives:
        for r in space.ranks(p, limit=2):
            rc = rank_case(space, p, r)
            if rc not in bases:
                bases.append(rc)
    search = NegativeSearch(space, solver, bases)
    found, unreachable = [], []
    for check in space.view.checks:
        for label, goal in branches(space, check):
            index = branches(space, check).index((label, goal))
            nid = f"{space.soc}-{check.id}" + (f"-if{index // 2 + 1}-{'true' if label.endswith('true') else 'false'}"
                                                 if label else "")
            hit, reason = search.search(check, label, goal, nid)
            if hit is None:
                unreachable.append(Unreachable(check, label, reason, search.declared_off(check, goal) is not None))
                continue
            base, fields, trial = hit
            change = ", ".join(describe(space, base, f, trial) for f in fields)
            found.append(Negative(nid, check, label, trial, change, is_data_check(check)))
    return found, unreachable
