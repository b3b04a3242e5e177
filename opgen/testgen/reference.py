"""The generated numpy reference of an op, loaded at build time from the text `opgen build` writes.

Case generation validates every case through the very ``validate`` the generated suite later calls, so
the reference text the build renders (``opgen.emit.plans``) is executed as a private module; nothing is
written and ``sys.modules`` is left alone.
"""
from __future__ import annotations

import types

from opgen.model.decl import Op


def load_reference(op: Op, source: str) -> types.ModuleType:
    """Execute ``source`` (the op's generated ``reference.py``, rendered by the caller) as a private module."""
    module = types.ModuleType(f"_opgen_testgen_{op.snake_name}")
    module.__file__ = f"<opgen testgen: {op.snake_name}/reference.py>"
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own output
    return module
