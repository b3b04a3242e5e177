"""CANN's template tiling key of a generated op: its parameters, one fact the kernel entries and the host tiling read.

The real ops key their kernel instances with asc-devkit's template tiling key: ``ASCENDC_TPL_ARGS_DECL`` declares the
parameters (name, bit width, the values a UINT parameter may take), ``ASCENDC_TPL_SEL`` lists the combinations the
kernel build compiles an instance for, the entry is a ``__global__ __aicore__`` template over the parameters and the
host sets ``GET_TPL_TILING_KEY(<the values, in declaration order>)`` (code: mc2/moe_distribute_dispatch_v2/op_kernel/
moe_distribute_dispatch_v2_tiling_key_decl.h, arch22/moe_distribute_dispatch_v2_tiling_key.h, arch22/
moe_distribute_dispatch_v2_a3.cpp; op_host/op_tiling/arch22/moe_distribute_dispatch_v2_tiling_arch22.cpp).

A generated op's parameters are what its kernel instances are keyed on: the fields of the spec's ``tiling_key``, in
order, then the quant attribute when no field carries it. Every parameter is a UINT one listing the values its
expression can take (:func:`opgen.model.static_eval.possible_values`); the encoding stores the index of the value in
that list in the parameter's bits.
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.lang.expr import Expr, Name, to_spec
from opgen.model.decl import Op, snake
from opgen.model.static_eval import possible_values

# the bit widths asc-devkit's template_argument.h names (ASCENDC_TPL_<n>_BW)
BIT_WIDTHS = (1, 2, 4, 8)


@dataclass(frozen=True)
class KeyParam:
    name: str            # the spec's name: a tiling_key field, or the quant attribute
    expr: Expr           # what the host tiling evaluates for it
    values: tuple        # the values ASCENDC_TPL_UINT_DECL lists, in order
    digit: int | None    # its place among the spec's tiling_key fields (None: the quant attribute no field carries)

    @property
    def macro(self) -> str:
        """The parameter's name in ASCENDC_TPL_ARGS_DECL / ASCENDC_TPL_SEL (TILINGKEY_<NAME>, as the real ops)."""
        return f"TILINGKEY_{snake(self.name).upper()}"

    @property
    def entry_param(self) -> str:
        """The entry's template parameter (Key<Name>)."""
        return "Key" + "".join(w[:1].upper() + w[1:] for w in snake(self.name).split("_"))

    @property
    def bit_width(self) -> int:
        """The fewest bits of ASCENDC_TPL_<n>_BW that hold the index of every value."""
        return next(bw for bw in BIT_WIDTHS if (1 << bw) >= len(self.values))


def key_params(op: Op) -> list[KeyParam]:
    """The op's template tiling key parameters, in ASCENDC_TPL_ARGS_DECL (and GET_TPL_TILING_KEY) order."""
    out = [KeyParam(name, e, tuple(possible_values(e, op)), digit) for digit, (name, e) in enumerate(op.tiling_key)]
    if op.quant_by and not any(isinstance(e, Name) and e.id == op.quant_by for _, e in op.tiling_key):
        out.append(KeyParam(op.quant_by, Name(op.quant_by), tuple(sorted(q.value for q in op.quant_modes)), None))
    return out


def encode(params: list[KeyParam], values) -> int:
    """GET_TPL_TILING_KEY of ``values`` (one per parameter): parameter i fills the next bit_width bits, least
    significant first, with the index of its value (asc-devkit's FastEncodeTilingKeyDirect)."""
    key, shift = 0, 0
    for p, v in zip(params, values, strict=True):
        key |= p.values.index(v) << shift
        shift += p.bit_width
    return key


def decl_header(op: Op) -> str:
    """op_kernel/<op>_tiling_key_decl.h: ASCENDC_TPL_ARGS_DECL, which the host tiling and every entry include."""
    return f"op_kernel/{op.snake_name}_tiling_key_decl.h"


def sel_header(entry: str) -> str:
    """The ASCENDC_TPL_SEL header of the kernel entry ``entry`` (op_kernel/[<arch dir>/]<file>.cpp), beside it."""
    return entry.removesuffix(".cpp") + "_tiling_key.h"


def key_rows(op: Op) -> list[dict]:
    """The parameters as the key headers and the entries' templates show them."""
    return [dict(macro=kp.macro, param=kp.entry_param, name=kp.name, bw=kp.bit_width, values=kp.values,
                 spec=to_spec(kp.expr)) for kp in key_params(op)]
