"""The product table (opgen/core/products.py) is the only place product facts live.

A product a spec defines with ``extends`` and no table row takes its base SoC's facts, keeps its own identity,
and its generated suite passes end to end; the facts the generated reference carries are the table's.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opgen import cli
from opgen.core import builtins as B
from opgen.core import products as P
from opgen.tools.coverage import load_cases

from .conftest import ROOT, SPECS
from .test_generated_suites import outcomes

NEW = "ascend910c"
NEW_BLOCK = f'''
    # a throw-away product: Atlas A3 hardware, a narrower sharedExpertNum
    product {NEW} "Throw-away test product" extends ascend910_93 {{
        attr sharedExpertNum in [0, 1];
    }}
'''


def _with_product(spec: Path, tmp: Path) -> Path:
    text = spec.read_text(encoding="utf-8")
    end = text.rstrip().rfind("}")  # the op's closing brace
    out = tmp / spec.name
    out.write_text(text[:end] + NEW_BLOCK + text[end:], encoding="utf-8")
    return out


def test_every_row_is_complete_and_consistent():
    assert list(P.PRODUCTS) == [f.soc for f in P._ROWS] and len(P.PRODUCTS) == len(P._ROWS)
    for soc, f in P.PRODUCTS.items():
        assert f.soc == soc and re.fullmatch(r"ascend\w+", soc)
        assert f.soc_name.lower() == soc.lower(), "the generated ParseSoc matches the SoC name case-insensitively"
        assert f.assist_layout in P.ASSIST_LAYOUTS and f.hccl_server in P.HCCL_SERVERS
        assert f.hccl_op_type in P.HCCL_CMD_NAMES and f.hccl_alg_config.split("=")[0] in ("AlltoAll", "BatchWrite")
        assert f.npu_arch > 0 and f.ub_bytes % 32768 == 0
        assert 0 < f.platform_ub_bytes <= f.ub_bytes and f.platform_ub_bytes % 1024 == 0
        assert f.ranks_per_server is None or f.ranks_per_server > 0
    assert B.PRODUCTS == {soc: f.display for soc, f in P.PRODUCTS.items()}


def test_a_product_without_a_row_takes_its_nearest_ancestors_hardware():
    a3 = P.PRODUCTS["ascend910_93"]
    got = P.facts_for([NEW, "ascend950", "ascend910_93"])
    assert got == dataclasses.replace(P.PRODUCTS["ascend950"], soc=NEW, soc_name="Ascend910c")
    assert P.facts_for([NEW, "x", "ascend910_93"]) == dataclasses.replace(a3, soc=NEW, soc_name="Ascend910c")
    assert P.facts_for(["ascend950", "ascend910_93"]) is P.PRODUCTS["ascend950"]  # its own row wins
    with pytest.raises(KeyError):
        P.facts_for([NEW, "ascend310"])
    assert P.known(NEW, {NEW: "ascend910_93"}.get) and not P.known(NEW, {NEW: "nope"}.get)
    assert not P.known(NEW, {NEW: NEW}.get)  # a cycle reaches no row


def test_a_spec_product_without_a_row_or_a_base_is_rejected(tmp_path):
    spec = tmp_path / SPECS[0].name
    spec.write_text(_with_product(SPECS[0], tmp_path).read_text().replace(" extends ascend910_93", ""))
    proc = subprocess.run([sys.executable, "-m", "opgen", "build", str(spec), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0 and "E104" in proc.stdout + proc.stderr


def test_the_generated_references_carry_the_table(tmp_path):
    assert cli.main(["build", str(ROOT / "specs" / "combine_v2.spec"), "-o", str(tmp_path)]) == 0
    path = tmp_path / "moe_distribute_combine_v2" / "reference.py"
    spec = importlib.util.spec_from_file_location("ref_under_test", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    assert set(ref.INFO.facts) == set(ref.PRODUCTS)
    for soc, f in ref.INFO.facts.items():
        assert f == P.PRODUCTS[soc]


@pytest.mark.slow
def test_a_product_defined_by_extends_builds_and_its_suite_passes(tmp_path):
    spec = _with_product(ROOT / "specs" / "dispatch_v2.spec", tmp_path)
    out = tmp_path / "generated"
    proc = subprocess.run([sys.executable, "-m", "opgen", "build", str(spec), "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    op_dir = out / "moe_distribute_dispatch_v2"
    cases = load_cases(op_dir)
    ids = [c["id"] for c in cases.POSITIVE if c["product"] == NEW]
    assert ids, f"no positive {NEW} case in cases.py"
    reference = (op_dir / "reference.py").read_text(encoding="utf-8")
    assert f'"{NEW}": ProductFacts(\n        soc="{NEW}", display="Atlas A3", soc_name="Ascend910c", npu_arch=2201' \
        in reference
    # the narrower range is the new product's own: its negative case probes just past it, A3's past A3's
    probes = {n["product"]: n["change"] for n in cases.NEGATIVE if n["check"] == "domain.sharedExpertNum"}
    assert probes[NEW].endswith("-> 2") and probes["ascend910_93"].endswith("-> 5"), probes
    junit = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", str(op_dir / "tests"), "-q", "-p", "no:cacheprovider",
                           "-k", f"{NEW} and not npu and not round_trip", f"--junitxml={junit}"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    results = outcomes(junit)
    runnable = [c["id"] for c in cases.POSITIVE if c["product"] == NEW and c["run"] is None]
    assert runnable
    for i in ids:  # the validator and the C++ check core accepted every positive case ...
        for test in ("test_accepted", "test_check_core_accepts"):
            assert results.get(f"{test}[{i}]") == "passed", (test, i)
    for i in runnable:  # ... and the reference ran every runnable one, its invariants holding
        for test in ("test_outputs", "test_dispatch_invariants"):
            assert results.get(f"{test}[{i}]") == "passed", (test, i)
    for n in cases.NEGATIVE:
        if n["product"] == NEW:
            assert results.get(f"test_rejected[{n['id']}]") == "passed", n["id"]
            assert results.get(f"test_check_core_rejects[{n['id']}]") == "passed", n["id"]
    twin = [k for k in results if k.startswith(f"test_cpu_twin[{NEW}")]
    assert twin and all(results[k] == "passed" for k in twin), twin  # the twin's platform took the facts


def test_a_twin_job_reports_the_product_s_platform_ub():
    """The twin's jobs tell the tiling the UB of the product table's row (``platform_ub_bytes``: 248 KiB on Ascend
    950, whose TPipe has 256 KiB), not a size of the twin's own; a caller may override it (the real 950 dispatch
    told the whole UB: tests/test_real_ops_world.py)."""
    import importlib

    from opgen.sim import job

    if str(ROOT / "generated") not in sys.path:
        sys.path.insert(0, str(ROOT / "generated"))
    ref = importlib.import_module("moe_distribute_dispatch_v2.reference")
    for soc, want in (("ascend950", 248 * 1024), ("ascend910_93", 192 * 1024), ("ascend910b", 192 * 1024)):
        lines = job.header_lines(ref, soc, 2, {}, 4, 10.0)
        assert f"platform_ub {want}" in lines and f"ub {P.PRODUCTS[soc].ub_bytes}" in lines, (soc, lines)
        assert f"platform_ub {P.PRODUCTS[soc].platform_ub_bytes}" in lines
    assert "platform_ub 262144" in job.header_lines(ref, "ascend950", 2, {}, 4, 10.0, platform_ub=262144)
