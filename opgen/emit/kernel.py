"""Model → the CANN kernel side of one operator (``op_kernel/``), in Ascend C.

Emitted files (paths relative to the op's output directory):

* ``op_kernel/<op>_tiling.h`` — the plain tiling struct ``<Op>TilingData`` (no CANN macros) for every op.
  Its fields follow one rule that the host-side tiling function fills (:func:`tiling_fields`):
  one ``int64_t`` per int64/bool attribute, per let (op lets, then product-only lets) and per bound
  input dim, named as in the spec; ``int32_t dtype_<tensor>`` (ge::DataType) per tensor;
  ``uint32_t has_<input>`` per optional input; then ``tilingKey``, ``aivNum``, ``totalUbSize``,
  ``winSizeBytes``.
* ``op_kernel/<op>.h`` — the templated kernel class, from the ``kernel`` part of the op's family
  (:data:`KERNEL_KINDS`, one per folder of ``opgen/families``; how it is built: :mod:`opgen.emit.kernel_lib`).
* the kernel entries, one per file the products' OpDef configs name (``ProductView.kernel_entry``): a product
  with an ``op_file`` builds ``op_kernel/<arch dir>/<op_file>.cpp`` (``arch22/..._a2.cpp`` as the real ops lay
  them out), the others share ``op_kernel/<op>.cpp``. An entry holds Dispatch over its products' instances alone
  and the ``__global__`` function, named after the op in every entry (CANN's kernel name): both templates over the
  template tiling key's parameters (:mod:`opgen.emit.tpl_key`), Dispatch choosing the instances with ``if
  constexpr``. Beside each entry, ``<entry>_tiling_key.h`` lists the key combinations it is built for
  (``ASCENDC_TPL_SEL``: those its products' instances have).
* ``op_kernel/<op>_tiling_key_decl.h`` — the key's parameters (``ASCENDC_TPL_ARGS_DECL``), for every op: the host
  tiling encodes the key with them (``GET_TPL_TILING_KEY``).
  An op of no family gets no kernel files; one its family's kernel cannot be built for fails the build with a
  located ``LoweringError`` (E201/E202): :func:`kernel_problem` gives its text.
"""
from __future__ import annotations

import re

from opgen.core.artifact import Artifact
from opgen.core.family_parts import part_attr
from opgen.core.layout import (SHARED_KERNEL_BATCH_WRITE, SHARED_KERNEL_CONTEXT, SHARED_KERNEL_HELPERS,
                               SHARED_KERNEL_INCLUDE, SHARED_KERNEL_LIB, SHARED_KERNEL_TYPES, SHARED_KERNEL_WINDOW)
from opgen.emit.kernel_lib import (ArchGuards, KernelKind, KernelPlan, columns_of, common_context, entry_context,
                                   family_gen_context, kernel_entries, tiling_struct_name)
from opgen.emit.kernel_lib import plan_instances as _plan_instances
from opgen.emit.registry import emitter
from opgen.emit.render import render, template_source
from opgen.emit.tpl_key import decl_header, key_rows, sel_header
from opgen.emit.tiling_layout import tiling_fields
from opgen.lower.ascendc import LoweringError
from opgen.model.decl import Op
from opgen.model.roles import in_role_names


KERNEL_KINDS: dict[str, KernelKind] = part_attr("kernel", "KIND", of_type=KernelKind, named_by="semantics")
KERNEL_TEMPLATES = {k: v.template for k, v in KERNEL_KINDS.items()}


def plan_instances(op: Op, kind: KernelKind | None = None) -> KernelPlan:
    """The op's kernel instances (:func:`opgen.emit.kernel_lib.plan_instances`) for its family's kernel, over the
    op in its family's role names (opgen/model/roles.py)."""
    op = in_role_names(op)
    return _plan_instances(op, kind or KERNEL_KINDS[op.semantics])


def kernel_context(op: Op) -> dict:
    """The kernel template's context: the op in its family's role names, which the template is written against."""
    op = in_role_names(op)
    kind = KERNEL_KINDS[op.semantics]
    ctx = kind.context(op, common_context(op, kind))
    return family_gen_context(op, ctx, kind) if kind.header else ctx


def column_builds(op: Op, socs, arch: int) -> tuple[list[dict], list[dict]]:
    """The OpDef columns (tensor -> dtype) of the products ``socs`` of kernel arch ``arch`` (those that build one
    kernel entry, :func:`kernel_entries`) whose builds together compile every kernel instance of theirs at least
    once (a greedy cover: a column compiles the instances whose dtype checks it meets, ArchGuards and all), and the
    columns whose build compiles no instance at all (an OpDef column with no kernel: none, when the OpDef and the
    kernel plan agree). What the compile checks build."""
    op = in_role_names(op)
    plan = plan_instances(op)
    guards = ArchGuards(op)
    socs = [soc for soc in socs if op.views[soc].facts.npu_arch == arch]
    wanted = {i for i, inst in enumerate(plan.instances)
              if arch in guards._type_archs(inst.types) and inst.products & set(socs)}
    columns = []
    for soc in socs:
        for col in columns_of(op, soc):
            if col not in [c for c, _ in columns]:
                got = frozenset(i for i in wanted if all(col[t] == d for t, d in plan.instances[i].checks))
                columns.append((col, got))
    cover, left = [], set(wanted)
    while left:
        col, got = max(columns, key=lambda cg: len(cg[1] & left), default=({}, frozenset()))
        if not got & left:  # plan_instances keeps an instance only for its products' columns
            raise RuntimeError(f"internal: {op.name} instances {sorted(left)} of arch {arch} are in no OpDef column")
        cover.append(col)
        left -= got
    return cover, [col for col, got in columns if not got]


def family_kernel_headers() -> list[Artifact]:
    """The C++ family kernels every op of those families includes, the window layout they share and the kernel
    helpers every kernel includes, relative to the output tree's shared folder: common/op_kernel/ holds them as
    templates/cpp/common/op_kernel/ has them."""
    names = [SHARED_KERNEL_LIB, SHARED_KERNEL_TYPES, SHARED_KERNEL_HELPERS, SHARED_KERNEL_CONTEXT,
             SHARED_KERNEL_BATCH_WRITE, SHARED_KERNEL_WINDOW] + \
        sorted({k.header for k in KERNEL_KINDS.values() if k.header})
    return [Artifact(f"{SHARED_KERNEL_INCLUDE}/{n}", template_source(f"cpp/common/{SHARED_KERNEL_INCLUDE}/{n}"))
            for n in names]


def sel_headers(snake_name: str, entries: dict[str, dict]) -> dict[str, str]:
    """The ASCENDC_TPL_SEL header of each kernel entry (its entry_context): one beside each entry
    (tpl_key.sel_header), or, where the entries of one folder list the same key combinations, one for them all,
    op_kernel/<arch dir>/<op>_tiling_key.h, as the real ops share theirs (code: mc2/moe_distribute_combine_v2/op_kernel/
    arch22/moe_distribute_combine_v2_tiling_key.h, the A2 and A3 entries')."""
    folders: dict[str, list[str]] = {}
    for path in entries:
        folders.setdefault(path.rsplit("/", 1)[0], []).append(path)
    out = {}
    for folder, paths in folders.items():
        lists = {repr((entries[p]["sel"], entries[p]["excluded_keys"])) for p in paths}
        one = len(paths) > 1 and len(lists) == 1
        out.update({p: f"{folder}/{snake_name}_tiling_key.h" if one else sel_header(p) for p in paths})
    return out


def _guard(path: str) -> str:
    """The include guard of a generated header: its path under op_kernel/ in capitals."""
    return re.sub(r"\W", "_", path.removeprefix("op_kernel/")).upper()


# ---- the emitter -------------------------------------------------------------------------------

def kernel_problem(op: Op) -> str | None:
    """Why ``op`` gets no kernel file (None when it gets one): no kernel template for its semantics, names
    the template is written against are missing, or a formula the Ascend C lowering cannot express."""
    if op.semantics not in KERNEL_KINDS:
        return f"no Ascend C kernel template for semantics {op.semantics}"
    try:
        kernel_context(op)
    except LoweringError as err:
        return str(err)
    return None


@emitter
def emit_cpp_kernel(op: Op, plans=None) -> list:
    spec_name = op.span.file.rsplit("/", 1)[-1] if op.span else ""
    s = op.snake_name
    kind = KERNEL_KINDS.get(op.semantics or "")
    # a LoweringError fails the op's build at the declaration or formula (E201)
    ctx = None if kind is None else plans.kernel_context if plans is not None else kernel_context(op)
    struct = tiling_struct_name(op)
    files = [Artifact(f"op_kernel/{s}_tiling.h",
                      render("cpp/op_kernel/tiling.h.j2", op=op, struct=struct, fields=tiling_fields(op),
                             spec_name=spec_name))]
    # the template tiling key's parameters: the host tiling encodes the key with them, kernel or not
    rop = in_role_names(op)
    files.append(Artifact(decl_header(op), render("cpp/op_kernel/tiling_key_decl.h.j2", spec_name=spec_name, op=rop,
                                                  key=key_rows(rop), guard=_guard(decl_header(op)))))
    if kind is not None:
        rop = ctx["op"]  # the op in its family's role names, as the kernel plan names its tensors
        entries = {path: entry_context(rop, ctx, path, socs) for path, socs in kernel_entries(rop).items()}
        dispatch = {path: render("cpp/op_kernel/_dispatch.j2", **ectx) for path, ectx in entries.items()}
        # one Dispatch in <op>_gen.h where every entry's is the same text, else each entry's in the entry
        shared = next(iter(dispatch.values())) if len(entries) > 1 and len(set(dispatch.values())) == 1 else ""
        files.append(Artifact(ctx["body_path"], render(kind.template, spec_name=spec_name, shared_dispatch=shared,
                                                       **ctx)))
        sels = sel_headers(s, entries)
        for path, ectx in entries.items():
            ectx = dict(ectx, sel_include=sels[path].rsplit("/", 1)[-1])
            files.append(Artifact(path, render("cpp/op_kernel/entry.cpp.j2", spec_name=spec_name,
                                               dispatch="" if shared else dispatch[path], **ectx)))
        for header in dict.fromkeys(sels.values()):
            paths = [p for p in entries if sels[p] == header]
            ectx = dict(entries[paths[0]], entry_socs=[soc for p in paths for soc in entries[p]["entry_socs"]])
            files.append(Artifact(header, render("cpp/op_kernel/tiling_key_sel.h.j2", spec_name=spec_name,
                                                 entry=", ".join(paths), guard=_guard(header), **ectx)))
    return files
