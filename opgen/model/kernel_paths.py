"""The kernel-path table: per product x commAlg x quant mode x world-size class, which path the generated kernel
runs, or why it has none.

Read from data only: the algorithm the family's kernel implements and the attribute that selects one
(core.family.CommPath, COMM_ALGORITHMS), the product's transport facts (core.products.ProductFacts:
ranks_per_server, context_windows) with the family's BatchWrite path (Family.batch_write), and the product view's
domains and quant modes. A cell without a path is one the spec must reject (a `limit` in the product's block
naming the parameter, or the implicit transport check opgen.model.resolve derives from the same facts):
tests/test_kernel_paths.py walks the cells and fails on an accepted one without a path. The generated docs list
each product's paths and the cells opgen does not build (templates/docs/aclnn_op.md.j2).
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.core.families import FAMILIES
from opgen.core.family import CCU, COMM_ALGORITHMS, HIERARCHY, CommPath
from opgen.core.products import ProductFacts
from opgen.lang.expr import Int, Str
from opgen.model.decl import Op, ProductView

# The transports of the generated kernels (what KernelPath.transport names), with the documents' wording.
MTE_HCCL = "mte"                   # MTE copies into the peers' windows, found through Hccl::GetWindowsInAddr
MTE_CONTEXT = "mte_context"        # MTE copies into the peers' windowsIn[] read from the HCCL context
MTE_BATCH_WRITE = "mte_batch_write"  # within one server MTE; past it HCCL BatchWrite (AI CPU, RDMA) to every other rank
TRANSPORT_DOCS = {
    MTE_HCCL: "MTE直接写入各卡的HCCL窗口（Hccl::GetWindowsInAddr）",
    MTE_CONTEXT: "MTE直接写入各卡的HCCL窗口（HCCL上下文中的windowsIn[]）",
    MTE_BATCH_WRITE: "跨server时经HCCL BatchWrite（AI CPU，RDMA）发送至其他所有卡（含本server的卡）：一次BatchWrite，条目末尾为标志位，不等待",
}
# How the real op's transport differs on the cells the generated kernel runs by MTE_BATCH_WRITE (Atlas A2 past one
# server). code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_a2.h and
# mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_a2.h (the fullmesh A2 kernels past 8 ranks:
# one BatchWrite per call to every rank, its own server's included, no Wait, one item per rank ending with the flag);
# the generated kernels send the same way, an item per (local expert, rank) block instead of per rank.
BATCH_WRITE_DIFFERS = (
    "the real A2 fullmesh kernel packs one BatchWrite item per rank; the generated kernel sends one per (local "
    "expert, rank) block (DispatchV2: and one per status entry), each ending with its flag",
    "实际算子每卡一个BatchWrite条目，生成的kernel每个（本地专家，卡）块一个条目（DispatchV2另有每个状态条目一个），各自以标志位结尾")
# The real ops' paths opgen does not build, by algorithm (the cells of another algorithm than the family's).
MISSING_ALGORITHM_DOCS = {HIERARCHY: "分层（hierarchy）模板", CCU: "CCU路径"}


@dataclass(frozen=True)
class WorldClass:
    """World sizes [lo, hi] of the op's world attribute that one transport covers (hi None: unbounded)."""
    lo: int
    hi: int | None
    name: str  # "one server", "across servers", "within the context's windows", "past the context's windows", "any"

    def contains(self, n: int) -> bool:
        return n >= self.lo and (self.hi is None or n <= self.hi)

    @property
    def text(self) -> str:
        return f"[{self.lo}, {self.hi}]" if self.hi is not None else f">= {self.lo}"


@dataclass(frozen=True)
class KernelPath:
    algorithm: str     # the algorithm the generated kernel runs (a value of COMM_ALGORITHMS)
    transport: str     # a key of TRANSPORT_DOCS
    differs: str = ""  # how the real op's path for the cell differs ("": the same algorithm and transport)
    differs_doc: str = ""


@dataclass(frozen=True)
class Cell:
    op: str
    soc: str
    comm_alg: str | None     # the algorithm attribute's value (None: the op has no such attribute)
    algorithm: str           # what the real op runs for it
    quant_mode: int | None   # None: the op has no quant modes
    world_attr: str | None   # the op's world-size attribute (None: the family has none)
    world: WorldClass
    path: KernelPath | None  # None: the generated kernel has no path for the cell
    missing: str = ""        # why not, naming the real op's path (English)
    missing_doc: str = ""    # the same for the docs
    env: tuple[tuple[str, str], ...] = ()  # the env variables (name, value) set in the cell (ProductFacts.layered_env)

    @property
    def env_text(self) -> str:
        return " and ".join(f"{k}={v}" for k, v in self.env)


def _world_domain(view: ProductView, name: str | None) -> tuple[int, int | None]:
    """The [lo, hi] of the world attribute's domain on the product (2 and None where it does not bound it)."""
    a = next((a for a in view.attrs if a.name == name), None) if name else None
    if a is None or a.domain is None:
        return 2, None
    d = a.domain
    if d.is_range:
        r = d.range
        lo = r.lo.value + (0 if r.lo_closed else 1) if isinstance(r.lo, Int) else 2
        hi = r.hi.value - (0 if r.hi_closed else 1) if isinstance(r.hi, Int) else None
        return lo, hi
    ints = [e.value for e in d.items if isinstance(e, Int)]
    return (min(ints), max(ints)) if ints else (2, None)


def world_classes(facts: ProductFacts, has_batch_write: bool, lo: int, hi: int | None) -> list[WorldClass]:
    """The product's world sizes [lo, hi] split where its transport changes: past the ranks of one server (MTE
    copies stop there) and past the windows the HCCL context lists."""
    cuts = sorted(c for c in ((facts.ranks_per_server, "one server", "across servers"),
                              (facts.context_windows, "within the context's windows", "past the context's windows"))
                  if c[0])
    out, start, name = [], lo, "any"
    for n, below, above in cuts:
        if start <= n and (hi is None or hi > n):
            out.append(WorldClass(start, n, below))
            start, name = n + 1, above
    out.append(WorldClass(start, hi, name))
    return out


def _path(comm: CommPath, facts: ProductFacts, batch_write: bool, algorithm: str, world: WorldClass,
          env: tuple[tuple[str, str], ...] = ()) -> tuple[KernelPath | None, str, str]:
    if algorithm != comm.algorithm:
        what = MISSING_ALGORITHM_DOCS.get(algorithm, algorithm)
        by, by_doc = (f" with {' and '.join(f'{k}={v}' for k, v in env)}",
                      f"在{'且'.join(f'{k}={v}' for k, v in env)}时") if env else ("", "")
        return (None, f"the value{by} selects the real op's {algorithm} path; the generated kernel implements "
                      f"{comm.algorithm} only", f"该取值{by_doc}选择实际算子的{what}，opgen未生成该路径")
    past_server = facts.ranks_per_server is not None and (world.hi is None or world.hi > facts.ranks_per_server)
    if facts.context_windows and (world.hi is None or world.hi > facts.context_windows):
        n = facts.context_windows
        return (None, f"the HCCL context lists {n} ranks' windows to MTE kernels (the real MTE ops' too); larger "
                      "worlds need the real op's CCU path, which opgen does not build",
                f"HCCL上下文最多列出{n}个卡的窗口（实际算子的MTE路径同样），超过{n}卡需走实际算子的CCU路径，opgen未生成该路径")
    if past_server and not batch_write:
        return (None, "MTE copies stop at the server; the generated kernel has no transport across servers",
                "跨server的传输opgen未生成（MTE仅能写入本server内的卡）")
    if past_server:
        differs, differs_doc = BATCH_WRITE_DIFFERS
        return KernelPath(algorithm, MTE_BATCH_WRITE, "; ".join(x for x in (differs, comm.differs) if x),
                          "；".join(x for x in (differs_doc, comm.differs_doc) if x)), "", ""
    transport = MTE_CONTEXT if facts.context_windows else MTE_HCCL
    return KernelPath(algorithm, transport, comm.differs, comm.differs_doc), "", ""


def comm_alg_values(op: Op, view: ProductView, comm: CommPath) -> tuple[str | None, ...]:
    """The values of the op's algorithm attribute the product accepts (by its domain; the default alone where the
    product does not support it or reads it as its default); (None,) when the op has none."""
    name = op.named(comm.attr) if comm.attr else None
    a = next((a for a in view.attrs if a.name == name), None) if name else None
    if a is None:
        return (None,)
    if a.name in view.unsupported_attrs or a.ignored or a.domain is None:
        return (a.default,)
    return tuple(e.value for e in a.domain.items if isinstance(e, Str))


def _layered_env(op: Op, facts: ProductFacts) -> tuple[tuple[str, str], ...]:
    """The product's env variables that select the layered path for an unset commAlg, where the op declares them
    all (its spec reads them); () otherwise."""
    declared = {e.name for e in op.envs}
    return facts.layered_env if facts.layered_env and all(k in declared for k, _ in facts.layered_env) else ()


def cells(op: Op) -> list[Cell]:
    """Every cell of the op's kernel-path table, in product, commAlg (an unset one again with the env variables
    that select the layered path, ProductFacts.layered_env), quant mode and world order."""
    family = FAMILIES.get(op.semantics or "")
    if family is None:
        return []
    comm = family.comm_path
    world_attr = op.named(family.one_server_attr) if family.one_server_attr else None
    out = []
    for soc, view in op.views.items():
        facts = view.facts
        lo, hi = _world_domain(view, world_attr)
        classes = world_classes(facts, bool(family.batch_write), lo, hi)
        layered_env = _layered_env(op, facts)
        runs = [(value, ()) for value in comm_alg_values(op, view, comm)]
        runs += [("", layered_env) for value, _ in runs if value == "" and layered_env]
        for value, env in runs:
            algorithm = comm.algorithm if value is None else COMM_ALGORITHMS.get(value, value)
            for q in view.quant_modes or (None,):
                for w in classes:
                    # the env variables choose the layered path past one server only
                    alg = HIERARCHY if env and facts.ranks_per_server and w.lo > facts.ranks_per_server else algorithm
                    path, missing, missing_doc = _path(comm, facts, bool(family.batch_write), alg, w, env)
                    out.append(Cell(op.name, soc, value, alg, q, world_attr, w, path, missing, missing_doc, env))
    return out


def doc_rows(op: Op, view: ProductView) -> list[dict]:
    """The product's kernel paths for the docs, one row per (commAlg value, env, world class), quant modes merged (the
    path does not depend on them): commAlg, world sizes, the path's documents' text or why none is built."""
    rows: dict = {}
    for c in cells(op):
        if c.soc != view.soc:
            continue
        key = (c.comm_alg, c.env, c.world)
        if key in rows:
            continue
        rows[key] = dict(comm_alg=c.comm_alg, env=c.env, attr=op.named(FAMILIES[op.semantics].comm_path.attr or ""),
                         world_attr=c.world_attr, lo=c.world.lo, hi=c.world.hi, built=c.path is not None,
                         transport=TRANSPORT_DOCS[c.path.transport] if c.path else "",
                         differs=c.path.differs_doc if c.path else "", missing=c.missing_doc)
    return list(rows.values())
