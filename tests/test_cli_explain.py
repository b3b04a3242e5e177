"""`opgen explain` and command-line usage errors."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opgen import cli
from opgen.core.diagnostics import CODES, explain

ROOT = Path(__file__).resolve().parent.parent


def test_explain_prints_the_explanation(capsys):
    assert cli.main(["explain", "E102"]) == 0
    out, err = capsys.readouterr()
    title, text = CODES["E102"]
    assert out.startswith(f"E102: {title}\n")
    assert text in out
    assert err == ""


def test_explain_accepts_lower_case(capsys):
    assert cli.main(["explain", "e102"]) == 0
    assert capsys.readouterr().out.startswith("E102: unknown name")


@pytest.mark.parametrize("code", ["E999", "E1020", "X102", "102", ""])
def test_unknown_code_exits_2(code, capsys):
    assert cli.main(["explain", code]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "unknown error code" in err and "E102" in err  # the known codes are listed


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_has_an_explanation(code, capsys):
    title, text = CODES[code]
    assert re.fullmatch(r"E[0-9]{3}", code)
    assert title.strip() and text.strip()
    assert len(text.split()) >= 5, f"{code}: the explanation is too short to help"
    assert explain(code) == f"{code}: {title}\n\n{text}\n"
    assert cli.main(["explain", code]) == 0
    assert capsys.readouterr().out == explain(code)


def test_codes_are_unique_in_title():
    titles = [title for title, _ in CODES.values()]
    assert len(titles) == len(set(titles))


def test_explain_functions_lists_every_builtin(capsys):
    from opgen.core.builtins import BUILTINS
    assert cli.main(["explain", "functions"]) == 0
    out = capsys.readouterr().out
    for name in BUILTINS:
        assert re.search(rf"^{name}\(", out, re.M), name


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["check"], ["explain"], ["explain", "E102", "E103"],
                                  ["build", "--no-such-flag", "x.spec"]])
def test_bad_usage_exits_2_in_process(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: opgen" in err
    assert "Traceback" not in err


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "opgen", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=60)


def test_python_dash_m_bad_usage_exits_2():
    r = _run()
    assert r.returncode == 2, r
    assert "usage: opgen" in r.stderr and "Traceback" not in r.stderr
    r = _run("no-such-command")
    assert r.returncode == 2, r
    assert "invalid choice" in r.stderr


def test_python_dash_m_explain():
    r = _run("explain", "E102")
    assert r.returncode == 0, r
    assert r.stdout == explain("E102")
    r = _run("explain", "E000")
    assert r.returncode == 2 and r.stdout == "" and "unknown error code 'E000'" in r.stderr, r


def test_explain_roles_lists_each_family_s_roles_by_kind(capsys):
    assert cli.main(["explain", "roles"]) == 0
    out = capsys.readouterr().out
    from opgen.core.families import FAMILIES
    blocks = out.split("\n")
    for name, family in FAMILIES.items():
        head = next(i for i, l in enumerate(blocks) if l.startswith(f"{name}: "))
        attrs = next(l for l in blocks[head + 1:] if l.startswith("  attrs: "))
        assert attrs == "  attrs: " + ", ".join(r for r, k in family.roles if k == "attr")
    # the combine family's globalBS (CombineV3's documents write globalBs) and its optional inputs, bracketed
    assert "  attrs: epWorldSize, epRankId, moeExpertNum, sharedExpertNum, sharedExpertRankNum, tpWorldSize, " \
           "tpRankId, globalBS\n" in out
    assert "  inputs: x, expertIds, [scalesOptional], [xActiveMaskOptional], [expertScalesOptional], " \
           "[elasticInfoOptional], [performanceInfoOptional]\n" in out
