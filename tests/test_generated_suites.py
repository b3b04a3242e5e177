"""The suites `opgen build` generates (generated/<op>/tests) pass, cover every check, and catch broken code.

Every spec is built into a temporary directory; the six generated suites run in one pytest subprocess (as
a user runs them: `pytest <dir>/<op>/tests`), `opgen test` reports their coverage, and copies of the
generated reference and C++ check core with one line changed make the suites fail.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from opgen import cli
from opgen.core.layout import SHARED_DIR
from opgen.tools.coverage import load_cases, report, run_suite

from .conftest import ROOT, SPECS

DISPATCH, COMBINE = "moe_distribute_dispatch_v2", "moe_distribute_combine_v2"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("generated_suites")
    assert cli.main(["build", *map(str, SPECS), "-o", str(out)]) == 0
    return out


def pytest_run(paths: list[Path], *args: str, junit: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", *map(str, paths), "-q", "-p", "no:cacheprovider", *args]
    if junit is not None:
        cmd.append(f"--junitxml={junit}")
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)


def outcomes(junit: Path) -> dict[str, str]:
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        kinds = {child.tag for child in tc}
        out[tc.get("name")] = ("failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds
                               else "passed")
    return out


@pytest.mark.slow
def test_every_generated_suite_passes(built, tmp_path):
    dirs = sorted(p for p in built.iterdir() if (p / "tests" / "cases.py").is_file())
    assert len(dirs) == len(SPECS)
    junit = tmp_path / "junit.xml"
    proc = pytest_run([d / "tests" for d in dirs], junit=junit)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    results = outcomes(junit)
    for d in dirs:
        cases = load_cases(d)
        # every negative call ran against the Python validator and the C++ check core, and passed
        for n in cases.NEGATIVE:
            assert results.get(f"test_rejected[{n['id']}]") == "passed", n["id"]
            assert results.get(f"test_check_core_rejects[{n['id']}]") == "passed", n["id"]
        for c in cases.POSITIVE:
            assert results.get(f"test_accepted[{c['id']}]") == "passed", c["id"]
            assert results.get(f"test_check_core_accepts[{c['id']}]") == "passed", c["id"]
            if c["run"] is None:
                assert results.get(f"test_outputs[{c['id']}]") == "passed", c["id"]
    # the round trips ran (not only skipped): dispatch -> CombineV2, and the combines against x * sum(w)
    for name in (DISPATCH, COMBINE, "moe_distribute_combine_teardown"):
        trips = [v for k, v in results.items() if k.startswith("test_round_trip[") and
                 any(k == f"test_round_trip[{c['id']}]" for c in load_cases(built / name).POSITIVE)]
        assert trips.count("passed") >= 3, (name, trips)


def test_every_check_has_a_negative_case_or_a_reason(built):
    for spec in SPECS:
        ops, _ = cli.load_specs([str(spec)])
        op = ops[0][1]
        cases = load_cases(built / op.snake_name)
        covered = {(n["product"], n["check"]) for n in cases.NEGATIVE}
        reasons = {(u["product"], u["check"]): u["reason"] for u in cases.UNREACHABLE}
        for soc, view in op.views.items():
            for check in view.checks:
                key = (soc, check.id)
                assert key in covered or reasons.get(key), f"{spec.name} {soc} {check.id}"
        # most checks are reachable: unreachable ones are the exception, each with a reason
        assert len(covered) >= 2 * len(reasons), (spec.name, len(covered), len(reasons))


def test_opgen_test_reports_checks_tests_and_results(built, capsys):
    spec = ROOT / "specs" / "dispatch_setup.spec"
    code = cli.main(["test", str(spec), "-o", str(built), "--report"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "MoeDistributeDispatchSetup:" in out and out.rstrip().endswith("ok")
    assert re.search(r"^  op\.epRankId \(561002 epRankId\) -> ascend950-op\.epRankId: python passed, c\+\+ passed",
                     out, re.M), out
    assert "unreachable (no single-parameter change trips them" in out


def _copy(built: Path, dest: Path) -> Path:
    for name in (DISPATCH, COMBINE, SHARED_DIR):  # the op folders and the shared header their check cores include
        shutil.copytree(built / name, dest / name)
    return dest / DISPATCH


def _mutate(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.slow
def test_a_flipped_comparison_in_a_reference_check_fails_the_suite(built, tmp_path):
    op_dir = _copy(built, tmp_path)
    # epRankId in [0, epWorldSize) becomes (0, epWorldSize): rank 0 is refused
    _mutate(op_dir / "reference.py", 'in_range(s.attr("epRankId"), 0, s.attr("epWorldSize"), True, False)',
            'in_range(s.attr("epRankId"), 0, s.attr("epWorldSize"), False, False)')
    text, ok = report(load_cases(op_dir), run_suite(op_dir, ["-k", "accepted or rejected"]), full=False)
    assert not ok and text.rstrip().endswith("FAILED"), text
    # the first product's copy of the check is broken: its accepted worlds are now rejected by it
    assert "test_accepted[ascend910b-" in text and "[op.epRankId]" in text, text


def test_a_changed_quant_rounding_fails_the_suite(built, tmp_path):
    op_dir = _copy(built, tmp_path)
    ref = op_dir / "reference.py"
    line = next(l for l in ref.read_text(encoding="utf-8").splitlines()
                if 'out["expandXOut"] = q.cast((v_xf * v_ds)' in l)  # quantMode 2 (pertoken)
    _mutate(ref, line, line.replace('round="rint"', 'round="floor"'))
    proc = pytest_run([op_dir / "tests"], "-k", "quantised")
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "test_quantised_rows_are_nearest" in proc.stdout and "not the nearest" in proc.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="the check-core tests need g++")
def test_a_flipped_comparison_in_the_cpp_check_core_fails_the_suite(built, tmp_path):
    op_dir = _copy(built, tmp_path)
    header = op_dir / "op_host" / "op_tiling" / f"{DISPATCH}_check.h"
    _mutate(header, "Fails(InRange<'[', ')'>(p.epRankId, 0, p.epWorldSize))",
            "Fails(InRange<'(', ')'>(p.epRankId, 0, p.epWorldSize))")
    proc = pytest_run([op_dir / "tests"], "-k", "check_core")
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "test_check_core_accepts" in proc.stdout and "op.epRankId" in proc.stdout


def test_a_world_family_that_ran_no_world_fails_opgen_test():
    """No hollow green: a round trip (or twin subset) whose every world skipped checked nothing, and `opgen test`
    fails saying why; one world run is enough for the family (other partners may be unbuilt)."""
    from types import SimpleNamespace

    from opgen.tools.coverage import Outcome
    cases = SimpleNamespace(OP="Toy", POSITIVE=[{"id": "a"}, {"id": "b"}], NEGATIVE=[], UNREACHABLE=[], CHECKS={})
    skip = "the paired op rejects this world: MoeDistributeCombineV3 needs context (161001 nullptr)"
    outcome = Outcome(results={("test_accepted", "a"): "passed", ("test_round_trip", "a-P"): "skipped",
                               ("test_round_trip", "b-P"): "skipped", ("test_cpu_twin", "a"): "passed"},
                      messages={("test_round_trip", "a-P"): skip, ("test_round_trip", "b-P"): skip})
    text, ok = report(cases, outcome, full=False)
    assert not ok and text.endswith("FAILED\n"), text
    assert f"  the round trip (test_round_trip) ran no world: all 2 case(s) skipped: {skip}\n" in text
    assert "twin" not in text
    outcome.results[("test_round_trip", "b-P")] = "passed"
    text, ok = report(cases, outcome, full=False)
    assert ok and text.endswith("ok\n"), text
