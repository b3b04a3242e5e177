"""The resolved per-product matrix of one op (`opgen products`).

One row per fact (a tensor's dtypes, an attribute's domain, the quant modes,
a shape limit, a buffer formula, ...), one column per product.  Every value
says where it comes from, so a reviewer sees at a glance what a new chip
inherits and what it overrides:

    "(own)"             set by this product
    "(from ascend910_93)"  inherited from that ancestor product
    unmarked            the op's own declaration (no product changes it)

Values come from the product views (`Op.view`), never from spec text.
"""
from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass

from opgen.lang.expr import Binary, Expr, InRange, InSet, Name, names, to_spec
from opgen.model.spec_text import literal as spec_literal
from opgen.model.decl import Buffer, Check, Op, Product, ProductView
from opgen.model.spec_text import domain_text as _domain, range_text as _range, shape_text as _shape
from opgen.model.resolve import dim_bindings

NONE = "—"


@dataclass(frozen=True)
class Part:
    text: str
    origin: str | None  # the product that declares the value; None: the op's declaration


@dataclass(frozen=True)
class Row:
    section: str
    label: str
    cells: tuple[tuple[Part, ...], ...]  # one per product, in the spec's product order

    def cell(self, op: Op, soc: str) -> str:
        return cell_text(self.cells[op.socs.index(soc)], soc)


def cell_text(parts: tuple[Part, ...], soc: str) -> str:
    def one(p: Part) -> str:
        if p.origin is None:
            return p.text
        return f"{p.text} (own)" if p.origin == soc else f"{p.text} (from {p.origin})"
    return "; ".join(one(p) for p in parts) or NONE


def _chain(op: Op, view: ProductView) -> list[Product]:
    return [op.product(s) for s in view.chain]


def _declared(chain: list[Product], field: str, name: str):
    """(value, product) of the nearest product in the chain that sets ``field`` for ``name``; (None, None)."""
    for p in chain:
        for key, value in getattr(p, field):
            if key == name:
                return value, p.soc
    return None, None


def _listed(chain: list[Product], field: str, name: str) -> str | None:
    """The nearest product in the chain whose ``field`` list names ``name``."""
    return next((p.soc for p in chain if name in getattr(p, field)), None)


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Binary) and e.op == "and":
        return _conjuncts(e.lhs) + _conjuncts(e.rhs)
    return [e]


def _scope(c: Check) -> str | None:
    scope = c.id.split(".", 1)[0]
    return None if scope == "op" else scope


def _limit(c: Check, dim: str) -> str | None:
    """The part of a declared check that limits ``dim`` by a range or set, with its condition; None if none."""
    parts = _conjuncts(c.expr)
    if not any(isinstance(x, (InRange, InSet)) and x.operand == Name(dim) for x in parts):
        return None
    text = " and ".join(to_spec(x) for x in parts if dim in names(x))
    if c.conditions:
        text += " when " + " and ".join(to_spec(x) for x in c.conditions)
    return text


def _buffer_key(b: Buffer) -> str:
    return b.label or b.env


def product_matrix(op: Op) -> list[Row]:
    views = [op.views[s] for s in op.socs]
    chains = [_chain(op, v) for v in views]
    rows: list[Row] = []

    def row(section: str, label: str, make) -> None:
        rows.append(Row(section, label, tuple(tuple(make(v, c)) for v, c in zip(views, chains))))

    row("product", "name", lambda v, c: [Part(v.product.display, None)])
    row("product", "extends", lambda v, c: [Part(v.product.extends, None)] if v.product.extends else [])
    row("product", "pairs with", lambda v, c: [Part(", ".join(v.pairs_with), next(
        (p.soc for p in c if p.pairs_with), None))] if v.pairs_with else [])
    # its OpDef config: the kernel entry it builds (the op's one entry when no product of its chain names one)
    # and jitCompile.flag (the default when none declares it)
    row("product", "kernel entry", lambda v, c: [Part(v.kernel_entry, next(
        (p.soc for p in c if p.op_file is not None), None))])
    row("product", "jitCompile.flag", lambda v, c: [Part(v.jit_compile, next(
        (p.soc for p in c if p.jit_compile is not None), None))])

    for t in op.inputs:
        def tensor_in(v, c, t=t):
            if t.name in v.unsupported_inputs:
                return [Part("unsupported, must be null", _listed(c, "unsupported_inputs", t.name))]
            vt = next(x for x in v.inputs if x.name == t.name)
            parts = [Part(", ".join(vt.dtypes), _declared(c, "input_dtypes", t.name)[1])]
            shape, origin = _declared(c, "input_shapes", t.name)
            if origin is not None:
                parts.append(Part(f"shape {_shape(shape)}", origin))
            return parts
        row("inputs", t.name, tensor_in)
    for t in op.outputs:
        def tensor_out(v, c, t=t):
            vt = next(x for x in v.outputs if x.name == t.name)
            parts = [Part(", ".join(vt.dtypes), _declared(c, "output_dtypes", t.name)[1])]
            shape, origin = _declared(c, "output_shapes", t.name)
            if origin is not None:
                parts.append(Part(f"shape {_shape(shape)}", origin))
            if t.name in v.unspecified_outputs:
                parts.append(Part("contents unspecified", _listed(c, "unspecified_outputs", t.name)))
            return parts
        row("outputs", t.name, tensor_out)

    for a in op.attrs:
        def attr(v, c, a=a):
            if a.name in v.unsupported_attrs:
                return [Part(f"unsupported, must be {spec_literal(a.default)}", _listed(c, "unsupported_attrs", a.name))]
            if a.name in v.ignored_attrs:
                return [Part(f"ignored, read as {spec_literal(a.default)}", _listed(c, "ignored_attrs", a.name))]
            domain, origin = _declared(c, "attr_domains", a.name)
            parts = []
            if domain is not None:
                parts.append(Part(_domain(domain)[3:], origin))
            elif a.domain is not None:
                parts.append(Part(_domain(a.domain)[3:], None))
            if a.length is not None:
                parts.append(Part(f"length {_range(a.length)}", None))
            return parts
        row("attributes", a.name, attr)

    if op.quant_by is not None:
        row("quant", f"quant modes ({op.quant_by})", lambda v, c: [Part(", ".join(map(str, v.quant_modes)), next(
            (p.soc for p in c if p.quant_modes is not None), None))])

    for dim in dim_bindings(op):
        cells = [[Part(t, _scope(ch)) for ch in v.checks if ch.origin == "declared"
                  for t in [_limit(ch, dim)] if t is not None] for v in views]
        if any(cells):
            rows.append(Row("shape limits", dim, tuple(tuple(x) for x in cells)))

    overridden = list(dict.fromkeys(l.name for p in op.products for l in p.lets))
    for name in overridden:
        def let(v, c, name=name):
            l = next((x for x in v.lets if x.name == name), None)
            origin = next((p.soc for p in c if any(x.name == name for x in p.lets)), None)
            return [Part(to_spec(l.expr), origin)] if l is not None else []
        row("derived quantities", name, let)

    keys = list(dict.fromkeys(_buffer_key(b) for v in views for b in v.buffers))
    for key in keys:
        def buffer(v, c, key=key):
            b = next((x for x in v.buffers if _buffer_key(x) == key), None)
            if b is None:
                return []
            text = f"{b.env} >= {to_spec(b.expr)}"
            if b.conditions:
                text += " when " + " and ".join(to_spec(x) for x in b.conditions)
            return [Part(text, next((p.soc for p in c if b in p.buffers), None))]
        row("buffers", key, buffer)

    # checks that keep the documents' domain where the real op accepts more (`narrower` marks)
    narrowed = list(dict.fromkeys(n.check.id for v in views for n in v.narrowings))
    for cid in narrowed:
        def narrowing(v, c, cid=cid):
            n = next((x for x in v.narrowings if x.check.id == cid), None)
            if n is None:
                return []
            return [Part(f"documented narrower than the op: {n.check.message}; the code accepts {n.mark.accepts} "
                         f"(code: {n.mark.source})", next((p.soc for p in c if n.mark in p.narrower), None))]
        row("documented narrower than the op", cid, narrowing)

    row("checks", "checks", lambda v, c: [Part(
        f"{len(v.checks)} ({sum(ch.origin == 'declared' for ch in v.checks)} declared)", None)])
    return rows


# ---- rendering ------------------------------------------------------------------------------------

LEGEND = "(own): set by this product; (from P): inherited from product P; unmarked: the op's declaration"


def _width(text: str) -> int:
    """Terminal columns: CJK (wide / full-width) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap by terminal columns; a word wider than a line is cut."""
    lines, cur = [], ""
    for word in text.split(" "):
        while _width(word) > width:
            cut = 1
            while _width(word[:cut + 1]) <= width:
                cut += 1
            if cur:
                lines.append(cur)
                cur = ""
            lines.append(word[:cut])
            word = word[cut:]
        if cur and _width(cur) + 1 + _width(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    return lines + [cur] if cur or not lines else lines


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def render_text(op: Op, rows: list[Row], width: int = 40) -> str:
    socs = op.socs
    label_w = max(_width(r.label) for r in rows) + 2
    cells = {(i, s): cell_text(r.cells[j], s) for i, r in enumerate(rows) for j, s in enumerate(socs)}
    col_w = [min(width, max(len(s), *(_width(cells[(i, s)]) for i in range(len(rows))))) for s in socs]
    out = [f"{op.name} (version {op.version}): {len(socs)} product{'s' if len(socs) != 1 else ''}", LEGEND, ""]

    def line(label: str, texts: list[str]) -> list[str]:
        wrapped = [_wrap(t, w) for t, w in zip(texts, col_w)]
        height = max(len(w) for w in wrapped)
        return [_pad("  " + (label if k == 0 else ""), label_w + 2) + "  ".join(
            _pad(w[k] if k < len(w) else "", cw) for w, cw in zip(wrapped, col_w)).rstrip()
            for k in range(height)]

    out += line("", list(socs))
    section = None
    for i, r in enumerate(rows):
        if r.section != section:
            section = r.section
            out.append(section)
        out += line(r.label, [cells[(i, s)] for s in socs])
    return "\n".join(out) + "\n"


def render_md(op: Op, rows: list[Row]) -> str:
    socs = op.socs
    out = [f"# {op.name} (version {op.version}): products", "", LEGEND]
    section = None
    for r in rows:
        if r.section != section:
            section = r.section
            out += ["", f"| {section} | " + " | ".join(socs) + " |", "| --- |" + " --- |" * len(socs)]
        cells = [cell_text(r.cells[j], s).replace("|", "\\|") for j, s in enumerate(socs)]
        out.append(f"| {r.label} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def render_json(op: Op, rows: list[Row]) -> str:
    doc = {
        "op": op.name,
        "version": op.version,
        "products": [{"soc": p.soc, "display": p.display, "extends": p.extends} for p in op.products],
        "rows": [{"section": r.section, "label": r.label,
                  "cells": {s: {"text": cell_text(r.cells[j], s),
                                "parts": [{"text": p.text, "from": p.origin} for p in r.cells[j]]}
                            for j, s in enumerate(op.socs)}} for r in rows],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
