"""The repair search keeps a parent case's check verdicts for the checks a one-field change cannot reach
(opgen/testgen/space.py, ``Space.failures`` / ``Space.affected``): every answer it gives that way must be the one
evaluating every check gives, on world cases (every rank) and single calls alike; and ``Space.first_failure``,
which starts from those verdicts, must find the error a search that never made any finds."""
from __future__ import annotations

import pytest

from opgen.emit.reference import render_reference
from opgen.testgen.reference import load_reference
from opgen.testgen.positive import positives
from opgen.testgen.solve import Solver, candidates
from opgen.testgen.space import Case, Space, default_case

from .conftest import ROOT, load_ok


def _fresh(case: Case) -> Case:
    """The same fields with no parent: every check is evaluated."""
    return Case.make(case.product, case.values(), case.world)


def _error(found) -> tuple | None:
    """first_failure's answer, its OpError as (code, param, message)."""
    if found is None:
        return None
    i, cid, err = found
    return i, cid, err.code, err.param, str(err)


@pytest.mark.parametrize("spec", ["dispatch_v2.spec", "combine_v2.spec"])
def test_kept_verdicts_equal_a_full_evaluation(spec):
    op = load_ok(ROOT / "specs" / spec)
    ref = load_reference(op, next(a.content for a in render_reference(op) if a.path == "reference.py"))
    compared = kept = worlds = 0
    for product in op.products:
        sp, full = Space(op, product.soc, ref), Space(op, product.soc, ref)
        plain = Space(op, product.soc, ref)  # first_failure with no verdicts to start from
        solver = Solver(sp)
        for start in [default_case(sp, True), default_case(sp, False)] + positives(sp, solver)[:2]:
            sp.failures(start)
            level1 = []
            for field in start.index:
                if field[0] == "data":
                    continue
                for value in candidates(sp, start, field, [])[:3]:
                    level1.append((start.set(field, value), field))
            for trial, _ in level1[::7]:  # a second change on some of them: parents that fail other checks
                sp.failures(trial)
                for field in trial.index:
                    if field[0] != "data":
                        level1 += [(trial.set(field, v), field) for v in candidates(sp, trial, field, [])[:1]]
            for trial, field in level1:
                assert sp.failures(trial) == full.failures(_fresh(trial)), (product.soc, trial.world, field)
                assert _error(sp.first_failure(trial)) == _error(plain.first_failure(_fresh(trial))), \
                    (product.soc, trial.world, field)
                compared += 1
                worlds += trial.world and len(sp.ranks(trial)) > 1
                kept += len(sp.error_checks) - len(sp.affected(field))
    assert compared > 500 and kept > compared  # most changes leave most checks' verdicts as they were
    assert worlds > 50  # worlds of several ranks, whose later ranks keep the first rank's verdicts
