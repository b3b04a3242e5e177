"""The data check of expert ids: which values an ``expertIds`` element may hold.

An id indexes the ``moeExpertNum`` MoE experts, ``[0, moeExpertNum)``, then the special experts the spec declares
(``special NAME: COUNT``), in declaration order, each ``COUNT`` ids wide (the documents: 合法的零专家的ID的值是
[moeExpertNum, moeExpertNum + zeroExpertNum), copy and const experts next). The range is read from the op's
attributes and its ``specials`` (OpInfo); an op without special experts takes ``[0, moeExpertNum)``.  The real
kernels route an id to rank ``id / localExpertNum`` without a bound check (mc2/moe_distribute_dispatch_v2/op_kernel/
moe_distribute_dispatch_v2.h, ``toRankId``), so an id outside the range has no defined result: the reference
rejects it.  Only the pairs the op reads are checked (an inactive token or a masked pair is never routed).
"""
from __future__ import annotations

import numpy as np

from opgen.runtime.errors import OpError
from opgen.runtime.moe_routing import pair_mask
from opgen.runtime.scope import INVALID, Meta, Scope, data


def id_range(info, s: Scope) -> tuple[int, tuple[str, ...]]:
    """(end, names): valid ids are [0, end), end the sum of the attributes ``names`` (moeExpertNum first)."""
    names = ("moeExpertNum",) + tuple(count for _, count, _, _ in info.specials)
    return sum(int(s.attr(n) or 0) for n in names), names


def check_expert_ids(info, s: Scope) -> None:
    """An OpError for the first id (row-major) outside [0, end) among the pairs the op reads."""
    t = s.inputs.get("expertIds")
    if t is None or isinstance(t, Meta) or "moeExpertNum" not in s.attrs:
        return
    ids = data(t)
    if ids.ndim != 2:
        return  # the shape check reports it
    mask = s.inputs.get("xActiveMaskOptional")
    read, _ = pair_mask(ids, None if mask is None or isinstance(mask, Meta) else data(mask))
    end, names = id_range(info, s)
    bad = read & ((ids < 0) | (ids >= end))
    if not bad.any():
        return
    t_, k = (int(i) for i in np.argwhere(bad)[0])
    param = info.roles.get("expertIds", "expertIds")
    shown = [info.roles.get(n, n) for n in names]
    with_values = ", ".join(f"{n}={int(s.attr(r) or 0)}" for n, r in zip(shown, names))
    raise OpError(INVALID, param, f"Parameter {param} of operator {info.name} has incorrect value {int(ids[t_, k])} "
                                  f"at {param}[{t_}][{k}]. It should be an expert id in [0, {end}) = "
                                  f"[0, {' + '.join(shown)}) with {with_values}.")
