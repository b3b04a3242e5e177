"""Model → the CANN host side of one operator: OpDef, infershape, tiling, the aclnn API and CMake.

Emitted files (paths relative to the op's output directory, laid out like an op of a CANN op repository):

* ``op_host/<op>_def.cpp``                 OpDef: IR inputs, outputs and attributes; one OpAICoreConfig per SoC
* ``op_host/<op>_infershape.cpp``          IMPL_OP_INFERSHAPE over the portable check core
* ``op_host/op_tiling/<op>_tiling.{h,cpp}`` the tiling function (checks, tiling key, workspace, tiling data)
* ``op_api/aclnn_<op>.{h,cpp}``            the two-stage aclnn API over the generated aclnnInner API
* ``CMakeLists.txt``, ``op_host/CMakeLists.txt``  the op-repo build glue

The portable check core ``op_host/op_tiling/<op>_check.h`` (``opgen.emit.check_core``) and the kernel side
``op_kernel/*`` (``opgen.emit.kernel``) are emitted elsewhere; the files here include them.

Everything that reaches C++ is lowered here by typed helpers (a value a helper cannot express raises
TypeError), and every list comes out in model (spec) order, so the output is deterministic.
"""
from __future__ import annotations

import dataclasses
import itertools
import textwrap
from dataclasses import dataclass

from opgen.core.artifact import Artifact
from opgen.core.dtypes import DTYPES, FORMATS
from opgen.core import builtins as B
from opgen.core.errors import LoweringError
from opgen.core.families import FAMILIES
from opgen.core.span import find_span
from opgen.core.products import AICPU, HCCL_CMD_NAMES, HCCL_COMM_ENGINES, KERNEL_COMPILE_OPTIONS, op_soc_version
from opgen.lang.expr import Bool, Call, Expr, Int, Name, Str, to_spec, walk
from opgen.emit.registry import emitter
from opgen.emit.tpl_key import decl_header, key_params
from opgen.emit.ub_plan import render_cpp
from opgen.emit.render import render, spec_file
from opgen.lower.aclnn_abi import RUN_PARAMS, WORKSPACE_PARAMS, omitted_value, param_decl, workspace_params
from opgen.lower.literals import cpp_literal, cpp_string
from opgen.model.decl import AclnnEntry, Attr, Op, ProductView, Tensor, snake
from opgen.emit.tiling_layout import (BATCH_WRITE_ITEM_BYTES, CCL_BUFFER_ENV, EXEC_TIMEOUT_AIV_MAX_S, ub_bytes_fn,
                                      EXEC_TIMEOUT_ENV, WORKSPACE_PER_CORE_PAIR, TilingField, hccl_cc_field, tiling_fields)
from opgen.model.static_eval import StaticEnv, fails
from opgen.lower.cpp import (ScalarCpp, comment_text as cpp_comment, cpp_expr, cpp_ge_enum, cpp_ident,
                             cpp_kind_type, cpp_soc_enum)
from opgen.model.resolve import dim_bindings

# ---------------------------------------------------------------------------------------------
# Typed lowering helpers (model value → C++ token)
# ---------------------------------------------------------------------------------------------


def ge_dtype(name: str) -> str:
    """``FLOAT16`` → ``ge::DT_FLOAT16`` (the graph/types.h enumerator)."""
    info = DTYPES.get(name)
    if info is None:
        raise TypeError(f"no ge::DataType for dtype {name!r}")
    return f"ge::{info.ge_enum}"


def ge_format(name: str) -> str:
    if name not in FORMATS:
        raise TypeError(f"no ge::Format for format {name!r}")
    return f"ge::FORMAT_{name}"


def const_name(name: str) -> str:
    """A spec / IR name as an UPPER_SNAKE C++ constant fragment (``expertIds`` → ``EXPERT_IDS``)."""
    out = snake(name).upper()
    if not out.replace("_", "").isalnum():
        raise TypeError(f"{name!r} is not a C++ identifier")
    return out


def upper_first(name: str) -> str:
    return name[:1].upper() + name[1:]


def comment_text(s: str) -> str:
    """Free text inside a C++ block comment: one line, no comment terminator."""
    return " ".join(s.split()).replace("*/", "* /")


def cpp_float(v) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"no C++ float literal for {type(v).__name__}")
    text = cpp_literal(float(v))
    return text if "numeric_limits" in text else text + "f"


def brace_list(items) -> str:
    """``{a, b, ...}``: clang-format lays it out (opgen/emit/cpp_format.py)."""
    return "{" + ", ".join(items) + "}"


def call_args(prefix: str, args: list[str], suffix: str = ")") -> str:
    """``prefix(arg, arg, ...)`` on one line: clang-format breaks it (opgen/emit/cpp_format.py)."""
    return f"{prefix}({', '.join(args)}{suffix}"


# ---------------------------------------------------------------------------------------------
# OpDef dtype / format columns
# ---------------------------------------------------------------------------------------------

def _depends_on_dtypes(op: Op, e: Expr) -> bool:
    for node in walk(e):
        if isinstance(node, Call) and node.fn in ("dtype", "present"):
            return True
        if isinstance(node, Name) and node.id == op.quant_by:
            return True
    return False


@dataclass(frozen=True)
class Columns:
    """The parallel dtype/format columns of one OpDef (or one OpAICoreConfig)."""
    tensors: tuple[Tensor, ...]                     # inputs then outputs, spec order
    dtype_rows: dict[str, tuple[str, ...]]          # tensor name → dtype per column
    format_rows: dict[str, tuple[str, ...]]         # tensor name → format per column

    @property
    def count(self) -> int:
        return len(next(iter(self.dtype_rows.values()))) if self.dtype_rows else 0


def _refs(e: Expr) -> set[str]:
    return {n.args[0].id for n in walk(e)
            if isinstance(n, Call) and n.fn in ("dtype", "present") and n.args and isinstance(n.args[0], Name)}


def _view_combos(op: Op, view: ProductView, varying: list[str]) -> list[dict[str, str | None]]:
    """Dtype assignments of the varying tensors that the view's checks allow (None: optional input absent)."""
    tensors = {t.name: t for t in view.inputs + view.outputs}
    unsupported = set(view.unsupported_inputs)
    choices = []
    for name in varying:
        t = tensors[name]
        opts: list[str | None] = [] if name in unsupported else list(t.dtypes)
        if t.role == "input" and t.optional:
            opts.append(None)
        choices.append(opts)
    dtypes0 = {t.name: t.dtypes[0] for t in tensors.values() if t.name not in varying and len(t.dtypes) == 1}
    present0: dict[str, bool] = {t.name: True for t in tensors.values() if not (t.role == "input" and t.optional)}
    present0.update({n: False for n in unsupported})
    # optional inputs that are neither varying nor unsupported stay unknown: columns do not depend on them
    # each check is decided as soon as the varying tensors it reads are assigned (a depth-first search that
    # prunes on the first definite failure); a combination is valid when some quant mode admits it
    position = {name: i for i, name in enumerate(varying)}
    by_depth: dict[int, list] = {}
    for c in view.checks:
        if not (_depends_on_dtypes(op, c.expr) or any(_depends_on_dtypes(op, x) for x in c.conditions)):
            continue
        refs = _refs(c.expr).union(*[_refs(x) for x in c.conditions])
        by_depth.setdefault(max((position[r] for r in refs if r in position), default=-1), []).append(c)
    modes: list[int | None] = list(view.quant_modes) if op.quant_by and view.quant_modes else [None]
    # lets the product fixes to a literal (`let fp8Quant = true;`) are known too: the product's switches
    constants = {l.name: l.expr.value for l in view.lets if isinstance(l.expr, (Bool, Int, Str))}
    valid: set[tuple] = set()

    def search(depth: int, combo: tuple, dtypes: dict, present: dict, mode) -> None:
        # Known: the assignment's dtypes and presence, the quant mode and the literal lets; shapes, other
        # attributes and lets stay unknown, so a column is dropped only when the spec rules it out.
        names = dict(constants) if mode is None else {**constants, op.quant_by: mode}
        env = StaticEnv(names=names, present=present, dtypes=dtypes)
        if any(fails(c, env) for c in by_depth.get(depth - 1, ())):
            return
        if depth == len(varying):
            valid.add(combo)
            return
        name = varying[depth]
        optional_input = tensors[name].role == "input" and tensors[name].optional
        for choice in choices[depth]:
            d, pr = dict(dtypes), dict(present)
            if choice is not None:
                d[name] = choice
            if optional_input:
                pr[name] = choice is not None
            search(depth + 1, combo + (choice,), d, pr, mode)

    for mode in modes:
        search(0, (), dict(dtypes0), dict(present0), mode)
    return [dict(zip(varying, c)) for c in itertools.product(*choices) if c in valid]


def _fill_absent(combos: list[dict[str, str | None]], dtypes: dict[str, tuple[str, ...]]) -> list[dict[str, str]]:
    """Columns from assignments.  An absent optional input may take any dtype, so an assignment with absent
    inputs reuses a column that agrees on the present ones; failing that, the absent input follows the
    dtype of the first tensor of the assignment that it can share (else its own first dtype)."""
    cols: list[dict[str, str]] = []
    for c in combos:
        if all(v is not None for v in c.values()) and c not in cols:
            cols.append(dict(c))  # type: ignore[arg-type]
    for c in combos:
        if all(v is not None for v in c.values()):
            continue
        if any(all(col[k] == v for k, v in c.items() if v is not None) for col in cols):
            continue
        known = [v for v in c.values() if v is not None]
        filled = {k: v if v is not None else next((d for d in known if d in dtypes[k]), dtypes[k][0])
                  for k, v in c.items()}
        if filled not in cols:
            cols.append(filled)
    return cols


def _tensor_union(op: Op, name: str, field: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for soc in op.socs:
        view = op.views[soc]
        t = next(x for x in view.inputs + view.outputs if x.name == name)
        for d in getattr(t, field):
            seen.setdefault(d, None)
    return tuple(seen)


def _formats_of(t: Tensor) -> tuple[str, ...]:
    return tuple(t.formats) or ("ND",)


def opdef_columns(op: Op, soc: str | None) -> Columns:
    """Columns for one product (``soc``) or, with ``soc=None``, the op-level union over all products."""
    tensors = op.inputs + op.outputs
    varying = [t.name for t in tensors if len(_tensor_union(op, t.name, "dtypes")) > 1]
    socs = [soc] if soc is not None else list(op.socs)
    combos: list[dict[str, str | None]] = []
    for s in socs:
        for c in _view_combos(op, op.views[s], varying):
            if c not in combos:
                combos.append(c)
    cols = _fill_absent(combos, {n: _tensor_union(op, n, "dtypes") if soc is None else
                                 next(t for t in op.views[soc].inputs + op.views[soc].outputs if t.name == n).dtypes
                                 for n in varying})
    if varying and not cols:
        raise ValueError(f"{op.name}: no dtype combination passes the checks of {', '.join(socs)}")
    fmt_varying = [t for t in tensors if len(_formats_of(t)) > 1]
    fmt_combos = list(itertools.product(*[_formats_of(t) for t in fmt_varying])) or [()]
    dtype_rows: dict[str, list[str]] = {t.name: [] for t in tensors}
    format_rows: dict[str, list[str]] = {t.name: [] for t in tensors}
    view_tensors = {t.name: t for t in op.views[socs[0]].inputs + op.views[socs[0]].outputs}
    for c in cols or [{}]:
        for fc in fmt_combos:
            fmts = {t.name: f for t, f in zip(fmt_varying, fc)}
            for t in tensors:
                if t.name in c:
                    dtype_rows[t.name].append(c[t.name])
                else:
                    union = _tensor_union(op, t.name, "dtypes") if soc is None else view_tensors[t.name].dtypes
                    dtype_rows[t.name].append(union[0])
                format_rows[t.name].append(fmts.get(t.name, _formats_of(t)[0]))
    return Columns(tuple(tensors), {k: tuple(v) for k, v in dtype_rows.items()},
                   {k: tuple(v) for k, v in format_rows.items()})


def auto_contiguous(t: Tensor) -> bool:
    """Whether the OpDef declares the tensor AutoContiguous (the framework makes a non-contiguous one contiguous):
    every input; outputs are written in place."""
    return t.role == "input"


def _param_calls(t: Tensor, cols: Columns) -> list[str]:
    """The chained calls defining one input/output: ParamType, DataType(List), Format(List), AutoContiguous."""
    calls = [f".ParamType({'OPTIONAL' if t.optional else 'REQUIRED'})"]
    dts = cols.dtype_rows[t.name]
    if len(set(dts)) == 1:
        calls.append(".DataTypeList(" + brace_list([ge_dtype(dts[0])]) + ")")
    else:
        calls.append(".DataType(" + brace_list([ge_dtype(d) for d in dts]) + ")")
    fms = cols.format_rows[t.name]
    if len(set(fms)) == 1:
        calls.append(".FormatList(" + brace_list([ge_format(fms[0])]) + ")")
    else:
        calls.append(".Format(" + brace_list([ge_format(f) for f in fms]) + ")")
    if auto_contiguous(t):
        calls.append(".AutoContiguous()")
    return calls


def _attr_kind(a: Attr) -> str:
    """The attribute's type as OpAttrDef setters and REG_OP name it (Int, String, ListInt, ...)."""
    kind = {"int64": "Int", "string": "String", "bool": "Bool", "float": "Float",
            "list<int64>": "ListInt", "list<float>": "ListFloat", "list<bool>": "ListBool"}.get(a.type)
    if kind is None:
        raise TypeError(f"attribute {a.name}: no OpAttrDef setter for type {a.type}")
    return kind


def _attr_default(a: Attr) -> str:
    """The C++ literal of an optional attribute's default."""
    if a.type == "string":
        return cpp_string(a.default)
    if a.type == "float":
        return cpp_float(a.default)
    if a.type.startswith("list<"):
        elem = cpp_float if a.type == "list<float>" else cpp_literal
        return "{" + ", ".join(elem(x) for x in a.default) + "}"
    return cpp_literal(a.default)


def _attr_call(a: Attr) -> str:
    kind = _attr_kind(a)
    head = f'this->Attr({cpp_string(a.ir_name)}).AttrType({"OPTIONAL" if a.optional else "REQUIRED"})'
    if not a.optional or a.default is None:
        return f"{head}.{kind}();"
    return f"{head}.{kind}({_attr_default(a)});"


def soc_suffix(soc: str) -> str:
    return upper_first(soc)


def opdef_context(op: Op) -> dict:
    op_cols = opdef_columns(op, None)
    params = []
    for t in op.inputs + op.outputs:
        params.append(dict(kind="Input" if t.role == "input" else "Output", ir_name=cpp_string(t.ir_name),
                           calls=_param_calls(t, op_cols)))
    configs = []
    for p in op.products:
        cols = opdef_columns(op, p.soc)
        cparams = [dict(kind="Input" if t.role == "input" else "Output", ir_name=cpp_string(t.ir_name),
                        calls=_param_calls(t, cols)) for t in op.inputs + op.outputs]
        configs.append(dict(soc=p.soc, soc_string=cpp_string(p.soc), display=comment_text(p.display),
                            var=f"aicore_config_{p.soc}", fn=f"Define{soc_suffix(p.soc)}Config",
                            columns=cols.count, params=cparams, entry=op.views[p.soc].kernel_entry,
                            op_file=op.views[p.soc].op_file, jit_compile=op.views[p.soc].jit_compile))
    groups = [op.attr(g.attr).ir_name for g in op.comm_groups if op.attr(g.attr) is not None]
    return dict(op=op, spec=spec_file(op), params=params, attrs=[_attr_call(a) for a in op.attrs],
                configs=configs, columns=op_cols.count,
                hccl_groups="{" + ", ".join(cpp_string(g) for g in groups) + "}" if groups else "")


# ---------------------------------------------------------------------------------------------
# aclnn two-stage API
# ---------------------------------------------------------------------------------------------

def _param_doc(direction: str, name: str, doc: str, width: int = 120) -> list[str]:
    """`` * @param [in] name: doc`` wrapped to ``width`` characters (CJK text breaks between characters)."""
    head = f" * @param [{direction}] {name}: "
    text = comment_text(doc) or name
    lines = textwrap.wrap(text, width - len(head), break_long_words=True, break_on_hyphens=False)
    pad = " *" + " " * (len(head) - 2)
    return [head + lines[0]] + [pad + line for line in lines[1:]]


def _comment_lines(text: str, width: int = 120) -> list[str]:
    """`` * text`` wrapped to ``width`` columns (CJK text breaks between characters)."""
    return [" * " + line for line in textwrap.wrap(comment_text(text), width - 3, break_long_words=True,
                                                    break_on_hyphens=False)]


_RUN_PARAMS = list(RUN_PARAMS)
_WS_TAIL = list(WORKSPACE_PARAMS)


def base_names(op: Op) -> dict:
    """The shared base every entry point calls: its functions (C++ linkage) and header."""
    return dict(ws=f"{op.name}GetWorkspaceSizeBase", run=f"{op.name}Base", sizes=f"{op.name}SizesBase",
                # not aclnn_*: the repository installs every op_api/aclnn_*.h as a public header, and the base is
                # internal (code: ops-transformer cmake/obj_func.cmake `file(GLOB OPAPI_HEADERS .../aclnn_*.h)`)
                header=f"{op.snake_name}_base.h", source=f"{op.snake_name}_base.cpp")


def _sizes_base_params(op: Op) -> list[str]:
    """The base of the size functions: which one, every input and attribute in IR order, the results."""
    return ["int which"] + [param_decl(p) for p in op.inputs + op.attrs] + ["int64_t *sizes"]


def aclnn_base_context(op: Op) -> dict:
    """The base over every parameter in IR order: the check core's op_api stage on the aclTensors and attributes,
    then the generated aclnnInner API (whose tiling runs every check)."""
    names = base_names(op)
    inner = f"aclnnInner{op.name}"
    ws_params = [param_decl(p) for p in op.params] + _WS_TAIL
    for view in (op.views[p.soc] for p in op.products):
        _op_api_checks_see_no_env(op, view)
    str_attrs = [a for a in op.attrs if a.type == "string"]
    call_names = []
    for p in op.params:
        if isinstance(p, Attr) and p.type == "string" and p.optional:
            call_names.append(f"{p.name}Value")
        else:
            call_names.append(p.name)
    required_strings = [a for a in str_attrs if not a.optional]
    # HCCL server type the aclnn layer sets for MC2 ops: the products whose hccl_server fact is AICPU (the rest MTE)
    views = [op.views[p.soc] for p in op.products]
    aicpu = [op_soc_version(v.soc) for v in views if v.facts.hccl_server == AICPU and op_soc_version(v.soc)]
    return dict(
        op=op, spec=spec_file(op), base=names, inner=inner,
        guard=f"OP_API_INC_ACLNN_{op.snake_name.upper()}_BASE_H_",
        check_include=f"../op_host/op_tiling/{op.snake_name}_check.h",
        ws_decl=call_args(f"aclnnStatus {names['ws']}", ws_params, suffix=");"),
        run_decl=call_args(f"aclnnStatus {names['run']}", _RUN_PARAMS, suffix=");"),
        ws_def=call_args(f"aclnnStatus {names['ws']}", ws_params, suffix=")"),
        run_def=call_args(f"aclnnStatus {names['run']}", _RUN_PARAMS, suffix=")"),
        inner_ws_decl=call_args(f"extern aclnnStatus {inner}GetWorkspaceSize", ws_params, suffix=");"),
        inner_run_decl=call_args(f"extern aclnnStatus {inner}", _RUN_PARAMS, suffix=");"),
        read_def=call_args("aclnnStatus ReadParams", [param_decl(p) for p in op.inputs + op.attrs]
                           + ["check::Params *params"], suffix=")"),
        read_call=call_args("aclnnStatus ret = ReadParams", [p.name for p in op.inputs + op.attrs] + ["&params"],
                            suffix=");"),
        null_strings=[a.name for a in required_strings],
        optional_strings=[dict(name=a.name, default=cpp_string(a.default if a.default is not None else ""))
                          for a in str_attrs if a.optional],
        attr_reads=[dict(field=cpp_ident(a.name), value=_attr_value(a)) for a in op.attrs],
        # a product id that is no op::SocVersion enumerator is not recognised here (the call is rejected)
        socs=[dict(version=op_soc_version(v.soc), enum=cpp_soc_enum(v.soc)) for v in views if op_soc_version(v.soc)],
        inner_call=call_args(f"ret = {inner}GetWorkspaceSize",
                             call_names + ["workspaceSize", "executor"], suffix=");"),
        comm=bool(op.hccl_groups),  # the HCCL server type of an HCCL group (an MC2 context has none: code: the V5 op_api)
        aicpu_socs=[f"op::SocVersion::{s}" for s in aicpu],
        size_fns=[dict(name=e.name, count=len(e.sizes)) for e in op.entries if e.sizes],
        sizes_decl=call_args(f"aclnnStatus {names['sizes']}", _sizes_base_params(op), suffix=");"),
        sizes_def=call_args(f"aclnnStatus {names['sizes']}", _sizes_base_params(op), suffix=")"),
    )


def _attr_value(a: Attr) -> str:
    """The C++ value of an aclnn attribute argument as the check core's Params field takes it."""
    if a.type == "string":  # an optional string may be null: its default then
        default = cpp_string(a.default if a.default is not None else "")
        return f"({a.name} == nullptr) ? {default} : {a.name}" if a.optional else a.name
    if a.type in ("int64", "bool", "float"):
        return a.name
    raise TypeError(f"attribute {a.name}: the op_api cannot read a {a.type} into the check core yet")


def _op_api_checks_see_no_env(op: Op, view: ProductView) -> None:
    """The op_api stage sees the call's parameters only: a check of its classes that reads an env variable
    (through lets too) could not be decided there."""
    envs = {e.name for e in op.envs}
    lets = {l.name: l.expr for l in view.lets}
    for c in view.checks:
        if c.error_class not in B.STAGES["op_api"]:
            continue
        seen: set[str] = set()
        todo = [c.expr, *c.conditions]
        while todo:
            for n in walk(todo.pop()):
                if isinstance(n, Name) and n.id in envs:
                    raise LoweringError(f"check {c.id} of class {c.error_class} reads env {n.id}, which aclnn "
                                        f"GetWorkspaceSize does not see: make it a tiling check", c.span)
                if isinstance(n, Name) and n.id in lets and n.id not in seen:
                    seen.add(n.id)
                    todo.append(lets[n.id])


def _size_fn_context(op: Op, entry: AclnnEntry, which: int) -> dict:
    """A size function: its declaration and a body that calls the sizes base, then casts each result."""
    taken = {p.name for p in entry.params}
    names = base_names(op)
    c_names = {p.name: p.c_name for p in entry.params}
    args = [str(which)] + [c_names[p.name] if p.name in taken else f"{omitted_value(p)} /* {p.name} */"
                           for p in op.inputs + op.attrs] + ["sizes"]
    params = workspace_params(op, entry)
    return dict(
        name=entry.name,
        decl=call_args(f"ACLNN_API aclnnStatus {entry.name}", params, suffix=");"),
        defn=call_args(f"aclnnStatus {entry.name}", params, suffix=")"),
        own=[p.name for p in entry.params if p.type is not None],  # the document's, read by no size
        count=len(entry.sizes),
        call=call_args(f"const aclnnStatus ret = {names['sizes']}", args, suffix=");"),
        results=[z.name for z in entry.sizes],
        doc_params=[_param_doc("in", p.c_name, op.param(p.name).doc if op.param(p.name) is not None else
                               "本接口的参数，不影响计算结果。") for p in entry.params]
        + [_param_doc("out", z.name, f"{z.name} = {to_spec(z.expr)}") for z in entry.sizes],
    )


def aclnn_entry_context(op: Op, entry: AclnnEntry) -> dict:
    fn = entry.name
    taken = {p.name: p for p in entry.params}
    ws_params = workspace_params(op, entry)
    base_args = [taken[p.name].c_name if p.name in taken else f"{omitted_value(p, set(taken))} /* {p.name} */"
                 for p in op.params]
    names = base_names(op)

    def direction(decl) -> str:
        return "in" if isinstance(decl, Attr) or decl.role == "input" else "out"

    return dict(
        op=op, spec=spec_file(op), fn=fn, base=names,
        guard=f"OP_API_INC_ACLNN_{entry.stem.upper()}_H_",
        header=f"aclnn_{entry.stem}.h", source=f"aclnn_{entry.stem}.cpp",
        ws_decl=call_args(f"ACLNN_API aclnnStatus {fn}GetWorkspaceSize", ws_params, suffix=");"),
        run_decl=call_args(f"ACLNN_API aclnnStatus {fn}", _RUN_PARAMS, suffix=");"),
        ws_def=call_args(f"aclnnStatus {fn}GetWorkspaceSize", ws_params, suffix=")"),
        run_def=call_args(f"aclnnStatus {fn}", _RUN_PARAMS, suffix=")"),
        doc_params=[_param_doc(direction(op.param(p.name)), p.c_name, op.param(p.name).doc) for p in entry.params],
        omitted=_comment_lines("本接口不含参数" + "、".join(p.name for p in op.params if p.name not in taken)
                               + "：可选输入按空指针、可选属性按默认值处理" + "".join(
                                   f"，{a.name}取{a.omitted.args[0].id}的数据类型" for a in op.attrs
                                   if a.name not in taken and a.omitted is not None) + "。")
        if any(p.name not in taken for p in op.params) else [],
        reads_tensors=any(a.name not in taken and a.omitted is not None for a in op.attrs),
        base_call=call_args(f"return {names['ws']}", base_args + ["workspaceSize", "executor"], suffix=");"),
        # size functions live in the files of the op's first two-stage entry point (as CANN ships them)
        size_fns=[_size_fn_context(op, e, i) for i, e in enumerate(x for x in op.entries if x.sizes)]
        if entry is op.files_entry else [],
    )


# ---------------------------------------------------------------------------------------------
# op_graph: the REG_OP proto graph mode builds the op from (IR names, every product's dtypes, attribute defaults)
# ---------------------------------------------------------------------------------------------

def graph_proto_context(op: Op) -> dict:
    """The REG_OP: the OpDef's parameters (every product's dtypes), as the spec's `graph` facts amend them."""
    cols = opdef_columns(op, None)
    facts = {g.name: g for g in op.graph}

    def tensor(t: Tensor) -> dict:
        kind = ("INPUT" if t.role == "input" else "OUTPUT") if not t.optional else \
            ("OPTIONAL_INPUT" if t.role == "input" else "OPTIONAL_OUTPUT")
        g = facts.get(t.name)
        dts = g.dtypes if g is not None and g.dtypes is not None else cols.dtype_rows[t.name]
        dtypes = list(dict.fromkeys(ge_dtype(d).removeprefix("ge::") for d in dts))
        return dict(kind=kind, name=g.ir_name if g is not None and g.ir_name else t.ir_name, dtypes=", ".join(dtypes),
                    doc=comment_text(t.doc))

    def attr(a: Attr) -> dict:
        g = facts.get(a.name)
        required = not a.optional or a.default is None
        default = g.default if g is not None and g.has_default else a.default
        return dict(name=g.ir_name if g is not None and g.ir_name else a.ir_name, kind=_attr_kind(a),
                    default=None if required else _attr_default(dataclasses.replace(a, default=default)),
                    doc=comment_text(a.doc))

    return dict(op=op, spec=spec_file(op), guard=f"{op.snake_name.upper()}_PROTO_H_",
                inputs=[tensor(t) for t in op.inputs], outputs=[tensor(t) for t in op.outputs],
                attrs=[attr(a) for a in _proto_attr_order(op)])


def _proto_attr_order(op: Op) -> list[Attr]:
    """The attributes in OpDef order, each a `graph attr X after Y` names moved right after Y."""
    order = list(op.attrs)
    for g in op.graph:
        if g.role == "attr" and g.after is not None:
            moved = op.attr(g.name)
            order.remove(moved)
            order.insert(order.index(op.attr(g.after)) + 1, moved)
    return order


@emitter
def emit_graph_proto(op: Op, plans=None) -> list:
    return [Artifact(f"op_graph/{op.snake_name}_proto.h", render("cpp/op_graph/proto.h.j2", **graph_proto_context(op))),
            Artifact("op_graph/CMakeLists.txt", render("cpp/op_graph/CMakeLists.txt.j2", op=op, spec=spec_file(op)))]


# The opc tool's --simplified_key_mode for an op's kernel binaries: 0 (the full key) for every SoC the real ops
# build (code: ops-transformer mc2/*/op_host/config/<soc>/*_simplified_key.ini, all `default=0`).
SIMPLIFIED_KEY_MODE = 0

# The binary compile list (op_host/config/<soc>/<op>_binary.json): one kernel binary per OpDef column of the SoC,
# each listing every input / output with the column's dtype and format and every attribute.
# code: ops-transformer mc2/moe_distribute_*/op_host/config/<soc>/*_binary.json (the fields, their order and the
# fixed values below) and cmake/scripts/util/ascendc_bin_param_build.py (the same node written by the build).
# Attribute types as the binary lists spell them, and the value a required attribute (no OpDef default) takes:
# its type's zero (code: cmake/scripts/util/const_var.py ATTR_DEF_VAL; the real lists write "string", not "str").
BINARY_ATTR_TYPES = {"int64": ("int", 0), "string": ("string", ""), "float": ("float", 0.0),
                     "bool": ("bool", False), "list<int64>": ("list_int", []), "list<float>": ("list_float", []),
                     "list<bool>": ("list_bool", [])}
# Every tensor of a binary: unknown rank (-2) and any format of the column's (FormatAgnostic).
BINARY_SHAPE = -2
BINARY_FORMAT_MATCH = "FormatAgnostic"
# A dtype in a binary's name: the short names the mc2 lists use (code: MoeDistributeDispatchV2_ND_ND_FP16_INT8,
# MoeDistributeCombineV2_ND_INT32_BF16); any other dtype by its spec name.
BINARY_NAME_DTYPES = {"FLOAT16": "FP16", "BFLOAT16": "BF16", "FLOAT32": "FP32"}


def binary_dtype(name: str) -> str:
    """A dtype as the binary lists spell it: the spec name in lower case (``BFLOAT16`` → ``bfloat16``, ``FLOAT32``
    → ``float32``, ``FLOAT8_E4M3FN`` → ``float8_e4m3fn``; code: the real *_binary.json of mc2 and ops-transformer)."""
    if name not in DTYPES:
        raise TypeError(f"no binary-list dtype for {name!r}")
    return name.lower()


def _binary_key_tensors(op: Op) -> list[Tensor]:
    """The tensors a binary is named by: the first input whose dtype varies between the op's columns (else the
    first input) and the first output.  code: the real names, e.g. MoeDistributeDispatchV2_ND_ND_BF16_INT8 (x,
    expand_x), MoeDistributeCombineV3_ND_BF16_BF16 (expand_x, x; not context, the first input)."""
    op_cols = opdef_columns(op, None)
    first_in = next((t for t in op.inputs if len(set(op_cols.dtype_rows[t.name])) > 1),
                    op.inputs[0] if op.inputs else None)
    return [t for t in (first_in, op.outputs[0] if op.outputs else None) if t is not None]


def binary_names(op: Op, cols: Columns) -> list[str]:
    """``<OpType>_<formats>_<dtypes>`` per column.  Formats: the key input's, and the key output's too where a
    column changes the dtype between them (the ops that quantise: DispatchV2 ``_ND_ND_``, CombineSetup; the
    Combine ops, whose output keeps the input's dtype, name one ``_ND_``).  Dtypes: the key tensors', and where
    these repeat between the SoC's columns every other tensor whose dtype or format varies, in spec order, so
    each binary has a name of its own."""
    keys = _binary_key_tensors(op)
    quantises = len(keys) == 2 and any(a != b for a, b in zip(*(cols.dtype_rows[t.name] for t in keys)))
    fmt_tensors = keys if quantises else keys[:1]
    dtype_tensors = list(keys)
    pairs = [tuple(cols.dtype_rows[t.name][i] for t in keys) for i in range(cols.count)]
    extra_formats: list[Tensor] = []
    if len(set(pairs)) < len(pairs):
        dtype_tensors += [t for t in cols.tensors if t not in keys and len(set(cols.dtype_rows[t.name])) > 1]
        extra_formats = [t for t in cols.tensors if len(set(cols.format_rows[t.name])) > 1]
    names = []
    for i in range(cols.count):
        parts = [cols.format_rows[t.name][i] for t in fmt_tensors + extra_formats]
        parts += [BINARY_NAME_DTYPES.get(d, d) for d in (cols.dtype_rows[t.name][i] for t in dtype_tensors)]
        names.append("_".join([op.name] + parts))
    return names


def _binary_tensor(t: Tensor, index: int, cols: Columns, column: int) -> dict:
    return dict(name=t.ir_name, index=index, dtype=binary_dtype(cols.dtype_rows[t.name][column]),
                format=cols.format_rows[t.name][column], param_type="optional" if t.optional else "required")


def _binary_attr(a: Attr) -> dict:
    kind = BINARY_ATTR_TYPES.get(a.type)
    if kind is None:
        raise TypeError(f"attribute {a.name}: no binary-list type for {a.type}")
    value = a.default if a.optional and a.default is not None else kind[1]
    return dict(name=a.ir_name, dtype=kind[0], value=list(value) if isinstance(value, tuple) else value)


def binary_list(op: Op, soc: str) -> dict:
    """The binary compile list of one SoC: one entry per OpDef column, in the order of their names."""
    cols = opdef_columns(op, soc)
    attrs = [_binary_attr(a) for a in op.attrs]
    entries = []
    for i, name in enumerate(binary_names(op, cols)):
        entries.append(dict(bin_filename=name,
                            inputs=[_binary_tensor(t, k, cols, i) for k, t in enumerate(op.inputs)],
                            outputs=[_binary_tensor(t, k, cols, i) for k, t in enumerate(op.outputs)],
                            attrs=attrs))
    return dict(op_type=op.name, op_list=sorted(entries, key=lambda e: e["bin_filename"]))


@emitter
def emit_host_binary_config(op: Op, plans=None) -> list:
    """op_host/config/<soc>/<op>_binary.json and <op>_simplified_key.ini for every product the op builds for."""
    out = []
    for p in op.products:
        base = f"op_host/config/{p.soc}/{op.snake_name}"
        out.append(Artifact(f"{base}_binary.json",
                            render("cpp/op_host/config/binary.json.j2", binary=binary_list(op, p.soc),
                                   shape=BINARY_SHAPE, format_match=BINARY_FORMAT_MATCH)))
        out.append(Artifact(f"{base}_simplified_key.ini",
                            render("cpp/op_host/config/simplified_key.ini.j2", op=op, spec=spec_file(op),
                                   soc=p.soc, mode=SIMPLIFIED_KEY_MODE)))
    return out


# ---------------------------------------------------------------------------------------------
# CMake
# ---------------------------------------------------------------------------------------------

# The repository folders an MC2 op's kernels build against (`<opFile>_depends`): the shared MC2 code and its
# third-party templates.  code: ops-transformer mc2/moe_distribute_dispatch_v2/op_host/CMakeLists.txt
MC2_DEPENDS = ("mc2/common", "mc2/3rd")


def cmake_context(op: Op) -> dict:
    s = op.snake_name
    files = [f"{s}_def.cpp", f"{s}_infershape.cpp", f"op_tiling/{s}_tiling.cpp", f"op_tiling/{s}_tiling.h",
             f"op_tiling/{s}_check.h"] + [f"../op_api/{f}" for f in op_api_files(op)]
    # the kernel entries' dependencies, one per opFile the configs name and the op's own name (the real op_host
    # CMakeLists do the same: hicann/ops-transformer mc2/moe_distribute_dispatch_v2/op_host/CMakeLists.txt)
    op_files = list(dict.fromkeys([s] + [op.views[p.soc].op_file for p in op.products if op.views[p.soc].op_file]))
    options = [dict(soc=p.soc, options=" ".join(KERNEL_COMPILE_OPTIONS[p.soc])) for p in op.products
               if p.soc in KERNEL_COMPILE_OPTIONS]
    return dict(op=op, spec=spec_file(op), snake=s, files=files, op_files=op_files, mc2=bool(op.comm_groups),
                depends=" ".join(MC2_DEPENDS), compile_options=options)


# ---------------------------------------------------------------------------------------------
# Emitters (registered in opgen.emit.EMITTERS)
# ---------------------------------------------------------------------------------------------

@emitter
def emit_host_opdef(op: Op, plans=None) -> list:
    ctx = opdef_context(op)
    return [Artifact(f"op_host/{op.snake_name}_def.cpp", render("cpp/host/op_def.cpp.j2", **ctx))]


@emitter
def emit_host_aclnn(op: Op, plans=None) -> list:
    """One op_api header and source per aclnn entry point, over one shared base."""
    base = aclnn_base_context(op)
    out = [Artifact(f"op_api/{base['base']['header']}", render("cpp/host/aclnn_base.h.j2", **base)),
           Artifact(f"op_api/{base['base']['source']}", render("cpp/host/aclnn_base.cpp.j2", **base))]
    for entry in (e for e in op.entries if e.two_stage):
        ctx = aclnn_entry_context(op, entry)
        out += [Artifact(f"op_api/aclnn_{entry.stem}.h", render("cpp/host/aclnn.h.j2", **ctx)),
                Artifact(f"op_api/aclnn_{entry.stem}.cpp", render("cpp/host/aclnn.cpp.j2", **ctx))]
    return out


def op_api_files(op: Op) -> list[str]:
    """Every op_api file of the op, relative to op_api/ (the base first, then each entry point)."""
    names = base_names(op)
    return [names["source"], names["header"]] + [f"aclnn_{e.stem}.{x}" for e in op.entries if e.two_stage
                                                  for x in ("cpp", "h")]


@emitter
def emit_host_cmake(op: Op, plans=None) -> list:
    ctx = cmake_context(op)
    return [Artifact("CMakeLists.txt", render("cpp/host/CMakeLists.txt.j2", **ctx)),
            Artifact("op_host/CMakeLists.txt", render("cpp/host/op_host_CMakeLists.txt.j2", **ctx))]


# ---------------------------------------------------------------------------------------------
# Reading a gert context into the check core's Params (shared by infershape and tiling)
# ---------------------------------------------------------------------------------------------

def index_constants(op: Op) -> dict[str, list[tuple[str, int]]]:
    """IR index constants: ``INPUT_X_INDEX``, ``OUTPUT_EXPAND_X_INDEX``, ``ATTR_GROUP_EP_INDEX`` ..."""
    return dict(inputs=[(f"INPUT_{const_name(t.ir_name)}_INDEX", i) for i, t in enumerate(op.inputs)],
                outputs=[(f"OUTPUT_{const_name(t.ir_name)}_INDEX", i) for i, t in enumerate(op.outputs)],
                attrs=[(f"ATTR_{const_name(a.ir_name)}_INDEX", i) for i, a in enumerate(op.attrs)])


def _attr_reads(op: Op) -> list[dict]:
    """How each attribute is read from gert::RuntimeAttrs into its Params field."""
    out = []
    for a in op.attrs:
        idx = f"ATTR_{const_name(a.ir_name)}_INDEX"
        var = f"{a.name}Ptr"
        field = f"params.{cpp_ident(a.name)}"
        if a.type == "string":
            get, assign = f"attrs->GetAttrPointer<char>({idx})", f"{field} = {var};"
            ctype = "const char *"
        elif a.type in ("int64", "bool", "float"):
            ctype = {"int64": "const int64_t *", "bool": "const bool *", "float": "const float *"}[a.type]
            get = f"attrs->GetAttrPointer<{ctype[6:-2]}>({idx})"
            assign = f"{field} = *{var};" if a.type != "float" else f"{field} = static_cast<double>(*{var});"
        elif a.type == "list<int64>":
            ctype = "const gert::ContinuousVector *"
            get = f"attrs->GetListInt({idx})"
            assign = (f"{field}.assign(static_cast<const int64_t *>({var}->GetData()), "
                      f"static_cast<const int64_t *>({var}->GetData()) + {var}->GetSize());")
        else:
            raise TypeError(f"attribute {a.name}: no gert::RuntimeAttrs getter for type {a.type}")
        out.append(dict(var=var, decl=f"{ctype}{var} = {get};", assign=assign, required=not a.optional))
    return out


def _tensor_fields(op: Op) -> tuple[list[dict], list[dict]]:
    """How each input and output maps onto its Params TensorDesc and IR index constant."""
    rows = []
    for t in op.inputs:
        rows.append(dict(name=t.name, field=f"params.{cpp_ident(t.name)}", optional=t.optional,
                         index=f"INPUT_{const_name(t.ir_name)}_INDEX"))
    outs = [dict(name=t.name, field=f"params.{cpp_ident(t.name)}",
                 index=f"OUTPUT_{const_name(t.ir_name)}_INDEX") for t in op.outputs]
    return rows, outs


def _check_ns(op: Op) -> str:
    return f"opgen_check::{op.snake_name}"


def _unreadable_windows(op: Op) -> None:
    """A window sized by an env the tiling cannot read as one (every env but CCL_BUFFER_ENV, which it reads per group)
    would be checked against the env's default, never the window HCCL allocated: E203 at the window's source."""
    for w in [op.window] + [p.window for p in op.products]:
        if w is not None and w.env_sized and (w.env != CCL_BUFFER_ENV or not op.hccl_groups):
            why = "the op names no HCCL group to read it from" if w.env == CCL_BUFFER_ENV else \
                f"the host tiling reads no window size but {CCL_BUFFER_ENV} (per HCCL group, mc2tiling::GetCclBufferSize)"
            raise LoweringError(f"window {w.domain} is sized by env {w.env}, which the tiling cannot read: {why}; "
                                f"it would check the env's default instead of the window HCCL allocated. Size it by "
                                f"{CCL_BUFFER_ENV} or by attributes (`window {w.domain}: ATTR - 1 * MB {{`)",
                                find_span(op.source, op.span.file if op.span else "", rf":\s*({w.env})\b", w.span)
                                or w.span, "E203")


def _hccl_env(op: Op) -> dict | None:
    """The HCCL window env variable (read from the first comm group's buffer), if the spec declares one."""
    _unreadable_windows(op)
    env = next((e for e in op.envs if e.name == CCL_BUFFER_ENV), None)
    if env is None or not op.hccl_groups:
        return None
    group = op.attr(op.hccl_groups[0].attr)
    unit = {"": 1, "B": 1, "KB": 1024, "MB": 1024 * 1024}.get(env.unit)
    if unit is None:
        raise TypeError(f"env {env.name}: unit {env.unit!r} has no byte size")
    return dict(name=env.name, field=f"params.{cpp_ident(env.name)}", unit=env.unit or "B",
                unit_bytes=cpp_literal(unit), group=group.name)


def _process_envs(op: Op) -> list[dict]:
    """The env variables the tiling reads from the process environment with std::getenv (every env but
    CCL_BUFFER_ENV, which it reads from the comm domain): unset leaves the declared default, as the real A2 tilings
    read HCCL_INTRA_PCIE_ENABLE / HCCL_INTRA_ROCE_ENABLE (code: mc2/moe_distribute_dispatch_v2/op_host/op_tiling/
    arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp MoeDistributeDispatchA2CheckCommAlg). Only string envs:
    the text is the value, with no parse that could fail differently from the real op's strcmp."""
    out = []
    for e in op.envs:
        if e.name == CCL_BUFFER_ENV:
            continue
        if e.type != "string":
            raise LoweringError(f"env {e.name} is {e.type}: the tiling reads env variables other than "
                                f"{CCL_BUFFER_ENV} from the process environment as text, so declare it string",
                                find_span(op.source, op.span.file if op.span else "", rf":\s*({e.type})\b", e.span)
                                or e.span, "E203")
        out.append(dict(name=e.name, field=f"params.{cpp_ident(e.name)}"))
    return out


def common_context(op: Op) -> dict:
    inputs, outputs = _tensor_fields(op)
    return dict(op=op, spec=spec_file(op), snake=op.snake_name, check_ns=_check_ns(op),
                check_header=f"{op.snake_name}_check.h", indices=index_constants(op), attr_reads=_attr_reads(op),
                in_tensors=inputs, out_tensors=outputs, views=[op.views[p.soc] for p in op.products],
                op_name=cpp_string(op.name))


# ---------------------------------------------------------------------------------------------
# infershape
# ---------------------------------------------------------------------------------------------

@emitter
def emit_host_infershape(op: Op, plans=None) -> list:
    ctx = common_context(op)
    text = render("cpp/host/infershape.cpp.j2", **ctx)
    return [Artifact(f"op_host/{op.snake_name}_infershape.cpp", text)]


# ---------------------------------------------------------------------------------------------
# tiling
# ---------------------------------------------------------------------------------------------

def comment_lines(text: str, indent: int, width: int = 120) -> list[str]:
    """``// text`` wrapped to ``width`` (the text is one line: block comments never hold spec text)."""
    import textwrap
    return ["// " + line for line in textwrap.wrap(cpp_comment(text), width - indent - 3,
                                                    break_long_words=False, break_on_hyphens=False)] or ["//"]


def _view_tiling(op: Op, view: ProductView, fields: list[TilingField]) -> dict:
    """What one product's tiling evaluator computes: the tiling key digits, the struct fields, and the dims,
    lets and output dtypes they read (lowered by opgen.lower.cpp exactly as the check core lowers them)."""
    lets = {l.name: l for l in view.lets}
    copies, computed = [], []
    for f in fields:
        if f.source == "attr":  # an ignored attribute is read as its default, whatever was passed
            value = ScalarCpp(view).name(f.spec) if f.spec in view.ignored_attrs else f"p.{cpp_ident(f.spec)}"
            if op.attr(f.spec).type == "float":
                value = f"static_cast<float>({value})"
            elif op.attr(f.spec).type != "int64":
                value = f"static_cast<int64_t>({value})"
            copies.append(f"tiling->{f.name} = {value};")
        elif f.source == "has":  # present(), as the checks read it (an empty tensor may mean absent)
            has = f"HasContents(p.{cpp_ident(f.spec)})" if f.spec in view.empty_absent_inputs else \
                "false" if f.spec in view.ignored_inputs else f"p.{cpp_ident(f.spec)}.present"
            copies.append(f"tiling->{f.name} = {has} ? 1U : 0U;")
        elif f.source == "dtype" and op.tensor(f.spec).role == "input":
            copies.append(f"tiling->{f.name} = InputDtype(p.{cpp_ident(f.spec)});")
        elif f.source == "dtype":
            computed.append((f.name, f"static_cast<int32_t>(dtype_{f.spec}())"))
        elif f.source == "dim":
            computed.append((f.name, f"dim_{f.spec}()"))
        elif f.source == "let" and f.spec in lets:
            if cpp_kind_type(lets[f.spec].expr, view) == "std::string":
                continue  # a string let has no integer field value
            computed.append((f.name, f"let_{f.spec}()"))
    sets = []
    for i, (name, code) in enumerate(computed):
        end = " &&" if i < len(computed) - 1 else ";"
        head = f"Set(tiling->{name}, {cpp_string(name)}, missing, "
        one = head + f"[&] {{ return {code}; }}){end}"
        if 15 + len(one) <= 120:
            sets.append(one)
        else:
            sets.append(head.rstrip() + "\n" + " " * 19 + f"[&] {{ return {code}; }}){end}")
    key = [dict(comment=comment_lines(f"{kp.name} = {to_spec(kp.expr)}", 12),
                code=f"static_cast<int64_t>({cpp_expr(kp.expr, view)})") for kp in key_params(op)]
    let_rows = [dict(name=l.name, ctype=cpp_kind_type(l.expr, view), code=cpp_expr(l.expr, view),
                     comment=comment_lines(f"{l.name} = {to_spec(l.expr)}", 4)) for l in view.lets]
    dtype_rows = []
    for t in op.outputs:
        if t.dtype_rule is not None:
            rule = cpp_expr(t.dtype_rule, view)
        elif len(t.dtypes) == 1:
            rule = f"DataType::{cpp_ge_enum(t.dtypes[0])}"
        else:
            rule = "Undefined<DataType>()"
        dtype_rows.append(dict(name=t.name, field=cpp_ident(t.name), rule=rule))
    return dict(view=view, copies=copies, sets=sets, key=key, lets=let_rows, dtypes=dtype_rows,
                display=comment_text(view.product.display), groups=_groups_in_use(op, view))


def _groups_in_use(op: Op, view: ProductView) -> list[dict]:
    """Where each comm group after the first is in use on a product, as C++ over the tiling evaluator: never where
    the product ignores or rejects its name, else its spec condition, else where its name is set."""
    out = []
    for i, g in enumerate(op.comm_groups[1:], start=1):
        if g.attr in view.ignored_attrs or g.attr in view.unsupported_attrs:
            code, why = "false", f"{view.soc} ignores {g.attr}" if g.attr in view.ignored_attrs else \
                f"{view.soc} does not support {g.attr}"
        elif g.when is not None:
            code, why = cpp_expr(g.when, view), to_spec(g.when)
        else:
            code, why = f"!p.{cpp_ident(g.attr)}.empty()", f"{g.attr} is set"
        out.append(dict(index=i, domain=g.domain, code=code, comment=comment_text(why)))
    return out


def batch_write_items(op: Op) -> dict | None:
    """The BatchWrite items the op's kernel family sends across servers (Family.batch_write) and the products
    where it does (a server limit in the product table), or None."""
    family = FAMILIES.get(op.semantics or "")
    if family is None or not family.batch_write or not op.comm_groups:
        return None
    socs = [p.soc for p in op.products if op.views[p.soc].facts.ranks_per_server]
    if not socs:
        return None
    for role in family.batch_write:
        if op.attr(op.named(role)) is None:
            raise LoweringError(f"the {op.semantics} kernel sizes its BatchWrite items by attribute {op.named(role)}, "
                                "which the op lacks")
    return dict(units=[cpp_ident(r) for r in family.batch_write], item_bytes=BATCH_WRITE_ITEM_BYTES, socs=socs)


def core_workspace(op: Op) -> dict | None:
    """The per-core workspace the op's kernel family needs (Family.core_workspace), or None."""
    family = FAMILIES.get(op.semantics or "")
    need = family.core_workspace if family is not None else None
    if need is None:
        return None
    unit, role = need
    if op.attr(op.named(role)) is None:
        raise LoweringError(f"the {op.semantics} kernel sizes its workspace by attribute {op.named(role)}, which the "
                            "op lacks")
    return dict(bytes=unit, attr=cpp_ident(role))  # the tiling data field, named by role


def ub_check(op: Op, plans) -> dict | None:
    """The UB check of the op's tiling (Family.ub_check): the kernel's UB plan as a function and the tiling
    fields its rejection shows; None without one. The plan is ``plans.kernel_ub_plan``, the
    kernel's (its family's kernel part, opgen/emit/ub_plan.py), computed where the emitters share what they read,
    so this module does not import the kernel's emitter (which imports it)."""
    family = FAMILIES.get(op.semantics or "")
    if family is None or not family.ub_check:
        return None
    lowered, plan = plans.kernel_ub_plan
    if not lowered:
        return None  # no kernel, no plan: the kernel's emitter fails the build at the formula (E201)
    if plan is None:
        raise LoweringError(f"the {op.semantics} family checks UB in tiling, but its kernel part gives no UB plan")
    # host code, so it is rendered into the tiling source beside its one caller, not the kernel's tiling header;
    # the message names the op's parameters; the tiling data's fields are named by role (tiling_layout.tiling_fields)
    return dict(fn=ub_bytes_fn(op), plan=render_cpp(plan, f"{op.name}TilingData", ub_bytes_fn(op)),
                shows=[dict(label=cpp_ident(op.named(r)), field=cpp_ident(r)) for r in family.ub_check])


def tiling_context(op: Op, plans) -> dict:
    fields = tiling_fields(op)
    ctx = common_context(op)
    s = op.snake_name
    params = key_params(op)
    key_text = f"GET_TPL_TILING_KEY({', '.join(kp.name for kp in params)})"
    ctx.update(
        tiling_header=f"{s}_tiling.h",
        kernel_tiling_header=f"../../op_kernel/{s}_tiling.h",
        tiling_data=f"{op.name}TilingData",
        compile_info=f"{op.name}CompileInfo",
        tiling_func=f"{op.name}TilingFunc",
        guard=f"OPS_BUILT_IN_OP_TILING_RUNTIME_{s.upper()}_TILING_H_",
        key_text=key_text,
        key_count=len(params),
        key_decl_header="../../" + decl_header(op),
        per_view=[_view_tiling(op, op.views[p.soc], fields) for p in op.products],
        bound=[(name, t, axis) for name, (t, axis) in dim_bindings(op).items()],
        hccl=_hccl_env(op),
        process_envs=_process_envs(op),
        comm=bool(op.comm_groups),
        poll=dict(env=EXEC_TIMEOUT_ENV, max_s=EXEC_TIMEOUT_AIV_MAX_S),
        workspace_per_core_pair=WORKSPACE_PER_CORE_PAIR,
        core_workspace=core_workspace(op),
        batch_write=batch_write_items(op),
        ub_check=ub_check(op, plans),
        cc_groups=[dict(field=hccl_cc_field(i), attr=cpp_ident(g.attr), domain=g.domain)
                   for i, g in enumerate(op.hccl_groups)],
        cc_socs=[dict(soc=v.soc, op_type=v.facts.hccl_op_type, op_name=HCCL_CMD_NAMES[v.facts.hccl_op_type],
                      alg=v.facts.hccl_alg_config, engine=HCCL_COMM_ENGINES[v.facts.hccl_server],
                      server_ranks=(v.facts.ranks_per_server or 0) if batch_write_items(op) else 0)
                 for v in (op.views[p.soc] for p in op.products)],
    )
    return ctx


@emitter
def emit_host_tiling(op: Op, plans) -> list:
    ctx = tiling_context(op, plans)
    s = op.snake_name
    return [Artifact(f"op_host/op_tiling/{s}_tiling.h", render("cpp/host/tiling.h.j2", **ctx)),
            Artifact(f"op_host/op_tiling/{s}_tiling.cpp", render("cpp/host/tiling.cpp.j2", **ctx))]
