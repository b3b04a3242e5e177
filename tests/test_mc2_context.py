"""MC2 context mode: a communication domain whose handle is an input tensor (`comm ep context;`) and whose window is
sized by an attribute (`window ep: cclBufferSize { ... state windowsIn at_start = 1 * MB; }`), as the real
MoeDistributeDispatchV3 / CombineV3 take it (code: mc2/moe_distribute_dispatch_v3 op_host def and op_tiling,
mc2/moe_distribute_dispatch_v2/op_kernel/mc2_moe_context_holder.h, mc2/common/op_kernel/mc2_moe_context.h).

The oracle is the V2 pair turned into context mode (Atlas A3, the product both V3 documents support): the OpDef
registers no HCCL group, the tiling builds no HCCL tiling and reads the window from the attribute, the kernels read
every rank's window from the context tensor, and on the twin (which fills the tensor as the op_api would, and hands
out no HCCL context for the domain) both suites pass, the round trip from one into the other included; a kernel that
asks HCCL for the domain's context instead faults.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from opgen import cli

from .conftest import ROOT, load_src

CONTEXT = '    input context: INT32 format ND shape (4100,) doc "本卡通信域信息数据。";\n'
CCL = '    attr cclBufferSize: int64 in [2 * MB, MAX_INT32) doc "当前通信域Buffer大小（字节）。";\n'


def _drop_block(src: str, head: str) -> str:
    """``src`` without each block that starts at line ``head`` and ends at the brace of its indentation."""
    while head in src:
        i = src.index(head)
        indent = head[: len(head) - len(head.lstrip())]
        j = src.index("\n" + indent + "}", i) + len(indent) + 2
        src = src[:src.rindex("\n", 0, i) + 1] + src[j + 1:]
    return src


def context_mode(spec: str, first_input: str) -> str:
    """A V2 spec of the pair in context mode, on Atlas A3 only: `comm ep context;` with the context as input 0,
    no group names, cclBufferSize after moeExpertNum (the V3 IR order), the window that many bytes with the status
    area in its first MiB, the documents' window rule on cclBufferSize - 1 MiB, no hierarchy (rejected in context
    mode), the default entry point over every parameter."""
    src = (ROOT / "specs" / spec).read_text(encoding="utf-8")
    for old, new in (("MoeDistributeDispatchV2", "MoeDistributeDispatchV3"),
                     ("MoeDistributeCombineV2", "MoeDistributeCombineV3"),
                     ("_v2_a3", "_v3_a3"), (", MoeDistributeCombineAddRmsNorm;", ";"),
                     ("    comm ep groupEp;", "    comm ep context;"),
                     ("window ep: HCCL_BUFFSIZE {", "window ep: cclBufferSize {"),
                     ("state windowsExp = 1 * MB;", "state windowsIn at_start = 1 * MB;"),
                     ('attr commAlg in {"", "fullmesh_v1", "fullmesh_v2", "hierarchy"};',
                      'attr commAlg in {"", "fullmesh_v1", "fullmesh_v2"};')):
        src = src.replace(old, new)
    for pattern in (r"\n    comm tp groupTp[^\n]*;", r"\n    env HCCL_BUFFSIZE[^\n]*;", r"\n    attr groupEp:[^\n]*;",
                    r"\n    optional attr groupTp:[^\n]*;", r"\n        attr groupTp (ignored|unsupported);",
                    r"\n        buffer window_min: [^\n]*;"):
        src = re.sub(pattern, "", src)
    src = re.sub(r"\n    aclnn aclnn\w+\(.*?\);", "", src, flags=re.S)
    for soc in ("ascend910b", "ascend950"):
        i = src.index(f"    product {soc} ")
        src = src[:i] + src[src.index("\n    }\n", i) + len("\n    }\n"):]
    src = _drop_block(src, '        when commAlg == "hierarchy" {')
    # the marks of the hierarchy rules the kernel-path check (comm_path) keeps from tripping: no such rule is left
    src = re.sub(r'\n        unreachable [^\n]*"[^\n]*comm_path[^\n]*";', "", src)
    src = re.sub(r'buffer (\w+): HCCL_BUFFSIZE >= (.*?)\n(\s*)else (\w+) "(.*?)";',
                 lambda m: f"require {m[1]}: cclBufferSize - 1 * MB >= {m[2]}\n{m[3]}else {m[4]} cclBufferSize "
                           f"\"{m[5]}\";", src, flags=re.S)
    src = re.sub(r"(\n    attr moeExpertNum:[^\n]*;\n)", lambda m: m[1] + CCL, src, count=1)
    return src.replace(f"    input {first_input}:", CONTEXT + f"    input {first_input}:", 1)


def combine_context_mode() -> str:
    src = context_mode("combine_v2.spec", "expandX")
    # without hierarchy nothing reads expandScales on A3; the status flags fit every call the documents accept
    a3 = '    product ascend910_93 "Atlas A3 训练系列产品/Atlas A3 推理系列产品" {\n'
    return src.replace(a3, a3 + '        input expandScalesOptional unsupported;\n        unreachable kernel.status_slots '
                       '"maxBS * (K + sharedExpertNum) <= 512 * 20: BS <= 512, K <= 16 and sharedExpertNum <= 4 are '
                       'checked first";\n', 1)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("mc2_context")
    (d / "dispatch_ctx.spec").write_text(context_mode("dispatch_v2.spec", "x"), encoding="utf-8")
    (d / "combine_ctx.spec").write_text(combine_context_mode(), encoding="utf-8")
    assert cli.main(["build", str(d / "dispatch_ctx.spec"), str(d / "combine_ctx.spec"), "-o", str(d / "out")]) == 0
    return d


def test_the_context_domain_is_no_hccl_group(built):
    op, diags = load_src(context_mode("dispatch_v2.spec", "x"), "ctx.spec")
    assert op is not None, diags.render()
    assert [(g.domain, g.attr, g.context) for g in op.comm_groups] == [("ep", "context", True)]
    assert op.hccl_groups == () and op.context_group.attr == "context"
    # the V3 IR order: context first; ccl_buffer_size is attribute 3 (the real tiling reads it at index 3)
    assert op.inputs[0].name == "context" and [a.ir_name for a in op.attrs][:4] == \
        ["ep_world_size", "ep_rank_id", "moe_expert_num", "ccl_buffer_size"]
    gen = built / "out" / "moe_distribute_dispatch_v3"
    opdef = (gen / "op_host" / "moe_distribute_dispatch_v3_def.cpp").read_text(encoding="utf-8")
    assert "HcclGroup" not in opdef and 'this->Input("context")' in opdef
    tiling = (gen / "op_host" / "op_tiling" / "moe_distribute_dispatch_v3_tiling.cpp").read_text(encoding="utf-8")
    assert "Mc2CcTilingConfig" not in tiling and "GetCclBufferSize" not in tiling
    assert "win_window = cclBufferSize" in tiling
    data = (gen / "op_kernel" / "moe_distribute_dispatch_v3_tiling.h").read_text(encoding="utf-8")
    assert re.search(r"^\s+Mc2(Init|Cc)Tiling \w+;", data, re.M) is None, data
    base = (gen / "op_api" / "moe_distribute_dispatch_v3_base.cpp").read_text(encoding="utf-8")
    assert "NnopbaseSetHcclServerType" not in base
    kernel = (gen / "op_kernel" / "moe_distribute_dispatch_v3_gen.h").read_text(encoding="utf-8")
    # the family kernel (common/op_kernel/moe_dispatch_kernel.h) reads the EP windows through its Traits: here the
    # context input, no HCCL client (no cc tiling to initialise it with)
    assert "static constexpr bool MC2_CONTEXT = true;" in kernel and "return args.context;" in kernel
    assert "return ContextWindowIn(ctx, rank);" in kernel
    assert "InitV2" not in kernel and "EP_CC_OFFSET" not in kernel


def test_the_window_rule_and_layout_blame_ccl_buffer_size():
    op, _ = load_src(context_mode("dispatch_v2.spec", "x"), "ctx.spec")
    view = op.views["ascend910_93"]
    checks = {c.id: c for c in view.checks}
    assert checks["window.ep"].param == "cclBufferSize" and checks["ascend910_93.window"].param == "cclBufferSize"
    lets = {l.name: l for l in view.lets}
    assert str(lets["win_window"].expr.id) == "cclBufferSize" and lets["win_state_at"].expr.value == 0


@pytest.mark.parametrize("edit, message", [
    (("    input context: INT32 format ND shape (4100,)", "    input context: FLOAT16 format ND shape (4100,)"),
     "the MC2 context context of comm group 'ep' is a required INT32 1-D input"),
    (("window ep: cclBufferSize {", "window ep: HCCL_BUFFSIZE {"),
     "window ep of the MC2 context domain is sized by env HCCL_BUFFSIZE, which no HCCL group reports here"),
])
def test_context_mistakes_are_located_errors(edit, message):
    src = context_mode("dispatch_v2.spec", "x")
    if "HCCL_BUFFSIZE" in edit[1]:
        src = src.replace("    comm ep context;", '    comm ep context;\n    env HCCL_BUFFSIZE: int64 = 200 unit "MB";')
    assert edit[0] in src
    op, diags = load_src(src.replace(edit[0], edit[1], 1), "ctx.spec")
    assert op is None and any(d.code == "E119" and message in d.message and d.span is not None for d in diags.items), \
        diags.render()


@pytest.mark.slow
def test_the_context_pair_passes_its_suites_on_the_twin_round_trip_included(built):
    res = subprocess.run([sys.executable, "-m", "opgen", "test", str(built / "dispatch_ctx.spec"),
                          str(built / "combine_ctx.spec"), "-o", str(built / "out")], capture_output=True, text=True,
                         cwd=ROOT, timeout=1800)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    assert res.stdout.count("\nok\n") + res.stdout.startswith("ok\n") == 2, res.stdout[-3000:]
    junit = subprocess.run([sys.executable, "-m", "pytest", str(built / "out" / "moe_distribute_dispatch_v3" / "tests"),
                            "-q", "-k", "cpu_twin or round_trip", "-p", "no:cacheprovider", "-rA"],
                           capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert junit.returncode == 0 and "PASSED" in junit.stdout and "test_cpu_twin" in junit.stdout, junit.stdout[-3000:]


@pytest.mark.slow
def test_a_kernel_that_asks_hccl_for_the_context_domain_faults(built, tmp_path):
    import shutil
    out = tmp_path / "out"
    shutil.copytree(built / "out", out)
    kernel = out / "moe_distribute_dispatch_v3" / "op_kernel" / "moe_distribute_dispatch_v3_gen.h"
    text = kernel.read_text(encoding="utf-8")
    assert text.count("        return args.context;\n") == 1
    kernel.write_text(text.replace("        return args.context;\n",
                                   "        return reinterpret_cast<GM_ADDR>(GetHcclContext<EP_GROUP>());\n"),
                      encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "pytest", str(out / "moe_distribute_dispatch_v3" / "tests"), "-q",
                          "-x", "-k", "cpu_twin", "-p", "no:cacheprovider"], capture_output=True, text=True, cwd=ROOT,
                         timeout=1800)
    assert res.returncode == 1
    assert "GetHcclContext<0>: the group is an MC2 context domain: its windows are in input context, and HCCL hands " \
           "the kernel no context for it" in res.stdout
