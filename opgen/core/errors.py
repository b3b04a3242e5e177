"""The one error a back-end stage raises for a spec construct its target cannot express.

Raised by the static typer (``opgen.model.kinds``) and every lowering (``opgen.lower.*``). It carries the
span of the construct when one is known (an ``opgen.lang.expr.Span``), so the emit stage turns it into a
located diagnostic (``file:line:col: error[E###]``) instead of a traceback."""
from __future__ import annotations


class LoweringError(Exception):
    """``code``: the diagnostic code (``core.diagnostics.CODES``) when the raiser knows better than the emit
    stage's default for its artefact (E201 for the kernel, E203 for the others)."""

    def __init__(self, message: str, span=None, code: str | None = None, also: tuple["LoweringError", ...] = ()):
        super().__init__(message)
        self.message = message
        self.span = span
        self.code = code
        self.also = tuple(also)  # further errors of the same artefact found in the same pass (all are reported)
