"""Finding accepted cases by repair: fix the first failing check, one field at a time, deterministically.

The first check a case fails names the fields to change (the ones its expression reads, lets and bound dims
followed to their sources); candidate values come from the spec (the constraint's own numbers and strings,
the attribute's domain, the values already in the case and their products) and are tried smallest first, so
the cases found keep the small shapes the spec allows.  A change is kept when the case gets further through
the ordered check list (and through the extra ``goals``, which come first); the search stops when the case is
accepted or no single change makes progress.
"""
from __future__ import annotations

from opgen.lang.expr import Expr
from opgen.testgen.space import Case, Field, Space

_SMALL = (0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64)
_STRINGS = ("ep", "tp", "g")
_ENV_STEPS = tuple(2 ** k for k in range(8, 17))


def int_candidates(space: Space, case: Case, field: Field, exprs) -> list[int]:
    kind, name = field
    values: set[int] = set(_SMALL)
    for v in space.literals(exprs):
        values |= {v - 1, v, v + 1}
        if 2 <= v <= 1 << 20:
            values |= {2 * v, 3 * v}
    if kind == "attr":
        values |= set(_domain_ints(space, case, name))
    current = [v for v in list(case.of_kind("attr").values()) + list(case.of_kind("dim").values())
               if isinstance(v, int) and not isinstance(v, bool)]
    for per_rank in case.of_kind("ranks").values():
        current.append(max(per_rank))
    small = [v for v in current if 0 < v <= 1 << 16]
    values |= set(current)
    values |= {a * b for a in small for b in small}
    if kind == "env":
        values |= set(_ENV_STEPS)
    cur = case.get(field)
    lo = 1 if kind == "dim" else 0 if kind == "env" else None
    out = sorted((v for v in values if v != cur and (lo is None or v >= lo) and -(2**62) < v < 2**62),
                 key=lambda v: (v < 0, abs(v)))
    return out


def _domain_ints(space: Space, case: Case, name: str) -> list[int]:
    a = space.attrs[name]
    if a.domain is None:
        return []
    s = space.scope(case, None if not case.world else 0)
    if a.domain.range is not None:
        out = []
        for bound, closed, step in ((a.domain.range.lo, a.domain.range.lo_closed, 1),
                                    (a.domain.range.hi, a.domain.range.hi_closed, -1)):
            v = space.eval(bound, s)
            if isinstance(v, int) and not isinstance(v, bool):
                out += [v, v + step if not closed else v, v - step]
        return out
    items = [space.eval(i, s) for i in a.domain.items]
    return [v for v in items if isinstance(v, int) and not isinstance(v, bool)]


def candidates(space: Space, case: Case, field: Field, exprs) -> list:
    """Values to try for ``field`` when ``exprs`` fail, most preferred first."""
    kind, name = field
    cur = case.get(field)
    if kind == "env" and space.envs[name].type == "string":
        return space.env_candidates(case, field, exprs)
    if kind in ("dim", "env"):
        return int_candidates(space, case, field, exprs)
    if kind == "attr":
        a = space.attrs[name]
        if a.type == "int64":
            return int_candidates(space, case, field, exprs)
        if a.type == "bool":
            return [not cur]
        if a.type == "string":
            s = space.scope(case, 0 if case.world else None)
            items = [space.eval(i, s) for i in a.domain.items] if a.domain is not None and a.domain.items else []
            pool = [a.default or ""] + [i for i in items if isinstance(i, str)] + space.strings(exprs) + list(_STRINGS)
            return [v for v in dict.fromkeys(pool) if v != cur]
        if a.type == "float":
            return [v for v in (a.default, 0.0, 1.0, 0.5) if v is not None and v != cur]
        return []
    if kind == "present":
        return [not cur]
    if kind == "dtype":
        return [d for d in space.inputs[name].dtypes if d != cur]
    if kind == "format":
        return [f for f in space.inputs[name].formats if f != (cur or "ND")]
    if kind == "oshape":
        return [None] if cur is not None else []
    if kind == "oformat":
        return [f for f in space.outputs[name].formats if f != (cur or "ND")]
    if kind == "shape":
        return [r for r in space.shape_rules(name) if r != cur]
    if kind == "out":
        return [d for d in (None,) + tuple(space.outputs[name].dtypes) if d != cur]
    return []


class Solver:
    """Repair search over one product view."""

    def __init__(self, space: Space, steps: int = 40, pair_budget: int = 200, upto: int | None = None):
        """``upto``: only the checks before this index count (a negative search asks for a call that passes
        every check before one and breaks that one)."""
        self.space = space
        self.steps = steps
        self.pair_budget = pair_budget
        self.upto = upto
        self.evaluations = 0
        self._memo: dict = {}

    def progress(self, case: Case, goals: tuple[Expr, ...]) -> tuple[int, int, int, object]:
        """(goals met in order, minus the number of failing checks, index of the first, the first failure).

        Checks are counted on every search rank, each on its own, so a change that fixes one check without
        breaking another is progress even when an earlier check still fails.
        """
        key = (case, tuple(id(g) for g in goals))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._progress(case, goals)
        return hit

    def _progress(self, case: Case, goals: tuple[Expr, ...]) -> tuple:
        self.evaluations += 1
        sp = self.space
        met = 0
        if goals:
            s = sp.scope(case, 0 if case.world else None)
            for g in goals:
                if sp.eval(g, s) is not True:
                    break
                met += 1
        failing = sp.failures(case, upto=self.upto)
        ids = frozenset(f[1] for f in failing) | ({f"goal{met}"} if met < len(goals) else set())
        if met < len(goals):
            return met, -len(failing), -1, goals[met], ids
        if not failing:
            return met, 0, len(sp.checks), None, ids
        first = min(failing)
        return met, -len(failing), first[0], first, ids

    def failing_exprs(self, failure) -> list:
        if isinstance(failure, tuple):
            if failure[1] == "call":
                return []
            check = next(c for c in self.space.view.checks if c.id == failure[1])
            return [check.expr, *check.conditions]
        return [failure]

    def solve(self, start: Case, pins: dict | None = None, goals: tuple[Expr, ...] = (),
              steps: int | None = None, pair_budget: int | None = None) -> Case | None:
        pins = dict(pins or {})
        saved = self.pair_budget
        if pair_budget is not None:
            self.pair_budget = pair_budget
        try:
            return self._solve(start, pins, goals, steps)
        finally:
            self.pair_budget = saved

    def _solve(self, start: Case, pins: dict, goals, steps) -> Case | None:
        case = start.update(pins)
        state = self.progress(case, goals)
        for _ in range(self.steps if steps is None else steps):
            if state[3] is None:
                return case
            exprs = self.failing_exprs(state[3])
            step = self._improve(case, state, self.fields_of(case, exprs, pins), exprs, goals, pins)
            if step is None:
                return None
            case, state = step
        return case if state[3] is None else None

    def order(self, fields: list[Field]) -> list[Field]:
        """Dims and required attributes first; optional attributes (which should keep defaults) last."""
        def rank(f: Field) -> int:
            kind, name = f
            if kind == "dim":
                return 0
            if kind == "attr":
                return 1 if not self.space.attrs[name].optional else 4
            if kind == "env":
                return 2
            return 3
        return sorted(fields, key=rank)

    def fields_of(self, case: Case, exprs, pins) -> list[Field]:
        return self.order([f for f in self.space.related(exprs) if f not in pins and f[0] != "data"
                           and not (case.world and f[0] == "attr" and f[1] in self.space.rank_attrs)])

    def _improve(self, case: Case, state, fields, exprs, goals, pins=None):
        target = state[3][1] if isinstance(state[3], tuple) else f"goal{state[0]}"
        tried = []
        for field in fields:
            for value in candidates(self.space, case, field, exprs):
                trial = case.set(field, value)
                st = self.progress(trial, goals)
                if st[:3] > state[:3]:
                    return trial, st
                if st[0] >= state[0] and target not in st[4]:
                    tried.append((trial, st))  # fixes the target but breaks something else
        # No single change helps: try a second change on what the first one broke (a pair of fields that
        # must move together, such as epWorldSize and a moeExpertNum divisible by it).
        budget = self.pair_budget
        for trial, st in sorted(tried, key=lambda ts: ts[1][:3], reverse=True)[:12]:
            exprs2 = self.failing_exprs(st[3])
            for field in self.fields_of(trial, exprs2, pins or {}):
                for value in candidates(self.space, trial, field, exprs2)[:40]:
                    budget -= 1
                    if budget < 0:
                        return None
                    trial2 = trial.set(field, value)
                    st2 = self.progress(trial2, goals)
                    if st2[:3] > state[:3]:
                        return trial2, st2
        return None
