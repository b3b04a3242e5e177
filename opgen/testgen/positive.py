"""Positive cases: accepted worlds found by search, one per scenario the spec makes meaningful.

Scenarios per product: every quant mode; every optional input the product supports, in each shape the spec
gives it; every dtype of every input and output; the largest value of every bound dim; the values of every
attribute's domain (its largest, its set items, the smallest value other than the default); and batch
sizes that differ across ranks when an attribute carries the global batch size.  Each scenario pins its
fields and the repair search (``solve.Solver``) fills in the rest, smallest first; scenarios the spec does
not allow simply find no case.  Cases are deduplicated and named by what they are.
"""
from __future__ import annotations

from opgen.core.families import FAMILIES
from opgen.testgen.solve import Solver, _domain_ints, candidates
from opgen.testgen.space import Case, Space, default_case

MAX_DATA_WORLD = 16          # larger worlds are validated and shape-checked only
MAX_DATA_ELEMENTS = 1 << 22  # inputs and outputs of the whole world, beyond which data is not generated
SCENARIO_STEPS, SCENARIO_PAIRS = 12, 80  # scenarios start from an accepted case: a few repairs suffice


def _scenarios(space: Space, base: Case) -> list[dict]:
    v = space.view
    op = space.op
    out: list[dict] = []
    qb = op.quant_by
    if qb is not None:
        out += [{("attr", qb): q} for q in v.quant_modes]
    for t in v.inputs:
        if t.optional and t.name not in v.unsupported_inputs:
            for rule in space.shape_rules(t.name):
                out.append({("present", t.name): True, ("shape", t.name): rule})
    for t in v.inputs:
        if t.name in v.unsupported_inputs:
            continue
        for d in t.dtypes[1:]:
            out.append({("present", t.name): True, ("dtype", t.name): d})
    for t in v.outputs:
        if len(t.dtypes) > 1 and t.name not in v.unspecified_outputs:
            out += [{("out", t.name): d} for d in t.dtypes]
    for name in v.empty_absent_inputs:  # an empty tensor where the documents say it means absent
        if name not in v.unsupported_inputs:
            out.append({("present", name): False, ("empty", name): True})
    return out


def _largest(space: Space, solver: Solver, base: Case, field, tries: int = 5) -> Case | None:
    """The case with the largest value of ``field`` the spec's own numbers allow (tried top down)."""
    exprs = [c.expr for c in space.view.checks if field in space.related([c.expr, *c.conditions])]
    values = {x + d for x in space.literals(exprs) for d in (-1, 0, 1)}
    inside = lambda x: True  # noqa: E731
    if field[0] == "attr" and space.attrs[field[1]].domain is not None:
        values |= set(_domain_ints(space, base, field[1]))
        r = space.attrs[field[1]].domain.range
        if r is not None:
            s = space.scope(base, 0)
            lo, hi = space.eval(r.lo, s), space.eval(r.hi, s)
            if isinstance(lo, int) and isinstance(hi, int):
                inside = lambda x: (x >= lo if r.lo_closed else x > lo) and (x <= hi if r.hi_closed else x < hi)  # noqa: E731
    cur = base.get(field)
    picks = sorted((x for x in values if isinstance(x, int) and x > (cur or 0) and inside(x)), reverse=True)
    for v in picks[:tries]:
        found = solver.solve(base, {field: v}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
        if found is not None:
            return found
    return None


def _attr_scenarios(space: Space, solver: Solver, base: Case) -> list[Case]:
    v = space.view
    found: list[Case] = []
    skip = set(space.rank_attrs) | set(v.unsupported_attrs) | {space.op.quant_by}
    for a in v.attrs:
        if a.name in skip or a.type.startswith("list"):
            continue
        field = ("attr", a.name)
        if a.ignored:  # any value passes: one case passes a value other than the default the op reads
            other = {"int64": lambda d: d + 1, "float": lambda d: d + 1.0, "bool": lambda d: not d,
                     "string": lambda d: d + "ignored"}[a.type](a.default)
            c = solver.solve(base, {field: other}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
            if c is not None:
                found.append(c)
            continue
        if a.type == "int64":
            if a.domain is not None and not a.domain.is_range:
                vals = [space.eval(i, space.scope(base, 0)) for i in a.domain.items]
                for x in vals:
                    if isinstance(x, int) and x != base.get(field):
                        c = solver.solve(base, {field: x}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
                        if c is not None:
                            found.append(c)
                continue
            if not a.optional or (a.domain is not None and a.domain.is_range):
                big = _largest(space, solver, base, field)
                if big is not None:
                    found.append(big)
            if a.optional:
                exprs = [c.expr for c in v.checks if field in space.related([c.expr, *c.conditions])]
                for x in [x for x in candidates(space, base, field, exprs) if x != a.default and x > 0][:4]:
                    c = solver.solve(base, {field: x}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
                    if c is not None:
                        found.append(c)
                        break
        elif a.type == "string":
            s = space.scope(base, 0)
            items = [space.eval(i, s) for i in a.domain.items] if a.domain is not None and a.domain.items else []
            if not items and a.optional:
                items = ["tp"]
            for x in items:
                if isinstance(x, str) and x != base.get(field):
                    c = solver.solve(base, {field: x}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
                    if c is not None:
                        found.append(c)
        elif a.type == "bool":
            c = solver.solve(base, {field: not base.get(field)}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
            if c is not None:
                found.append(c)
    return found


def _batch(space: Space) -> tuple[str, str] | None:
    """(batch dim, global-batch attribute): the first bound dim and an attribute constrained with it."""
    if not space.bound or not space.world_attrs:
        return None
    dim = next(iter(space.bound))
    for c in space.view.checks:
        fields = space.related([c.expr])
        if ("dim", dim) in fields and ("attr", space.world_attrs[0]) in fields:
            for kind, name in fields:
                if kind == "attr" and name not in space.world_attrs and space.attrs[name].optional \
                        and space.attrs[name].type == "int64" and c.param == name:
                    return dim, name
    return None


def _uneven(space: Space, solver: Solver, base: Case) -> Case | None:
    found = _batch(space)
    if found is None:
        return None
    dim, attr = found
    world = space.world_size(base)
    if world < 2:
        return None
    per_rank = tuple(range(1, world + 1))
    pins = {("ranks", dim): per_rank, ("dim", dim): max(per_rank)}
    for a in space.world_attrs:
        pins[("attr", a)] = base.get(("attr", a))
    goal_base = base.update(pins)
    for g in [max(per_rank) * world]:
        c = solver.solve(goal_base, {**pins, ("attr", attr): g})
        if c is not None:
            return c
    return None


def _across_servers(space: Space, solver: Solver, base: Case) -> Case | None:
    """A world of two servers where the product's MTE copies stop at the server (ProductFacts.ranks_per_server) and
    the family's kernel reaches the other server through HCCL BatchWrite (Family.batch_write): the transport a
    suite must run, which the smallest worlds never reach."""
    family = FAMILIES.get(space.op.semantics or "")
    servers = space.view.facts.ranks_per_server
    if family is None or not family.batch_write or not servers or not family.one_server_attr:
        return None
    world = space.op.named(family.one_server_attr)
    return solver.solve(base, {("attr", world): 2 * servers}, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)


def _special_scenarios(space: Space, solver: Solver, base: Case) -> list[Case]:
    """One world per special-expert kind with a positive count (the smallest the spec accepts), its formula's
    optional inputs given: a kind no world routes to is a kernel path no suite runs."""
    v = space.view
    found: list[Case] = []
    for sp in space.op.specials:
        if sp.count in v.unsupported_attrs or ("attr", sp.count) not in base.index:
            continue
        reads = {("present", t.name): True for t in v.inputs
                 if t.optional and t.name in sp.reads() and t.name not in v.unsupported_inputs}
        exprs = [c.expr for c in v.checks if ("attr", sp.count) in space.related([c.expr, *c.conditions])]
        for x in sorted(x for x in candidates(space, base, ("attr", sp.count), exprs) if x > 0)[:4]:
            c = solver.solve(base, {("attr", sp.count): x, **reads})
            if c is not None:
                found.append(c)
                break
    return found


def positives(space: Space, solver: Solver) -> list[Case]:
    base = solver.solve(default_case(space))
    if base is None:
        return []
    cases = [base]
    for pins in _scenarios(space, base):
        c = solver.solve(base, pins, steps=SCENARIO_STEPS, pair_budget=SCENARIO_PAIRS)
        if c is not None:
            cases.append(c)
    for name in space.bound:
        c = _largest(space, solver, base, ("dim", name))
        if c is not None:
            cases.append(c)
    cases += _attr_scenarios(space, solver, base)
    cases += _special_scenarios(space, solver, base)
    for c in (_uneven(space, solver, base), _across_servers(space, solver, base)):
        if c is not None:
            cases.append(c)
    unique: dict = {}
    for c in cases:
        unique.setdefault(c.items, c)
    return list(unique.values())


# ---- names ---------------------------------------------------------------------------------------------

def _short(name: str) -> str:
    return name[:-len("Optional")] if name.endswith("Optional") else name


def case_id(space: Space, case: Case, base: Case) -> str:
    """A readable, stable name: product, quant mode, dims, world, then what differs from the simplest case."""
    v = space.view
    parts = [space.soc]
    qb = space.op.quant_by
    if qb is not None:
        parts.append(f"q{case.get(('attr', qb))}")
    per_rank = case.of_kind("ranks")
    for name, value in case.of_kind("dim").items():
        shown = "_".join(str(x) for x in per_rank[name]) if name in per_rank else str(value)
        parts.append(f"{name.lower()}{shown}")
    for i, a in enumerate(space.world_attrs):
        val = case.get(("attr", a))
        if i == 0:
            parts.append(f"w{val}")
        elif val != space.attrs[a].default:
            parts.append(f"{a}-{_token(val)}")
    for a in v.attrs:
        if a.name in space.world_attrs or a.name == qb or a.name in space.rank_attrs:
            continue
        val = case.get(("attr", a.name))
        if val != (a.default if a.optional else base.get(("attr", a.name))):
            parts.append(f"{a.name}-{_token(val)}")
    for e in space.op.envs:
        if case.get(("env", e.name)) != e.default:
            parts.append(f"{e.name}-{case.get(('env', e.name))}")
    s0 = None
    for t in v.inputs:
        present = case.get(("present", t.name))
        if t.optional and present:
            if s0 is None:
                inputs = space.metas(case, 0 if case.world else None)
                s0 = inputs
            dims = "x".join(str(d) for d in s0[t.name].shape)
            parts.append(f"{_short(t.name)}{dims}")
        if not present and case.get(("empty", t.name)):
            parts.append(f"{_short(t.name)}-empty")
        if present and case.get(("dtype", t.name)) != t.dtypes[0]:
            parts.append(f"{_short(t.name)}-{case.get(('dtype', t.name)).lower()}")
    for t in v.outputs:
        d = case.get(("out", t.name))
        if d is not None:
            parts.append(f"{t.name}-{d.lower()}")
    return "-".join(parts)


def _token(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in v) or "empty"
    return str(v)


__all__ = ["positives", "case_id", "MAX_DATA_WORLD", "MAX_DATA_ELEMENTS"]
