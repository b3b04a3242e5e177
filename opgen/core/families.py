"""The op families a spec can name with ``semantics``: one row of static facts each.

A family is a data-movement pattern (the aclnn parameter names its code is written against).  Each layer
registers its own part keyed by the family name, where it may import it:

* ``opgen.runtime.drivers``  ``DRIVERS`` (the numpy driver) and ``RANK_ATTRS`` (per-rank attributes);
* ``opgen.harness.testworld`` ``BUILDERS`` (the positive world), ``PRELUDE_INPUTS`` (for a family that is
  another's prelude);
* ``opgen.harness.testkit``  ``WRITTEN_REGIONS`` (what a device writes of capacity-shaped outputs);
* ``opgen.emit.kernel``      ``KERNEL_KINDS`` (the Ascend C kernel template and the names it needs).

``tests/test_families.py`` checks that every family has every part and that the parser accepts exactly these
names.  Code that behaves differently per family reads these facts or those registries, never the name.
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.core.products import TRIPLE

# what the generated suite's round trip checks (see templates/tests/test_op.py.j2)
DISPATCH_TO_COMBINE = "dispatch_to_combine"  # dispatch -> identity experts -> the paired combine gives x*sum(w)
WEIGHTED_SUM = "weighted_sum"                # the returned rows of identity experts combine to x*sum(w)
ROUND_TRIPS = (DISPATCH_TO_COMBINE, WEIGHTED_SUM)

# what a family does with special experts (Family.special_experts)
SPECIALS_COMPUTED = "computed"   # the combine side: each one's formula, on the token's own rank
SPECIALS_UNSENT = "unsent"       # the dispatch side: ids in their ranges are never sent


@dataclass(frozen=True)
class KernelTable:
    """A fixed-size table of the family's kernel whose use grows with the call: the product of ``factors`` (each a
    sum of spec names) must stay within ``capacity`` entries.  Tiling checks it (``kernel.<name>``, reported on
    ``param``) after the op's own rules, so a call the documents reject is reported by their rule first, on the
    products whose assist layout is in ``layouts`` (the kernel path that uses the table); the kernel traps past it
    too."""
    name: str
    param: str
    factors: tuple[tuple[str, ...], ...]
    capacity: int
    layouts: tuple[str, ...]
    what: str


@dataclass(frozen=True)
class Family:
    name: str
    doc: str
    round_trip: str | None = None       # one of ROUND_TRIPS; None: the suite has no round trip for it
    dispatch_invariants: bool = False   # counts, assist info and rows are checked against the routes
    shared_expert_x: bool = False       # the combine adds the shared experts' rows (sharedExpertX)
    prelude: str | None = None          # the family whose kernel fills the HCCL windows first (twin pipelines)
    no_tp_reference: str | None = None  # why the reference has no tpWorldSize > 1 data path (None: it has one)
    seed_opaque: tuple[str, ...] = ()   # outputs whose values the seed leaves to product and version (NPU runs
                                        # compare them only through the partner op)
    # The world-size attribute of a family whose generated kernel reaches the other ranks' HCCL windows with
    # plain MTE copies: on a product whose servers hold ProductFacts.ranks_per_server ranks (Atlas A2: HCCS
    # inside a server, RDMA between servers), its tiling rejects a world past one server, since the kernels do
    # not implement the cross-server HCCL transport (RDMA / BatchWrite) the real A2 ops use.
    one_server_attr: str | None = "epWorldSize"
    # The outputs its numpy driver and its kernel write, besides those the spec's quant formulas assign: any other
    # declared output keeps no contents, which a spec must say with `output X unspecified "why";` (opgen/model/
    # written.py: a build fails without it, E204, and the front end wants the reason, E127).
    writes: tuple[str, ...] = ()
    # What the family does with the spec's `special` experts (the ids after the MoE experts): SPECIALS_COMPUTED,
    # its driver and kernel compute each one's formula (`special NAME: COUNT "doc" { Moe = ...; }`); SPECIALS_UNSENT,
    # it sends nothing to those ids and the spec declares their ranges alone (`special NAME: COUNT "doc";`), so the
    # worlds route tokens to them; None: a spec of the family declares none.
    special_experts: str | None = None
    # The output the family writes from each token's reduced row (a cast of the fp32 row to its dtype), the dtype
    # the returned rows travel in, and the output its quant formulas assign (the row one sender returns). A spec
    # may replace that last step by a `post` stage over the reduced row (opgen/model/decl.py PostStage), which
    # then writes the outputs itself. None: the family does not reduce (no `post` stage).
    reduced: str | None = None
    # Whether its kernel can split a quant formula at a `send` (opgen/model/decl.py Send): the part before it runs
    # on the rank that sends the row, the sent values travel, the rest runs on the rank that receives them.
    quant_send: bool = False
    # The HCCL windows its kernel can keep the status area in (a spec's `window ... { state PLACE = ...; }`, one
    # of opgen/model/decl.py WINDOW_PLACES): windowsExp only where the kernel reads it from the HCCL context.
    status_places: tuple[str, ...] = ("windowsIn",)
    # The fixed-size tables of its kernel that tiling keeps within their capacity (KernelTable).
    kernel_tables: tuple[KernelTable, ...] = ()


_ROWS = (
    Family("moe_dispatch", "DispatchV2: tokens to the ranks of their top-K experts (semantics.md §2)",
           round_trip=DISPATCH_TO_COMBINE, dispatch_invariants=True, special_experts=SPECIALS_UNSENT,
           status_places=("windowsIn", "windowsExp"),
           seed_opaque=("assistInfoForCombineOut", "epRecvCountsOut", "tpRecvCountsOut"),
           writes=("assistInfoForCombineOut", "epRecvCountsOut", "expertTokenNumsOut", "expandScalesOut",
                   "tpRecvCountsOut")),
    Family("moe_combine", "CombineV2: expert rows back to their tokens, weighted (semantics.md §5)",
           round_trip=WEIGHTED_SUM, shared_expert_x=True, writes=("xOut",), special_experts=SPECIALS_COMPUTED,
           reduced="xOut", quant_send=True, status_places=("windowsIn", "windowsExp"),
           # one flag per (token, k) and shared-expert slot of a data state in the status area: COMBINE_FLAGS_HALF /
           # FLAG_BYTES of templates/cpp/op_kernel/_helpers.j2 (Atlas A2 flags per expert block instead)
           kernel_tables=(KernelTable("status_slots", "globalBS", (("maxBS",), ("K", "sharedExpertNum")), 10240,
                                      (TRIPLE,), "row-slot flags one data state of the kernel's status area holds"),),
           no_tp_reference="the CombineV2 reference has no TP (ReduceScatterV) path: the documents give no row "
                           "order for it"),
    Family("moe_dispatch_setup", "DispatchSetup: stage the rows in a local buffer y and send them (semantics.md §6)",
           writes=("expandIdxOut",)),
    Family("moe_dispatch_teardown", "DispatchTeardown: deliver the sent rows in DispatchV2's row order (semantics.md §6)",
           prelude="moe_dispatch_setup", writes=("expandXOut", "assistInfoForCombineOut", "expertTokenNumsOut")),
    Family("moe_combine_setup", "CombineSetup: send each (local expert, src rank) chunk back to its owner's window (semantics.md §6)"),
    Family("moe_combine_teardown", "CombineTeardown: read each pair's row at expandIdx in its expert's block and reduce (semantics.md §6)",
           round_trip=WEIGHTED_SUM, prelude="moe_combine_setup", writes=("xOut",)),
)

FAMILIES: dict[str, Family] = {f.name: f for f in _ROWS}
