"""Model → spec text.  ``load_text(print_op(op)) == op`` for every valid model."""
from __future__ import annotations

from opgen.lang.expr import Expr, quote, to_spec
from opgen.model.spec_text import domain_text as _domain, literal as _lit, range_text as _range, shape_text as _shape
from opgen.model.decl import Attr, Buffer, Constraint, Op, Product, QuantMode, Tensor, Window

_IND = "    "


def _tensor(t: Tensor) -> str:
    parts = [("optional " if t.optional else "") + f"{t.role} {t.name}: " + " | ".join(t.dtypes)]
    parts.append("format " + " | ".join(t.formats))
    if t.shape is not None:
        parts.append("shape " + _shape(t.shape))
    if t.dtype_rule is not None:
        parts.append("dtype = " + to_spec(t.dtype_rule))
    parts.append(f"ir {quote(t.ir_name)}")
    if t.empty_absent:
        parts.append("empty_absent")
    if t.noncontiguous:
        parts.append("noncontiguous")
    if t.doc:
        parts.append(f"doc {quote(t.doc)}")
    return " ".join(parts) + ";"


def _attr(a: Attr) -> str:
    parts = [("optional " if a.optional else "") + f"attr {a.name}: " +
             (f"list<{a.type[5:-1]}>" if a.type.startswith("list<") else a.type)]
    if a.default is not None:
        parts.append("= " + _lit(a.default))
    if a.domain is not None:
        parts.append(_domain(a.domain))
    if a.length is not None:
        parts.append("len " + _range(a.length))
    parts.append(f"ir {quote(a.ir_name)}")
    if a.omitted is not None:
        parts.append(f"omitted = {to_spec(a.omitted)}")
    if a.doc:
        parts.append(f"doc {quote(a.doc)}")
    return " ".join(parts) + ";"


def _wrap(conds: tuple[Expr, ...], stmt: str, depth: int) -> list[str]:
    """A statement inside its `when` blocks (one nested block per condition)."""
    lines, ind = [], _IND * depth
    for i, c in enumerate(conds):
        lines.append(f"{ind}{_IND * i}when {to_spec(c)} {{")
    lines.append(f"{ind}{_IND * len(conds)}{stmt}")
    for i in reversed(range(len(conds))):
        lines.append(f"{ind}{_IND * i}}}")
    return lines


def _constraint(c: Constraint, depth: int) -> list[str]:
    label = f"{c.label}: " if c.label else ""
    blame = c.param + (f"({to_spec(c.value)})" if c.value is not None else "")
    return _wrap(c.conditions, f"{'limit' if c.limit else 'require'} {label}{to_spec(c.expr)} else {c.error_class} {blame} {quote(c.message)};",
                 depth)


def _buffer(b: Buffer, depth: int) -> list[str]:
    label = f"{b.label}: " if b.label else ""
    return _wrap(b.conditions, f"buffer {label}{b.env} >= {to_spec(b.expr)} else {b.error_class} {quote(b.message)};",
                 depth)


def _quant(q: QuantMode) -> list[str]:
    lines = [f"{_IND}quant {q.value} {q.name} {quote(q.doc)} {{"]
    for i, s in enumerate(q.body):
        if q.send is not None and q.send.at == i:
            lines.append(f"{_IND * 2}send {', '.join(q.send.names)};")
        stmt = f"let {s.name} = {to_spec(s.expr)};" if s.kind == "let" else f"{s.name} = {to_spec(s.expr)};"
        lines += _wrap(s.conditions, stmt, 2)
    lines.append(f"{_IND}}}")
    return lines


def _product(p: Product) -> list[str]:
    ext = f" extends {p.extends}" if p.extends else ""
    lines = [f"{_IND}product {p.soc} {quote(p.display)}{ext} {{"]
    i2 = _IND * 2
    if p.doc:
        lines.append(f"{i2}doc {quote(p.doc)};")
    lines += [f"{i2}note {quote(n)};" for n in p.notes]
    if p.pairs_with:
        lines.append(f"{i2}pairs_with {', '.join(p.pairs_with)};")
    lines += [f"{i2}attr {n} {_domain(d)};" for n, d in p.attr_domains]
    lines += [f"{i2}attr {n} unsupported;" for n in p.unsupported_attrs]
    lines += [f"{i2}input {n} unsupported;" for n in p.unsupported_inputs]
    lines += [f"{i2}input {n} empty_absent;" for n in p.empty_absent_inputs]
    lines += [f"{i2}input {n} ignored;" for n in p.ignored_inputs]
    lines += [f"{i2}attr {n} ignored;" for n in p.ignored_attrs]
    lines += [f"{i2}input {n}: {' | '.join(d)};" for n, d in p.input_dtypes]
    lines += [f"{i2}input {n} shape {_shape(s)};" for n, s in p.input_shapes]
    lines += [f"{i2}output {n}: {' | '.join(d)};" for n, d in p.output_dtypes]
    lines += [f"{i2}output {n} shape {_shape(s)};" for n, s in p.output_shapes]
    why = dict(p.unspecified_why)
    lines += [f"{i2}output {n} unspecified{' ' + quote(why[n]) if why.get(n) else ''};" for n in p.unspecified_outputs]
    lines += [_let(l, i2) for l in p.lets]
    if p.quant_modes is not None:
        lines.append(f"{i2}quant_modes {', '.join(map(str, p.quant_modes))};")
    lines += [_tolerance(t, i2) for t in p.tolerances]
    for c in p.constraints:
        lines += _constraint(c, 2)
    for b in p.buffers:
        lines += _buffer(b, 2)
    lines += _window(p.window, 2)
    lines += [f"{i2}unreachable {', '.join(m.checks)} {quote(m.reason)};" for m in p.unreachable]
    lines += [f"{i2}narrower {m.check} {quote(m.accepts)} code {quote(m.source)};" for m in p.narrower]
    if p.op_file is not None:
        lines.append(f"{i2}op_file {quote(p.op_file)};")
    if p.jit_compile is not None:
        lines.append(f"{i2}jit_compile {p.jit_compile};")
    lines.append(f"{_IND}}}")
    return lines


def _window(w: Window | None, depth: int) -> list[str]:
    if w is None:
        return []
    ind, inner = _IND * depth, _IND * (depth + 1)
    return [f"{ind}window {w.domain}: {w.source_text} {{", f"{inner}halves {w.halves};",
            *(f"{inner}let {l.name} = {to_spec(l.expr)};" for l in w.lets),
            *(f"{inner}area {a.spec_text};" for a in w.areas),
            *([f"{inner}reserve = {to_spec(w.reserve)};"] if w.reserve is not None else []),
            *([f"{inner}buffer_id = {to_spec(w.buffer_id)};"] if w.buffer_id is not None else []),
            f"{inner}state {w.state_in}{state_place(w)} = {to_spec(w.state)};",
            *([f"{inner}rank_step {w.rank_count} = {to_spec(w.rank_step)};"] if w.rank_step is not None else []),
            f"{ind}}}"]


def state_place(w: Window) -> str:
    """Where a window's status area lies, as the spec writes it after `state <window>`."""
    return " at_start" if w.state_at_start else " in_reserve" if w.state_in_reserve else ""


def _tolerance(t, ind: str) -> str:
    dts = f": {' | '.join(t.dtypes)}" if t.dtypes else ""
    how = "exact" if t.exact else f"rtol {_lit(t.rtol)} atol {_lit(t.atol)}"
    return f"{ind}tolerance {t.output}{dts} {how};"


def _let(l, ind: str) -> str:
    doc = f" doc {quote(l.doc)}" if l.doc else ""
    return f"{ind}let {l.name} = {to_spec(l.expr)}{doc};"


def print_op(op: Op) -> str:
    i = _IND
    lines = [f"op {op.name} {{", f"{i}version {op.version};", f"{i}doc {quote(op.doc)};"]
    lines += [f"{i}note {quote(n)};" for n in op.notes]
    if op.pairs_with:
        lines.append(f"{i}pairs_with {', '.join(op.pairs_with)};")
    if op.unsupported_products:
        lines.append(f"{i}unsupported {', '.join(quote(u) for u in op.unsupported_products)};")
    lines += [f"{i}comm {g.domain} {g.attr}" + (f" when {to_spec(g.when)}" if g.when is not None else "") + ";"
              for g in op.comm_groups]
    for e in op.envs:
        unit = f" unit {quote(e.unit)}" if e.unit else ""
        doc = f" doc {quote(e.doc)}" if e.doc else ""
        lines.append(f"{i}env {e.name}: {e.type} = {_lit(e.default)}{unit}{doc};")
    lines += [i + _tensor(t) for t in op.inputs]
    lines += [i + _attr(a) for a in op.attrs]
    if op.quant_by:
        lines.append(f"{i}quant_by {op.quant_by};")
    if op.semantics:
        lines.append(f"{i}semantics {op.semantics};")
    if op.tiling_key:
        lines.append(f"{i}tiling_key {{")
        lines += [f"{i}{i}{n} = {to_spec(e)};" for n, e in op.tiling_key]
        lines.append(f"{i}}}")
    lines += [i + _tensor(t) for t in op.outputs]
    for entry in op.aclnn:
        params = ", ".join(("" if p.const else "nonconst ") + p.name + (f": {p.type}" if p.type else "")
                           + (f" as {p.alias}" if p.alias else "") for p in entry.params)
        sizes = " -> " + ", ".join(f"{z.name} = {to_spec(z.expr)}" for z in entry.sizes) if entry.sizes else ""
        doc = f" doc {quote(entry.doc)}" if entry.doc else ""
        lines.append(f"{i}aclnn {entry.name}({params}){sizes}{doc};")
    for g in op.graph:
        clauses = ([f"ir {quote(g.ir_name)}"] if g.ir_name is not None else []) + \
            ([": " + " | ".join(g.dtypes)] if g.dtypes is not None else []) + \
            ([f"= {_lit(g.default)}"] if g.has_default else []) + ([f"after {g.after}"] if g.after else [])
        lines.append(f"{i}graph {g.role} {g.name} {' '.join(clauses)};")
    lines += [f"{i}def {d.name}({', '.join(d.params)}) = {to_spec(d.body)};" for d in op.defs]
    lines += [_let(l, i) for l in op.lets]
    lines += [_tolerance(t, i) for t in op.tolerances]
    for c in op.constraints:
        lines += _constraint(c, 1)
    for b in op.buffers:
        lines += _buffer(b, 1)
    lines += _window(op.window, 1)
    for q in op.quant_modes:
        lines += _quant(q)
    for sp in op.specials:
        if sp.body is None:
            lines.append(f"{_IND}special {sp.name}: {sp.count} {quote(sp.doc)};")
            continue
        lines.append(f"{_IND}special {sp.name}: {sp.count} {quote(sp.doc)} {{")
        for s in sp.body:
            stmt = f"let {s.name} = {to_spec(s.expr)};" if s.kind == "let" else f"{s.name} = {to_spec(s.expr)};"
            lines += _wrap(s.conditions, stmt, 2)
        lines.append(f"{_IND}}}")
    if op.post is not None:
        lines.append(f"{_IND}post {op.post.name} {quote(op.post.doc)} {{")
        for s in op.post.body:
            stmt = f"let {s.name} = {to_spec(s.expr)};" if s.kind == "let" else f"{s.name} = {to_spec(s.expr)};"
            lines += _wrap(s.conditions, stmt, 2)
        lines.append(f"{_IND}}}")
    for p in op.products:
        lines += _product(p)
    lines.append("}")
    return "\n".join(lines) + "\n"
