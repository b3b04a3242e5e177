"""The generated Ascend C kernel side (op_kernel/): builds every spec and syntax-checks each kernel file.

The check compiles with the declarations of tests/cann_api (kernel_operator.h, lib/hccl/hccl.h,
kernel_tiling/kernel_tiling.h) the way CANN's CPU-debug build sees a kernel:
``g++ -std=c++17 -fsyntax-only -Wall -Werror -DASCENDC_CPU_DEBUG=1 -D__CCE_KT_TEST__=1``.  Every (tiling key,
dtype) combination a product can reach is instantiated, so every lowered quant formula is type-checked.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen.emit import emit
from opgen.emit_cpp_kernel import (KERNEL_TEMPLATES, emit_cpp_kernel, kernel_problem, key_value, plan_instances,
                                   tiling_fields)
from opgen.write import build, op_output

from .conftest import ROOT, SPECS, load_ok, load_src

CXX = shutil.which("g++") or shutil.which("clang++")
CANN_API = ROOT / "tests" / "cann_api"
FLAGS = ["-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1"]
needs_cxx = pytest.mark.skipif(CXX is None, reason="no C++ compiler")


def kernel_files(op) -> dict[str, str]:
    return {a.path: a.content for a in emit_cpp_kernel(op)}


def syntax_check(path: Path, op_kernel: Path) -> subprocess.CompletedProcess:
    lang = ["-x", "c++"] if path.suffix == ".h" else []
    return subprocess.run([CXX, *FLAGS, "-I", str(CANN_API), "-I", str(op_kernel), *lang, str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every spec built into one tree (the real pipeline: emit + write)."""
    out = tmp_path_factory.mktemp("kernels")
    ops = [load_ok(p) for p in SPECS]
    build(out, [op_output(op.snake_name, Path(op.span.file).name, op.source, emit(op)) for op in ops])
    return out, ops


@needs_cxx
def test_every_generated_kernel_file_compiles(built):
    out, ops = built
    files = sorted(p for op in ops for p in (out / op.snake_name / "op_kernel").glob("*") if p.suffix in (".h", ".cpp"))
    assert any(p.suffix == ".cpp" for p in files)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda p: (p, syntax_check(p, p.parent)), files))
    failed = [f"{p}:\n{r.stderr[-4000:]}" for p, r in results if r.returncode != 0]
    assert not failed, "\n".join(failed)


def test_kernel_files_per_semantics(built):
    out, ops = built
    for op in ops:
        kdir = out / op.snake_name / "op_kernel"
        assert (kdir / f"{op.snake_name}_tiling.h").is_file()
        has_kernel = (kdir / f"{op.snake_name}.cpp").is_file()
        assert has_kernel == (op.semantics in KERNEL_TEMPLATES), op.name  # no stub for the others
        assert has_kernel == (kernel_problem(op) is None), kernel_problem(op)


def test_an_op_the_kernel_template_does_not_fit_gets_no_kernel(tmp_path):
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    renamed = src.replace("assistInfoForCombineOut", "assistInfoOut")
    op, diags = load_src(renamed, str(tmp_path / "dispatch_v2.spec"))
    assert op is not None, diags.render()
    assert "assistInfoForCombineOut" in kernel_problem(op)
    assert list(kernel_files(op)) == [f"op_kernel/{op.snake_name}_tiling.h"]


def test_tiling_struct_follows_the_field_rule(dispatch_v2):
    text = kernel_files(dispatch_v2)[f"op_kernel/{dispatch_v2.snake_name}_tiling.h"]
    body = text[text.index("struct MoeDistributeDispatchV2TilingData {"):]
    declared = re.findall(r"^\s+(\w+) (\w+);", body, re.M)
    fields = tiling_fields(dispatch_v2)
    assert declared == [(f.ctype, f.name) for f in fields]
    names = [n for _, n in declared]
    attrs = [a.name for a in dispatch_v2.attrs if a.type in ("int64", "bool")]
    assert names[:len(attrs)] == attrs
    for n in ("isSharedRank", "localExpertNum", "A", "rowsOut", "serverNum", "BS", "H", "K"):
        assert ("int64_t", n) in declared
    assert ("int32_t", "dtype_expandXOut") in declared and ("uint32_t", "has_scalesOptional") in declared
    assert ("uint32_t", "has_x") not in declared  # required inputs carry no presence flag
    assert names[-4:] == ["tilingKey", "aivNum", "totalUbSize", "winSizeBytes"]
    assert "BEGIN_TILING_DATA_DEF" not in text and "TILING_DATA_FIELD_DEF" not in text


def test_kernel_entry_and_tiling_key_dispatch(dispatch_v2):
    text = kernel_files(dispatch_v2)[f"op_kernel/{dispatch_v2.snake_name}.cpp"]
    params = ", ".join(f"GM_ADDR {t.name}" for t in dispatch_v2.inputs + dispatch_v2.outputs)
    assert (f'extern "C" __global__ __aicore__ void {dispatch_v2.snake_name}({params}, GM_ADDR workspace, '
            f"GM_ADDR tiling)") in text
    # the key decodes as 10000 + quant + 10 * scales + 100 * template
    assert "10000UL + static_cast<uint64_t>(quant) * 1UL + static_cast<uint64_t>(scales) * 10UL + " \
           "static_cast<uint64_t>(template_) * 100UL" in text
    plan = plan_instances(dispatch_v2)
    cases = {tuple(int(d) for d in m.split(", "))
             for m in re.findall(r"case TilingKey\(([0-9U, ]+)\):", text.replace("U", ""))}
    assert {i.key_values for i in plan.instances} <= cases
    assert key_value((2, 1, 0)) == 10012 and (2, 1, 0) in cases
    assert (1, 1, 0) in cases and (1, 0, 0) not in cases  # static quant needs its scales (950 check)
    # the kernel reads the plain struct and copies rows with the Ascend C queue discipline
    for needle in ("InitTilingData(tiling, &tilingData)", "AllocTensor<uint8_t>()", ".EnQue(", ".DeQue<uint8_t>()",
                   ".FreeTensor(", "DataCopyPad(", "GetBlockIdx()", "GetBlockNum()", "SyncAll<true>()",
                   "hccl_.GetWindowsInAddr(", "GetHcclContext<EP_GROUP>()"):
        assert needle in text, needle


def test_quant_formulas_come_from_the_spec(dispatch_v2):
    text = kernel_files(dispatch_v2)[f"op_kernel/{dispatch_v2.snake_name}.cpp"]
    mode2 = text[text.index("::QuantRowMode2("):text.index("::QuantRowMode3(")]
    assert "ReduceMaxRow(" in mode2 and "Abs(" in mode2
    assert "const float ds = (DTypeTraits<ExpandXOutT>::MAX / " in mode2          # scalar fp32 divide
    assert "CastRow<ExpandXOutT, float, RoundMode::CAST_RINT, true>(expandXOutRow" in mode2
    assert "dynamicScalesOutRow.SetValue(0U, static_cast<DynamicScalesOutT>((1.0f / ds)))" in mode2
    mode3 = text[text.index("::QuantRowMode3("):text.index("::QuantRowMode4(")]
    assert "BlockMaxRow<128U>(" in mode3 and "MulBlocks<128U>(" in mode3 and "Div(" in mode3
    assert "CastRow<ExpandXOutT, float, RoundMode::CAST_RINT, false>" in mode3   # sat=false
    mode4 = text[text.index("::QuantRowMode4("):text.index("---- 2. status")]
    for needle in ("ExponentRow(", "BlockMaxRow<32U>(", "CompareScalar(", "Select(", "Exp2Row(", "PadEvenRow(",
                   "EncodeE8M0Row(", "__builtin_nanf(\"\")"):
        assert needle in mode4, needle
    # the int8 chain: fp32 -RINT-> int32 -> half -> int8
    chain = text[text.index("__aicore__ inline void CastFromFloat"):text.index("__aicore__ inline void CastToFloat")]
    assert chain.index("Cast(asInt, scratch, RM, count)") < chain.index("RoundMode::CAST_ROUND") \
        < chain.index("Cast(dst, asHalf, RoundMode::CAST_TRUNC, count)")


@needs_cxx
def test_changing_a_formula_changes_the_kernel(tmp_path):
    src = (ROOT / "specs" / "dispatch_v2.spec").read_text(encoding="utf-8")
    old = "expandXOut = cast(xf * ds, dtype(expandXOut), round=rint, sat=true);"
    assert old in src
    changed = src.replace(old, "expandXOut = cast(max(xf * ds, -64.0), dtype(expandXOut), round=floor, sat=false);")
    op, diags = load_src(changed, str(tmp_path / "dispatch_v2.spec"))
    assert op is not None, diags.render()
    files = kernel_files(op)
    kernel = files[f"op_kernel/{op.snake_name}.cpp"]
    mode2 = kernel[kernel.index("::QuantRowMode2("):kernel.index("::QuantRowMode3(")]
    assert "RoundMode::CAST_FLOOR, false>(expandXOutRow" in mode2 and "Maxs(" in mode2
    assert "RoundMode::CAST_RINT, true>(expandXOutRow" not in mode2
    kdir = tmp_path / "op_kernel"
    kdir.mkdir()
    for path, content in files.items():
        (tmp_path / path).write_text(content, encoding="utf-8")
    r = syntax_check(kdir / f"{op.snake_name}.cpp", kdir)
    assert r.returncode == 0, r.stderr[-4000:]


def test_kernel_output_is_deterministic_and_clean(dispatch_v2):
    a, b = kernel_files(dispatch_v2), kernel_files(dispatch_v2)
    assert a == b
    for path, text in a.items():
        for word in ("TODO", "FIXME", "XXX", "placeholder", "stub", "None", "True", "False"):
            assert not re.search(rf"\b{word}\b", text), (path, word)
        assert not text.endswith("\n\n") and "\t" not in text


def test_combine_kernel(combine_v2):
    text = kernel_files(combine_v2)[f"op_kernel/{combine_v2.snake_name}.cpp"]
    params = ", ".join(f"GM_ADDR {t.name}" for t in combine_v2.inputs + combine_v2.outputs)
    assert (f'extern "C" __global__ __aicore__ void {combine_v2.snake_name}({params}, GM_ADDR workspace, '
            f"GM_ADDR tiling)") in text
    # no tiling_key: commQuantMode is read from the tiling data; modes without a formula are not dispatched
    assert "if (tiling.commQuantMode == 2 && tiling.dtype_expandX == GE_DT_BF16" in text
    assert "commQuantMode 3 (mxfp8_e5m2): the spec gives no formula" in text
    mode2 = text[text.index("::QuantRowMode2("):text.index("::QuantRowMode3(")]
    for needle in ("BlockMaxRow<8U>(", "(1.0f / DTypeTraits<int8_t>::MAX)", "BroadcastBlocks<8U>(", "Div(",
                   "CastRow<int8_t, half, RoundMode::CAST_RINT, true>", "MulBlocks<8U>("):
        assert needle in mode2, needle
    reduce = text[text.index("::AddRow("):text.index("::ConstExpertTerm(")]
    assert reduce.index("Muls(term, term, weight, n)") < reduce.index("Add(acc, acc, term, n)")


@pytest.fixture(scope="module")
def combine_v2():
    return load_ok(ROOT / "specs" / "combine_v2.spec")
