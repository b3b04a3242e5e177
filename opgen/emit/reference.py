"""Model → the generated numpy reference (``<op_snake>/__init__.py``, ``reference.py``)."""
from __future__ import annotations

from dataclasses import replace

from opgen.core.artifact import Artifact
from opgen.core.errors import LoweringError
from opgen.emit.registry import emitter
from opgen.emit.render import render
from opgen.lower.python import py_all, py_expr, py_text
from opgen.model.decl import Op
from opgen.model.env_reads import check_envs
from opgen.model.written import never_written


def shared_checks(views) -> dict:
    """Checks that lower to the same code on several products (inherited ones) are emitted once.

    Returns ``{"defs": [(name, check, view, envs)], "uses": {soc: [name, ...]}}`` in product and check order
    (``envs``: the env variables the check reads, which it skips when the call cannot read them); a check's
    lowering depends on its product view, so equality is decided on the lowered code.
    """
    names: dict[tuple, str] = {}
    defs, uses = [], {}
    for v in views:
        uses[v.soc] = []
        for c in v.checks:
            envs = check_envs(c, v)
            key = (c.id, c.code, c.param, c.message, py_expr(c.expr, v), py_all(c.conditions, v),
                   py_expr(c.value, v) if c.value is not None else None,
                   py_text(c.detail, v) if c.detail is not None else None, envs)
            if key not in names:
                names[key] = f"_check_{len(names)}"
                defs.append((names[key], c, v, envs))
            uses[v.soc].append(names[key])
    return {"defs": defs, "uses": uses}


def reference_context(op: Op) -> dict:
    """What the reference templates read."""
    views = [op.view(p.soc) for p in op.products]
    return dict(op=op, views=views, spec_name=op.span.file.rsplit("/", 1)[-1] if op.span else "",
                checks=shared_checks(views), size_fns=[e for e in op.entries if e.sizes],
                formula_specials=[s for s in op.specials if s.body is not None],
                special_reads={s.name: tuple(sorted(n for n in s.reads() if op.tensor(n) is not None))
                               for s in op.specials},
                post_inputs={v.soc: [t for t in v.inputs if t.name in op.post.reads()] for v in views}
                if op.post is not None else {})


def render_reference(op: Op) -> list[Artifact]:
    """The numpy reference package ``<op_snake>`` (importable with generated/ on sys.path)."""
    if op.semantics is None:
        return []
    ctx = reference_context(op)
    return [Artifact("__init__.py", render("reference/__init__.py.j2", **ctx)),
            Artifact("reference.py", render("reference/reference.py.j2", **ctx))]


def _name_span(t):
    """The name in ``output NAME: ...`` (the declaration's span when it does not start so)."""
    sp = t.span
    if sp is None:
        return None
    return replace(sp, col=sp.col + len("output "), end_line=sp.line, end_col=sp.col + len("output ") + len(t.name))


@emitter
def emit_reference(op: Op, plans=None) -> list[Artifact]:
    silent = never_written(op)
    if silent:  # the reference (and the kernel) would leave these untouched: their tests could only pass vacuously
        t, socs = silent[0]
        others = "".join(f"; output {u.name} on {', '.join(ps)}" for u, ps in silent[1:])
        raise LoweringError(f"output {t.name} is never written on {', '.join(socs)}: semantics {op.semantics} does "
                            f"not write it and no quant formula of those products assigns it, so its tests would "
                            f"pass on the untouched buffer{others}; say why it has no contents with `output "
                            f'{t.name} unspecified "...";` in product {socs[0]}, or choose a semantics that writes it',
                            _name_span(t), "E204")
    return list(plans.reference) if plans is not None else render_reference(op)
