"""What the docs template reads: the model, its product views, and the labels CANN docs use."""
from __future__ import annotations

from opgen.core import builtins as B
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


def docs_context(op: Op) -> dict:
    ordered = [soc for soc in B.PRODUCTS if op.product(soc) is not None]
    views = [op.view(soc) for soc in ordered]
    rows = [dict(name=p.name, role=role_label(p), doc=p.doc, default=getattr(p, "default", None),
                 types=type_label(p), formats="、".join(getattr(p, "formats", ("ND",))))
            for p in op.params]
    return dict(op=op, views=views, params=rows, tests=tests_summary(op))


def tests_summary(op: Op) -> dict | None:
    """What the docs say about the generated suite: case counts and the NPU worlds (None: no suite)."""
    if op.semantics is None:
        return None
    from opgen.emit.tests import tests_context
    ctx = tests_context(op)
    s = ctx["suite"]
    spec = op.span.file if op.span else f"{op.snake_name}.spec"
    return dict(positive=len(s.positive), runnable=sum(1 for c in s.positive if c["run"] is None),
                negative=len(s.negative), unreachable=len(s.unreachable), checks=ctx["n_checks"],
                worlds=ctx["npu_worlds"], spec=spec.rsplit("/", 1)[-1])
