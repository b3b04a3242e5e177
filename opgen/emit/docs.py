"""What the docs template reads: the model, its product views, and the labels CANN docs use."""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.artifact import Artifact
from opgen.emit.doc_example import example_context
from opgen.emit.plans import Plans
from opgen.emit.registry import emitter
from opgen.emit.tiling_layout import EXEC_TIMEOUT_AIV_MAX_S, EXEC_TIMEOUT_ENV
from opgen.emit.render import render
from opgen.lang.expr import Call, walk
from opgen.lower.aclnn_abi import RUN_PARAMS, workspace_params
from opgen.lower.latex import Latex, dtype_attrs, ge_dtype_name, product_flags
from opgen.model import kernel_paths
from opgen.model.decl import AclnnEntry, Attr, Op, ShapeCond, Tensor
from opgen.model.spec_text import literal as spec_literal

# Column 2 of a CANN parameter table: the documents write 输入 for attributes too (aclnnMoeDistributeDispatchV4.md
# 参数说明); optional parameters say so in 使用说明.
def role_label(p) -> str:
    """The 输入/输出 column of an aclnn parameter table: attributes are the entry point's inputs too."""
    return "输出" if isinstance(p, Tensor) and p.role == "output" else "输入"


def kind_label(p) -> str:
    """A parameter as the documents' change lists name it: 可选属性 / 属性 / 可选输入 / 输入 / 输出."""
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


# The aclnn status of each error class, as the 返回值 table of a CANN aclnn document names it (a warning returns
# nothing: the call goes on).
_STATUS = {"nullptr": "ACLNN_ERR_PARAM_NULLPTR", "invalid": "ACLNN_ERR_PARAM_INVALID",
           "tiling": "ACLNN_ERR_INNER_TILING_ERROR"}
STATUS_LABELS = {**_STATUS, "warn": "告警（不影响返回值）"}


def default_text(op: Op, a: Attr) -> str:
    """An attribute's default as the documents write it: a dtype attribute's as its ge::DataType name."""
    if a.name in dtype_attrs(op) and isinstance(a.default, int):
        return ge_dtype_name(a.default)
    return spec_literal(a.default)


def _ranks(shapes) -> list[int]:
    return sorted({len(alt.dims) for alt in shapes if not isinstance(alt, ShapeCond)})


def usage(op: Op, p, views) -> str:
    """The 使用说明 cell: the tensor's dimensions and optionality, an attribute's default."""
    parts = []
    if isinstance(p, Tensor):
        alts = [a for v in views for t in v.inputs + v.outputs if t.name == p.name and t.shape
                for a in t.shape.alts]
        ranks = _ranks(alts)
        if ranks and not any(isinstance(a, ShapeCond) for a in alts):
            parts.append("要求" + "或".join(f"{r}D" for r in ranks) + " Tensor。")
        if p.optional:
            parts.append("可选参数，可传入有效数据或空指针。")
        if p.empty_absent:
            parts.append("传入空Tensor（任一维为0）时视为未传入。")
    elif p.optional:
        parts.append(f"可选属性，默认值为{default_text(op, p)}。")
    return "".join(parts) or "-"


def shape_cell(p, views) -> str:
    """The 维度(shape) cell: the shape rule in LaTeX when every product has the same, else a pointer to 约束说明."""
    if not isinstance(p, Tensor):
        return "-"
    rules = {}
    for v in views:
        t = next((t for t in v.inputs + v.outputs if t.name == p.name), None)
        if t is not None and t.shape is not None:
            L = Latex(v)
            rules.setdefault(" 或 ".join(f"${L.shape(a)}$" for a in t.shape.alts), v)
    if not rules:
        return "-"
    return next(iter(rules)) if len(rules) == 1 else "因产品而异，见约束说明。"


def _row(op: Op, p, views) -> dict:
    return dict(name=p.name, role=role_label(p), doc=p.doc, usage=usage(op, p, views), types=type_label(p),
                formats="、".join(p.formats) if isinstance(p, Tensor) else "-", shape=shape_cell(p, views),
                # doc: the 非连续Tensor column, √ where the spec declares the tensor `noncontiguous`, else -
                noncontiguous="√" if isinstance(p, Tensor) and p.noncontiguous else "-")


def omitted_text(op: Op, p) -> str:
    """What an entry point that lacks parameter ``p`` passes the operator, in words."""
    if isinstance(p, Tensor):
        return f"{p.name}传空指针"
    if isinstance(p.omitted, Call) and p.omitted.fn == "dtype":
        return f"{p.name}取{p.omitted.args[0].id}的数据类型"
    return f"{p.name}取默认值{default_text(op, p)}"


def formula_lines(body, L: Latex) -> list[str]:
    """One ``aligned`` line per statement: ``name &= value``, its conditions after 若."""
    lines = []
    for s in body:
        line = rf"{L.name(s.name)} &= {L(s.expr)}"
        if s.conditions:
            line += r" \quad \text{若 } " + r" \land ".join(L(c) for c in s.conditions)
        lines.append(line)
    return lines


def quant_context(op: Op, views) -> list[dict]:
    """Each quant mode's formula, split at its ``send`` into the sender's and the receiver's part."""
    L = Latex(op)
    out = []
    for q in op.quant_modes:
        at = q.send.at if q.send else len(q.body)
        blocks = [dict(caption="发送端" if q.send else "", lines=formula_lines(q.body[:at], L))]
        if q.send:
            blocks.append(dict(caption="接收端", lines=formula_lines(q.body[at:], L)))
        out.append(dict(value=q.value, doc=q.doc, send=list(q.send.names) if q.send else [],
                        products=[v.product.display for v in views if q.value in v.quant_modes],
                        blocks=[b for b in blocks if b["lines"]]))
    return out


def product_lets(op: Op, v) -> list[dict]:
    """The lets a product (or one it extends) declares for itself (serverNum on A2), but its switches."""
    own = {l.name for p in op.products if p.soc in v.chain for l in p.lets}
    base = {l.name: l.expr for l in op.lets}
    flags = product_flags(v.lets) | product_flags(op.lets)
    L = Latex(v)
    return [dict(name=l.name, latex=L(l.expr), doc=l.doc) for l in v.lets
            if l.name in own and l.name not in flags and base.get(l.name) != l.expr]


def lets_context(op: Op) -> list[dict]:
    """The Shape变量 table: every let but the generator's product switches (folded into the formulas instead)."""
    L = Latex(op)
    flags = product_flags(op.lets)
    return [dict(name=l.name, latex=L(l.expr), doc=l.doc) for l in op.lets if l.name not in flags]


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
        size_fns=[dict(name=e.name, params=[_row(op, op.param(p.name), views) if op.param(p.name) is not None else
                                            dict(name=p.name, role="输入", doc="本接口的参数，不影响计算结果。",
                                                 usage="-", types=type_label(Attr(p.name, p.type, False)),
                                                 formats="-", shape="-", noncontiguous="-")
                                            for p in e.params],
                       results=[dict(name=z.name, latex=Latex(op)(z.expr)) for z in e.sizes]) for e in sizes],
        params=[dict(_row(op, op.param(p.name), views), name=p.c_name) for p in entry.params],
        omitted=[omitted_text(op, p) for p in op.params if p.name not in taken],
        others=[e.name for e in op.entries if e.name != entry.name and e.two_stage],
        statuses=statuses)


def kernel_path_rows(op: Op, view) -> list[dict]:
    """The product's rows of the kernel-path table (opgen.model.kernel_paths) with their conditions in words."""
    out = []
    for r in kernel_paths.doc_rows(op, view):
        conds = [f'{r["attr"]} = "{r["comm_alg"]}"'] if r["comm_alg"] is not None else []
        conds += [f"{k}={v}" for k, v in r["env"]]
        if r["world_attr"] is not None:
            conds.append(f'{r["world_attr"]} ∈ [{r["lo"]}, {r["hi"]}]' if r["hi"] is not None
                         else f'{r["world_attr"]} ≥ {r["lo"]}')
        out.append(dict(r, when="，".join(conds)))
    return out


def docs_context(op: Op, plans: Plans, entry: AclnnEntry | None = None) -> dict:
    ordered = [soc for soc in B.PRODUCTS if op.product(soc) is not None]
    views = [op.view(soc) for soc in ordered]
    entry = entry or op.entries[0]
    data_checks = {c.id for v in views for c in v.checks
                   if any(isinstance(n, Call) and n.fn in B.DATA_BUILTINS for e in (c.expr, *c.conditions)
                          for n in walk(e))}
    L = Latex(op)
    return dict(op=op, views=views, entry=entry_context(op, entry, views),
                data_checks=data_checks, tests=tests_summary(op, plans), statuses=STATUS_LABELS,
                quant=quant_context(op, views), lets=lets_context(op),
                own_lets={v.soc: product_lets(op, v) for v in views},
                kernel_paths={v.soc: kernel_path_rows(op, v) for v in views},
                defs=[dict(name=d.name, params=", ".join(d.params), latex=L(d.body)) for d in op.defs],
                post=formula_lines(op.post.body, L) if op.post else [],
                specials=[dict(name=sp.name, doc=sp.doc, count=sp.count,
                               lines=formula_lines(sp.body, L) if sp.body is not None else None)
                          for sp in op.specials],
                example=example_context(op, entry, plans),
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
                worlds={soc: [_launch(op.views[soc].facts.ranks_per_server, w) for w in worlds]
                        for soc, worlds in plans.npu_worlds.items()},
                spec=spec.rsplit("/", 1)[-1])


def _launch(ranks_per_server: int | None, world: int) -> dict:
    """torchrun's layout of one world: a world past one server's NPUs (Atlas A2: 8) spans nodes, one per server,
    each started with its --node-rank (doc: README "NPU mode", the two-server commands)."""
    per_node = min(world, ranks_per_server) if ranks_per_server else world
    nodes = -(-world // per_node)
    return dict(world=world, nodes=nodes, per_node=per_node)


@emitter
def emit_docs(op: Op, plans: Plans | None = None) -> list[Artifact]:
    """One aclnn document per entry point (the op's parts — products, constraints, tests — in each)."""
    plans = plans or Plans(op)
    return [Artifact(f"docs/{e.name}.md", render("docs/aclnn_op.md.j2", **docs_context(op, plans, e)))
            for e in op.entries if e.two_stage]  # a size function is documented with op.files_entry
