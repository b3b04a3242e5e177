"""Model → the generated numpy reference (``<op_snake>/__init__.py``, ``reference.py``)."""
from __future__ import annotations

from opgen.core.artifact import Artifact
from opgen.emit.registry import emitter
from opgen.emit.render import render
from opgen.lower.python import py_all, py_expr
from opgen.model.decl import Op


def shared_checks(views) -> dict:
    """Checks that lower to the same code on several products (inherited ones) are emitted once.

    Returns ``{"defs": [(name, check, view)], "uses": {soc: [name, ...]}}`` in product and check order;
    a check's lowering depends on its product view, so equality is decided on the lowered code.
    """
    names: dict[tuple, str] = {}
    defs, uses = [], {}
    for v in views:
        uses[v.soc] = []
        for c in v.checks:
            key = (c.id, c.code, c.param, c.message, py_expr(c.expr, v), py_all(c.conditions, v),
                   py_expr(c.value, v) if c.value is not None else None)
            if key not in names:
                names[key] = f"_check_{len(names)}"
                defs.append((names[key], c, v))
            uses[v.soc].append(names[key])
    return {"defs": defs, "uses": uses}


def reference_context(op: Op) -> dict:
    """What the reference templates read."""
    views = [op.view(p.soc) for p in op.products]
    return dict(op=op, views=views, spec_name=op.span.file.rsplit("/", 1)[-1] if op.span else "",
                checks=shared_checks(views), size_fns=[e for e in op.entries if e.sizes])


def render_reference(op: Op) -> list[Artifact]:
    """The numpy reference package ``<op_snake>`` (importable with generated/ on sys.path)."""
    if op.semantics is None:
        return []
    ctx = reference_context(op)
    return [Artifact("__init__.py", render("reference/__init__.py.j2", **ctx)),
            Artifact("reference.py", render("reference/reference.py.j2", **ctx))]


@emitter
def emit_reference(op: Op, plans=None) -> list[Artifact]:
    return list(plans.reference) if plans is not None else render_reference(op)
