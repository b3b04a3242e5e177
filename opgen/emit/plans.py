"""What several emitters of one op read, computed once per build (torchgen's ``api/``, tblgen's ``Operator``).

The docs quote the generated suite's counts and NPU worlds and the suite prints its cases: both read the one
``suite`` here instead of one emitter calling another. The test-case search validates its cases through the
very reference the build writes, so the reference text is rendered here once and handed to the search."""
from __future__ import annotations

import functools
from typing import Callable

from opgen.core.artifact import Artifact
from opgen.core.errors import LoweringError
from opgen.emit.kernel import kernel_context
from opgen.emit.reference import render_reference
from opgen.model.decl import Op
from opgen.testgen.reference import load_reference
from opgen.testgen.suite import Suite, suite


class Plans:
    def __init__(self, op: Op, progress: Callable[[str], None] | None = None):
        self.op = op
        self.progress = progress  # told what starts when a plan takes long to compute (the CLI's progress)

    @functools.cached_property
    def reference(self) -> tuple[Artifact, ...]:
        return tuple(render_reference(self.op))

    @functools.cached_property
    def kernel_context(self) -> dict:
        """The kernel template's context (``opgen.emit.kernel.kernel_context``: the lowered quant formulas, the
        instances, the UB plan), computed once a build for the kernel's emitter and the host tiling's UB check.
        A kernel that cannot be lowered raises its LoweringError to each reader (an exception is not cached)."""
        return kernel_context(self.op)

    @property
    def kernel_ub_plan(self) -> tuple[bool, object]:
        """(lowered, the kernel's UB plan or None): what the host tiling's UB check renders (``host.ub_check``).
        lowered is False where the kernel cannot be lowered: the kernel's emitter reports that (E201), once."""
        try:
            return True, (self.kernel_context.get("ub") or {}).get("plan")
        except LoweringError:
            return False, None

    @functools.cached_property
    def reference_module(self):
        """The generated reference, loaded (what the example reads its output shapes from)."""
        source = next(a.content for a in self.reference if a.path == "reference.py")
        return load_reference(self.op, source)

    @functools.cached_property
    def suite(self) -> Suite | None:
        """The generated suite's cases (None: the op has no semantics, so no reference to test)."""
        if self.op.semantics is None:
            return None
        source = next(a.content for a in self.reference if a.path == "reference.py")
        if self.progress is not None:
            self.progress("searching test cases")
        return suite(self.op, source)

    @functools.cached_property
    def npu_worlds(self) -> dict[str, list[int]]:
        """Per product, the world sizes of the runnable positive cases (the torchrun commands the docs give)."""
        worlds: dict[str, list[int]] = {}
        for c in self.suite.positive:
            if c["run"] is None:
                worlds.setdefault(c["product"], [])
                if c["world"] not in worlds[c["product"]]:
                    worlds[c["product"]].append(c["world"])
        return {p: sorted(w) for p, w in worlds.items()}

    @property
    def n_checks(self) -> int:
        return sum(len(v.checks) for v in self.op.views.values())
