"""Model → ``examples/test_aclnn_<op>.cpp``: a runnable call of the op's newest aclnn entry point, as the real
op folders ship one (code: ops-transformer mc2/moe_distribute_combine_v2/examples/test_aclnn_moe_distribute_combine_v2.cpp).

The structure is the real examples': aclInit; per rank a device, context and stream; the EP communicator of every
rank (HcclCommInitAll); one thread per rank that creates the tensors, calls ``<entry>GetWorkspaceSize``, allocates
the workspace, calls ``<entry>`` and waits on the stream, copies the outputs back and prints their first values,
then frees everything.  The world, the attributes, the input and output shapes and dtypes are one accepted
positive case of the generated suite (the smallest world whose ranks share their shapes), so the call passes
every check of its product; each rank's id attributes follow the family's rank rule.  An MC2 context op takes
its context tensor from the repository's ``Mc2Aclnn::Mc2Context`` over the EP communicator, as the real
DispatchV2 / CombineV2 op_api build it (code: mc2/moe_distribute_dispatch_v2/op_api/moe_distribute_dispatch_v2_base.cpp).
"""
from __future__ import annotations

from opgen.core.artifact import Artifact
from opgen.core.dtypes import DTYPES
from opgen.core.errors import LoweringError
from opgen.emit.plans import Plans
from opgen.emit.registry import emitter
from opgen.emit.render import render, spec_file
from opgen.lower.literals import cpp_literal, cpp_string
from opgen.model.decl import AclnnEntry, Attr, Op, Tensor
from opgen.runtime.drivers import rank_rule
from opgen.runtime.scope import Meta

# The host element type of each storage width (the bits of a dtype; BOOL as uint8_t: a std::vector<bool> has no
# contiguous data()); 16-bit floats are written as their bit patterns.
_HOST_TYPES = {("float", 32): "float", ("float", 16): "uint16_t", ("float", 8): "uint8_t", ("int", 8): "int8_t",
               ("int", 32): "int32_t", ("int", 64): "int64_t", ("bool", 8): "uint8_t"}
# 1.0 in each float dtype's encoding (IEEE fp32 / fp16, bfloat16): the token rows the example sends
_ONE = {"FLOAT32": "1.0f", "FLOAT16": "0x3C00", "BFLOAT16": "0x3F80"}
# the role of the routing table (the expert of each token's top-K slot): filled with distinct experts per token
_EXPERT_IDS_ROLE = "expertIds"
# the attribute counting the experts the routing table may name
_EXPERT_COUNT_ATTR = "moeExpertNum"
# names the example's own locals use, which no parameter may take
_LOCALS = {"ret", "args", "stream", "hcomEpName", "workspaceSize", "executor", "workspaceAddr", "mc2Context"}


def newest_entry(op: Op) -> AclnnEntry:
    """The op's newest two-stage entry point: the last one its spec declares."""
    return [e for e in op.entries if e.two_stage][-1]


def _host_type(dtype: str) -> str:
    info = DTYPES[dtype]
    ctype = _HOST_TYPES.get((info.kind, info.bits))
    if ctype is None:
        raise LoweringError(f"the example has no host element type for {dtype} ({info.bits}-bit {info.kind})")
    return ctype


def _shape_size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _usable(case: dict, op: Op) -> bool:
    """A case the example can write: every rank the same shapes, no data recipe, host types for every dtype."""
    dtypes = [d for d, _ in case["inputs"].values()] + list(case["out_dtypes"].values())
    return (case["run"] is None and not case["rank_shapes"] and not case["data"]
            and all((DTYPES[d].kind, DTYPES[d].bits) in _HOST_TYPES for d in dtypes))


def example_case(op: Op, plans: Plans) -> tuple[dict, list[dict], dict]:
    """(case, the attributes of each rank, {output: (shape, dtype)}) of the example's world: the example file's
    and the documents' 调用示例 show the same world."""
    ref = plans.reference_module
    rule = rank_rule(op.semantics, ref.INFO.roles)
    found = []
    for i, case in enumerate(plans.suite.positive):
        if not _usable(case, op):
            continue
        ranks = [dict(case["attrs"], **(rule(r, case["attrs"]) if rule else {})) for r in range(case["world"])]
        metas = {n: Meta(tuple(shape), dtype) for n, (dtype, shape) in case["inputs"].items()}
        outs = [ref.infer(metas, a, case["product"], case["out_dtypes"] or None, env=case["env"] or None)
                for a in ranks]
        if all(o == outs[0] for o in outs):
            found.append((case["world"], i, case, ranks, outs[0]))
    if not found:
        raise LoweringError("no positive case of the generated suite gives an example world (every rank the same "
                            "shapes, host types for its dtypes)")
    _, _, case, ranks, outs = min(found, key=lambda f: f[:2])
    return case, ranks, outs


def _tensor(name: str, dtype: str, shape, role: str, fill: str) -> dict:
    info = DTYPES[dtype]
    return dict(name=name, acl=info.acl_enum, host=_host_type(dtype), shape=", ".join(str(d) for d in shape),
                size=_shape_size(shape), role=role, fill=fill)


def _attr_value(a: Attr, value, rank_attrs: set[str], group: str | None, buffer: str | None) -> str:
    if a.name in rank_attrs:
        return f"{a.name}OfRank[args.rankId]"
    if a.name == group:
        return "hcomEpName"
    if a.name == buffer:  # the MC2 context's window: the buffer size the context reports
        return "static_cast<int64_t>(hcclBuffSize)"
    if a.type == "string":
        return cpp_string(value)
    if a.type == "float":
        return cpp_literal(float(value))
    if a.type in ("int64", "bool"):
        return cpp_literal(value)
    raise LoweringError(f"attribute {a.name}: the example cannot pass a {a.type}")


def example_context(op: Op, plans: Plans) -> dict:
    entry = newest_entry(op)
    case, ranks, outs = example_case(op, plans)
    attrs = {a.name: case["attrs"].get(a.name, a.default) for a in op.attrs}
    rank_attrs = [n for n in ranks[0] if any(r[n] != ranks[0][n] for r in ranks)]
    group = op.hccl_groups[0].attr if op.hccl_groups else None
    ctx_group = op.context_group
    window = op.views[case["product"]].window
    # an MC2 context op sizes its window by an attribute (`window ep: cclBufferSize`), the context's buffer size
    buffer = window.env if ctx_group is not None and window is not None and op.attr(window.env) else None
    ids = op.named(_EXPERT_IDS_ROLE)
    tensors, call = [], []
    for p in entry.params:
        decl = op.param(p.name)
        if p.name in _LOCALS:
            raise LoweringError(f"parameter {p.name} of {entry.name} takes a name the example uses itself")
        if decl is None:  # a parameter only the document lists: its type's zero
            call.append({"string": '""', "float": "0.0f", "bool": "false"}.get(p.type, "0"))
        elif isinstance(decl, Attr):
            call.append(_attr_value(decl, attrs[decl.name], set(rank_attrs), group, buffer))
        elif ctx_group is not None and decl.name == ctx_group.attr:
            call.append("mc2Context")
        elif decl.role == "input" and decl.name in case["inputs"]:
            dtype, shape = case["inputs"][decl.name]
            fill = "ids" if decl.name == ids else _ONE.get(dtype, "0")
            tensors.append(_tensor(decl.name, dtype, shape, "input", fill))
            call.append(decl.name)
        elif decl.role == "output":
            shape, dtype = outs[decl.name]
            tensors.append(_tensor(decl.name, dtype, shape, "output", "0"))
            call.append(decl.name)
        else:  # an optional input the case leaves out
            call.append("nullptr")
    experts = op.named(_EXPERT_COUNT_ATTR)  # the family's role, whatever the spec calls it
    moe = attrs.get(experts)
    if ids in case["inputs"] and not moe:
        raise LoweringError(f"the example routes {ids} over {experts} experts, which the op lacks")
    envs = [dict(name=e.name, value=cpp_string(str(v))) for e, v in
            ((e, (case["env"] or {}).get(e.name)) for e in op.envs) if v is not None]
    return dict(op=op, entry=entry.name, header=f"aclnnop/aclnn_{entry.stem}.h", world=case["world"],
                case=case["id"], product=case["product"], tensors=tensors, call=call, envs=envs, group=group,
                context=dict(op=op.name) if ctx_group is not None else None,
                rank_attrs=[dict(name=n, per_rank=", ".join(cpp_literal(r[n]) for r in ranks)) for n in rank_attrs],
                moe=moe, moe_attr=experts)


@emitter
def emit_example(op: Op, plans: Plans) -> list:
    if plans.suite is None:
        return []
    return [Artifact(f"examples/test_aclnn_{op.snake_name}.cpp",
                     render("cpp/examples/test_aclnn.cpp.j2", spec=spec_file(op), **example_context(op, plans)))]
