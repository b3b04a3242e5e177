"""The OpDef's per-SoC dtype columns are the combinations tiling accepts, none more and none missing.

Expected columns are written here from the real A2/A3 tiling (mirror-cann/ops-transformer
mc2/moe_distribute_dispatch_v2/op_host/op_tiling/moe_distribute_dispatch_tiling_helper.cpp): x is FLOAT16 or
BFLOAT16, a quantising mode writes INT8, quantMode 0 copies x's dtype, the smooth scales are FLOAT.
"""
from __future__ import annotations

from opgen.emit.host import opdef_columns


def _columns(op, soc, names):
    cols = opdef_columns(op, soc)
    return sorted(zip(*(cols.dtype_rows[n] for n in names)))


def test_dispatch_a2_a3_columns_are_what_their_tiling_accepts(dispatch_v2):
    want = sorted([("FLOAT16", "FLOAT16"), ("BFLOAT16", "BFLOAT16"), ("FLOAT16", "INT8"), ("BFLOAT16", "INT8")])
    for soc in ("ascend910b", "ascend910_93"):
        assert _columns(dispatch_v2, soc, ("x", "expandXOut")) == want, soc
        assert set(opdef_columns(dispatch_v2, soc).dtype_rows["scalesOptional"]) == {"FLOAT32"}, soc


def test_dispatch_950_keeps_its_quant_map(dispatch_v2):
    pairs = set(_columns(dispatch_v2, "ascend950", ("x", "expandXOut")))
    # pre-quantised tokens pass through; FLOAT16/BFLOAT16 quantise to every 950 format (QUANT_MODE_MAP)
    assert ("FLOAT8_E4M3FN", "FLOAT8_E4M3FN") in pairs and ("BFLOAT16", "FLOAT4_E2M1") in pairs
    assert ("BFLOAT16", "HIFLOAT8") in pairs           # quantMode 0 with a HIFLOAT8 y (y_dtype) and quantMode 1
    assert ("FLOAT8_E4M3FN", "INT8") not in pairs      # only FLOAT16/BFLOAT16 quantise
    assert ("FLOAT16", "BFLOAT16") not in pairs        # quantMode 0 copies x, no mode writes BFLOAT16 else
