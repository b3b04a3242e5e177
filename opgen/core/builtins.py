"""Builtin functions and constants of the spec language.

One table describes every builtin: where it may be used (``scalar``
expressions such as checks and lets, ``quant`` formulas over one token row,
or both), its arity and keywords, and the kind of its result.  The analyzer
type-checks calls against it; the lowerings (numpy, C++) map each name to code.
"""
from __future__ import annotations

from dataclasses import dataclass

from opgen.core import families as _families
from opgen.core import products as _products

# Kinds an expression may have.
INT, FLOAT, BOOL, STR, DTYPE, TENSOR, ROUND, ANY = "int", "float", "bool", "str", "dtype", "tensor", "round", "any"
NUMERIC = (INT, FLOAT)
# A parameter kind (not an expression's): a number, or a row in quant formulas (not a bool, string or dtype).
VALUE = "value"


@dataclass(frozen=True)
class Builtin:
    name: str
    min_args: int
    max_args: int | None  # None: variadic
    result: str            # a kind, or "num" (int if every argument is int, else float)
    contexts: tuple[str, ...]
    kwargs: tuple[str, ...] = ()
    param_kinds: tuple[str, ...] = ()  # kinds of positional args; "param" = a declared tensor parameter
    doc: str = ""
    # In a quant formula (one token row): "scalar" one value per token whatever the arguments, "row" a row read
    # from a tensor parameter, "elementwise" the shape of its arguments, "reduce" row -> one value per token,
    # "block" row -> one value per block of n, "broadcast" per-block values -> row ("": not in formulas).
    row_shape: str = ""


_B = Builtin
BUILTINS: dict[str, Builtin] = {b.name: b for b in (
    _B("min", 2, None, "num", ("scalar", "quant"), doc="smallest argument", row_shape="elementwise"),
    _B("max", 2, None, "num", ("scalar", "quant"), doc="largest argument", row_shape="elementwise"),
    _B("abs", 1, 1, "num", ("scalar", "quant"), doc="absolute value (elementwise on tensors)", row_shape="elementwise"),
    _B("ceil_div", 2, 2, INT, ("scalar",), (), (INT, INT), "ceil(a / b) for positive integers"),
    _B("align", 2, 2, INT, ("scalar",), (), (INT, INT), "a rounded up to a multiple of b"),
    _B("present", 1, 1, BOOL, ("scalar", "quant"), (), ("param",), "an optional tensor was passed (not null; for an "
       "input declared empty_absent, not an empty tensor either)", row_shape="scalar"),
    _B("passed", 1, 1, BOOL, ("scalar",), (), ("param",), "the tensor pointer is not null, even for an empty tensor "
       "(the null checks of inputs declared empty_absent)"),
    _B("rank", 1, 1, INT, ("scalar",), (), ("param",), "number of dimensions of a tensor", row_shape="scalar"),
    _B("dim", 2, 2, INT, ("scalar",), (), ("param", INT), "size of dimension i of a tensor", row_shape="scalar"),
    _B("numel", 1, 1, INT, ("scalar",), (), ("param",), "number of elements of a tensor", row_shape="scalar"),
    _B("dtype", 1, 1, DTYPE, ("scalar", "quant"), (), ("param",), "dtype of a tensor", row_shape="scalar"),
    _B("ge_dtype", 1, 1, DTYPE, ("scalar",), (), (INT,), "the dtype whose ge::DataType value (graph/types.h) is the "
       "argument: an int attribute that carries a dtype, as y_dtype does (no value for other numbers)"),
    _B("shaped", 1, 1, BOOL, ("scalar",), (), ("param",), "the tensor's shape is known: an input that is present, "
       "an output always in tiling and aclnn (in the reference when the caller passes out_shapes)", row_shape="scalar"),
    _B("format", 1, 1, STR, ("scalar",), (), ("param",), "format of an input tensor (\"ND\", \"FRACTAL_NZ\", ...)"),
    _B("shape", 1, 1, "shape", ("scalar",), (), ("param",), "the shape of a tensor (shown in messages)"),
    _B("len", 1, 1, INT, ("scalar",), (), (STR,), "length of a string attribute in bytes"),
    _B("floor", 1, 1, "num", ("scalar", "quant"), doc="round toward -inf", row_shape="elementwise"),
    _B("log2", 1, 1, FLOAT, ("scalar", "quant"), doc="base-2 logarithm", row_shape="elementwise"),
    _B("exp2", 1, 1, FLOAT, ("scalar", "quant"), doc="2 to the power x, exact for integer x", row_shape="elementwise"),
    # Row-level quantization primitives (one token row of H elements).
    _B("cast", 2, 2, TENSOR, ("quant",), ("round", "sat"), (ANY, DTYPE),
       "cast(x, DTYPE, round=rint|round|trunc|floor|ceil|none, sat=true|false): the device Cast", row_shape="elementwise"),
    _B("reduce_max", 1, 1, FLOAT, ("quant",), (), (TENSOR,), "maximum over the row", row_shape="reduce"),
    _B("reduce_sum", 1, 1, FLOAT, ("quant",), (), (TENSOR,), "sum over the row (fp32, the device ReduceSum)",
       row_shape="reduce"),
    _B("sqrt", 1, 1, FLOAT, ("quant",), (), (VALUE,), "square root (fp32, elementwise on rows)",
       row_shape="elementwise"),
    _B("rsqrt", 1, 1, FLOAT, ("quant",), (), (VALUE,), "1 / sqrt(x) (fp32, elementwise on rows)",
       row_shape="elementwise"),
    _B("exp", 1, 1, FLOAT, ("quant",), (), (VALUE,), "e to the power x (fp32, the device Exp; elementwise on rows)",
       row_shape="elementwise"),
    _B("block_max", 2, 2, TENSOR, ("quant",), (), (TENSOR, INT),
       "maximum over consecutive blocks of n elements (tail zero-padded): one value per block", row_shape="block"),
    _B("per_block", 2, 2, TENSOR, ("quant",), (), (TENSOR, INT),
       "broadcast one value per block of n elements back to the row", row_shape="broadcast"),
    _B("exponent", 1, 1, TENSOR, ("quant",), (), ("param",),
       "biased 8-bit exponent field of each element as BFLOAT16 sees it (fp16 via a TRUNC cast)", row_shape="row"),
    _B("routed", 1, 1, TENSOR, ("quant",), (), ("param",),
       "the row of a per-expert tensor selected by the token's destination expert ((1,) and (H,) broadcast)", row_shape="row"),
    _B("row", 1, 1, TENSOR, ("quant",), (), ("param",), "the token's own row of a per-token tensor", row_shape="row"),
    _B("prefix_true", 1, 1, BOOL, ("scalar",), (), ("param",),
       "data check: every true of a 1-D BOOL tensor precedes every false"),
    _B("all_true", 1, 1, BOOL, ("scalar",), (), ("param",), "data check: every element of a BOOL tensor is true"),
    _B("qmax", 1, 1, FLOAT, ("scalar", "quant"), (), (DTYPE,), "largest finite value of a dtype", row_shape="scalar"),
    _B("emax", 1, 1, INT, ("scalar", "quant"), (), (DTYPE,), "exponent of the largest normal (OCP MX emax)", row_shape="scalar"),
    _B("e8m0", 1, 1, TENSOR, ("quant",), (), (TENSOR,), "FLOAT8_E8M0 scale codes from integer codes", row_shape="elementwise"),
    _B("pad_even", 1, 1, TENSOR, ("quant",), (), (TENSOR,), "append a zero element when the length is odd", row_shape="elementwise"),
)}

def call_result(b: Builtin, arg_kinds) -> str:
    """The kind of a call of ``b`` from its arguments' kinds: the one rule the front-end checker and the
    lowerings' typer (``opgen.model.kinds``) share. ``num`` builtins give int when every argument is int,
    a tensor (a row) when one argument is, not yet known (ANY) when one argument is (a window's let the front end
    leaves to the product view, as it leaves `a + b` of them), else float."""
    if b.result != "num":
        return b.result
    kinds = list(arg_kinds)
    if TENSOR in kinds:
        return TENSOR
    if ANY in kinds:
        return ANY
    return INT if kinds and all(k == INT for k in kinds) else FLOAT


ROUND_MODES = ("rint", "round", "trunc", "floor", "ceil", "none")

# Named constants usable in every expression.
CONSTANTS: dict[str, int | float] = {
    "KB": 1024,
    "MB": 1024 * 1024,
    "MAX_INT32": 2**31 - 1,
    "MAX_INT64": 2**63 - 1,
    "NAN": float("nan"),
    "INF": float("inf"),
}
# Builtins whose value depends on tensor contents: tiling (which sees only shapes) cannot run them.
DATA_BUILTINS = ("prefix_true", "all_true")

ATTR_TYPES = ("int64", "float", "bool", "string")
ERROR_CLASSES: dict[str, int] = {"nullptr": 161001, "invalid": 161002, "tiling": 561002, "warn": 0}
# Where a check runs (../shared/cann/docs/current/aclnn*.md, 返回值: the first stage rejects null tensors with
# 161001 and unsupported dtypes / parameters with 161002 before tiling; a tiling failure is always 561002). The
# op_api's GetWorkspaceSize runs the classes of its stage before it calls aclnnInner; tiling (the only stage in
# graph mode) runs every check.
STAGES: dict[str, tuple[str, ...]] = {"op_api": ("nullptr", "invalid"), "all": tuple(ERROR_CLASSES)}
# jitCompile.flag of an OpDef AI Core config (a product's `jit_compile`): the values the real MC2 op defs set
# (hicann/ops-transformer mc2/moe_distribute_*/op_host/*_def.cpp, e.g. DispatchV2 "static_false" on ascend910b and
# "static_true" on ascend910_93 / ascend950). The first is what a product that declares none takes.
JIT_COMPILE_FLAGS = ("static_true", "static_false")
# Known CANN SoC ids and their display names, newest first: the rows of the product table.
PRODUCTS: dict[str, str] = {soc: f.display for soc, f in _products.PRODUCTS.items()}

# Data-movement patterns a spec can name with `semantics`: the op families (the folders of opgen/families).
SEMANTICS = tuple(_families.FAMILIES)
