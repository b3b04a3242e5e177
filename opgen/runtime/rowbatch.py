"""The rows one sender contributes to one receiver, as generated quant formulas see them.

A quant formula is written for one token row; the lowering evaluates it for a
``RowBatch`` of n rows at once: row tensors are (n, H), per-row scalars
(n, 1), per-block values (n, ceil(H / block)).  Inputs are read from the
sender's scope, output dtypes from the receiver's.
"""
from __future__ import annotations

import numpy as np

from opgen.runtime import codecs
from opgen.runtime.dtypes import emax, np_dtype, qmax
from opgen.runtime.scope import Scope, cann_dtype, data


ALL_ROWS = slice(None)  # a batch of every row of the sender, in order (read without copying)


class NeedsRouting(Exception):
    """The formula reads a per-expert row, so a batch without destinations cannot evaluate it."""


class RowBatch:
    def __init__(self, src: Scope, dst: Scope, tokens, experts: np.ndarray | None, width: int,
                 count: int | None = None):
        self.src = src
        self.dst = dst
        self.tokens = tokens      # row index in the sender's per-row inputs, per row (or ALL_ROWS)
        self.count = len(tokens) if count is None else count  # rows in the batch
        self.experts = experts    # smooth-scale row (destination expert) per row; None: not routed yet
        self.width = width        # H: the length of one row
        self._raw: dict[int, str] = {}  # id(raw row array) -> its CANN dtype
        self._rows: dict[str, np.ndarray] = {}

    # ---- names --------------------------------------------------------------------------
    def rows(self, name: str) -> np.ndarray:
        """The token rows of a per-token input in its storage dtype (gathered once)."""
        if name not in self._rows:
            t = self.src.tensor(name)
            r = data(t) if self.tokens is ALL_ROWS else data(t)[self.tokens]
            if r.ndim > 2:  # a (BS, 1, H) input: one row of H per token
                r = r.reshape(r.shape[0], -1)
            self._rows[name] = r
            self._raw[id(r)] = cann_dtype(t)
        return self._rows[name]

    def attr(self, name: str):
        return self.src.value_of(name)

    def dim(self, tensor: str, axis: int) -> int:
        """A shape variable (H, BS ...), as the dim of the tensor that binds it."""
        return self.src.dim(tensor, axis)

    def present(self, name: str) -> bool:
        return self.dst.present(name) if name in self.dst._outputs else self.src.present(name)

    def dtype(self, name: str) -> str:
        return self.dst.dtype(name) if name in self.dst._outputs else self.src.dtype(name)

    def routed(self, name: str) -> np.ndarray:
        """Per-expert rows ((E, H) indexed by destination expert); (1,) and (H,) broadcast to every row."""
        t = self.src.tensor(name)
        a = codecs.to_f32(data(t), cann_dtype(t))
        if a.ndim == 1:
            return a.reshape(1, -1)
        if self.experts is None:
            raise NeedsRouting(name)
        return a[self.experts]

    def row(self, name: str) -> np.ndarray:
        return data(self.src.tensor(name))[self.tokens]

    # ---- row primitives -------------------------------------------------------------------
    def cast(self, v, dst: str, round: str = "rint", sat: bool = False) -> np.ndarray:
        src = self._raw.get(id(v))
        if src is not None and src == dst:
            return v
        f = codecs.to_f32(v, src) if src is not None else np.asarray(v, dtype=np.float32)
        if dst == "FLOAT32":
            return f
        return codecs.cast(f, dst, round=round, sat=sat)

    def exponent(self, name: str) -> np.ndarray:
        r = self.rows(name)
        return codecs.biased_exponent(r, cann_dtype(self.src.tensor(name))).astype(np.int32)

    @staticmethod
    def reduce_max(v: np.ndarray) -> np.ndarray:
        return np.max(v, axis=-1, keepdims=True)

    @staticmethod
    def reduce_sum(v: np.ndarray) -> np.ndarray:
        return codecs.repeat_tree_sum(np.asarray(v, dtype=np.float32))

    @staticmethod
    def sqrt(v) -> np.ndarray:
        return np.sqrt(np.asarray(v, dtype=np.float32))

    @staticmethod
    def rsqrt(v) -> np.ndarray:
        return np.float32(1) / np.sqrt(np.asarray(v, dtype=np.float32))

    @staticmethod
    def exp(v) -> np.ndarray:
        # fp32 e^x rounded once from float64, as near the exact value as the twin's Exp (std::exp on a float);
        # numpy's own fp32 exp is one ulp off at many arguments, -1.0 among them
        with np.errstate(over="ignore"):
            return np.exp(np.asarray(v, dtype=np.float32).astype(np.float64)).astype(np.float32)

    @staticmethod
    def block_max(v: np.ndarray, block: int) -> np.ndarray:
        return codecs.block_reduce(v, block, "max")

    def per_block(self, s: np.ndarray, block: int) -> np.ndarray:
        return codecs.block_broadcast(s, block, self.width)

    @staticmethod
    def qmax(dtype: str) -> np.float32:
        return np.float32(qmax(dtype))

    @staticmethod
    def emax(dtype: str) -> int:
        return emax(dtype)

    @staticmethod
    def exp2(v) -> np.ndarray:
        return np.ldexp(np.float32(1.0), np.asarray(v, dtype=np.int32))

    @staticmethod
    def floor(v) -> np.ndarray:
        return np.floor(v)

    @staticmethod
    def log2(v) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log2(np.asarray(v, dtype=np.float32))

    @staticmethod
    def e8m0(codes) -> np.ndarray:
        return codecs.e8m0_from_exponent(np.asarray(codes).astype(np.int64))

    @staticmethod
    def pad_even(v: np.ndarray) -> np.ndarray:
        if v.shape[-1] % 2 == 0:
            return v
        return np.concatenate([v, np.zeros(v.shape[:-1] + (1,), dtype=v.dtype)], axis=-1)

    def finish(self, name: str, value, row_shape: tuple[int, ...]) -> np.ndarray:
        """An assigned output value as (n, *row_shape) in the output's storage dtype."""
        want = np_dtype(self.dst.dtype(name))
        a = np.asarray(value)
        if a.dtype != want:
            if a.dtype.kind == "f" and want == np.float32:
                a = a.astype(np.float32)
            else:
                raise TypeError(f"quant formula gives {name} dtype {a.dtype}, the output is {want}")
        n = self.count
        return np.broadcast_to(a, (n,) + tuple(a.shape[1:])).reshape((n,) + tuple(row_shape))
