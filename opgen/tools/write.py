"""Deterministic, atomic, write-if-changed output with a manifest per op.

Layout: ``<out>/<op_snake>/...`` plus ``<out>/<op_snake>/MANIFEST.json`` which
records the spec's hash and every generated file's hash; ``<out>/common/`` (``opgen.core.layout``) holds what
every op shares, with a manifest of its own that names no spec.  The manifest is
what lets a build remove files it no longer produces (and only those), and
what lets ``--check`` tell a stale file from a hand-edited one.
"""
from __future__ import annotations

import hashlib
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from opgen.core.artifact import Artifact
from opgen.core.files import atomic_write
from opgen.core.fingerprint import GENERATOR_VERSION

MANIFEST = "MANIFEST.json"
CACHE = ".opgen-cache.json"  # local, untracked: which spec + generator produced each op directory
_SAFE_DIR = re.compile(r"[a-z][a-z0-9_]*\Z")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class OpOutput:
    """Everything one op contributes to the output tree."""
    directory: str                 # "<op_snake>"
    spec_name: str
    spec_sha256: str
    files: dict[str, bytes]        # relative posix path -> content (manifest excluded)

    def manifest(self) -> bytes:
        doc = {
            "generator": f"opgen {GENERATOR_VERSION}",
            "files": {p: sha256(c) for p, c in sorted(self.files.items())},
        }
        if self.spec_name:  # the shared folder's files come from no spec
            doc.update(spec=self.spec_name, spec_sha256=self.spec_sha256)
        return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def op_output(directory: str, spec_name: str, spec_text: str, artifacts: list[Artifact]) -> OpOutput:
    return _output(directory, spec_name, sha256(spec_text.encode("utf-8")), artifacts)


def shared_output(directory: str, artifacts: list[Artifact]) -> OpOutput:
    """What every op shares (``opgen.core.layout.SHARED_DIR``): written like an op's folder, from no spec."""
    return _output(directory, "", "", artifacts)


def _output(directory: str, spec_name: str, spec_sha256: str, artifacts: list[Artifact]) -> OpOutput:
    if not _SAFE_DIR.match(directory):
        raise ValueError(f"unsafe output directory name {directory!r}")
    files: dict[str, bytes] = {}
    for a in artifacts:
        p = PurePosixPath(a.path)
        if p.is_absolute() or ".." in p.parts or str(p) == MANIFEST or not p.parts:
            raise ValueError(f"unsafe generated path {a.path!r}")
        files[str(p)] = a.content.encode("utf-8")
    return OpOutput(directory, spec_name, spec_sha256, files)


def _inside(root: Path, rel: str) -> Path:
    target = (root / rel).resolve()
    if root.resolve() not in target.parents and target != root.resolve():
        raise ValueError(f"{rel} escapes the output directory")
    return target


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def manifest_files(out: Path, directory: str) -> dict[str, str]:
    """{relative path: sha256} recorded by the last build of ``directory`` (empty if none)."""
    return _old_manifest(out / directory)


def _old_manifest(op_dir: Path) -> dict[str, str]:
    data = _read(op_dir / MANIFEST)
    if data is None:
        return {}
    try:
        files = json.loads(data.decode("utf-8")).get("files", {})
    except (ValueError, AttributeError):
        return {}
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


class OutputError(Exception):
    """The output tree cannot be written: a file where a directory must be, no permission, a full or read-only
    disk (the CLI's exit 4, one line, never a traceback)."""


@contextmanager
def _writing(path: Path):
    try:
        yield
    except OSError as err:
        raise OutputError(f"cannot write {err.filename or path}: {err.strerror or err}") from None


@dataclass
class BuildReport:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


def build(out: Path, outputs: list[OpOutput]) -> BuildReport:
    report = BuildReport()
    with _writing(out):
        out.mkdir(parents=True, exist_ok=True)
    for o in outputs:
        op_dir = _inside(out, o.directory)
        old = _old_manifest(op_dir)
        for rel, data in sorted(o.files.items()):
            target = _inside(op_dir, rel)
            if _read(target) == data:
                report.unchanged += 1
                continue
            with _writing(target):
                atomic_write(target, data)
            report.written.append(f"{o.directory}/{rel}")
        for rel in sorted(set(old) - set(o.files)):
            try:
                target = _inside(op_dir, rel)
            except ValueError:
                continue  # a manifest entry pointing outside: never follow it
            if target.is_file():
                with _writing(target):
                    target.unlink()
                report.removed.append(f"{o.directory}/{rel}")
                _prune_empty_dirs(target.parent, op_dir)
        manifest = o.manifest()
        if _read(op_dir / MANIFEST) != manifest:  # last: a build interrupted before this re-runs cleanly
            with _writing(op_dir / MANIFEST):
                atomic_write(op_dir / MANIFEST, manifest)
            report.written.append(f"{o.directory}/{MANIFEST}")
        else:
            report.unchanged += 1
    return report


def _prune_empty_dirs(d: Path, stop: Path) -> None:
    while d != stop and stop in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent


@dataclass(frozen=True)
class Problem:
    path: str
    kind: str  # "missing" | "stale" | "hand-edited" | "obsolete"

    def __str__(self) -> str:
        return f"{self.kind}: {self.path}"


def check(out: Path, outputs: list[OpOutput]) -> list[Problem]:
    """What differs between the tree on disk and what the specs generate (nothing is written)."""
    problems: list[Problem] = []
    for o in outputs:
        op_dir = out / o.directory
        old = _old_manifest(op_dir)
        wanted = dict(o.files)
        wanted[MANIFEST] = o.manifest()
        for rel, data in sorted(wanted.items()):
            on_disk = _read(op_dir / rel)
            name = f"{o.directory}/{rel}"
            if on_disk is None:
                problems.append(Problem(name, "missing"))
            elif on_disk != data:
                # Matches what the last build recorded → the spec changed; otherwise someone edited it.
                edited = rel != MANIFEST and old.get(rel) is not None and old.get(rel) != sha256(on_disk)
                problems.append(Problem(name, "hand-edited" if edited else "stale"))
        for rel in sorted(set(old) - set(o.files)):
            if (op_dir / rel).is_file():
                problems.append(Problem(f"{o.directory}/{rel}", "obsolete"))
    return problems


# ---- no-change rebuilds --------------------------------------------------------------------------
#
# Emitting every artefact of an op takes seconds (the test-case search).  ``CACHE`` records, per op directory,
# the build key (opgen/tools/build_cache.py: the spec's path and text and the generator fingerprint) of the
# build that wrote it; a build with the same key whose files still match their manifest would write the same
# bytes, so it skips that op without emitting or reading anything else.


def _read_cache(out: Path) -> dict:
    data = _read(out / CACHE)
    try:
        doc = json.loads(data.decode("utf-8")) if data else {}
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def unchanged_directory(out: Path, key: str) -> str | None:
    """The op directory the build ``key`` wrote last into ``out``, if nobody touched its files since."""
    directory = next((d for d, k in _read_cache(out).items() if k == key and _SAFE_DIR.match(d)), None)
    if directory is None:
        return None
    op_dir = out / directory
    recorded = _old_manifest(op_dir)
    if not recorded:
        return None
    for rel, digest in recorded.items():
        data = _read(op_dir / rel)
        if data is None or sha256(data) != digest:
            return None
    return directory


def remember_build(out: Path, keys: dict[str, str]) -> None:
    """Record ``{op directory: build key}`` of the ops just written into ``out``."""
    cache = _read_cache(out)
    cache.update(keys)
    data = (json.dumps(cache, indent=2, sort_keys=True) + "\n").encode("utf-8")
    if _read(out / CACHE) != data:
        with _writing(out / CACHE):
            atomic_write(out / CACHE, data)
