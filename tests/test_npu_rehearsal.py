"""The NPU mode rehearsed on the CPU: torchrun worlds over gloo, a stand-in torch_npu (tests/npu_standin) that
checks every call against torch_npu's real schema file and answers with the generated reference.

Default tier: one case per op x product (2-4 ranks) in one world; slow tier: every NPU-mode case of 2-4 ranks,
one world per op.  Needs torch (the ``npu-rehearsal`` extra: ``pip install -e '.[npu-rehearsal]'``); without it
these tests skip and say so, except under CI (OPGEN_NPU_REHEARSAL=required, set by .ci/run), where a missing
torch fails them.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opgen.core.families import FAMILIES
from opgen.core.layout import SHARED_DIR
from opgen.harness import testkit, testnpu

from .conftest import ROOT, skip_without_torch

GENERATED = ROOT / "generated"
STANDIN = ROOT / "tests" / "npu_standin"
SCHEMA = ROOT.parent / "shared" / "cann" / "torch_npu" / "op_plugin_functions.moe_distribute.yaml"
WORLDS = range(2, 5)  # the rehearsal's world sizes: a 2-core machine runs 2-4 ranks

skip_without_torch()
if not SCHEMA.is_file():
    pytest.skip(f"torch_npu's schema file is not at {SCHEMA} (../shared beside the clone)", allow_module_level=True)


def _load(snake: str):
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


OPS = sorted(d.name for d in GENERATED.iterdir() if (d / "tests" / "cases.py").is_file())
SHIPPED = [s for s in OPS if _load(s)[1].NPU_FUNCTION is not None]


def _runs_through_setup(snake: str, case: dict) -> bool:
    """A Teardown case some Setup call produces (the others skip: no real pipeline reaches them)."""
    ref, cases = _load(snake)
    if FAMILIES[cases.SEMANTICS].prelude is None:
        return True
    pref = testkit.twin_prelude(GENERATED / snake, cases.SEMANTICS)[0]
    return not isinstance(testkit.prelude_plan(ref, case, testkit.build_world(ref, case), pref), str)


def _cases(snake: str) -> list[dict]:
    return [c for c in _load(snake)[1].POSITIVE if c["run"] is None and c["world"] in WORLDS]


def _one_per_product(snake: str) -> list[dict]:
    picked = {}
    for c in _cases(snake):
        if c["product"] not in picked and _runs_through_setup(snake, c):
            picked[c["product"]] = c
    return list(picked.values())


def _env(generated: Path = GENERATED) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=os.pathsep.join([str(STANDIN), str(ROOT)]), OPGEN_NPU_DIST="gloo", OPGEN_NPU_OP="shipped",
               OPGEN_TORCH_NPU_SCHEMA=str(SCHEMA), OPGEN_STANDIN_GENERATED=str(generated),
               OPGEN_NPU_CASE_TIMEOUT="120")
    env.pop("OPGEN_NPU_PRODUCT", None)
    return env


def _rehearse(generated: Path, ops_cases: dict, world: int) -> tuple[dict, str]:
    assert shutil.which("torchrun"), "torch is installed but torchrun is not on PATH"
    ids = sorted({c["id"] for cs in ops_cases.values() for c in cs})
    return testnpu.run_world([generated / s for s in ops_cases], world, ids, env=_env(generated))


def _check(found: dict, output: str, ops_cases: dict, world: int, allow_skips: bool) -> None:
    ran = {s: 0 for s in ops_cases}
    for snake, cs in ops_cases.items():
        for c in cs:
            why = testnpu.verdict(found.get(f"{snake}/{c['id']}", {}), world, output)
            assert allow_skips or why is None, f"{snake}/{c['id']} skipped: {why}"
            ran[snake] += why is None
    hollow = [s for s, n in ran.items() if n == 0]
    assert not hollow, f"no case of {hollow} ran through the stand-in"


def test_every_op_with_a_torch_npu_function_is_rehearsed():
    # the ops torch_npu ships a function for (opgen.core.torch_npu); the MC2-context ops (v3) have none
    assert SHIPPED == ["moe_distribute_combine_add_rms_norm", "moe_distribute_combine_setup",
                       "moe_distribute_combine_teardown", "moe_distribute_combine_v2",
                       "moe_distribute_dispatch_setup", "moe_distribute_dispatch_teardown",
                       "moe_distribute_dispatch_v2"]
    for snake in sorted(set(OPS) - set(SHIPPED)):
        assert "torch_npu ships no function" in testnpu.unavailable(2, "ascend950", _load(snake)[1].NPU_FUNCTION)


def test_one_case_per_op_and_product_passes_on_every_rank():
    ops_cases = {s: _one_per_product(s) for s in SHIPPED}
    assert sum(map(len, ops_cases.values())) == 12  # 7 ops over their products
    found, output = _rehearse(GENERATED, ops_cases, 2)
    _check(found, output, ops_cases, 2, allow_skips=False)


@pytest.mark.slow
@pytest.mark.parametrize("snake", SHIPPED)
def test_every_npu_case_of_two_to_four_ranks(snake):
    for world in WORLDS:
        ops_cases = {snake: [c for c in _cases(snake) if c["world"] == world]}
        if ops_cases[snake]:
            found, output = _rehearse(GENERATED, ops_cases, world)
            _check(found, output, ops_cases, world, allow_skips=True)


def _copy_with(tmp_path: Path, snake: str, old: str, new: str) -> Path:
    """generated/ with one line of ``snake``'s cases.py changed (the Setup ops beside it for a Teardown)."""
    out = tmp_path / "generated"
    for s in [*OPS, SHARED_DIR]:  # the op folders and the shared header their check cores include
        shutil.copytree(GENERATED / s, out / s)
    path = out / snake / "tests" / "cases.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return out


def test_a_keyword_the_schema_lacks_fails_the_rehearsal(tmp_path):
    """The calls before this harness: combine_v2 got out_dtype, which torch_npu's schema does not have."""
    snake = "moe_distribute_combine_v2"
    generated = _copy_with(tmp_path, snake, '"commQuantMode": "comm_quant_mode"',
                           '"commQuantMode": "comm_quant_mode", "outDtype": "out_dtype"')
    case = _one_per_product(snake)[0]
    found, output = _rehearse(generated, {snake: [case]}, 2)
    with pytest.raises(AssertionError, match=r"rank 0: TypeError: npu_moe_distribute_combine_v2\(\) got an "
                                             r"unexpected keyword argument 'out_dtype'"):
        testnpu.verdict(found.get(f"{snake}/{case['id']}", {}), 2, output)


def test_a_dtype_keyword_naming_the_wrong_tensor_fails_the_rehearsal(tmp_path):
    """y_dtype naming x's dtype instead of expandX's: a tensor whose carrier cannot hold the named dtype."""
    snake = "moe_distribute_dispatch_v2"
    generated = _copy_with(tmp_path, snake, '"x_dtype": "x"', '"x_dtype": "expandXOut"')
    case = next(c for c in _cases(snake) if c["out_dtypes"].get("expandXOut") == "INT8")
    found, output = _rehearse(generated, {snake: [case]}, 2)
    with pytest.raises(AssertionError, match=r"rank 0: TypeError: npu_moe_distribute_dispatch_v2\(\): x is a "
                                             r"torch\.\w+ tensor, which cannot hold INT8"):
        testnpu.verdict(found.get(f"{snake}/{case['id']}", {}), 2, output)


def test_the_stand_in_checks_types_and_required_arguments_as_torch_does(monkeypatch):
    import torch
    monkeypatch.syspath_prepend(str(STANDIN))
    monkeypatch.setenv("OPGEN_TORCH_NPU_SCHEMA", str(SCHEMA))
    standin = importlib.import_module("torch_npu")
    try:
        _stand_in_checks(standin, torch)
    finally:  # no other test may find the stand-in as torch_npu
        for name in ("torch_npu", "torch_npu.schema"):
            sys.modules.pop(name, None)


def _stand_in_checks(standin, torch):
    x = torch.zeros(2, 32, dtype=torch.float16)
    ids = torch.zeros(2, 1, dtype=torch.int32)
    call = dict(x=x, expert_ids=ids, group_ep="g", ep_world_size=2, ep_rank_id=0, moe_expert_num=2)
    assert standin.check("npu_moe_distribute_dispatch_v2", (), dict(call, y_dtype=1))["y_dtype"] == 1
    with pytest.raises(TypeError, match=r"argument 'y_dtype' must be int\?, not dtype"):
        standin.check("npu_moe_distribute_dispatch_v2", (), dict(call, y_dtype=torch.int8))
    with pytest.raises(TypeError, match=r"missing required argument 'moe_expert_num'"):
        standin.check("npu_moe_distribute_dispatch_v2", (), {k: v for k, v in call.items() if k != "moe_expert_num"})
    with pytest.raises(TypeError, match=r"argument 'ep_rank_id' must be int, not bool"):
        standin.check("npu_moe_distribute_dispatch_v2", (), dict(call, ep_rank_id=True))
    with pytest.raises(AttributeError, match=r"has no attribute 'npu_moe_distribute_dispatch_v3'"):
        standin.npu_moe_distribute_dispatch_v3


def _patched_world(tmp_path: Path, patch: str, snake: str, case: dict) -> tuple[dict, str]:
    """A 2-rank world of the harness with ``patch`` (Python run first in every rank) undoing one of its fixes."""
    script = tmp_path / "patched_harness.py"
    script.write_text(f"import sys\nfrom opgen.harness import testnpu\n{patch}\nsys.exit(testnpu.main())\n")
    proc = subprocess.run(["torchrun", "--standalone", "--nproc-per-node=2", str(script), str(GENERATED / snake),
                           "--case", case["id"]], capture_output=True, text=True, env=_env(), timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    return testnpu.verdicts(proc.stdout).get(f"{snake}/{case['id']}", {}), output


def test_every_rank_passing_rank_0s_ids_fails_the_rehearsal(tmp_path):
    """The calls before this harness: testkit.full_attrs gave every rank rank 0's ep_rank_id."""
    snake = "moe_distribute_dispatch_v2"
    case = _one_per_product(snake)[0]
    found, output = _patched_world(tmp_path, "_own = testnpu.rank_attrs\n"
                                   "testnpu.rank_attrs = lambda ref, case, rank: _own(ref, case, 0)", snake, case)
    with pytest.raises(AssertionError, match=r"rank 0: ValueError: npu_moe_distribute_dispatch_v2\(\): rank 1 "
                                             r"passes ep_rank_id=0; rank 1 of this world is ep_rank_id=1"):
        testnpu.verdict(found, 2, output)


def test_a_teardown_without_its_setup_fails_the_rehearsal(tmp_path):
    """The calls before this harness: a Teardown case ran without its Setup."""
    snake = "moe_distribute_dispatch_teardown"
    case = _one_per_product(snake)[0]
    found, output = _patched_world(tmp_path, "import dataclasses\ntestnpu.FAMILIES = {k: dataclasses.replace("
                                   "f, prelude=None) for k, f in testnpu.FAMILIES.items()}", snake, case)
    with pytest.raises(AssertionError, match=r"rank 0: RuntimeError: npu_moe_distribute_dispatch_teardown\(\): no "
                                             r"npu_moe_distribute_dispatch_setup on group '\w+' returned this "
                                             r"comm_cmd_info"):
        testnpu.verdict(found, 2, output)


class _Groups:
    """A World that records the groups a rank makes (testnpu.World.group_name's contract)."""

    def __init__(self, rank: int):
        self.rank, self.made = rank, []

    def group_name(self, ranks, buffsize):
        self.made.append(ranks)
        return f"g{ranks}" if self.rank in ranks else None


def _seed_era_tp_case(seed_era_dispatch):
    ref, cases = seed_era_dispatch
    return next(c for c in cases.POSITIVE if c["run"] is None and int(c["attrs"].get("tpWorldSize", 0)) == 2)


def test_each_rank_gets_its_ep_and_tp_groups_and_every_rank_makes_all_of_them(seed_era_dispatch):
    """A 4-rank world of EP 2 x TP 2 (the seed-era DispatchV2, whose A3 still takes TP)."""
    ref, cases = seed_era_dispatch
    case = _seed_era_tp_case(seed_era_dispatch)
    for rank, ep, tp in ((0, (0, 2), (0, 1)), (1, (1, 3), (0, 1)), (2, (0, 2), (2, 3)), (3, (1, 3), (2, 3))):
        world = _Groups(rank)
        assert testnpu._groups(ref, cases, case, world) == {"groupEp": f"g{ep}", "groupTp": f"g{tp}"}
        assert world.made == [(0, 2), (1, 3), (0, 1), (2, 3)]


@pytest.mark.slow
def test_a_world_with_a_tp_domain_passes_on_every_rank(seed_era_dispatch, tmp_path):
    ref, cases = seed_era_dispatch
    case = _seed_era_tp_case(seed_era_dispatch)
    generated = Path(ref.__file__).parent.parent
    snake = Path(ref.__file__).parent.name
    env = _env(generated)
    found, output = testnpu.run_world([generated / snake], 4, [case["id"]], env=env)
    assert testnpu.verdict(found.get(f"{snake}/{case['id']}", {}), 4, output) is None
