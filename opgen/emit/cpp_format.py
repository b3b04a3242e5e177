"""Every generated C++ file formatted by the real clang-format with ops-transformer's ``.clang-format``.

The generated op folder drops into that repository, whose files follow its style file; a hand-written imitation
of clang-format drifted from it (thousands of changed lines in one header), so the real formatter runs instead.
The version is pinned (pyproject.toml) and part of the generator fingerprint: another clang-format release may
lay out the same code differently, and output must be byte-identical across runs and machines.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import subprocess
import tempfile
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

from opgen.core import cache_dir
from opgen.core.artifact import Artifact
from opgen.core.files import atomic_write
from opgen.core.fingerprint import content_key

VERSION = "18.1.8"  # the clang-format wheel pyproject.toml pins
CPP_SUFFIXES = (".cpp", ".h")
STYLE = resources.files("opgen.emit").joinpath("ops_transformer.clang-format")
CACHE_FORMAT = "opgen-format-cache 1"


class FormatterMissing(RuntimeError):
    """The pinned clang-format is not installed (a broken install of opgen, not a spec error)."""


@functools.lru_cache(maxsize=1)
def _found() -> tuple[str, str]:
    """(the clang-format binary the ``clang-format`` wheel ships, its ``--version`` line), checked once a process."""
    spec = find_spec("clang_format")
    if spec is None or not spec.submodule_search_locations:
        raise FormatterMissing(f"opgen needs the clang-format {VERSION} wheel: pip install clang-format=={VERSION}")
    binary = Path(list(spec.submodule_search_locations)[0]) / "data" / "bin" / "clang-format"
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout
    if f"version {VERSION}" not in version:
        raise FormatterMissing(f"opgen needs clang-format {VERSION}, found: {version.strip()} "
                               f"(pip install clang-format=={VERSION})")
    return str(binary), version.strip()


def executable() -> str:
    """The clang-format binary the ``clang-format`` wheel ships (its package data, found without importing it)."""
    return _found()[0]


@functools.lru_cache(maxsize=1)
def _style_text() -> str:
    return STYLE.read_text(encoding="utf-8")


def is_cpp(path: str) -> bool:
    return path.endswith(CPP_SUFFIXES)


def _flat(path: str) -> str:
    """An artefact's file name in the formatter's temp folder: the path's folders joined, so equal base names in
    two folders never meet (clang-format reads the name: it is part of the format cache's key)."""
    return path.replace("/", "__")


class Formatter:
    """clang-format runs started while the other emitters go on, their results collected at the end.

    :meth:`submit` starts one clang-format process over an emitter's C++ files (the check core's header, the
    largest, is formatted while the test-case search runs); :meth:`formatted` waits for them.  Each file is
    formatted on its own, so the bytes do not depend on how files are grouped into runs.  With caching on
    (``opgen.core.cache_dir``; off under ``--no-cache``) a file already formatted once is read from
    ``<cache dir>/format/``, keyed by its text, its temp name, the style file and clang-format's version."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="opgen-format-")
        self._style = contextlib.ExitStack()
        self._style_path = self._style.enter_context(resources.as_file(STYLE))
        self._store = cache_dir.subdir("format")
        self._runs: list[tuple[subprocess.Popen, list[str], Path]] = []
        self._files: dict[str, Path] = {}   # artefact path -> its temp file (formatted in place)
        self._keys: dict[str, str] = {}     # artefact path -> format cache key (caching on)
        self._done: dict[str, str] = {}     # artefact path -> formatted text

    def __enter__(self) -> "Formatter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop any run still going (an emitter failed) and remove the temp files."""
        for proc, _, _ in self._runs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._runs = []
        self._style.close()
        self._tmp.cleanup()

    def submit(self, artifacts) -> None:
        """Start formatting the C++ files among ``artifacts`` (the others are left alone)."""
        todo = []
        for a in artifacts:
            if not is_cpp(a.path):
                continue
            if self._store is not None:
                key = self._key(a)
                self._keys[a.path] = key
                hit = self._read(key)
                if hit is not None:
                    self._done[a.path] = hit
                    continue
            f = self._files[a.path] = Path(self._tmp.name) / _flat(a.path)
            f.write_text(a.content, encoding="utf-8")
            todo.append(a.path)
        if not todo:
            return
        cmd = [executable(), "-i", f"--style=file:{self._style_path}", *(str(self._files[p]) for p in todo)]
        errors = Path(self._tmp.name) / f"run{len(self._runs)}.stderr"  # a file: a pipe nobody reads can fill
        with open(errors, "wb") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        self._runs.append((proc, todo, errors))

    def formatted(self, artifacts) -> list:
        """``artifacts`` with every C++ file's text as clang-format lays it out (each submitted before)."""
        for proc, paths, errors in self._runs:
            if proc.wait() != 0:
                raise subprocess.CalledProcessError(proc.returncode, proc.args, stderr=errors.read_bytes())
            for p in paths:
                text = self._done[p] = self._files[p].read_text(encoding="utf-8")
                if self._store is not None:
                    self._write(self._keys[p], text)
        self._runs = []
        return [Artifact(a.path, self._done[a.path]) if is_cpp(a.path) else a for a in artifacts]

    # ---- the format cache -------------------------------------------------------------------------------
    @staticmethod
    def _key(a) -> str:
        return content_key(CACHE_FORMAT, _found()[1], _style_text(), _flat(a.path), a.content)

    def _path(self, key: str) -> Path:
        return self._store / key[:2] / f"{key}.cpp"

    def _read(self, key: str) -> str | None:
        try:
            head, _, text = self._path(key).read_bytes().partition(b"\n")
        except OSError:
            return None
        if head.decode("ascii", "replace") != f"{key} {hashlib.sha256(text).hexdigest()}":
            return None  # torn or foreign: a miss
        return text.decode("utf-8")

    def _write(self, key: str, text: str) -> None:
        data = text.encode("utf-8")
        try:
            atomic_write(self._path(key), f"{key} {hashlib.sha256(data).hexdigest()}\n".encode() + data,
                         durable=False)
        except OSError:
            pass  # a full or read-only cache only costs the next build its speed


def format_artifacts(artifacts: list[Artifact]) -> list[Artifact]:
    """``artifacts`` with every C++ file's text as clang-format lays it out; the others unchanged."""
    with Formatter() as fmt:
        fmt.submit(artifacts)
        return fmt.formatted(artifacts)
