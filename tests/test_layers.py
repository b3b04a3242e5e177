"""opgen imports in one direction: no import cycle (imports inside functions count), and no layer reaches up."""
from __future__ import annotations

from opgen.core.family_parts import PARTS
from opgen.tools.imports import cycles, graph

from .conftest import ROOT

# Which layers (sub-packages of opgen) each layer may import; anything else is a back edge.
BELOW = {
    "core": set(),
    "lang": {"core"},
    "model": {"core", "lang"},
    "frontend": {"core", "lang", "model"},
    "lower": {"core", "lang", "model"},
    "runtime": {"core"},                       # what generated references import: tables only
    "sim": {"core", "runtime"},
    "harness": {"core", "runtime", "sim"},
    "testgen": {"core", "lang", "model", "lower", "runtime", "harness"},
    "emit": {"core", "lang", "model", "lower", "runtime", "harness", "testgen"},
    "tools": {"core", "lang", "model", "frontend", "lower", "runtime", "harness", "testgen", "emit"},
    "cli": {"core", "lang", "model", "frontend", "lower", "runtime", "harness", "testgen", "emit", "tools"},
    "__main__": {"cli"},
}
# The old paths of the harness modules, kept as aliases for suites generated before the harness moved out.
COMPAT_ALIASES = {f"opgen.runtime.{m}" for m in ("testkit", "testworld", "testdata", "testnpu")}


def _layer(module: str) -> str:
    """The layer a module's imports follow: its sub-package, or for a family folder's module (opgen/families/<name>/
    <part>.py) its part's layer, so that a family is one folder whose parts each stay in their layer."""
    parts = module.split(".")
    if parts[1:2] == ["families"]:
        return PARTS[parts[3]] if len(parts) == 4 else "core"
    return parts[1] if len(parts) > 1 else "opgen"


def test_no_import_cycle():
    assert cycles(graph(ROOT / "opgen")) == []


def test_every_import_points_down():
    edges = graph(ROOT / "opgen")
    assert {_layer(m) for m in edges} - {"opgen"} == set(BELOW), "a new layer needs a row in BELOW"
    bad = sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                 if a not in COMPAT_ALIASES and _layer(a) != _layer(b) and _layer(a) != "opgen"
                 and _layer(b) not in BELOW[_layer(a)] and _layer(b) != "opgen")
    assert bad == []


def test_a_family_folder_holds_only_its_parts():
    """Every module of a family folder is one of the parts (each has a layer), and the loaders' calls are edges."""
    edges = graph(ROOT / "opgen")
    family_modules = [m for m in edges if m.startswith("opgen.families.") and m.count(".") == 3]
    assert family_modules and {m.rsplit(".", 1)[1] for m in family_modules} <= set(PARTS)
    assert "opgen.families.moe_combine.driver" in edges["opgen.runtime.drivers"]
    assert "opgen.families.moe_combine.kernel" in edges["opgen.emit.kernel"]
    assert not any(m.startswith("opgen.families.") for m in edges["opgen.runtime.driving"])


def test_cycle_through_a_function_level_import_is_found(tmp_path):
    """The check itself: a deliberate cycle hidden in a function, and a clean package for contrast."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (pkg / "c.py").write_text("import pkg.a as a\n")
    (pkg / "d.py").write_text("from pkg import c\n")
    assert cycles(graph(pkg)) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (pkg / "c.py").write_text("x = 1\n")
    assert cycles(graph(pkg)) == []
