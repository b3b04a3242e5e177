"""The marks of the products, ``unreachable ID, ... "why";`` and ``narrower ID "RANGE" code "SOURCE";``: every
ID names a check of that product's view, once per kind of mark (E128). Runs after the views are attached, since a view's check ids (``dtype.x``,
``op.moeExpertNum.2``, ``transport.epWorldSize``) come from resolving the product. Whether each marked check
really is unreachable is the negative search's verdict, checked by the build (E205)."""
from __future__ import annotations

import re

from opgen.core.diagnostics import Diagnostics
from opgen.core.span import find_span
from opgen.lang.expr import Span
from opgen.model.decl import Op


def check_marks(op: Op, diags: Diagnostics) -> None:
    for p in op.products:
        view = op.views[p.soc]
        ids = [c.id for c in view.checks]
        seen: set[str] = set()
        for mark in p.unreachable:
            for cid in mark.checks:
                at = id_span(op.source, mark.span, cid)
                if cid not in ids:
                    diags.unknown("E128", f"check of product {p.soc}", cid, ids, at)
                elif cid in seen:
                    diags.error("E128", f"check {cid} is marked unreachable twice on product {p.soc}", at)
                seen.add(cid)
        narrowed: set[str] = set()
        for mark in p.narrower:
            at = id_span(op.source, mark.span, mark.check)
            if mark.check not in ids:
                diags.unknown("E128", f"check of product {p.soc}", mark.check, ids, at)
            elif mark.check in narrowed:
                diags.error("E128", f"check {mark.check} is marked narrower twice on product {p.soc}", at)
            narrowed.add(mark.check)


def id_span(source: str, span: Span | None, cid: str) -> Span | None:
    """The span of ``cid`` inside a mark (the mark's span when the text cannot be found)."""
    if span is None or not source:
        return span
    return find_span(source, span.file, r"(?<![\w.])(" + re.escape(cid) + r")(?![\w.])", span) or span
