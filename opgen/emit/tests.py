"""Model → the generated test suite ``tests/`` of an op (registered in ``opgen.emit.EMITTERS``).

The cases are found at build time from the spec (``opgen.testgen``): positive worlds per product, quant
mode, optional input, dtype and corner of the ranges; one negative call per check (and per branch of a
check's `if`), or the reason none exists.  The templates print them as literals (``tests/cases.py``), next
to the tests that run them against the generated numpy reference, the generated C++ check core
(``tests/check_core_driver.cpp``), the CPU twin (``opgen.sim``: the generated kernel and tiling on the CPU;
``TWIN_SUBSET`` by default, every runnable world with ``OPGEN_BACKEND=cpu-twin``) and, in the NPU mode,
the real op.
"""
from __future__ import annotations

import math
import re

from opgen.core.artifact import Artifact
from opgen.core.errors import LoweringError
from opgen.core.families import FAMILIES
from opgen.emit.plans import Plans
from opgen.emit.registry import emitter
from opgen.emit.render import render
from opgen.core.span import find_span
from opgen.core.torch_npu import TORCH_NPU_FUNCTIONS
from opgen.harness.testkit import TWIN_PRELUDES
from opgen.model.decl import Op, snake


def npu_kwarg(t) -> str:
    """The torch_npu keyword of an aclnn parameter: its IR name, else snake_case without "Optional"."""
    if getattr(t, "ir_name", ""):
        return t.ir_name
    name = t.name[:-len("Optional")] if t.name.endswith("Optional") else t.name
    return snake(name)


def npu_call(op: Op) -> dict:
    """The NPU mode's call of torch_npu's function of the op (``opgen.core.torch_npu``): the function (None: torch_npu
    ships none), the keyword of each aclnn input and attribute the schema has, the aclnn parameters it lacks with
    the value its wrapper passes, the dtype keywords with the tensor whose dtype each names, and the attributes
    those keywords carry."""
    name = "npu_" + op.snake_name
    row = TORCH_NPU_FUNCTIONS.get(name)
    if row is None:
        return dict(npu_function=None, npu_inputs={}, npu_attrs={}, npu_fixed={}, npu_dtype_keywords={},
                    npu_carried={})
    skip = set(row.fixed) | set(row.carried)
    keyword = lambda t: row.renames.get(t.name, npu_kwarg(t))  # noqa: E731
    return dict(npu_function=name,
                npu_inputs={t.name: keyword(t) for t in op.inputs if t.name not in skip},
                npu_attrs={a.name: keyword(a) for a in op.attrs if a.name not in skip},
                npu_fixed=dict(row.fixed), npu_dtype_keywords=dict(row.dtype_keywords), npu_carried=dict(row.carried))


def driver_fields(op: Op) -> list[tuple[str, str, str]]:
    """(kind, name, type) in the order of a check-core driver line: inputs, outputs, attributes, env."""
    out = [("input", t.name, "") for t in op.inputs] + [("output", t.name, "") for t in op.outputs]
    out += [("attr", a.name, a.type) for a in op.attrs] + [("env", e.name, e.type) for e in op.envs]
    return out


TWIN_MAX_WORLD = 8  # ranks: larger worlds run only with OPGEN_BACKEND=cpu-twin


def _input_elements(case: dict) -> int:
    """Elements of every input over every rank of a positive case (its tokens x hidden dominate)."""
    total = 0
    for r in range(case["world"]):
        shapes = case["rank_shapes"].get(r, {})
        for name, meta in case["inputs"].items():
            if meta is not None:
                total += math.prod(shapes.get(name, meta[1]))
    return total


def twin_subset(op: Op, positive) -> tuple[str, ...]:
    """The CPU-twin cases of the default backend: per product x quant mode, its cheapest runnable world; and, on a
    product whose MTE copies stop at a server (ProductFacts.ranks_per_server), its cheapest runnable world past one
    server, whatever its size, so the transport between servers runs too.

    Cheapest: fewest ranks, then fewest input elements over all ranks, then the id; worlds of more than
    TWIN_MAX_WORLD ranks (but those across servers) and worlds the reference only validates are left out."""
    quant_default = op.attr(op.quant_by).default if op.quant_by else None
    best: dict[tuple, tuple] = {}
    for c in positive:
        if c["run"] is not None or "ranks" in c:
            continue
        servers = op.views[c["product"]].facts.ranks_per_server
        if servers and c["world"] > servers:
            group = (c["product"], "servers")
        elif c["world"] <= TWIN_MAX_WORLD:
            group = (c["product"], c["attrs"].get(op.quant_by, quant_default) if op.quant_by else None)
        else:
            continue
        cost = (c["world"], _input_elements(c), c["id"])
        if group not in best or cost < best[group]:
            best[group] = cost
    order = [p.soc for p in op.products]
    rank = lambda g: (order.index(g[0]), g[1] == "servers", g[1] if isinstance(g[1], int) else 0)  # noqa: E731
    return tuple(best[g][2] for g in sorted(best, key=rank))


def tests_context(op: Op, plans: Plans) -> dict:
    s = plans.suite
    pairs = {p.soc: tuple(snake(x) for x in op.views[p.soc].pairs_with) for p in op.products}
    covered: dict[tuple[str, str], list[str]] = {}
    for n in s.negative:
        covered.setdefault((n["product"], n["check"]), []).append(n["id"])
    return dict(
        op=op,
        snake=op.snake_name,
        spec_name=op.span.file.rsplit("/", 1)[-1] if op.span else "",
        suite=s,
        pairs=pairs,
        views=[op.views[p.soc] for p in op.products],
        fields=driver_fields(op),
        outputs=tuple(t.name for t in op.outputs),
        size_fns=[dict(name=e.name, count=len(e.sizes)) for e in op.entries if e.sizes],
        size_fn_names=tuple(e.name for e in op.entries if e.sizes),
        **npu_call(op),
        npu_worlds=plans.npu_worlds,
        n_checks=plans.n_checks,
        twin_subset=twin_subset(op, s.positive),
        twin_max_world=TWIN_MAX_WORLD,
        twin_prelude=TWIN_PRELUDES.get(op.semantics),
        family=FAMILIES[op.semantics],
    )


def unreachable_errors(op: Op, suite) -> list[LoweringError]:
    """E205: a check the search cannot trip that neither the product's declarations switch off nor the spec marks
    (``unreachable ID "why";``), and a mark on a check that a negative test trips (or that the search never
    judged unreachable). One error per check and per mark, in spec order."""
    errors: list[LoweringError] = []
    for p in op.products:
        view = op.views[p.soc]
        by_check = {c.id: c for c in view.checks}
        found = [u for u in suite.unreachable if u["product"] == p.soc]
        unmarked: dict[str, list[dict]] = {}
        for u in found:
            if not u["declared"] and not u["marked"]:
                unmarked.setdefault(u["check"], []).append(u)
        for cid, us in unmarked.items():
            branches = "".join(f" [{u['branch']}]" for u in us if u["branch"])
            errors.append(LoweringError(
                f"check {cid}{branches} can never reject a call on {p.soc}: {us[0]['reason']}; drop or fix it, or "
                f'say why with `unreachable {cid} "...";` in product {p.soc}', by_check[cid].span, "E205"))
        judged = {u["check"] for u in found if not u["declared"]}
        tripped = {n["check"]: n["id"] for n in suite.negative if n["product"] == p.soc}
        for mark in view.unreachable_marks:
            for cid in mark.checks:
                if cid in judged:
                    continue
                why = (f"negative test {tripped[cid]} trips it" if cid in tripped else
                       "the product's declarations already switch it off" if cid in {u['check'] for u in found}
                       else "it has a negative test on every branch")
                at = find_span(op.source, mark.span.file, rf"(?<![\w.])({re.escape(cid)})(?![\w.])", mark.span) \
                    if mark.span is not None else None
                errors.append(LoweringError(f"check {cid} is marked unreachable on {p.soc}, but {why}; remove it "
                                            "from the mark", at or mark.span, "E205"))
    return errors


@emitter
def emit_tests(op: Op, plans: Plans | None = None) -> list[Artifact]:
    if op.semantics is None:  # no reference to test
        return []
    plans = plans or Plans(op)
    errors = unreachable_errors(op, plans.suite)
    if errors:  # its tests would say ok without ever having tested the check
        raise LoweringError(errors[0].message, errors[0].span, "E205", also=tuple(errors[1:]))
    ctx = tests_context(op, plans)
    return [
        Artifact("tests/__init__.py", render("tests/__init__.py.j2", **ctx)),
        Artifact("tests/conftest.py", render("tests/conftest.py.j2", **ctx)),
        Artifact("tests/cases.py", render("tests/cases.py.j2", **ctx)),
        Artifact(f"tests/test_{op.snake_name}.py", render("tests/test_op.py.j2", **ctx)),
        Artifact("tests/check_core_driver.cpp", render("tests/check_core_driver.cpp.j2", **ctx)),
    ]
