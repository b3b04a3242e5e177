"""Evaluation scope of one rank: what generated check and let code reads.

Generated references lower every spec expression to calls on a ``Scope``
(``s.attr("epWorldSize")``, ``s.dim("x", 1)``, ``s.let("A")``...), so the
code stays readable and the semantics of each builtin live in one place.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from opgen.core.dtypes import DTYPES
from opgen.runtime.errors import OpError
from opgen.runtime.roles import aliased
from opgen.runtime import dtypes

NULLPTR, INVALID, TILING = 161001, 161002, 561002


class EvalError(ArithmeticError):
    """An expression has no value (division by zero, int64 overflow): the check using it fails."""


@dataclass(frozen=True)
class Typed:
    """A tensor whose CANN dtype numpy cannot name (HIFLOAT8, FLOAT4_E1M2 codes in uint8)."""
    data: np.ndarray
    dtype: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)


@dataclass(frozen=True)
class Meta:
    """A tensor known only by shape, dtype and format, as tiling sees it: data checks pass (they cannot run)."""
    shape: tuple[int, ...]
    dtype: str  # a CANN name, or a numpy dtype / type naming one (np.int8, ml_dtypes.bfloat16)
    format: str = "ND"

    def __post_init__(self):
        if not isinstance(self.dtype, str):
            object.__setattr__(self, "dtype", dtypes.dtype_name(self.dtype))


def cann_dtype(t) -> str:
    if isinstance(t, (Typed, Meta)):
        return t.dtype
    dt = np.asarray(t).dtype
    name = dtypes.from_numpy(dt)
    if name is None:
        raise TypeError(f"no CANN dtype for numpy dtype {dt}")
    return name


def data(t) -> np.ndarray | None:
    """The ndarray behind an input (None for an absent optional input)."""
    if t is None:
        return None
    return t.data if isinstance(t, Typed) else np.asarray(t)


def _numel(t) -> int:
    """Elements of an input tensor, array or descriptor."""
    return math.prod(t.shape) if isinstance(t, (Typed, Meta)) else int(np.asarray(t).size)


def shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def show(v) -> str:
    """A value as CANN messages print it."""
    if v is None:
        return "nullptr"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, tuple):
        return shape_text(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


# ---- arithmetic with the spec's semantics (shared with the C++ check core) -------------------

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def i64(v):
    """Integers must stay in int64, as in the C++ check core; floats pass through."""
    if v.__class__ is int:  # the common case first (the search runs this about a million times per op)
        if INT64_MIN <= v <= INT64_MAX:
            return v
        raise EvalError("int64 overflow")
    if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
        raise EvalError("int64 overflow")
    return v


def _finite_quotient(a, b) -> float:
    """a / b of a float // or %; non-finite operands or quotients have no value."""
    q = a / b
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(q)):
        raise EvalError("floor division or modulo of a non-finite value")
    return q


def floordiv(a, b):
    if b == 0:
        raise EvalError("division by zero")
    if isinstance(a, float) or isinstance(b, float):
        return float(math.floor(_finite_quotient(a, b)))
    return i64(a // b)


def mod(a, b):
    if b == 0:
        raise EvalError("modulo by zero")
    if isinstance(a, float) or isinstance(b, float):
        q = _finite_quotient(a, b)
        return math.fmod(a, b) if (a >= 0) == (b > 0) else a - b * math.floor(q)
    return a % b


def power(a, b):
    """a ** b: int64 for ints (a negative exponent has no int value), IEEE pow for floats."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.pow(a, b)
        except (OverflowError, ValueError):  # finite operands, no finite result
            raise EvalError("power has no finite value") from None
    if b < 0:
        raise EvalError("negative integer exponent")
    if abs(a) >= 2 and b >= 64:
        raise EvalError("int64 overflow")
    return i64(a ** b)


def floor(x):
    """Round toward -inf, keeping the kind (a float stays a float; infinities and NaN pass through)."""
    if isinstance(x, float):
        return float(math.floor(x)) if math.isfinite(x) else x
    return x


def log2(x) -> float:
    """IEEE log2: -inf at 0, NaN below 0."""
    x = float(x)
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def exp2(x) -> float:
    """2 ** x as C's pow(2.0, x) (exact for integer x), +inf on overflow."""
    try:
        return math.pow(2.0, float(x))
    except OverflowError:
        return math.inf


def qmax(dtype: str) -> float:
    try:
        return dtypes.qmax(dtype)
    except ValueError as err:
        raise EvalError(str(err)) from None


def emax(dtype: str) -> int:
    try:
        return dtypes.emax(dtype)
    except ValueError as err:
        raise EvalError(str(err)) from None


_GE_DTYPES = {d.ge_value: name for name, d in DTYPES.items()}


def ge_dtype(value: int) -> str:
    """The dtype whose ge::DataType value is ``value``; no value (EvalError) for any other number."""
    try:
        return _GE_DTYPES[value]
    except (KeyError, TypeError):
        raise EvalError(f"{value!r} is the ge::DataType value of no dtype") from None


def div(a, b):
    """Real division with IEEE results (x/0 = inf, 0/0 = nan), as float arithmetic in C++."""
    a, b = float(a), float(b)
    if b == 0.0:
        return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def ceil_div(a, b):
    if b == 0:
        raise EvalError("division by zero")
    return i64(-(-a // b))


def align(a, b):
    return i64(ceil_div(a, b) * b)


def in_range(v, lo, hi, lo_closed: bool, hi_closed: bool) -> bool:
    return (v >= lo if lo_closed else v > lo) and (v <= hi if hi_closed else v < hi)


# ---- checks -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Check:
    id: str
    code: int
    param: str
    expected: str
    ok: Callable[["Scope"], bool]
    when: Callable[["Scope"], bool] | None = None
    value: Callable[["Scope"], object] | None = None
    # the concrete expectation (shape (4, 2) = (BS, K) with BS=4) stated instead of ``expected`` where it has a value
    detail: Callable[["Scope"], str] | None = None
    # the env variables the check reads (through lets too): where the call cannot read one (None, as tiling
    # cannot read HCCL_BUFFSIZE in online compilation or a super kernel), the check is skipped, as the real
    # tilings skip it (opgen.model.env_reads)
    envs: tuple[str, ...] = ()

    def skipped(self, s: "Scope") -> bool:
        return any(s.env_values.get(e) is None for e in self.envs)

    def fails(self, s: "Scope") -> bool:
        """Whether the check rejects the call in ``s`` (what :meth:`run` decides, without its message: the
        test-case search asks this about a million times per op, so :meth:`skipped` is inlined)."""
        if self.envs:
            values = s.env_values
            for e in self.envs:
                if values.get(e) is None:
                    return False
        try:
            if self.when is not None and not self.when(s):
                return False
            if self.ok(s):
                return False
        except EvalError:
            pass  # an expression without a value cannot satisfy the check
        return self.code != 0

    def run(self, s: "Scope", op_name: str) -> None:
        if self.skipped(s):
            return
        try:
            if self.when is not None and not self.when(s):
                return
            if self.ok(s):
                return
        except EvalError:
            pass  # an expression without a value cannot satisfy the check
        try:
            shown = show(self.value(s) if self.value is not None else s.value_of(self.param))
        except EvalError:
            shown = "(undefined)"
        if self.code == 0:
            return  # warn class: logged by the device code, never an error
        expected = self.expected
        if self.detail is not None:
            try:
                expected = self.detail(s)
            except EvalError:
                pass  # a value it states has none: the rule is what the call can be told
        raise OpError(self.code, self.param,
                      f"Parameter {self.param} of operator {op_name} has incorrect value {shown}. "
                      f"It should be {expected}. [{self.id}]")


class Scope:
    """One rank's inputs, attributes, chosen output dtypes and environment, plus lazy lets."""

    def __init__(self, *, op: str, product: str, inputs: Mapping, attrs: Mapping, env: Mapping,
                 out_dtypes: Mapping, lets: Mapping[str, Callable], dtype_rules: Mapping[str, Callable],
                 tensor_names: tuple[str, ...], output_names: tuple[str, ...], out_shapes: Mapping | None = None,
                 out_formats: Mapping | None = None, empty_absent: tuple[str, ...] = (), ignored: tuple[str, ...] = (), aliases: Mapping | None = None):
        self.op = op
        self.product = product
        # role -> the op's name (opgen.runtime.roles): the family's code asks by role, the spec's formulas by name
        self.aliases = dict(aliases or {})
        # What the caller passed, and what the op reads: an empty tensor of an input declared empty_absent is
        # absent from then on (present() false, not read by the drivers); only the null check sees it (passed()).
        # An ignored input is absent whatever was passed.
        self.passed_inputs = aliased(inputs, self.aliases)
        self.inputs = aliased({n: (None if n in ignored or (n in empty_absent and t is not None and _numel(t) == 0)
                                   else t) for n, t in inputs.items()}, self.aliases)
        self.attrs = aliased(attrs, self.aliases)
        self.env_values = env
        self.out_dtypes = aliased(out_dtypes, self.aliases)
        self.out_shapes = aliased(dict(out_shapes or {}), self.aliases)  # output -> shape, when the caller gives one
        self.out_formats = aliased(dict(out_formats or {}), self.aliases)  # output -> format name (ND when not given)
        self._lets = lets
        self._rules = aliased(dtype_rules, self.aliases)
        self._tensors = frozenset(tensor_names) | {r for r, n in self.aliases.items() if n in tensor_names}
        self._outputs = frozenset(output_names) | {r for r, n in self.aliases.items() if n in output_names}
        self._cache: dict[str, object] = {}
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._busy: set[str] = set()

    # names
    def attr(self, name: str):
        return self.attrs[name]

    def env(self, name: str):
        value = self.env_values[name]
        if value is None:  # the call cannot read it: what depends on it has no value (its checks are skipped)
            raise EvalError(f"{name} cannot be read")
        return value

    def let(self, name: str):
        if name not in self._cache:
            if name in self._busy:
                raise EvalError(f"let {name} depends on itself")
            self._busy.add(name)
            try:
                self._cache[name] = i64(self._lets[name](self))
            finally:
                self._busy.discard(name)
        return self._cache[name]

    # tensors
    def present(self, name: str) -> bool:
        return name in self._outputs or self.inputs.get(name) is not None

    def passed(self, name: str) -> bool:
        """The tensor pointer is not null (an empty tensor of an empty_absent input is passed, not present)."""
        return name in self._outputs or self.passed_inputs.get(name) is not None

    def tensor(self, name: str):
        t = self.inputs.get(name)
        if t is None:
            raise EvalError(f"{self.aliases.get(name, name)} is null")
        return t

    def shaped(self, name: str) -> bool:
        """The tensor's shape is known: a present input, an output whose shape the caller gave."""
        if name in self._outputs:
            return name in self.out_shapes
        return self.present(name)

    def shape(self, name: str) -> tuple[int, ...]:
        """Kept per scope once known: its tensors do not change (the checks read a shape about ten times)."""
        shape = self._shapes.get(name)
        if shape is None:
            shape = self._shapes[name] = self._shape(name)
        return shape

    def _shape(self, name: str) -> tuple[int, ...]:
        if name in self._outputs:
            if name not in self.out_shapes:
                raise EvalError(f"output {name} has no shape here; pass it in out_shapes")
            return tuple(map(int, self.out_shapes[name]))
        t = self.tensor(name)
        if isinstance(t, Meta):
            return tuple(map(int, t.shape))
        return tuple(map(int, data(t).shape))

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def dim(self, name: str, i: int) -> int:
        shape = self.shape(name)
        if not 0 <= i < len(shape):
            raise EvalError(f"{name} has no dim {i}")
        return shape[i]

    def numel(self, name: str) -> int:
        return i64(math.prod(self.shape(name)))

    def format(self, name: str) -> str:
        """A tensor's format name: an input's Meta's, else ND (a numpy array is a plain ND tensor); an output's
        as the caller gives it in out_formats, else ND (the buffers the reference allocates)."""
        if name in self._outputs:
            return self.out_formats.get(name, "ND")
        t = self.tensor(name)
        return t.format if isinstance(t, Meta) else "ND"

    def dtype(self, name: str) -> str:
        if name in self._outputs:
            chosen = self.out_dtypes.get(name)
            if chosen is not None:
                return chosen
            rule = self._rules.get(name)
            if rule is None:
                raise EvalError(f"output {name} has no dtype rule; pass it in out_dtypes")
            return rule(self)
        return cann_dtype(self.tensor(name))

    def len(self, name: str) -> int:
        return len(str(self.attr(name)).encode("utf-8"))

    # data checks (tiling cannot run these: they read tensor contents)
    def prefix_true(self, name: str) -> bool:
        if isinstance(self.tensor(name), Meta):
            return True
        m = data(self.tensor(name)).astype(bool).reshape(-1)
        n = int(m.sum())
        return bool(m[:n].all())

    def all_true(self, name: str) -> bool:
        if isinstance(self.tensor(name), Meta):
            return True
        return bool(data(self.tensor(name)).astype(bool).all())

    # what a failing check shows for its blamed parameter
    def value_of(self, name: str):
        if name in self.attrs:
            return self.attrs[name]
        if name in self.env_values:
            return self.env_values[name]
        if name in self._tensors:
            if name in self._outputs:
                return self.dtype(name)
            t = self.inputs.get(name)
            return None if t is None else self.shape(name)
        return self.let(name)
