"""Paired ops checked together (`opgen check A.spec B.spec`): the shared parameters whose domains differ.

The documents require every shared parameter to take the same value in both ops of a pair ("且和CombineV2系列算子
对应参数也保持一致"), so a value one op accepts and its partner rejects is a call sequence no caller can make. For
each pair among the specs checked together (`pairs_with`, op-wide or per product) and each product both support,
each attribute both declare (by role: a parameter bound to a role is compared as the role) is compared by domain:
a difference is a warning (E134) at the attribute's domain in both specs; domains with no value in common are an
error, since every world the pairing runs (the round trip sets the attribute on both ops) is rejected by one side.
"""
from __future__ import annotations

import re

from opgen.core.diagnostics import Diagnostics
from opgen.core.span import Span, find_span
from opgen.lang.expr import Int, Str
from opgen.model.decl import Domain, Op
from opgen.model.spec_text import domain_text


def op_pairs(ops: list[Op]):
    """Each pair among ``ops`` once (by name order)."""
    by_name = {op.name: op for op in ops}
    seen = set()
    for op in ops:
        partners = set(op.pairs_with) | {p for v in op.views.values() for p in v.pairs_with}
        for other in sorted(partners & set(by_name)):
            key = tuple(sorted((op.name, other)))
            if key not in seen:
                seen.add(key)
                yield by_name[key[0]], by_name[key[1]]


def _by_role(op: Op) -> dict[str, str]:
    """{role or name: the op's name} of its attributes."""
    back = {r.name: r.role for r in op.roles}
    return {back.get(a.name, a.name): a.name for a in op.attrs}


def domain_span(op: Op, soc: str, name: str) -> Span | None:
    """Where the domain ``soc`` gives attribute ``name`` is written: the nearest product of its `extends` chain
    that sets it, else the op's declaration of the attribute."""
    product = op.product(soc)
    while product is not None:
        if any(n == name for n, _ in product.attr_domains):
            found = find_span(op.source, op.span.file if op.span else "", rf"\battr\s+({re.escape(name)})\b",
                              product.span)
            if found is not None:
                return found
        product = op.product(product.extends) if product.extends else None
    return op.attr(name).span


def _values(d: Domain | None):
    """The domain as (lo, hi) closed integer bounds, a frozenset of literal items, or None (not literal)."""
    if d is None:
        return None
    if d.range is not None:
        lo, hi = d.range.lo, d.range.hi
        if not (isinstance(lo, Int) and isinstance(hi, Int)):
            return None
        return (lo.value + (0 if d.range.lo_closed else 1), hi.value - (0 if d.range.hi_closed else 1))
    if all(isinstance(i, (Int, Str)) for i in d.items):
        return frozenset(i.value for i in d.items)
    return None


def _disjoint(a: Domain | None, b: Domain | None) -> bool:
    va, vb = _values(a), _values(b)
    if va is None or vb is None:
        return False
    if isinstance(va, tuple) and isinstance(vb, tuple):
        return max(va[0], vb[0]) > min(va[1], vb[1])
    if isinstance(va, frozenset) and isinstance(vb, frozenset):
        return not va & vb
    rng, items = (va, vb) if isinstance(va, tuple) else (vb, va)
    return not any(isinstance(x, int) and rng[0] <= x <= rng[1] for x in items)


def check_pairs(ops: list[Op], diags: Diagnostics) -> None:
    for a, b in op_pairs(ops):
        roles_a, roles_b = _by_role(a), _by_role(b)
        for soc in [p.soc for p in a.products if b.product(p.soc) is not None]:
            va, vb = a.views[soc], b.views[soc]
            attrs_a, attrs_b = {x.name: x for x in va.attrs}, {x.name: x for x in vb.attrs}
            for role in [r for r in roles_a if r in roles_b]:
                xa, xb = attrs_a.get(roles_a[role]), attrs_b.get(roles_b[role])
                if xa is None or xb is None:
                    continue
                ta, tb = (domain_text(x.domain) if x.domain else "any value" for x in (xa, xb))
                if ta == tb:
                    continue
                at_a, at_b = domain_span(a, soc, xa.name), domain_span(b, soc, xb.name)
                disjoint = _disjoint(xa.domain, xb.domain)
                message = (f"paired ops {a.name} and {b.name} disagree on {role} on {soc}: {a.name} accepts "
                           f"{ta}, {b.name} {tb}" + ("; no value is accepted by both, so every world the pairing "
                                                      "runs is rejected by one of them" if disjoint else ""))
                for here, there in ((at_a, at_b), (at_b, at_a)):
                    help_ = f"the other side is declared at {there}" if there is not None else None
                    if disjoint:
                        diags.error("E134", message, here, help_)
                    else:
                        diags.warning("E134", message, here, help_)
