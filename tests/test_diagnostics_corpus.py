"""The corpus of bad specs: each renders exactly its .expected diagnostics, and every diagnostic is well formed.

Refresh the .expected files after an intentional message change with ``python tests/corpus/regen.py``.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from opgen import cli
from opgen.core.diagnostics import CODES

BAD = Path(__file__).resolve().parent / "corpus" / "bad"
ROOT = BAD.parent.parent.parent

_spec = importlib.util.spec_from_file_location("corpus_regen", BAD.parent / "regen.py")
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)

SPECS = sorted(BAD.glob("*.spec"))

# Diagnostics written by Diagnostics.unknown(): "unknown <what> '<word>'".
_UNKNOWN = re.compile(r"unknown [a-z ]+ '([^']*)'\Z")

# The suggestion each misspelling must get.
SUGGESTIONS = {
    "001_misspelt_attr_in_require": "epWorldSize",
    "002_unknown_dtype_bfloat61": "BFLOAT16",
    "003_unknown_product_ascend910c": "ascend910b",
    "008_unknown_function": "min",
    "018_unbound_output_dim": "H",
    "020_unknown_error_class_tilling": "tiling",
    "021_blame_unknown_param": "epRankId",
    "024_bad_op_name": "MoeDispatch",
    "030_quant_assign_non_output": "dynamicScalesOut",
    "035_unknown_rounding_mode": "rint",
    "040_unknown_format": "ND",
    "045_unknown_attr_type": "int64",
    "046_override_unknown_attr": "epWorldSize",
    "047_unknown_keyword": "round",
    "049_buffer_unknown_env": "HCCL_BUFFSIZE",
    "058_unknown_base_product": "ascend910b",
}


def _id(p: Path) -> str:
    return p.stem


def test_corpus_is_large_enough():
    assert len(SPECS) >= 40, f"only {len(SPECS)} bad specs in {BAD}"


def test_every_spec_has_expected_output_and_vice_versa():
    specs = {p.stem for p in SPECS}
    expected = {p.stem for p in BAD.glob("*.expected")}
    assert specs - expected == set(), "run `python tests/corpus/regen.py` to create the missing .expected files"
    assert expected - specs == set(), "a .expected file has no .spec next to it"
    for p in SPECS:
        assert re.fullmatch(r"[0-9]{3}_[a-z0-9_]+", p.stem), f"corpus names are NNN_short_name: {p.name}"


def test_corpus_numbers_are_unique():
    numbers = [p.name[:3] for p in SPECS]
    assert len(numbers) == len(set(numbers))


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_rendered_diagnostics_match_expected(spec):
    op, diags = regen.diagnose(spec)
    assert op is None, f"{spec.name} loaded without errors: a corpus spec must be bad"
    expected = regen.expected_path(spec).read_text(encoding="utf-8")
    actual = diags.render(color=False)
    assert actual == expected, (
        f"diagnostics of {spec.name} changed; if intended, run `python tests/corpus/regen.py {spec.name[:3]}` "
        f"and review the diff.\n--- expected\n{expected}--- actual\n{actual}")


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_every_diagnostic_is_well_formed(spec):
    _, diags = regen.diagnose(spec)
    assert diags.items, f"{spec.name}: no diagnostics"
    text = diags.sources.get(regen.display_name(spec))
    assert text is not None, "the caret lines need the source text"
    lines = text.split("\n")
    for d in diags.items:
        assert d.code in CODES, f"{d.code} is not registered in CODES"
        assert d.severity == "error"
        assert d.message and "\n" not in d.message
        assert d.span is not None, f"{d.code} {d.message!r} has no position"
        s = d.span
        assert s.file == regen.display_name(spec)
        assert 1 <= s.line <= s.end_line <= len(lines), f"{d.message!r}: line {s.line} outside the file"
        assert 1 <= s.col <= len(lines[s.line - 1]) + 1, f"{d.message!r}: column {s.col} outside line {s.line}"
        if s.end_line == s.line:
            assert s.end_col > s.col, f"{d.message!r}: empty span"
        m = _UNKNOWN.match(d.message)
        if m:
            assert d.help and d.help.startswith("did you mean '"), \
                f"{spec.name}: {d.message!r} has no did-you-mean although the corpus only misspells known names"
            assert d.help != f"did you mean '{m.group(1)}'?", "the suggestion must differ from the misspelling"


@pytest.mark.parametrize("stem,word", sorted(SUGGESTIONS.items()))
def test_misspellings_get_the_right_suggestion(stem, word):
    spec = BAD / f"{stem}.spec"
    _, diags = regen.diagnose(spec)
    helps = [d.help for d in diags.items]
    assert f"did you mean '{word}'?" in helps, helps


def test_caret_points_at_the_misspelt_word():
    spec = BAD / "002_unknown_dtype_bfloat61.spec"
    _, diags = regen.diagnose(spec)
    (d,) = diags.items
    line = spec.read_text(encoding="utf-8").split("\n")[d.span.line - 1]
    assert line[d.span.col - 1:d.span.end_col - 1] == "BFLOAT61"


@pytest.mark.parametrize("stem", ["042_several_semantic_errors", "043_several_syntax_errors"])
def test_one_run_reports_every_error(stem):
    _, diags = regen.diagnose(BAD / f"{stem}.spec")
    lines = {d.span.line for d in diags.items}
    assert len(diags.items) >= 3 and len(lines) == len(diags.items), diags.render()
    if stem.startswith("042"):
        assert {"E102", "E103", "E104", "E107", "E114"} <= {d.code for d in diags.items}


def test_syntax_recovery_does_not_invent_errors():
    """A forgotten ';' or ':' is reported once; the statements after it parse normally."""
    _, diags = regen.diagnose(BAD / "043_several_syntax_errors.spec")
    assert [(d.code, d.span.line) for d in diags.sorted()] == [("E001", 4), ("E001", 14), ("E001", 24)]


@pytest.mark.parametrize("spec", SPECS[::7], ids=_id)
def test_cli_check_prints_the_same_diagnostics(spec, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")
    rc = cli.main(["check", regen.display_name(spec)])
    out, err = capsys.readouterr()
    assert rc == 1
    assert err.startswith(regen.expected_path(spec).read_text(encoding="utf-8")), err
