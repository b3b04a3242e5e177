"""Every op family is one folder (opgen/families/<name>/) with its part for every layer, and the language names
exactly them."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from opgen import cli
from opgen.core import builtins as B
from opgen.core import family_parts
from opgen.core.families import FAMILIES, ROUND_TRIPS
from opgen.emit import kernel
from opgen.harness import family_worlds, testkit
from opgen.runtime import drivers

from .conftest import ROOT, SPECS


def test_every_family_has_every_layers_part():
    names = set(FAMILIES)
    assert set(B.SEMANTICS) == names
    assert names == set(family_parts.family_names()), "a family per folder of opgen/families"
    assert set(drivers.DRIVERS) == names, "a numpy driver per family (driver.py)"
    assert set(drivers.RANK_ATTRS) == names, "a rank rule per family (driver.py)"
    assert set(family_worlds.BUILDERS) == names, "a world builder per family (world.py)"
    assert set(kernel.KERNEL_KINDS) == names, "a kernel kind per family (kernel.py)"
    for name in names:
        assert (family_parts.ROOT / name / family_parts.KERNEL_TEMPLATE).is_file(), f"{name}: its kernel template"
    assert set(family_worlds.WRITTEN_REGIONS) <= names
    preludes = {f.prelude for f in FAMILIES.values() if f.prelude is not None}
    assert preludes <= names and set(family_worlds.PRELUDE_INPUTS) == preludes, "inputs for every prelude family"
    assert testkit.TWIN_PRELUDES == {f.name: f.prelude for f in FAMILIES.values() if f.prelude}
    for f in FAMILIES.values():
        assert f.round_trip in ROUND_TRIPS + (None,), f.name
        assert FAMILIES.get(f.prelude) is None or FAMILIES[f.prelude].prelude is None, "preludes do not chain"


def test_a_family_folder_lacking_a_part_is_named(tmp_path, monkeypatch):
    """A folder without one of the parts fails every layer that loads it with the folder and the part named."""
    fake = tmp_path / "families"
    for name in family_parts.family_names():
        (fake / name).mkdir(parents=True)
        (fake / name / "__init__.py").write_text("")
    (fake / "moe_shuffle").mkdir()
    (fake / "moe_shuffle" / "__init__.py").write_text("")
    import opgen.families
    monkeypatch.setattr(family_parts, "ROOT", fake)
    monkeypatch.setattr(opgen.families, "__path__", [str(fake), *opgen.families.__path__])
    family_parts.load_family_parts.cache_clear()
    try:
        with pytest.raises(family_parts.FamilyPartError, match=r"op family moe_shuffle has no driver part: "
                                                             r"opgen/families/moe_shuffle/driver.py"):
            family_parts.load_family_parts("driver")
        with pytest.raises(ValueError, match="no family part 'drivers'"):
            family_parts.load_family_parts("drivers")
    finally:
        family_parts.load_family_parts.cache_clear()
        sys.modules.pop("opgen.families.moe_shuffle", None)


def test_pyproject_ships_every_family():
    """The wheel holds every family folder as a package, and its kernel template (pyproject lists them)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for name in family_parts.family_names():
        assert f'"opgen.families.{name}"' in text, f"pyproject.toml [tool.setuptools] packages lacks opgen.families.{name}"
    assert '"opgen.families" = ["*/kernel.cpp.j2"]' in text


def test_the_facts_name_what_the_specs_declare():
    """Outputs a family's facts name exist in the spec of that family; a TP limit only where TP exists."""
    seen = set()
    for spec in SPECS:
        ops, _ = cli.load_specs([str(spec)])
        op = ops[0][1]
        f = FAMILIES[op.semantics]
        seen.add(f.name)
        outputs = {op.role_of(t.name) for t in op.outputs}  # the family's names (roles) of the op's outputs
        assert set(f.seed_opaque) <= outputs, (f.name, set(f.seed_opaque) - outputs)
        assert set(f.writes) <= outputs, (f.name, set(f.writes) - outputs)
        if f.no_tp_reference is not None:
            assert op.attr(op.named("tpWorldSize")) is not None, f.name
        if f.shared_expert_x:
            assert op.tensor(op.named("sharedExpertXOptional")) is not None, f.name
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


def test_a_new_family_is_a_folder(tmp_path):
    """Adding a family is adding its folder: in a copy of the package, a copy of CombineSetup's folder under a new
    name becomes a family every layer knows, and a spec naming it builds its kernel from the folder's template."""
    copy = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "opgen", copy / "opgen", ignore=ignore)
    shutil.copytree(ROOT / "templates", copy / "templates", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    new = copy / "opgen" / "families" / "moe_echo"
    shutil.copytree(copy / "opgen" / "families" / "moe_combine_setup", new)
    for part in ("facts.py", "kernel.py"):
        text = (new / part).read_text(encoding="utf-8")
        (new / part).write_text(text.replace('"moe_combine_setup"', '"moe_echo"'), encoding="utf-8")
    spec = tmp_path / "echo.spec"
    spec.write_text((ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
                    .replace("semantics moe_combine_setup;", "semantics moe_echo;"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = ("import opgen; from opgen.core import builtins; from opgen.runtime import drivers; "
             "from opgen.harness import family_worlds; from opgen.emit import kernel; "
             "print(opgen.__file__); print(all('moe_echo' in r for r in (builtins.SEMANTICS, drivers.DRIVERS, "
             "family_worlds.BUILDERS, kernel.KERNEL_KINDS)))")
    res = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(copy / "opgen" / "__init__.py"), "True"]
    res = subprocess.run([sys.executable, "-m", "opgen", "build", str(spec), "-o", str(tmp_path / "out")],
                         cwd=copy, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ("moe_distribute_combine_setup_gen.h", "moe_distribute_combine_setup.cpp"):  # the spec's part, the entry
        kernel_file = tmp_path / "out" / "moe_distribute_combine_setup" / "op_kernel" / name
        assert kernel_file.read_text(encoding="utf-8") == \
            (ROOT / "generated" / "moe_distribute_combine_setup" / "op_kernel" / name)\
            .read_text(encoding="utf-8").replace("combine_setup.spec", "echo.spec")
    # the family's class template, copied into the shared folder its _gen.h includes
    assert (tmp_path / "out" / "common" / "op_kernel" / "moe_combine_setup_kernel.h").read_bytes() == \
        (ROOT / "generated" / "common" / "op_kernel" / "moe_combine_setup_kernel.h").read_bytes()
