"""The op-independent half of every generated reference.

A generated ``reference.py`` is a set of tables lowered from the spec (checks,
lets, shapes, dtype rules, quant formulas) wrapped in an ``OpInfo``; this
module turns user inputs into validated ``Scope`` objects and hands them to
the driver of the op's ``semantics``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from opgen.core.builtins import ERROR_CLASSES, STAGES
from opgen.core.products import ProductFacts
from opgen.runtime.errors import OpError
from opgen.runtime.expert_ids import check_expert_ids
from opgen.runtime.roles import aliased, to_op_names
from opgen.runtime.scope import INVALID, NULLPTR, Check, EvalError, Meta, Scope, Typed, cann_dtype, i64, show
from opgen.runtime.dtypes import dtype_name, np_dtype

_ATTR_TYPES = {"int64": (int,), "float": (int, float), "bool": (bool,), "string": (str,)}


@dataclass(frozen=True)
class OpInfo:
    name: str
    semantics: str
    products: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, tuple[str, object]]   # name -> (type, default or None when required)
    env: Mapping[str, object]
    quant_by: str | None
    lets: Mapping[str, Mapping[str, Callable]]          # product -> let name -> fn(scope)
    dtype_rules: Mapping[str, Callable]                 # output -> fn(scope) -> dtype name
    shapes: Mapping[str, Mapping[str, Callable]]        # product -> output -> fn(scope) -> shape
    checks: Mapping[str, tuple[Check, ...]]             # product -> ordered checks
    quant: Mapping[int, Callable]                       # quant mode -> fn(RowBatch) -> {output: value}
    unspecified: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    facts: Mapping[str, ProductFacts] = field(default_factory=dict)  # product -> its product-table facts
    kernels: Mapping[str, str] = field(default_factory=dict)  # product -> its kernel entry file, in the op's dir
    sizes: Mapping[str, Mapping[str, Callable]] = field(default_factory=dict)  # product -> size function -> fn
    empty_absent: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # product -> inputs empty = absent
    ignored: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # product -> inputs never read
    ignored_attrs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # product -> attrs read as default
    # special experts in id order after the MoE experts: (name, count attribute, fn(RowBatch) -> {"Moe": value},
    # the tensors it reads); fn is None where the op only leaves those ids unsent (the dispatch side)
    specials: tuple[tuple[str, str, Callable | None, tuple[str, ...]], ...] = ()
    # the spec's `post` stage: fn(RowBatch of every token, reduced fp32 rows (BS, H)) -> {output: rows}; None: the
    # family casts the reduced rows to its reduced output
    post: Callable | None = None
    # product -> input the post stage reads -> fn(scope) -> its declared shape (the smallest where it may be larger)
    post_inputs: Mapping[str, Mapping[str, Callable]] = field(default_factory=dict)
    # role -> the op's name, for the family's parameters the op names differently (opgen.runtime.roles)
    roles: Mapping[str, str] = field(default_factory=dict)

    def fact(self, product: str) -> ProductFacts:
        """The facts of one of the op's products (an OpError for a product the op does not have)."""
        _check_product(self, product)
        return self.facts[product]

    @property
    def tensors(self) -> tuple[str, ...]:
        return self.inputs + self.outputs

    @functools.cached_property
    def attr_kinds(self) -> tuple:
        """Per attribute (name, type, default, is a list, element type, the Python types it takes), read once:
        a validation reads every attribute."""
        out = []
        for name, (typ, default) in self.attrs.items():
            is_list = typ.startswith("list<")
            base = typ[5:-1] if is_list else typ
            out.append((name, typ, default, is_list, base, _ATTR_TYPES[base]))
        return tuple(out)


def _check_product(info: OpInfo, product: str) -> None:
    if product not in info.products:
        raise OpError(INVALID, "product", f"{info.name} does not support product {product!r}; "
                                          f"supported: {', '.join(info.products)}")


def normalize_attrs(info: OpInfo, attrs: Mapping) -> dict:
    """Defaults filled in; unknown names, missing required attributes and wrong types are OpErrors."""
    out = {}
    for key in attrs:
        if key not in info.attrs and key not in info.env:
            raise OpError(INVALID, str(key), f"{info.name} has no attribute {key!r}")
    for name, typ, default, is_list, base, ok_types in info.attr_kinds:
        if name in attrs and attrs[name] is not None:
            v = attrs[name]
        elif default is None:
            raise OpError(INVALID, name, f"Parameter {name} of operator {info.name} is required but was not given.")
        else:
            v = default
        values = v if is_list else (v,)
        if is_list and not isinstance(v, (list, tuple)):
            values = (None,)
        for item in values:
            if isinstance(item, bool) and base != "bool" or not isinstance(item, ok_types):
                raise OpError(INVALID, name, f"Parameter {name} of operator {info.name} has incorrect value "
                                             f"{show(item) if not isinstance(item, np.generic) else item}. "
                                             f"It should be a {typ}.")
        if base == "float":  # an int given for a float attribute is that float (the spec types it float)
            v = tuple(float(x) for x in v) if is_list else float(v)
        out[name] = tuple(v) if is_list else v
    return out


def read_attrs(info: OpInfo, attrs: Mapping, product: str) -> dict:
    """The attributes as the op reads them on ``product``: an ignored one (any value passes) is its default."""
    out = dict(attrs)
    for name in info.ignored_attrs.get(product, ()):
        out[name] = info.attrs[name][1]
    return out


def normalize_inputs(info: OpInfo, inputs: Mapping) -> dict:
    out = {}
    for key in inputs:
        if key not in info.inputs:
            raise OpError(INVALID, str(key), f"{info.name} has no input {key!r}")
    for name in info.inputs:
        t = inputs.get(name)
        if t is not None and not isinstance(t, (Typed, Meta)):
            t = np.asarray(t)
            try:
                cann_dtype(t)
            except TypeError as err:
                raise OpError(INVALID, name, f"Parameter {name} of operator {info.name}: {err}") from None
        out[name] = t
    return out


def make_scope(info: OpInfo, inputs: Mapping, attrs: Mapping, product: str,
               out_dtypes: Mapping | None = None, out_shapes: Mapping | None = None,
               out_formats: Mapping | None = None) -> Scope:
    _check_product(info, product)
    a = read_attrs(info, normalize_attrs(info, attrs), product)
    env = {k: attrs.get(k, v) for k, v in info.env.items()}
    for k, default in info.env.items():  # an env variable keeps its declared (default's) kind: int -> float
        if isinstance(default, float) and isinstance(env[k], int) and not isinstance(env[k], bool):
            env[k] = float(env[k])
    chosen = {k: _out_dtype(info, k, v) for k, v in (out_dtypes or {}).items()}
    for k in list(chosen) + list(out_shapes or {}) + list(out_formats or {}):
        if k not in info.outputs:
            raise OpError(INVALID, str(k), f"{info.name} has no output {k!r}")
    return Scope(op=info.name, product=product, inputs=normalize_inputs(info, inputs), attrs=a, env=env,
                 out_dtypes=chosen, lets=info.lets[product], dtype_rules=info.dtype_rules,
                 tensor_names=info.tensors, output_names=info.outputs, out_shapes=out_shapes,
                 out_formats=out_formats,
                 empty_absent=info.empty_absent.get(product, ()), ignored=info.ignored.get(product, ()),
                 aliases=info.roles)


def _out_dtype(info: OpInfo, name, dtype):
    """A dtype the caller chose for an output: a CANN name as given (the dtype checks judge it), a numpy dtype or
    type as the CANN name it stands for."""
    if dtype is None or isinstance(dtype, str):
        return dtype
    try:
        return dtype_name(dtype)
    except ValueError as err:
        raise OpError(INVALID, str(name), f"out_dtypes[{name!r}] of {info.name}: {err}") from None


def validate_scope(info: OpInfo, s: Scope, stage: str = "all") -> None:
    """Run the checks of ``stage`` (``core.builtins.STAGES``: "all", or "op_api" as GetWorkspaceSize does)."""
    codes = _stage_codes(stage)
    for check in info.checks[s.product]:
        if check.code in codes:
            check.run(s, info.name)
    if INVALID in codes:
        check_expert_ids(info, s)


def _stage_codes(stage: str) -> frozenset[int]:
    if stage not in STAGES:
        raise ValueError(f"stage {stage!r}: one of {', '.join(STAGES)}")
    return frozenset(ERROR_CLASSES[c] for c in STAGES[stage])


def with_env(info: OpInfo, attrs: Mapping, env: Mapping | None) -> dict:
    """``attrs`` with the environment variables of ``env`` (unknown names and a name given twice are OpErrors)."""
    out = dict(attrs)
    for k, v in (env or {}).items():
        if k not in info.env:
            raise OpError(INVALID, str(k), f"{info.name} reads no environment variable {k!r}; it reads: "
                                           f"{', '.join(info.env) or 'none'}")
        if k in out and out[k] != v:
            raise OpError(INVALID, str(k), f"{k} is given twice, as {out[k]!r} in attrs and {v!r} in env")
        out[k] = v
    return out


def all_errors(info: OpInfo, inputs: Mapping, attrs: Mapping, product: str, out_dtypes: Mapping | None = None,
               stage: str = "all", out_shapes: Mapping | None = None,
               out_formats: Mapping | None = None) -> list[OpError]:
    """Every failing check of ``stage``, each evaluated on its own, in check order (an OpError the call itself
    raises, such as an unknown attribute, is the only entry)."""
    try:
        s = make_scope(info, inputs, attrs, product, out_dtypes, out_shapes, out_formats)
    except OpError as err:
        return [err]
    codes = _stage_codes(stage)
    out = []
    for check in info.checks[s.product]:
        if check.code in codes:
            try:
                check.run(s, info.name)
            except OpError as err:
                out.append(err)
    if INVALID in codes and not out:  # ids are read only once the call's shapes are accepted
        try:
            check_expert_ids(info, s)
        except OpError as err:
            out.append(err)
    return out


def validate(info: OpInfo, inputs: Mapping, attrs: Mapping, product: str,
             out_dtypes: Mapping | None = None, stage: str = "all", out_shapes: Mapping | None = None,
             out_formats: Mapping | None = None) -> Scope:
    s = make_scope(info, inputs, attrs, product, out_dtypes, out_shapes, out_formats)
    validate_scope(info, s, stage)
    return s


def calc_sizes(info: OpInfo, name: str, inputs: Mapping, attrs: Mapping, product: str) -> dict[str, int]:
    """The results of aclnn size function ``name`` ({result: value}), after the op_api stage's checks, as its
    generated C++ computes them (int64, each >= 0)."""
    fns = info.sizes.get(product, {})
    if name not in fns:
        raise OpError(INVALID, "name", f"{info.name} has no size function {name!r}; it has: {', '.join(fns)}")
    s = validate(info, inputs, attrs, product, None, "op_api")
    try:
        out = {k: i64(v) for k, v in fns[name](s).items()}
    except EvalError as err:
        raise OpError(INVALID, name, f"{name}: a size has no value: {err}") from None
    for k, v in out.items():
        if v < 0:
            raise OpError(INVALID, k, f"{name}: {k} = {v} is negative")
    return out


def _dim(d) -> int:
    """An output dim as int64: a float truncates toward 0; NaN, infinities and out-of-range values have none."""
    if isinstance(d, float) and not math.isfinite(d):
        raise EvalError(f"dim {d} is not finite")
    return i64(int(d))


def infer_shapes(info: OpInfo, s: Scope) -> dict[str, tuple[int, ...]]:
    try:
        return {name: tuple(_dim(d) for d in fn(s)) for name, fn in info.shapes[s.product].items()}
    except EvalError as err:
        raise OpError(INVALID, "shape", f"cannot infer output shapes of {info.name}: {err}") from None


def infer_dtypes(info: OpInfo, s: Scope) -> dict[str, str]:
    return {name: s.dtype(name) for name in info.outputs}


def world_scopes(info: OpInfo, inputs: Sequence[Mapping], attrs, product: str,
                 out_dtypes: Mapping | None, rank_attrs: Callable[[int, Mapping], Mapping]) -> list[Scope]:
    """One validated scope per rank; ``attrs`` is shared (rank ids filled in) or per rank."""
    inputs = _per_rank(info, "inputs", inputs)
    if isinstance(attrs, Mapping):
        # the family's rank rule reads and names attributes by role
        per_rank = [dict(attrs, **to_op_names(rank_attrs(i, aliased(attrs, info.roles)), info.roles))
                    for i in range(len(inputs))]
    else:
        per_rank = [dict(a) for a in _per_rank(info, "attrs", attrs)]
        if len(per_rank) != len(inputs):
            raise OpError(INVALID, "attrs", f"{len(per_rank)} attribute sets for {len(inputs)} ranks")
    scopes = [make_scope(info, inputs[i], per_rank[i], product, out_dtypes) for i in range(len(inputs))]
    for s in scopes:
        validate_scope(info, s)
    return scopes


def _per_rank(info: OpInfo, what: str, value) -> list:
    """A list of one mapping per rank (rank i at index i): anything else is an OpError naming what was given."""
    if isinstance(value, Mapping) or not isinstance(value, (list, tuple)):
        raise OpError(INVALID, what, f"{what} of {info.name} must be a list with one mapping per rank (rank i at "
                                     f"index i), got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise OpError(INVALID, what, f"{what}[{i}] of {info.name} must be a mapping (name -> value), got "
                                         f"{type(item).__name__}")
    return list(value)


def allocate(info: OpInfo, s: Scope) -> dict[str, np.ndarray]:
    """Zeroed outputs at their inferred (capacity) shapes: rows the op does not write stay 0."""
    shapes = infer_shapes(info, s)
    return aliased({name: np.zeros(shapes[name], dtype=np_dtype(s.dtype(name))) for name in info.outputs}, info.roles)


def null_check(name: str, value, op: str) -> None:
    if value is None:
        raise OpError(NULLPTR, name, f"Parameter {name} of operator {op} has incorrect value nullptr. "
                                     f"It should be a non-null tensor.")
