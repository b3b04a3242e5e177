"""Product resolution: inheritance, and the ordered list of checks per product.

Declarations imply checks (a required input must not be null, a dtype must
be in its list, an attribute in its domain, an unsupported attribute must
keep its default...).  They are synthesised here as ordinary ``Check``
expressions so that every validator (numpy reference, C++ check core, docs)
lowers one uniform list and cannot drift from the others.
"""
from __future__ import annotations

from opgen.lang.expr import Binary, Bool, Call, Cond, Expr, Float, InRange, InSet, Int, Name, Str, Unary, to_spec
from opgen.model.decl import (Attr, Buffer, Check, Constraint, Domain, Let, Op, Product, ProductView, ShapeCond,
                    ShapeTuple, Tensor, Window, window_lets)
from opgen.core import builtins as B
from opgen.core.families import FAMILIES
from opgen.core.products import facts_for
from opgen.model.concrete import shape_detail
from opgen.model.inline import substitute
from opgen.model.spec_text import domain_expected, range_text, shape_expected

_UNITS = {"B": None, "": None, "KB": "KB", "MB": "MB"}


def dim_bindings(op: Op) -> dict[str, tuple[str, int]]:
    """Bare dim names bound by required inputs with one unconditional shape, left to right.

    ``input x shape (BS, H)`` binds BS = dim(x, 0) and H = dim(x, 1) unless those
    names are declared otherwise; later mentions become shape checks.
    """
    declared = {t.name for t in op.inputs + op.outputs} | {a.name for a in op.attrs} | \
        {l.name for l in op.lets} | {e.name for e in op.envs} | set(B.CONSTANTS)
    bound: dict[str, tuple[str, int]] = {}
    for t in op.inputs:
        if t.optional or t.shape is None or len(t.shape.alts) != 1 or not isinstance(t.shape.alts[0], ShapeTuple):
            continue
        for axis, d in enumerate(t.shape.alts[0].dims):
            if t.shape.alts[0].is_at_least(axis):
                continue  # a capacity: the tensor's dim is not the name's value
            if isinstance(d, Name) and d.id not in declared and d.id not in bound:
                bound[d.id] = (t.name, axis)
    return bound


def _chain(op: Op, soc: str) -> list[Product]:
    out: list[Product] = []
    cur = op.product(soc)
    while cur is not None and cur not in out:
        out.append(cur)
        cur = op.product(cur.extends) if cur.extends else None
    return out


def _nearest(chain: list[Product], field: str, name: str):
    for p in chain:
        for key, value in getattr(p, field):
            if key == name:
                return value
    return None


def _merge_labelled(items: list) -> list:
    """Later items with a label replace earlier ones with the same label (product overrides)."""
    out: list = []
    for it in items:
        if it.label is not None:
            out = [o for o in out if o.label != it.label]
        out.append(it)
    return out


def attach_views(op: Op) -> Op:
    """Resolve every product of ``op`` once and attach the views to it (``Op.views``); returns ``op``.

    The op stays frozen for every field that takes part in equality; the views are derived data, stored
    beside the fields the way ``functools.cached_property`` stores its value."""
    op.__dict__["_views"] = {p.soc: resolve_product(op, p.soc) for p in op.products}
    return op


def resolve_product(op: Op, soc: str) -> ProductView:
    chain = _chain(op, soc)
    if not chain:
        raise KeyError(f"op {op.name} does not support product {soc}")
    product = chain[0]
    ancestry = list(reversed(chain))  # farthest ancestor first

    ignored_attrs = {n for p in chain for n in p.ignored_attrs}
    attrs = tuple(
        Attr(a.name, a.type, a.optional, a.default, _nearest(chain, "attr_domains", a.name) or a.domain, a.length,
             a.doc, a.ir_name, a.name in ignored_attrs, a.omitted, span=a.span) for a in op.attrs)
    inputs = tuple(_override_tensor(t, chain, "input") for t in op.inputs)
    outputs = tuple(_override_tensor(t, chain, "output") for t in op.outputs)
    unsupported_attrs = tuple(dict.fromkeys(n for p in ancestry for n in p.unsupported_attrs))
    unsupported_inputs = tuple(dict.fromkeys(n for p in ancestry for n in p.unsupported_inputs))
    unspecified = tuple(dict.fromkeys(n for p in ancestry for n in p.unspecified_outputs))
    why = {n: r for p in ancestry for n, r in p.unspecified_why if r}  # ancestry is farthest first: nearest wins
    lets: dict[str, Let] = {l.name: l for l in op.lets}
    for p in ancestry:
        for l in p.lets:
            lets[l.name] = l
    quant = next((p.quant_modes for p in chain if p.quant_modes is not None), None)
    if quant is None:
        quant = tuple(q.value for q in op.quant_modes)
    pairs = next((p.pairs_with for p in chain if p.pairs_with), op.pairs_with)
    constraints = _merge_labelled(list(op.constraints) + [c for p in ancestry for c in p.constraints])
    buffers = _merge_labelled(list(op.buffers) + [b for p in ancestry for b in p.buffers])
    view_checks = _implicit_checks(op, product, inputs, outputs, attrs, unsupported_attrs, unsupported_inputs, quant)
    view_checks += _declared_checks(constraints, chain, op)
    view_checks += _buffer_checks(op, buffers)
    window = next((p.window for p in chain if p.window is not None), op.window)
    if window is not None:
        for l in layout_lets(op, window):
            lets[l.name] = l
    view_checks += _window_checks(op, window)
    view_checks += _kernel_checks(op, chain, attrs)
    view_checks += _kernel_table_checks(op, chain, {a.name for a in attrs} | set(lets) | set(dim_bindings(op)))
    tolerances = tuple(t for p in chain for t in p.tolerances) + op.tolerances
    return ProductView(op, product, tuple(p.soc for p in chain), inputs, outputs, attrs, unsupported_attrs,
                       unsupported_inputs, unspecified, tuple(lets.values()), tuple(quant), pairs, product.notes,
                       tuple(_unique_ids(view_checks)), tuple(buffers), tolerances, window,
                       tuple((n, why[n]) for n in unspecified if n in why))


def _override_tensor(t: Tensor, chain: list[Product], role: str) -> Tensor:
    dtypes = _nearest(chain, f"{role}_dtypes", t.name) or t.dtypes
    shape = _nearest(chain, f"{role}_shapes", t.name) or t.shape
    empty_absent = t.empty_absent or any(t.name in p.empty_absent_inputs for p in chain)
    ignored = any(t.name in p.ignored_inputs for p in chain)
    if dtypes is t.dtypes and shape is t.shape and empty_absent == t.empty_absent and not ignored:
        return t
    return Tensor(t.name, t.role, t.optional, tuple(dtypes), t.formats, shape, t.doc, t.ir_name, t.dtype_rule,
                  empty_absent, ignored, t.noncontiguous, span=t.span)


# ---- implicit checks -------------------------------------------------------------------

def _present(name: str) -> Expr:
    return Call("present", (Name(name),))


def _implicit_checks(op: Op, product: Product, inputs, outputs, attrs, unsupported_attrs, unsupported_inputs,
                     quant) -> list[Check]:
    checks: list[Check] = []
    where = f"on {product.display}"

    def add(kind: str, param: str, expr: Expr, cls: str, message: str, conds=(), value=None, span=None,
            detail=None):
        checks.append(Check(f"{kind}.{param}", tuple(conds), expr, cls, param, value, message, "implicit",
                            span=span, detail=detail))

    for t in inputs:
        if not t.optional:
            # an empty_absent input's null check asks for the pointer (passed), not for contents (present)
            test = Call("passed", (Name(t.name),)) if t.empty_absent else _present(t.name)
            add("null", t.name, test, "nullptr", "a non-null tensor", span=t.span)
    for name in unsupported_inputs:
        add("unsupported", name, Unary("not", _present(name)), "tiling", f"null (it is not supported {where})",
            span=product.span)
    def if_present(t: Tensor) -> tuple:
        """An input's own checks apply when it is there: always for a required one, unless empty means absent."""
        return (_present(t.name),) if t.role == "input" and (t.optional or t.empty_absent) else ()

    read = [t for t in inputs if not t.ignored]  # an ignored input is never read, so nothing of it is checked
    for t in read + list(outputs):
        conds = if_present(t)
        add("dtype", t.name, InSet(Call("dtype", (Name(t.name),)), tuple(Name(d) for d in t.dtypes)), "invalid",
            "one of " + ", ".join(t.dtypes), conds, Call("dtype", (Name(t.name),)), span=t.span)
    # Formats: the documents' 数据格式 column (ND) decides, as a tiling check; the real tilings (mirror-cann/
    # ops-transformer mc2/moe_distribute_*_v2/op_host/op_tiling/*_tiling.cpp, CheckTensorFormat) reject FRACTAL_NZ
    # (GetPrimaryFormat of the storage format) with a tiling failure and let other formats through, of the inputs
    # and of the outputs alike (code: moe_distribute_dispatch_v2_tiling.cpp, moe_distribute_combine_v2_tiling.cpp,
    # moe_distribute_combine_setup_tiling_base.cpp, moe_distribute_combine_teardown_tiling_base.cpp: expandX,
    # assistInfoForCombine, ..., x, quantExpandXOut, commCmdInfoOut). An output's format is always known: tiling
    # and aclnn read its desc; the reference takes it from out_formats (ND when not given, as an array is ND).
    for t in read + list(outputs):
        conds = if_present(t)
        add("format", t.name, InSet(Call("format", (Name(t.name),)), tuple(Str(f) for f in t.formats)), "tiling",
            "one of " + ", ".join(t.formats), conds, Call("format", (Name(t.name),)), span=t.span)
    bound = dim_bindings(op)
    for t in read:
        pred = _shape_predicate(t, bound)
        if pred is not None:
            conds = if_present(t)
            add("shape", t.name, pred, "tiling", f"shape {shape_expected(t.shape)}", conds,
                Call("shape", (Name(t.name),)), span=t.span, detail=shape_detail(op, t, bound))
    # Outputs: the kernel writes the declared shape, so a smaller buffer is refused (the real tilings check the
    # output dims on A3/950, ">=" for capacities; mirror-cann/ops-transformer moe_distribute_dispatch_v2_tiling.cpp
    # CheckCommonOutputTensorDim and the dim checks after it). Checked where the shape is known: always in tiling
    # and aclnn, in the reference when the caller passes out_shapes.
    for t in outputs:
        pred = _shape_predicate(t, {})
        if pred is not None:
            add("shape", t.name, pred, "tiling", f"shape {shape_expected(t.shape)}", (Call("shaped", (Name(t.name),)),),
                Call("shape", (Name(t.name),)), span=t.span, detail=shape_detail(op, t, {}))
    for a in (a for a in attrs if not a.ignored):  # an ignored attribute is read as its default: nothing to check
        if a.length is not None:
            r = a.length
            add("len", a.name, InRange(Call("len", (Name(a.name),)), r.lo, r.hi, r.lo_closed, r.hi_closed),
                "invalid", f"a string whose length is in {range_text(r)}", value=Call("len", (Name(a.name),)),
                span=a.span)
        if a.domain is not None and not a.type.startswith("list"):
            add("domain", a.name, _domain_expr(Name(a.name), a.domain), "tiling", domain_expected(a.domain), span=a.span)
    for name in unsupported_attrs:
        a = next(x for x in attrs if x.name == name)
        add("unsupported", name, Binary("==", Name(name), _literal(a.default)), "tiling",
            f"{_literal_text(a.default)} (the default; {name} is not supported {where})", span=product.span)
    if op.quant_by is not None and op.quant_modes:
        add("quant_mode", op.quant_by, InSet(Name(op.quant_by), tuple(Int(m) for m in quant)), "tiling",
            "one of " + ", ".join(map(str, quant)) + f" (quant modes supported {where})", span=product.span)
    return checks


def _kernel_checks(op: Op, chain: list[Product], attrs) -> list[Check]:
    """What the generated kernels of the op's family cannot run on the product, after the op's own rules (a call
    the documents reject is reported by their rule first): a world larger than the ranks whose windows they reach
    (one server where MTE copies stop at the server and the family has no BatchWrite path; the windows the HCCL
    context lists where the kernels read them from it)."""
    family = FAMILIES.get(op.semantics or "")
    product = chain[0]
    try:  # an extending product runs on its nearest tabled ancestor's hardware (core.products.facts_for)
        facts = facts_for(p.soc for p in chain)
    except KeyError:  # no row up the chain: the analyzer has reported the product already
        facts = None
    world = op.named(family.one_server_attr) if family is not None and family.one_server_attr else None
    if world is None or facts is None or not any(a.name == world for a in attrs):
        return []
    limits = []  # (ranks, why): the smallest wins
    if facts.ranks_per_server and not family.batch_write:
        limits.append((facts.ranks_per_server, f"one server on {product.display} (the generated kernels reach other "
                       "ranks' HCCL windows with MTE copies; the HCCL transport across servers, RDMA or BatchWrite, "
                       "is not built by opgen)"))
    if facts.context_windows:
        limits.append((facts.context_windows, f"the windows the HCCL context lists on {product.display} (the "
                       "generated kernels read the peers' windowsIn[] from it, as Hccl::GetWindowsInAddr gives no "
                       "address on this arch; larger worlds need the CCU path, which is not built by opgen)"))
    if not limits:
        return []
    n, why = min(limits)
    top = _domain_max(next(a for a in attrs if a.name == world).domain)
    if top is not None and top <= n:  # the product's own domain keeps the world within the limit
        return []
    return [Check(f"transport.{world}", (), Binary("<=", Name(world), Int(n)), "tiling", world, None,
                  f"at most {n}, {why}", "implicit", span=product.span, limit=True)]


def _kernel_table_checks(op: Op, chain: list[Product], names: set[str]) -> list[Check]:
    """The family's fixed-size kernel tables (core.family.KernelTable) on the products whose kernel path uses
    them: after the op's own rules and its buffer and window checks, so a call the documents reject is reported
    by their rule first.  A table whose names the op does not declare is the family check's to report."""
    family = FAMILIES.get(op.semantics or "")
    try:
        facts = facts_for(p.soc for p in chain)
    except KeyError:  # no row up the chain: the analyzer has reported the product already
        return []
    out = []
    for t in family.kernel_tables if family is not None else ():
        factors = [[op.named(n) for n in f] for f in t.factors]  # a factor's names may be roles of the family
        if facts.assist_layout not in t.layouts or not all(n in names for f in factors for n in f):
            continue
        expr: Expr | None = None
        for f in factors:
            term: Expr = Name(f[0])
            for n in f[1:]:
                term = Binary("+", term, Name(n))
            expr = term if expr is None else Binary("*", expr, term)
        out.append(Check(f"kernel.{t.name}", (), Binary("<=", expr, Int(t.capacity)), "tiling", op.named(t.param), None,
                         f"{to_spec(expr)} <= {t.capacity}, the {t.what} (the generated kernel)", "implicit",
                         span=chain[0].span, limit=True))
    return out


def _domain_max(domain: Domain | None) -> int | None:
    """The largest value an integer domain admits (None: unbounded, or not literal integers)."""
    if domain is None:
        return None
    if domain.is_range:
        hi = domain.range.hi
        return (hi.value if domain.range.hi_closed else hi.value - 1) if isinstance(hi, Int) else None
    values = [e.value for e in domain.items if isinstance(e, Int)]
    return max(values) if values and len(values) == len(domain.items) else None


def _declared_checks(constraints: list[Constraint], chain: list[Product], op: Op) -> list[Check]:
    out = []
    for c in constraints:
        scope = next((p.soc for p in chain if c in p.constraints), "op")
        out.append(Check(f"{scope}.{c.label or c.param}", c.conditions, c.expr, c.error_class, c.param, c.value,
                         c.message, "declared", span=c.span, limit=c.limit))
    return out


def _buffer_checks(op: Op, buffers: list[Buffer]) -> list[Check]:
    out = []
    for b in buffers:
        env = next((e for e in op.envs if e.name == b.env), None)
        unit = env.unit if env is not None else ""
        lhs: Expr = Name(b.env)
        if _UNITS.get(unit):
            lhs = Binary("*", lhs, Name(_UNITS[unit]))
        out.append(Check(f"buffer.{b.label or b.env}", b.conditions, Binary(">=", lhs, b.expr), b.error_class,
                         b.env, None, b.message, "declared", span=b.span))
    return out


def layout_lets(op: Op, window: Window) -> tuple[Let, ...]:
    """The lets of a window layout (``window_lets``), its env read in bytes (or its bytes from attributes)."""
    if window.size is not None and not window.size_env:
        return window_lets(window, window.size)
    env = next((e for e in op.envs if e.name == window.env), None)
    unit = _UNITS.get(env.unit if env is not None else "")
    env_bytes = Binary("*", Name(window.env), Name(unit)) if unit else Name(window.env)
    # `window ep: HCCL_BUFFSIZE / 2 {`: the env in bytes, as a buffer rule reads it
    return window_lets(window, env_bytes if window.size is None else substitute(window.size, {window.env: env_bytes}))


def _window_checks(op: Op, window: Window | None) -> list[Check]:
    """The areas must fit a data half: after the documented buffer rules (a call the documents reject is reported
    by their rule first), since the kernels address the layout, not the documents' formula."""
    if window is None:
        return []
    areas = " + ".join(a.name for a in window.areas)
    need = Name("win_need") if window.reserve is None else Binary("+", Name("win_reserve"), Name("win_need"))
    reserve = "" if window.reserve is None else f" after a reserve of {to_spec(window.reserve)} each"
    if window.rank_step is not None:  # the halves leave room for every rank's step (window_lets)
        reserve = f", rank r's {to_spec(window.rank_step)} * r bytes further in"
    return [Check(f"window.{window.domain}", (), Binary("<=", need, Name("win_half")), "tiling",
                  window.env, None, f"{window.source_text} >= the kernels' {window.domain} window: {window.halves} "
                  f"data halves of {areas}{reserve}, and the status area in {window.state_in}", "implicit",
                  span=window.span)]


def _unique_ids(checks: list[Check]) -> list[Check]:
    seen: dict[str, int] = {}
    out = []
    for c in checks:
        n = seen.get(c.id, 0) + 1
        seen[c.id] = n
        if n > 1:
            c = Check(f"{c.id}.{n}", c.conditions, c.expr, c.error_class, c.param, c.value, c.message, c.origin,
                      span=c.span, detail=c.detail, limit=c.limit)
        out.append(c)
    return out


# ---- helpers --------------------------------------------------------------------------

def _literal(v) -> Expr:
    if isinstance(v, bool):
        return Bool(v)
    if isinstance(v, int):
        return Int(v)
    if isinstance(v, float):
        return Float(v)
    if isinstance(v, str):
        return Str(v)
    raise TypeError(f"no literal for {v!r}")


def _literal_text(v) -> str:
    return to_spec(_literal(v))


def _domain_expr(x: Expr, d: Domain) -> Expr:
    if d.range is not None:
        r = d.range
        return InRange(x, r.lo, r.hi, r.lo_closed, r.hi_closed)
    return InSet(x, d.items)


def _shape_predicate(t: Tensor, bound: dict[str, tuple[str, int]]) -> Expr | None:
    if t.shape is None:
        return None
    alts = [_alt_predicate(t.name, a, bound) for a in t.shape.alts]
    pred = alts[0]
    for p in alts[1:]:
        pred = Binary("or", pred, p)
    return pred


def _alt_predicate(name: str, alt, bound) -> Expr:
    if isinstance(alt, ShapeCond):
        return Cond(alt.test, _alt_predicate(name, alt.then, bound), _alt_predicate(name, alt.orelse, bound))
    pred: Expr = Binary("==", Call("rank", (Name(name),)), Int(len(alt.dims)))
    for axis, d in enumerate(alt.dims):
        if isinstance(d, Name) and bound.get(d.id) == (name, axis):
            continue  # this dim defines the name; nothing to compare
        op = ">=" if alt.is_at_least(axis) else "=="
        pred = Binary("and", pred, Binary(op, Call("dim", (Name(name), Int(axis))), d))
    return pred
