"""The numpy drivers of the op families, by family name: each family folder's ``driver`` part
(opgen/core/family_parts.py).  Generated references import this module (``drivers.RANK_ATTRS``, ``drivers.run``).

A driver is written against its family's role names; for an op that names some of them differently (``role R =
N;``), :func:`run` hands it the formulas' results as maps that answer role names too, and reports its errors on
the op's names (opgen.runtime.roles)."""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Sequence

import numpy as np

from opgen.core.family_parts import part_attr
from opgen.runtime.driving import Driver, RankAttrs
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo
from opgen.runtime.roles import aliased, op_error, to_op_names
from opgen.runtime.scope import Scope

DRIVERS: dict[str, Driver] = part_attr("driver", "DRIVER")
RANK_ATTRS: dict[str, RankAttrs] = part_attr("driver", "RANK_ATTRS")


def rank_rule(semantics: str | None, roles: Mapping[str, str]) -> RankAttrs | None:
    """The family's rank rule (world rank, attrs) -> that rank's id attributes, on the op's names (None: the
    family has none)."""
    rule = RANK_ATTRS.get(semantics or "")
    if rule is None or not roles:
        return rule
    return lambda i, attrs: to_op_names(rule(i, aliased(attrs, roles)), roles)


def _ieee(fn: Callable | None, aliases) -> Callable | None:
    """A formula as the device computes it: fp32 IEEE arithmetic, whose x/0, 0*inf and overflow have defined
    results (inf, NaN) that numpy would also warn about; its results answer the family's role names."""
    if fn is None:
        return None

    def formula(*args):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return aliased(fn(*args), aliases)
    return formula


def _formula_view(info: OpInfo) -> OpInfo:
    """``info`` whose formulas (quant modes, special experts, the post stage) compute with IEEE results and
    answer the family's role names."""
    r = info.roles
    return dataclasses.replace(info, quant={q: _ieee(fn, r) for q, fn in info.quant.items()},
                               post=_ieee(info.post, r),
                               specials=tuple((n, c, _ieee(fn, r), reads) for n, c, fn, reads in info.specials))


def run(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    try:
        return DRIVERS[info.semantics](_formula_view(info), scopes, product, dests)
    except OpError as err:
        raise op_error(err, info.roles) from None
