"""The product table: the facts opgen knows per CANN SoC id, one row each.

Every place that behaves differently per product reads a fact from here (through
``ProductView.facts`` in the compiler, through the facts the generated reference's
``INFO`` carries at run time) instead of comparing product id strings.

Which row a product takes (``facts_for``): the row of its own SoC id; a product
without a row (one a spec defines with ``product X "..." extends Y``) takes the
row of the nearest product up its ``extends`` chain that has one, i.e. it runs on
that SoC's hardware.  Its identity stays its own: ``soc`` is its id and
``soc_name`` (the Short_SoC_version its platform reports, which the generated
``ParseSoc`` matches case-insensitively) is its id spelt the CANN way.  A new SoC
with hardware of its own needs one row here.

Pure data (no numpy): the compiler, the runtime, the harness and the twin all read it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable

# assistInfoForCombineOut layouts (semantics.md §2.4, §5)
TRIPLE = "triple"          # (srcRank, tokenIdx, k) per received row, 3 int32 each
EXPAND_IDX = "expand_idx"  # the sender's own expandIdx (slot of each (token, k) inside its expert's block)
ASSIST_LAYOUTS = (TRIPLE, EXPAND_IDX)
# HCCL server type the aclnn layer sets for MC2 ops (semantics.md §1)
AICPU, MTE = "aicpu", "mte"
HCCL_SERVERS = (AICPU, MTE)
# HcclCMDType values (asc-devkit include/adv_api/hccl/hccl_common.h) the products' HCCL cc tilings name
HCCL_CMD_NAMES = {8: "HCCL_CMD_ALLTOALLV", 18: "HCCL_CMD_BATCH_WRITE"}
# The mc2tiling engine constant a server's cc tiling names with SetCommEngine (None: the default engine). The
# A3 and 950 MTE tilings set AIV_ENGINE ("通过不拉起AICPU，提高算子退出性能": no AICPU is launched), the A2 AICPU
# tilings set none (hicann/ops-transformer mc2/moe_distribute_dispatch_v2 op_tiling SetHcommCfg and arch22).
HCCL_COMM_ENGINES = {AICPU: None, MTE: "AIV_ENGINE"}


@dataclass(frozen=True)
class ProductFacts:
    soc: str                       # CANN SoC id, the spec's product name, e.g. "ascend910_93"
    display: str                   # short display name, e.g. "Atlas A3"
    soc_name: str                  # Short_SoC_version the platform reports, e.g. "Ascend910_93"
    npu_arch: int                  # __NPU_ARCH__ of its AI cores
    # the folder of op_kernel/ that holds the kernel entries of its arch, where a product's OpDef config names an
    # entry of its own (`op_file`): the real ops keep the A2/A3 entries in op_kernel/arch22/ and the 950 ones in
    # op_kernel/arch35/ (hicann/ops-transformer mc2/moe_distribute_dispatch_v2/op_host/..._def.cpp: "opFile ->
    # arch22/..._a2.cpp", "arch35/..._apt.cpp"; the op_kernel folders of DispatchV2, CombineV2, CombineAddRmsNorm)
    kernel_dir: str
    ub_bytes: int                  # unified buffer bytes of one vector core (what a TPipe can hand out)
    # The UB bytes the platform reports to a tiling (PlatformAscendC GetCoreMemSize(UB)) and the operator may use:
    # ub_bytes, less what the arch keeps for itself at the top (on __NPU_ARCH__ 3510 the top 8 KiB: the stack).
    platform_ub_bytes: int
    ranks_per_server: int | None   # NPUs of one server, where the code divides by it; None: no code uses it
    assist_layout: str             # one of ASSIST_LAYOUTS
    hccl_server: str               # one of HCCL_SERVERS
    hccl_op_type: int              # the HcclCMDType of its cc tiling (a key of HCCL_CMD_NAMES)
    hccl_alg_config: str           # the algConfig of its cc tiling
    # How its kernels find the other ranks' HCCL windows: None through Hccl::GetWindowsInAddr; a number N by
    # reading windowsIn[] of the HCCL context (HcclCombineOpParam), which lists N ranks, because the arch's
    # GetWindowsInAddr gives no address.
    context_windows: int | None = None
    # Bytes of the HCCL expansion window (windowsExp) its context lists for every rank, where the real ops keep
    # their status area; None: the context lists none (a spec's `state windowsExp` is an error there).
    exp_window: int | None = None
    # The env variables (name, value) that make an unset algorithm attribute ("" / nullptr) select the layered
    # (hierarchy) template past one server in the real ops' tilings of this product; an op reads them where its
    # spec declares them (opgen.model.kernel_paths gives those a cell of their own). (): none do.
    layered_env: tuple[tuple[str, str], ...] = ()
    # Bytes of HCCL's window per rank, in multiples of HCCL_BUFFSIZE: on Ascend 950 it allocates twice HCCL_BUFFSIZE,
    # and the real ops' tilings size totalWinSizeEp so (code: mc2/moe_distribute_dispatch_v2/op_host/op_tiling/
    # arch35/moe_distribute_dispatch_v2_tiling_arch35.cpp SetWorkSpace, "A5 实际物理分配为 HCCL_BUFFSIZE 的 2 倍":
    # totalWinSizeEp = GetMaxWindowSize() * 2; mc2/common/op_host/op_tiling/mc2_tiling_utils.h GetEpWinSize, DAV_3510);
    # the twin allocates that much (opgen.sim.job).
    window_per_buffsize: int = 1

    def as_kwargs(self) -> dict:
        """The fields, in order (what a generated reference writes to rebuild the row)."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


# The enumerators of op::SocVersion, what the op_api layer reads the SoC as (hicann/opbase
# include/nnopbase/opdev/platform.h, in ../shared/cann/headers.tar.gz): a product id is one of them upper-cased,
# or the generated op_api cannot recognise it (it then rejects the call: see op_soc_version).
OP_SOC_VERSIONS = ("ASCEND910", "ASCEND910B", "ASCEND910_93", "ASCEND910_95", "ASCEND950", "ASCEND910E",
                   "ASCEND310", "ASCEND310P", "ASCEND310B", "ASCEND310C", "ASCEND610LITE", "KIRINX90",
                   "KIRIN9030", "ASCEND350")


def op_soc_version(soc: str) -> str | None:
    """The op::SocVersion enumerator of a product id (None: the op_api layer has none for it)."""
    name = soc.upper()
    return name if name in OP_SOC_VERSIONS else None


# Newest first (the order CANN docs list products in).
_ROWS = (
    # Ascend 950 (Ascend950PR / Ascend950DT): __NPU_ARCH__ 3510 (reference/formats.md: "arch35,
    # __NPU_ARCH__==3510"); 256 KiB UB per vector core (asc-devkit's CPU model gives a TPipe that much:
    # impl/basic_api/utils/kernel_utils_mode_cpu.h, 3510 bufferInitLen {Hardware::UB, 1024 * 256}), of which the
    # platform reports 248 KiB, the operator's (code: asc-devkit include/utils/base/sys_constants.h, __NPU_ARCH__
    # 3510: ASC_UB_SIZE = 248 * 1024; impl/basic_api/utils/kernel_utils_constants.h: TOTAL_UB_SIZE = 248 * 1024, where
    # the stack buffers end, TMP_UB_OFFSET 248 KiB; the docs here give no UB size). The real 950 DispatchV2 needs
    # that margin: its tripleQueue ends 32 bytes past the UB it is told (tests/test_real_ops_world.py
    # test_the_real_950_dispatch_overruns_a_ub_it_is_told_whole). assistInfo triples (semantics.md §2.4 "On A3/A5 ... 3 ints per received row");
    # HCCL server MTE (semantics.md §1, CCU only with commAlg ccu, which opgen does not generate).
    # HCCL cc tiling: AlltoAll over fullmesh/pairwise, as the 950 MTE path takes the A3 tiling
    # (hicann/ops-transformer mc2/moe_distribute_dispatch_v2 op_tiling/arch35, and the 950 Setup tilings).
    # Windows from the context: on __NPU_ARCH__ 3510 the public Hccl<AICPU>::GetWindowsInAddr always returns 0
    # (mirror-cann/asc-devkit impl/adv_api/detail/hccl/impl/platform_v310/hccl_aicpu.h) and the context struct
    # lists windowsIn[HCCL_MAX_RANK_NUM_V310 = 64] (impl/adv_api/detail/hccl/common/hccl_inner_def.h); the real 950
    # MTE ops read windowsIn[rank] from it too (mirror-cann/ops-transformer mc2/common/op_kernel/
    # moe_distribute_base.h, HcclCombinOpParam of moe_distribute_comm_ctx.h, HCCL_MTE_MAX_RANK_NUM 64).
    ProductFacts("ascend950", "Ascend 950", "Ascend950", 3510, "arch35", 262144, 248 * 1024, None, TRIPLE, MTE,
                 8, "AlltoAll=level0:fullmesh;level1:pairwise", context_windows=64, window_per_buffsize=2),
    # Atlas A3 (Ascend910_93): dav_c220, __NPU_ARCH__ 2201 (mirror-cann/ops-transformer kernels branch on
    # `__NPU_ARCH__ == 2201` for A2/A3 and `== 3510` for A5); 192 KiB UB, all of it reported (code: asc-devkit
    # impl/basic_api/utils/kernel_utils_constants.h, __NPU_ARCH__ 2201: TOTAL_UB_SIZE = 192 * 1024); triples
    # (semantics.md §2.4); MTE (§1).
    # HCCL cc tiling: hicann/ops-transformer mc2/moe_distribute_{dispatch,combine}_v2 op_tiling SetHcommCfg
    # (AlltoAll=level1:hierarchy for the layered template, which the generated kernels do not implement).
    # windowsExp: its context is HcclContextDef::HcclOpResParam (asc-devkit impl/adv_api/detail/hccl/common/
    # hccl_inner_def.h: winExpSize, localWindowsExp; a peer's windowsExp through rWinStart's RemoteResPtr list), and
    # the real A3 ops keep their status there (mirror-cann/ops-transformer mc2/common/op_kernel/
    # moe_distribute_base.h GetBaseWindStateAddrByRankId). Its size is not documented: 1 MiB is what the real A3
    # kernels assume of it (moe_distribute_dispatch_v2_full_mesh.h reserves STATE_SIZE = 1M for the status where
    # it carves it from the data window instead, and addresses status up to ~1000 KiB), so a kernel that fits
    # 1 MiB runs wherever theirs do; the twin allocates exactly this much.
    ProductFacts("ascend910_93", "Atlas A3", "Ascend910_93", 2201, "arch22", 196608, 196608, None, TRIPLE, MTE,
                 8, "AlltoAll=level0:fullmesh;level1:pairwise", exp_window=1024 * 1024),
    # Atlas A2 (Ascend910B): __NPU_ARCH__ 2201, 192 KiB UB as A3 (all of it reported); 8 NPUs per server (the dispatch tiling's
    # serverNum = epWorldSize / 8, specs/dispatch_v2.spec); A2 fullmesh writes the sender-side expandIdx into
    # assistInfoForCombineOut (semantics.md §2.4, §5); HCCL server AICPU (semantics.md §1: "910B → AICPU").
    # HCCL cc tiling: BatchWrite, algConfig "BatchWrite=level1:fullmesh" as the real A2 fullmesh tilings set it
    # (mirror-cann/ops-transformer mc2/moe_distribute_{dispatch,combine}_v2 op_tiling for arch22; the Mc2CcTilingConfig
    # documents call algConfig reserved on A2, which supports FullMesh only). The kernels send to the ranks of other
    # servers with BatchWrite (Family.batch_write), whose AI CPU server the tiling launches.
    # layered_env: past 8 ranks (epWorldSize <= 8 returns fullmesh first), commAlg nullptr / "" (or "0") is layered
    # when getenv gives HCCL_INTRA_PCIE_ENABLE "1" and HCCL_INTRA_ROCE_ENABLE "0" (strcmp; either unset: fullmesh).
    # code: mc2/moe_distribute_dispatch_v2/op_host/op_tiling/arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp
    # (MoeDistributeDispatchA2CheckCommAlg)
    # code: mc2/moe_distribute_combine_v2/op_host/op_tiling/arch22/moe_distribute_combine_tiling_arch22.cpp
    # (MoeDistributeCombineCheckCommAlg)
    # doc: moe_distribute_dispatch_v2_README.md, commAlg (nullptr和""：仅在此场景下，HCCL_INTRA_PCIE_ENABLE和
    # HCCL_INTRA_ROCE_ENABLE配置生效); aclnnMoeDistributeDispatchV2.md (HCCL_INTRA_PCIE_ENABLE和HCCL_INTRA_ROCE_ENABLE)
    ProductFacts("ascend910b", "Atlas A2", "Ascend910B", 2201, "arch22", 196608, 196608, 8, EXPAND_IDX, AICPU,
                 18, "BatchWrite=level1:fullmesh",
                 layered_env=(("HCCL_INTRA_PCIE_ENABLE", "1"), ("HCCL_INTRA_ROCE_ENABLE", "0"))),
)

PRODUCTS: dict[str, ProductFacts] = {r.soc: r for r in _ROWS}

# Extra options of the ops compile flow for an op's kernels, per product (add_ops_compile_options under an
# ASCEND_COMPUTE_UNIT condition): the A2/A3 kernels synchronise their pipes themselves, so the compiler's automatic
# synchronisation is off there; the 950 kernels build with the defaults.
# code: ops-transformer mc2/moe_distribute_dispatch_v2/op_host/CMakeLists.txt (and the other moe_distribute ops)
KERNEL_COMPILE_OPTIONS: dict[str, tuple[str, ...]] = {
    "ascend910_93": ("--cce-auto-sync=off",),
    "ascend910b": ("--cce-auto-sync=off",),
}


def soc_name_of(soc: str) -> str:
    """The Short_SoC_version of a SoC id without a row: the id with its first letter upper-cased."""
    return soc[:1].upper() + soc[1:]


def facts_for(chain: Iterable[str], table: dict[str, ProductFacts] | None = None) -> ProductFacts:
    """The facts of the first product of ``chain`` (the product, then its ``extends`` ancestors) under the rule
    of this module: its own row, else the nearest ancestor's hardware with its own identity."""
    table = PRODUCTS if table is None else table
    chain = tuple(chain)
    if not chain:
        raise KeyError("no product")
    for soc in chain:
        if soc in table:
            row = table[soc]
            return row if soc == chain[0] else replace(row, soc=chain[0], soc_name=soc_name_of(chain[0]))
    raise KeyError(f"product {chain[0]} has no row in the product table and extends no product that has one "
                   f"(known: {', '.join(table)})")


def known(soc: str, extends: Callable[[str], str | None]) -> bool:
    """Whether ``soc`` reaches a table row, its own or through ``extends`` (soc -> base id or None)."""
    seen = set()
    while soc is not None and soc not in seen:
        if soc in PRODUCTS:
            return True
        seen.add(soc)
        soc = extends(soc)
    return False
