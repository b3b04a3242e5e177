"""The one layout of ``<Op>TilingData``: the struct the kernel reads and the host tiling function fills.

``op_kernel/<op>_tiling.h`` declares these fields in this order and ``op_host/op_tiling/<op>_tiling.cpp``
fills each from its ``source``; both emitters read this list, so the two sides cannot disagree on a field.
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.model.decl import Op
from opgen.model.resolve import dim_bindings


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


def tiling_fields(op: Op) -> list[TilingField]:
    """The fields of ``<Op>TilingData`` in declaration order."""
    out: list[TilingField] = []
    for a in op.attrs:
        if a.type in ("int64", "bool"):
            out.append(TilingField("int64_t", a.name, f"attr {a.name} ({a.type})", "attr", a.name))
    seen = {f.name for f in out}
    lets = list(op.lets) + [l for p in op.products for l in p.lets]
    for l in lets:
        if l.name not in seen:
            seen.add(l.name)
            where = "" if l in op.lets else f", product {next(p.soc for p in op.products if l in p.lets)}"
            out.append(TilingField("int64_t", l.name, f"let {l.name}{where}", "let", l.name))
    for name, (tensor, axis) in dim_bindings(op).items():
        if name not in seen:
            seen.add(name)
            out.append(TilingField("int64_t", name, f"dim({tensor}, {axis})", "dim", name))
    for t in op.inputs + op.outputs:
        out.append(TilingField("int32_t", f"dtype_{t.name}", f"ge::DataType of {t.name}", "dtype", t.name))
    for t in op.inputs:
        if has_field(op, t.name):
            doc = f"present({t.name}): 1 when it is passed (with contents where empty means absent)"
            out.append(TilingField("uint32_t", f"has_{t.name}", doc, "has", t.name))
    out += [TilingField("uint64_t", "tilingKey", "10000 + sum of key field i * 10^i", "fixed"),
            TilingField("uint32_t", "aivNum", "vector cores the kernel runs on", "fixed"),
            TilingField("uint64_t", "totalUbSize", "bytes of UB per vector core", "fixed"),
            TilingField("uint64_t", "winSizeBytes", "bytes of one rank's HCCL window (HCCL_BUFFSIZE)", "fixed")]
    return out
