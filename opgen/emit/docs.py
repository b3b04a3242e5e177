"""What the docs template reads: the model, its product views, and the labels CANN docs use."""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.artifact import Artifact
from opgen.emit.plans import Plans
from opgen.emit.registry import emitter
from opgen.emit.render import render
from opgen.model.decl import Attr, Op

# Column 2 of a CANN parameter table.
def role_label(p) -> str:
    if isinstance(p, Attr):
        return "可选属性" if p.optional else "属性"
    if p.role == "input":
        return "可选输入" if p.optional else "输入"
    return "输出"


def type_label(p) -> str:
    if isinstance(p, Attr):
        if p.type.startswith("list<"):
            return "LIST_" + {"int64": "INT64", "float": "FLOAT", "bool": "BOOL", "string": "STRING"}[p.type[5:-1]]
        return {"int64": "INT64", "float": "FLOAT", "bool": "BOOL", "string": "STRING"}[p.type]
    return "、".join(p.dtypes)


def docs_context(op: Op, plans: Plans) -> dict:
    ordered = [soc for soc in B.PRODUCTS if op.product(soc) is not None]
    views = [op.view(soc) for soc in ordered]
    rows = [dict(name=p.name, role=role_label(p), doc=p.doc, default=getattr(p, "default", None),
                 types=type_label(p), formats="、".join(getattr(p, "formats", ("ND",))))
            for p in op.params]
    return dict(op=op, views=views, params=rows, tests=tests_summary(op, plans))


def tests_summary(op: Op, plans: Plans) -> dict | None:
    """What the docs say about the generated suite: case counts and the NPU worlds (None: no suite)."""
    s = plans.suite
    if s is None:
        return None
    spec = op.span.file if op.span else f"{op.snake_name}.spec"
    return dict(positive=len(s.positive), runnable=sum(1 for c in s.positive if c["run"] is None),
                negative=len(s.negative), unreachable=len(s.unreachable), checks=plans.n_checks,
                worlds=plans.npu_worlds, spec=spec.rsplit("/", 1)[-1])


@emitter
def emit_docs(op: Op, plans: Plans | None = None) -> list[Artifact]:
    ctx = docs_context(op, plans or Plans(op))
    return [Artifact(f"docs/aclnn{op.name}.md", render("docs/aclnn_op.md.j2", **ctx))]
