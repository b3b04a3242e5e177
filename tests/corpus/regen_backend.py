"""Rewrite the ``.expected`` file next to every spec of the back-end corpus (``bad_backend/``).

Each ``bad_backend/NNN_name.spec`` is a real spec with one mistake that the back end meets (a kernel the Ascend
C lowering cannot emit, a dtype without a target type) or that only a formula's shapes and dtypes reveal (front
end, E123/E124). ``NNN_name.expected`` is exactly what ``opgen build`` prints on stderr for it (NO_COLOR), the
file named ``tests/corpus/bad_backend/NNN_name.spec``. After an intentional message change run

    python tests/corpus/regen_backend.py            # rewrite every .expected file
    python tests/corpus/regen_backend.py 003        # only the specs whose name contains one of these words
    python tests/corpus/regen_backend.py --check    # write nothing; exit 1 if a .expected file is stale

and read ``git diff tests/corpus`` before committing.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

BAD = Path(__file__).resolve().parent / "bad_backend"
ROOT = BAD.parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from opgen import cli  # noqa: E402

sys.path.insert(0, str(BAD.parent))
import regen  # noqa: E402  (the corpus scripts share refresh())


def specs() -> list[Path]:
    return sorted(BAD.glob("*.spec"))


def display_name(spec: Path) -> str:
    return spec.resolve().relative_to(ROOT).as_posix()


def run(argv: list[str]) -> tuple[int, str, str]:
    """``opgen ARGV`` in this process, from the repository root: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    cwd, color = os.getcwd(), os.environ.get("NO_COLOR")
    os.chdir(ROOT)
    os.environ["NO_COLOR"] = "1"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    finally:
        os.chdir(cwd)
        if color is None:
            os.environ.pop("NO_COLOR", None)
        else:
            os.environ["NO_COLOR"] = color
    return code, out.getvalue(), err.getvalue()


def build(spec: Path, out: Path) -> tuple[int, str, str]:
    return run(["build", display_name(spec), "-o", str(out)])


def expected_path(spec: Path) -> Path:
    return spec.with_suffix(".expected")


def main(argv: list[str]) -> int:
    def produce(spec: Path):
        with tempfile.TemporaryDirectory() as tmp:
            code, _, text = build(spec, Path(tmp))
        if code != 1 or not text:
            return None, f"opgen build exited {code} (a corpus spec must fail)"
        return text, None
    return regen.refresh(argv, specs(), produce)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
