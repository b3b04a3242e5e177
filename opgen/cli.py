"""The `opgen` command line.

Exit codes: 0 success, 1 spec errors (or a stale tree for `build --check`),
2 usage errors (argparse's convention), 3 an ABI break found by `diff`.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from opgen.core import builtins as B
from opgen.core.diagnostics import CODES, Diagnostics, explain
from opgen.core.families import roles_text
from opgen.frontend.loader import load, load_text
from opgen.frontend.pairs import check_pairs
from opgen.model.decl import Op
from opgen.tools.write import (build, check, generator_fingerprint, manifest_files as _manifest_files, op_output,
                    remember_build, unchanged_since_last_build)

EXIT_OK, EXIT_SPEC, EXIT_USAGE, EXIT_ABI_BREAK = 0, 1, 2, 3

# The emitters, the diff, the product matrix and the suite runner are imported by the subcommands that use them
# (below, inside those functions): `opgen check`, `opgen explain` and a no-change `opgen build` then start
# without loading Jinja, the lowerings and the test-case search.  These imports point down the layers like any
# other (tests/test_layers.py reads them too).


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
        w = len(diags.items) - n
        sys.stderr.write(f"{n} error{'s' if n != 1 else ''}" + (f", {w} warning{'s' if w != 1 else ''}" if w else "")
                         + "\n")


def cmd_check(args) -> int:
    ops, diags = load_specs(args.specs)
    check_pairs([op for _, op in ops], diags)  # the pairs among the specs checked together
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    for p, op in ops:
        print(f"{p}: ok ({op.name}, {len(op.products)} products, "
              f"{sum(len(v.checks) for v in op.views.values())} checks)")
    return EXIT_OK


def emit_changed(ops: list[tuple[str, Op]], out: Path, fingerprint: str,
                 diags: Diagnostics | None = None) -> tuple[list, int]:
    """Outputs of the ops that need emitting, and the number of files of those that do not.

    Ops whose spec and generator are unchanged since they were built, and whose files are untouched,
    are not emitted again (emitting is the slow part of a build); everything else is. An op a generator
    cannot express gets no output: its located diagnostics go into ``diags`` (raised without one).
    """
    unchanged = {op.snake_name for _, op in ops
                 if unchanged_since_last_build(out, op.snake_name, op.source, fingerprint)}
    skipped = sum(len(_manifest_files(out, name)) + 1 for name in unchanged)
    todo = [(p, op) for p, op in ops if op.snake_name not in unchanged]
    if not todo:
        return [], skipped
    from opgen.emit.pipeline import EmitError, emit  # the emitters load only when something is emitted
    outputs = []
    for p, op in todo:
        try:
            outputs.append(op_output(op.snake_name, Path(p).name, op.source, emit(op)))
        except EmitError as err:
            if diags is None:
                raise
            diags.items.extend(err.diagnostics)
    return outputs, skipped


def cmd_build(args) -> int:
    ops, diags = load_specs(args.specs)
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    out = Path(args.output)
    fingerprint = generator_fingerprint()
    outputs, skipped = emit_changed(ops, out, fingerprint, diags)
    if diags.has_errors:  # nothing is written (or compared) for an op a generator cannot express
        _report(diags)
        if outputs and not args.check:
            report = build(out, outputs)
            remember_build(out, outputs, fingerprint)
            print(f"{len(report.written)} files written, {len(report.removed)} removed, {report.unchanged} "
                  f"unchanged; {len({d.span.file for d in diags.items if d.span})} spec(s) not built")
        return EXIT_SPEC
    if args.check:
        problems = check(out, outputs)
        for pr in problems:
            print(f"{out / pr.path}: {pr.kind}")
        if problems:
            print(f"{len(problems)} file(s) differ from what the specs generate; run `opgen build` "
                  f"(hand-edited files will be overwritten: move the change into the spec)", file=sys.stderr)
            return EXIT_SPEC
        print(f"{sum(len(o.files) + 1 for o in outputs) + skipped} files up to date")
        return EXIT_OK
    report = build(out, outputs)
    remember_build(out, outputs, fingerprint)
    report.unchanged += skipped
    for f in report.written:
        print(f"wrote {out / f}")
    for f in report.removed:
        print(f"removed {out / f}")
    print(f"{len(report.written)} files written, {len(report.removed)} removed, {report.unchanged} unchanged")
    return EXIT_OK


def cmd_test(args) -> int:
    """Build (writing only what changed), run each op's generated suite, report its coverage."""
    from opgen.tools.coverage import load_cases, report, run_suite
    ops, diags = load_specs(args.specs)
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    out = Path(args.output)
    fingerprint = generator_fingerprint()
    outputs, _ = emit_changed(ops, out, fingerprint, diags)
    if diags.has_errors:
        _report(diags)
        return EXIT_SPEC
    built = build(out, outputs)
    remember_build(out, outputs, fingerprint)
    if built.written or built.removed:
        print(f"built {out}: {len(built.written)} files written, {len(built.removed)} removed")
    status = EXIT_OK
    saved = os.environ.get("OPGEN_BACKEND")
    if args.backend:  # the suites run in a pytest subprocess, which reads it from the environment
        os.environ["OPGEN_BACKEND"] = args.backend
    try:
        for p, op in ops:
            op_dir = out / op.snake_name
            if not (op_dir / "tests" / "cases.py").is_file():
                print(f"{p}: {op.name} has no generated suite (the spec names no semantics)")
                continue
            text, ok = report(load_cases(op_dir), run_suite(op_dir), full=args.report)
            sys.stdout.write(text)
            if not ok:
                status = EXIT_SPEC
    finally:
        if saved is None:
            os.environ.pop("OPGEN_BACKEND", None)
        else:
            os.environ["OPGEN_BACKEND"] = saved
    return status


def cmd_explain(args) -> int:
    if args.code == "functions":
        for b in B.BUILTINS.values():
            arity = f"{b.min_args}" if b.min_args == b.max_args else f"{b.min_args}+"
            print(f"{b.name}({arity} args{', ' + ', '.join(k + '=' for k in b.kwargs) if b.kwargs else ''}): "
                  f"{b.doc} [{', '.join(b.contexts)}]")
        return EXIT_OK
    if args.code == "roles":
        print(roles_text(), end="")
        return EXIT_OK
    text = explain(args.code)
    if text is None:
        print(f"unknown error code {args.code!r}; known codes: {', '.join(sorted(CODES))}", file=sys.stderr)
        return EXIT_USAGE
    print(text, end="")
    return EXIT_OK


class UsageError(Exception):
    """A command line that names something that does not exist (exit 2)."""


def _git_spec(rev: str, spec: str) -> tuple[str, str]:
    """(text, display name) of SPEC as committed at REV, from any working directory inside the repository."""
    import subprocess

    path = Path(spec).resolve()
    try:
        top = subprocess.run(["git", "-C", str(path.parent), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True)
    except OSError as err:
        raise UsageError(f"cannot run git: {err.strerror or err}") from None
    if top.returncode != 0:
        raise UsageError(f"{spec} is not inside a git repository: {top.stderr.strip()}")
    root = Path(top.stdout.strip()).resolve()
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{spec} is not inside the repository {root}") from None
    shown = subprocess.run(["git", "-C", str(root), "show", f"{rev}:{rel}"], capture_output=True)
    if shown.returncode != 0:
        raise UsageError(f"cannot read {rel} at {rev}: {shown.stderr.decode('utf-8', 'replace').strip()}")
    try:
        return shown.stdout.decode("utf-8"), f"{rev}:{rel}"
    except UnicodeDecodeError:
        raise UsageError(f"{rel} at {rev} is not valid UTF-8") from None


def cmd_diff(args) -> int:
    from opgen.tools import diff as diff_tool
    if args.rev is not None and len(args.specs) != 1:
        print("opgen diff --rev REV takes one spec (the working copy, compared with its version at REV)",
              file=sys.stderr)
        return EXIT_USAGE
    if args.rev is None and len(args.specs) != 2:
        print("opgen diff takes two specs: OLD NEW (or --rev REV SPEC)", file=sys.stderr)
        return EXIT_USAGE
    diags = Diagnostics()
    if args.rev is not None:
        try:
            text, old_label = _git_spec(args.rev, args.specs[0])
        except UsageError as err:
            print(f"opgen diff: {err}", file=sys.stderr)
            return EXIT_USAGE
        old = load_text(text, old_label, diags)
        new_label = args.specs[0]
    else:
        old_label, new_label = args.specs
        old = load(old_label, diags)
    new = load(new_label, diags)
    _report(diags)
    if diags.has_errors or old is None or new is None:
        return EXIT_SPEC
    d = diff_tool.diff_ops(old, new)
    files = diff_tool.generated_changes(old, new) if args.generated else None
    render = {"text": diff_tool.render_text, "json": diff_tool.render_json, "md": diff_tool.render_md}[args.format]
    sys.stdout.write(render(d, old_label, new_label, files))
    if d.abi_break and not args.allow_abi_break:
        print(f"opgen diff: {len(d.group('abi'))} ABI change(s); pass --allow-abi-break to accept them",
              file=sys.stderr)
        return EXIT_ABI_BREAK
    return EXIT_OK


def cmd_products(args) -> int:
    from opgen.tools import products as products_tool
    ops, diags = load_specs(args.specs)
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    render = {"text": products_tool.render_text, "json": products_tool.render_json,
              "md": products_tool.render_md}[args.format]
    for i, (p, op) in enumerate(ops):
        if i:
            sys.stdout.write("\n")
        sys.stdout.write(render(op, products_tool.product_matrix(op)))
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

    d = sub.add_parser("diff", help="semantic changelog between two specs: ABI, behaviour per product, docs",
                       description="Compare OLD.spec with NEW.spec, or with --rev the spec with its version at a "
                                   "git revision. Exit 0, or 3 when the ABI changed (unless --allow-abi-break).")
    d.add_argument("specs", nargs="+", metavar="SPEC", help="OLD NEW, or one SPEC with --rev")
    d.add_argument("--rev", metavar="GITREV", help="compare SPEC with the spec as committed at GITREV")
    d.add_argument("--format", choices=("text", "json", "md"), default="text", help="output format (default text)")
    d.add_argument("--allow-abi-break", action="store_true", help="exit 0 even when the ABI changed")
    d.add_argument("--generated", action="store_true",
                   help="also list the generated files that change, with lines added/removed (writes nothing)")
    d.set_defaults(func=cmd_diff)

    pr = sub.add_parser("products", help="the resolved per-product matrix: what each product inherits and overrides")
    pr.add_argument("specs", nargs="+", metavar="SPEC")
    pr.add_argument("--format", choices=("text", "json", "md"), default="text", help="output format (default text)")
    pr.set_defaults(func=cmd_products)

    t = sub.add_parser("test", help="build, run the generated test suites and report check coverage",
                       description="Build SPEC (writing only what changed), run generated/<op>/tests with pytest and "
                                   "print each check's negative tests and their results. Exit 1 when a test fails or "
                                   "a check has neither a negative test nor a recorded reason.")
    t.add_argument("specs", nargs="+", metavar="SPEC")
    t.add_argument("-o", "--output", default="generated", help="output directory (default: generated)")
    t.add_argument("--report", action="store_true", help="list every check with its negative tests and results")
    t.add_argument("--backend", choices=("reference", "cpu-twin", "npu"),
                   help="OPGEN_BACKEND of the suites: reference (numpy, C++ check core, the CPU twin on a subset), "
                        "cpu-twin (every runnable world on the CPU twin), npu (the real op); default: the "
                        "environment's OPGEN_BACKEND, else reference")
    t.set_defaults(func=cmd_test)

    e = sub.add_parser("explain", help="explain an error code (`functions`: the builtins; `roles`: each op family's roles)")
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
