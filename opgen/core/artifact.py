"""One generated file: its path inside the op's output directory and its text."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Artifact:
    path: str      # posix path relative to the op's output directory
    content: str
