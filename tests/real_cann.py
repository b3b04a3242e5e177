"""The real CANN beside the clone (``../shared/cann``): its tarballs unpacked once, cached by their hash.

Unpacked into ``$OPGEN_CANN_CACHE`` (kept across sessions) or else the directory the caller gives (a pytest tmp
dir); the unpacking goes to a private directory renamed into place, so concurrent sessions share one tree.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .conftest import ROOT

SHARED_CANN = ROOT.parent / "shared" / "cann"
HEADERS = SHARED_CANN / "headers.tar.gz"
OPS_TRANSFORMER = SHARED_CANN / "ops-transformer.tar.gz"
MISSING = "../shared/cann not found: the real CANN (headers, hand-written ops) lies beside the clone"


def cache_root(fallback: Path) -> Path:
    cache = os.environ.get("OPGEN_CANN_CACHE")
    root = Path(cache) if cache else fallback
    root.mkdir(parents=True, exist_ok=True)
    return root


def unpacked(tarball: Path, root: Path, top: str) -> Path:
    """``root/<stem>-<hash>/<top>``: the tarball unpacked once; ``top`` is the folder it unpacks to."""
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()[:16]
    stem = tarball.name.split(".")[0]
    dest = root / f"{stem}-{digest}"
    if not (dest / top).is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=f".{stem}-{digest}-", dir=root))
        subprocess.run(["tar", "xzf", str(tarball), "-C", str(tmp)], check=True)
        try:
            tmp.rename(dest)  # atomic: a concurrent session either wins or reuses the winner's tree
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    assert (dest / top).is_dir(), f"{tarball} did not unpack to {top}/"
    return dest / top
