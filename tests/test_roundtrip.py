"""Printing a model back to spec text and parsing it again gives an equal model."""
from __future__ import annotations

import pytest

from opgen.model.printer import print_op

from .conftest import SPECS, load_ok, load_src


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_every_spec_round_trips(spec):
    op = load_ok(spec)
    text = print_op(op)
    again, diags = load_src(text, f"printed-{spec.name}")
    assert again is not None, diags.render()
    assert again == op
    # Printing is a fixed point: the canonical text prints to itself.
    assert print_op(again) == text


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_views_survive_round_trip(spec):
    op = load_ok(spec)
    again, _ = load_src(print_op(op))
    for soc in op.socs:
        assert op.view(soc).checks == again.view(soc).checks
