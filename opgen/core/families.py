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
           "Family", "KernelTable"]


FAMILIES: dict[str, Family] = part_attr("facts", "FAMILY", of_type=Family, named_by="name")
