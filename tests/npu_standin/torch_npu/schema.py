"""torch_npu's function schemas, read from its op-plugin yaml (``- func: name(args) -> returns`` lines).

Test-only: the stand-in torch_npu checks every call against the real file (../shared/cann/torch_npu/)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FUNC = re.compile(r"^\s*-\s*func:\s*(\w+)\((.*)\)\s*->\s*(.+?)\s*$")


@dataclass(frozen=True)
class Arg:
    name: str
    type: str          # as the schema writes it: Tensor, Tensor?, int, int?, str, float, int[4], ...
    required: bool     # no default
    keyword_only: bool  # after the "*"


@dataclass(frozen=True)
class Schema:
    name: str
    args: tuple[Arg, ...]
    returns: int       # how many tensors (1: a single Tensor, not a tuple)
    tuple_return: bool

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)


def _split(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + ([cur.strip()] if cur.strip() else [])


def parse(path: Path) -> dict[str, Schema]:
    """Every function of the schema file."""
    found = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = FUNC.match(line)
        if not m:
            continue
        name, args_text, ret = m.groups()
        args, kw_only = [], False
        for part in _split(args_text):
            if part == "*":
                kw_only = True
                continue
            decl, has_default, _ = part.partition("=")
            typ, arg_name = decl.rsplit(None, 1)
            args.append(Arg(arg_name, typ, not has_default, kw_only))
        ret = ret.strip()
        tuple_return = ret.startswith("(")
        n = len(_split(ret[1:-1])) if tuple_return else 1
        found[name] = Schema(name, tuple(args), n, tuple_return)
    return found
