"""The op families a spec can name with ``semantics``: the registry of their rows of static facts.

Each family is one folder, ``opgen/families/<name>/``, with its parts for every layer (opgen/core/family_parts.py);
this module collects the ``facts`` parts.  ``tests/test_families.py`` checks that every family has every part and
that the parser accepts exactly these names.  Code that behaves differently per family reads these facts or the
other parts, never the name.
"""
from __future__ import annotations

from opgen.core.family import (DISPATCH_TO_COMBINE, ROUND_TRIPS, SPECIALS_COMPUTED, SPECIALS_UNSENT, WEIGHTED_SUM,
                               Family, KernelTable)
from opgen.core.family_parts import part_attr

__all__ = ["DISPATCH_TO_COMBINE", "FAMILIES", "ROUND_TRIPS", "SPECIALS_COMPUTED", "SPECIALS_UNSENT", "WEIGHTED_SUM",
           "Family", "KernelTable", "roles_text"]


FAMILIES: dict[str, Family] = part_attr("facts", "FAMILY", of_type=Family, named_by="name")


def roles_text() -> str:
    """Every family's roles by kind, as `opgen explain roles` prints them: the names its parts read, which an op
    declares under these names or binds (`role ROLE = PARAM;`); optional inputs in brackets (an op may leave them
    out)."""
    lines = []
    for name, family in FAMILIES.items():
        lines.append(f"{name}: {family.doc}")
        for kind in ("input", "output", "attr"):
            roles = [f"[{r}]" if r in family.optional_roles else r for r, k in family.roles if k == kind]
            if roles:
                lines.append(f"  {kind}s: {', '.join(roles)}")
    return "\n".join(lines) + "\n"
