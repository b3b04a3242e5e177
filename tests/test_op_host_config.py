"""op_host/config/<soc>/: the binary compile lists and simplified-key files, as the real op folders have them.

Every real ``*_binary.json`` and ``*_simplified_key.ini`` of the hand-written ops (ops-transformer
mc2/moe_distribute_*/op_host/config/<soc>/, from ../shared/cann/ops-transformer.tar.gz) is compared field by field
with the generated one: the binary list's op_type, its entries (one kernel binary per OpDef column, matched by the
name after the op type) in order, and every field of every input, output and attribute of each entry; the .ini's
sections and keys (its comments are prose).  Where a generated file differs, the difference is listed below with
the reason it cannot follow from the spec; any other difference, or a listed one that no longer occurs, fails.
"""
from __future__ import annotations

import configparser
import json
from pathlib import Path

import pytest

from .conftest import ROOT, load_ok
from .real_cann import MISSING, OPS_TRANSFORMER, SHARED_CANN, cache_root, unpacked

GENERATED = ROOT / "generated"
SPECS = sorted((ROOT / "specs").glob("*.spec"))

# The real OpDef of CombineV2 / CombineV3 has two more columns, expand_x (and the tensors that follow its dtype)
# INT32 with an FP16 / BF16 x; the documents list expandX as FLOAT16 / BFLOAT16 only
# (../shared/cann/docs/current/aclnnMoeDistributeCombineV2.md, aclnnMoeDistributeCombineV3.md), and so do the
# specs, so their OpDef and binary lists have no INT32 column.
INT32_COLUMNS = "INT32 expand_x columns: in the real OpDef, not in the documents the spec encodes"
# The real CombineV3 list is CombineV2's with V3's tensors and attributes: its op_type and binary names still say
# MoeDistributeCombineV2 (a list for another op type); the generated one names its own op.
V2_NAME = "the real CombineV3 list keeps CombineV2's op type and binary names"
# The real DispatchV3 list gives the required int attribute ccl_buffer_size the value "" (a string); every other
# required int attribute of every real list, CombineV3's ccl_buffer_size included, has 0.
CCL_STRING = "the real DispatchV3 list writes ccl_buffer_size (int) as the string \"\""

_COMBINE = "moe_distribute_combine_{}/op_host/config/{}/moe_distribute_combine_{}_binary.json"
_DISPATCH_V3 = "moe_distribute_dispatch_v3/op_host/config/ascend910_93/moe_distribute_dispatch_v3_binary.json"
DIFFERENCES: dict[str, dict[tuple, str]] = {
    _COMBINE.format("v2", "ascend910_93", "v2"): {
        ("only in real", ("ND_INT32_FP16", "ND_INT32_BF16")): INT32_COLUMNS},
    _COMBINE.format("v2", "ascend950", "v2"): {
        ("only in real", ("ND_INT32_FP16", "ND_INT32_BF16")): INT32_COLUMNS},
    _COMBINE.format("v3", "ascend910_93", "v3"): {
        ("only in real", ("ND_INT32_FP16", "ND_INT32_BF16")): INT32_COLUMNS,
        ("op_type", "MoeDistributeCombineV2", "MoeDistributeCombineV3"): V2_NAME,
        ("ND_BF16_BF16.bin_filename", "MoeDistributeCombineV2_ND_BF16_BF16", "MoeDistributeCombineV3_ND_BF16_BF16"):
            V2_NAME,
        ("ND_FP16_FP16.bin_filename", "MoeDistributeCombineV2_ND_FP16_FP16", "MoeDistributeCombineV3_ND_FP16_FP16"):
            V2_NAME},
    _DISPATCH_V3: {(f"{name}.attrs[ccl_buffer_size].value", "", 0): CCL_STRING
                   for name in ("ND_ND_BF16_BF16", "ND_ND_BF16_INT8", "ND_ND_FP16_FP16", "ND_ND_FP16_INT8")},
}

# Generated config files with no real counterpart: the op builds for the SoC (its real OpDef adds the config too)
# but the real folder has no such file.
_NO_REAL_950 = "the real DispatchV2 OpDef adds ascend950, but its folder has no config/ascend950"
_NO_REAL_LIST = "the real folder has the op's simplified_key.ini for ascend950 but no binary list"
GENERATED_ONLY = {
    "moe_distribute_dispatch_v2/op_host/config/ascend950/moe_distribute_dispatch_v2_binary.json": _NO_REAL_950,
    "moe_distribute_dispatch_v2/op_host/config/ascend950/moe_distribute_dispatch_v2_simplified_key.ini": _NO_REAL_950,
    "moe_distribute_dispatch_setup/op_host/config/ascend950/moe_distribute_dispatch_setup_binary.json": _NO_REAL_LIST,
    "moe_distribute_dispatch_teardown/op_host/config/ascend950/moe_distribute_dispatch_teardown_binary.json":
        _NO_REAL_LIST,
}


@pytest.fixture(scope="module")
def real_mc2(tmp_path_factory) -> Path:
    if not SHARED_CANN.is_dir():
        pytest.skip(MISSING)
    return unpacked(OPS_TRANSFORMER, cache_root(tmp_path_factory.mktemp("cann")), "ops-transformer") / "mc2"


def _config_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.glob("moe_distribute_*/op_host/config/*/*")
            if p.name.endswith(("_binary.json", "_simplified_key.ini"))}


def _fields(value, path: str) -> dict[str, object]:
    """Every leaf of a binary entry by its path; list items of named objects by name (``inputs[x].dtype``)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for k, v in value.items():
            out.update(_fields(v, f"{path}.{k}"))
        return out
    if isinstance(value, list) and value and all(isinstance(x, dict) and "name" in x for x in value):
        out = {}
        for x in value:
            out.update(_fields(x, f"{path}[{x['name']}]"))
        return out
    return {path: value}


def binary_differences(real: dict, gen: dict) -> dict[tuple, None]:
    """(what, real, generated) per difference of two binary lists, in a fixed order."""
    diffs: dict[tuple, None] = {}
    if real["op_type"] != gen["op_type"]:
        diffs[("op_type", real["op_type"], gen["op_type"])] = None

    def by_key(doc):
        return {e["bin_filename"].removeprefix(doc["op_type"] + "_"): e for e in doc["op_list"]}

    r, g = by_key(real), by_key(gen)
    assert len(r) == len(real["op_list"]) and len(g) == len(gen["op_list"]), "binary names repeat"
    if only := tuple(k for k in r if k not in g):
        diffs[("only in real", only)] = None
    if only := tuple(k for k in g if k not in r):
        diffs[("only in generated", only)] = None
    shared_r, shared_g = [k for k in r if k in g], [k for k in g if k in r]
    if shared_r != shared_g:
        diffs[("order", tuple(shared_r), tuple(shared_g))] = None
    for key in shared_r:
        fr, fg = _fields(r[key], key), _fields(g[key], key)
        for path in list(fr) + [p for p in fg if p not in fr]:
            if fr.get(path, "<absent>") != fg.get(path, "<absent>") or type(fr.get(path)) is not type(fg.get(path)):
                diffs[(path, fr.get(path, "<absent>"), fg.get(path, "<absent>"))] = None
    return diffs


def test_every_real_config_file_is_generated_and_every_other_generated_one_is_named(real_mc2):
    real, gen = _config_files(real_mc2), _config_files(GENERATED)
    assert len(real) == 24
    assert real <= gen, sorted(real - gen)
    assert gen - real == set(GENERATED_ONLY)


def test_binary_lists_equal_the_real_ones_field_by_field(real_mc2):
    files = sorted(p for p in _config_files(real_mc2) if p.endswith("_binary.json"))
    assert len(files) == 11
    found = {}
    for rel in files:
        real = json.loads((real_mc2 / rel).read_text(encoding="utf-8"))
        gen = json.loads((GENERATED / rel).read_text(encoding="utf-8"))
        diffs = binary_differences(real, gen)
        if diffs:
            found[rel] = set(diffs)
    assert found == {rel: set(d) for rel, d in DIFFERENCES.items()}


def test_simplified_key_files_equal_the_real_ones(real_mc2):
    files = sorted(p for p in _config_files(real_mc2) if p.endswith("_simplified_key.ini"))
    assert len(files) == 13
    for rel in files:
        real, gen = configparser.ConfigParser(), configparser.ConfigParser()
        real.read_string((real_mc2 / rel).read_text(encoding="utf-8"))
        gen.read_string((GENERATED / rel).read_text(encoding="utf-8"))
        assert {s: dict(real[s]) for s in real.sections()} == {s: dict(gen[s]) for s in gen.sections()}, rel


def test_the_differences_table_catches_a_changed_field():
    """The comparison sees one changed field, a missing entry and a reordering (so an empty table means equal)."""
    entry = {"bin_filename": "Op_ND_BF16", "inputs": [{"name": "x", "dtype": "bfloat16"}], "attrs": []}
    other = {"bin_filename": "Op_ND_FP16", "inputs": [{"name": "x", "dtype": "float16"}], "attrs": []}
    real = {"op_type": "Op", "op_list": [entry, other]}
    changed = json.loads(json.dumps(real))
    changed["op_list"][0]["inputs"][0]["dtype"] = "float16"
    assert set(binary_differences(real, changed)) == {("ND_BF16.inputs[x].dtype", "bfloat16", "float16")}
    assert set(binary_differences(real, {"op_type": "Op", "op_list": [entry]})) == {("only in real", ("ND_FP16",))}
    assert set(binary_differences(real, {"op_type": "Op", "op_list": [other, entry]})) == {
        ("order", ("ND_BF16", "ND_FP16"), ("ND_FP16", "ND_BF16"))}


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_each_product_has_its_config_files_with_one_binary_per_column(spec):
    """Both files for every SoC the OpDef builds for and no other; one binary per OpDef column of the SoC, each
    named once, its tensors in OpDef order with the column's dtypes."""
    from opgen.emit.host import opdef_columns
    op = load_ok(spec)
    folder = GENERATED / op.snake_name / "op_host" / "config"
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} == {
        f"{p.soc}/{op.snake_name}{end}" for p in op.products for end in ("_binary.json", "_simplified_key.ini")}
    for p in op.products:
        doc = json.loads((folder / p.soc / f"{op.snake_name}_binary.json").read_text(encoding="utf-8"))
        cols = opdef_columns(op, p.soc)
        assert doc["op_type"] == op.name
        names = [e["bin_filename"] for e in doc["op_list"]]
        assert len(set(names)) == len(names) == cols.count and names == sorted(names)
        want = {tuple(cols.dtype_rows[t.name][i].lower() for t in op.inputs + op.outputs) for i in range(cols.count)}
        got = {tuple(t["dtype"] for t in e["inputs"] + e["outputs"]) for e in doc["op_list"]}
        assert got == want
        for e in doc["op_list"]:
            assert [t["name"] for t in e["inputs"]] == [t.ir_name for t in op.inputs]
            assert [t["name"] for t in e["outputs"]] == [t.ir_name for t in op.outputs]
            assert [a["name"] for a in e["attrs"]] == [a.ir_name for a in op.attrs]
