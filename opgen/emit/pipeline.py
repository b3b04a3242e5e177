"""Model → every generated file of an op: runs each registered emitter over one shared ``Plans``.

Importing the artefact modules below is what registers their emitters (``opgen.emit.registry``); nothing else
imports them, and none of them imports another.

Each emitter runs in a context (:func:`emitting`) that turns the ``LoweringError`` a generator raises for a spec
construct its target cannot express (or the ``TypeError`` of a typed lowering helper given a model value it has
no representation for) into a located diagnostic: the span the error carries (the declaration or formula that
stopped it), else the op's. Every emitter of the op runs, so one build reports all of them; :func:`emit` then
raises :class:`EmitError` and no file of the op is produced.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

from opgen.core.artifact import Artifact
from opgen.core.diagnostics import Diagnostic
from opgen.core.errors import LoweringError
from opgen.emit import check_core, docs, examples, host, kernel, reference, tests  # noqa: F401 - registers the emitters
from opgen.emit.cpp_format import Formatter, format_artifacts
from opgen.emit.plans import Plans
from opgen.emit.registry import EMITTERS
from opgen.core.span import find_span
from opgen.model.decl import Op
from opgen.model.roles import missing_roles

# What each artefact module generates, as diagnostics name it, and the code of its lowering errors.
ARTEFACTS = {
    kernel.__name__: ("the Ascend C kernel", "E201"),
    host.__name__: ("the host code", "E203"),
    check_core.__name__: ("the C++ check core", "E203"),
    reference.__name__: ("the numpy reference", "E203"),
    tests.__name__: ("the generated tests", "E203"),
    docs.__name__: ("the docs", "E203"),
    examples.__name__: ("the aclnn example", "E203"),
}


class EmitError(Exception):
    """The diagnostics of an op whose artefacts cannot all be generated (nothing is written for it)."""

    def __init__(self, op: Op, diagnostics: list[Diagnostic], artifacts: list[Artifact] = ()):
        super().__init__("; ".join(f"{d.code}: {d.message}" for d in diagnostics))
        self.op = op
        self.diagnostics = diagnostics
        self.artifacts = list(artifacts)  # what the other emitters produced (never written by a build)


@contextmanager
def emitting(op: Op, module: str, into: list[Diagnostic]):
    """Run one generator of ``op``; a lowering failure becomes a diagnostic appended to ``into``."""
    what, code = ARTEFACTS.get(module, ("the artefacts", "E203"))
    try:
        yield
    except LoweringError as first:
        for err in (first, *first.also):
            _add(into, Diagnostic(err.code or code, f"cannot generate {what} of {op.name}: {err.message}",
                                  err.span or op.span), err.message)
    except TypeError as err:
        _add(into, Diagnostic("E202", f"cannot generate {what} of {op.name}: {err}", op.span), str(err))


def _add(into: list[Diagnostic], d: Diagnostic, cause: str) -> None:
    """Once per cause: emitters sharing a plan (docs and tests read the reference's) meet its error again."""
    if not any(old.span == d.span and old.message.endswith(": " + cause) for old in into):
        into.append(d)


def _roles_first(op: Op) -> list[Diagnostic]:
    """Every emitter reads the op in its family's role names: an op lacking one is refused before any runs
    (E206 at its `semantics`), never met as a missing name deep in a generator."""
    at = find_span(op.source, op.span.file if op.span else "", rf"\bsemantics\s+({op.semantics})\b", op.span)
    return [Diagnostic("E206", message, at or op.span, help_) for message, help_ in missing_roles(op)]


def emit(op: Op, progress: Callable[[str], None] | None = None) -> list[Artifact]:
    """Every generated file of ``op``; ``progress`` (if given) is told each stage as it starts."""
    failed = _roles_first(op)
    if failed:
        raise EmitError(op, failed, [])
    plans = Plans(op, progress)
    out: list[Artifact] = []
    stage = None
    with Formatter() as formatter:  # each emitter's C++ files are formatted while the next emitters run
        for emitter in EMITTERS:
            what = ARTEFACTS.get(emitter.__module__, ("the artefacts", "E203"))[0]
            if progress is not None and what != stage:
                progress(f"emitting {what}")
                stage = what
            with emitting(op, emitter.__module__, failed):
                produced = emitter(op, plans)
                out.extend(produced)
                if not failed:
                    formatter.submit(produced)
        if failed:
            raise EmitError(op, failed, sorted(out, key=lambda a: a.path))
        paths = [a.path for a in out]
        if len(set(paths)) != len(paths):
            dup = sorted({p for p in paths if paths.count(p) > 1})
            raise RuntimeError(f"two emitters produced the same file for {op.name}: {', '.join(dup)}")
        if progress is not None:
            progress("formatting the C++ (clang-format)")
        return sorted(formatter.formatted(out), key=lambda a: a.path)


def emit_shared() -> list[Artifact]:
    """The files every op's artefacts include and no spec determines, relative to the output tree's shared folder
    (``opgen.core.layout.SHARED_DIR``): written once per build, however many specs it builds."""
    # the family kernel headers are copied from templates/cpp/common/op_kernel/ as they are, and those files are
    # already as clang-format lays them out (tests/test_cpp_format.py): formatting them again changes no byte
    return sorted(format_artifacts(check_core.shared_check_core()) + kernel.family_kernel_headers(),
                  key=lambda a: a.path)
