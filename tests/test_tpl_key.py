"""The generated ops key their kernel instances with CANN's template tiling key (opgen/emit/tpl_key.py).

Every op declares the key's parameters once (op_kernel/<op>_tiling_key_decl.h, ASCENDC_TPL_ARGS_DECL); every kernel
entry lists beside it the combinations it is built for (<entry>_tiling_key.h, ASCENDC_TPL_SEL), exactly those of
its products' kernel instances. Here the committed headers, read by the twin's template_argument.h as the kernel
build reads them, select exactly the keys the Python encoding gives those instances; a key no list holds faults on
the twin. That the host tiling sets the spec's key, a selected one, on every positive rank: tests/test_sim_tiling.py.
"""
from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen.core.layout import SHARED_DIR
from opgen.emit.kernel import plan_instances
from opgen.emit.kernel_lib import kernel_entries
from opgen.emit.tpl_key import decl_header, encode, key_params, sel_header
from opgen.model.roles import in_role_names

from .conftest import ROOT, SPECS, load_ok

GENERATED = ROOT / "generated"
INCLUDE = ROOT / "opgen" / "sim" / "include"
CXX = shutil.which("g++") or shutil.which("clang++")


def _entries():
    """(op, entry path, its SoCs) of every kernel entry of every spec."""
    for path in SPECS:
        op = load_ok(path)
        for entry, socs in kernel_entries(in_role_names(op)).items():
            yield op, entry, socs


def test_every_op_declares_its_key_and_every_entry_includes_its_selection():
    seen = 0
    for op, entry, socs in _entries():
        folder = GENERATED / op.snake_name
        decl = (folder / decl_header(op)).read_text(encoding="utf-8")
        params = key_params(op)
        assert params, f"{op.name}: a template tiling key needs a parameter"
        # one ASCENDC_TPL_UINT_DECL per parameter, in GET_TPL_TILING_KEY order, listing the values it can take
        got = re.findall(r"ASCENDC_TPL_UINT_DECL\((\w+), ASCENDC_TPL_(\d)_BW, ASCENDC_TPL_UI_LIST, ([\d, ]+)\)", decl)
        assert got == [(p.macro, str(p.bit_width), ", ".join(map(str, p.values))) for p in params], op.name
        text = (folder / entry).read_text(encoding="utf-8")
        # its own selection, or the one the entries of its folder share where they list the same combinations
        assert f'#include "{Path(sel_header(entry)).name}"' in text or \
            f'#include "{op.snake_name}_tiling_key.h"' in text and (folder / entry).with_name(
                f"{op.snake_name}_tiling_key.h").is_file()
        names = ", ".join(f"uint32_t {p.entry_param}" for p in params)
        # the __global__ entry, holding its kernel instances or calling op_kernel/<op>_gen.h's Dispatch where every
        # entry's are the same
        assert text.count(f"template <{names}>") == 1 and ("Dispatch<" not in text or f"template <{names}>\n"
            "__aicore__ inline void Dispatch(" in (folder / "op_kernel" / f"{op.snake_name}_gen.h").read_text(
                encoding="utf-8")), entry
        assert 'extern "C"' not in text
        seen += 1
    assert seen == 14  # the nine ops' kernel entries


def test_a_kernel_op_with_no_key_parameter_is_a_located_error(tmp_path):
    """An entry is a template over the key's parameters: an op of a kernel family with neither quant modes nor a
    tiling_key field has none, and its build fails at `semantics` (E201) instead of emitting `template <>`."""
    from opgen.core.errors import LoweringError
    from opgen.emit.kernel import emit_cpp_kernel, kernel_problem

    from .conftest import load_src

    src = (ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
    src = src.replace("    quant_by commQuantMode;\n", "")
    src = re.sub(r"    quant 0 none .*?\n    }\n", "", src, flags=re.S)
    src = re.sub(r" *quant_modes 0;\n", "", src)
    op, diags = load_src(src, str(tmp_path / "combine_setup.spec"))
    assert op is not None and not key_params(op), diags.render()
    assert "gives it no parameter" in kernel_problem(op)
    with pytest.raises(LoweringError, match="CANN's template tiling key") as err:
        emit_cpp_kernel(op)
    assert err.value.span.line == next(i for i, line in enumerate(src.split("\n"), 1) if "    semantics " in line)


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_each_entrys_selection_is_exactly_its_products_instances():
    """The twin's template_argument.h / tiling_key.h read each committed ASCENDC_TPL_SEL header as the kernel build
    does: the keys it selects (every declared combination encoded, kept when a list holds it) are exactly the
    encodings of the kernel plan's key combinations for the entry's products, neither more nor fewer."""
    checks = []
    for op, entry, socs in _entries():
        plan = plan_instances(op)
        want = sorted({encode(key_params(op), i.key_values) for i in plan.instances if i.products & set(socs)})
        assert want, entry
        # the selection the entry includes: its own (sel_header), or its folder's shared one (kernel.sel_headers)
        included = re.search(r'#include "(\w+_tiling_key\.h)"', (GENERATED / op.snake_name / entry).read_text())
        header = (GENERATED / op.snake_name / entry).with_name(included.group(1))
        asserts = "\n".join(f"static_assert(SEL.keys[{i}] == {k}ULL, \"key {k}\");" for i, k in enumerate(want))
        source = (f'#include "opgen_sim/tiling_key.h"\n#include "{header}"\n'
                  "constexpr opgen_sim::tpl::KeyList SEL = opgen_sim::tpl::SelectedKeys(opgen_sim_tpl_decl, "
                  "opgen_sim_tpl_sel);\n"
                  f"static_assert(SEL.count == {len(want)}, \"the number of selected keys\");\n{asserts}\n")
        checks.append((entry, source))

    def compile_one(item):
        entry, source = item
        proc = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", f"-I{INCLUDE}", "-x", "c++",
                               "-"], input=source, capture_output=True, text=True, timeout=300)
        return entry, proc

    with ThreadPoolExecutor(max_workers=2) as pool:
        failed = [f"{entry}:\n{proc.stderr[-3000:]}" for entry, proc in pool.map(compile_one, checks)
                  if proc.returncode != 0]
    assert len(checks) == 14 and not failed, "\n".join(failed)


@pytest.mark.slow
@pytest.mark.cpu_twin
def test_a_key_no_selection_lists_faults_on_the_twin(tmp_path):
    """DispatchV2's Atlas A3 entry built without the combination a quant-0 world's tiling sets (quant 0, scales 0,
    template 0): the device has no kernel binary for that key, and the twin faults instead of running another
    instance. The same world runs on the unchanged entry (the generated suites)."""
    from opgen import sim
    from opgen.harness import testkit

    try:
        sim.compiler()
    except sim.TwinUnavailable as err:
        pytest.skip(f"the CPU twin cannot be built here: {err}")
    op = "moe_distribute_dispatch_v2"
    shutil.copytree(GENERATED / op, tmp_path / op)
    shutil.copytree(GENERATED / SHARED_DIR, tmp_path / SHARED_DIR)
    header = tmp_path / op / "op_kernel" / "arch22" / f"{op}_a3_tiling_key.h"
    # the list that holds it (quant 0, 2; scales 0; template 0, 1) keeps template 1 alone
    text, n = re.subn(r"(    // quant 0, 2; scales 0; template 0, 1\n.*?TILINGKEY_TEMPLATE, ASCENDC_TPL_UI_LIST, )0, 1\)\)",
                      r"\g<1>1))", header.read_text(encoding="utf-8"), flags=re.S)
    assert n == 1
    header.write_text(text, encoding="utf-8")
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    ref, cases = importlib.import_module(f"{op}.reference"), importlib.import_module(f"{op}.tests.cases")
    case = next(c for c in cases.POSITIVE if c["id"] == "ascend910_93-q0-bs4-h1024-k2-w2")
    key = encode(key_params(load_ok(ROOT / "specs" / "dispatch_v2.spec")), (0, 0, 0))
    with pytest.raises(sim.TwinFault, match=rf"tiling key {key} names no combination of template arguments an "
                                            r"ASCENDC_TPL_SEL list of the op holds: CANN builds no kernel for it"):
        sim.run(sim.build_for(tmp_path / op, ref, case["product"]), ref, case, testkit.build_world(ref, case),
                tmp_path / "job")
