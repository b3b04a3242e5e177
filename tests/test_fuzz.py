"""Deterministic fuzzing of the front end with mutated copies of the real specs.

Every mutant (a token deleted, duplicated, swapped with its neighbour or replaced by another token of the file,
random bytes inserted -- NUL and bytes that are not UTF-8 included -- or the file cut short) must load without
an exception: a broken spec is reported as diagnostics, each with a registered code and a span inside the file,
and a spec that still loads must resolve for every product.  A subset also goes through ``opgen check``.

Seeds are fixed (``random.Random(seed)``); a failure message names the seed and carries the mutated text.
"""
from __future__ import annotations

import contextlib
import io
import math
import random
import re
import zlib
from pathlib import Path

import pytest

from opgen import cli
from opgen.core.diagnostics import CODES, Diagnostics
from opgen.frontend.loader import load, load_text

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.spec"))

TOTAL_MUTANTS = 1000          # at least this many over all specs together
CHUNKS_PER_SPEC = 8           # test items per spec (the first in the default tier, the rest in the slow tier)
CLI_EVERY = 25                # every n-th mutant also runs `opgen check` on a temporary file

# Lexer-like tokens: long strings, strings, names, numbers, two-character operators, any other character.
_TOKEN = re.compile(r'"""(?:.|\n)*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*'
                    r'|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|\*\*|//|[=!<>]=|\S')
_BYTES = (b"\x00", b"\xff", b"\xfe", b"\x80", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80", b"$", b"\\", b'"', b"\n",
          b"\t", b"\r", b"\x0c", b"\x1b[31m", "；".encode(), "\u201c".encode(), "\u2028".encode(), b"{", b"}")
_OPS = ("delete", "duplicate", "swap", "replace", "bytes", "truncate")


def _cases_per_spec() -> int:
    return math.ceil(TOTAL_MUTANTS / max(1, len(SPECS)))


def _seed(spec: Path, n: int) -> int:
    return zlib.crc32(spec.name.encode()) * 100_000 + n


def mutate(text: str, tokens: list[tuple[int, int]], rng: random.Random) -> tuple[str, bytes]:
    """One mutation of ``text``: (what was done, the mutated file as bytes)."""
    op = _OPS[rng.randrange(len(_OPS))]
    if op == "truncate":
        data = text.encode("utf-8")
        cut = rng.randrange(len(data) + 1)  # may split a multi-byte character: the file is then not UTF-8
        return f"truncate at byte {cut}", data[:cut]
    if op == "bytes":
        data = text.encode("utf-8")
        at = rng.randrange(len(data) + 1)
        junk = b"".join(rng.choice(_BYTES) if rng.random() < 0.6 else bytes([rng.randrange(256)])
                        for _ in range(rng.randint(1, 4)))
        return f"insert {junk!r} at byte {at}", data[:at] + junk + data[at:]
    i = rng.randrange(len(tokens))
    a, b = tokens[i]
    if op == "delete":
        out = text[:a] + text[b:]
    elif op == "duplicate":
        out = text[:b] + " " + text[a:b] + text[b:]
    elif op == "swap":
        i = min(i, len(tokens) - 2)
        (a, b), (c, d) = tokens[i], tokens[i + 1]
        out = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    else:
        c, d = tokens[rng.randrange(len(tokens))]
        out = text[:a] + text[c:d] + text[b:]
    return f"{op} token {i} ({text[a:b][:40]!r})", out.encode("utf-8")


def _check_diagnostics(diags: Diagnostics, file: str, text: str) -> list[str]:
    problems = []
    lines = text.split("\n")
    for d in diags.items:
        if d.code not in CODES:
            problems.append(f"unregistered code {d.code}: {d.message}")
        s = d.span
        if s is None:
            problems.append(f"{d.code} {d.message!r} has no span")
            continue
        if s.file != file:
            problems.append(f"{d.code} {d.message!r} names file {s.file!r}")
        if not (1 <= s.line <= len(lines) and 1 <= s.col <= len(lines[s.line - 1]) + 1):
            problems.append(f"{d.code} {d.message!r} at {s.line}:{s.col} is outside the file")
        if not (s.line <= s.end_line <= len(lines) and (s.end_line, s.end_col) >= (s.line, s.col)):
            problems.append(f"{d.code} {d.message!r} ends at {s.end_line}:{s.end_col}, before it starts or "
                            f"outside the file")
    return problems


def _load_mutant(data: bytes, file: str, tmp: Path) -> list[str]:
    """Problems found loading one mutant (empty when it behaved)."""
    problems: list[str] = []
    text = data.decode("utf-8", "replace")  # what is not UTF-8 reaches the lexer as U+FFFD
    diags = Diagnostics()
    op = load_text(text, file, diags)
    if op is None and not diags.has_errors:
        problems.append("load_text returned None without reporting an error")
    if op is not None and diags.has_errors:
        problems.append("load_text returned a model although it reported errors")
    if op is not None:
        op.views  # every product resolves
    diags.render(color=False)
    diags.render(color=True)
    problems += _check_diagnostics(diags, file, text)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # from a file, bytes that are not UTF-8 are one E003 at the first bad byte
        tmp.write_bytes(data)
        diags = Diagnostics()
        if load(tmp, diags, display=file) is not None or [d.code for d in diags.items] != ["E003"]:
            problems.append(f"a file that is not UTF-8 gave {[d.code for d in diags.items]}, not [E003]")
        diags.render(color=False)
        problems += _check_diagnostics(diags, file, diags.sources.get(file, ""))
        # load_text takes any str: lone surrogates (a surrogateescape decoding) are one E003 as well
        text = data.decode("utf-8", "surrogateescape")
        diags = Diagnostics()
        if load_text(text, file, diags) is not None or [d.code for d in diags.items] != ["E003"]:
            problems.append(f"lone surrogates gave {[d.code for d in diags.items]}, not [E003]")
        diags.render(color=False).encode("utf-8")
        problems += _check_diagnostics(diags, file, text)
    return problems


def _run_cli(path: Path) -> tuple[int | None, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(["check", str(path)])
    return rc, err.getvalue()


def _chunks():
    for spec in SPECS:
        for k in range(CHUNKS_PER_SPEC):  # an eighth of the mutants by default
            yield pytest.param(spec, k, id=f"{spec.stem}-{k}", marks=(pytest.mark.slow,) if k else ())


def test_fuzzing_covers_enough_mutants():
    assert SPECS, "no specs to mutate"
    assert _cases_per_spec() * len(SPECS) >= TOTAL_MUTANTS


@pytest.mark.parametrize("spec,chunk", list(_chunks()))
def test_mutated_specs_never_crash(spec, chunk, tmp_path):
    text = spec.read_text(encoding="utf-8")
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    file = f"mutant-{spec.name}"
    tmp = tmp_path / spec.name
    per_spec = _cases_per_spec()
    failures = []
    for n in range(chunk, per_spec, CHUNKS_PER_SPEC):
        seed = _seed(spec, n)
        what, data = mutate(text, tokens, random.Random(seed))
        try:
            problems = _load_mutant(data, file, tmp)
            if n % CLI_EVERY == 0:
                tmp.write_bytes(data)
                rc, err = _run_cli(tmp)
                if rc not in (0, 1):
                    problems.append(f"`opgen check` exited {rc}")
                if "Traceback (most recent call last)" in err:
                    problems.append(f"`opgen check` printed what looks like a traceback:\n{err}")
        except Exception as exc:  # noqa: BLE001 - any exception is the bug this test looks for
            problems = [f"{type(exc).__name__}: {exc}"]
        if problems:
            failures.append(f"seed {seed} ({spec.name}, {what}):\n  " + "\n  ".join(problems) +
                            f"\n--- mutated text ---\n{data.decode('utf-8', 'backslashreplace')}\n--- end ---")
    assert not failures, f"{len(failures)} mutant(s) of {spec.name} misbehaved; the first:\n{failures[0]}"


# Mutants that once crashed or misreported, kept as fixed regressions (they also live in tests/corpus/bad).
def test_recovery_with_inserted_token_keeps_going():
    diags = Diagnostics()
    text = 'op A {\n    version 1\n    doc "d";\n    input x FLOAT16;\n    output y: FLOAT16;\n}\n'
    assert load_text(text, "t.spec", diags) is None
    assert [(d.code, d.span.line) for d in diags.sorted()] == [("E001", 3), ("E001", 4)]


def test_form_feed_and_line_separator_do_not_shift_carets():
    # str.splitlines() would split at \f and U+2028; the lexer does not, so neither may the renderer.
    diags = Diagnostics()
    text = 'op A {\n    doc "a\fb\u2028c";\n    version 1;\n    $\n}\n'
    load_text(text, "t.spec", diags)
    out = diags.render()
    assert "t.spec:4:5: error[E002]" in out and "    4 |     $" in out, out
    assert "\f" not in out and "\u2028" not in out


def test_control_characters_are_not_printed_raw():
    diags = Diagnostics()
    load_text('op A {\n    version 1;\x1b[2J\x00\n}\n', "t.spec", diags)
    out = diags.render()
    assert "\x1b" not in out and "\x00" not in out, repr(out)


def test_lone_surrogates_are_one_error_not_a_crash():
    # A str decoded with surrogateescape cannot be written back as UTF-8; the generators would fail on it.
    diags = Diagnostics()
    assert load_text('op A {\n    doc "tokens\udc8c";\n}\n', "t.spec", diags) is None
    assert [(d.code, d.span.line, d.span.col) for d in diags.items] == [("E003", 2, 16)]
    diags.render().encode("utf-8")
