"""Roles: an op whose documents name its family's parameters differently (`role ROLE = PARAM;`) gets the family's
data movement, world, kernel and round trip exactly as the op the family was written for.

The oracle is the family's own op: DispatchV2 and CombineV2 with eight parameters each renamed (inputs, outputs,
attributes, among them the world size and the MoE expert count the testgen and the twin key on) must give the same
kernel source, the same tiling data, the same cases and the same outputs as the originals, under the new names.
"""
from __future__ import annotations

import importlib
import re
import subprocess
import sys

import numpy as np
import pytest

from opgen import cli
from opgen.core.families import FAMILIES
from opgen.emit.kernel import KERNEL_KINDS, emit_cpp_kernel
from opgen.emit.kernel_lib import kernel_entries
from opgen.runtime.errors import OpError
from opgen.runtime.roles import AliasMap, op_error

from .conftest import ROOT

DISPATCH = {"x": "tokens", "assistInfoForCombineOut": "expandIdxOut", "epRecvCountsOut": "epRecvCountOut",
            "expandXOut": "expandRowsOut", "moeExpertNum": "expertNum", "epWorldSize": "worldSize",
            "xActiveMaskOptional": "tokenMaskOptional", "expertScalesOptional": "weightsOptional"}
COMBINE = {"expandX": "expertRows", "assistInfoForCombine": "expandIdx", "epSendCounts": "epRecvCounts",
           "xOut": "yOut", "moeExpertNum": "expertNum", "globalBS": "globalBs", "epWorldSize": "worldSize",
           "xActiveMaskOptional": "tokenMaskOptional"}
OPS = {"MoeDistributeDispatchV2": "MoeDistributeDispatchRenamed", "MoeDistributeCombineV2": "MoeDistributeCombineRenamed"}


def renamed(spec: str, renames: dict[str, str], semantics: str) -> str:
    """The spec with every whole-word occurrence of each renamed parameter replaced, the pair's op names replaced,
    and the `role` lines that bind the family's names to the new ones."""
    text = (ROOT / "specs" / spec).read_text(encoding="utf-8")
    for old, new in {**renames, **OPS}.items():
        text = re.sub(rf"\b{old}\b", new, text)
    roles = "".join(f"    role {a} = {b};\n" for a, b in renames.items())
    return text.replace(f"    semantics {semantics};\n", f"    semantics {semantics};\n{roles}", 1)


def _load(path):
    ops, diags = cli.load_specs([str(path)])
    assert ops, diags
    return ops[0][1]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("roles")
    (d / "dispatch_renamed.spec").write_text(renamed("dispatch_v2.spec", DISPATCH, "moe_dispatch"), encoding="utf-8")
    (d / "combine_renamed.spec").write_text(renamed("combine_v2.spec", COMBINE, "moe_combine"), encoding="utf-8")
    return d


def _same_but_names(a: str, b: str, names: dict[str, str]) -> None:
    for old, new in names.items():
        b = b.replace(new, old)
    assert a == b


@pytest.mark.parametrize("spec, op, renames", [("dispatch_v2.spec", "MoeDistributeDispatchV2", DISPATCH),
                                               ("combine_v2.spec", "MoeDistributeCombineV2", COMBINE)])
def test_the_kernel_is_the_family_s_whatever_the_op_calls_its_parameters(pair, spec, op, renames):
    """The kernel is generated from the op in its family's names: the same source as the original's but for the op's
    own name; the tiling data names the family's fields by role (comments keep the op's names)."""
    original, other = _load(ROOT / "specs" / spec), _load(pair / spec.replace("_v2", "_renamed"))
    snake = {re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower().replace("v_2", "v2"):
             re.sub(r"(?<!^)(?=[A-Z])", "_", OPS[op]).lower()}
    names = {op: OPS[op], **snake, **{k.upper(): v.upper() for k, v in snake.items()},
             spec: spec.replace("_v2", "_renamed")}
    # CANN's build defines a tensor's dtype macros from its OpDef (IR) name, which is the op's
    names.update({f"DTYPE_{original.tensor(a).ir_name.upper()}": f"DTYPE_{other.tensor(b).ir_name.upper()}"
                  for a, b in renames.items() if original.tensor(a) is not None})
    def files(o):  # by what a file is: the tiling struct, the kernel class, the entry of these products
        entries = kernel_entries(o)
        return {entries.get(a.path) or a.path.replace(o.snake_name, "OP"): a.content for a in emit_cpp_kernel(o)}
    want, got = files(original), files(other)
    body = KERNEL_KINDS[original.semantics].body_path(original).replace(original.snake_name, "OP")
    assert set(want) == set(got) and {body, "op_kernel/OP_tiling.h"} < set(want)
    for key in sorted(set(want) - {"op_kernel/OP_tiling.h"}, key=str):  # the kernel class and every entry
        _same_but_names(want[key], got[key], names)
    fields = lambda text: re.findall(r"^\s+\w+ (\w+);", text, re.M)  # noqa: E731
    assert fields(want["op_kernel/OP_tiling.h"]) == fields(got["op_kernel/OP_tiling.h"])


def test_the_family_s_implicit_checks_follow_the_roles(pair):
    """Checks a family adds on its own names (the one-server limit, the kernel's status table) land on the op's."""
    original, other = _load(ROOT / "specs" / "combine_v2.spec"), _load(pair / "combine_renamed.spec")
    for soc in original.socs:
        want = [(c.id, c.param) for c in original.views[soc].checks if c.id.startswith(("transport.", "kernel."))]
        got = [(c.id, c.param) for c in other.views[soc].checks if c.id.startswith(("transport.", "kernel."))]
        assert got == [(re.sub(r"\bepWorldSize\b", "worldSize", i), COMBINE.get(p, p)) for i, p in want]
    assert any(p == "globalBs" for soc in other.socs for i, p in
               [(c.id, c.param) for c in other.views[soc].checks] if i == "kernel.status_slots")


@pytest.mark.slow
def test_the_renamed_pair_runs_its_suites_and_matches_the_originals(pair):
    """Built side by side, the renamed pair's generated suites pass (reference, check core, twin subset, DispatchV2's
    round trip into the renamed CombineV2), with the cases of the originals, and the same world gives the same
    outputs under the new names."""
    out = pair / "generated"
    res = subprocess.run([sys.executable, "-m", "opgen", "test", str(pair / "dispatch_renamed.spec"),
                          str(pair / "combine_renamed.spec"), "-o", str(out)], capture_output=True, text=True,
                         cwd=ROOT, timeout=1800)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    sys.path.insert(0, str(out))
    try:
        for op, renames in (("moe_distribute_dispatch", DISPATCH), ("moe_distribute_combine", COMBINE)):
            ref_new = importlib.import_module(f"{op}_renamed.reference")
            cases_new = importlib.import_module(f"{op}_renamed.tests.cases")
            sys.path.insert(0, str(ROOT / "generated"))
            ref_old = importlib.import_module(f"{op}_v2.reference")
            cases_old = importlib.import_module(f"{op}_v2.tests.cases")
            sys.path.pop(0)
            assert len(cases_new.POSITIVE) == len(cases_old.POSITIVE)
            assert len(cases_new.NEGATIVE) == len(cases_old.NEGATIVE)
            for new, old in zip(cases_new.POSITIVE, cases_old.POSITIVE):  # the same worlds, by the new names
                assert (new["product"], new["world"], new["run"]) == (old["product"], old["world"], old["run"])
                assert new["inputs"] == {renames.get(k, k): v for k, v in old["inputs"].items()}
                assert new["attrs"] == {renames.get(k, k): v for k, v in old["attrs"].items()}
            case_old = next(c for c in cases_old.POSITIVE if c["run"] is None and c["product"] == "ascend910_93")
            case_new = cases_new.POSITIVE[cases_old.POSITIVE.index(case_old)]
            from opgen.harness import testkit
            want = testkit.run(ref_old, case_old, testkit.build_world(ref_old, case_old))
            got = testkit.run(ref_new, case_new, testkit.build_world(ref_new, case_new))
            for w, g in zip(want, got):
                assert sorted(g) == sorted(renames.get(k, k) for k in w)
                for k, v in w.items():
                    np.testing.assert_array_equal(np.asarray(g[renames.get(k, k)]), np.asarray(v))
    finally:
        sys.path.remove(str(out))


def test_every_name_a_family_reads_is_one_of_its_roles():
    """The names a family's parts are written against are declared roles, of the right kind: the kernel's required
    tensors and attributes, the outputs it writes, its reduced output, the limits and tables it adds checks on."""
    for name, family in FAMILIES.items():
        kinds = family.role_kinds
        kind = KERNEL_KINDS[name]
        for group, want in (("inputs", "input"), ("outputs", "output"), ("attrs", "attr")):
            for n in kind.required.get(group, ()):
                assert kinds.get(n) == want, (name, n)
        for n in family.writes + family.seed_opaque + ((family.reduced,) if family.reduced else ()):
            assert kinds.get(n) == "output", (name, n)
        attrs = [t.param for t in family.kernel_tables] + [n for t in family.kernel_tables for f in t.factors
                                                           for n in f if n in kinds]
        attrs += [family.core_workspace[1]] if family.core_workspace else []
        for n in attrs:
            assert kinds.get(n) == "attr", (name, n)


def test_a_family_s_optional_roles_are_its_inputs():
    """An op may leave out only inputs (read as absent); every other role is expected of each op (E132)."""
    for name, family in FAMILIES.items():
        assert all(family.role_kinds.get(r) == "input" for r in family.optional_roles), name


def test_alias_maps_answer_both_names_and_keep_the_op_s():
    m = AliasMap({"expandIdx": 1, "y": 2}, {"assistInfoForCombine": "expandIdx"})
    assert m["assistInfoForCombine"] == 1 and m.get("assistInfoForCombine") == 1 and "assistInfoForCombine" in m
    m["assistInfoForCombine"] = 3
    assert dict(m) == {"expandIdx": 3, "y": 2} and list(m) == ["expandIdx", "y"]
    assert m.pop("assistInfoForCombine") == 3 and "expandIdx" not in m


def test_a_driver_error_names_the_op_s_parameter():
    err = op_error(OpError(161002, "expandXOut", "quant mode 0 has no formula for expandXOut with dtype INT8"),
                   {"expandXOut": "expandRowsOut"})
    assert (err.code, err.param, err.message) == (161002, "expandRowsOut",
                                                  "quant mode 0 has no formula for expandRowsOut with dtype INT8")
    same = OpError(161002, "tpWorldSize", "no TP path")
    assert op_error(same, {"expandXOut": "expandRowsOut"}) is same


def test_opgen_diff_reports_role_bindings():
    """Binding, rebinding and dropping a role are behaviour changes: the family reads another parameter as it."""
    from opgen.tools.diff import BEHAVIOUR, diff_ops

    from .conftest import load_src

    base = renamed("combine_v2.spec", {"xActiveMaskOptional": "tokenMaskOptional"}, "moe_combine")
    one = load_src(base, "one.spec")[0]
    two_src = base.replace("optional input tokenMaskOptional:", "optional input maskOptional:")
    two_src = re.sub(r"\btokenMaskOptional\b", "maskOptional", two_src)
    two = load_src(two_src, "two.spec")[0]
    got = [(c.group, c.kind, c.subject, c.old, c.new) for c in diff_ops(one, two).changes if c.kind.startswith("role")]
    assert got == [(BEHAVIOUR, "role.changed", "role xActiveMaskOptional", "tokenMaskOptional", "maskOptional")]
    plain = load_src((ROOT / "specs" / "combine_v2.spec").read_text(encoding="utf-8"), "plain.spec")[0]
    assert [(c.kind, c.new) for c in diff_ops(plain, one).changes if c.kind.startswith("role")] == \
        [("role.added", "tokenMaskOptional")]
    assert [(c.kind, c.old) for c in diff_ops(one, plain).changes if c.kind.startswith("role")] == \
        [("role.removed", "tokenMaskOptional")]


def test_inputs_outside_both_families_roles_reach_the_partner_by_name():
    """The round trip forwards an input neither family reads by role (DispatchV3 / CombineV3's MC2 `context`) to
    the partner under its name; role inputs go by role, and an input only one side has stays home."""
    from types import SimpleNamespace

    from opgen.harness.testkit import shared_inputs
    disp = SimpleNamespace(INPUTS=("context", "x", "expertIds", "cookie"),
                           INFO=SimpleNamespace(semantics="moe_dispatch", roles={}))
    comb = SimpleNamespace(INPUTS=("context", "expandX", "expertIds", "assistInfo", "expertScales"),
                           INFO=SimpleNamespace(semantics="moe_combine", roles={"assistInfoForCombine": "assistInfo"}))
    world = SimpleNamespace(inputs=[{"context": 0, "x": 1, "expertIds": 2, "cookie": 3}] * 2)
    assert shared_inputs(disp, comb, world) == ["context"]
