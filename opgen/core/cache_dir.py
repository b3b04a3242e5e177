"""Where opgen keeps what outlives a process: ``$OPGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/opgen``, else
``~/.cache/opgen`` (the CPU twin's executables keep their own ``$OPGEN_SIM_CACHE``).

Every cache in it is content-addressed and only an accelerator: an entry is found by a hash of everything its
content depends on, written by an atomic rename, and a cache that cannot be read or written (or ``--no-cache``,
which calls :func:`configure`) leaves the output exactly what a cold build produces.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV = "OPGEN_CACHE_DIR"
_enabled = True


def configure(enabled: bool) -> None:
    """Turn every persistent cache on or off for this process (``--no-cache``: the cold path)."""
    global _enabled
    _enabled = enabled


def enabled() -> bool:
    return _enabled


def root() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "opgen"


def subdir(name: str) -> Path | None:
    """``root()/name``, created; None when caching is off or the directory cannot be made (a build goes on
    without it)."""
    if not _enabled:
        return None
    path = root() / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path
