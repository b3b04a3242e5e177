"""Deterministic tensor data for generated test suites: counter-based, keyed by a stable name.

Every tensor of a test case is drawn from its own Philox stream whose key is the SHA-256 of
``"<case id>/<rank>/<tensor name>"``; only the raw 64-bit words of the stream are used (numpy keeps the
bit generators stable across versions and machines, not the distributions built on them), so a case has
the same bytes on every machine, in any test order, with no global seed.
"""
from __future__ import annotations

import hashlib

from opgen.runtime.lazy import ml_dtypes
import numpy as np

from opgen.runtime import codecs
from opgen.runtime.dtypes import np_dtype
from opgen.runtime.scope import Typed

_F64_UNIT = 2.0 ** -53


def words(key: str, n: int) -> np.ndarray:
    """``n`` raw uint64 words of the Philox stream keyed by ``key``."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    bitgen = np.random.Philox(key=int.from_bytes(digest[:16], "little"))
    return bitgen.random_raw(max(int(n), 0)).astype(np.uint64)


def unit(key: str, shape) -> np.ndarray:
    """Uniform float64 in [0, 1), 53 bits from each word."""
    shape = tuple(int(d) for d in shape)
    return ((words(key, int(np.prod(shape, dtype=np.int64))) >> np.uint64(11)).astype(np.float64)
            * _F64_UNIT).reshape(shape)


def uniform(key: str, shape, lo: float, hi: float) -> np.ndarray:
    return (lo + (hi - lo) * unit(key, shape)).astype(np.float32)


def integers(key: str, shape, lo: int, hi: int) -> np.ndarray:
    """Integers in [lo, hi) (a modulo of 64-bit words: the bias is below 2**-40 for the ranges used)."""
    shape = tuple(int(d) for d in shape)
    span = np.uint64(max(hi - lo, 1))
    return (words(key, int(np.prod(shape, dtype=np.int64))) % span).astype(np.int64).reshape(shape) + lo


def distinct_rows(key: str, rows: int, k: int, pool: int) -> np.ndarray:
    """(rows, k) int32: each row ``k`` distinct values of [0, pool) (a random permutation's prefix)."""
    if k > pool:
        raise ValueError(f"cannot draw {k} distinct values from {pool}")
    if pool > 4096:  # large pools: rejection-free draw of k distinct values by sorting random keys of k*4
        out = np.empty((rows, k), dtype=np.int64)
        for r in range(rows):
            seen: dict[int, None] = {}
            cand = integers(f"{key}/{r}", (8 * k + 8,), 0, pool)
            for v in cand.tolist():
                seen.setdefault(v, None)
                if len(seen) == k:
                    break
            out[r] = list(seen)[:k]
        return out.astype(np.int32)
    order = np.argsort(unit(key, (rows, pool)), axis=1, kind="stable")
    return order[:, :k].astype(np.int32)


def values(key: str, dtype: str, shape, lo: float = -4.0, hi: float = 4.0):
    """A tensor of ``dtype`` with finite values drawn from [lo, hi) (codes for HIFLOAT8 / FLOAT4_E1M2)."""
    shape = tuple(int(d) for d in shape)
    if dtype == "BOOL":
        return unit(key, shape) < 0.75
    if dtype in ("INT8", "INT32", "INT64", "UINT8"):
        return integers(key, shape, int(lo), int(hi)).astype(np_dtype(dtype))
    if dtype == "FLOAT8_E8M0":
        return integers(key, shape, 120, 135).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    v = uniform(key, shape, lo, hi)
    if dtype == "HIFLOAT8":
        return Typed(codecs.hif8_encode(v), "HIFLOAT8")
    if dtype == "FLOAT4_E1M2":
        return Typed(codecs.e1m2_encode(np.clip(v, -1.75, 1.75)), "FLOAT4_E1M2")
    if dtype == "FLOAT4_E2M1":
        return np.clip(v, -6.0, 6.0).astype(ml_dtypes.float4_e2m1fn)
    return v.astype(np_dtype(dtype))


def mask(key: str, shape, recipe: str) -> np.ndarray:
    """A BOOL tensor by recipe: ``all_true``, ``prefix`` (1-D: trues then falses), ``not_prefix`` (a false
    before a true: breaks both prefix and all-true requirements), ``random`` (3 in 4 true) or ``sparse`` (1 in 16
    true: a 2-D mask of the largest shape that sends few rows, for worlds that test buffer sizes)."""
    shape = tuple(int(d) for d in shape)
    if recipe == "all_true":
        return np.ones(shape, dtype=bool)
    if recipe == "prefix":
        n = shape[0] if shape else 1
        keep = n - n // 3
        m = np.zeros(shape, dtype=bool)
        m[:keep] = True
        return m
    if recipe == "not_prefix":
        m = np.ones(shape, dtype=bool)
        m.reshape(shape[0], -1)[0] = False
        return m
    if recipe == "random":
        return unit(key, shape) < 0.75
    if recipe == "sparse":
        return unit(key, shape) < 1.0 / 16.0
    raise ValueError(f"unknown mask recipe {recipe!r}")
