"""The test-case search runs its products side by side in forked children (opgen/testgen/forked.py): the results
must be the serial ones, in order, and a child that fails in any way must change nothing but the speed."""
from __future__ import annotations

import os

import pytest

from opgen.testgen import forked, suite

from .conftest import ROOT, load_ok

pytestmark = pytest.mark.skipif(not forked.available(), reason="no fork or a single core: run_all is serial")


def test_children_compute_the_items_after_the_first_in_order():
    parent = os.getpid()
    got = forked.run_all(lambda x: (x * x, os.getpid()), [1, 2, 3, 4])
    assert [v for v, _ in got] == [1, 4, 9, 16]
    assert got[0][1] == parent and len({pid for _, pid in got[1:]} | {parent}) == 4


def test_a_failing_child_leaves_the_item_to_the_parent_which_raises_as_a_serial_run_would():
    calls = []

    def fn(x):
        calls.append(x)  # in the parent's memory only for the items the parent computes
        if x == 3:
            raise ValueError(f"no value for {x}")
        return x

    with pytest.raises(ValueError, match="no value for 3"):
        forked.run_all(fn, [1, 2, 3, 4])
    assert calls == [1, 3]  # item 2 came from its child; item 3's child failed: the parent ran it and raised


def test_an_unpicklable_result_is_computed_by_the_parent():
    calls = []

    def fn(x):
        calls.append(x)
        return lambda: x  # a child cannot send a lambda back

    got = forked.run_all(fn, [1, 2])
    assert [f() for f in got] == [1, 2] and calls == [1, 2]


def test_off_runs_every_item_in_the_parent(monkeypatch):
    monkeypatch.setattr(forked, "enabled", False)
    parent = os.getpid()
    assert forked.run_all(lambda x: os.getpid(), [1, 2, 3]) == [parent] * 3


@pytest.mark.slow
def test_products_searched_side_by_side_give_the_serial_suite_even_when_their_case_names_meet(monkeypatch):
    """Each product starts from no name taken; a product whose names meet an earlier product's is searched again
    after it, so the names (and the data recipes keyed by them) are the serial run's."""
    from opgen.emit.plans import Plans
    op = load_ok(ROOT / "specs" / "combine_add_rms_norm.spec")
    assert len(op.products) == 2
    monkeypatch.setattr(suite, "case_id", lambda space, case, base: "case")  # every product's first name meets
    source = next(a.content for a in Plans(op).reference if a.path == "reference.py")
    suite._suite.cache_clear()
    side_by_side = suite._suite(op, source)
    suite._suite.cache_clear()
    monkeypatch.setattr(forked, "enabled", False)
    serial = suite._suite(op, source)
    suite._suite.cache_clear()
    assert side_by_side == serial
    assert [c["id"] for c in serial.positive][:3] == ["case", "case-2", "case-3"]
