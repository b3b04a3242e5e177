"""What an op family is: the static facts of a data-movement pattern (one ``facts`` part per family folder).

A family's folder (``opgen/families/<name>/``, see :mod:`opgen.core.family_parts`) holds its row of these facts
beside its driver, world builder and kernel; this module is the row's type, which every layer may read.
"""
from __future__ import annotations

from dataclasses import dataclass

# what the generated suite's round trip checks (see templates/tests/test_op.py.j2)
DISPATCH_TO_COMBINE = "dispatch_to_combine"  # dispatch -> identity experts -> the paired combine gives x*sum(w)
WEIGHTED_SUM = "weighted_sum"                # the returned rows of identity experts combine to x*sum(w)
ROUND_TRIPS = (DISPATCH_TO_COMBINE, WEIGHTED_SUM)

# what a family does with special experts (Family.special_experts)
SPECIALS_COMPUTED = "computed"   # the combine side: each one's formula, on the token's own rank
SPECIALS_UNSENT = "unsent"       # the dispatch side: ids in their ranges are never sent

# The communication algorithms an op's algorithm attribute (commAlg) selects in the real ops (COMM_ALGORITHMS).
FULLMESH = "fullmesh"    # every rank writes its rows straight into each destination rank's window
HIERARCHY = "hierarchy"  # layered: first between servers (superpods) to the same-index rank, then inside them
CCU = "ccu"              # Ascend 950's CCU path (the collective communication unit drives the transfers)
# commAlg value -> the algorithm the real op runs for it. doc (aclnnMoeDistributeDispatchV2.md, commAlg): A2 "" /
# "fullmesh" / "hierarchy" ("fullmesh"：token数据直接发往topk个目标专家所在的卡; "hierarchy"：跨机、机内两次发送); A3 / 950
# "" and "fullmesh_v1" (the fullmesh_v1 template), "fullmesh_v2" (the fullmesh_v2 template), A3 "hierarchy" (分层
# 直驱, the layered template). code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_v2_a3.cpp
# (fullmesh_v1 runs MoeDistributeDispatchV2, fullmesh_v2 MoeDistributeDispatchV2FullMesh: both write each
# destination's window directly; hierarchy MoeDistributeDispatchV2Layered), arch35/..._tiling_arch35.cpp ("ccu").
COMM_ALGORITHMS = {"": FULLMESH, "fullmesh": FULLMESH, "fullmesh_v1": FULLMESH, "fullmesh_v2": FULLMESH,
                   "hierarchy": HIERARCHY, "ccu": CCU}

# The Setup / Teardown families' CommPath.differs: what the real pair's transport is where the generated kernels copy
# by MTE (code: mc2/moe_distribute_combine_setup/op_kernel/arch35/moe_distribute_combine_setup_arch35.h Communication,
# CallJfsDoorbell: write-with-notify work requests into HCCL's URMA send queues, then the doorbell; Init takes
# `GM_ADDR /*commCmdInfoOut*/`, and moe_distribute_dispatch_setup_arch35.h never reads its commCmdInfoOut: the arch35
# kernels write nothing there). The generated CombineSetup writes the window bytes the real one's work requests
# write, at the same places.
URMA_SETUP_TEARDOWN = ("the real Setup / Teardown pair moves the rows by URMA (write-with-notify work requests in "
                       "HCCL's send queues; the arch35 kernels leave commCmdInfoOut unwritten); the generated kernels "
                       "copy them by MTE")
URMA_SETUP_TEARDOWN_DOC = ("实际算子的Setup/Teardown经URMA传输（AI Core将带通知的写请求放入HCCL发送队列；arch35 kernel不写"
                           "commCmdInfoOut），生成的kernel用MTE拷贝")


@dataclass(frozen=True)
class CommPath:
    """How a family's generated kernel reaches the other ranks: the algorithm it implements (a value of
    COMM_ALGORITHMS), the attribute (role) that selects the algorithm in the real ops (an op without it runs
    ``algorithm``), and how the real ops' transport differs where the generated kernel runs the same algorithm
    by other means ("": it does not). The transport itself is a fact of the product (core.products: MTE through
    Hccl or the HCCL context's windows, BatchWrite across servers with Family.batch_write); the table of every
    product x commAlg x world-size class is opgen.model.kernel_paths."""
    algorithm: str = FULLMESH
    attr: str | None = "commAlg"
    differs: str = ""
    differs_doc: str = ""  # the same in the documents' words


def inputs(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, "input") for n in names)


def outputs(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, "output") for n in names)


def attrs(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, "attr") for n in names)


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
    # inside a server, RDMA between servers), its tiling rejects a world past one server unless the family's
    # kernel sends across servers through HCCL BatchWrite (batch_write), as the real A2 ops do.
    one_server_attr: str | None = "epWorldSize"
    # A family whose kernel, in a world past one server where ProductFacts.ranks_per_server says MTE copies stop at
    # the server, sends to every other rank through HCCL BatchWrite (the AICPU server's RDMA writes; the HCCL
    # context of such a world gives no peer address MTE reaches), one task with no Wait whose items each end with
    # their flag, as the real A2 fullmesh kernels send (the bytes of one item land in ascending order, the items of
    # a task in no order: opgen/sim/include/lib/hccl/hccl.h): the int64 attributes (roles) whose sum bounds the
    # items of one call. The host tiling adds 2 items of BATCH_WRITE_ITEM_BYTES per unit to the user workspace,
    # after the per-core parts, and launches the AI CPU cores that serve them. Empty: MTE copies only (the one-server limit stands).
    batch_write: tuple[str, ...] = ()
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
    # The user workspace its kernel needs per vector core on top of opgen/emit/tiling_layout.py's per-pair part, as
    # (bytes per unit, the int64 attribute counting the units), rounded up to 32 bytes (None: none).
    core_workspace: tuple[int, str] | None = None
    # Its kernel's UB plan (the kernel part's, opgen/emit/ub_plan.py), which the tiling checks against the vector
    # core's UB: the tiling fields (by role) its rejection shows, as the real DispatchV2's "exceeds the size limit"
    # shows BS, H, topK and moeExpertNum. Empty: the family's kernel has no plan (its tiling checks no UB).
    ub_check: tuple[str, ...] = ()
    # How its kernel reaches the other ranks (CommPath): the algorithm it implements; a configuration whose
    # algorithm or world size it has no path for is rejected by the spec (tests/test_kernel_paths.py holds that).
    comm_path: CommPath = CommPath()
    # The parameters its driver, world builder and kernel name, as (role, kind "input" / "output" / "attr"): the
    # role is the default name (the aclnn name of the family's first op). An op whose documents name one
    # differently binds it, `role assistInfoForCombine = expandIdx;` (E132), and every part of the family then
    # reads that parameter; opgen/model/decl.py Op.named.
    roles: tuple[tuple[str, str], ...] = ()
    # The input roles an op of the family may leave out (its parts read them as absent, a null tensor, as the
    # documents' optional inputs): every other role is one its parts read unconditionally, so an op of the family
    # declares it or binds it (E132 at the op's `semantics` otherwise).
    optional_roles: tuple[str, ...] = ()

    @property
    def role_kinds(self) -> dict[str, str]:
        return dict(self.roles)

    @property
    def expected_roles(self) -> tuple[tuple[str, str], ...]:
        """The (role, kind) pairs every op of the family declares or binds."""
        return tuple(r for r in self.roles if r[0] not in self.optional_roles)
