"""The `opgen` command line.

Exit codes (README, Commands): 0 success; 1 spec or generator errors (a stale tree for `build --check`, a failed
generated test for `test`); 2 usage errors (argparse's convention); 3 an ABI break found by `diff`; 4 the output
directory cannot be written (a file in its place, no permission, a full or read-only disk) or another I/O error;
130 interrupted (Ctrl-C; every generated file is replaced whole, so none is left half-written).
Every failure is one line `opgen: error: ...` (or compiler-style diagnostics for spec errors), never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from typing import TYPE_CHECKING

from opgen import __version__
from opgen.core import cache_dir
from opgen.core.diagnostics import CODES, Diagnostics, explain
from opgen.core.fingerprint import generator_fingerprint
from opgen.tools.produce import check_unique, emit_planned, load, load_text, plan, plan_shared, unchanged_files
from opgen.tools.progress import Progress, summary
from opgen.tools.write import OutputError, build, check, remember_build

if TYPE_CHECKING:
    from opgen.model.decl import Op

EXIT_OK, EXIT_SPEC, EXIT_USAGE, EXIT_ABI_BREAK, EXIT_IO, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130

# The emitters, the diff, the product matrix and the suite runner are imported by the subcommands that use them
# (below, inside those functions), the front end when a spec is loaded (opgen/tools/produce.py): `opgen explain`
# and a build that finds every spec by its key then start without loading lark, the model, Jinja, the lowerings
# and the test-case search.  These imports point down the layers
# like any other (tests/test_layers.py reads them too).


def _tty(stream) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()


def _color(stream) -> bool:
    return _tty(stream) and not os.environ.get("NO_COLOR")


def load_specs(paths: list[str]) -> tuple[list[tuple[str, Op]], Diagnostics]:
    diags = Diagnostics()
    ops: list[tuple[str, Op]] = []
    for p in paths:
        op = load(p, diags)
        if op is not None:
            ops.append((p, op))
    check_unique(ops, diags)
    return ops, diags


def _report(diags: Diagnostics) -> None:
    if diags.items:
        sys.stderr.write(diags.render(color=_color(sys.stderr)))
        n = sum(1 for d in diags.items if d.severity == "error")
        w = len(diags.items) - n
        sys.stderr.write(f"{n} error{'s' if n != 1 else ''}" + (f", {w} warning{'s' if w != 1 else ''}" if w else "")
                         + "\n")


def cmd_check(args) -> int:
    from opgen.frontend.pairs import check_pairs
    ops, diags = load_specs(args.specs)
    check_pairs([op for _, op in ops], diags)  # the pairs among the specs checked together
    _report(diags)
    if diags.has_errors:
        return EXIT_SPEC
    for p, op in ops:
        print(f"{p}: ok ({op.name}, {len(op.products)} products, "
              f"{sum(len(v.checks) for v in op.views.values())} checks)")
    return EXIT_OK


def _progress(args) -> Progress:
    """Stage lines on stderr when it is a terminal (quiet when piped), always with -v, never with -q."""
    return Progress(not args.quiet and (args.verbose or _tty(sys.stderr)))


def _output_dir(out: Path, writing: bool) -> None:
    """Refuse an output path that cannot become a directory before any work (exit 4 with the reason); it is
    created only when there is something to write into it."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"the output directory {out} is a file, not a directory")
    parent = next((a for a in out.absolute().parents if a.exists()), None)
    if not out.exists() and parent is not None and not parent.is_dir():
        raise OutputError(f"cannot create the output directory {out}: {parent} is a file")
    existing = out if out.exists() else parent
    if writing and existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write into {existing}: Permission denied")


def _produce(args, progress: Progress):
    """(planned specs, diagnostics, whether the front end failed): every spec resolved by its key, from the cache
    or emitted.  Front-end errors stop the build before anything is emitted or written."""
    cache_dir.configure(not args.no_cache)
    out = Path(args.output)
    checking = getattr(args, "check", False)  # `opgen test` builds too, and has no --check
    _output_dir(out, writing=not checking)
    diags = Diagnostics()
    items = plan(args.specs, out, generator_fingerprint(), diags, progress, use_cache=not args.no_cache)
    if diags.has_errors:
        return items, diags, True
    emit_planned(items, not args.no_cache, diags, progress, args.jobs)
    # the shared folder: compared in full by --check, left as it is by a build that finds it unchanged
    shared = plan_shared(items, out, generator_fingerprint(), use_cache=not args.no_cache,
                         keep_unchanged=not checking)
    return items + ([shared] if shared is not None else []), diags, False


def _ops(items) -> list:
    """The specs of a build (its items without the shared folder)."""
    return [it for it in items if not it.shared]


def _write(out: Path, items) -> tuple:
    """Write what the build produced and record each directory's key; (report, files left as they were)."""
    report = build(out, [it.output for it in items if it.output is not None])
    remember_build(out, {it.directory: it.key for it in items if it.output is not None and it.key})
    return report, unchanged_files(out, items)


def cmd_build(args) -> int:
    started = time.perf_counter()
    progress = _progress(args)
    out = Path(args.output)
    items, diags, front_end_failed = _produce(args, progress)
    if front_end_failed or (diags.has_errors and (args.check or not any(it.output for it in items))):
        _report(diags)
        return EXIT_SPEC
    if args.check:
        problems = check(out, [it.output for it in items if it.output is not None])
        for pr in problems:
            print(f"{out / pr.path}: {pr.kind}")
        if problems:
            print(f"{len(problems)} file(s) differ from what the specs generate; run `opgen build` "
                  f"(hand-edited files will be overwritten: move the change into the spec)", file=sys.stderr)
            return EXIT_SPEC
        if not args.quiet:
            compared = sum(len(it.output.files) + 1 for it in items if it.output is not None)
            print(f"{compared + unchanged_files(out, items)} files up to date")
        return EXIT_OK
    progress.say("writing")
    report, skipped = _write(out, items)
    if not args.quiet:
        for f in report.written if args.verbose else ():
            print(f"wrote {out / f}")
        for f in report.removed:
            print(f"removed {out / f}")
        if args.verbose:
            for it in _ops(items):
                print(f"{it.path}: {it.how or 'not built'}{f' ({out / it.directory})' if it.directory else ''}")
        specs = _ops(items)
        print(summary(sum(1 for it in specs if it.output is not None or it.how == "unchanged"),
                      len(report.written), report.unchanged + skipped, len(report.removed),
                      time.perf_counter() - started, sum(1 for it in specs if not it.how)))
    if diags.has_errors:  # nothing is written for an op a generator cannot express; the others are built
        _report(diags)
        return EXIT_SPEC
    return EXIT_OK


def cmd_test(args) -> int:
    """Build (writing only what changed), run each op's generated suite, report its coverage."""
    from opgen.tools.coverage import load_cases, report, run_suite
    started = time.perf_counter()
    progress = _progress(args)
    out = Path(args.output)
    items, diags, _ = _produce(args, progress)
    if diags.has_errors:
        _report(diags)
        return EXIT_SPEC
    built, skipped = _write(out, items)
    if not args.quiet and (built.written or built.removed):
        print(summary(len(_ops(items)), len(built.written), built.unchanged + skipped, len(built.removed),
                      time.perf_counter() - started))
    status = EXIT_OK
    saved = os.environ.get("OPGEN_BACKEND")
    if args.backend:  # the suites run in a pytest subprocess, which reads it from the environment
        os.environ["OPGEN_BACKEND"] = args.backend
    try:
        for it in _ops(items):
            op_dir = out / it.directory
            if not (op_dir / "tests" / "cases.py").is_file():
                print(f"{it.path}: {it.directory} has no generated suite (the spec names no semantics)")
                continue
            progress.say(f"{it.path}: running {op_dir / 'tests'}")
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
        from opgen.core import builtins as B
        for b in B.BUILTINS.values():
            arity = f"{b.min_args}" if b.min_args == b.max_args else f"{b.min_args}+"
            print(f"{b.name}({arity} args{', ' + ', '.join(k + '=' for k in b.kwargs) if b.kwargs else ''}): "
                  f"{b.doc} [{', '.join(b.contexts)}]")
        return EXIT_OK
    if args.code == "roles":
        from opgen.core.families import roles_text
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


class _Parser(argparse.ArgumentParser):
    """No abbreviated options (`--out` is not `--output`); a subcommand's own usage with its errors; errors as
    `opgen: error: ...` (exit 2)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        parsed, extra = super().parse_known_args(args, namespace)
        if extra:  # argparse would hand a subcommand's unknown flags to the top level, which shows its own usage
            self.error(f"unrecognized argument{'s' if len(extra) > 1 else ''}: {' '.join(extra)}")
        return parsed, extra

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"opgen: error: {message}\n")


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 1, got {text!r}")
    return int(text)


def _build_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", default="generated", help="output directory (default: generated)")
    p.add_argument("--no-cache", action="store_true",
                   help="the cold path: read and write no cache (the build cache, lark's tables, compiled "
                        "templates, the output directory's record of its last build)")
    p.add_argument("-j", "--jobs", type=_jobs, default=_cores(), metavar="N",
                   help="emit up to N specs at once, each in a process of its own (default: the usable cores, "
                        f"here {_cores()})")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="progress on stderr even when it is not a terminal; every file written; how each spec "
                           "was resolved (unchanged, from the build cache, emitted)")


def make_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="opgen", description="Generate CANN operator artefacts from one spec.")
    ap.add_argument("--version", action="version", version=f"opgen {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("build", help="generate files for one or more specs")
    b.add_argument("specs", nargs="+", metavar="SPEC")
    _build_options(b)
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
    _build_options(t)
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
        return _fail("interrupted (every file is replaced whole: none is left half-written)", EXIT_INTERRUPTED)
    except BrokenPipeError:  # `opgen ... | head`: the reader left; say nothing more, and let exit not flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OutputError as err:
        return _fail(str(err), EXIT_IO)
    except OSError as err:
        where = f" {err.filename}" if err.filename else ""
        return _fail(f"cannot access{where}: {err.strerror or err}", EXIT_IO)


def _fail(message: str, code: int) -> int:
    print(f"opgen: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
