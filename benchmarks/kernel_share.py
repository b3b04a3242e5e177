"""How much of each op's kernel Jinja renders (issue 33: "the Jinja-generated part is at most a quarter of the kernel
lines"), measured on a generated tree (default: generated/).

An op's kernel sources are its ``<op>/op_kernel/**`` files, all rendered by opgen's templates (the entries, their
template tiling key headers, ``<op>_gen.h``, the tiling struct), and the plain C++ headers of ``common/op_kernel/``
they include, transitively (the family kernels and the helpers opgen copies as they are).  The share is
rendered / (rendered + C++), in lines.

    python benchmarks/kernel_share.py [GENERATED_DIR]

prints one row per op and the sum; ``tests/test_kernel_share.py`` pins the ceiling.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMON = Path("common") / "op_kernel"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


@dataclass(frozen=True)
class Share:
    op: str
    rendered: int  # lines of <op>/op_kernel/**
    cpp: int  # lines of the common/op_kernel/ headers they include, transitively
    headers: tuple[str, ...]  # those headers' names

    @property
    def share(self) -> float:
        return self.rendered / (self.rendered + self.cpp)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def measure(generated: Path) -> list[Share]:
    """One Share per op folder of ``generated`` (every folder but common/ with an op_kernel/), by folder name."""
    common = generated / COMMON
    plain = {p.name: p for p in common.glob("*.h")}
    out = []
    for op_dir in sorted(p for p in generated.iterdir() if p.is_dir() and (p / "op_kernel").is_dir()):
        if op_dir.name == COMMON.parts[0]:
            continue
        files = sorted(p for p in (op_dir / "op_kernel").rglob("*") if p.is_file())
        seen: dict[str, Path] = {}
        todo = [f.read_text(encoding="utf-8") for f in files]
        while todo:
            for name in INCLUDE.findall(todo.pop()):
                base = name.rsplit("/", 1)[-1]
                # a header named so outside common/ (e.g. the op's own) is not a plain one: only common/ paths count
                if base in plain and base not in seen and ("common/" in name or "/" not in name):
                    seen[base] = plain[base]
                    todo.append(plain[base].read_text(encoding="utf-8"))
        out.append(Share(op_dir.name, sum(_lines(f) for f in files), sum(_lines(p) for p in seen.values()),
                         tuple(sorted(seen))))
    return out


def table(shares: list[Share]) -> str:
    rows = ["| op | rendered | C++ | share |", "|---|---|---|---|"]
    for s in shares:
        rows.append(f"| {s.op} | {s.rendered:,} | {s.cpp:,} | {s.share:.0%} |")
    r, c = sum(s.rendered for s in shares), sum(s.cpp for s in shares)
    rows.append(f"| all | {r:,} | {c:,} | {r / (r + c):.0%} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    generated = Path(argv[0]) if argv else ROOT / "generated"
    print(table(measure(generated)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
