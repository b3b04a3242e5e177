"""Which declared outputs something writes: the op's semantics, or its quant formulas.

An op's semantics writes some outputs (its numpy driver and kernel: ``Family.writes``), its quant formulas assign
others; any other declared output stays as the caller passed it, so a test of it could only pass on the untouched
buffer.  Where that happens the spec marks the output ``unspecified "why"`` (the docs show the reason); a build of
a spec that does not fails (E204), and the front end asks for the reason (E127).
"""
from __future__ import annotations

from opgen.core.families import FAMILIES
from opgen.model.decl import Op, Tensor


def assigned_by_formulas(op: Op, modes=None) -> set[str]:
    """Outputs the quant formulas assign (of the modes ``modes``; all when None)."""
    return {s.name for q in op.quant_modes if modes is None or q.value in modes for s in q.body if s.kind == "assign"}


def family_writes(op: Op) -> set[str]:
    """Outputs the op's semantics writes: the family's, and with a `post` stage those its formulas assign (the
    family's reduced output only if the stage assigns it)."""
    family = FAMILIES.get(op.semantics or "")
    if family is None:
        return set()
    writes = {op.named(w) for w in family.writes}  # the family names them by role
    if op.post is not None:
        writes.discard(op.named(family.reduced))
        writes |= set(op.post.assigned)
    return writes


def never_written(op: Op) -> list[tuple[Tensor, tuple[str, ...]]]:
    """(output, the products where nothing writes it and the spec does not mark it unspecified), per output."""
    family = FAMILIES.get(op.semantics or "")
    if family is None:
        return []
    writes = family_writes(op)
    out = []
    for t in op.outputs:
        silent = tuple(p.soc for p in op.products
                       if t.name not in writes
                       and t.name not in assigned_by_formulas(op, op.views[p.soc].quant_modes)
                       and t.name not in op.views[p.soc].unspecified_outputs)
        if silent:
            out.append((t, silent))
    return out
