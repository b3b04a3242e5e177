"""Model → the portable check core ``op_host/op_tiling/<op_snake>_check.h``, and the part every op shares.

One plain C++17 header per op (standard headers and the shared ``opgen_check_common.h`` only) holding every check of
every product view in the order ``opgen.resolve`` gives them, lowered by
``opgen.lower.cpp`` with the semantics of the Python reference, plus output
shape and dtype inference.  Registered in ``opgen.emit.EMITTERS``.  The OpDef / infershape / tiling / aclnn code
(``opgen.emit.host``) includes it and calls ``Check``, ``InferShapes`` and
``InferDtypes`` on a filled ``Params``.

``opgen_check_common.h`` (``shared_check_core``) holds what no spec determines: the status codes, dtypes,
``TensorDesc`` / ``CheckResult`` and the spec language's semantics (the base class ``EvalBase``).  It is rendered
from the dtype, error-class, builtin and format tables alone and written once into the output tree's shared
folder (``opgen.core.layout``), where ops-transformer keeps the mc2 ops' shared host headers.
"""
from __future__ import annotations

from opgen.core import builtins as B
from opgen.core.artifact import Artifact
from opgen.core.layout import CHECK_COMMON
from opgen.core.dtypes import DTYPES, FORMAT_VALUES
from opgen.emit.registry import emitter
from opgen.emit.render import render
from opgen.lower.literals import cpp_literal
from opgen.lower.cpp import constants, cpp_error_code, real_literal
from opgen.model.decl import Op
from opgen.model.resolve import dim_bindings
from opgen.runtime import dtypes as rt_dtypes


def check_core_path(op: Op) -> str:
    return f"op_host/op_tiling/{op.snake_name}_check.h"


def _dtype_tables() -> tuple[list, list]:
    """(ge enumerator, C++ value) rows of qmax / emax: the dtypes that have one."""
    qmax, emax = [], []
    for d in sorted(DTYPES.values(), key=lambda d: d.ge_value):
        try:
            qmax.append((d.ge_enum, real_literal(rt_dtypes.qmax(d.name))))
        except ValueError:
            pass
        try:
            emax.append((d.ge_enum, cpp_literal(rt_dtypes.emax(d.name))))
        except ValueError:
            pass
    return qmax, emax


def _error_codes() -> list:
    return [(cpp_error_code(cls), code) for cls, code in B.ERROR_CLASSES.items()]


def shared_context() -> dict:
    qmax, emax = _dtype_tables()
    return dict(
        dtypes=sorted(DTYPES.values(), key=lambda d: d.ge_value),
        error_codes=_error_codes(),
        constants=constants(),
        qmax=qmax,
        emax=emax,
        formats=sorted(FORMAT_VALUES.items(), key=lambda kv: kv[1]),
    )


def check_core_context(op: Op) -> dict:
    codes = _error_codes()
    return dict(
        op=op,
        views=[op.views[p.soc] for p in op.products],
        spec_name=op.span.file.rsplit("/", 1)[-1] if op.span else "",
        error_codes=codes,
        failure_codes=[code for _, code in codes if code != 0],
        bound=[(name, t, axis) for name, (t, axis) in dim_bindings(op).items()],
        size_fns=[e for e in op.entries if e.sizes],
    )


def shared_check_core() -> list:
    """The shared header, its path relative to the output tree's shared folder."""
    return [Artifact(CHECK_COMMON, render("cpp/common/op_host/op_tiling/opgen_check_common.h.j2", **shared_context()))]


@emitter
def emit_check_core(op: Op, plans=None) -> list:
    return [Artifact(check_core_path(op), render("cpp/op_host/op_tiling/check.h.j2", **check_core_context(op)))]
