"""Every generated C++ file is as the repository's clang-format lays it out (issue 34: the op folder drops into
ops-transformer, whose files follow its ``.clang-format``)."""
from __future__ import annotations

import subprocess
from importlib import resources
from pathlib import Path

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
