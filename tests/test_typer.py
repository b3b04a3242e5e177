"""One static typer (opgen.model.kinds.Typer): the front-end checker and the lowerings type every expression
by the same rules, so what `opgen check` accepts is what the Python and C++ lowerings compute with."""
from pathlib import Path

import pytest

from opgen.core.diagnostics import Diagnostics
from opgen.core.errors import LoweringError
from opgen.frontend.analyze import _Checker
from opgen.frontend.loader import load
from opgen.lang.expr import Binary, Bool, Call, Cond, Int, Name, Str
from opgen.model.inline import inline
from opgen.model.kinds import ScalarKinds
from opgen.core import builtins as B

SPECS = sorted((Path(__file__).resolve().parent.parent / "specs").glob("*.spec"))


def _checked(path, diags=None):
    op = load(path, Diagnostics())
    assert op is not None
    diags = Diagnostics() if diags is None else diags
    checker = _Checker(op, diags)
    checker.run()  # a validated op checks clean again
    assert not diags.items
    return op, checker


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_lowering_kinds_are_the_checker_kinds(path):
    op, checker = _checked(path)
    compared = 0
    for soc, view in op.views.items():
        kinds = ScalarKinds(view)
        exprs = [l.expr for l in view.lets] + [e for c in view.checks for e in (c.expr, *c.conditions)]
        for e in exprs:
            front = checker.kind(e)
            if front == B.ANY:  # reads a product's let: the checker leaves those to the view
                continue
            assert kinds(inline(op, e)) == front, (soc, e)
            compared += 1
    assert compared > 40


@pytest.mark.parametrize("expr, message", [
    (Binary("and", Int(1), Bool(True)), "'and' needs booleans, got int"),
    (Binary("==", Int(1), Str("1")), "cannot compare int with str"),
    (Cond(Bool(True), Int(1), Str("a")), "'if' branches have different kinds: int and str"),
    (Call("ceil_div", (Str("a"), Int(2))), "argument 1 of 'ceil_div' must be int, got str"),
])
def test_a_type_error_reads_the_same_in_the_checker_and_the_lowerings(expr, message):
    diags = Diagnostics()
    op, checker = _checked(SPECS[0], diags)
    checker.kind(expr)
    assert [d.message for d in diags.items] == [message]
    with pytest.raises(LoweringError) as err:
        ScalarKinds(next(iter(op.views.values())))(expr)
    assert err.value.message == message


def test_a_tensor_has_no_scalar_value_in_either():
    op, checker = _checked(SPECS[0])
    tensor = op.inputs[0].name
    with pytest.raises(LoweringError, match=f"tensor '{tensor}' has no scalar value"):
        ScalarKinds(next(iter(op.views.values())))(Name(tensor))
