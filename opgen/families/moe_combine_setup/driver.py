"""The moe_combine_setup family's numpy driver: CombineSetup writes no output a caller may read.

The Setup/Teardown family (Ascend 950, semantics §6): the staging buffers carry opaque tails (scales and padding up
to tokenMsgSize, URMA command descriptors); the references fill the documented part (the first H columns of each
staged row, expandIdx, the delivered rows and counts) and leave the rest zero; the specs mark what is unspecified."""
from __future__ import annotations

from typing import Sequence

from opgen.runtime.driving import ep_rank_attrs
from opgen.runtime.reference import OpInfo, allocate
from opgen.runtime.scope import Scope


def moe_combine_setup(info: OpInfo, scopes: list[Scope], product: str, dests: Sequence[int]) -> dict[int, dict]:
    """CombineSetup only sends: its outputs are a comm-quant staging buffer and URMA descriptors.

    With commQuantMode 0 (the only mode its products accept) neither carries data a caller may
    read, so every output is zero here and marked unspecified in the spec; what the op sends is
    observable through CombineTeardown, whose reference rebuilds it.
    """
    return {d: allocate(info, scopes[d]) for d in dests}


DRIVER = moe_combine_setup
RANK_ATTRS = ep_rank_attrs
