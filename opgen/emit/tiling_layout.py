"""The one layout of ``<Op>TilingData``: the struct the kernel reads and the host tiling function fills.

``op_kernel/<op>_tiling.h`` declares these fields in this order and ``op_host/op_tiling/<op>_tiling.cpp``
fills each from its ``source``; both emitters read this list, so the two sides cannot disagree on a field.
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.model.decl import Op
from opgen.model.resolve import dim_bindings, layout_lets


@dataclass(frozen=True)
class TilingField:
    ctype: str       # its C++ type
    name: str        # field of <Op>TilingData
    doc: str         # the struct's comment
    source: str      # "attr" | "let" | "dim" | "dtype" | "has" | "fixed": where the tiling function takes it from
    spec: str = ""   # the spec name it comes from ("" for the fixed fields)


def has_field(op: Op, name: str) -> bool:
    """Whether the tiling data carries has_<name>: an input that can be absent on some product (optional, or
    declared empty_absent there)."""
    t = op.tensor(name)
    return t is not None and t.role == "input" and (
        t.optional or t.empty_absent or any(name in p.empty_absent_inputs for p in op.products))


# The HCCL tiling blobs of kernel_tiling/kernel_tiling.h (generated at CANN build time from asc-devkit
# include/adv_api/hccl/hccl_tilingdata.h; in ../shared/cann/headers.tar.gz): opaque, filled by the host's
# AscendC::Mc2CcTilingConfig::GetTiling and read by the kernel's Hccl::InitV2 / SetCcTilingV2.
HCCL_TILING_BYTES = {"Mc2InitTiling": 64, "Mc2CcTiling": 512}


# The user workspace the host tiling asks for, per pair of vector cores (on top of CANN's system workspace): the
# kernels exchange per-core values through it (row counts, per-expert slot counts).
WORKSPACE_PER_CORE_PAIR = 512
# A family's kernel may need more per vector core after the per-pair part: Family.core_workspace. After both, the
# HCCL BatchWrite items of a family that sends across servers (Family.batch_write), 32 bytes each as the AICPU
# client reads them (asc-devkit include/adv_api/hccl/hccl.h BatchWriteItem).
BATCH_WRITE_ITEM_BYTES = 32
# The items a kernel builds in UB before each copy to the workspace (_batch_write.j2 BW_CHUNK; the UB plan counts them)
BATCH_WRITE_CHUNK = 16


# How long the kernels' polls of a peer's flag wait: HCCL_EXEC_TIMEOUT, read by the host tiling under the rule CANN
# gives it for communication the AI vector cores orchestrate (HCCL_OP_EXPANSION_MODE=AIV), which is how these
# kernels communicate: [0, 1091] s, default 1091, 0 or above 1091 taken as 1091 (CANN 8.5 environment variable
# reference, HCCL_EXEC_TIMEOUT: https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/850/maintenref/
# envvar/envref_07_0078.html).
EXEC_TIMEOUT_ENV = "HCCL_EXEC_TIMEOUT"
EXEC_TIMEOUT_AIV_MAX_S = 1091

# The env variable HCCL sizes each communication group's window with, which a host tiling reads for its group
# (mc2tiling::GetCclBufferSize; code: mc2/common/op_host): the one env a window's size can come from. An attribute
# expression is the other source (the MC2 context ops' ccl_buffer_size).
CCL_BUFFER_ENV = "HCCL_BUFFSIZE"


def ub_bytes_fn(op: Op) -> str:
    """The function of the host tiling source that gives the UB a vector core of its kernel needs (a family with
    a UB plan: Family.ub_check), which the host tiling calls."""
    return f"{op.name}UbBytes"


def hccl_cc_field(index: int) -> str:
    """The Mc2CcTiling field of the op's communication group ``index`` (0: the first ``comm`` group)."""
    return f"mc2CcTiling{index + 1}"


def tiling_fields(op: Op) -> list[TilingField]:
    """The fields of ``<Op>TilingData`` in declaration order.  An op that communicates starts with the HCCL
    tilings, as the real MoE tiling data do (hicann/ops-transformer mc2/moe_distribute_dispatch_v2/op_kernel/
    moe_distribute_dispatch_v2_tiling.h: Mc2InitTiling mc2InitTiling; Mc2CcTiling mc2CcTiling1; ...): the init
    tiling must come first, since SetCcTilingV2 takes a cc tiling's offset from it."""
    out: list[TilingField] = []
    if op.hccl_groups:  # (an MC2 context domain has no HCCL client: code: the V2 tiling skips SetHcommCfg for it)
        out.append(TilingField("Mc2InitTiling", "mc2InitTiling", "hccl init tiling (Mc2CcTilingConfig::GetTiling)",
                               "hccl"))
        for i, g in enumerate(op.hccl_groups):
            out.append(TilingField("Mc2CcTiling", hccl_cc_field(i),
                                   f"hccl cc tiling of the {g.domain} group {g.attr}", "hccl", g.attr))
    # Fields of the family's parameters are named by role (opgen/model/roles.py): the tiling data is private to
    # the host tiling and the kernel, whose template reads one set of names whatever the op calls them.
    role = op.role_of
    for a in op.attrs:
        if a.type in ("int64", "bool"):
            out.append(TilingField("int64_t", role(a.name), f"attr {a.name} ({a.type})", "attr", a.name))
        elif a.type == "float":  # fp32, as the kernels compute with it (the real tilings copy a float attr)
            out.append(TilingField("float", role(a.name), f"attr {a.name} (float)", "attr", a.name))
    seen = {f.name for f in out}
    lets = list(op.lets) + [l for p in op.products for l in p.lets]
    for l in lets:
        if l.name not in seen:
            seen.add(l.name)
            where = "" if l in op.lets else f", product {next(p.soc for p in op.products if l in p.lets)}"
            out.append(TilingField("int64_t", l.name, f"let {l.name}{where}", "let", l.name))
    # the HCCL window layout (the spec's `window`): the kernels address the window with these, and only these
    for w in [w for w in [op.window] + [p.window for p in op.products] if w is not None]:
        for l in layout_lets(op, w):
            if l.name not in seen:
                seen.add(l.name)
                out.append(TilingField("int64_t", l.name, f"let {l.name}, window {w.domain}", "let", l.name))
    for name, (tensor, axis) in dim_bindings(op).items():
        if name not in seen:
            seen.add(name)
            out.append(TilingField("int64_t", name, f"dim({tensor}, {axis})", "dim", name))
    for t in op.inputs + op.outputs:
        out.append(TilingField("int32_t", f"dtype_{role(t.name)}", f"ge::DataType of {t.name}", "dtype", t.name))
    for t in op.inputs:
        if has_field(op, t.name):
            doc = f"present({t.name}): 1 when it is passed (with contents where empty means absent)"
            out.append(TilingField("uint32_t", f"has_{role(t.name)}", doc, "has", t.name))
    out += [TilingField("uint64_t", "tilingKey", "the template tiling key the host set (GET_TPL_TILING_KEY)", "fixed"),
            TilingField("uint32_t", "aivNum", "vector cores the kernel runs on", "fixed"),
            TilingField("uint64_t", "totalUbSize", "bytes of UB per vector core", "fixed"),
            TilingField("uint64_t", "winSizeBytes", "bytes of one rank's HCCL window (HCCL_BUFFSIZE)", "fixed"),
            TilingField("uint64_t", "pollTimeoutUs", "µs a poll of a peer's flag waits before the kernel gives up "
                        "(HCCL_EXEC_TIMEOUT)", "fixed")]
    if op.comm_groups:
        out.append(TilingField("uint32_t", "serverRanks", "ranks per server where MTE copies stop at the server and "
                               "the kernel sends to other servers through HCCL BatchWrite (0: MTE reaches every rank)",
                               "fixed"))
    return out
