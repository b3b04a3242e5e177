"""One dtype table (opgen/core/dtypes.py): every per-dtype table derives from its rows, and the rows agree
with numpy / ml_dtypes, with CANN's enums and with the products whose kernels use the types."""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np

from opgen import cli
from opgen.core.dtypes import DTYPES
from opgen.core.products import PRODUCTS
from opgen.lower import ascendc
from opgen.runtime import codecs
from opgen.runtime import dtypes as rdt

from .conftest import SPECS


def test_every_row_has_every_fact_or_an_explicit_none():
    fields = [f.name for f in dataclasses.fields(next(iter(DTYPES.values())))]
    optional = {"qmax", "emax"}  # None is a fact: no numeric maximum / not an MX element type
    for name, row in DTYPES.items():
        assert row.name == name
        for f in fields:
            value = getattr(row, f)
            assert value is not None or f in optional, (name, f)
            assert value != "" and value != (), (name, f)
        assert row.kind in ("float", "int", "bool") and row.bits in (4, 8, 16, 32, 64)
        assert set(row.archs) <= {p.npu_arch for p in PRODUCTS.values()}, name
    assert len({r.ge_value for r in DTYPES.values()}) == len(DTYPES)
    assert len({r.ascendc for r in DTYPES.values()}) == len(DTYPES)


def test_the_derived_tables_are_the_rows():
    assert ascendc.CPP_TYPES == {n: r.ascendc for n, r in DTYPES.items()}
    for name, row in DTYPES.items():
        dt = rdt.np_dtype(name)
        assert dt.itemsize * 8 == max(row.bits, 8), name  # FP4 takes a byte per value
        assert row.coded == (row.kind == "float" and dt == np.uint8), name
        if row.kind == "int":
            assert row.qmax == float(np.iinfo(dt).max) and codecs._INT_RANGES[name][1] == np.iinfo(dt).max
        elif row.kind == "float" and not row.coded:
            assert row.qmax == float(ml_dtypes.finfo(dt).max), name
        if row.qmax is None:
            assert row.kind == "bool"
        else:
            assert rdt.qmax(name) == row.qmax
        if row.emax is not None:
            assert rdt.emax(name) == row.emax
            if not row.coded:  # the largest normal's exponent is the format's emax
                assert np.frexp(float(ml_dtypes.finfo(dt).max))[1] - 1 == row.emax, name
        # for these dtypes the two CANN enums coincide (module docstring of opgen.core.dtypes)
        assert row.acl_enum == "ACL_" + row.ge_enum[3:] and row.acl_value == row.ge_value, name
    assert codecs._FP4 == ("FLOAT4_E2M1", "FLOAT4_E1M2")


# Declared on a product whose arch has no such type: none. (The DispatchV2 spec once let A2 / A3 take
# FLOAT8_E8M0 smooth scales from the op-level list; the real A2/A3 tiling takes FLOAT only, and the spec narrows
# it.) The set stays here so that an off-arch dtype cannot be added unnoticed.
KNOWN_OFF_ARCH: set = set()


def test_every_products_dtypes_exist_on_its_arch():
    """A dtype a product view declares has an Ascend C type on that product's NPU arch (the product table)."""
    off = set()
    for spec in SPECS:
        ops, _ = cli.load_specs([str(spec)])
        op = ops[0][1]
        for p in op.products:
            view = op.views[p.soc]
            for t in view.inputs + view.outputs:
                off |= {(op.name, p.soc, t.name, d) for d in t.dtypes if view.facts.npu_arch not in DTYPES[d].archs}
    assert off == KNOWN_OFF_ARCH
