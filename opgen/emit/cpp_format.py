"""Every generated C++ file formatted by the real clang-format with ops-transformer's ``.clang-format``.

The generated op folder drops into that repository, whose files follow its style file; a hand-written imitation
of clang-format drifted from it (thousands of changed lines in one header), so the real formatter runs instead.
The version is pinned (pyproject.toml) and part of the generator fingerprint: another clang-format release may
lay out the same code differently, and output must be byte-identical across runs and machines.
"""
from __future__ import annotations

import subprocess
import tempfile
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

from opgen.core.artifact import Artifact

VERSION = "18.1.8"  # the clang-format wheel pyproject.toml pins
CPP_SUFFIXES = (".cpp", ".h")
STYLE = resources.files("opgen.emit").joinpath("ops_transformer.clang-format")


class FormatterMissing(RuntimeError):
    """The pinned clang-format is not installed (a broken install of opgen, not a spec error)."""


def executable() -> str:
    """The clang-format binary the ``clang-format`` wheel ships (its package data, found without importing it)."""
    spec = find_spec("clang_format")
    if spec is None or not spec.submodule_search_locations:
        raise FormatterMissing(f"opgen needs the clang-format {VERSION} wheel: pip install clang-format=={VERSION}")
    binary = Path(list(spec.submodule_search_locations)[0]) / "data" / "bin" / "clang-format"
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout
    if f"version {VERSION}" not in version:
        raise FormatterMissing(f"opgen needs clang-format {VERSION}, found: {version.strip()} "
                               f"(pip install clang-format=={VERSION})")
    return str(binary)


def is_cpp(path: str) -> bool:
    return path.endswith(CPP_SUFFIXES)


def format_files(paths: list[Path]) -> None:
    """Format ``paths`` in place, in one clang-format run."""
    if not paths:
        return
    with resources.as_file(STYLE) as style:
        subprocess.run([executable(), "-i", f"--style=file:{style}", *map(str, paths)], check=True,
                       capture_output=True)


def format_artifacts(artifacts: list[Artifact]) -> list[Artifact]:
    """``artifacts`` with every C++ file's text as clang-format lays it out; the others unchanged."""
    cpp = [a for a in artifacts if is_cpp(a.path)]
    if not cpp:
        return list(artifacts)
    with tempfile.TemporaryDirectory(prefix="opgen-format-") as tmp:
        # one flat file per artefact (the path's folders joined), so equal base names in two folders never meet
        files = {a.path: Path(tmp) / a.path.replace("/", "__") for a in cpp}
        for a in cpp:
            files[a.path].write_text(a.content, encoding="utf-8")
        format_files(list(files.values()))
        formatted = {p: f.read_text(encoding="utf-8") for p, f in files.items()}
    return [Artifact(a.path, formatted[a.path]) if a.path in formatted else a for a in artifacts]
