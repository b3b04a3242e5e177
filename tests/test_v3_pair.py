"""MoeDistributeDispatchV3 / CombineV3 (aclnn V5, MC2 context mode) against the real op folders.

The real sources are mc2/moe_distribute_{dispatch,combine}_v3 of `../shared/cann/ops-transformer.tar.gz` (beside the
clone on developers' machines and in CI; without it these skip and say why). For each op: the generated aclnnV5
declaration is the real op_api's GetWorkspaceSize, parameter for parameter; the OpDef's inputs, outputs and
attributes are the real def's (names, order, REQUIRED / OPTIONAL, attribute types and defaults), with no HCCL group
in either; its Atlas A3 config is the real one (flags, ExtendCfgInfo, the _a3 kernel entry); every generated dtype
column is one of the real def's columns. The real def also registers ascend950, which both READMEs mark
unsupported: the specs follow the READMEs (the one config the generated defs lack, and the only one).
"""
from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from opgen import cli

from .conftest import ROOT

TAR = ROOT.parent / "shared" / "cann" / "ops-transformer.tar.gz"
GENERATED = ROOT / "generated"
OPS = {"moe_distribute_dispatch_v3": "aclnnMoeDistributeDispatchV5",
       "moe_distribute_combine_v3": "aclnnMoeDistributeCombineV5"}
GE_DEFAULTS = {"ge::DT_UNDEFINED": "28"}  # ge::DataType values the real def writes by name


@pytest.fixture(scope="module")
def real() -> dict[str, str]:
    """{path under ops-transformer/mc2/: text} of the V3 ops' def and op_api sources."""
    if not TAR.is_file():
        pytest.skip(f"{TAR} is not here: the real ops-transformer sources sit beside the clone")
    out = {}
    with tarfile.open(TAR) as tar:
        for m in tar.getmembers():
            rel = m.name.split("/mc2/", 1)[-1]
            if m.isfile() and rel.startswith(tuple(OPS)) and ("/op_api/" in rel or rel.endswith("_def.cpp")):
                out[rel] = tar.extractfile(m).read().decode("utf-8")
    return out


def _params(text: str, fn: str) -> list[tuple[str, ...]]:
    body = re.search(rf"aclnnStatus\s+{fn}GetWorkspaceSize\s*\((.*?)\)", text, re.S).group(1)
    return [tuple(re.findall(r"[A-Za-z_]\w*|\*", p)) for p in body.split(",") if p.strip()]


@pytest.mark.parametrize("op", sorted(OPS))
def test_the_aclnn_v5_declaration_is_the_real_op_api(op, real):
    fn = OPS[op]
    header = (GENERATED / op / "op_api" / f"aclnn_{op.replace('_v3', '_v5')}.h").read_text(encoding="utf-8")
    assert _params(header, fn) == _params(real[f"{op}/op_api/aclnn_{op.replace('_v3', '_v5')}.cpp"], fn)


def _declarations(text: str) -> dict:
    """Inputs, outputs (name, REQUIRED/OPTIONAL) and attributes (name, REQUIRED/OPTIONAL, type(default)) in order,
    and the dtype list of each input and output, of an OpDef's class-level declarations."""
    head = text  # (per-config declarations start with `config.`, not `this->`)
    io = {}
    for kind in ("Input", "Output"):
        io[kind] = [(n, p) for n, p in re.findall(rf'this->{kind}\("(\w+)"\)\s*\.ParamType\((\w+)\)', head)]
    attrs = [(n, r, t, GE_DEFAULTS.get(d, d))
             for n, r, t, d in re.findall(r'this->Attr\("(\w+)"\)\.AttrType\((\w+)\)\.(\w+)\(([^)]*)\)', head)]
    dtypes = {n: re.findall(r"ge::(DT_\w+)", lst)
              for n, lst in re.findall(r'this->(?:Input|Output)\("(\w+)"\)\s*\.ParamType\(\w+\)\s*'
                                       r'\.DataType(?:List)?\(\s*\{([^}]*)\}\)', head)}
    return dict(io=io, attrs=attrs, dtypes=dtypes)


def _config(text: str, soc: str) -> dict:
    var = re.search(rf'AddConfig\("{soc}", (\w+)\);', text).group(1)
    fn = re.search(rf"(\w+)\({var}\);", text)  # the generated defs fill each config in a function of its own
    body = text[text.index(f"static void {fn.group(1)}("):] if fn else text
    body = body[body.index(f"{'config' if fn else var}.DynamicCompileStaticFlag"):]
    body = body[:body.index(";")]
    return dict(flags=re.findall(r"\.?(\w+Flag\(\w+\))", body),
                extend=re.findall(r'ExtendCfgInfo\("([\w.]+)", "(\w+)"\)', body))


@pytest.mark.parametrize("op", sorted(OPS))
def test_the_opdef_is_the_real_one_on_atlas_a3(op, real):
    gen = (GENERATED / op / "op_host" / f"{op}_def.cpp").read_text(encoding="utf-8")
    ref = real[f"{op}/op_host/{op}_def.cpp"]
    g, r = _declarations(gen), _declarations(ref)
    assert g["io"] == r["io"] and g["attrs"] == r["attrs"]
    assert "HcclGroup" not in gen and "HcclGroup" not in ref
    assert re.findall(r'AddConfig\("(\w+)"', gen) == ["ascend910_93"]
    assert re.findall(r'AddConfig\("(\w+)"', ref) == ["ascend910_93", "ascend950"]  # 950: the README's ×
    assert _config(gen, "ascend910_93") == _config(ref, "ascend910_93")
    # every generated column (the dtypes of all inputs and outputs at one index) is a column of the real def
    names = [n for n, _ in r["io"]["Input"] + r["io"]["Output"]]

    def columns(d):
        width = max(len(v) for v in d["dtypes"].values())
        return {tuple(d["dtypes"][n][i if len(d["dtypes"][n]) > 1 else 0] for n in names) for i in range(width)}
    assert columns(g) and columns(g) <= columns(r), sorted(columns(g) - columns(r))


def test_opgen_diff_from_the_v2_op_names_the_entry_points(capsys, monkeypatch):
    """DispatchV3 is a new op: V2's aclnnV2/V3/V4 are removed and aclnnV5 is added, by name, never renamed."""
    monkeypatch.chdir(ROOT)
    code = cli.main(["diff", "specs/dispatch_v2.spec", "specs/dispatch_v3.spec", "--allow-abi-break"])
    out = capsys.readouterr().out
    assert code == 0 and "renamed: MoeDistribute" not in out
    assert "  + new IR op MoeDistributeDispatchV3 (the successor of MoeDistributeDispatchV2, which it does not " \
           "register)\n" in out and "  + aclnn entry point aclnnMoeDistributeDispatchV5 added\n" in out
    assert "  + MC2 context domain ep (its context in input context) added\n" in out
    assert "  - HCCL comm group ep (named by groupEp) removed\n" in out
    for v in ("V2", "V3", "V4"):
        assert f"  - aclnn entry point aclnnMoeDistributeDispatch{v} removed\n" in out
    cli.main(["diff", "specs/combine_v2.spec", "specs/combine_v3.spec", "--format", "md", "--allow-abi-break"])
    md = capsys.readouterr().out
    assert "- 新增接口aclnnMoeDistributeCombineV5（37个参数）；" in md
    assert all(f"- 删除接口aclnnMoeDistributeCombine{v}；" in md for v in ("V2", "V3", "V4"))


@pytest.mark.parametrize("expert_scales", [False, True])
def test_infershape_is_the_real_one(expert_scales):
    """The shapes the generated reference (and the C++ check core behind the generated infershape) infers for a
    call, against the real infershape's rules written out (mc2/moe_distribute_dispatch_v3/op_host/
    moe_distribute_dispatch_v3_infershape.cpp, Atlas A3, no TP): A = globalBs * min(localExpertNum, K), ep_recv_count
    ep_world_size * local_expert_num, plus globalBs * 2 * K * ep_world_size / 8 with expert_scales. One known
    difference: without expert_scales the real infershape gives expand_scales (0,); the moe_dispatch family always
    writes its A weights, so the spec keeps (A,)."""
    import importlib
    import sys

    from opgen.runtime.scope import Meta
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref = importlib.import_module("moe_distribute_dispatch_v3.reference")
    W, BS, H, K, E = 8, 4, 1024, 2, 8
    inputs = {"context": Meta((4100,), "INT32"), "x": Meta((BS, H), "BFLOAT16"), "expertIds": Meta((BS, K), "INT32")}
    if expert_scales:
        inputs["expertScalesOptional"] = Meta((BS, K), "FLOAT32")
    attrs = {"epWorldSize": W, "epRankId": 1, "moeExpertNum": E, "cclBufferSize": 200 * 1024 * 1024}
    got = {n: tuple(s) for n, (s, _) in ref.infer(inputs, attrs, "ascend910_93", validate=False).items()}
    global_bs, local = BS * W, E // W
    a = global_bs * min(local, K)
    assert got == {"expandXOut": (a, H), "dynamicScalesOut": (a,), "assistInfoForCombineOut": (a * 128,),
                   "expertTokenNumsOut": (local,),
                   "epRecvCountsOut": (W * local + (global_bs * 2 * K * W // 8 if expert_scales else 0),),
                   "tpRecvCountsOut": (0,), "expandScalesOut": (a,)}
