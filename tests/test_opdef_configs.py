"""The OpDef's AI Core configs and the kernel entries they name, as the real op directories have them.

specs/sources/real_opdef_configs.json records, per shipped op, what the real OpDef (hicann/ops-transformer
mc2/<op>/op_host/<op>_def.cpp) configures per SoC: the flags, the ExtendCfgInfo pairs (jitCompile.flag per SoC,
opFile.value where a SoC builds a kernel entry of its own) and the HCCL groups. The specs say the same with
`op_file` / `jit_compile` in their products; these tests read the generated defs and kernel trees, not the specs.
"""
from __future__ import annotations

import json
import re

import pytest

from opgen.emit.kernel import KERNEL_KINDS, plan_instances
from opgen.emit.kernel_lib import kernel_entries
from .conftest import ROOT, load_ok, load_src
from .entry_runs import dispatch_text, expanded_runs

REAL = json.loads((ROOT / "specs" / "sources" / "real_opdef_configs.json").read_text(encoding="utf-8"))["ops"]
GENERATED = ROOT / "generated"


def generated_configs(op: str) -> tuple[list[dict], list[str]]:
    """(per AddConfig, in order: soc, flag calls, ExtendCfgInfo pairs; the HcclGroup names) of a generated def."""
    text = (GENERATED / op / "op_host" / f"{op}_def.cpp").read_text(encoding="utf-8")
    configs = []
    for soc, var in re.findall(r'AddConfig\("(\w+)", (\w+)\);', text):
        fn = re.search(rf"(\w+)\({var}\);", text).group(1)
        body = text[text.index(f"static void {fn}("):]
        body = body[body.index("config.DynamicCompileStaticFlag"):body.index("\n    }\n")]
        configs.append(dict(soc=soc, flags=[f"{f}({v})" for f, v in re.findall(r"\.?(\w+Flag)\((\w+)\)", body)],
                            extend_cfg_info=[list(p) for p in re.findall(r'ExtendCfgInfo\("([\w.]+)", "(\w+)"\)',
                                                                         body)]))
    groups = re.search(r"HcclGroup\(\{([^}]*)\}\)", text)
    return configs, re.findall(r'"(\w+)"', groups.group(1)) if groups else []


@pytest.mark.parametrize("op", sorted(REAL))
def test_the_generated_configs_are_the_real_ones(op):
    """Per SoC, in the real AddConfig order: the same flags, the same ExtendCfgInfo pairs in the same order (A2's
    jitCompile.flag "static_false" of the V2 pair, the Setup ops' "static_false", the per-SoC opFile.value of
    DispatchV2 / CombineV2 / CombineAddRmsNorm, no opFile.value in the Setup/Teardown family), the same HCCL groups."""
    real = REAL[op]
    configs, groups = generated_configs(op)
    assert configs == real["configs"], real["source"]
    assert groups == real["hccl_groups"]


@pytest.mark.parametrize("op", sorted(REAL))
def test_every_config_names_an_entry_that_holds_its_instances(op):
    """The kernel tree is what the configs name: one entry per opFile.value in its SoC's arch folder (arch22 for
    A2/A3, arch35 for 950, as the real op_kernel folders), the op's one entry where none is named; each entry's
    Dispatch runs exactly the kernel instances of the products that build it, with no arch guard where all of
    them share an arch, and together they run every instance."""
    spec = next(p for p in (ROOT / "specs").glob("*.spec") if load_ok(p).snake_name == op)
    model = load_ok(spec)
    configs, _ = generated_configs(op)
    entries = kernel_entries(model)
    kdir = GENERATED / op / "op_kernel"
    named = {}
    for c in configs:
        op_file = dict(c["extend_cfg_info"]).get("opFile.value")
        arch_dir = {"ascend910b": "arch22", "ascend910_93": "arch22", "ascend950": "arch35"}[c["soc"]]
        named.setdefault(f"op_kernel/{arch_dir}/{op_file}.cpp" if op_file else f"op_kernel/{op}.cpp",
                         []).append(c["soc"])
    assert {k: tuple(v) for k, v in named.items()} == entries
    assert sorted(p.relative_to(GENERATED / op).as_posix() for p in kdir.rglob("*.cpp")) == sorted(entries)
    plan = plan_instances(model)
    ran = set()
    for path, socs in entries.items():
        text = (GENERATED / op / path).read_text(encoding="utf-8")
        runs = [args for _, args in expanded_runs(dispatch_text(GENERATED / op, path))]
        want = {", ".join(i.types) for i in plan.instances if i.products & set(socs)}
        assert {", ".join(r.split(", ")[:len(next(iter(plan.instances)).types)]) for r in runs} == want, path
        if len({model.views[s].facts.npu_arch for s in socs}) == 1:
            assert "__NPU_ARCH__" not in text, path
        # the body header: <op>.h, or <op>_gen.h around a family kernel written as a C++ header (common/op_kernel)
        body = KERNEL_KINDS[model.semantics].body_path(model).rsplit("/", 1)[1]
        assert f'#include "{"../" if path.count("/") == 2 else ""}{body}"' in text
        ran |= set(runs)
    assert len(ran) >= len({", ".join(i.types) for i in plan.instances})


def test_a2_and_a3_entries_differ_where_their_instances_do():
    """DispatchV2's A2 entry holds A2's instances alone (the expandIdx assist layout, no quant mode A2 rejects);
    the A3 entry holds A3's: building them apart is what the per-SoC opFile buys."""
    a2 = (GENERATED / "moe_distribute_dispatch_v2" / "op_kernel" / "arch22" /
          "moe_distribute_dispatch_v2_a2.cpp").read_text(encoding="utf-8")
    a3 = (GENERATED / "moe_distribute_dispatch_v2" / "op_kernel" / "arch22" /
          "moe_distribute_dispatch_v2_a3.cpp").read_text(encoding="utf-8")
    runs = lambda t: {args for _, args in expanded_runs(t)}  # noqa: E731
    assert runs(a2) and runs(a3) and runs(a2) != runs(a3)
    assert "kernel entry of ascend910b (opFile.value \"moe_distribute_dispatch_v2_a2\")" in a2


def test_a_product_that_names_no_op_file_takes_the_nearest_or_the_ops_one_entry(tmp_path):
    """`op_file` and `jit_compile` resolve along `extends`: a product that declares neither takes the nearest
    ancestor's, and an op whose products declare none keeps one entry, op_kernel/<op>.cpp, with no opFile.value."""
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    src = src.replace('        op_file "moe_distribute_dispatch_v2_apt";\n', "", 1)
    op, diags = load_src(src, str(tmp_path / "dispatch_v2.spec"))
    assert op is not None, diags.render()
    assert op.views["ascend950"].op_file == "moe_distribute_dispatch_v2_a3"  # extends ascend910_93
    assert op.views["ascend950"].kernel_entry == "op_kernel/arch35/moe_distribute_dispatch_v2_a3.cpp"
    assert op.views["ascend950"].jit_compile == "static_true" and op.views["ascend910b"].jit_compile == "static_false"
    bare = "\n".join(l for l in src.split("\n") if not re.match(r"\s+(op_file|jit_compile) ", l))
    op, diags = load_src(bare, str(tmp_path / "dispatch_v2.spec"))
    assert op is not None, diags.render()
    assert set(kernel_entries(op)) == {"op_kernel/moe_distribute_dispatch_v2.cpp"}
    assert {v.jit_compile for v in op.views.values()} == {"static_true"}


def test_bad_opdef_configs_are_located_diagnostics(tmp_path):
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    bad = src.replace('        jit_compile static_false;\n',
                      '        jit_compile static_flase;\n        op_file "a2-entry";\n', 1)
    op, diags = load_src(bad, str(tmp_path / "dispatch_v2.spec"))
    text = diags.render()
    assert op is None
    assert "error[E133]: unknown jitCompile.flag 'static_flase'" in text and "did you mean 'static_false'?" in text
    assert "error[E133]: product ascend910b gives `op_file` twice" in text
