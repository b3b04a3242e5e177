"""Model → every generated file of an op: runs each registered emitter over one shared ``Plans``.

Importing the artefact modules below is what registers their emitters (``opgen.emit.registry``); nothing else
imports them, and none of them imports another.
"""
from __future__ import annotations

from opgen.core.artifact import Artifact
from opgen.emit import check_core, docs, host, kernel, reference, tests  # noqa: F401 - registers the emitters
from opgen.emit.plans import Plans
from opgen.emit.registry import EMITTERS
from opgen.model.decl import Op


def emit(op: Op) -> list[Artifact]:
    plans = Plans(op)
    out: list[Artifact] = []
    for emitter in EMITTERS:
        out.extend(emitter(op, plans))
    paths = [a.path for a in out]
    if len(set(paths)) != len(paths):
        dup = sorted({p for p in paths if paths.count(p) > 1})
        raise RuntimeError(f"two emitters produced the same file for {op.name}: {', '.join(dup)}")
    return sorted(out, key=lambda a: a.path)
