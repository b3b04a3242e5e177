"""A hash of the generator itself: opgen's version, its code, grammar and templates, the libraries that render
them and the Python running them.  Generated output is a function of the spec (text and path) and of this."""
from __future__ import annotations

import functools
import hashlib
import os
import sys
from importlib import resources

from opgen import __version__
from opgen.core.templates import template_root

GENERATOR_VERSION = "1"  # part of every manifest and of the fingerprint
# clang_format lays out every generated C++ file (opgen/emit/cpp_format.py)
_LIBRARIES = ("jinja2", "lark", "numpy", "ml_dtypes", "clang_format")
SOURCES = (".py", ".lark", ".j2", ".clang-format")  # the generator's files whose contents decide its output


@functools.lru_cache(maxsize=1)
def generator_fingerprint() -> str:
    h = hashlib.sha256(f"opgen {__version__} generator {GENERATOR_VERSION} python {sys.version_info[:2]}".encode())
    # the templates' .h files: the C++ family kernels, copied into the output as they are
    for package, root, suffixes in (("opgen", resources.files("opgen"), SOURCES),
                                    ("opgen.templates", template_root(), SOURCES + (".h",))):
        for name, entry in sorted(_walk(root), key=lambda p: p[0]):
            if name.endswith(suffixes):
                h.update(f"{package}/{name}\0".encode())
                h.update(entry.read_bytes())
    versions = _library_versions()
    for dist in _LIBRARIES:
        h.update(f"{dist}={versions.get(dist, '?')}".encode())
    return h.hexdigest()


def _library_versions() -> dict[str, str]:
    """{distribution: version} of the rendering libraries as the import system finds them: the first
    ``<name>-<version>.dist-info`` (or ``.egg-info``) along ``sys.path``, which is where importlib.metadata looks
    too, without importing it (a tenth of a build that finds everything in its cache)."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or "-" not in stem:
                continue
            dist, _, version = stem.partition("-")
            dist = dist.lower().replace("-", "_").replace(".", "_")
            if dist in _LIBRARIES and dist not in found:
                found[dist] = version.partition("-")[0]
    return found


def _walk(root, prefix: str = ""):
    for entry in root.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from _walk(entry, name + "/")
        else:
            yield name, entry


def content_key(kind: str, *parts: str) -> str:
    """A cache key: the hash of ``parts``, each length-prefixed (no two different lists hash alike by shifting
    text from one part to the next)."""
    h = hashlib.sha256(kind.encode())
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()
