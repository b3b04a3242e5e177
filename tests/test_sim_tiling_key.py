"""The twin decodes CANN's template tiling keys as the real host encodes them.

The real ops' kernel entries are templates over their ASCENDC_TPL_ARGS_DECL parameters; the twin compiles the
instance of one key (opgen/sim/kernel_entry.cpp, opgen_sim/tiling_key.h). Here the real asc-devkit
template_argument.h (host mode, FastEncodeTilingKeyDirect) encodes every combination of the real DispatchV2 and
CombineV2 declarations, and the twin's decoder must give the same values back; and a combination the real
ASCENDC_TPL_SEL lists leave out must be marked as having no kernel instance.
"""
from __future__ import annotations

import itertools
import shutil
import subprocess

import pytest

from opgen.sim.build import INCLUDE
from .real_cann import HEADERS, MISSING, OPS_TRANSFORMER, SHARED_CANN, cache_root, unpacked

pytestmark = [
    pytest.mark.skipif(not SHARED_CANN.is_dir(), reason=MISSING),
    pytest.mark.skipif(shutil.which("g++") is None, reason="compiles C++: needs g++"),
]

MC2 = "mc2"
# op -> (decl header, arch22 selection header, the template parameters' declared values in order)
# code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2_tiling_key_decl.h
# code: mc2/moe_distribute_combine_v2/op_kernel/moe_distribute_combine_v2_tiling_key_decl.h
OPS = {
    "dispatch": ("moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2_tiling_key_decl.h",
                 "moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_v2_tiling_key.h",
                 [(0, 1, 2, 3, 4, 5), (0, 1), (0, 1, 2), (0, 1, 2), (0, 1, 2)]),
    "combine": ("moe_distribute_combine_v2/op_kernel/moe_distribute_combine_v2_tiling_key_decl.h",
                "moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2_tiling_key.h",
                [(0, 2, 3, 4), (0, 1, 2, 3), (0, 1, 2)]),
}
# arch22 combinations with and without a kernel instance (the ASCENDC_TPL_SEL lists of the arch22 headers)
# code: mc2/moe_distribute_dispatch_v2/op_kernel/arch22/moe_distribute_dispatch_v2_tiling_key.h
# code: mc2/moe_distribute_combine_v2/op_kernel/arch22/moe_distribute_combine_v2_tiling_key.h
SELECTED = {
    "dispatch": {(0, 0, 0, 0, 1): 1, (2, 1, 1, 0, 1): 1, (1, 1, 0, 0, 1): 0, (0, 1, 0, 1, 0): 1,
                 (2, 0, 0, 1, 0): 0, (0, 0, 2, 0, 1): 1, (1, 0, 2, 0, 1): 0, (2, 0, 0, 0, 2): 0},
    "combine": {(0, 0, 1): 1, (2, 0, 1): 1, (2, 3, 1): 1, (2, 1, 0): 1, (2, 0, 0): 0, (3, 0, 1): 0},
}

REAL = r"""
#include <cstdio>
#include DECL
int main() { for (const auto& v : COMBOS) { std::printf("%llu\n", (unsigned long long)ENCODE); } }
"""
TWIN = r"""
#include <cstdio>
#include <cstdlib>
#include SEL
#include "opgen_sim/tiling_key.h"
int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        auto d = opgen_sim::tpl::Decode(Mc2Tiling::opgen_sim_tpl_decl, Mc2Tiling::opgen_sim_tpl_sel,
                                        std::strtoull(argv[i], nullptr, 10));
        std::printf("%d %d", d.ok, d.selected);
        for (size_t k = 0; k < d.count; ++k) std::printf(" %llu", (unsigned long long)d.args[k].value);
        std::printf("\n");
    }
}
"""


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    root = cache_root(tmp_path_factory.mktemp("cann"))
    return unpacked(HEADERS, root, "cann_subset"), unpacked(OPS_TRANSFORMER, root, "ops-transformer")


def run(src: str, tmp, name: str, flags: list[str], args=()) -> list[str]:
    (tmp / f"{name}.cpp").write_text(src)
    exe = tmp / f"{name}.exe"
    proc = subprocess.run(["g++", "-std=c++17", *flags, str(tmp / f"{name}.cpp"), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return subprocess.run([str(exe), *map(str, args)], check=True, capture_output=True, text=True).stdout.split("\n")


@pytest.mark.parametrize("op", sorted(OPS))
def test_twin_decodes_the_real_encoding(op, trees, tmp_path):
    headers, ops = trees
    decl, sel, values = OPS[op]
    combos = list(itertools.product(*values))
    # the real host header, installed where the op includes it from
    inc = tmp_path / "include" / "ascendc" / "host_api" / "tiling"
    inc.mkdir(parents=True)
    shutil.copy(headers / "mirror-cann+asc-devkit" / "include" / "utils" / "tiling" / "template_argument.h", inc)
    table = "{" + ",".join("{" + ",".join(map(str, c)) + "}" for c in combos) + "}"
    real = REAL.replace("COMBOS", f"std::vector<std::vector<uint64_t>>{table}").replace(
        "ENCODE", "AscendC::FastEncodeTilingKeyDirect(Mc2Tiling::g_tilingDeclareParams, "
                  + ", ".join(f"{{v[{i}]" if i == 0 else f"v[{i}]" for i in range(len(values))) + "})")
    keys = run(real, tmp_path, "real", [f"-I{tmp_path / 'include'}", f'-DDECL="{ops / MC2 / decl}"'])[:len(combos)]
    twin = run(TWIN, tmp_path, "twin", [f"-I{INCLUDE}", f'-DSEL="{ops / MC2 / sel}"'], keys)
    for combo, key, line in zip(combos, keys, twin):
        ok, selected, *decoded = map(int, line.split())
        assert ok == 1 and tuple(decoded) == combo, (combo, key, line)
        if combo in SELECTED[op]:
            assert selected == SELECTED[op][combo], (combo, key, line)
    assert set(SELECTED[op]) <= set(combos)


def test_a_key_past_the_declared_bits_decodes_to_nothing(trees, tmp_path):
    _, ops = trees
    decl, sel, _ = OPS["combine"]
    lines = run(TWIN, tmp_path, "twin", [f"-I{INCLUDE}", f'-DSEL="{ops / MC2 / sel}"'], [1 << 6, 3 << 4])
    # 6 bits declared (2 + 2 + 2); ARCH_TAG index 3 names no declared value
    assert lines[:2] == ["0 0", "0 0"]
