"""One op's generated test suite as data: positive worlds, negative calls, coverage, tolerances.

``suite(op, reference_source)`` runs the searches of ``positive`` and ``negative`` over every product view against the
generated reference (loaded from the text the build writes), turns the cases into plain literals the
templates print, and verifies each one once more the way the suite will run it (the same ``validate``,
the same BOOL data).  The result is cached per op: a build, ``--check`` and ``opgen test`` in one process
search once, and across processes by content (``suite_cache``).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from opgen.model.decl import Op
from opgen.testgen import forked
from opgen.testgen.negative import Negative, negatives
from opgen.testgen.positive import MAX_DATA_ELEMENTS, MAX_DATA_WORLD, case_id, positives
from opgen.testgen.reference import load_reference
from opgen.testgen.solve import Solver
from opgen.testgen.space import Case, Space
from opgen.testgen.suite_cache import cached_search
from opgen.harness import testkit, testworld
from opgen.runtime import OpError


@dataclass(frozen=True)
class Suite:
    positive: tuple[dict, ...]
    negative: tuple[dict, ...]
    unreachable: tuple[dict, ...]
    checks: dict            # product -> ((check id, code, param, data check, branches), ...)
    tolerances: dict        # product -> output -> dtype -> (exact, rtol, atol)
    dropped: tuple[str, ...]  # positive cases found by search but rejected on re-verification (a bug if any)


def suite(op: Op, reference_source: str) -> Suite:
    """``reference_source``: the text of the op's generated ``reference.py`` (what the suite will import)."""
    return cached_search(op, reference_source, lambda: _suite(op, reference_source))


@functools.lru_cache(maxsize=16)
def _suite(op: Op, reference_source: str) -> Suite:
    ref = load_reference(op, reference_source)
    # One search per product, side by side (opgen.testgen.forked): each starts from no case name taken, and is
    # searched again here, after the products before it, in the rare event that a name it tried was one of
    # theirs (the names a product takes depend on those taken before it).
    socs = [p.soc for p in op.products]
    found = forked.run_all(lambda soc: _product(op, ref, soc, frozenset()), socs)
    pos, neg, unreach, checks, tols, dropped = [], [], [], {}, {}, []
    taken: set[str] = set()
    for soc, result in zip(socs, found):
        if result.tried & taken:
            result = _product(op, ref, soc, frozenset(taken))
        taken |= result.took
        pos += result.positive
        neg += result.negative
        unreach += result.unreachable
        checks[soc] = result.checks
        tols[soc] = result.tolerances
        dropped += result.dropped
    return Suite(tuple(pos), tuple(neg), tuple(unreach), checks, tols, tuple(dropped))


@dataclass(frozen=True)
class _Product:
    """The search's result for one product view."""
    positive: list
    negative: list
    unreachable: list
    checks: tuple
    tolerances: dict
    dropped: list
    took: set       # the case names the product took
    tried: set      # every case name it looked up (took or found taken)


def _product(op: Op, ref, soc: str, before: frozenset) -> _Product:
    """Search one product view; ``before``: the case names the products before it took."""
    space = Space(op, soc, ref)
    solver = Solver(space)
    worlds = positives(space, solver)
    pos, kept, dropped, tried, taken = [], [], [], set(), set(before)
    for case in worlds:
        record = _positive(space, case, worlds[0], taken, tried)
        if record is None:
            dropped.append(case_id(space, case, worlds[0]))
            continue
        record["run"] = _run_reason(space, ref, case, record)
        pos.append(record)
        kept.append(case)
    found, missed = negatives(space, solver, kept)
    return _Product(
        pos, [_negative(space, n) for n in found],
        [dict(product=soc, check=u.check.id, branch=u.branch, reason=u.reason, declared=u.declared,
              marked=space.view.unreachable_reason(u.check.id)) for u in missed],
        tuple((c.id, c.code, c.param) for c in space.view.checks), _tolerances(space), dropped, taken - before,
        tried)


# ---- records -------------------------------------------------------------------------------------------------

def _attrs(space: Space, case: Case) -> dict:
    out = {}
    for a in space.view.attrs:
        field = ("attr", a.name)
        if field not in case.index:
            continue
        v = case.get(field)
        if not a.optional or v != a.default or (not case.world and a.name in space.rank_attrs):
            out[a.name] = v
    return out


def _env(space: Space, case: Case) -> dict:
    return {e.name: case.get(("env", e.name)) for e in space.op.envs if case.get(("env", e.name)) != e.default}


def _inputs(space: Space, case: Case, rank) -> dict:
    inputs = space.metas(case, rank)
    # (dtype, shape), and the format when it is not ND (negative cases of the format checks)
    return {n: (m.dtype, tuple(m.shape)) + ((m.format,) if m.format != "ND" else ())
            for n, m in inputs.items() if m is not None}


def _outs(case: Case) -> dict:
    return {n: d for n, d in case.of_kind("out").items() if d is not None}


def _positive(space: Space, case: Case, base: Case, taken: set, tried: set) -> dict | None:
    """The literal record of a world, with BOOL recipes that every rank accepts (None: none does); its name is
    the first of the case's names not in ``taken`` (every name looked up is added to ``tried``)."""
    world = space.world_size(case)
    inputs0 = _inputs(space, case, 0)
    ranks = space.ranks(case, limit=MAX_DATA_WORLD)
    rank_shapes = {}
    for r in ranks[1:]:  # shared-expert and MoE ranks (and uneven batches) have different capacities
        differ = {n: sh for n, (_, sh) in _inputs(space, case, r).items() if inputs0[n][1] != sh}
        if differ:
            rank_shapes[r] = differ
    name = case_id(space, case, base)
    n = 2
    tried.add(name)
    while name in taken:
        name = f"{case_id(space, case, base)}-{n}"
        tried.add(name)
        n += 1
    record = dict(id=name, product=space.soc, world=world, attrs=_attrs(space, case), env=_env(space, case),
                  inputs=inputs0, rank_shapes=rank_shapes, out_dtypes=_outs(case), data={}, run=None)
    if len(ranks) < world:
        record["ranks"] = tuple(ranks)  # a large world: the ranks validated (and given shapes) here
    bools = [t for t, m in inputs0.items() if m[0] == "BOOL"]
    choices = [[("prefix" if len(inputs0[t][1]) == 1 else "random"), "all_true"] for t in bools]
    for pick in _combinations(choices):
        record["data"] = dict(zip(bools, pick))
        try:
            testkit.accept(space.ref, record)
        except AssertionError:
            continue
        except OpError:
            continue
        taken.add(name)
        return record
    return None


def _combinations(choices):
    if not choices:
        yield ()
        return
    for first in choices[0]:
        for rest in _combinations(choices[1:]):
            yield (first,) + rest


def _run_reason(space: Space, ref, case: Case, record: dict) -> str | None:
    """None when the suite runs the world with data; otherwise why it only validates and infers shapes."""
    op = space.op
    world = record["world"]
    if world > MAX_DATA_WORLD:
        return f"a world of {world} ranks: validated (representative ranks) and shape-inferred only"
    qb = op.quant_by
    if qb is not None:
        q = op.quant_mode(case.get(("attr", qb)))
        if q is not None and not q.body and any(m.body for m in op.quant_modes):
            return f"{qb} {q.value} ({q.name}) has no formula in the spec: validated and shape-inferred only"
    attrs = testkit.full_attrs(ref, record)
    limit = testworld.reference_limit(op.semantics or "", attrs)
    if limit is not None:
        return limit + ": validated and shape-inferred only"
    inputs, call_attrs, outs, _ = space.call(case, 0)
    inferred = ref.infer(inputs, call_attrs, space.soc, outs)
    elements = sum(_numel(sh) for sh, _ in inferred.values()) + sum(_numel(m.shape) for m in inputs.values() if m)
    if elements * world > MAX_DATA_ELEMENTS:
        return (f"{elements * world} tensor elements over {world} ranks (more than {MAX_DATA_ELEMENTS}): "
                f"validated and shape-inferred only")
    return None


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _negative(space: Space, n: Negative) -> dict:
    case = n.case
    inputs = _inputs(space, case, None)
    data = {t: case.get(("data", t)) for t, m in inputs.items() if m[0] == "BOOL"}
    return dict(id=n.id, product=space.soc, check=n.check.id, branch=n.branch, code=n.check.code,
                param=n.check.param, change=n.change, data_check=n.data_check, attrs=_attrs(space, case),
                env=_env(space, case), inputs=inputs, out_dtypes=_outs(case), data=data,
                out_shapes={t: tuple(r[1]) for t, r in case.of_kind("oshape").items() if r is not None},
                out_formats={t: f for t, f in case.of_kind("oformat").items() if f not in (None, "ND")})


def _tolerances(space: Space) -> dict:
    out = {}
    for t in space.view.outputs:
        per = {}
        for d in t.dtypes:
            try:
                tol = space.view.tolerance(t.name, d)
            except KeyError:
                continue
            per[d] = (tol.exact, float(tol.rtol), float(tol.atol))
        if per:
            out[t.name] = per
    return out


__all__ = ["Suite", "suite"]
