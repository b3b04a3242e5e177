"""Model → generated files, through Jinja templates that read only the model.

Each emitter is a function ``(op, env) -> list[Artifact]``; paths are relative
to the op's output directory.  Templates get typed filters for every piece of
generated syntax (never a Python ``repr``), iterate in model order (which is
spec order, itself deterministic) and run under ``StrictUndefined``.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib import resources
from typing import Callable

import jinja2

from opgen.emit.check_core import emit_check_core
from opgen.emit.kernel import emit_cpp_kernel
from opgen.emit.tests import emit_tests
from opgen.emit.host import (emit_host_aclnn, emit_host_cmake, emit_host_infershape, emit_host_opdef,
                            emit_host_tiling)
from opgen.model.decl import Op, snake

GENERATOR_VERSION = "1"
# Modules whose FILTERS dict typed Jinja filters come from (one per target language).
FILTER_MODULES = ("opgen.lower.literals", "opgen.lower.python", "opgen.lower.cpp", "opgen.lower.ascendc")


@dataclass(frozen=True)
class Artifact:
    path: str      # posix path relative to the op's output directory
    content: str


def _load_template(name: str) -> str:
    try:
        return resources.files("opgen.templates").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise jinja2.TemplateNotFound(name) from None


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_template),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    for module in FILTER_MODULES:
        env.filters.update(importlib.import_module(module).FILTERS)
    env.filters["snake"] = snake
    return env


def render(template: str, **context) -> str:
    text = environment().get_template(template).render(**context)
    # Generated files end in exactly one newline and carry no trailing spaces.
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def emit_docs(op: Op) -> list[Artifact]:
    from opgen.emit.docs import docs_context
    return [Artifact(f"docs/aclnn{op.name}.md", render("docs/aclnn_op.md.j2", **docs_context(op)))]


def shared_checks(views) -> dict:
    """Checks that lower to the same code on several products (inherited ones) are emitted once.

    Returns ``{"defs": [(name, check, view)], "uses": {soc: [name, ...]}}`` in product and check order;
    a check's lowering depends on its product view, so equality is decided on the lowered code.
    """
    from opgen.lower.python import py_all, py_expr
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


def emit_reference(op: Op) -> list[Artifact]:
    """The numpy reference package ``<op_snake>`` (importable with generated/ on sys.path)."""
    if op.semantics is None:
        return []
    views = [op.view(p.soc) for p in op.products]
    ctx = dict(op=op, views=views, spec_name=op.span.file.rsplit("/", 1)[-1] if op.span else "",
               checks=shared_checks(views))
    return [Artifact("__init__.py", render("reference/__init__.py.j2", **ctx)),
            Artifact("reference.py", render("reference/reference.py.j2", **ctx))]


EMITTERS: tuple[Callable[[Op], list[Artifact]], ...] = (emit_docs, emit_reference,
                                                        emit_check_core,
                                                        emit_host_opdef,
                                                        emit_host_infershape,
                                                        emit_host_tiling,
                                                        emit_host_aclnn,
                                                        emit_host_cmake,
                                                        emit_cpp_kernel,
                                                        emit_tests)


def emit(op: Op) -> list[Artifact]:
    out: list[Artifact] = []
    for emitter in EMITTERS:
        out.extend(emitter(op))
    paths = [a.path for a in out]
    if len(set(paths)) != len(paths):
        raise RuntimeError(f"two emitters produced the same file for {op.name}")
    return sorted(out, key=lambda a: a.path)
