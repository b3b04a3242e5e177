"""The back-end corpus: `opgen build` reports every generator failure as a located, coded diagnostic.

Each ``tests/corpus/bad_backend/*.spec`` fails the build with exactly its ``.expected`` stderr, writes nothing
for its op, and never prints a traceback. The kernel cases (E2xx) pass `opgen check` (only the back end meets
them); the formula cases (E123/E124) are front-end errors, so `opgen check` reports the same diagnostics.
Refresh after an intentional message change with ``python tests/corpus/regen_backend.py``.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path

import pytest

from opgen.core import dtypes
from opgen.core.diagnostics import CODES
from opgen.emit.kernel import kernel_problem

from .conftest import ROOT, load_src

BAD = ROOT / "tests" / "corpus" / "bad_backend"
_spec = importlib.util.spec_from_file_location("corpus_regen_backend", BAD.parent / "regen_backend.py")
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)

SPECS = sorted(BAD.glob("*.spec"))
_HEAD = re.compile(r"^(tests/corpus/bad_backend/[0-9a-z_]+\.spec):(\d+):(\d+): error\[(E\d{3})\]: (.+)$")


def _id(p: Path) -> str:
    return p.stem


def _heads(text: str) -> list[re.Match]:
    return [m for m in map(_HEAD.match, text.splitlines()) if m]


def test_corpus_covers_each_kind_of_back_end_error():
    assert {p.stem for p in SPECS} == {p.stem for p in BAD.glob("*.expected")}
    codes = {m.group(4) for p in SPECS for m in _heads(regen.expected_path(p).read_text(encoding="utf-8"))}
    assert {"E201", "E123", "E124"} <= codes


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_build_prints_exactly_the_expected_diagnostics(spec, tmp_path):
    code, out, err = regen.build(spec, tmp_path)
    expected = regen.expected_path(spec).read_text(encoding="utf-8")
    assert code == 1
    assert "Traceback" not in out + err
    assert err == expected, (f"run `python tests/corpus/regen_backend.py {spec.name[:3]}` if intended\n"
                             f"--- expected\n{expected}--- actual\n{err}")
    assert not [p for p in tmp_path.rglob("*") if p.is_file()], "nothing is written for an op that failed"


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_every_diagnostic_points_into_the_spec_with_a_caret(spec):
    text = regen.expected_path(spec).read_text(encoding="utf-8")
    lines = spec.read_text(encoding="utf-8").split("\n")
    heads = _heads(text)
    assert heads, text
    out = text.splitlines()
    for m in heads:
        assert m.group(1) == regen.display_name(spec) and m.group(4) in CODES
        line, col = int(m.group(2)), int(m.group(3))
        i = out.index(m.group(0))
        assert out[i + 1].endswith(" | " + lines[line - 1])
        assert out[i + 2].index("^") - out[i + 2].index("|") - 2 == col - 1, "the caret starts at the column"


@pytest.mark.parametrize("spec", SPECS, ids=_id)
def test_check_agrees_with_build(spec):
    """Formula shapes and dtypes are front-end errors; what only a generator meets passes `opgen check`."""
    code, out, err = regen.run(["check", regen.display_name(spec)])
    expected = regen.expected_path(spec).read_text(encoding="utf-8")
    assert "Traceback" not in out + err
    if {m.group(4) for m in _heads(expected)} <= {"E123", "E124"}:
        assert code == 1 and err == expected
    else:
        assert code == 0 and err == "", err


def test_one_build_reports_every_failing_op_and_builds_the_others(tmp_path):
    failing = [BAD / "001_kernel_row_arith_on_raw_rows.spec", BAD / "004_kernel_formula_dtype_for_configuration.spec"]
    good = ROOT / "specs" / "combine_setup.spec"
    code, out, err = regen.run(["build", *map(regen.display_name, failing), "specs/combine_setup.spec",
                                "-o", str(tmp_path)])
    assert code == 1 and "Traceback" not in out + err
    total = 0
    for spec in failing:
        expected = regen.expected_path(spec).read_text(encoding="utf-8")
        trailer = re.search(r"(\d+) errors?\n$", expected)
        total += int(trailer.group(1))
        assert expected[:trailer.start()] in err
    assert err.endswith(f"{total} errors\n")
    # the op that could be built, and the shared folder its check core includes
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["common", "moe_distribute_combine_setup"]
    assert good.is_file() and out.strip().endswith("; 2 specs not built")


def test_a_dtype_without_an_ascend_c_type_is_located(tmp_path, monkeypatch):
    """A dtype row added to the table without an Ascend C element type fails the build at the dtype's name."""
    row = dataclasses.replace(dtypes.DTYPES["FLOAT16"], name="FLOAT8_E3M4", ge_enum="DT_FLOAT8_E3M4", ge_value=42,
                              acl_enum="ACL_FLOAT8_E3M4", acl_value=42, bits=8)
    monkeypatch.setitem(dtypes.DTYPES, "FLOAT8_E3M4", row)
    text = (ROOT / "specs" / "combine_teardown.spec").read_text(encoding="utf-8")
    text = text.replace("output xOut: FLOAT16 | BFLOAT16 format", "output xOut: FLOAT16 | BFLOAT16 | FLOAT8_E3M4 format")
    spec = tmp_path / "combine_teardown.spec"
    spec.write_text(text, encoding="utf-8")
    code, out, err = regen.run(["build", str(spec), "-o", str(tmp_path / "out")])
    assert code == 1 and "Traceback" not in out + err
    line = next(i for i, l in enumerate(text.split("\n"), 1) if "FLOAT8_E3M4" in l)
    col = text.split("\n")[line - 1].index("FLOAT8_E3M4") + 1
    assert err.startswith(f"{spec}:{line}:{col}: error[E202]: cannot generate the Ascend C kernel of "
                          f"MoeDistributeCombineTeardown: dtype FLOAT8_E3M4 of xOut has no Ascend C element type")
    assert "^^^^^^^^^^^" in err and not (tmp_path / "out" / "moe_distribute_combine_teardown").exists()


def test_an_empty_formula_body_is_the_one_mode_without_a_kernel_path(tmp_path):
    """A mode declared without a formula (CombineV2's MXFP8 modes once were) gets no kernel case, and no error.
    A mode whose formula leaves the row output unassigned in a reachable configuration is an error at that mode."""
    src = (ROOT / "specs" / "combine_v2.spec").read_text(encoding="utf-8")
    head = 'quant 3 mxfp8_e5m2 "mxfp8量化（FLOAT8_E5M2）" {\n'
    tail = "    # ---- test tolerances"
    modes = "        # current (op README): 0 or 2 (3 and 4: see the note above the quant modes)\n        quant_modes 0, 2;"
    assert tail in src and modes in src
    src = src.replace(tail, "    " + head + "    }\n" + tail, 1).replace(modes, "        quant_modes 0, 2, 3;")
    op, diags = load_src(src, str(tmp_path / "combine_v2.spec"))
    assert op is not None and kernel_problem(op) is None, diags.render()
    op, diags = load_src(src.replace(head, head + "        let v = cast(expandX, FLOAT32);\n"),
                         str(tmp_path / "combine_v2.spec"))
    assert op is not None, diags.render()
    problem = kernel_problem(op)
    assert problem is not None and "quant mode 3" in problem and "does not assign the kernel's row output xOut" in problem
