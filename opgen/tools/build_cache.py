"""The content-addressed build cache: an op's generated files, found by a hash of everything they depend on.

The key (:func:`build_key`) is the spec's text and its path as given (diagnostics and every generated header
name it) and the generator fingerprint (opgen's version, code, grammar and templates, the rendering libraries'
and Python's versions); nothing else reaches the output (the emitters read no environment and no other file).
An entry holds the op directory and every file as the cold build produced it, so a hit writes the bytes a cold
build writes.  Entries live in ``<cache dir>/build/`` (opgen/core/cache_dir.py), each one file written by an
atomic rename; a torn or foreign entry fails its checks (gzip's CRC, the key it records) and is a miss.
"""
from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from opgen.core import cache_dir
from opgen.core.files import atomic_write
from opgen.core.fingerprint import content_key
from opgen.tools.write import OpOutput, sha256

FORMAT = "opgen-build-cache 1"


def build_key(spec_path: str, spec_text: str, fingerprint: str) -> str:
    return content_key(FORMAT, fingerprint, spec_path, spec_text)


@dataclass(frozen=True)
class Store:
    root: Path

    @classmethod
    def open(cls) -> "Store | None":
        """The user's build cache, or None when caching is off or its directory cannot be made."""
        d = cache_dir.subdir("build")
        return cls(d) if d is not None else None

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json.gz"

    def get(self, key: str, spec_name: str, spec_text: str | None) -> OpOutput | None:
        """The entry of ``key`` (None: a miss); ``spec_text`` None for the shared folder, which has no spec."""
        try:
            doc = json.loads(gzip.decompress(self._path(key).read_bytes()).decode("utf-8"))
        except (OSError, EOFError, zlib.error, ValueError):
            return None  # absent, unreadable or torn: a miss
        if not isinstance(doc, dict) or doc.get("key") != key or not isinstance(doc.get("files"), dict):
            return None
        files = {str(p): str(c).encode("utf-8") for p, c in doc["files"].items()}
        if any(PurePosixPath(p).is_absolute() or ".." in PurePosixPath(p).parts for p in files):
            return None
        return OpOutput(str(doc["directory"]), spec_name,
                        sha256(spec_text.encode("utf-8")) if spec_text is not None else "", files)

    def put(self, key: str, output: OpOutput) -> None:
        doc = {"key": key, "directory": output.directory,
               "files": {p: c.decode("utf-8") for p, c in sorted(output.files.items())}}
        data = gzip.compress(json.dumps(doc, ensure_ascii=False, sort_keys=True).encode("utf-8"), 1, mtime=0)
        try:
            atomic_write(self._path(key), data, durable=False)
        except OSError:
            pass  # a full or read-only cache only costs the next build its speed
