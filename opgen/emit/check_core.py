"""Model → the portable check core ``op_host/op_tiling/<op_snake>_check.h``.

One plain C++17 header per op (standard headers only) holding every check of
every product view in the order ``opgen.resolve`` gives them, lowered by
``opgen.lower.cpp`` with the semantics of the Python reference, plus output
shape and dtype inference.  Registered in ``opgen.emit.EMITTERS``.  The OpDef / infershape / tiling / aclnn code
(``opgen.emit.host``) includes it and calls ``Check``, ``InferShapes`` and
``InferDtypes`` on a filled ``Params``.
"""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.artifact import Artifact
from opgen.core.dtypes import DTYPES, FORMAT_VALUES
from opgen.emit.registry import emitter
from opgen.emit.render import render
from opgen.lower.literals import cpp_literal
from opgen.lower.cpp import constants, cpp_error_code, real_literal, uses
from opgen.model.decl import Op
from opgen.model.resolve import dim_bindings
from opgen.runtime import dtypes as rt_dtypes


def check_core_path(op: Op) -> str:
    return f"op_host/op_tiling/{op.snake_name}_check.h"


def _dtype_tables(op: Op) -> tuple[list, list]:
    """(ge enumerator, C++ value) rows of qmax / emax, only when a scalar expression calls them."""
    qmax, emax = [], []
    if uses(op, "qmax") or uses(op, "emax"):
        for d in sorted(DTYPES.values(), key=lambda d: d.ge_value):
            try:
                qmax.append((d.ge_enum, real_literal(rt_dtypes.qmax(d.name))))
            except ValueError:
                pass
            try:
                emax.append((d.ge_enum, cpp_literal(rt_dtypes.emax(d.name))))
            except ValueError:
                pass
    return (qmax if uses(op, "qmax") else []), (emax if uses(op, "emax") else [])


def check_core_context(op: Op) -> dict:
    qmax, emax = _dtype_tables(op)
    codes = [(cpp_error_code(cls), code) for cls, code in B.ERROR_CLASSES.items()]
    return dict(
        op=op,
        views=[op.views[p.soc] for p in op.products],
        spec_name=op.span.file.rsplit("/", 1)[-1] if op.span else "",
        dtypes=sorted(DTYPES.values(), key=lambda d: d.ge_value),
        error_codes=codes,
        failure_codes=[code for _, code in codes if code != 0],
        constants=constants(),
        bound=[(name, t, axis) for name, (t, axis) in dim_bindings(op).items()],
        qmax=qmax,
        emax=emax,
        size_fns=[e for e in op.entries if e.sizes],
        formats=sorted(FORMAT_VALUES.items(), key=lambda kv: kv[1]),
    )


@emitter
def emit_check_core(op: Op, plans=None) -> list:
    return [Artifact(check_core_path(op), render("cpp/op_host/op_tiling/check.h.j2", **check_core_context(op)))]
