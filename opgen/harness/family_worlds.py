"""The op families' test worlds, by family name: each family folder's ``world`` part (opgen/core/family_parts.py)."""
from __future__ import annotations

import dataclasses
from typing import Mapping

from opgen.core.family_parts import part_attr
from opgen.core.products import ProductFacts
from opgen.harness.testworld import World, rank_metas, values
from opgen.runtime.roles import aliased, to_op_names

# family -> (case, attrs, product facts, special ranges) -> the case's positive world
BUILDERS = part_attr("world", "BUILDER")
# prelude family -> (world of the Teardown after it, attrs) -> its inputs per rank
PRELUDE_INPUTS = part_attr("world", "PRELUDE_INPUTS", optional=True)
# family -> (ref, case, inputs, rank, attrs, output, expected) -> the written index, None when all of it is written;
# a family without one writes every output whole
WRITTEN_REGIONS = part_attr("world", "WRITTEN_REGION", optional=True)


def generic(case: dict, attrs: dict, facts: ProductFacts, specials: tuple = ()) -> World:
    """Values for every input, for an op of no family (a spec without `semantics`)."""
    metas = rank_metas(case)
    return World(inputs=[{n: None if m is None else values(case, r, n, m) for n, m in ms.items()}
                         for r, ms in metas.items()])


def role_case(case: dict, roles: Mapping[str, str]) -> dict:
    """``case`` with the op's parameter names replaced by the family's role names (what its builder reads; the
    data of a tensor is keyed by that name, so an op that renames a parameter gets the same data)."""
    if not roles:
        return case
    back = {n: r for r, n in roles.items()}

    def rename(m: Mapping) -> dict:
        return {back.get(k, k): v for k, v in m.items()}

    out = dict(case, inputs=rename(case["inputs"]))
    for key in ("attrs", "out_dtypes", "env"):
        if key in case:
            out[key] = rename(case[key])
    if "rank_shapes" in case:
        out["rank_shapes"] = {r: rename(m) for r, m in case["rank_shapes"].items()}
    return out


def build(semantics: str, case: dict, attrs: dict, facts: ProductFacts, specials: tuple = (),
          roles: Mapping[str, str] | None = None) -> World:
    """The world of one case; ``facts`` are the case product's (the generated reference's ``INFO.fact``); ``roles``
    the family's parameters the op names differently (role -> the op's name): the builder sees role names, the
    world's inputs are keyed by the op's names and answer role names too."""
    roles = dict(roles or {})
    back = {n: r for r, n in roles.items()}
    world = BUILDERS.get(semantics, generic)(role_case(case, roles), {back.get(k, k): v for k, v in attrs.items()},
                                             facts, specials)
    if not roles:
        return world
    return dataclasses.replace(world, inputs=[aliased(to_op_names(inp, roles), roles) for inp in world.inputs],
                               roles=roles)


def prelude_inputs(semantics: str, world: World, attrs: dict, roles: Mapping[str, str] | None = None) -> list[dict]:
    """Per rank, the inputs the prelude op (``semantics``) gets in front of a Teardown world: the same tokens
    and routes, and what the op before the prelude would have passed it (on the prelude op's names: ``roles``)."""
    if semantics not in PRELUDE_INPUTS:
        raise ValueError(f"no prelude inputs for {semantics!r}")
    return [to_op_names(inp, roles or {}) for inp in PRELUDE_INPUTS[semantics](world, attrs)]
