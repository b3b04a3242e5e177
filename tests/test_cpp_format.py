"""Every generated C++ file is as the repository's clang-format lays it out (issue 34: the op folder drops into
ops-transformer, whose files follow its ``.clang-format``)."""
from __future__ import annotations

import subprocess
from importlib import resources
from pathlib import Path

import pytest

from opgen.emit import cpp_format
from opgen.core.artifact import Artifact

ROOT = Path(__file__).resolve().parent.parent
GENERATED = sorted(p for p in (ROOT / "generated").rglob("*") if cpp_format.is_cpp(p.name))


def test_every_generated_cpp_file_is_clang_format_clean():
    assert len(GENERATED) > 100  # every op's host, op_api, kernel and check-core files
    with resources.as_file(cpp_format.STYLE) as style:
        run = subprocess.run([cpp_format.executable(), "--dry-run", "-Werror", f"--style=file:{style}",
                              *map(str, GENERATED)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:4000]



def test_the_plain_cpp_headers_of_the_templates_are_clang_format_clean():
    """templates/cpp/common/op_kernel/*.h are copied into every build's shared folder as they are, so they must
    already be as clang-format lays them out (else the build's formatting changes them and the shared folder no
    longer equals its template: tests/test_packaging.py, slow)."""
    headers = sorted((ROOT / "templates" / "cpp" / "common" / "op_kernel").glob("*.h"))
    assert len(headers) >= 9  # every family's kernel class and the helpers they share
    with resources.as_file(cpp_format.STYLE) as style:
        run = subprocess.run([cpp_format.executable(), "--dry-run", "-Werror", f"--style=file:{style}",
                              *map(str, headers)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:4000]

def test_style_is_the_repositorys():
    """The copied style file carries the repository's settings (a wrong copy would format every file wrongly)."""
    text = cpp_format.STYLE.read_text(encoding="utf-8")
    assert "ColumnLimit:     120" in text and "IndentWidth:     4" in text and "SortIncludes:    false" in text


def test_format_artifacts_formats_only_cpp_and_keeps_order():
    arts = [Artifact("a/x.h", "int   f( int a,int b );\n"), Artifact("b.py", "x  =  1\n"),
            Artifact("c/x.h", "struct S{int a;};\n")]
    out = cpp_format.format_artifacts(arts)
    assert [a.path for a in out] == ["a/x.h", "b.py", "c/x.h"]
    assert out[0].content == "int f(int a, int b);\n"
    assert out[1].content == "x  =  1\n"
    assert out[2].content == "struct S {\n    int a;\n};\n"


def test_pinned_version():
    assert "clang-format==" + cpp_format.VERSION in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


# ---- the format cache ------------------------------------------------------------------------------------------

ARTS = [Artifact("a/x.h", "int   f( int a,int b );\n"), Artifact("b.py", "x  =  1\n")]
FORMATTED = ["int f(int a, int b);\n", "x  =  1\n"]


def _cache_on(monkeypatch, tmp_path) -> Path:
    from opgen.core import cache_dir
    monkeypatch.setenv(cache_dir.ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(cache_dir, "_enabled", True)
    return tmp_path / "cache" / "format"


def test_a_formatted_file_is_read_back_from_the_cache_without_clang_format(tmp_path, monkeypatch):
    store = _cache_on(monkeypatch, tmp_path)
    assert [a.content for a in cpp_format.format_artifacts(ARTS)] == FORMATTED
    (entry,) = store.rglob("*.cpp")  # the C++ file only
    monkeypatch.setattr(cpp_format.subprocess, "Popen", lambda *a, **k: pytest.fail("clang-format ran"))
    assert [a.content for a in cpp_format.format_artifacts(ARTS)] == FORMATTED
    # another text, another name or another style is another key
    other = [Artifact("a/y.h", ARTS[0].content)]
    with pytest.raises(pytest.fail.Exception, match="clang-format ran"):
        cpp_format.format_artifacts(other)
    monkeypatch.setattr(cpp_format, "_style_text", lambda: "ColumnLimit: 40\n")
    with pytest.raises(pytest.fail.Exception, match="clang-format ran"):
        cpp_format.format_artifacts(ARTS)


def test_a_torn_format_entry_is_a_miss_and_is_rewritten(tmp_path, monkeypatch):
    store = _cache_on(monkeypatch, tmp_path)
    cpp_format.format_artifacts(ARTS)
    (entry,) = store.rglob("*.cpp")
    whole = entry.read_bytes()
    entry.write_bytes(whole[:-3])  # as if the disk lost the end of it
    assert [a.content for a in cpp_format.format_artifacts(ARTS)] == FORMATTED
    assert entry.read_bytes() == whole


def test_no_cache_formats_without_reading_or_writing_the_cache(tmp_path, monkeypatch):
    from opgen.core import cache_dir
    monkeypatch.setenv(cache_dir.ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(cache_dir, "_enabled", False)
    assert [a.content for a in cpp_format.format_artifacts(ARTS)] == FORMATTED
    assert not (tmp_path / "cache").exists()


def test_files_submitted_in_several_runs_are_formatted_as_in_one(tmp_path, monkeypatch):
    from opgen.core import cache_dir
    monkeypatch.setattr(cache_dir, "_enabled", False)
    arts = [Artifact("a/x.h", "int   f( int a,int b );\n"), Artifact("a/y.cpp", "struct S{int a;};\n"),
            Artifact("z.md", "#  t\n")]
    with cpp_format.Formatter() as fmt:
        fmt.submit(arts[:1])
        fmt.submit(arts[1:])
        assert fmt.formatted(arts) == cpp_format.format_artifacts(arts)


def test_a_clang_format_failure_is_raised(tmp_path, monkeypatch):
    from opgen.core import cache_dir
    monkeypatch.setattr(cache_dir, "_enabled", False)
    monkeypatch.setattr(cpp_format, "executable", lambda: "false")  # exits 1, as a crashed formatter would
    with pytest.raises(subprocess.CalledProcessError):
        cpp_format.format_artifacts(ARTS)
