"""The emitters of a build: each artefact module registers its functions here; this module imports none of them.

An emitter is ``(op, plans) -> list[Artifact]`` (``plans``: the op's ``opgen.emit.plans.Plans``, computed once
per build and shared, so no emitter imports another). ``opgen.emit.pipeline`` imports every artefact module,
which is what registers them."""
from __future__ import annotations

from typing import Callable

EMITTERS: list[Callable] = []


def emitter(fn: Callable) -> Callable:
    if fn in EMITTERS:
        raise ValueError(f"emitter {fn.__qualname__} registered twice")
    EMITTERS.append(fn)
    return fn
