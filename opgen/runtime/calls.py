"""One rank's call of an op in a test case: its attributes (rank ids filled in by the op's semantics), env, out dtypes.

Shared by the harness of generated suites and the CPU twin's job writer, which both turn a case into per-rank
calls; it reads only the generated reference (``ref``) and the runtime's rank rules."""
from __future__ import annotations

from opgen.runtime import drivers


def call_args(ref, case: dict, rank: int | None = None):
    """(attrs with env and rank ids, out_dtypes) of one rank of a world case, or of a single call."""
    attrs = dict(case["attrs"])
    if rank is not None:
        attrs.update(rank_ids(ref, case, rank))
    attrs.update(case.get("env", {}))
    return attrs, dict(case.get("out_dtypes", {}))


def rank_ids(ref, case: dict, rank: int) -> dict:
    """The rank attributes world rank ``rank`` gets (the runtime's rule for the op's semantics)."""
    rule = drivers.rank_rule(ref.INFO.semantics, ref.INFO.roles)
    return {} if rule is None else {k: v for k, v in rule(rank, case["attrs"]).items() if k in ref.ATTRS}


def rank_attrs(ref, case: dict, rank: int) -> dict:
    """Every attribute of one rank of a world: defaults filled in, that rank's ids (env dropped)."""
    attrs, _ = call_args(ref, case, rank)
    return ref.reference.normalize_attrs(ref.INFO, attrs)
