"""Rewrite the ``.expected`` file next to every bad spec of the diagnostics corpus.

Each ``bad/NNN_name.spec`` holds one realistic mistake (or a few, where the point is that one run reports them
all); ``bad/NNN_name.expected`` is exactly what ``Diagnostics.render(color=False)`` prints for it, with the file
named ``tests/corpus/bad/NNN_name.spec``.  After an intentional change to a message, a position or a caret, run

    python tests/corpus/regen.py            # rewrite every .expected file
    python tests/corpus/regen.py 033 041    # only the specs whose name contains one of these words
    python tests/corpus/regen.py --check    # write nothing; exit 1 if a .expected file is stale

and read ``git diff tests/corpus`` before committing: every changed line must be an improvement.
"""
from __future__ import annotations

import sys
from pathlib import Path

BAD = Path(__file__).resolve().parent / "bad"
ROOT = BAD.parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from opgen.core.diagnostics import Diagnostics  # noqa: E402
from opgen.frontend.loader import load  # noqa: E402


def specs() -> list[Path]:
    return sorted(BAD.glob("*.spec"))


def display_name(spec: Path) -> str:
    """The file name diagnostics use: the path relative to the repository root, with '/' separators."""
    return spec.resolve().relative_to(ROOT).as_posix()


def diagnose(spec: Path) -> tuple[object, Diagnostics]:
    diags = Diagnostics()
    op = load(spec, diags, display=display_name(spec))
    return op, diags


def render(spec: Path) -> str:
    return diagnose(spec)[1].render(color=False)


def expected_path(spec: Path) -> Path:
    return spec.with_suffix(".expected")


def refresh(argv: list[str], specs: list[Path], produce) -> int:
    """Rewrite (or with ``--check`` only compare) the ``.expected`` file of each spec named in ``argv``.

    ``produce(spec)`` gives the expected text, or ``(None, why)`` when the spec does not fail as a corpus spec
    must. Shared with ``regen_backend.py``."""
    check = "--check" in argv
    words = [a for a in argv if a != "--check"]
    stale = bad = 0
    for spec in specs:
        if words and not any(w in spec.name for w in words):
            continue
        text, why = produce(spec)
        if text is None:
            print(f"{display_name(spec)}: {why}", file=sys.stderr)
            bad += 1
            continue
        target = expected_path(spec)
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old == text:
            continue
        stale += 1
        if check:
            print(f"{display_name(target)}: stale")
        else:
            target.write_text(text, encoding="utf-8", newline="\n")
            print(f"wrote {display_name(target)}")
    return 1 if bad or (check and stale) else 0


def main(argv: list[str]) -> int:
    def produce(spec: Path):
        text = render(spec)
        return (text, None) if text else (None, "no diagnostics (a corpus spec must be bad)")
    return refresh(argv, specs(), produce)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
