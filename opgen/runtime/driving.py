"""What the numpy drivers of the op families share (each family's driver is its folder's ``driver`` part).

A driver receives the validated scope of every rank and produces each rank's outputs; the op-specific numbers
(capacities, quant formulas, output shapes and dtypes) come from the spec through ``OpInfo``.  Drivers are
written against the aclnn parameter names of their op family (the seed documents' names), which the analyzer
guarantees the spec declares.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from opgen.runtime import moe
from opgen.runtime.errors import OpError
from opgen.runtime.reference import OpInfo
from opgen.runtime.rowbatch import ALL_ROWS, RowBatch
from opgen.runtime.scope import INVALID, Scope

Driver = Callable[[OpInfo, list[Scope], str, Sequence[int]], dict[int, dict[str, np.ndarray]]]
RankAttrs = Callable[[int, Mapping], dict]


# the rank attributes ep_rank_attrs sets (what a test case leaves to the rank rule)
EP_RANK_ATTRS = ("epRankId", "tpRankId")


def ep_rank_attrs(i: int, attrs: Mapping) -> dict:
    """Rank ids of world rank i: epRankId = i // T, tpRankId = i % T, T = max(tpWorldSize, 1)."""
    t = max(int(attrs.get("tpWorldSize", 0) or 0), 1)
    out = {"epRankId": i // t}
    if "tpWorldSize" in attrs or t > 1:
        out["tpRankId"] = i % t
    return out


def put(out: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` into the leading elements of a capacity-sized output."""
    flat = out.reshape(-1)
    v = np.asarray(values).reshape(-1)
    if v.size > flat.size:
        raise OpError(INVALID, "shape", f"{v.size} values do not fit an output of {flat.size} elements")
    flat[:v.size] = v


def topology(s: Scope) -> dict:
    """W, Rs, S, E of one rank's scope, as opgen.runtime.moe's routing takes them."""
    return dict(W=s.attr("epWorldSize"), Rs=s.attr("sharedExpertRankNum"), S=s.attr("sharedExpertNum"),
                E=s.attr("moeExpertNum"))


def tp_size(s: Scope) -> int:
    """T = max(tpWorldSize, 1): the TP slices of a world."""
    return max(s.attrs.get("tpWorldSize", 0), 1)


def formula_output(info: OpInfo, s: Scope, batch: RowBatch, name: str, row_shape: tuple[int, ...]) -> np.ndarray:
    """Output ``name`` of the rank's quant formula over ``batch``, finished to rows of ``row_shape``."""
    value = info.quant[s.attr(info.quant_by)](batch).get(name)
    if value is None:
        raise OpError(INVALID, info.quant_by, f"{info.quant_by} {s.attr(info.quant_by)} has no formula for {name} "
                                              f"with dtype {s.dtype(name)}")
    return batch.finish(name, value, row_shape)


def special_terms(info: OpInfo, st: Scope, E: int, H: int) -> tuple:
    """The spec's special experts on one token owner: consecutive id ranges after the E MoE experts, each term
    its formula over the owner's token rows (``routed(T)`` the row of T for the expert's index in its kind)."""
    out, lo = [], E
    for name, count_attr, formula, _ in info.specials:
        n = int(st.attr(count_attr) or 0)
        if formula is None:
            raise OpError(INVALID, name, f"special expert {name} has no formula on {info.name}: it only declares "
                                         "the ids a dispatch leaves unsent")

        def term(tokens, c, formula=formula, name=name):
            value = formula(RowBatch(st, st, tokens, np.asarray(c), H)).get("Moe")
            if value is None:
                raise OpError(INVALID, name, f"special expert {name} has no value (its formula assigns no Moe)")
            return np.broadcast_to(np.asarray(value, dtype=np.float32), (len(tokens), H))

        out.append(moe.SpecialTerm(lo, lo + n, term))
        lo += n
    return tuple(out)


def post_stage(info: OpInfo, st: Scope, reduced: np.ndarray, out: dict) -> tuple[str, ...]:
    """The spec's `post` stage over every token's fp32 reduced row (BS, H): each output it assigns gets one row
    per token (its shape past the first dim: (1, H), (1, 1), ...). Tokens the mask leaves out reduce to 0.
    Returns the outputs it wrote."""
    batch = RowBatch(st, st, ALL_ROWS, None, reduced.shape[1], count=reduced.shape[0])
    values = info.post(batch, reduced)
    for name, value in values.items():
        out[name][:] = batch.finish(name, value, out[name].shape[1:])
    return tuple(values)
