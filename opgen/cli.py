"""The `opgen` command line.

Exit codes: 0 success, 1 spec errors (or a stale tree for `build --check`),
2 usage errors (argparse's convention), 3 reserved for `diff` ABI breaks.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import builtins as B
from .diagnostics import CODES, Diagnostics, explain
from .emit import emit
from .loader import load
from .model import Op
from .write import build, check, op_output

EXIT_OK, EXIT_SPEC, EXIT_USAGE = 0, 1, 2


def _color(stream) -> bool:
    return hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("NO_COLOR")


def load_specs(paths: list[str]) -> tuple[list[tuple[str, Op]], Diagnostics]:
    diags = Diagnostics()
    ops: list[tuple[str, Op]] = []
    for p in paths:
        op = load(p, diags)
        if op is not None:
            ops.append((p, op))
    seen: dict[str, str] = {}
    for p, op in ops:
        if op.snake_name in seen:
            diags.error("E101", f"op {op.name} is also declared in {seen[op.snake_name]}", op.span)
        seen[op.snake_name] = p
    return ops, diags


def _report(diags: Diagnostics) -> None:
    if diags.items:
        sys.stderr.write(diags.render(color=_color(sys.stderr)))
        n = sum(1 for d in diags.items if d.severity == "error")
        sys.stderr.write(f"{n} error{'s' if n != 1 else ''}\n")


def cmd_check(args) -> int:
    ops, diags = load_specs(args.specs)
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    for p, op in ops:
        print(f"{p}: ok ({op.name}, {len(op.products)} products, "
              f"{sum(len(v.checks) for v in op.views.values())} checks)")
    return EXIT_OK


def cmd_build(args) -> int:
    ops, diags = load_specs(args.specs)
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    outputs = [op_output(op.snake_name, Path(p).name, op.source, emit(op)) for p, op in ops]
    out = Path(args.output)
    if args.check:
        problems = check(out, outputs)
        for pr in problems:
            print(f"{out / pr.path}: {pr.kind}")
        if problems:
            print(f"{len(problems)} file(s) differ from what the specs generate; run `opgen build` "
                  f"(hand-edited files will be overwritten: move the change into the spec)", file=sys.stderr)
            return EXIT_SPEC
        print(f"{sum(len(o.files) + 1 for o in outputs)} files up to date")
        return EXIT_OK
    report = build(out, outputs)
    for f in report.written:
        print(f"wrote {out / f}")
    for f in report.removed:
        print(f"removed {out / f}")
    print(f"{len(report.written)} files written, {len(report.removed)} removed, {report.unchanged} unchanged")
    return EXIT_OK


def cmd_explain(args) -> int:
    if args.code == "functions":
        for b in B.BUILTINS.values():
            arity = f"{b.min_args}" if b.min_args == b.max_args else f"{b.min_args}+"
            print(f"{b.name}({arity} args{', ' + ', '.join(k + '=' for k in b.kwargs) if b.kwargs else ''}): "
                  f"{b.doc} [{', '.join(b.contexts)}]")
        return EXIT_OK
    text = explain(args.code)
    if text is None:
        print(f"unknown error code {args.code!r}; known codes: {', '.join(sorted(CODES))}", file=sys.stderr)
        return EXIT_USAGE
    print(text, end="")
    return EXIT_OK


def make_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="opgen", description="Generate CANN operator artefacts from one spec.")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("build", help="generate files for one or more specs")
    b.add_argument("specs", nargs="+", metavar="SPEC")
    b.add_argument("-o", "--output", default="generated", help="output directory (default: generated)")
    b.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming each missing, stale or hand-edited file")
    b.set_defaults(func=cmd_build)

    c = sub.add_parser("check", help="parse and validate specs only")
    c.add_argument("specs", nargs="+", metavar="SPEC")
    c.set_defaults(func=cmd_check)

    e = sub.add_parser("explain", help="explain an error code (or `functions` for the builtins)")
    e.add_argument("code", metavar="CODE")
    e.set_defaults(func=cmd_explain)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
