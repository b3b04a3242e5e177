"""What the docs template reads: the model, its product views, and the labels CANN docs use."""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.artifact import Artifact
from opgen.emit.plans import Plans
from opgen.emit.registry import emitter
from opgen.emit.tiling_layout import EXEC_TIMEOUT_AIV_MAX_S, EXEC_TIMEOUT_ENV
from opgen.emit.render import render
from opgen.lang.expr import Call, walk
from opgen.lower.aclnn_abi import RUN_PARAMS, workspace_params
from opgen.model.decl import AclnnEntry, Attr, Op
from opgen.model.spec_text import literal as spec_literal

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


# The aclnn status of each error class, as the 返回值 table of a CANN aclnn document names it.
_STATUS = {"nullptr": "ACLNN_ERR_PARAM_NULLPTR", "invalid": "ACLNN_ERR_PARAM_INVALID",
           "tiling": "ACLNN_ERR_INNER_TILING_ERROR"}


def _row(p) -> dict:
    return dict(name=p.name, role=role_label(p), doc=p.doc, default=getattr(p, "default", None),
                types=type_label(p), formats="、".join(getattr(p, "formats", ("ND",))))


def _prototype(fn: str, params) -> str:
    """A 函数原型 block: one parameter per line, as the aclnn documents write them."""
    return f"aclnnStatus {fn}(\n" + ",\n".join(f"    {p}" for p in params) + ")"


def entry_context(op: Op, entry: AclnnEntry, views) -> dict:
    """One aclnn document's entry point: its prototypes, its parameters in order, what it leaves out, and the
    statuses its first stage returns (the error classes of the checks, with the parameters they blame)."""
    taken = {p.name for p in entry.params}
    statuses = []
    for cls, status in _STATUS.items():
        blamed = list(dict.fromkeys(c.param for v in views for c in v.checks if c.error_class == cls))
        if blamed:
            where = "调用aclnnInner前的入参校验" if cls in B.STAGES["op_api"] else "tiling"
            statuses.append(dict(status=status, code=B.ERROR_CLASSES[cls], params=blamed, stage=where))
    sizes = [e for e in op.entries if e.sizes] if entry is op.files_entry else []
    return dict(
        name=entry.name,
        prototypes=[_prototype(f"{entry.name}GetWorkspaceSize", workspace_params(op, entry)),
                    _prototype(entry.name, RUN_PARAMS)] + [_prototype(e.name, workspace_params(op, e)) for e in sizes],
        size_fns=[dict(name=e.name, params=[_row(op.param(p.name)) if op.param(p.name) is not None else
                                            dict(name=p.name, role="属性", doc="本接口的参数，不影响计算结果。",
                                                 default=None, types=type_label(Attr(p.name, p.type, False)),
                                                 formats="-")
                                            for p in e.params],
                       results=[dict(name=z.name, formula=z.expr) for z in e.sizes]) for e in sizes],
        params=[dict(_row(op.param(p.name)), name=p.c_name) for p in entry.params],
        omitted=[dict(name=p.name, value="空指针" if getattr(p, "role", "") == "input" else spec_literal(p.default))
                 for p in op.params if p.name not in taken],
        others=[e.name for e in op.entries if e.name != entry.name and e.two_stage],
        statuses=statuses)


def docs_context(op: Op, plans: Plans, entry: AclnnEntry | None = None) -> dict:
    ordered = [soc for soc in B.PRODUCTS if op.product(soc) is not None]
    views = [op.view(soc) for soc in ordered]
    entry = entry or op.entries[0]
    data_checks = {c.id for v in views for c in v.checks
                   if any(isinstance(n, Call) and n.fn in B.DATA_BUILTINS for e in (c.expr, *c.conditions)
                          for n in walk(e))}
    return dict(op=op, views=views, params=[_row(p) for p in op.params], entry=entry_context(op, entry, views),
                data_checks=data_checks, tests=tests_summary(op, plans),
                special_formulas=any(s.body is not None for s in op.specials),
                poll=dict(env=EXEC_TIMEOUT_ENV, max_s=EXEC_TIMEOUT_AIV_MAX_S))


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
    """One aclnn document per entry point (the op's parts — products, constraints, tests — in each)."""
    plans = plans or Plans(op)
    return [Artifact(f"docs/{e.name}.md", render("docs/aclnn_op.md.j2", **docs_context(op, plans, e)))
            for e in op.entries if e.two_stage]  # a size function is documented with op.files_entry
