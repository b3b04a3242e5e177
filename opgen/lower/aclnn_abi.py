"""Model → the C ABI of aclnn entry points: parameter declarations, and what an entry point passes its op's
base for a parameter it does not take.  Shared by the op_api emitter and the aclnn documents, so the header a
caller compiles against and the prototype its document shows are one thing."""
from __future__ import annotations

from opgen.lower.literals import cpp_literal, cpp_string
from opgen.model.decl import AclnnEntry, AclnnParam, Attr, Op, Tensor

# The aclnn parameter type of each attribute type (types that cannot be attributes of an aclnn op are absent; a
# float attribute is an fp32 `float`, as aclnnMoeDistributeCombineAddRmsNorm.md declares normEps).
_ATTR_TYPES = {"int64": "int64_t ", "string": "const char *", "bool": "bool ", "float": "float ",
               "list<int64>": "const aclIntArray *"}
WORKSPACE_PARAMS = ("uint64_t *workspaceSize", "aclOpExecutor **executor")
RUN_PARAMS = ("void *workspace", "uint64_t workspaceSize", "aclOpExecutor *executor", "aclrtStream stream")


def param_decl(p: Tensor | Attr, const: bool = True, c_name: str | None = None) -> str:
    """``const aclTensor *x``, ``int64_t epWorldSize`` ...; ``const=False``: the pointer as a document writes it
    without const (``char *commAlg``); ``c_name``: the parameter's name there, where not the op's.  An attribute
    type aclnn has no parameter type for raises TypeError."""
    if isinstance(p, Attr):
        ctype = _ATTR_TYPES.get(p.type)
        if ctype is None:
            raise TypeError(f"attribute {p.name}: no aclnn parameter type for {p.type}")
        if not const:
            ctype = ctype.replace("const ", "", 1)
    else:
        ctype = "const aclTensor *" if p.role == "input" and const else "aclTensor *"
    return f"{ctype}{c_name or p.name}"


def entry_param_decl(op: Op, p: AclnnParam) -> str:
    """The C parameter of one parameter of an entry point (its own type, or the op parameter's)."""
    if p.type is not None:
        return param_decl(Attr(p.name, p.type, False), p.const, p.c_name)
    return param_decl(op.param(p.name), p.const, p.c_name)


def workspace_params(op: Op, entry: AclnnEntry) -> list[str]:
    """The parameters of ``<entry>GetWorkspaceSize`` in the entry point's order; of a size function, its
    parameters then one ``uint64_t &`` per size."""
    params = [entry_param_decl(op, p) for p in entry.params]
    if entry.sizes:
        return params + [f"uint64_t &{z.name}" for z in entry.sizes]
    return params + list(WORKSPACE_PARAMS)


def omitted_value(p: Tensor | Attr, taken: frozenset[str] | set[str] = frozenset()) -> str:
    """What an entry point passes the base for a parameter it does not take: null, the attribute's default, or
    (``omitted = dtype(t)``) the dtype of a tensor ``t`` it takes (a size function takes no outputs: the default)."""
    if isinstance(p, Tensor):
        if not p.optional:
            raise TypeError(f"{p.name} is required and has no value to pass when omitted")
        return "nullptr"
    if p.omitted is not None and p.omitted.args[0].id in taken:  # `omitted = dtype(t)`: t's ge::DataType
        t = p.omitted.args[0].id
        return f"({t} != nullptr ? static_cast<int64_t>({t}->GetDataType()) : {cpp_literal(p.default)})"
    if p.type == "string":
        return cpp_string(p.default if p.default is not None else "")
    if p.type == "float":
        return cpp_literal(float(p.default))
    if p.type in ("int64", "bool"):
        return cpp_literal(p.default)
    if p.type.startswith("list<") and not p.default:
        return "nullptr"
    raise TypeError(f"attribute {p.name}: no aclnn value for the default {p.default!r} of a {p.type}")
