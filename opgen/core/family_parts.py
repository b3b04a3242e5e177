"""Where op families live: one folder per family, ``opgen/families/<name>/``, holding every part of it.

A family (``semantics NAME;`` in a spec) is one unit: adding one is adding its folder, and no registry elsewhere
names it.  Its parts are one module per layer, so that each layer loads only the part it may import (a layer never
reaches up, tests/test_layers.py):

==========  ========  =====================================================================================
part        layer     what it defines
==========  ========  =====================================================================================
facts       core      ``FAMILY``: the row of static facts (:class:`opgen.core.family.Family`)
driver      runtime   ``DRIVER`` (the numpy data movement over all ranks), ``RANK_ATTRS`` (per-rank attributes)
world       harness   ``BUILDER`` (a case's positive world); optional ``PRELUDE_INPUTS`` (the inputs it gets in
                      front of the family it is a prelude of), ``WRITTEN_REGION`` (what a device writes of
                      capacity-shaped outputs)
kernel      emit      ``KIND``: the Ascend C kernel kind (:class:`opgen.emit.kernel_lib.KernelKind`), whose
                      template is the folder's ``kernel.cpp.j2``
==========  ========  =====================================================================================

Each layer's registry calls :func:`load_family_parts` with its part's name; ``opgen.tools.imports`` counts that
call as an import of every family's module of that part, so the import graph (and its layer test) sees it.
"""
from __future__ import annotations

import functools
import importlib
from pathlib import Path
from types import ModuleType

# part module -> the layer (sub-package of opgen) whose rules its imports follow
PARTS = {"facts": "core", "driver": "runtime", "world": "harness", "kernel": "emit"}
KERNEL_TEMPLATE = "kernel.cpp.j2"
PACKAGE = "opgen.families"
ROOT = Path(__file__).resolve().parents[1] / "families"


class FamilyPartError(LookupError):
    """A family folder lacks a part, or a part lacks what it must define."""


def family_names() -> tuple[str, ...]:
    """The families: the sub-packages of ``opgen/families``, in name order."""
    return tuple(sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()))


def template_name(family: str) -> str:
    """The renderer's name of a family's kernel template (``opgen.emit.render`` reads it from the folder)."""
    return f"families/{family}/{KERNEL_TEMPLATE}"


@functools.lru_cache(maxsize=None)
def load_family_parts(part: str) -> dict[str, ModuleType]:
    """Family name -> its ``part`` module, for every family; a folder without that part is an error."""
    if part not in PARTS:
        raise ValueError(f"no family part {part!r} (parts: {', '.join(PARTS)})")
    out = {}
    for name in family_names():
        module = f"{PACKAGE}.{name}.{part}"
        try:
            out[name] = importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
            raise FamilyPartError(f"op family {name} has no {part} part: opgen/families/{name}/{part}.py "
                                  f"(the {PARTS[part]} layer loads it; opgen/core/family_parts.py)") from None
    return out


def part_attr(part: str, attr: str, *, optional: bool = False, of_type: type | None = None,
              named_by: str | None = None) -> dict:
    """Family name -> the value ``attr`` of its ``part`` module (families without it left out when ``optional``);
    with ``of_type``, each value is one of that type whose field ``named_by`` is its family's name."""
    out = {}
    for name, module in load_family_parts(part).items():
        if hasattr(module, attr):
            out[name] = value = getattr(module, attr)
            if of_type is not None and (not isinstance(value, of_type) or getattr(value, named_by) != name):
                raise FamilyPartError(f"opgen/families/{name}/{part}.py: {attr} must be the {of_type.__name__} "
                                      f"whose {named_by} is {name!r}")
        elif not optional:
            raise FamilyPartError(f"opgen/families/{name}/{part}.py defines no {attr} "
                                  f"(opgen/core/family_parts.py lists what each part defines)")
    return out
