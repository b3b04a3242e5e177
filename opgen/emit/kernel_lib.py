"""What an op family's Ascend C kernel part is built from: the kernel kind, the instance plan, the common context.

A family's ``kernel`` part (``opgen/families/<name>/kernel.py``) defines ``KIND``, a :class:`KernelKind`: the
names its template (the folder's ``kernel.cpp.j2``) is written against, its window areas, and the function that
adds the family's own entries to :func:`common_context`.  ``opgen.emit.kernel`` collects them and emits
``op_kernel/<op>.h`` and the kernel entries (:func:`kernel_entries`, :func:`entry_context`).  An op that lacks a
name the template is written against, uses a formula the Ascend C lowering cannot express, or names a dtype
without an Ascend C type fails the build with a located
``LoweringError`` (E201/E202, never a stub or a silent omission).  A quant mode declared with an empty body has no
kernel path (the spec's explicit "no formula"); every other reachable (product, mode, dtypes) combination gets one.

The kernel instances are keyed by CANN's template tiling key (:mod:`opgen.emit.tpl_key`: the spec's ``tiling_key``
fields, then a quant attribute no field carries): each entry is a template over its parameters, compiled once per
combination its ``ASCENDC_TPL_SEL`` lists (those of its products' instances). The dtypes are chosen when it is built:
CANN's op build compiles a kernel once per OpDef column with ``ORIG_DTYPE_<NAME>`` defined, and each instance
stands under an ``#if`` over those macros (:func:`column_test`), so one column's binary holds its own instances.
Only the (key, dtype) combinations some product can reach are instantiated — decided by evaluating
every product's checks three-valued (:func:`opgen.model.static_eval.eval3`), then kept only for the OpDef
columns of their products (the combinations tiling accepts, :func:`opgen.emit.host.opdef_columns`).  A routed()
tensor whose layout the checks leave open ((1,) or (H,) static scales) gets one instantiation per layout, told
apart at run time by the let that carries its rank or first dim (:meth:`opgen.lower.ascendc.TilingExpr.probe`).
Quant formulas come from the spec through :class:`opgen.lower.ascendc.QuantLowering`.  DispatchV2 and CombineV2
share one HCCL window layout (``templates/cpp/common/op_kernel/opgen_kernel_helpers.h``): two alternating data
halves of [CombineV2 rows | DispatchV2 rows] and a status area; the Setup/Teardown family shares another
(``templates/cpp/common/op_kernel/opgen_family_window.h``, which its four C++ class templates beside it include:
``KernelKind.header``).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace

from opgen.core.dtypes import DTYPES
from opgen.core.families import FAMILIES
from opgen.core.family_parts import template_name
from opgen.core.products import EXPAND_IDX
from opgen.core.span import find_span
from opgen.lang.expr import Binary, Bool, Call, Cond, Float, Int, Name, Unary, children, to_spec, walk
from opgen.emit.host import core_workspace, opdef_columns
from opgen.emit.tiling_layout import (BATCH_WRITE_CHUNK, BATCH_WRITE_ITEM_BYTES, WORKSPACE_PER_CORE_PAIR, has_field,
                                      hccl_cc_field, tiling_fields)
from opgen.lower.literals import cpp_literal
from opgen.lower.ascendc import (CPP_TYPES, FLOATISH, KernelTypes, LoweringError, PostLowering, QuantLowering, Val, TilingExpr, cpp_ident,
                                 cpp_type, type_param, wire_offsets)
from opgen.emit.tpl_key import KeyParam, decl_header, encode, key_params, key_rows, sel_header
from opgen.model.static_eval import StaticEnv, Sym, dtype_reads, eval3, fails, merge_env, solve_key_field
from opgen.model.decl import Op, ProductView, QuantMode, QuantStmt, ShapeCond, ShapeTuple, SpecialExpert, snake
from opgen.model.resolve import dim_bindings
from opgen.model.spec_text import shape_text

ROUTED_LAYOUTS = ("rows", "vector", "scalar")


# ---- the tiling struct -------------------------------------------------------------------------

def tiling_struct_name(op: Op) -> str:
    return f"{op.name}TilingData"


# ---- tiling key and instantiations -------------------------------------------------------------

@dataclass(frozen=True)
class KeyField:
    name: str
    digit: int | None        # its place in the spec's tiling_key (None: the quant attribute no key field carries)
    values: tuple
    param: str | None        # class template parameter (None: decoded but not specialised on)
    role: str                # "quant" | "present:<tensor>" | "other"
    expr: object = None      # the field's spec expression


@dataclass
class Instance:
    """One kernel class instantiation: key field values + a type per varying tensor (+ routed layouts)."""
    key_values: tuple                  # value per KeyField
    types: tuple                       # C++ type per varying tensor
    layouts: tuple                     # RowLayout per routed tensor
    checks: tuple                      # (tensor, dtype) the kernel tests at runtime to pick this instance
    runtime: tuple = ()                # further C++ tests over the tiling data (a routed layout's shape)
    products: set = field(default_factory=set)


def key_fields(op: Op) -> list[KeyField]:
    """The fields the kernel instances are keyed on: the op's template tiling key parameters (opgen/emit/tpl_key.py),
    in their declaration order, with the class template parameter each gives (none: decoded, not specialised on)."""
    out = []
    for kp in key_params(op):
        e = kp.expr
        if isinstance(e, Name) and e.id == op.quant_by:
            role = "quant"
        elif isinstance(e, Cond) and isinstance(e.test, Call) and e.test.fn == "present":
            role = f"present:{e.test.args[0].id}"
        else:
            role = "other"
        param = ("TK_QUANT" if kp.digit is None else f"TK_{snake(kp.name).upper()}") if role != "other" else None
        out.append(KeyField(kp.name, kp.digit, kp.values, param, role, e))
    return out


def key_value(values, fields) -> int:
    """The template tiling key of one value per key field (GET_TPL_TILING_KEY, opgen/emit/tpl_key.py)."""
    return encode([KeyParam(f.name, f.expr, f.values, f.digit) for f in fields], values)


def key_text(fields, values) -> str:
    """A key combination as the entries' comments show it: ``quant 2, scales 0, template 1``."""
    return ", ".join(f"{f.name} {v}" for f, v in zip(fields, values))


def key_lists(combos) -> list[tuple[tuple, ...]]:
    """Key combinations as few ASCENDC_TPL_ARGS_SEL lists: each a tuple of value lists, one per key field, whose
    product holds only combinations of ``combos``, the lists together every one of them once. Lists that differ in
    one field's values merge, field by field; of the field orders, the first that leaves the fewest lists."""
    start = [tuple((v,) for v in c) for c in sorted(set(map(tuple, combos)))]

    def merge(order) -> list:
        lists = list(start)
        for k in order:
            rest = lambda li: li[:k] + li[k + 1:]  # noqa: E731
            out: dict[tuple, tuple] = {}
            for li in lists:
                have = out.get(rest(li))
                out[rest(li)] = li if have is None else \
                    li[:k] + (tuple(sorted({*have[k], *li[k]})),) + li[k + 1:]
            lists = sorted(out.values())
        return lists

    n = len(start[0]) if start else 0
    return min((merge(order) for order in itertools.permutations(range(n))), key=len, default=[])


def _quant_refs(op: Op) -> dict:
    """Per quant mode: tensors referenced by its formula, outputs it assigns, tensors read by routed()."""
    refs = {}
    for q in op.quant_modes:
        tensors, routed = set(), set()
        for s in q.body:
            for x in (s.expr,) + s.conditions:
                for n in walk(x):
                    if isinstance(n, Name) and op.tensor(n.id) is not None:
                        tensors.add(n.id)
                    if isinstance(n, Call) and n.fn == "routed" and n.args and isinstance(n.args[0], Name):
                        routed.add(n.args[0].id)
        refs[q.value] = (tensors, routed)
    return refs


def _dtype_of(name: str, env: StaticEnv, op: Op):
    """A tensor's dtype under ``env``: a tensor of one declared dtype is not one of the configurations' variables."""
    d = env.dtypes.get(name)
    if d is None:
        t = op.tensor(name)
        d = t.dtypes[0] if t is not None and len(t.dtypes) == 1 else None
    return d


def _static_dtype(e, env: StaticEnv, lets: dict, op: Op):
    """The dtype a quant expression yields (as the numpy reference stores it), or None if unknown."""
    if isinstance(e, (Int, Float, Bool)):
        return "FLOAT32"
    if isinstance(e, Name):
        if e.id in lets:
            return lets[e.id]
        if op.tensor(e.id) is not None:
            return _dtype_of(e.id, env, op)
        return "FLOAT32"
    if isinstance(e, Call):
        if e.fn == "cast":
            return eval3(e.args[1], env)
        if e.fn == "row":
            return _dtype_of(e.args[0].id, env, op)
        if e.fn == "e8m0":
            return "FLOAT8_E8M0"
        if e.fn in ("pad_even", "per_block"):
            return _static_dtype(e.args[0], env, lets, op)
        return "FLOAT32"
    if isinstance(e, Cond):
        t = eval3(e.test, env)
        if t is False:
            return _static_dtype(e.orelse, env, lets, op)
        return _static_dtype(e.then, env, lets, op)
    if isinstance(e, (Binary, Unary)):
        return "FLOAT32"
    return None


def _formula_ok(op: Op, kind, qv: int, env: StaticEnv, soc: str = "") -> bool:
    """Whether the mode has a kernel path under ``env``: False for a mode declared with an empty body (the spec's
    explicit "no formula"). A formula that does not assign the row output, or assigns an output a dtype other
    than the one ``env`` gives it, cannot be emitted: a ``LoweringError`` at that formula (no silent omission)."""
    q = op.quant_mode(qv)
    if not q.body:
        return False
    where = f"on {soc}, " if soc else ""
    combo = ", ".join(f"dtype({t}) = {d}" for t, d in env.dtypes.items())
    lets: dict = {}
    assigned = False
    for s in q.body:
        if any(eval3(c, env) is False for c in s.conditions):
            continue
        d = _static_dtype(s.expr, env, lets, op)
        if s.kind == "let":
            lets[s.name] = d
            continue
        want = _dtype_of(s.name, env, op)
        if d is None or want is None:
            continue
        if d != want and not (want == "FLOAT32" and d in FLOATISH):
            raise LoweringError(f"{where}quant mode {qv} with {combo} assigns {s.name} a {d} value, but the "
                                f"configuration makes it {want}", s.expr.span or s.span)
        if s.name == kind.row_output:
            assigned = True
    if not assigned:
        raise LoweringError(f"{where}quant mode {qv} with {combo} does not assign the kernel's row output "
                            f"{kind.row_output} (guard it with `when`, or rule the combination out with a check)",
                            word(op, q.span, rf"quant\s+({qv})\b"))
    return True


def word(op: Op, within, pattern: str):
    """The span of a word of a declaration (``within``: its span), else the declaration's, else the op's."""
    file = op.span.file if op.span else ""
    return find_span(op.source, file, pattern, within) or within or op.span


def _relevant(op: Op, kind, qv, t: str, tensors: set, env: StaticEnv) -> bool:
    """Does tensor ``t``'s dtype matter to the kernel under the key assignment ``env``?"""
    if t in (kind.row_input, kind.row_output):
        return True
    tensor = op.tensor(t)
    if tensor.role == "output":
        q = op.quant_mode(qv) if qv is not None else None
        return q is not None and any(s.kind == "assign" and s.name == t and
                                     not any(eval3(c, env) is False for c in s.conditions) for s in q.body)
    if t not in tensors:
        return False
    return not tensor.optional or env.present.get(t) is True


def _routed_layout(view: ProductView, env: StaticEnv, tensor: str) -> list[str]:
    """Layouts of a routed() tensor that no check of ``view`` rules out under ``env``."""
    out = []
    for layout in ROUTED_LAYOUTS:
        e = StaticEnv(dict(env.names), dict(env.present), dict(env.dtypes), dict(env.ranks), dict(env.dims))
        e.names.setdefault("H", Sym("H"))
        if layout == "rows":
            e.ranks[tensor] = 2
            e.dims[(tensor, 1)] = Sym("H")
        elif layout == "vector":
            e.ranks[tensor] = 1
            e.dims[(tensor, 0)] = Sym("H")
        else:
            e.ranks[tensor] = 1
            e.dims[(tensor, 0)] = 1
        if not any(fails(c, e) for c in view.checks):
            out.append(layout)
    return out


def _shape_leaves(alt, env: StaticEnv) -> list:
    """The shape alternatives (ShapeTuple) an output can take under ``env`` (static tests followed)."""
    if isinstance(alt, ShapeTuple):
        return [alt]
    t = eval3(alt.test, env)
    if t is True:
        return _shape_leaves(alt.then, env)
    if t is False:
        return _shape_leaves(alt.orelse, env)
    return _shape_leaves(alt.then, env) + _shape_leaves(alt.orelse, env)


def _unsized_outputs(op: Op, qv, env: StaticEnv, tiling: TilingExpr) -> list[str]:
    """Outputs the mode assigns under ``env`` whose row width the tiling data cannot express."""
    q = op.quant_mode(qv) if qv is not None else None
    out = []
    for s in (q.body if q else ()):
        if s.kind != "assign" or any(eval3(c, env) is False for c in s.conditions):
            continue
        t = op.tensor(s.name)
        if t.shape is None or len(t.shape.alts) != 1:
            out.append(f"{s.name} (no single shape)")
            continue
        for leaf in _shape_leaves(t.shape.alts[0], env):
            try:
                for d in leaf.dims[1:]:
                    tiling(d)
            except LoweringError as err:
                out.append(f"{s.name}: {err}")
    return out


@dataclass
class KernelPlan:
    fields: list[KeyField]
    varying: list[str]                 # tensors whose dtype is a class type parameter (op order)
    routed: list[str]                  # tensors read through routed() (a RowLayout parameter each)
    instances: list[Instance]
    ambiguous: list[str]               # notes: routed layouts the checks leave open
    excluded: list[tuple] = field(default_factory=list)  # (key values, soc, why): reachable, the kernel cannot run


def _passing_combos(view: ProductView, base: StaticEnv, relevant: list[str], dtypes_of: dict):
    """The dtype combinations of ``relevant`` (itertools.product order) under which no check of ``view``
    certainly fails.

    A check is decided as soon as the dtypes it reads are chosen, so a failing prefix prunes every
    combination below it (the answer is the filter of the full product, found without walking it)."""
    position = {t: i for i, t in enumerate(relevant)}
    by_depth: list[list] = [[] for _ in range(len(relevant) + 1)]
    for c in view.checks:
        by_depth[max((position[t] + 1 for t in dtype_reads(c) if t in position), default=0)].append(c)

    def walk(depth: int, chosen: tuple):
        env = StaticEnv(base.names, base.present, dict(zip(relevant, chosen)))
        if any(fails(c, env) for c in by_depth[depth]):
            return
        if depth == len(relevant):
            yield chosen
            return
        for d in dtypes_of[relevant[depth]]:
            yield from walk(depth + 1, chosen + (d,))

    yield from walk(0, ())


def plan_instances(op: Op, kind: "KernelKind") -> KernelPlan:
    fields = key_fields(op)
    refs = _quant_refs(op)
    quant_field = next((f for f in fields if f.role == "quant"), None)
    used = {kind.row_input, kind.row_output} | {t for ts, _ in refs.values() for t in ts}
    assigned = {s.name for q in op.quant_modes for s in q.body if s.kind == "assign"}
    varying = [t.name for t in op.inputs + op.outputs
               if len(t.dtypes) > 1 and (t.name in used or t.name in assigned)]
    routed = sorted({t for _, r in refs.values() for t in r})
    canonical = {t.name: t.dtypes[0] for t in op.inputs + op.outputs}
    views = [op.view(p.soc) for p in op.products]
    tiling = TilingExpr(op, {f.name for f in tiling_fields(op)})
    probes = TilingExpr(op, tiling.fields, var="tiling")
    instances: dict[tuple, Instance] = {}
    ambiguous: set[str] = set()
    excluded: set[tuple] = set()
    for values in itertools.product(*(f.values for f in fields)):
        envs = [StaticEnv()]
        for f, v in zip(fields, values):
            envs = [m for a in envs for b in solve_key_field(f.expr, v) for m in [merge_env(a, b)] if m is not None]
        for base in envs:
            qv = values[fields.index(quant_field)] if quant_field else None
            tensors, routed_here = refs.get(qv, (set(), set()))
            for view in views:
                if qv is not None and qv not in view.quant_modes:
                    continue
                dtypes_of = {t.name: t.dtypes for t in view.inputs + view.outputs}
                relevant = [t for t in varying if _relevant(op, kind, qv, t, tensors, base)]
                for combo in _passing_combos(view, base, relevant, dtypes_of):
                    env = StaticEnv(dict(base.names), dict(base.present), dict(zip(relevant, combo)))
                    if qv is not None and kind.formulas != "unchanged" and not _formula_ok(op, kind, qv, env, view.soc):
                        continue
                    unsized = _unsized_outputs(op, qv, env, tiling)
                    if unsized:
                        excluded.add((values, view.soc, "; ".join(unsized)))
                        continue
                    # one variant per routed layout the checks leave open, told apart at run time by the
                    # tiling fields that carry the tensor's rank / first dim (see _layout_tests)
                    variants: list[tuple[tuple, tuple]] = [((), ())]
                    for t in routed:
                        if t in routed_here and env.present.get(t) is True:
                            options = _routed_layout(view, env, t)
                            if not options:
                                break
                            tests = _layout_tests(probes, t, options) if len(options) > 1 else {options[0]: ""}
                            if tests is None:
                                shapes = {"rows": "(rows, H)", "vector": "(H,)", "scalar": "(1,)"}
                                ambiguous.add(f"quant mode {qv} with "
                                              + ", ".join(f"{k}={v}" for k, v in env.dtypes.items())
                                              + f": {t} may be " + " or ".join(shapes[o] for o in options)
                                              + f" and the tiling data has no dim of {t}; the kernel reads it as "
                                              + shapes[options[0]])
                                tests = {options[0]: ""}
                            variants = [(ls + (o,), rt + ((c,) if c else ())) for ls, rt in variants
                                        for o, c in tests.items()]
                        else:
                            variants = [(ls + ("rows",), rt) for ls, rt in variants]
                    else:
                        types = tuple(cpp_type(dict(zip(relevant, combo)).get(t, canonical[t])) for t in varying)
                        checks = tuple(zip(relevant, combo))
                        for layouts, runtime in variants:
                            k = (values, types, layouts, checks, runtime)
                            inst = instances.setdefault(k, Instance(values, types, layouts, checks, runtime))
                            inst.products.add(view.soc)
    # an instance exists for the OpDef columns of its products (the dtype combinations tiling accepts, exactly):
    # the three-valued search above may keep a combination no product's tiling takes, and no binary would hold it
    columns = {soc: columns_of(op, soc) for soc in op.socs}
    for inst in instances.values():
        inst.products &= {soc for soc in inst.products
                          if any(all(col[t] == d for t, d in inst.checks) for col in columns[soc])}
    ordered = sorted((i for i in instances.values() if i.products),
                     key=lambda i: (key_value(i.key_values, fields), i.key_values, i.checks, i.types, i.layouts,
                                    i.runtime))
    return KernelPlan(fields, varying, routed, ordered, sorted(ambiguous), sorted(excluded))


def columns_of(op: Op, soc: str) -> list[dict]:
    """The OpDef columns of product ``soc``, each tensor -> dtype."""
    cols = opdef_columns(op, soc)
    return [{t: rows[j] for t, rows in cols.dtype_rows.items()}
            for j in range(len(next(iter(cols.dtype_rows.values()), ())))]


def _layout_tests(probes: TilingExpr, tensor: str, options: list[str]) -> dict[str, str] | None:
    """C++ tests over the tiling data telling the open routed layouts of ``tensor`` apart (None: no field can).

    (rows, H) against a 1-D layout needs ``rank(tensor)``, (H,) against (1,) needs ``dim(tensor, 0)``: a let
    carrying the value (``let scalesLen = if present(scalesOptional) then dim(scalesOptional, 0) else 0``).
    """
    rank = probes.probe("rank", tensor)
    dim0 = probes.probe("dim", tensor, 0)
    one_d = [o for o in options if o != "rows"]
    tests = {}
    for o in options:
        conds = []
        if "rows" in options and one_d:
            if rank is None:
                return None
            conds.append(f"{rank} {'==' if o == 'rows' else '!='} 2")
        if o != "rows" and "vector" in options and "scalar" in options:
            if dim0 is None:
                return None
            conds.append(f"{dim0} {'==' if o == 'scalar' else '!='} 1")
        tests[o] = " && ".join(conds)
    return tests


# ---- kernel kinds ------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelKind:
    """A data-movement pattern with an Ascend C kernel template (its family folder's ``kernel.cpp.j2``), and the
    names the template is written against (the aclnn names of its op family, as the numpy drivers use them)."""
    semantics: str
    row_input: str            # the per-row input the quant formula reads by name
    row_output: str           # the output every quant formula must assign
    required: dict
    context: object           # (op, common context) → template context
    # what the kernel does with the spec's quant formulas: "lowered" (QuantRowMode<q>, lowered from the spec),
    # "copied" (the rows arrive formatted by the partner op, whose formulas the spec repeats: not lowered, still
    # deciding which dtype combinations exist) or "unchanged" (rows go out as they are: every formula empty)
    formulas: str = "lowered"
    # QuantRow's outputs go into a queue's buffer the kernel EnQueues before anything reads them (the row message):
    # the lowered formula ends with no PipeBarrier<PIPE_V> (the EnQue orders its vector writes before MTE3)
    quant_queued: bool = False
    # the areas of the spec's `window` the kernel addresses (tiling data fields win_<area>, win_<area>_at), the
    # first ones of a data half in this order: each finds its area after the one before it
    window_areas: tuple[str, ...] = ()
    # whether the kernel staggers each rank's status area and data halves by the window's `rank_step` (tiling data
    # field win_rank_step): a window declaring one for a kernel that does not is an error (E201)
    rank_step: bool = False
    # a family whose kernel is plain C++: its class template's header (templates/cpp/common/op_kernel/, copied into
    # the generated tree's common/op_kernel/) and class, the tensors whose element types the class names and those
    # it addresses in GM itself (the others the spec's formulas read, and the optional ones its parts address only
    # where the op has them, come in the Traits' ExtraGm); its template then
    # renders op_kernel/<op>_gen.h, what the spec determines of the kernel (family_gen_context)
    header: str | None = None
    kernel_class: str = ""
    types: tuple[str, ...] = ()
    gm: tuple[str, ...] = ()

    @property
    def template(self) -> str:
        return template_name(self.semantics)

    def body_path(self, op: Op) -> str:
        """The op's kernel body header: op_kernel/<op>_gen.h around a C++ family kernel, else op_kernel/<op>.h."""
        return f"op_kernel/{op.snake_name}{'_gen' if self.header else ''}.h"


def _check_window(op: Op, kind: KernelKind) -> None:
    """Every product's window declares the areas the kernel addresses, first and in order (E201 otherwise)."""
    for p in op.products:
        w = op.views[p.soc].window
        if w is None:
            raise LoweringError(f"the {kind.semantics} kernel addresses HCCL window areas "
                                f"{', '.join(kind.window_areas)}, but product {p.soc} has no `window`",
                                word(op, p.span, rf"\bproduct\s+({p.soc})\b"))
        names = [a.name for a in w.areas]
        if names[:len(kind.window_areas)] != list(kind.window_areas):
            missing = [a for a in kind.window_areas if a not in names]
            what = f"lacks area(s) {', '.join(missing)}" if missing else "has them in another order"
            raise LoweringError(f"the {kind.semantics} kernel addresses HCCL window areas "
                                f"{', '.join(kind.window_areas)}, the first of a data half and in this order; the "
                                f"window of product {p.soc} {what}", w.span)
        if w.rank_step is not None and not kind.rank_step:
            raise LoweringError(f"the {kind.semantics} kernel addresses every rank's window at the same offsets; the "
                                f"window of product {p.soc} declares `rank_step {w.rank_count} = "
                                f"{to_spec(w.rank_step)};`, which it would not follow", w.span)


def _check_names(op: Op, kind: KernelKind) -> None:
    have = {
        "inputs": {t.name for t in op.inputs},
        "outputs": {t.name for t in op.outputs},
        "attrs": {a.name for a in op.attrs},
        "lets": {l.name for l in op.lets},
        "dims": set(dim_bindings(op)),
    }
    missing = [f"{k[:-1]} {n}" for k, ns in kind.required.items() for n in ns if n not in have[k]]
    if missing:
        raise LoweringError(f"the {kind.semantics} kernel needs {', '.join(missing)}",
                            word(op, op.span, rf"\bsemantics\s+({kind.semantics})\b"))
    _check_window(op, kind)
    for t in op.inputs + op.outputs:
        for d in t.dtypes:
            if d not in CPP_TYPES:
                raise LoweringError(f"dtype {d} of {t.name} has no Ascend C element type (CPP_TYPES in "
                                    f"opgen/lower/ascendc.py)", word(op, t.span, rf"\b({d})\b"), "E202")


def _present_value(f: KeyField) -> int:
    """The key-field value meaning "present" for a ``if present(T) then a else b`` field."""
    return f.expr.then.value


class ArchGuards:
    """``#if`` conditions for kernel code that exists only on some of the op's archs (``__NPU_ARCH__``).

    The kernel is compiled once per arch of the op's products (2201 for Atlas A2/A3, 3510 for Ascend 950,
    core.products); a type of the dtype table exists only on its ``archs`` (the FP8 / HiF8 / FP4 / E8M0 types
    only on 3510), so code naming one, and a quant mode only products of some archs support, is guarded: the
    real headers of the other archs do not declare those types. "" means no guard (every arch of the op)."""

    def __init__(self, op: Op, socs=None):
        # the archs of the products whose builds read the code: all the op's, or those of one kernel entry's
        self.archs = sorted({v.facts.npu_arch for s, v in op.views.items() if socs is None or s in socs})
        self.by_ctype = {dt.ascendc: set(dt.archs) for dt in DTYPES.values()}
        self.op = op

    def of_archs(self, archs) -> str:
        keep = [a for a in self.archs if a in set(archs)]
        if keep == self.archs:
            return ""
        if not keep:  # code no arch of the op compiles: keep it out of every build
            return "0"
        return "defined(__NPU_ARCH__) && (" + " || ".join(f"__NPU_ARCH__ == {a}" for a in keep) + ")"

    def _type_archs(self, ctypes) -> set[int]:
        out = set(self.archs)
        for c in ctypes:
            out &= self.by_ctype.get(c, set(self.archs))
        return out

    def of_types(self, ctypes) -> str:
        """Where every one of these Ascend C element types exists."""
        return self.of_archs(self._type_archs(ctypes))

    def of_mode(self, m) -> str:
        """Where a lowered quant mode can run: the archs of the products that take it, and of the types its code
        names."""
        archs = {v.facts.npu_arch for v in self.op.views.values() if m.value in v.quant_modes}
        named = [c for c in self.by_ctype if any(re.search(rf"\b{re.escape(c)}\b", line) for line in m.lines)]
        missing = archs - self._type_archs(named)
        if missing:  # a product takes the mode where its code cannot compile: an error, not a silent gap
            q = self.op.quant_mode(m.value)
            raise LoweringError(f"the kernel code of {self.op.quant_by} {m.value} names {', '.join(sorted(named))}, "
                                f"which __NPU_ARCH__ {', '.join(map(str, sorted(missing)))} does not have, but a "
                                f"product of that arch takes the mode", q.span if q else None)
        return self.of_archs(archs)


def dispatch_groups(plan: KernelPlan, instances) -> list[dict]:
    """The branches of an entry's Dispatch over ``instances`` (of ``plan``): key combinations that reach the same
    instantiations share their branch (the class does not specialise on fields without a parameter, e.g.
    DispatchV2's comm-algorithm template). Each: {"keys": [value per key field, ...], "instances": [...]}."""
    groups: dict[tuple, dict] = {}
    for inst in instances:
        params = tuple(v for f, v in zip(plan.fields, inst.key_values) if f.param)
        g = groups.setdefault(params, {"keys": [], "instances": []})
        if list(inst.key_values) not in g["keys"]:
            g["keys"].append(list(inst.key_values))
        ident = (inst.types, inst.layouts, inst.checks, inst.runtime, inst.key_values)
        if ident not in [(i.types, i.layouts, i.checks, i.runtime, i.key_values) for i in g["instances"]]:
            if not any((i.types, i.layouts, i.checks, i.runtime) == ident[:4] and _same_params(plan, i, inst)
                       for i in g["instances"]):
                g["instances"].append(inst)
    return list(groups.values())


def key_test(key, combos) -> str:
    """The C++ test that the entry's template tiling key parameters (``key``: key_rows) hold one of ``combos`` (a
    value per key field): its value lists (:func:`key_lists`), a field whose list holds every value it declares
    tested for none."""
    alts = []
    for lists in key_lists(combos):
        tests = [" || ".join(f"{k['param']} == {cpp_literal(v)}U" for v in vs) for k, vs in zip(key, lists)
                 if set(vs) != set(k["values"])]
        tests = [f"({x})" if " || " in x and len(tests) > 1 else x for x in tests]
        alts.append(" && ".join(tests) or "true")
    return " || ".join(f"({a})" for a in alts) if len(alts) > 1 else alts[0]


def dtype_type_macro(t) -> str:
    """The macro CANN's op build defines for a tensor's element type in the kernel of one OpDef column, beside
    ORIG_DTYPE_<NAME> (code: cmake/scripts/util/ascendc_impl_build.py add_dtype_fmt_option_single, DTYPE_MAP:
    -DDTYPE_<NAME>=<element type>, e.g. fp4x2_e2m1_t for float4_e2m1)."""
    return f"DTYPE_{t.ir_name.upper()}"


def dispatch_blocks(op: Op, guards: ArchGuards, plan: KernelPlan, instances) -> list[dict]:
    """The kernel instances of one Dispatch branch as few ``#if`` blocks, as the real entries write them: one Run
    whose element types are the column's DTYPE_<NAME> macros, compiled for every OpDef column of a product of the
    dtype lists its ``#if`` names. Instances that differ only in the dtypes they check share a block (their checked
    dtype combinations in as few value lists as :func:`key_lists` finds, the ``#if`` one alternative per list);
    each block: {"guard": the ``#if`` test ("" none), "cond": the runtime test ("true" none), "args": Run's template
    arguments}."""
    parts: dict[tuple, list] = {}
    for inst in instances:
        names = tuple(t for t, _ in inst.checks)
        fixed = tuple(ty for name, ty in zip(plan.varying, inst.types) if name not in names)
        params = tuple(cpp_literal(v) + "U" for f, v in zip(plan.fields, inst.key_values) if f.param)
        shape = (guards.of_types(inst.types), inst.runtime, inst.layouts, names, fixed, params)
        combo = tuple(d for _, d in inst.checks)
        if combo not in parts.setdefault(shape, []):
            parts[shape].append(combo)
    blocks = []
    for (arch, runtime, layouts, names, fixed, params), combos in parts.items():
        known = iter(fixed)
        types = [dtype_type_macro(op.tensor(name)) if name in names else next(known) for name in plan.varying]
        args = ", ".join(types + list(params) + [f"RowLayout::{lay.upper()}" for lay in layouts])
        alts = []
        for lists in key_lists(combos) or [()]:
            tests = [column_test(op, name, *dtypes) for name, dtypes in zip(names, lists)]
            alts.append(" && ".join(f"({x})" for x in tests) if len(tests) > 1 else (tests[0] if tests else ""))
        tests = [x for x in (arch, " || ".join(f"({a})" for a in alts) if len(alts) > 1 else alts[0]) if x]
        guard = " && ".join(f"({x})" for x in tests) if len(tests) > 1 else (tests[0] if tests else "")
        blocks.append(dict(guard=guard, cond=" && ".join(runtime) if runtime else "true", args=args))
    return blocks


def kernel_entries(op: Op) -> dict[str, tuple[str, ...]]:
    """Kernel entry file (relative to the op's directory) -> the products whose OpDef configs build it
    (ProductView.kernel_entry), in the op's product order."""
    out: dict[str, list[str]] = {}
    for p in op.products:
        out.setdefault(op.views[p.soc].kernel_entry, []).append(p.soc)
    return {path: tuple(socs) for path, socs in out.items()}


def entry_context(op: Op, ctx: dict, path: str, socs: tuple[str, ...]) -> dict:
    """The kernel context (``ctx``, :func:`common_context` and the family's) for the entry ``path`` that the
    products ``socs`` build: its Dispatch holds their instances alone, guarded for their archs alone."""
    plan = ctx["plan"]
    guards = ArchGuards(op, socs)
    depth = path.count("/") - 1  # op_kernel/<entry>.cpp: 0; op_kernel/<arch dir>/<entry>.cpp: 1
    header = ctx["body_path"]
    mine = [i for i in plan.instances if i.products & set(socs)]
    built = {i.key_values for i in mine}
    excluded: dict[tuple, set] = {}
    for values, soc, why in plan.excluded:
        if values not in built and soc in socs:
            excluded.setdefault(values, set()).add(f"{soc}: {why}")
    groups = [dict(g, blocks=dispatch_blocks(op, guards, plan, g["instances"]), test=key_test(ctx["key"], g["keys"]))
              for g in dispatch_groups(plan, mine)]
    return dict(ctx, groups=groups,
                sel=key_lists(k for g in groups for k in g["keys"]),
                excluded_keys=[dict(values=list(v), why=sorted(w)) for v, w in sorted(excluded.items())],
                key_text=lambda values: key_text(plan.fields, values),
                lists_text=lambda lists: "; ".join(f"{f.name} {', '.join(map(str, vs))}"
                                                   for f, vs in zip(plan.fields, lists)),
                decl_include="../" * depth + decl_header(op).removeprefix("op_kernel/"),
                sel_include=sel_header(path).rsplit("/", 1)[-1],
                entry_socs=list(socs), entry_op_file=op.views[socs[0]].op_file, body_header=header,
                body_include="../" * depth + header.removeprefix("op_kernel/"))


def extra_gm_refs(lines, extra) -> list[str]:
    """Lowered lines as members of a C++ family kernel: the GM tensors ``extra`` (names the class does not address
    itself) are read through its ``extraGm_`` (the Traits' ExtraGm)."""
    if not extra:
        return list(lines)
    pattern = re.compile(rf"(?<![\w.])({'|'.join(re.escape(n) for n in extra)})Gm_\b")
    return [pattern.sub(r"extraGm_.\1Gm_", line) for line in lines]


def family_gen_context(op: Op, ctx: dict, kind: KernelKind) -> dict:
    """The context of op_kernel/<op>_gen.h around a C++ family kernel (``kind.header``): the Traits the class
    template is instantiated with (one template parameter per varying dtype, key field and routed layout, as the
    class parameters of a Jinja kernel), the family's GM tensors and the others the formulas read (ExtraGm)."""
    plan = ctx["plan"]
    types = [(type_param(t), f"{type_param(t)}_") for t in plan.varying]
    types += [(type_param(t), ctx["tensor_types"][t]) for t in kind.types if t not in plan.varying]
    values = [("uint32_t", f.param) for f in plan.fields if f.param]
    values += [("RowLayout", f"LAYOUT_{snake(t).upper()}") for t in plan.routed]
    quant = next((f.param for f in plan.fields if f.role == "quant"), None)
    gms = ctx["gm_tensors"]
    extra = [g["name"] for g in gms if g["name"] not in kind.gm]
    modes = [replace(m, lines=extra_gm_refs(m.lines, extra)) for m in ctx["modes"]]
    # the names of the Traits the lowered formulas use beyond the class's own (its element types): QuantRow's
    # local aliases (the quant parameter always: it picks the mode), and those of the family's other lowered
    # members (ctx["spec_lines"])
    body = "\n".join([line for m in modes for line in m.lines] + list(ctx.get("spec_lines", ())))
    own = {type_param(t) for t in kind.types}
    used = lambda name: name not in own and (name == quant or re.search(rf"\b{name}\b", body))  # noqa: E731
    return dict(ctx, cls=kind.kernel_class, kernel_class=kind.kernel_class, kernel_header=kind.header,
                row_input_type=type_param(kind.row_input), modes=modes,
                traits_struct=f"{op.name}Traits", traits_params=[f"{p}_" for p in ctx["class_params"]],
                traits_types=types, traits_values=values, quant_param=quant or "0U",
                body_types=[n for n, _ in types if used(n)], body_values=[(c, n) for c, n in values if used(n)],
                lowered=kind.formulas == "lowered",
                family_gm=[g for g in gms if g["name"] in kind.gm],
                extra_gm=[g for g in gms if g["name"] not in kind.gm])


def common_context(op: Op, kind: KernelKind) -> dict:
    """What every kernel template needs: the plan, types, lowered quant modes, key dispatch, dtype facts."""
    _check_names(op, kind)
    if not key_params(op):
        # the entries are templates over the key's parameters, as CANN's are: a template needs one
        raise LoweringError(f"the {kind.semantics} kernel's entries are selected by CANN's template tiling key, and "
                            f"{op.name} gives it no parameter: declare its quant modes (`quant_by`) or a `tiling_key` "
                            "field", word(op, op.span, rf"\bsemantics\s+({kind.semantics})\b"))
    fields_ = tiling_fields(op)
    plan = plan_instances(op, kind)
    tensor_types = {t.name: (type_param(t.name) if t.name in plan.varying else cpp_type(t.dtypes[0]))
                    for t in op.inputs + op.outputs}
    key_present = {f.role.split(":", 1)[1]: f"({f.param} == {_present_value(f)}U)"
                   for f in plan.fields if f.role.startswith("present:")}
    quant_field = next((f for f in plan.fields if f.role == "quant"), None)
    tiling = TilingExpr(op, {f.name for f in fields_})
    if kind.formulas == "unchanged":
        formulas = [q.value for q in op.quant_modes if q.body]
        if formulas:
            q = op.quant_mode(formulas[0])
            raise LoweringError(f"the {kind.semantics} kernel sends its rows unchanged, but "
                                f"{op.quant_by} {formulas[0]} has a formula", q.body[0].span or q.span)
    lowered = kind.formulas == "lowered"
    carried = [t for t in op.outputs if lowered and t.name != kind.row_output and
               any(s.kind == "assign" and s.name == t.name for q in op.quant_modes for s in q.body)]
    out_views = {kind.row_output: f"{kind.row_output}Row", **{t.name: f"{t.name}Row" for t in carried}}
    out_counts = {kind.row_output: "hLen", **{t.name: f"{t.name}Width_" for t in carried}}
    types = KernelTypes(
        equal_types=_equal_types(op, tensor_types),
        tensor_types=tensor_types,
        tensor_dtypes={t.name: t.dtypes for t in op.inputs + op.outputs},
        row_input=kind.row_input,
        key_present=key_present,
        quant_value=quant_field.param if quant_field else None,
        out_views=out_views,
        out_counts=out_counts,
        routed_layout={t: f"LAYOUT_{snake(t).upper()}" for t in plan.routed},
        dims=frozenset(dim_bindings(op)),
    )
    modes = [QuantLowering(op, types, queued=kind.quant_queued).lower_mode(q) for q in op.quant_modes] \
        if lowered else []


    qparam = quant_field.param if quant_field else None
    # a table of the modes' slots (opgen_kernel_helpers.h PerKey), 1 for a key value of no mode
    slots_expr = "1U" if not modes else \
        f"PerKey({qparam}, {{{', '.join(f'{cpp_literal(m.value)}U' for m in modes)}}}, " \
        f"{{{', '.join(f'{cpp_literal(max(1, m.slots))}U' for m in modes)}}}, 1U)"
    carries = {}
    for t in carried:
        terms = [f"({qparam} == {cpp_literal(m.value)}U && {m.assigns[t.name]})" if m.assigns[t.name] != "true"
                 else f"({qparam} == {cpp_literal(m.value)}U)" for m in modes if t.name in m.assigns]
        carries[t.name] = " || ".join(terms) if terms else "false"

    def static_test(e) -> tuple[str, bool]:
        """A shape test as C++: compile-time over the key parameters where it can be, else over the tiling."""
        if isinstance(e, Binary) and e.op in ("and", "or"):
            a, sa = static_test(e.lhs)
            b, sb = static_test(e.rhs)
            return f"({a} {'&&' if e.op == 'and' else '||'} {b})", sa and sb
        if isinstance(e, Unary) and e.op == "not":
            a, sa = static_test(e.operand)
            return f"(!{a})", sa
        if isinstance(e, Call) and e.fn == "present" and e.args[0].id in key_present:
            return key_present[e.args[0].id], True
        if isinstance(e, Binary) and e.op in ("==", "!=") and isinstance(e.lhs, Name) and e.lhs.id == op.quant_by \
                and quant_field is not None:
            rhs = f"{cpp_literal(e.rhs.value)}U" if isinstance(e.rhs, Int) and e.rhs.value >= 0 else \
                f"static_cast<uint32_t>({tiling(e.rhs)})"
            return f"({quant_field.param} {e.op} {rhs})", True
        return tiling(e), False

    def width_lines(t, target: str) -> list[str]:
        """Row width of a carried output: an if-constexpr chain over the key parameters (else runtime ifs)."""
        def leaf(alt, pad: str) -> list[str]:
            try:
                dims = [f"({tiling(d)})" for d in alt.dims[1:]] or ["1"]
                return [f"{pad}{target} = static_cast<uint32_t>({' * '.join(dims)});"]
            except LoweringError as err:
                return [f"{pad}static_assert({quant_field.param} != {quant_field.param}, "
                        f"{cpp_literal(str(err))});  // never dispatched (see Dispatch)"]

        def chain(alt, pad: str) -> list[str]:
            if isinstance(alt, ShapeTuple):
                return leaf(alt, pad)
            lines, first = [], True
            while isinstance(alt, ShapeCond):
                test, static = static_test(alt.test)
                kw = "if" if first else "} else if"
                lines.append(f"{pad}{kw} {'constexpr ' if static else ''}({test}) {{")
                lines += chain(alt.then, pad + "    ")
                alt, first = alt.orelse, False
            return lines + [f"{pad}}} else {{"] + chain(alt, pad + "    ") + [f"{pad}}}"]

        return chain(t.shape.alts[0], "")

    def has_input(name: str) -> str:
        t = op.tensor(name)
        if t is None:
            return "false"
        return f"(tiling.has_{name} != 0U)" if has_field(op, name) else "true"

    guards = ArchGuards(op)
    mode_guards = {m.value: guards.of_mode(m) for m in modes}
    comm = [g.domain for g in op.comm_groups]
    mc2_context = _mc2_context(op)
    return dict(
        op=op,
        ns=f"{op.name}Impl",
        tpl=f"{snake(op.name).upper()}_TPL",
        cls=op.name,
        struct=tiling_struct_name(op),
        fields=fields_,
        plan=plan,
        tensor_types=tensor_types,
        mc2_context=mc2_context,
        modes=modes,
        carried=carried,
        width_lines={t.name: width_lines(t, f"{t.name}Width_") for t in carried},
        class_params=([f"typename {type_param(t)}" for t in plan.varying] +
                      [f"uint32_t {f.param}" for f in plan.fields if f.param] +
                      [f"RowLayout LAYOUT_{snake(t).upper()}" for t in plan.routed]),
        class_args=([type_param(t) for t in plan.varying] + [f.param for f in plan.fields if f.param] +
                    [f"LAYOUT_{snake(t).upper()}" for t in plan.routed]),
        key=key_rows(op),
        slots_expr=slots_expr,
        carries=carries,
        ep_group=comm.index("ep") if "ep" in comm else 0,
        tp_group=comm.index("tp") if "tp" in comm else 1,
        ep_cc=hccl_cc_field(comm.index("ep") if "ep" in comm else 0),
        workspace_per_core_pair=WORKSPACE_PER_CORE_PAIR,
        # the user workspace as the host tiling lays it out, for the BatchWrite items (templates/cpp/op_kernel/
        # _batch_write.j2): the part per pair of cores, the family's part per core
        bw=dict(per_pair=WORKSPACE_PER_CORE_PAIR, core=core_workspace(op), item_bytes=BATCH_WRITE_ITEM_BYTES,
                chunk=BATCH_WRITE_CHUNK),
        tp_cc=hccl_cc_field(comm.index("tp") if "tp" in comm else 1),
        has_input=has_input,
        has_tensor=lambda n: op.tensor(n) is not None,
        has_attr=lambda n: op.attr(n) is not None,
        column_macros=column_macros(op, plan),
        mode_guards=mode_guards,
        snake=snake,
        row_input=kind.row_input,
        row_output=kind.row_output,
        fixed_row_types=[(type_param(t), tensor_types[t]) for t in dict.fromkeys((kind.row_input, kind.row_output))
                         if op.tensor(t) is not None and t not in plan.varying],
        quant_types=types,
        body_path=kind.body_path(op),
    )


def dtype_macro(t) -> str:
    """The macro CANN's op build defines for a tensor's dtype id in the kernel of one OpDef column (its IR name in
    capitals: ORIG_DTYPE_EXPAND_X), beside DTYPE_<NAME>, the element type."""
    return f"ORIG_DTYPE_{t.ir_name.upper()}"


def column_test(op: Op, name: str, *dtypes: str) -> str:
    """``#if`` test that the column being compiled gives tensor ``name`` one of ``dtypes``; an optional input's
    macro is tested for being defined first (an undefined macro is 0 in ``#if``, and DT_FLOAT is 0)."""
    t = op.tensor(name)
    tests = [f"{dtype_macro(t)} == {DTYPES[d].ge_enum}" for d in dtypes]
    test = tests[0] if len(tests) == 1 else " || ".join(f"({x})" for x in tests)
    if not t.optional:
        return test
    return f"defined({dtype_macro(t)}) && {test if len(tests) == 1 else f'({test})'}"


def column_macros(op: Op, plan: KernelPlan) -> list[tuple[str, str]]:
    """(tensor, macro) of the dtype macros the kernel's instance selection reads for tensors every call has: a
    build without them (not compiled for one OpDef column) stops with #error instead of compiling no instance, and
    a launch whose tiling data names other dtypes traps."""
    names = dict.fromkeys(t for inst in plan.instances for t, _ in inst.checks)
    irs = [t.ir_name for t in op.inputs + op.outputs]
    if len(set(irs)) != len(irs):
        raise LoweringError(f"{op.name}: two tensors share an IR name, so their dtype macros would clash",
                            op.span, "E201")
    return [(n, dtype_macro(op.tensor(n))) for n in names if not op.tensor(n).optional]


def _equal_types(op: Op, tensor_types: dict) -> frozenset:
    """Pairs of tensor types that an unconditional ``dtype(a) == dtype(b)`` check forces equal on every product."""
    per_view = []
    for view in (op.view(p.soc) for p in op.products):
        pairs = set()
        for c in view.checks:
            e = c.expr
            if not c.conditions and isinstance(e, Binary) and e.op == "==" and all(
                    isinstance(x, Call) and x.fn == "dtype" and isinstance(x.args[0], Name) for x in (e.lhs, e.rhs)):
                pairs.add(frozenset((tensor_types[e.lhs.args[0].id], tensor_types[e.rhs.args[0].id])))
        per_view.append(pairs)
    return frozenset(set.intersection(*per_view)) if per_view else frozenset()


def _same_params(plan: KernelPlan, a: Instance, b: Instance) -> bool:
    return all(x == y for f, x, y in zip(plan.fields, a.key_values, b.key_values) if f.param)


def gm_tensors(op: Op, names, byte_rows: set) -> list[dict]:
    return [dict(name=t, ctype="uint8_t" if t in byte_rows else cpp_type(op.tensor(t).dtypes[0]))
            for t in dict.fromkeys(names) if op.tensor(t) is not None]


def routed_and_rows(op: Op) -> set:
    return {n.args[0].id for q in op.quant_modes for s in q.body for x in (s.expr,) + s.conditions
            for n in walk(x) if isinstance(n, Call) and n.fn in ("routed", "row")}


def rank_expr(op: Op, tensor: str) -> str:
    """The rank of an optional input as a C++ ``uint32_t`` over the tiling data (``tiling.``, in Init).

    A literal when every declared shape alternative has one rank; else the let carrying ``rank(T)`` (see
    :meth:`TilingExpr.probe`), without which the kernel cannot tell a (BS,) mask from a (BS, K) one.
    """
    t = op.tensor(tensor)
    if t is None or t.shape is None:
        return "1U"
    ranks = {len(leaf.dims) for alt in t.shape.alts for leaf in _shape_leaves(alt, StaticEnv())}
    if len(ranks) == 1:
        return f"{cpp_literal(ranks.pop())}U"
    probe = TilingExpr(op, {f.name for f in tiling_fields(op)}, var="tiling").probe("rank", tensor)
    if probe is None:
        raise LoweringError(f"{tensor} may have rank {' or '.join(str(r) for r in sorted(ranks))} and no "
                            f"let carries rank({tensor}) into the tiling data (e.g. `let maskRank = if "
                            f"present({tensor}) then rank({tensor}) else 0;`)",
                            word(op, t.span, rf"\b({tensor})\b"))
    return f"static_cast<uint32_t>({probe})"


def a2_expr(op: Op) -> str:
    """Whether the kernel runs with Atlas A2's assistInfoForCombine layout (the ``expand_idx`` assist_layout fact):
    the op-level let ``isA2`` that the products with that layout set (a literal false when the op has none)."""
    a2 = [p.soc for p in op.products if op.views[p.soc].facts.assist_layout == EXPAND_IDX]
    if not a2:
        return "false"
    if not any(l.name == "isA2" for l in op.lets):
        raise LoweringError(f"product {a2[0]} needs the op-level let isA2 (false, overridden to true "
                            f"in {a2[0]}) to pick Atlas A2's assistInfoForCombine layout",
                            word(op, op.product(a2[0]).span, rf"\b({a2[0]})\b"))
    for p in op.products:
        view = op.views[p.soc]
        let = next(l for l in view.lets if l.name == "isA2")
        want = view.facts.assist_layout == EXPAND_IDX
        if isinstance(let.expr, Bool) and let.expr.value != want:
            raise LoweringError(f"product {p.soc} has the {view.facts.assist_layout} assistInfo layout, "
                                f"so its let isA2 must be {str(want).lower()}", let.expr.span or let.span)
    return "(tiling.isA2 != 0)"


def block_flags_expr(op: Op) -> str:
    """Whether the kernel packs its window rows into 512-byte blocks of 480 data bytes and a flag (the op-level let
    ``blockFlags``, which the products with the Ascend 950 MTE combine's slots set): the tiling test, or a literal
    false when the op has no such let."""
    return "(tiling.blockFlags != 0)" if any(l.name == "blockFlags" for l in op.lets) else "false"


# the combine reduce's calc slots: acc, term, aux, scratch. A special expert's formula uses slot 1 (term) and up;
# the kernel takes more slots only in calls where such a special expert is in use (UB: 4 rows of H = 10240 on A2).
REDUCE_SLOTS = 4


def _dtype_twin(op: Op, t: str, varying: list[str], tensor_types: dict) -> str:
    """The C++ type of input ``t`` in a special expert's formula: its own when it has one dtype or varies, else the
    type of the varying tensor every product's checks hold it equal to (oriXOptional: dtype of expandX)."""
    tensor = op.tensor(t)
    if t in varying or len(tensor.dtypes) == 1:
        return tensor_types[t]
    for v in varying:
        eq = Binary("==", Call("dtype", (Name(t),)), Call("dtype", (Name(v),)))
        if all(any(c.expr == eq for c in view.checks) for view in op.views.values()):
            return tensor_types[v]
    raise LoweringError(f"a special expert's formula reads {t}, whose dtype ({' | '.join(tensor.dtypes)}) the kernel "
                        f"does not specialise on and no check ties to one it does", tensor.span, "E201")


def special_reads(op: Op) -> set:
    """The inputs the special experts' formulas read (by name, or through row() / routed())."""
    names = {n for s in op.specials for n in s.reads()}
    return {t for t in names if op.tensor(t) is not None and op.tensor(t).role == "input"}


def _mc2_context(op: Op) -> str | None:
    """The input carrying the EP domain's MC2 context (`comm ep CONTEXT;`), or None. The kernels read every rank's
    window from it and keep the status area at the window's start, as the real context holder does: a product
    sending across servers through HCCL BatchWrite, or keeping its status in windowsExp (neither of which the
    context provides), cannot take it (E201)."""
    g = op.context_group
    if g is None:
        return None
    at = word(op, op.span, rf"\bcomm\s+{g.domain}\s+({g.attr})\b")
    if g.domain != "ep":
        raise LoweringError(f"the kernels take only the EP domain's windows from an MC2 context, not {g.domain}'s", at)
    for p in op.products:
        v = op.views[p.soc]
        if v.facts.ranks_per_server:
            raise LoweringError(f"product {p.soc} sends across servers through HCCL BatchWrite, which an MC2 context "
                                f"({g.attr}) provides no HCCL client for", at)
        if v.window is not None and not v.window.state_in_data:
            raise LoweringError(f"product {p.soc} keeps the status area in {v.window.state_in}; an MC2 context lists "
                                "windowsIn only (state windowsIn at_start)", v.window.span or at)
    return g.attr


def _check_special_shapes(op: Op, s: SpecialExpert) -> None:
    """The kernel reads a special expert's inputs as H-element rows: ``routed(T)`` the row of the special expert
    (its index in its kind), a bare input the token's row; a tensor declared another shape would be read past its
    end (CombineV3's const_expert_alpha_1 is (const_expert_num,), CombineV2's (constExpertNum, H)): E201."""
    reduced = _only_dims(op.tensor(FAMILIES[op.semantics].reduced or ""))  # one row per token: (BS, H)
    token_dim = reduced[0] if reduced else None
    for st in s.body or ():
        for e in (st.expr, *st.conditions):
            routed_args = {id(n.args[0]) for n in walk(e) if isinstance(n, Call) and n.fn == "routed" and n.args}
            for n in walk(e):
                if id(n) in routed_args:
                    continue
                if isinstance(n, Call) and n.fn == "routed" and n.args and isinstance(n.args[0], Name):
                    t, want, how = n.args[0].id, (Name(s.count), Name("H")), f"routed({n.args[0].id})"
                elif isinstance(n, Name) and op.tensor(n.id) is not None and op.tensor(n.id).role == "input":
                    t, want, how = n.id, (token_dim, Name("H")), n.id
                else:
                    continue
                got = _only_dims(op.tensor(t))
                if got != want:
                    shown = shape_text(op.tensor(t).shape) if op.tensor(t).shape is not None else "no shape"
                    raise LoweringError(
                        f"special {s.name} reads {how}, which the {op.semantics} kernel loads as one row of H "
                        f"elements per {'token' if how == t else s.name + ' expert'}: shape "
                        f"({to_spec(want[0]) if want[0] is not None else 'BS'}, H); {t} is declared {shown}, so "
                        f"the kernel would read past it", word(op, n.span or s.span, rf"\b({t})\b"))


def _only_dims(t) -> tuple | None:
    """The dims of a tensor declared one exact shape, else None."""
    if t is None or t.shape is None or len(t.shape.alts) != 1 or not isinstance(t.shape.alts[0], ShapeTuple):
        return None
    alt = t.shape.alts[0]
    return None if any(alt.at_least) else alt.dims


def special_terms(op: Op, ctx: dict) -> list[dict]:
    """Each special expert's formula as a branch of ``SpecialTerm(tokenIdx, expert, term)``: the fp32 row it
    adds (``expertRow``: its index in its kind), lowered like a quant formula into calc slots 1 and up (slot 0 is the
    reduce's accumulator); ``Moe = 0`` adds nothing and has no body."""
    types = ctx["quant_types"]
    tensor_types = dict(types.tensor_types)
    for t in special_reads(op):
        tensor_types[t] = _dtype_twin(op, t, ctx["plan"].varying, types.tensor_types)
    tensor_types[SpecialExpert.TARGET] = "float"
    stypes = replace(types, tensor_types=tensor_types, row_input="", out_views={SpecialExpert.TARGET: "term"},
                     out_counts={SpecialExpert.TARGET: "hLen"})
    out = []
    for i, s in enumerate(op.specials):
        _check_special_shapes(op, s)
        if s.adds_nothing:
            out.append(dict(index=i, special=s, zero=True, lines=[], slots=0))
            continue
        m = QuantLowering(op, stypes, slot_base=1, out_slot=1).lower_mode(
            QuantMode(0, s.name, s.doc, s.body, span=s.span))
        out.append(dict(index=i, special=s, zero=False, lines=m.lines, slots=m.slots))
    return out


# The receiving side of a split quant mode in the combine reduce: the message is loaded into calc slot 1 (term), the
# formula's temporaries come from slot 2 up (aux and scratch are free while a returned row is loaded), and its
# output goes into term last, once the message is read (a given row is copied out first, QuantLowering.assign);
# slot 0 holds the accumulator. No buffer beside the slots: 5 slots of H = 8192 fit Atlas A3's UB.
WIRE_FIRST_SLOT = 2


def receive_modes(op: Op, ctx: dict) -> list[dict]:
    """Each split quant mode's part after its ``send`` as a branch of ``ReceiveRow(msg, term)``: the sent
    values are views of the message (``msg``, in the order and at the offsets the sender wrote them), the row the
    formula assigns goes into ``term`` as fp32 (the reduce adds fp32 rows; the formula's last cast to the output
    dtype stays, so the value is the one the unsplit formula gives)."""
    types = ctx["quant_types"]
    out = []
    for m in ctx["modes"]:
        if not m.wire:
            continue
        q = op.quant_mode(m.value)
        rtypes = replace(types, row_input="", out_views={o: "term" for o in q.outputs},
                         out_counts={o: "hLen" for o in q.outputs},
                         tensor_types={**types.tensor_types, **{o: "float" for o in q.outputs}})
        given = {w.name: Val("row", w.ctype, w.ref, w.count, w.block) for w in m.wire}
        recv = QuantLowering(op, rtypes, slot_base=WIRE_FIRST_SLOT, out_slot=1, given=given,
                             label=f"quant mode {q.value} (after its `send`)").lower_mode(
            QuantMode(q.value, q.name, q.doc, q.receiver, span=q.span))
        offsets = wire_offsets(m.wire)
        out.append(dict(value=m.value, wire=[dict(part=w, at=at) for w, at in zip(m.wire, offsets)],
                        msg_bytes=offsets[-1], lines=recv.lines, slots=recv.slots,
                        guard=ctx["mode_guards"][m.value]))
    return out


def post_reads(op: Op) -> set:
    """The inputs the post stage reads (by name, or through row() / routed())."""
    if op.post is None:
        return set()
    names = {n.args[0].id if isinstance(n, Call) and n.args and isinstance(n.args[0], Name) else getattr(n, "id", "")
             for st in op.post.body for x in (st.expr,) + st.conditions for n in walk(x)}
    return {t for t in names if op.tensor(t) is not None and op.tensor(t).role == "input"}


def _row_count(op: Op, t) -> str:
    """C++ element count of one token row of tensor ``t`` (its dims past the first: literals and H)."""
    if t.shape is None or len(t.shape.alts) != 1 or not isinstance(t.shape.alts[0], ShapeTuple):
        raise LoweringError(f"the post stage writes {t.name}, whose shape is not one fixed tuple", t.span, "E201")
    parts = []
    for d in t.shape.alts[0].dims[1:]:
        if isinstance(d, Int):
            parts.append(f"{d.value}U")
        elif isinstance(d, Name) and d.id == "H":
            parts.append("hLen")
        else:
            raise LoweringError(f"the post stage writes {t.name}, whose row dim {d!r} is neither a literal nor H "
                                f"(the kernel's row length)", t.span, "E201")
    return " * ".join(parts) if parts else "1U"


def _vector_layout(op: Op, t: str, at) -> str:
    """The row layout of a tensor a post stage reads with routed() (the call ``at``): one (H,) row or one (1,)
    value for every token."""
    tensor = op.tensor(t)
    dims = tensor.shape.alts[0].dims if tensor.shape is not None and len(tensor.shape.alts) == 1 else ()
    if len(dims) == 1 and isinstance(dims[0], Name) and dims[0].id == "H":
        return "RowLayout::VECTOR"
    if len(dims) == 1 and isinstance(dims[0], Int) and dims[0].value == 1:
        return "RowLayout::SCALAR"
    raise LoweringError(f"the post stage reads routed({t}); after the reduce there is no expert, so {t} must be "
                        f"one (H,) row or one (1,) value", at.span or tensor.span, "E201")


def post_stage(op: Op, ctx: dict) -> dict | None:
    """The spec's `post` stage as the body of ``PostStage(tokenIdx, reduced)``: the formulas over the token's fp32
    reduced row (calc slot 0, the accumulator), lowered like a quant formula into calc slots 1 and up; each output
    it assigns is stored to its GM row as soon as it is computed."""
    post = op.post
    if post is None:
        return None
    types = ctx["quant_types"]
    tensor_types = dict(types.tensor_types)
    for t in post_reads(op):
        tensor_types[t] = _dtype_twin(op, t, ctx["plan"].varying, types.tensor_types)
    counts = {}
    for name in post.assigned:
        t = op.tensor(name)
        tensor_types[name] = _dtype_twin(op, name, ctx["plan"].varying, types.tensor_types)
        counts[name] = _row_count(op, t)
    layouts = {n.args[0].id: _vector_layout(op, n.args[0].id, n) for st in post.body for n in walk(st.expr)
               if isinstance(n, Call) and n.fn == "routed"}
    ptypes = replace(types, tensor_types=tensor_types, row_input="", out_views={n: n for n in post.assigned},
                     out_counts=counts, routed_layout=layouts)
    # the rows no token changes (routed() of an (H,) / (1,) tensor, cast to fp32 and combined with scalars): computed
    # once per core into rows of their own (InvariantRow(i)) by PostInvariants(), read by every token's PostStage
    hoisted = _invariant_rows(op, post)
    names = [f"invariant{i}" for i in range(len(hoisted))]
    itypes = replace(ptypes, tensor_types={**tensor_types, **{n: "float" for n in names}},
                     out_views={n: f"InvariantRow({i}U)" for i, n in enumerate(names)},
                     out_counts={n: "hLen" for n in names})
    inv = QuantLowering(op, itypes, label=f"post {post.name} (the rows every token shares)").lower_mode(
        QuantMode(0, "post invariants", post.doc, tuple(QuantStmt("assign", n, e, span=e.span)
                                                       for n, e in zip(names, hoisted)), span=post.span))
    reduced = Val("row", "float", "reduced", "hLen", None, (0,), False)
    m = PostLowering(op, ptypes, slot_base=1, given={post.name: reduced}, label=f"post {post.name}",
                     invariants={to_spec(e): f"InvariantRow({i}U)" for i, e in enumerate(hoisted)}).lower_mode(
        QuantMode(0, "post", post.doc, post.body, span=post.span))
    return dict(name=post.name, doc=post.doc, lines=m.lines, slots=max(m.slots, inv.slots), outputs=post.assigned,
                invariants=len(hoisted), invariant_lines=inv.lines if hoisted else [])


def _invariant_rows(op: Op, post) -> list:
    """The largest fp32 row subexpressions of a post stage that no token changes, each once (by its text): those
    reading a tensor only through routed() (one (H,) row or (1,) value for every token after the reduce), besides
    attributes, lets, dims and literals; e.g. CombineAddRmsNorm's cast(routed(gamma), FLOAT32)."""
    local = {post.name} | {st.name for st in post.body if st.kind == "let"}

    def fixed(e) -> bool:
        if isinstance(e, Call) and e.fn == "routed":
            return True
        if isinstance(e, Call) and e.fn == "row":
            return False
        if isinstance(e, Name):
            return e.id not in local and op.tensor(e.id) is None
        return all(fixed(c) for c in children(e))

    def fp32_row(e) -> bool:
        if isinstance(e, Call) and e.fn == "routed":
            return True  # LoadRowF32
        if isinstance(e, Call) and e.fn == "cast":
            return isinstance(e.args[1], Name) and e.args[1].id == "FLOAT32" and fp32_row(e.args[0])
        if isinstance(e, Binary) and e.op in ("+", "-", "*", "/"):
            return any(fp32_row(c) for c in (e.lhs, e.rhs))
        return False

    found: dict[str, object] = {}

    def visit(e) -> None:
        if fixed(e) and fp32_row(e):
            found.setdefault(to_spec(e), e)
            return
        for c in children(e):
            visit(c)

    for st in post.body:
        visit(st.expr)
    return list(found.values())


# The Setup/Teardown family's kernels share one window layout (opgen_family_window.h) and the names it is
# written against.
SETUP_TEARDOWN_ATTRS = ("epWorldSize", "epRankId", "moeExpertNum", "sharedExpertNum", "sharedExpertRankNum")
SETUP_TEARDOWN_LETS = ("localMoeExpertNum", "localExpertNum", "maxBs")
SETUP_TEARDOWN_AREAS = ("combine", "dispatch")  # the family's window: the combine blocks, then the dispatch blocks



