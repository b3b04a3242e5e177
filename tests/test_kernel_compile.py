"""The generated Ascend C kernel side (op_kernel/): builds every spec and syntax-checks each kernel file.

The check compiles against opgen/sim/include (kernel_operator.h, lib/hccl/hccl.h, kernel_tiling/kernel_tiling.h:
the CPU twin's implementation, with the real headers' signatures) the way CANN's CPU-debug build sees a kernel:
``g++ -std=c++17 -fsyntax-only -Wall -Werror -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1``, once per kernel arch and
OpDef column (DTYPE_<NAME> / ORIG_DTYPE_<NAME> defined, as CANN's op build compiles it). The columns compiled are
a cover (opgen.emit.kernel.column_builds): every (tiling key, dtype) instance a product can reach is instantiated
in at least one of them, so every lowered quant formula is type-checked (the slow tier builds the whole cover, the
default one the column with the most instances per op and arch).
"""
from __future__ import annotations

import importlib
import itertools
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen.emit.pipeline import emit
from opgen.lang.expr import to_spec
from opgen.emit.kernel import KERNEL_KINDS, KERNEL_TEMPLATES, column_builds, emit_cpp_kernel, kernel_problem, plan_instances
from opgen.emit.kernel_lib import kernel_entries
from opgen.emit.kernel_lib import key_value
from opgen.emit.tiling_layout import tiling_fields

from opgen.core.errors import LoweringError
from opgen.core.layout import SHARED_DIR
from opgen.emit.pipeline import emit_shared
from opgen.emit.render import template_source
from opgen.tools.write import build, op_output, shared_output

from .conftest import ROOT, SPECS, load_ok, load_src
from .entry_runs import columns, expanded_runs, runs

sim_build = importlib.import_module("opgen.sim.build")  # the package re-exports build(), which hides the module
CXX = shutil.which("g++") or shutil.which("clang++")
CANN_API = ROOT / "opgen" / "sim" / "include"
FLAGS = ["-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1"]
needs_cxx = pytest.mark.skipif(CXX is None, reason="no C++ compiler")


def kernel_files(op) -> dict[str, str]:
    return {a.path: a.content for a in emit_cpp_kernel(op)}


def body_path(op) -> str:
    """The op's kernel body header: op_kernel/<op>.h, or op_kernel/<op>_gen.h around a C++ family kernel."""
    return KERNEL_KINDS[op.semantics].body_path(op)


def kernel_text(op) -> str:
    """The op's kernel code: its body header, its family's C++ class template where the family has one
    (common/op_kernel/<family>_kernel.h), then every kernel entry (Dispatch and the __global__ function)."""
    files = kernel_files(op)
    kind = KERNEL_KINDS[op.semantics]
    family = template_source(f"cpp/common/op_kernel/{kind.header}") if kind.header else ""
    return files[body_path(op)] + family + "".join(files[p] for p in kernel_entries(op))


def syntax_check(path: Path, op_kernel: Path, arch: int = 3510, defines=()) -> subprocess.CompletedProcess:
    """g++ -fsyntax-only against the twin's headers, for one kernel arch (__NPU_ARCH__) and OpDef column. A kernel
    entry (a template over the template tiling key) is checked as CANN builds it: instantiated for every combination
    its ASCENDC_TPL_SEL lists (the twin's kernel unit, opgen/sim/kernel_entry.cpp, -DOPGEN_SIM_TILING_KEY_SEL)."""
    if path.suffix == ".cpp":
        op = next(p for p in path.parents if p.name == "op_kernel").parent.name
        src = [f'-DOPGEN_SIM_KERNEL_SOURCE="{path}"', f"-DOPGEN_SIM_KERNEL={op}", "-DOPGEN_SIM_TILING_KEY_SEL",
               str(sim_build.SIM_DIR / "kernel_entry.cpp")]
    else:
        src = ["-x", "c++", str(path)]
    return subprocess.run([CXX, *FLAGS, f"-D__NPU_ARCH__={arch}", *defines, "-I", str(CANN_API), "-I",
                           str(op_kernel), *src], capture_output=True, text=True, timeout=300)


def column_defines(op, column: dict) -> list[str]:
    """-D flags of one OpDef column (tensor -> dtype), by the tensors' IR names."""
    return sim_build.column_defines({op.tensor(t).ir_name: d for t, d in column.items()})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every spec built into one tree (the real pipeline: emit + write), beside the shared folder (the C++ family
    kernels the Setup/Teardown ops include)."""
    out = tmp_path_factory.mktemp("kernels")
    ops = [load_ok(p) for p in SPECS]
    build(out, [*(op_output(op.snake_name, Path(op.span.file).name, op.source, emit(op)) for op in ops),
                shared_output(SHARED_DIR, emit_shared())])
    return out, ops


def _check_kernels(built, columns) -> None:
    """Syntax-check every kernel file of every op as CANN compiles it: each kernel entry (the file the OpDef configs
    of some products name) for each arch of those products (2201 Atlas A2/A3, 3510 Ascend 950), once per OpDef
    column ``columns(cover)`` picks from their cover; the other headers once per arch of the op."""
    out, ops = built
    files = []
    for op in ops:
        kdir = out / op.snake_name / "op_kernel"
        for path, socs in kernel_entries(op).items():
            for arch in sorted({op.views[s].facts.npu_arch for s in socs}):
                cover, empty = column_builds(op, socs, arch)
                assert cover and not empty, (op.name, path, arch, empty)
                files += [(out / op.snake_name / path, arch, tuple(column_defines(op, col))) for col in columns(cover)]
        for arch in sorted({v.facts.npu_arch for v in op.views.values()}):  # the body header: through the entries
            files += [(p, arch, ()) for p in sorted(kdir.glob("*.h")) if p.name != Path(body_path(op)).name]
    assert any(p.suffix == ".cpp" for p, _, _ in files) and {a for _, a, _ in files} == {2201, 3510}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda f: (f, syntax_check(f[0], f[0].parent, f[1], f[2])), files))
    failed = [f"{p} (__NPU_ARCH__ {a}, {' '.join(d)}):\n{r.stderr[-4000:]}" for (p, a, d), r in results
              if r.returncode != 0]
    assert not failed, "\n".join(failed)


@needs_cxx
def test_every_generated_kernel_file_compiles(built):
    """Per op and arch, the column whose build holds the most instances (the cover's first)."""
    _check_kernels(built, lambda cover: cover[:1])


@needs_cxx
@pytest.mark.slow
def test_every_kernel_instance_compiles(built):
    """Per op and arch, every column of the cover: each instance a product can reach is instantiated once."""
    _check_kernels(built, lambda cover: cover)


@needs_cxx
def test_a_kernel_holds_only_its_columns_instances(built):
    """The dtype instances are chosen at build time: preprocessed for one OpDef column, DispatchV2's kernel keeps
    exactly the Run<...> instances of that column (bf16 x, int8 expandXOut: quant 2 and 1 ... with those types),
    and without a column it stops with #error instead of compiling none."""
    out, ops = built
    op = next(o for o in ops if o.name == "MoeDistributeDispatchV2")
    kernel = out / op.snake_name / op.views["ascend910_93"].kernel_entry
    col = {"x": "BFLOAT16", "expandXOut": "INT8", "dynamicScalesOut": "FLOAT32"}
    proc = subprocess.run([CXX, "-E", "-P", *FLAGS[:1], "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1",
                           "-D__NPU_ARCH__=2201", *column_defines(op, col), "-I", str(CANN_API), "-I",
                           str(kernel.parent), str(kernel)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = set(re.findall(r"Run<([^>]*)>\(args, tiling\)", proc.stdout))
    plan = plan_instances(op)
    want = {", ".join(i.types) for i in plan.instances
            if "ascend910_93" in i.products and all(col.get(t) == d for t, d in i.checks)}
    assert runs and {r.split(", ")[0] + ", " + r.split(", ")[2] for r in runs} == {"bfloat16_t, int8_t"}
    assert {", ".join(r.split(", ")[:4]) for r in runs} == want
    text = kernel.read_text(encoding="utf-8")
    assert "tiling.dtype_" not in text[text.index("__global__"):]  # no run-time dtype switch
    res = syntax_check(kernel, kernel.parent, 2201)
    assert res.returncode != 0 and "#error \"ORIG_DTYPE_<NAME> is not defined: build this kernel for one OpDef column" \
        in res.stderr


def test_every_spec_gets_a_kernel(built):
    """Every spec under specs/ gets its kernel file (kernel_problem() is None: a kernel that cannot be lowered
    fails the build instead), and together they cover every kernel template."""
    out, ops = built
    for op in ops:
        kdir = out / op.snake_name / "op_kernel"
        assert (kdir / f"{op.snake_name}_tiling.h").is_file()
        assert kernel_problem(op) is None, (op.name, kernel_problem(op))
        assert (out / op.snake_name / body_path(op)).is_file(), op.name
        assert all((out / op.snake_name / v.kernel_entry).is_file() for v in op.views.values()), op.name
    assert {op.semantics for op in ops} == set(KERNEL_TEMPLATES)


def test_an_op_the_kernel_template_does_not_fit_gets_no_kernel(tmp_path):
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    renamed = src.replace("assistInfoForCombineOut", "assistInfoOut")
    op, diags = load_src(renamed, str(tmp_path / "dispatch_v2.spec"))
    assert op is not None, diags.render()
    assert "assistInfoForCombineOut" in kernel_problem(op)
    with pytest.raises(LoweringError, match="assistInfoForCombineOut") as err:
        kernel_files(op)  # a build error at `semantics moe_dispatch`, not a silently missing kernel
    assert err.value.span.line == next(i for i, l in enumerate(renamed.split("\n"), 1) if "semantics " in l)


def test_tiling_struct_follows_the_field_rule(dispatch_v2):
    text = kernel_files(dispatch_v2)[f"op_kernel/{dispatch_v2.snake_name}_tiling.h"]
    body = text[text.index("struct MoeDistributeDispatchV2TilingData {"):]
    declared = re.findall(r"^\s+(\w+) (\w+);", body, re.M)
    fields = tiling_fields(dispatch_v2)
    assert declared == [(f.ctype, f.name) for f in fields]
    names = [n for _, n in declared]
    # the HCCL tilings first, as the real tiling data have them (SetCcTilingV2 takes offsets from the init tiling)
    assert declared[:3] == [("Mc2InitTiling", "mc2InitTiling"), ("Mc2CcTiling", "mc2CcTiling1"),
                            ("Mc2CcTiling", "mc2CcTiling2")]
    assert '#include "kernel_tiling/kernel_tiling.h"' in text
    attrs = [a.name for a in dispatch_v2.attrs if a.type in ("int64", "bool")]
    assert names[3:3 + len(attrs)] == attrs
    for n in ("isSharedRank", "localExpertNum", "A", "serverNum", "BS", "H", "K"):
        assert ("int64_t", n) in declared
    assert ("int32_t", "dtype_expandXOut") in declared and ("uint32_t", "has_scalesOptional") in declared
    assert ("uint32_t", "has_x") not in declared  # required inputs carry no presence flag
    assert names[-6:] == ["tilingKey", "aivNum", "totalUbSize", "winSizeBytes", "pollTimeoutUs", "serverRanks"]
    assert "BEGIN_TILING_DATA_DEF" not in text and "TILING_DATA_FIELD_DEF" not in text


def test_kernel_entry_and_tiling_key_dispatch(dispatch_v2):
    text = kernel_text(dispatch_v2)
    params = ", ".join(f"GM_ADDR {t.name}" for t in dispatch_v2.inputs + dispatch_v2.outputs)
    # every entry is a template over the template tiling key's parameters, as the real entries
    assert text.count("template <uint32_t KeyQuant, uint32_t KeyScales, uint32_t KeyTemplate>\n__global__ __aicore__ "
                      f"void {dispatch_v2.snake_name}({params}, GM_ADDR workspace, GM_ADDR tilingGM)") == 3
    assert 'extern "C"' not in text
    files = kernel_files(dispatch_v2)
    decl = files["op_kernel/moe_distribute_dispatch_v2_tiling_key_decl.h"]
    assert ("ASCENDC_TPL_ARGS_DECL(MoeDistributeDispatchV2,\n"
            "                      ASCENDC_TPL_UINT_DECL(TILINGKEY_QUANT, ASCENDC_TPL_4_BW, ASCENDC_TPL_UI_LIST, 0, 1, 2, 3, 4),\n"
            "                      ASCENDC_TPL_UINT_DECL(TILINGKEY_SCALES, ASCENDC_TPL_1_BW, ASCENDC_TPL_UI_LIST, 0, 1),\n"
            "                      ASCENDC_TPL_UINT_DECL(TILINGKEY_TEMPLATE, ASCENDC_TPL_2_BW, ASCENDC_TPL_UI_LIST, 0, 1, 2),\n);"
            in decl)
    # GET_TPL_TILING_KEY: the value's index in its list, 4 bits, 1 bit, 2 bits, least significant first
    fields = plan_instances(dispatch_v2).fields
    assert key_value((2, 1, 0), fields) == 2 + (1 << 4) and key_value((4, 0, 2), fields) == 4 + (2 << 5)
    plan = plan_instances(dispatch_v2)
    for path, socs in kernel_entries(dispatch_v2).items():
        sel = files[path.removesuffix(".cpp") + "_tiling_key.h"]
        # every combination of each ASCENDC_TPL_ARGS_SEL's value lists, no combination in two of them
        lists = re.findall(
            r"ASCENDC_TPL_ARGS_SEL\(ASCENDC_TPL_UINT_SEL\(TILINGKEY_QUANT, ASCENDC_TPL_UI_LIST, ([\d, ]+)\),\s*"
            r"ASCENDC_TPL_UINT_SEL\(TILINGKEY_SCALES, ASCENDC_TPL_UI_LIST, ([\d, ]+)\),\s*"
            r"ASCENDC_TPL_UINT_SEL\(TILINGKEY_TEMPLATE, ASCENDC_TPL_UI_LIST, ([\d, ]+)\)\)", sel)
        listed = [c for m in lists for c in itertools.product(*([int(v) for v in s.split(", ")] for s in m))]
        assert len(listed) == len(set(listed)), path
        # exactly the combinations the entry's products have instances for
        assert set(listed) == {i.key_values for i in plan.instances if i.products & set(socs)}, path
        assert f'#include "{Path(path).name.removesuffix(".cpp")}_tiling_key.h"' in files[path]
    apt = files["op_kernel/arch35/moe_distribute_dispatch_v2_apt_tiling_key.h"]
    apt_keys = {(q, s) for m in re.findall(r"TILINGKEY_QUANT, ASCENDC_TPL_UI_LIST, ([\d, ]+)\),\s*"
                                          r"ASCENDC_TPL_UINT_SEL\(TILINGKEY_SCALES, ASCENDC_TPL_UI_LIST, ([\d, ]+)\)", apt)
                for q in m[0].split(", ") for s in m[1].split(", ")}
    assert ("1", "1") in apt_keys  # static quant on the 950 ...
    assert ("1", "0") not in apt_keys  # ... needs its scales (950 check)
    # the kernel reads the plain struct and copies rows with the Ascend C queue discipline
    for needle in ("InitTilingData(tilingGM, &tiling)", "AllocTensor<uint8_t>()", ".EnQue(", ".DeQue<uint8_t>()",
                   ".FreeTensor(", "DataCopyPad(", "GetBlockIdx()", "GetBlockNum()", "SyncAll<true>()",
                   "WindowIn<EP_GROUP>(hccl_, ", "GetHcclContext<EP_GROUP>()"):
        assert needle in text, needle


def test_quant_formulas_come_from_the_spec(dispatch_v2):
    text = kernel_text(dispatch_v2)
    mode2 = _mode(text, "quantMode", 2, "// ---- quantMode 3 ")
    assert "ReduceMaxRow(" in mode2 and "Abs(" in mode2
    assert "const float ds = (DTypeTraits<ExpandXOutT>::MAX / " in mode2          # scalar fp32 divide
    assert "CastRow<ExpandXOutT, float, RoundMode::CAST_RINT, true, false>(expandXOutRow" in mode2
    assert "dynamicScalesOutRow.SetValue(0U, static_cast<DynamicScalesOutT>((1.0f / ds)))" in mode2
    mode3 = _mode(text, "quantMode", 3, "// ---- quantMode 4 ")
    assert "BlockMaxRow<128U, false>(" in mode3 and "MulBlocks<128U, false>(" in mode3 and "Div(" in mode3
    assert "CastRow<ExpandXOutT, float, RoundMode::CAST_RINT, false, false>" in mode3   # sat=false
    mode4 = _mode(text, "quantMode", 4, "// One kernel instance: the class over the Traits")
    for needle in ("ExponentRow(", "BlockMaxRow<32U, false>(", "CompareScalar(", "Select(", "Exp2Row(", "PadEvenRow(",
                   "EncodeE8M0Row(", "__builtin_nanf(\"\")"):
        assert needle in mode4, needle
    # the int8 chain CastRow runs (CastFromFloat, common/op_kernel/opgen_kernel_helpers.h) is pinned by its
    # behaviour: the twin's rounding cases and tests/test_sim_mutations.py rint_as_round


@needs_cxx
def test_changing_a_formula_changes_the_kernel(tmp_path):
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    old = "expandXOut = cast(xf * ds, dtype(expandXOut), round=rint, sat=true);"
    assert old in src
    changed = src.replace(old, "expandXOut = cast(max(xf * ds, -64.0), dtype(expandXOut), round=floor, sat=false);")
    op, diags = load_src(changed, str(tmp_path / "dispatch_v2.spec"))
    assert op is not None, diags.render()
    files = kernel_files(op)
    kernel = files[body_path(op)]
    mode2 = _mode(kernel, "quantMode", 2, "// ---- quantMode 3 ")
    assert "RoundMode::CAST_FLOOR, false, false>(expandXOutRow" in mode2 and "Maxs(" in mode2
    assert "RoundMode::CAST_RINT, true, false>(expandXOutRow" not in mode2
    # the op's folder beside the shared folder (the kernel helpers it includes)
    written = {tmp_path / op.snake_name / path: content for path, content in files.items()}
    written.update({tmp_path / SHARED_DIR / a.path: a.content for a in emit_shared()})
    for path, content in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    # a column whose binary holds quant mode 2 (bf16 x, int8 expandXOut): the changed formula is instantiated
    col = {"x": "BFLOAT16", "expandXOut": "INT8", "dynamicScalesOut": "FLOAT32"}
    entry = tmp_path / op.snake_name / op.views["ascend950"].kernel_entry
    r = syntax_check(entry, entry.parent, 3510, column_defines(op, col))
    assert r.returncode == 0, r.stderr[-4000:]


@pytest.mark.parametrize("spec", [p.name for p in SPECS])
def test_kernel_output_is_deterministic_and_clean(spec):
    op = load_ok(ROOT / "specs" / spec)
    a, b = kernel_files(op), kernel_files(op)
    assert a == b and body_path(op) in a and set(kernel_entries(op)) <= set(a)
    for path, text in a.items():
        for word in ("TODO", "FIXME", "XXX", "placeholder", "stub", "None", "True", "False", "Open point"):
            assert not re.search(rf"\b{word}\b", text), (path, word)
        assert not text.endswith("\n\n") and "\t" not in text


def test_combine_kernel(combine_v2):
    text = kernel_text(combine_v2)
    params = ", ".join(f"GM_ADDR {t.name}" for t in combine_v2.inputs + combine_v2.outputs)
    assert (f"template <uint32_t KeyCommQuantMode>\n__global__ __aicore__ void {combine_v2.snake_name}({params}, "
            "GM_ADDR workspace, GM_ADDR tilingGM)") in text
    # no tiling_key: the template tiling key's one parameter is commQuantMode; modes without a formula are not
    # dispatched
    branch = text[text.index("} else if constexpr (KeyCommQuantMode == 2U) {\n"):]
    assert {a for _, a in expanded_runs(branch[:branch.index("Trap();")])} == \
        {"bfloat16_t, bfloat16_t, 2U", "half, half, 2U"}
    assert "QuantRowMode3" not in text and "mxfp8" not in text  # not declared: rejected by tiling
    # the sender quantises and writes the int8 row and its block scales (`send q, stored;`), 32-byte aligned
    mode2 = text[text.index('// ---- commQuantMode 2 "int8"'):text.index("// Init's part the spec decides")]
    for needle in ("BlockMaxRow<8U, false>(", "(1.0f / DTypeTraits<int8_t>::MAX)", "BroadcastBlocks<8U, false>(", "Div(",
                   "CastRow<int8_t, half, RoundMode::CAST_RINT, true, false>(wire_q, ",
                   "CastRow<ExpandXT, float, RoundMode::CAST_RINT, false, false>(wire_stored, s, ",
                   "LocalTensor<int8_t> wire_q = msg[0U].template ReinterpretCast<int8_t>();",
                   "LocalTensor<ExpandXT> wire_stored = msg[AlignUp(RowBytes<int8_t>(static_cast<uint32_t>(hLen)), "
                   "UB_BLOCK)].template ReinterpretCast<ExpandXT>();"):
        assert needle in mode2, needle
    assert "MulBlocks" not in mode2 and "(xOutRow," not in mode2  # no dequantisation, no xOut row on the sender
    # the owner of a mode-2 row reads the message (Traits::RECEIVES) and dequantises it into the fp32 row it adds
    assert "static constexpr bool RECEIVES =\n        (TK_QUANT == 2U) ||\n        false;" in text
    receive = text[text.index("::ReceiveRow("):text.index("// The special experts' terms")]
    for needle in ("MulBlocks<8U, false>(", "CastRow<half, int8_t, RoundMode::CAST_RINT, false, false>(t3, wire_q, ",
                   "CastRow<float, ExpandXT, RoundMode::CAST_RINT, false, false>(term, "):
        assert needle in receive, needle
    # the special experts, lowered from the spec's formulas, in the spec's order (zero, copy, const): a zero expert
    # adds nothing; the real kernel's const expert: the softmax of the dot products alpha1[c]·x and alpha2[c]·x
    # mixes x and v[c]
    special = text[text.index("::SpecialTerm("):]
    assert re.search(r"if \(expert < specialEnd_\[0U\]\) \{  // zero .*\n        return false;\n    \}", special)
    const = special[special.index("if (expert < specialEnd_[2U])"):special.index("return true;", special.index(
        "if (expert < specialEnd_[2U])"))]
    assert const.count("ReduceSumRow(") == 2 and const.count("UnaryScalar<ScalarUnary::EXP>(") == 2
    for needle in ("extraGm_.constExpertAlpha1OptionalGm_, expertRow,", "extraGm_.constExpertAlpha2OptionalGm_, "
                   "expertRow,", "LoadRow(t1, extraGm_.oriXOptionalGm_, tokenIdx,", "const float m = MaxF(a1, a2);",
                   "const float p1 = (e1 / s);", "Muls(x, x, p1,", "Add(x, x, t4,",
                   "const uint32_t expertRow = expert - specialEnd_[1U];"):
        assert needle in const, needle


def test_exp_of_a_row_is_the_vector_exp_and_of_a_value_one_block_of_it(tmp_path):
    """exp() lowers to the vector Exp: over the row for a row, through one block (UnaryScalar) for a value, as the
    real const-expert softmax takes its exponentials (never a scalar exp)."""
    src = (ROOT / "specs" / "combine_v2.spec").read_text(encoding="utf-8")
    old = "Moe = x * p1 + routed(constExpertVOptional) * p2;"
    assert old in src
    op, diags = load_src(src.replace(old, "Moe = exp(x) * p1 + routed(constExpertVOptional) * p2;"),
                         str(tmp_path / "combine_v2.spec"))
    assert op is not None, diags.render()
    text = kernel_files(op)[body_path(op)]
    const = text[text.index("if (expert < specialEnd_[2U])"):]
    const = const[:const.index("return true;")]
    assert "Exp(x, x, static_cast<int32_t>(hLen));" in const
    assert const.index("Exp(x, x,") < const.index("Muls(x, x, p1,")
    assert const.count("UnaryScalar<ScalarUnary::EXP>(") == 2


@pytest.fixture(scope="module")
def combine_v2():
    return load_ok(ROOT / "specs" / "combine_v2.spec")


# ---- DispatchV2 / CombineV2: the mask rank, static-scale layouts, pre-quantised x, Atlas A2 ---------------

def _variant(text: str, old: str, new: str, tmp_path):
    src = (ROOT / "specs" / text).read_text(encoding="utf-8")
    assert src.count(old) == 1, old
    op, diags = load_src(src.replace(old, new), str(tmp_path / text))
    assert op is not None, diags.render()
    return op


def test_tiling_probes_find_the_lets_carrying_ranks_and_dims(dispatch_v2):
    from opgen.lower.ascendc import TilingExpr
    probes = TilingExpr(dispatch_v2, {f.name for f in tiling_fields(dispatch_v2)}, var="tiling")
    assert probes.probe("rank", "xActiveMaskOptional") == "tiling.maskRank"
    assert probes.probe("dim", "scalesOptional", 0) == "tiling.scalesLen"
    assert probes.probe("dim", "scalesOptional", 1) == "tiling.scalesCols"  # guarded by rank(scalesOptional) > 1
    assert probes.probe("dim", "xActiveMaskOptional", 1) is None


def test_dispatch_honours_a_two_dimensional_mask(dispatch_v2):
    assert ("int64_t", "maskRank") in [(f.ctype, f.name) for f in tiling_fields(dispatch_v2)]
    text = kernel_text(dispatch_v2)
    assert "maskRank_ = Traits::MaskRank(tiling);" in text and "return static_cast<uint32_t>(tiling.maskRank);" in text
    send = text[text.index("::SendRows()"):text.index("::SendRow(uint32_t")]
    assert "const uint32_t maskLen = (maskRank_ == 2U) ? pairs : bs_;" in send
    assert "on = on || mask.GetValue(t * topK_ + k) != 0U;" in send          # active iff any(mask[t, :])
    assert "if (pairMask && mask.GetValue(i) == 0U) {" in send                # pair (t, k) sent iff mask[t, k]
    # shared copies: the active tokens are listed only for a 2-D mask (else they are the first ones)
    assert "const uint32_t tokenIdx = pairMask ? static_cast<uint32_t>(act.GetValue(slot)) : slot;" in send
    assert "first BS values" not in text


def _combine_class() -> str:
    """The moe_combine family's class template (plain C++ every combine op's _gen.h includes)."""
    return (ROOT / "templates" / "cpp" / "common" / "op_kernel" / "moe_combine_kernel.h").read_text(encoding="utf-8")


def test_combine_honours_a_two_dimensional_mask():
    combine = load_ok(ROOT / "specs" / "combine_v2.spec")
    text = kernel_text(combine)
    # the mask's rank is the spec's let, read from the tiling data by the Traits the class asks
    assert "return static_cast<uint32_t>(tiling.maskRank);" in text
    cls = _combine_class()
    assert "maskRank_ = Traits::MaskRank(tiling);" in cls
    reduce = cls[cls.index("::Reduce()\n"):cls.index("::WaitSlots(")]
    assert "active = active || mask.GetValue(t * topK_ + k) != 0U;" in reduce
    assert "(pairMask && mask.GetValue(t * topK_ + k) == 0U)" in reduce
    assert "SplitRange(bs_, begin, end);" in reduce  # inactive tokens get zero rows (the reference's zeros)


def test_a_spec_without_the_mask_rank_gets_no_dispatch_kernel(tmp_path):
    op = _variant("dispatch_v2.spec",
                  "let maskRank = if present(xActiveMaskOptional) then rank(xActiveMaskOptional) else 0",
                  "let maskRank = 0", tmp_path)
    assert "rank(xActiveMaskOptional)" in kernel_problem(op)
    with pytest.raises(LoweringError, match=r"rank\(xActiveMaskOptional\)"):
        kernel_files(op)


def test_a_quant_formula_assigning_an_output_the_dispatch_message_does_not_carry_gets_no_kernel(tmp_path):
    """The moe_dispatch class template carries one output beside expandXOut in its row message, dynamicScalesOut: a
    formula that assigns another output is a located error at that assignment, not a kernel that drops it."""
    old = "        dynamicScalesOut = 1.0 / ds;\n    }\n    quant 3"
    op = _variant("dispatch_v2.spec", old, old.replace("ds;\n", "ds;\n        expandScalesOut = 1.0 / ds;\n", 1),
                  tmp_path)
    assert kernel_problem(op) == ("the moe_dispatch kernel carries dynamicScalesOut beside expandXOut in its row "
                                  "message, but the quant formulas also assign expandScalesOut")
    with pytest.raises(LoweringError) as err:
        kernel_files(op)
    assert err.value.span is not None and \
        err.value.span.line == next(s.span.line for s in op.quant_mode(2).body if s.name == "expandScalesOut")


def test_dispatch_kernel_is_a_cpp_header_around_the_specs_part(dispatch_v2):
    """DispatchV2 / V3 run the family's class template (common/op_kernel/moe_dispatch_kernel.h, plain C++); their
    op_kernel/<op>_gen.h holds what the spec determines: Traits, the lowered QuantRow, Run and the key."""
    shared = {a.path: a.content for a in emit_shared()}
    kind = KERNEL_KINDS["moe_dispatch"]
    header = shared[f"op_kernel/{kind.header}"]
    assert "class MoeDispatchKernel {" in header and "{{" not in header and "{%" not in header
    for spec in ("dispatch_v2.spec", "dispatch_v3.spec"):
        op = dispatch_v2 if spec == "dispatch_v2.spec" else load_ok(ROOT / "specs" / spec)
        gen = kernel_files(op)[body_path(op)]
        assert body_path(op) == f"op_kernel/{op.snake_name}_gen.h"
        assert '#include "../../common/op_kernel/moe_dispatch_kernel.h"' in gen
        # the BatchWrite helpers: the op's constants and item offset here, then the family kernel includes the rest
        assert "opgen_family_window.h" not in gen and "BatchWriteItemsAt(" in gen
        assert '#include "opgen_batch_write.h"' in template_source("cpp/common/op_kernel/moe_dispatch_kernel.h")
        assert f"struct {op.name}Traits {{" in gen and f"Kernel<{op.name}Traits<" in gen
        assert "::Process()" not in gen and "::Init(" not in gen and "::SendRows()" not in gen
        assert "__aicore__ inline void MoeDispatchKernel<Traits>::QuantRow(" in gen
    v2 = kernel_files(dispatch_v2)[body_path(dispatch_v2)]
    assert "static constexpr bool TP = true;" in v2 and "static constexpr bool MC2_CONTEXT = false;" in v2


def test_static_scales_of_shape_one_or_h_are_told_apart_at_run_time(dispatch_v2):
    text = kernel_text(dispatch_v2)
    static = [(c, a) for c, a in runs(text) if ", 1U, 1U, RowLayout::" in a]
    int8 = [(c, a) for c, a in static if "ORIG_DTYPE_EXPAND_X == DT_INT8" in c]
    assert int8 and all(("tiling.scalesLen == 1" in c) == a.endswith("RowLayout::SCALAR") for c, a in int8)
    assert {a.rsplit("::", 1)[1] for _, a in int8} == {"SCALAR", "VECTOR"}
    hif8 = [(c, a) for c, a in static if "DT_HIFLOAT8" in c]  # HIFLOAT8 takes (1,) only: no run-time test
    assert hif8 and all(a.endswith("SCALAR") and "scalesLen" not in c for c, a in hif8)
    mode1 = _mode(text, "quantMode", 1, "// ---- quantMode 2 ")
    assert "LoadRowF32<ScalesOptionalT, LAYOUT_SCALES_OPTIONAL>" in mode1  # (1,) broadcast over the row


def test_without_a_first_dim_let_the_scales_layout_stays_an_open_point(tmp_path):
    op = _variant("dispatch_v2.spec", "let scalesLen = if present(scalesOptional) then dim(scalesOptional, 0) else 0",
                  "let scalesLen = 0", tmp_path)
    assert kernel_problem(op) is None
    text = kernel_text(op)
    assert "scalesOptional may be (H,) or (1,)" in text and "scalesLen ==" not in text


def test_prequantised_x_carries_its_scales(dispatch_v2):
    text = kernel_text(dispatch_v2)
    assert "dynamicScalesOutWidth_ = static_cast<uint32_t>((tiling_.scalesCols));" in text
    assert "reachable per the spec" not in text and "static_assert(TK_QUANT != TK_QUANT" not in text
    prequant = [(c, a) for c, a in runs(text) if ", 0U, 1U, RowLayout::" in a]
    assert any("ORIG_DTYPE_X == DT_FLOAT8_E4M3FN" in c and
               "defined(ORIG_DTYPE_SCALES) && ORIG_DTYPE_SCALES == DT_FLOAT8_E8M0" in c for c, _ in prequant)
    mode0 = _mode(text, "quantMode", 0, "// ---- quantMode 1 ")
    assert "LoadRow(t3, scalesOptionalGm_, tokenIdx, static_cast<uint32_t>(dynamicScalesOutWidth_));" in mode0


def test_atlas_a2_assist_info_is_the_sender_side_expand_idx(dispatch_v2):
    assert [l.expr.value for l in dispatch_v2.view("ascend910b").lets if l.name == "isA2"] == [True]
    assert [l.expr.value for l in dispatch_v2.view("ascend910_93").lets if l.name == "isA2"] == [False]
    text = kernel_text(dispatch_v2)
    assert "isA2_ = Traits::IsA2(tiling);" in text and "return (tiling.isA2 != 0);" in text
    assert "idx.SetValue(i - begin, static_cast<int32_t>(slot));" in text    # the slots of this core's pairs
    assert "DataCopyPad(assistInfoForCombineOutGm_[begin], idx," in text
    assert "DataCopyPad(assistInfoForCombineOutGm_[pairItems + z], idx," in text  # inactive tokens' pairs: 0
    assert "if (withInfo && !isA2_) {" in text                              # no triples on A2
    assert "combineBytes_ = static_cast<uint64_t>(tiling.win_dispatch_at);" in text  # after CombineV2's area
    # the CombineV2 area itself is the spec's: per expert rank a region on A2 (the rows one rank sends another,
    # then the header of the sender's counts and the flag), per (token, k) and shared expert elsewhere; on A2
    # DispatchV2's regions lie over it
    a2 = dispatch_v2.view("ascend910b").window.areas
    assert to_spec(a2[0].expr) == \
        "epWorldSize * (maxBS * min(localMoeExpertNum, K) * Align32(2 * H) + Align32(4 * (localMoeExpertNum + 1)))"
    assert to_spec(a2[1].expr) == "epWorldSize * maxBS * min(localMoeExpertNum, K) * winMsgBytes"
    assert [to_spec(a.expr) for a in dispatch_v2.view("ascend910_93").window.areas][0] == \
        "maxBS * (K + (if sharedExpertRankNum == 0 then 0 else sharedExpertNum)) * Align512(2 * H)"
    combine = load_ok(ROOT / "specs" / "combine_v2.spec")
    ctext = kernel_text(combine)
    assert "isA2_ = (tiling.isA2 != 0);" in ctext  # the spec's let, which the class's A2 path tests
    cls = _combine_class()
    assert "SendBackBlocks();" in cls and "WaitBlocks();" in cls
    # pair (t, k)'s row: its expandIdx slot counted from its expert's first row, which the sender's header gives
    assert ("A2Region(epRank_,expert/localExperts_)+A2RowAt(static_cast<uint32_t>(fromHeader.GetValue(k*WS_SLOT_INTS))"
            "-static_cast<uint32_t>(slots.GetValue(k)))") in re.sub(r"\s+", "", cls)
    assert "DataCopyPad(slots, assistInfoForCombineGm_[static_cast<uint64_t>(t) * topK_]," in cls


def test_an_a2_product_needs_the_is_a2_let(tmp_path):
    op = _variant("combine_v2.spec", "    let isA2 = false doc", "    let isA2Unused = false doc", tmp_path)
    assert "isA2" in kernel_problem(op)


# ---- the Setup/Teardown family ------------------------------------------------------------------------------

FAMILY = ("dispatch_setup.spec", "dispatch_teardown.spec", "combine_setup.spec", "combine_teardown.spec")


@pytest.fixture(scope="module")
def family():
    return {spec: kernel_files(load_ok(ROOT / "specs" / spec)) for spec in FAMILY}


def _kernel(family, spec: str) -> str:
    """The kernel body header and the entries of the op of ``spec``."""
    files = family[spec]
    return "".join(files[p] for p in sorted(files, key=lambda p: not p.endswith(".h")) if not p.endswith("_tiling.h"))


def _mode(text: str, spec_quant: str, value: int, end: str) -> str:
    """The lowered formula of one quant mode in QuantRow of op_kernel/<op>_gen.h."""
    return text[text.index(f"// ---- {spec_quant} {value} "):text.index(end)]


def test_family_kernels_are_cpp_headers_around_the_specs_part(family):
    """The four kernels are the family's class templates (common/op_kernel/<family>_kernel.h, plain C++ beside the
    shared window layout), which each op's generated op_kernel/<op>_gen.h includes and instantiates with its Traits;
    what it generates is what the spec determines (no Process, Init or window code of its own)."""
    shared = {a.path: a.content for a in emit_shared()}
    assert "op_kernel/opgen_family_window.h" in shared
    for spec in FAMILY:
        op = load_ok(ROOT / "specs" / spec)
        kind = KERNEL_KINDS[op.semantics]
        header = f"op_kernel/{kind.header}"
        assert f"class {kind.kernel_class} {{" in shared[header] and "{{" not in shared[header]
        gen = family[spec][body_path(op)]
        for name in ("opgen_family_window.h", kind.header):
            assert f'#include "../../common/op_kernel/{name}"' in gen
        assert f"struct {op.name}Traits {{" in gen and f"Kernel<{op.name}Traits<" in gen  # Run's class
        assert "::Process()" not in gen and "::Init(" not in gen and "FamilyWindow" not in gen
        text = _kernel(family, spec)
        params = ", ".join(f"GM_ADDR {t.name}" for t in op.inputs + op.outputs)
        entry = f"__global__ __aicore__ void {op.snake_name}({params}, GM_ADDR workspace, GM_ADDR tilingGM)"
        assert f"template <uint32_t Key{op.quant_by[:1].upper()}{op.quant_by[1:]}>\n{entry}" in text
        assert "InitTilingData(tilingGM, &tiling)" in text and "tiling.tilingKey" not in text


def test_dispatch_setup_kernel(family):
    text = _kernel(family, "dispatch_setup.spec")
    mode0 = _mode(text, "quantMode", 0, "// ---- quantMode 4 ")
    assert "CastRow<YOutT, XT, RoundMode::CAST_RINT, false, false>(yOutRow, xRow," in mode0  # a copy: the dtypes agree
    mx = _mode(text, "quantMode", 4, "// One kernel instance: the class over the Traits")
    for needle in ("ExponentRow(", "BlockMaxRow<32U, false>(", "Exp2Row(", "MulBlocks<32U, false>(",
                   "CastRow<YOutT, float, RoundMode::CAST_RINT, true, false>(yOutRow"):
        assert needle in mx, needle
    # the MX instance runs in the entry's instance of template tiling key quantMode 4, in its OpDef column
    mx_key = text[text.index("} else if constexpr (KeyQuantMode == 4U) {"):]
    mx_runs = expanded_runs(mx_key[:mx_key.index("Trap();")])
    assert any("(ORIG_DTYPE_X == DT_BF16)" in c and "(ORIG_DTYPE_Y == DT_FLOAT8_E4M3FN)" in c and
               a == "bfloat16_t, fp8_e4m3fn_t, 4U" for c, a in mx_runs), mx_runs


def test_dispatch_teardown_kernel(family):
    text = _kernel(family, "dispatch_teardown.spec")
    assert "QuantRow" not in text  # the rows arrive quantised by DispatchSetup
    assert runs(text) and all("ORIG_DTYPE_Y == DT_" in c for c, _ in runs(text))
    admitted = [col for c, _ in runs(text) for col in columns(c)]
    assert admitted and all(col["Y"] == col["EXPAND_X"] for col in admitted)  # the rows arrive as they were sent


def test_combine_setup_kernel(family, tmp_path):
    text = _kernel(family, "combine_setup.spec")
    assert "QuantRow" not in text
    head = "quant 0 none \"不进行量化\" {\n"
    op = _variant("combine_setup.spec", head, head + "        quantExpandXOut = cast(cast(expandX, FLOAT32), INT8);\n",
                  tmp_path)
    assert "sends its rows unchanged" in kernel_problem(op)


def test_combine_teardown_kernel(family):
    text = _kernel(family, "combine_teardown.spec")
    quant = text[text.index("::QuantRow("):text.index("// One kernel instance: the class over the Traits")]
    assert "CopyRow<XOutT, XOutT, false>(xOutRow, xRow, static_cast<uint32_t>(hLen));" in quant  # the spec's formula (identity)
    assert "sharedExpertXOptionalGm_" not in text  # the reference (and the arch35 kernel) do not add it


def test_a_mode_whose_code_an_arch_cannot_compile_is_a_located_error(dispatch_v2):
    """Lowered code of a mode that Atlas A2/A3 (__NPU_ARCH__ 2201) take, naming fp8_e8m0_t (a 3510 type): the build
    fails at the mode rather than leaving the mode out of the 2201 kernel (a call that would do nothing).
    The guards of what only 3510 products take: the MX mode, guarded; pertoken, every arch."""
    from types import SimpleNamespace

    from opgen.emit.kernel_lib import ArchGuards

    guards = ArchGuards(dispatch_v2)
    assert guards.archs == [2201, 3510]
    assert guards.of_mode(SimpleNamespace(value=4, lines=["static_assert(IS_E8M0<fp8_e8m0_t>, \"\");"])) == \
        "defined(__NPU_ARCH__) && (__NPU_ARCH__ == 3510)"
    assert guards.of_mode(SimpleNamespace(value=2, lines=["Cast(dst, src, RoundMode::CAST_RINT, n);"])) == ""
    with pytest.raises(LoweringError, match=r"quantMode 2 names fp8_e8m0_t, which __NPU_ARCH__ 2201 does not have") as err:
        guards.of_mode(SimpleNamespace(value=2, lines=["LocalTensor<fp8_e8m0_t> s;"]))
    src = dispatch_v2.source.split("\n")
    assert err.value.span.line == next(i for i, l in enumerate(src, 1) if l.startswith("    quant 2 "))
