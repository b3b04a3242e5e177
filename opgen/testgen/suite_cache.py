"""The test-case search's results, cached by content: the search reads the model and the generated reference,
nothing else (no span, no spec text), so its result is a function of the model's canonical text (the printer:
two specs print alike exactly when their models are equal, tests/test_roundtrip.py), the reference's text and
the generator.  A spec edit that leaves both alone (a comment, blank lines, moved declarations the model does
not order by) then skips the search, the slowest stage of a build.

Entries are pickles in ``<cache dir>/search/`` (opgen/core/cache_dir.py), written by an atomic rename; one that
cannot be read back is a miss.
"""
from __future__ import annotations

import pickle
from typing import Callable, TypeVar

from opgen.core import cache_dir
from opgen.core.files import atomic_write
from opgen.core.fingerprint import content_key, generator_fingerprint
from opgen.model.decl import Op
from opgen.model.printer import print_op

T = TypeVar("T")
FORMAT = "opgen-search-cache 1"


def cached_search(op: Op, reference_source: str, search: Callable[[], T]) -> T:
    """``search()``, or what it returned before for this model, reference and generator."""
    d = cache_dir.subdir("search")
    if d is None:
        return search()
    key = content_key(FORMAT, generator_fingerprint(), print_op(op), reference_source)
    path = d / key[:2] / f"{key}.pickle"
    try:
        stored_key, result = pickle.loads(path.read_bytes())
        if stored_key == key:
            return result
    except Exception:  # absent, torn or from another pickle protocol: a miss, never a failed build
        pass
    result = search()
    try:
        atomic_write(path, pickle.dumps((key, result), protocol=pickle.HIGHEST_PROTOCOL), durable=False)
    except OSError:
        pass
    return result
