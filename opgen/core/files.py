"""Atomic file replacement: readers (and concurrent builds) see the old bytes or the new, never half a file."""
from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes, durable: bool = True) -> None:
    """Write via a temp file in the same directory and rename over ``path``.

    ``durable``: fsync before the rename (generated files); a cache entry skips it, since a torn entry fails
    its own integrity check and is rebuilt."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def unique_temp(directory: Path, name: str) -> Path:
    """A fresh path in ``directory`` (no file there yet) for a file another library writes, to be renamed into
    place afterwards."""
    return directory / f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
