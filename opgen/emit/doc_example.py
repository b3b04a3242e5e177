"""The 调用示例 of an aclnn document: one rank's call of the entry point on one of the suite's positive cases.

As the real documents' examples do (../shared/cann/docs/current/aclnnMoeDistributeDispatchV4.md 调用示例): one
thread per device, an HCCL communicator per rank (HcclCommInitAll), the group name from HcclGetCommName,
device tensors from aclCreateTensor, then <entry>GetWorkspaceSize and <entry> on a stream.  The values are a
positive case of the generated suite (``plans.suite``): its attributes and input shapes, and the output shapes
the spec's shape rules give for them (evaluated statically from the case; a case whose output shapes the rules
do not decide is not taken).
"""
from __future__ import annotations

from opgen.core.dtypes import DTYPES
from opgen.lang.expr import Call, Name
from opgen.lower.aclnn_abi import entry_param_decl
from opgen.lower.literals import cpp_literal
from opgen.model.decl import AclnnEntry, Attr, Op, ShapeCond, Tensor
from opgen.model.inline import inline
from opgen.model.resolve import dim_bindings
from opgen.model.static_eval import StaticEnv, eval3

# The rank-id attribute of each communication domain (doc: aclnnMoeDistribute*.md 参数说明, epRankId / tpRankId;
# the harness gives each rank the same ids, code: opgen/runtime/driving.py EP_RANK_ATTRS).
RANK_ATTRS = {"ep": "epRankId", "tp": "tpRankId"}


def _rank_attrs(op: Op) -> set[str]:
    """The first group is the op's primary domain (EP): its rank id is the thread's rank, the others keep theirs."""
    return {RANK_ATTRS[op.comm_groups[0].domain]} if op.comm_groups else set()


def _shape(alt, env: StaticEnv) -> tuple[int, ...] | None:
    while isinstance(alt, ShapeCond):
        test = eval3(alt.test, env)
        if test is None:
            return None
        alt = alt.then if test else alt.orelse
    dims = tuple(eval3(d, env) for d in alt.dims)
    return dims if all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims) else None


def _env(op: Op, view, case: dict) -> StaticEnv:
    attrs = {a.name: a.default for a in op.attrs} | case["attrs"]
    env = StaticEnv(names=dict(attrs) | {e.name: e.default for e in op.envs} | case["env"])
    for name in _rank_attrs(op):  # the shapes of rank 0 (a shared expert rank's may differ)
        env.names[name] = 0
    for name, (dtype, shape) in case["inputs"].items():
        env.present[name] = True
        env.dtypes[name] = dtype
        env.ranks[name] = len(shape)
        env.dims.update({(name, i): d for i, d in enumerate(shape)})
    for t in op.inputs:
        env.present.setdefault(t.name, False)
    for n, (t, axis) in dim_bindings(op).items():
        if (t, axis) in env.dims:
            env.names[n] = env.dims[(t, axis)]
    for _ in range(2):  # lets may read output dtypes, output dtype rules lets (fp8 switches): settle both
        for l in view.lets:
            env.names[l.name] = eval3(inline(op, l.expr), env)
        for t in view.outputs:
            env.present[t.name] = True
            chosen = case["out_dtypes"].get(t.name)
            if chosen is None and t.dtype_rule is not None:
                chosen = eval3(inline(op, t.dtype_rule), env)
            if chosen is None and len(t.dtypes) == 1:
                chosen = t.dtypes[0]
            env.dtypes[t.name] = chosen
    return env


def _outputs(op: Op, view, case: dict) -> dict[str, tuple[str, tuple[int, ...]]] | None:
    env = _env(op, view, case)
    out = {}
    for t in view.outputs:
        shape = next((s for s in (_shape(a, env) for a in t.shape.alts) if s is not None), None) \
            if t.shape is not None else None
        dtype = env.dtypes.get(t.name)
        if shape is None or dtype not in DTYPES:
            return None
        out[t.name] = (dtype, shape)
    return out


def _tensor(name: str, dtype: str, shape: tuple[int, ...]) -> dict:
    d = DTYPES[dtype]
    return dict(name=name, acl=d.acl_enum, bits=d.bits, shape=", ".join(str(x) for x in shape))


def example_context(op: Op, entry: AclnnEntry, plans) -> dict | None:
    """The call example of ``entry``: None when the op has no generated suite (nothing to take values from)."""
    suite = plans.suite
    if suite is None:
        return None
    groups = [g for g in op.comm_groups if not g.context]
    contexts = [g.attr for g in op.comm_groups if g.context]
    for case in suite.positive:
        if case["run"] is not None or case.get("rank_shapes"):
            continue
        view = op.view(case["product"])
        outputs = _outputs(op, view, case)
        if outputs is None:
            continue
        return _render_view(op, entry, case, outputs, groups, contexts)
    raise ValueError(f"{op.name}: no positive case whose output shapes the spec's shape rules decide")


def _render_view(op: Op, entry: AclnnEntry, case: dict, outputs: dict, groups, contexts) -> dict:
    attrs = {a.name: a.default for a in op.attrs} | case["attrs"]
    group_attrs = {g.attr for g in groups if attrs.get(g.attr)}
    rank_attrs = _rank_attrs(op)
    tensors, nulls, scalars, args = [], [], [], []
    for p in entry.params:
        param = op.param(p.name)
        if isinstance(param, Tensor):
            shaped = case["inputs"].get(p.name) if param.role == "input" else outputs.get(p.name)
            if shaped is None:
                nulls.append(p.c_name)
            else:
                tensors.append(dict(_tensor(p.c_name, *shaped), output=param.role == "output",
                                    context=param.name in contexts))
        elif param is not None:
            if param.name in group_attrs:
                scalars.append(dict(decl=entry_param_decl(op, p), value="group"))
            elif param.name in rank_attrs:
                scalars.append(dict(decl=entry_param_decl(op, p), value="rank"))
            else:
                # a string the document passes as `char *` is a writable array, not a string literal
                decl = f"char {p.c_name}[]" if param.type == "string" and not p.const else entry_param_decl(op, p)
                scalars.append(dict(decl=decl, value=cpp_literal(attrs[param.name])))
        else:  # a parameter of this entry point only (a size function's): its type's zero
            zero = {"int64": 0, "float": 0.0, "bool": False, "string": ""}[p.type]
            scalars.append(dict(decl=entry_param_decl(op, p), value=cpp_literal(zero)))
        args.append(p.c_name)
    return dict(header=f"aclnnop/aclnn_{entry.stem}.h", world=case["world"], product=case["product"],
                case=case["id"], tensors=tensors, nulls=nulls, scalars=scalars, args=args,
                comm=bool(op.comm_groups), buffsize=case["env"].get("HCCL_BUFFSIZE"))
