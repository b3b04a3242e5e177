"""The 调用示例 of an aclnn document: one rank's call of the entry point on one of the suite's positive cases.

As the real documents' examples do (../shared/cann/docs/current/aclnnMoeDistributeDispatchV4.md 调用示例): one
thread per device, an HCCL communicator per rank (HcclCommInitAll), the group name from HcclGetCommName,
device tensors from aclCreateTensor, then <entry>GetWorkspaceSize and <entry> on a stream.  The values are a
positive case of the generated suite, the one ``examples/test_aclnn_<op>.cpp`` runs (``example_case``): its
attributes and input shapes, and the output shapes the reference infers for them.
"""
from __future__ import annotations

from opgen.core.dtypes import DTYPES
from opgen.emit.examples import example_case
from opgen.lower.aclnn_abi import entry_param_decl
from opgen.lower.literals import cpp_literal
from opgen.model.decl import AclnnEntry, Op, Tensor

def _tensor(name: str, dtype: str, shape: tuple[int, ...]) -> dict:
    d = DTYPES[dtype]
    return dict(name=name, acl=d.acl_enum, bits=d.bits, shape=", ".join(str(x) for x in shape))


def example_context(op: Op, entry: AclnnEntry, plans) -> dict | None:
    """The call example of ``entry``: None when the op has no generated suite (nothing to take values from)."""
    if plans.suite is None:
        return None
    groups = [g for g in op.comm_groups if not g.context]
    contexts = [g.attr for g in op.comm_groups if g.context]
    case, ranks, shaped = example_case(op, plans)
    outputs = {name: (dtype, tuple(shape)) for name, (shape, dtype) in shaped.items()}
    # the attributes that differ between ranks (the family's rank rule: epRankId and the like) take the thread's rank
    rank_attrs = {n for n in ranks[0] if any(r[n] != ranks[0][n] for r in ranks)}
    return _render_view(op, entry, case, outputs, groups, contexts, rank_attrs)


def _render_view(op: Op, entry: AclnnEntry, case: dict, outputs: dict, groups, contexts, rank_attrs: set[str]) -> dict:
    attrs = {a.name: a.default for a in op.attrs} | case["attrs"]
    group_attrs = {g.attr for g in groups if attrs.get(g.attr)}
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
