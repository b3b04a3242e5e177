"""`opgen test`: run an op's generated suite and report constraint -> negative tests -> result.

The suite runs in a pytest subprocess (so the generated packages import cleanly) with a JUnit report; the
cases come from the generated ``tests/cases.py`` itself, so the report describes exactly what ran.  The
run fails when a test fails, when a check has neither a negative test nor a recorded reason, or when a family of
world checks (the round trip, the CPU twin subset) ran no world at all (every case skipped: nothing was checked).
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Outcome:
    results: dict = field(default_factory=dict)   # (test function, case id) -> passed | failed | skipped | error
    messages: dict = field(default_factory=dict)  # same key -> failure or skip message
    returncode: int = 0
    output: str = ""

    def of(self, test: str, case_id: str) -> str:
        return self.results.get((test, case_id), "not run")

    def counts(self) -> dict:
        out: dict = {}
        for r in self.results.values():
            out[r] = out.get(r, 0) + 1
        return out


def load_cases(op_dir: Path):
    path = op_dir / "tests" / "cases.py"
    spec = importlib.util.spec_from_file_location(f"_opgen_cases_{op_dir.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_suite(op_dir: Path, extra: list[str] | None = None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="opgen-test-") as tmp:
        report = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", str(op_dir / "tests"), "-q", "-p", "no:cacheprovider",
               f"--junitxml={report}", "-o", "junit_family=xunit1", *(extra or [])]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        outcome = Outcome(returncode=proc.returncode, output=proc.stdout + proc.stderr)
        if report.is_file():
            _read_junit(report, outcome)
    return outcome


def _read_junit(path: Path, outcome: Outcome) -> None:
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name", "")
        test, _, param = name.partition("[")
        key = (test, param[:-1] if param.endswith("]") else "")
        result, message = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                result, message = ("failed" if child.tag == "failure" else "error"), child.get("message", "")
            elif child.tag == "skipped":
                result, message = "skipped", child.get("message", "")
        outcome.results[key] = result
        outcome.messages[key] = message


# The suite's checks that each run a family of worlds: a family whose every case was skipped checked nothing, and
# a run that reports ok over it would be a hollow green.
WORLD_FAMILIES = (("test_round_trip", "round trip"), ("test_cpu_twin", "CPU twin subset"))


def worlds_not_run(outcome: Outcome) -> list[str]:
    """Each world family that had cases and ran none of them, with why (its distinct skip reasons, the first 3)."""
    out = []
    for test, what in WORLD_FAMILIES:
        keys = [k for k in outcome.results if k[0] == test]
        if keys and all(outcome.results[k] == "skipped" for k in keys):
            why = list(dict.fromkeys(outcome.messages.get(k, "") for k in keys))
            out.append(f"the {what} ({test}) ran no world: all {len(keys)} case(s) skipped: "
                       + "; ".join(w[:200] for w in why[:3]) + ("; ..." if len(why) > 3 else ""))
    return out


def report(cases, outcome: Outcome, full: bool) -> tuple[str, bool]:
    """(text, ok): the coverage table (``full``) or its summary, and whether the run passes."""
    lines: list[str] = []
    neg_by_check: dict = {}
    for n in cases.NEGATIVE:
        neg_by_check.setdefault((n["product"], n["check"]), []).append(n)
    unreachable: dict = {}
    for u in cases.UNREACHABLE:
        unreachable.setdefault((u["product"], u["check"]), []).append(u)
    missing, bad = [], []
    counts = outcome.counts()
    lines.append(f"{cases.OP}: {len(cases.POSITIVE)} positive worlds, {len(cases.NEGATIVE)} negative calls; "
                 + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for product, rows in cases.CHECKS.items():
        covered = sum(1 for c in rows if (product, c[0]) in neg_by_check)
        lines.append(f"{product}: {len(rows)} checks, {covered} with a negative test, "
                     f"{sum(1 for c in rows if (product, c[0]) in unreachable and (product, c[0]) not in neg_by_check)} "
                     f"unreachable")
        for check_id, code, param in rows:
            negs = neg_by_check.get((product, check_id), [])
            if not negs and (product, check_id) not in unreachable:
                missing.append(f"{product} {check_id}")
            for n in negs:
                py, cpp = outcome.of("test_rejected", n["id"]), outcome.of("test_check_core_rejects", n["id"])
                if py in ("failed", "error", "not run") or cpp in ("failed", "error"):
                    bad.append(f"{n['id']}: python {py}, c++ {cpp}")
                if full:
                    branch = f" [{n['branch']}]" if n.get("branch") else ""
                    lines.append(f"  {check_id}{branch} ({code} {param}) -> {n['id']}: python {py}, c++ {cpp}"
                                 f"  ({n['change']})")
            if full and not negs and (product, check_id) in unreachable:
                lines.append(f"  {check_id} ({code} {param}) -> unreachable")
    failed = sorted(f"{t}[{c}]" for (t, c), r in outcome.results.items() if r in ("failed", "error"))
    lines.append(f"unreachable (no single-parameter change trips them; {len(cases.UNREACHABLE)}):")
    unexplained = []
    for u in cases.UNREACHABLE:
        branch = f" [{u['branch']}]" if u["branch"] else ""
        why = f" (the spec: {u['marked']})" if u.get("marked") else ""
        lines.append(f"  {u['product']} {u['check']}{branch}: {u['reason']}{why}")
        if not u.get("declared") and not u.get("marked"):
            unexplained.append(f"{u['product']} {u['check']}{branch}")
    if unexplained:  # a build refuses these (E205): a suite written by hand or by an older opgen
        lines.append(f"unreachable checks the spec neither switches off nor marks ({len(unexplained)}):")
        lines += [f"  {m}" for m in unexplained]
    if missing:
        lines.append(f"checks with neither a negative test nor a reason ({len(missing)}):")
        lines += [f"  {m}" for m in missing]
    if failed:
        lines.append(f"failed tests ({len(failed)}):")
        lines += [f"  {f}: {outcome.messages.get(_split(f), '')[:200]}" for f in failed]
    elif bad:
        lines.append("negative tests that did not pass:")
        lines += [f"  {b}" for b in bad]
    hollow = worlds_not_run(outcome)
    if hollow:
        lines.append(f"check families that ran no world ({len(hollow)}):")
        lines += [f"  {h}" for h in hollow]
    ok = outcome.returncode == 0 and not missing and not unexplained and not failed and not bad and \
        not hollow and bool(outcome.results)
    if not outcome.results:
        lines.append("the suite did not run:")
        lines.append(outcome.output[-4000:])
    lines.append("ok" if ok else "FAILED")
    return "\n".join(lines) + "\n", ok


def _split(name: str) -> tuple[str, str]:
    test, _, param = name.partition("[")
    return test, param[:-1]
