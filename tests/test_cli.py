"""The command line as a new user meets it: one-line errors with their own exit codes, --version, no abbreviated
options, progress and the summary line; and the build cache, which must never change a byte of the output."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import opgen
from opgen import cli
from opgen.core import cache_dir

from .conftest import ROOT

SPEC = ROOT / "specs" / "dispatch_setup.spec"  # the quickest spec to emit
OP_DIR = "moe_distribute_dispatch_setup"
SUMMARY = re.compile(r"1 spec, (\d+) files? written, (\d+) unchanged, (\d+) removed, in \d+\.\d s")


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def opgen_cmd(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "opgen", *map(str, argv)], cwd=ROOT, capture_output=True,
                          text=True, **kw)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".opgen-cache.json"}


def one_line_error(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("opgen: error: "), err
    return lines[0]


# ---- bad input: one line, an exit code of its own ----------------------------------------------------------

def test_a_file_as_output_directory_exits_4(tmp_path, capsys):
    target = tmp_path / "out.txt"
    target.write_text("mine\n")
    code, out, err = run(["build", SPEC, "-o", target], capsys)
    assert code == cli.EXIT_IO == 4
    assert one_line_error(err) == f"opgen: error: the output directory {target} is a file, not a directory"
    assert target.read_text() == "mine\n" and out == ""
    code, _, err = run(["build", SPEC, "-o", target / "sub"], capsys)  # below a file
    assert code == 4 and one_line_error(err) == \
        f"opgen: error: cannot create the output directory {target / 'sub'}: {target} is a file"


def test_unwritable_output_directory_exits_4(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        # root writes anywhere a mode allows nothing; sysfs refuses even root (the OS's answer either way)
        target = ro if not os.access(ro, os.W_OK) else Path("/sys")
        if not target.is_dir():
            pytest.skip("no directory here refuses this user's writes (root without /sys)")
        r = opgen_cmd("build", SPEC, "-o", target / "gen")
    finally:
        ro.chmod(0o755)
    assert r.returncode == 4, r.stderr
    line = one_line_error(r.stderr)
    assert line.startswith("opgen: error: cannot ") and str(target) in line
    assert re.search(r"Permission denied|Operation not permitted|Read-only file system", line), line


def test_interrupted_build_exits_130_in_one_line(tmp_path, capsys, monkeypatch):
    from opgen.emit import pipeline

    def interrupted(op, *a):
        raise KeyboardInterrupt
    monkeypatch.setattr(pipeline, "emit", interrupted)
    code, _, err = run(["build", SPEC, "-o", tmp_path, "--no-cache"], capsys)
    assert code == cli.EXIT_INTERRUPTED == 130
    assert one_line_error(err).startswith("opgen: error: interrupted")
    assert not (tmp_path / OP_DIR).exists()


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    version = re.search(r'(?m)^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))[1]
    assert capsys.readouterr().out == f"opgen {opgen.__version__}\n" == f"opgen {version}\n"


def test_abbreviated_option_is_refused_with_the_subcommand_usage(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["build", str(SPEC), "--out", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: opgen build ") and "[-o OUTPUT]" in err
    assert err.strip().splitlines()[-1] == f"opgen: error: unrecognized arguments: --out {tmp_path}"
    assert not list(tmp_path.iterdir())  # not taken as --output


@pytest.mark.parametrize("command", ["build", "check", "products", "test", "diff"])
def test_bad_flag_prints_the_subcommands_usage(command, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([command, str(SPEC), "--frobnicate"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: opgen {command} ")
    assert err.strip().splitlines()[-1] == "opgen: error: unrecognized argument: --frobnicate"


# ---- what a build says ---------------------------------------------------------------------------------------

def test_piped_build_prints_no_progress_and_ends_with_the_summary(tmp_path):
    r = opgen_cmd("build", SPEC, "-o", tmp_path)
    assert r.returncode == 0 and r.stderr == ""  # stderr is a pipe: no progress
    m = SUMMARY.fullmatch(r.stdout.strip())
    assert m and m.groups() == (str(len(tree(tmp_path))), "0", "0")
    r = opgen_cmd("build", SPEC, "-o", tmp_path, "-v")  # -v: progress although piped
    assert r.returncode == 0
    assert r.stderr.splitlines() == [f"opgen: [1/1] {SPEC}: unchanged since the last build", "opgen: writing"]
    assert r.stdout.splitlines()[0] == f"{SPEC}: unchanged ({tmp_path / OP_DIR})"
    assert SUMMARY.fullmatch(r.stdout.splitlines()[-1]).group(1) == "0"


class _Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_per_spec_and_stage_on_a_terminal(tmp_path, capsys, monkeypatch):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    code = cli.main(["build", str(SPEC), "-o", str(tmp_path), "--no-cache"])
    assert code == 0
    lines = term.text.splitlines()
    assert lines[0] == f"opgen: [1/1] {SPEC}: checking"
    assert f"opgen: [1/1] {SPEC}: searching test cases" in lines
    assert f"opgen: [1/1] {SPEC}: emitting the Ascend C kernel" in lines
    assert lines[-1] == "opgen: writing"
    assert SUMMARY.fullmatch(capsys.readouterr().out.strip())


def test_quiet_build_prints_nothing(tmp_path, monkeypatch, capsys):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert cli.main(["build", str(SPEC), "-o", str(tmp_path), "-q"]) == 0
    assert term.text == "" and capsys.readouterr().out == ""
    assert (tmp_path / OP_DIR / "MANIFEST.json").is_file()


# ---- the no-change record and the build cache ------------------------------------------------------------------

def test_renamed_spec_is_rebuilt(tmp_path, capsys):
    out = tmp_path / "out"
    assert run(["build", SPEC, "-o", out], capsys)[0] == 0
    renamed = tmp_path / "renamed.spec"
    renamed.write_bytes(SPEC.read_bytes())
    code, _, _ = run(["build", "--check", renamed, "-o", out], capsys)
    assert code == 1  # every generated header names the spec: the tree is stale for the copy
    code, stdout, _ = run(["build", renamed, "-o", out], capsys)
    files = tree(out / OP_DIR)
    # the binary compile list is JSON, which has no comment to name the spec in: the same bytes, left unchanged
    unnamed = [f for f in files if f.endswith("_binary.json")]
    assert unnamed == ["op_host/config/ascend950/moe_distribute_dispatch_setup_binary.json"]
    assert code == 0 and int(SUMMARY.fullmatch(stdout.strip()).group(1)) == len(files) - len(unnamed)
    assert "renamed.spec" in files["op_host/moe_distribute_dispatch_setup_def.cpp"].decode()
    cold = tmp_path / "cold"
    assert run(["build", renamed, "-o", cold, "--no-cache"], capsys)[0] == 0
    assert tree(cold) == tree(out)
    assert run(["build", "--check", renamed, "-o", out], capsys)[0] == 0


def test_cached_build_is_byte_identical_to_a_cold_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(cache_dir.ENV, str(tmp_path / "cache"))
    assert run(["build", SPEC, "-o", tmp_path / "cold", "--no-cache"], capsys)[0] == 0
    assert not (tmp_path / "cache").exists()  # --no-cache: not even created
    assert run(["build", SPEC, "-o", tmp_path / "fill"], capsys)[0] == 0
    assert list((tmp_path / "cache" / "build").rglob("*.json.gz"))
    assert list((tmp_path / "cache" / "format").rglob("*.cpp"))  # every C++ file, as clang-format laid it out
    from opgen.emit import pipeline
    monkeypatch.setattr(pipeline, "emit", lambda *a: pytest.fail("a cache hit emits nothing"))
    monkeypatch.setattr(pipeline, "emit_shared", lambda *a: pytest.fail("the shared folder is in the cache too"))
    code, out, _ = run(["build", SPEC, "-o", tmp_path / "warm", "-v"], capsys)
    assert code == 0 and f"{SPEC}: cached" in out
    assert tree(tmp_path / "warm") == tree(tmp_path / "cold")
    assert run(["build", "--check", SPEC, "-o", tmp_path / "cold"], capsys)[0] == 0  # the shared folder compared


def test_torn_cache_entry_is_a_miss(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(cache_dir.ENV, str(tmp_path / "cache"))
    assert run(["build", SPEC, "-o", tmp_path / "a"], capsys)[0] == 0
    entries = list((tmp_path / "cache" / "build").rglob("*.json.gz"))
    assert len(entries) == 2  # the op's folder and the shared one
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])  # as if a writer died mid-file
    code, out, _ = run(["build", SPEC, "-o", tmp_path / "b", "-v"], capsys)
    assert code == 0 and f"{SPEC}: emitted" in out
    assert tree(tmp_path / "b") == tree(tmp_path / "a")


def test_one_constraint_edit_regenerates_what_a_cold_build_would(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(cache_dir.ENV, str(tmp_path / "cache"))
    spec = tmp_path / "dispatch_setup.spec"
    spec.write_bytes(SPEC.read_bytes())
    out = tmp_path / "out"
    assert run(["build", spec, "-o", out], capsys)[0] == 0
    before = tree(out)
    text = spec.read_text(encoding="utf-8")
    old = 'require K in (0, 16] else tiling expertIds(K) "K in (0, 16]";'
    assert text.count(old) == 1
    spec.write_text(text.replace(old, old.replace("16", "12")), encoding="utf-8")
    code, stdout, _ = run(["build", spec, "-o", out, "-v"], capsys)
    assert code == 0 and f"{spec}: emitted" in stdout
    assert run(["build", spec, "-o", tmp_path / "cold", "--no-cache"], capsys)[0] == 0
    assert tree(out) == tree(tmp_path / "cold") != before
    assert "K in (0, 12]" in tree(out)[f"{OP_DIR}/reference.py"].decode()


@pytest.mark.slow
def test_concurrent_builds_share_one_cache(tmp_path):
    """Three builds at once into one empty cache: each finishes, the trees agree, no entry is partial."""
    env = dict(os.environ, OPGEN_CACHE_DIR=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-m", "opgen", "build", str(SPEC), "-o", str(tmp_path / f"o{i}")],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(3)]
    assert [p.wait() for p in procs] == [0, 0, 0]
    assert tree(tmp_path / "o0") == tree(tmp_path / "o1") == tree(tmp_path / "o2")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.name.endswith(".tmp")]
    r = opgen_cmd("build", SPEC, "-o", tmp_path / "o3", "-v", env=env)
    assert r.returncode == 0 and f"{SPEC}: cached" in r.stdout and tree(tmp_path / "o3") == tree(tmp_path / "o0")


def test_fingerprint_reads_the_library_versions_importlib_reports():
    import importlib.metadata

    from opgen.core.fingerprint import _LIBRARIES, _library_versions
    assert _library_versions() == {d: importlib.metadata.version(d) for d in _LIBRARIES}


def test_specs_emitted_in_worker_processes_give_the_serial_bytes(tmp_path, capsys):
    specs = [SPEC, ROOT / "specs" / "combine_setup.spec"]
    assert run(["build", *specs, "-o", tmp_path / "serial", "--no-cache", "-j", "1"], capsys)[0] == 0
    code, out, _ = run(["build", *specs, "-o", tmp_path / "parallel", "--no-cache", "-j", "2", "-v"], capsys)
    assert code == 0 and out.count(": emitted (") == 2
    assert tree(tmp_path / "parallel") == tree(tmp_path / "serial")
    with pytest.raises(SystemExit) as e:
        cli.main(["build", str(SPEC), "-j", "0"])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        "opgen: error: argument -j/--jobs: expected a number of processes >= 1, got '0'"


def test_comment_edit_reuses_the_search_and_writes_the_cold_bytes(tmp_path, capsys, monkeypatch):
    """A comment changes the spec text (the build cache misses) but not the model or the reference: the search
    result is reused by content, and the files are what a cold build of the edited spec writes."""
    monkeypatch.setenv(cache_dir.ENV, str(tmp_path / "cache"))
    spec = tmp_path / "dispatch_setup.spec"
    spec.write_bytes(SPEC.read_bytes())
    assert run(["build", spec, "-o", tmp_path / "out"], capsys)[0] == 0
    assert list((tmp_path / "cache" / "search").rglob("*.pickle"))
    spec.write_text("# a comment the model does not see\n" + SPEC.read_text(encoding="utf-8"), encoding="utf-8")
    from opgen.testgen import suite
    monkeypatch.setattr(suite, "_suite", lambda *a: pytest.fail("the search ran again"))
    code, out, _ = run(["build", spec, "-o", tmp_path / "out", "-v"], capsys)
    assert code == 0 and f"{spec}: emitted" in out
    monkeypatch.undo()
    assert run(["build", spec, "-o", tmp_path / "cold", "--no-cache"], capsys)[0] == 0
    assert tree(tmp_path / "out") == tree(tmp_path / "cold")


def test_lark_tables_from_the_cache_and_shipped_parse_like_fresh_ones(tmp_path, monkeypatch):
    """The grammar's tables read back from lark's cache file and from the Python file opgen ships give the same
    trees and the same syntax errors (with their recovery) over the real specs and the bad-spec corpus."""
    from importlib import resources

    from opgen.core.diagnostics import Diagnostics
    from opgen.lang import parse

    grammar = resources.files("opgen.lang").joinpath("grammar.lark").read_text(encoding="utf-8")
    fresh = parse.build_parser(grammar, None)
    parse.build_parser(grammar, tmp_path)
    assert len(list(tmp_path.glob("grammar-*.lark"))) == 1 and not list(tmp_path.glob(".*.tmp"))
    cached = parse.build_parser(grammar, tmp_path)  # read from the file just written

    def parsed(parser, text):
        monkeypatch.setattr(parse, "parser", lambda: parser)
        d = Diagnostics()
        return parse.parse_text(text, "t.spec", d), d.render()

    shipped = parse.shipped_parser(grammar)  # the tables shipped as Python (opgen/lang/grammar_tables.py)
    assert shipped is not None
    files = sorted((ROOT / "specs").glob("*.spec")) + sorted((ROOT / "tests" / "corpus" / "bad").glob("*.spec"))
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        expected = parsed(fresh, text)
        assert parsed(cached, text) == expected, path.name
        assert parsed(shipped, text) == expected, path.name


def test_shipped_grammar_tables_are_the_grammars():
    """opgen/lang/grammar_tables.py is what `python -m opgen.lang.tables` writes for the grammar as it is (the
    same text in every process: lark's numbering of states is not); an edited grammar does not use it."""
    from opgen.lang import parse, tables

    assert tables.TARGET.read_text(encoding="utf-8") == tables.source(), "run python -m opgen.lang.tables"
    grammar = tables.grammar_text()
    assert parse.shipped_parser(grammar) is not None
    assert parse.shipped_parser(grammar.replace("start:", "start :", 1)) is None


def test_two_specs_of_one_op_are_e101_even_when_both_are_cached(tmp_path, capsys):
    copy = tmp_path / "copy.spec"
    copy.write_bytes(SPEC.read_bytes())
    assert run(["build", SPEC, "-o", tmp_path / "a"], capsys)[0] == 0
    assert run(["build", copy, "-o", tmp_path / "b"], capsys)[0] == 0  # both now have build-cache entries
    code, out, err = run(["build", SPEC, copy, "-o", tmp_path / "c"], capsys)
    assert code == 1 and out == "" and not (tmp_path / "c").exists()
    assert f"{copy}:21:1: error[E101]: op MoeDistributeDispatchSetup is also declared in {SPEC}" in err
