"""The one error a back-end stage raises for a spec construct its target cannot express.

Raised by the static typer (``opgen.model.kinds``) and every lowering (``opgen.lower.*``). It carries the
span of the construct when one is known (an ``opgen.lang.expr.Span``), so the emit stage turns it into a
located diagnostic (``file:line:col: error[E###]``) instead of a traceback."""
from __future__ import annotations


class LoweringError(Exception):
    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.message = message
        self.span = span
