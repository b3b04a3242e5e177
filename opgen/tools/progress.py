"""What a build tells its user while it runs (stderr, per spec and stage) and once it is done (one line)."""
from __future__ import annotations

import sys
from typing import Callable, TextIO


class Progress:
    """Stage lines on ``stream`` when ``show`` (the CLI: stderr is a terminal, or ``-v``); silent otherwise."""

    def __init__(self, show: bool, stream: TextIO | None = None):
        self.show = show
        self.stream = stream if stream is not None else sys.stderr

    def say(self, text: str) -> None:
        if self.show:
            self.stream.write(f"opgen: {text}\n")
            self.stream.flush()

    def for_spec(self, index: int, total: int, spec: str) -> Callable[[str], None]:
        """The reporter of one spec's stages: ``opgen: [2/7] specs/combine_v2.spec: searching test cases``."""
        return lambda stage: self.say(f"[{index}/{total}] {spec}: {stage}")


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(specs: int, written: int, unchanged: int, removed: int, seconds: float, not_built: int = 0) -> str:
    """The line every build ends with: ``2 specs, 31 files written, 31 unchanged, 0 removed, in 3.4 s``, and
    ``; 1 spec not built`` when a generator could not express an op."""
    return (f"{plural(specs, 'spec')}, {plural(written, 'file')} written, {unchanged} unchanged, {removed} removed, "
            f"in {seconds:.1f} s" + (f"; {plural(not_built, 'spec')} not built" if not_built else ""))
