"""Every op family (opgen/core/families.py) has its part in every layer, and the language names exactly them."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

from opgen import cli
from opgen.core import builtins as B
from opgen.core.families import FAMILIES, ROUND_TRIPS
from opgen.emit import kernel
from opgen.harness import testkit, testworld
from opgen.runtime import drivers

from .conftest import ROOT, SPECS


def test_every_family_has_every_layers_part():
    names = set(FAMILIES)
    assert set(B.SEMANTICS) == names
    assert set(drivers.DRIVERS) == names, "a numpy driver per family (runtime/drivers.py)"
    assert set(drivers.RANK_ATTRS) == names, "a rank rule per family (runtime/drivers.py)"
    assert set(testworld.BUILDERS) == names, "a world builder per family (harness/testworld.py)"
    assert set(kernel.KERNEL_KINDS) == names, "a kernel template per family (emit/kernel.py)"
    assert set(testkit.WRITTEN_REGIONS) <= names
    preludes = {f.prelude for f in FAMILIES.values() if f.prelude is not None}
    assert preludes <= names and set(testworld.PRELUDE_INPUTS) == preludes, "inputs for every prelude family"
    assert testkit.TWIN_PRELUDES == {f.name: f.prelude for f in FAMILIES.values() if f.prelude}
    for f in FAMILIES.values():
        assert f.round_trip in ROUND_TRIPS + (None,), f.name
        assert FAMILIES.get(f.prelude) is None or FAMILIES[f.prelude].prelude is None, "preludes do not chain"


def test_the_facts_name_what_the_specs_declare():
    """Outputs a family's facts name exist in the spec of that family; a TP limit only where TP exists."""
    seen = set()
    for spec in SPECS:
        ops, _ = cli.load_specs([str(spec)])
        op = ops[0][1]
        f = FAMILIES[op.semantics]
        seen.add(f.name)
        outputs = {t.name for t in op.outputs}
        assert set(f.seed_opaque) <= outputs, (f.name, set(f.seed_opaque) - outputs)
        assert set(f.writes) <= outputs, (f.name, set(f.writes) - outputs)
        if f.no_tp_reference is not None:
            assert op.attr("tpWorldSize") is not None, f.name
        if f.shared_expert_x:
            assert op.tensor("sharedExpertXOptional") is not None, f.name
        if f.dispatch_invariants:
            assert {"epRecvCountsOut", "expertTokenNumsOut", "assistInfoForCombineOut"} <= outputs, f.name
    assert seen == set(FAMILIES), "every family has a spec in specs/"


def test_a_spec_naming_no_family_is_rejected(tmp_path):
    text = SPECS[0].read_text(encoding="utf-8")
    spec = tmp_path / SPECS[0].name
    spec.write_text(re.sub(r"\bsemantics \w+;", "semantics moe_shuffle;", text, count=1), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "opgen", "build", str(spec), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0 and "E122" in proc.stdout + proc.stderr


def test_the_families_write_what_their_rows_say(tmp_path):
    """Family.writes (with the formula-assigned outputs and a post stage's) is what the numpy drivers write: over the generated
    suites' runnable worlds, an output outside it stays zero everywhere, and each one inside it (where the
    product does not mark it unspecified) has contents in some world. E204 relies on the first half."""
    import importlib

    from opgen.model.written import assigned_by_formulas, family_writes

    generated = ROOT / "generated"
    if str(generated) not in sys.path:
        sys.path.insert(0, str(generated))
    for spec in SPECS:
        ops, _ = cli.load_specs([str(spec)])
        op = ops[0][1]
        family = FAMILIES[op.semantics]
        ref = importlib.import_module(f"{op.snake_name}.reference")
        cases = importlib.import_module(f"{op.snake_name}.tests.cases")
        runs = [c for c in cases.POSITIVE if c["run"] is None and c["world"] <= 8][:6]
        assert runs, op.name
        filled: set[str] = set()
        for case in runs:
            view = op.views[case["product"]]
            written = family_writes(op) | assigned_by_formulas(op, view.quant_modes)
            world = testkit.build_world(ref, case)
            for rank, outs in enumerate(testkit.run(ref, case, world)):
                for name, value in outs.items():
                    contents = bool(np.any(np.asarray(value.view(np.uint8) if value.dtype.kind == "V" else value)))
                    if name not in written:
                        assert not contents, (op.name, case["id"], rank, name, "written but not in Family.writes")
                    elif contents and name not in view.unspecified_outputs:
                        filled.add(name)
        expected = family_writes(op) | assigned_by_formulas(op)
        unspecified_everywhere = {t.name for t in op.outputs if all(t.name in v.unspecified_outputs
                                                                    for v in op.views.values())}
        assert expected - unspecified_everywhere <= filled, (op.name, expected - unspecified_everywhere - filled)
