"""A stand-in ``torch_npu`` for rehearsing the NPU mode on the CPU (tests/test_npu_rehearsal.py). Test-only.

Every ``npu_moe_distribute_*`` function is made from torch_npu's real schema file (``OPGEN_TORCH_NPU_SCHEMA``),
read again at each call, and checks the call against it the way torch's argument parser does: every keyword
known, every required argument given, each value of its declared type (Tensor, Tensor?, int, str, float); then
the things only a running op would notice: each rank's own ep / tp rank id, a group name that names a process
group holding this rank, tensors whose carrier matches their dtype keyword (``opgen.harness.torch_dtypes``), a
Teardown only after its Setup on the same group.

It answers with the generated numpy reference (``OPGEN_STANDIN_GENERATED``: the directory holding
``<op>/reference.py``): every rank gathers every rank's call over the default (gloo) process group, runs the
whole world's reference (``run_world``) and returns its own rank's outputs -- the simplest honest stand-in for a
collective op, since no rank's answer depends on anything but the calls of the world.  The product is the
"device" the rehearsal pretends to be (``OPGEN_NPU_PRODUCT``); environment variables the op reads
(HCCL_BUFFSIZE) come from this process's environment, as HCCL reads them.
"""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from . import schema as _schema

_SETUPS: dict = {}  # (setup function, group name) -> the comm_cmd_info tensor it returned


def _env_path(name: str) -> Path:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"the stand-in torch_npu needs {name}")
    return Path(value)


def _schemas() -> dict:
    return _schema.parse(_env_path("OPGEN_TORCH_NPU_SCHEMA"))


def __getattr__(name: str):
    if not name.startswith("npu_moe_distribute_"):
        raise AttributeError(f"module 'torch_npu' (stand-in) has no attribute {name!r}")
    if name not in _schemas():
        raise AttributeError(f"module 'torch_npu' has no attribute {name!r} (not in its schema file)")

    def function(*args, **kwargs):
        return _call(name, args, kwargs)
    function.__name__ = name
    return function


def _check_type(fname: str, arg: _schema.Arg, value) -> None:
    import torch
    typ = arg.type
    optional = typ.endswith("?")
    base = typ.rstrip("?")
    if value is None and optional:
        return
    ok = {"Tensor": lambda v: isinstance(v, torch.Tensor),
          "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "str": lambda v: isinstance(v, str),
          "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "bool": lambda v: isinstance(v, bool)}.get(base)
    if ok is None:
        raise TypeError(f"{fname}(): the stand-in cannot check argument '{arg.name}' of type {typ}")
    if not ok(value):
        raise TypeError(f"{fname}(): argument '{arg.name}' must be {typ}, not {type(value).__name__}")


def check(fname: str, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by name, after torch's checks against the schema (TypeError as torch words them)."""
    sch = _schemas()[fname]
    positional = [a for a in sch.args if not a.keyword_only]
    if len(args) > len(positional):
        raise TypeError(f"{fname}() takes {len(positional)} positional arguments but {len(args)} were given")
    given = {a.name: v for a, v in zip(positional, args)}
    for k, v in kwargs.items():
        arg = sch.arg(k)
        if arg is None:
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
        if k in given:
            raise TypeError(f"{fname}() got multiple values for argument '{k}'")
        given[k] = v
    for a in sch.args:
        if a.name not in given:
            if a.required:
                raise TypeError(f"{fname}() missing required argument '{a.name}'")
            continue
        _check_type(fname, a, given[a.name])
    return given


def _op(fname: str):
    root = _env_path("OPGEN_STANDIN_GENERATED")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    snake = fname[len("npu_"):]
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


def _group_ranks(name: str) -> list[int] | None:
    import torch.distributed as dist
    c10d = dist.distributed_c10d
    for pg, pg_name in c10d._world.pg_names.items():
        if pg_name == name:
            return sorted(dist.get_process_group_ranks(pg))
    return None


def _call(fname: str, args: tuple, kwargs: dict):
    import torch
    import torch.distributed as dist
    from opgen.core.dtypes import DTYPES
    from opgen.harness import torch_dtypes
    from opgen.runtime.calls import rank_ids
    from opgen.runtime.scope import Typed, cann_dtype, data

    given = check(fname, args, kwargs)
    ref, cases = _op(fname)
    rank = dist.get_rank()
    to_param = {kw: name for name, kw in {**cases.NPU_INPUTS, **cases.NPU_ATTRS}.items()}
    # <name>_dtype names the dtype of the schema's tensor <name> (x_dtype, scales_dtype); one naming no argument
    # (y_dtype) names an output's, the one the op's table says
    sch = _schemas()[fname]
    dtype_of = {}
    for kw, value in given.items():
        if kw.endswith("_dtype") and value is not None and sch.arg(kw[:-len("_dtype")]) is not None:
            dtype_of[to_param[kw[:-len("_dtype")]]] = torch_dtypes.from_keyword(value)
        elif kw in cases.NPU_DTYPE_KEYWORDS and value is not None:
            dtype_of[cases.NPU_DTYPE_KEYWORDS[kw]] = torch_dtypes.from_keyword(value)
    # what the wrapper passes the aclnn for the parameters the schema lacks
    inputs = {k: v for k, v in cases.NPU_FIXED.items() if k in ref.INPUTS}
    attrs = {k: v for k, v in cases.NPU_FIXED.items() if k not in ref.INPUTS}
    for kw, value in given.items():
        name = to_param.get(kw)
        if name is None:
            continue  # a dtype keyword, read above
        if isinstance(value, torch.Tensor):
            dtype = dtype_of.get(name) or torch_dtypes.from_carrier(value.dtype)
            if dtype is None or torch_dtypes.torch_dtype(dtype) != value.dtype:
                raise TypeError(f"{fname}(): {kw} is a {value.dtype} tensor, which cannot hold "
                                f"{dtype or 'any dtype without a dtype keyword'}")
            array = torch_dtypes.from_torch(value, dtype)
            inputs[name] = Typed(array, dtype) if DTYPES[dtype].coded else array
        elif name in cases.NPU_INPUTS:
            inputs[name] = None
        else:
            attrs[name] = value
    out_dtypes = {n: d for n, d in dtype_of.items() if n in ref.OUTPUTS}
    for attr, tensor in cases.NPU_CARRIED.items():  # the aclnn sees the dtype keyword's ge dtype
        if tensor in dtype_of:
            attrs[attr] = DTYPES[dtype_of[tensor]].ge_value
    for name in ref.INFO.env:
        if name in os.environ:
            attrs[name] = int(os.environ[name])

    # a group name torch_npu can resolve, holding this rank, as large as the world size it is given
    for kw, size_kw in (("group_ep", "ep_world_size"), ("group_tp", "tp_world_size")):
        if kw in given and (kw == "group_ep" or given.get(size_kw, 0) > 1):  # a TP group of one rank is never used
            ranks = _group_ranks(given[kw])
            if ranks is None or rank not in ranks:
                raise RuntimeError(f"{fname}(): {kw}={given[kw]!r} names no process group holding rank {rank}")
            if len(ranks) != given.get(size_kw, len(ranks)):
                raise RuntimeError(f"{fname}(): {kw} has {len(ranks)} ranks, {size_kw}={given[size_kw]}")

    calls = [None] * dist.get_world_size()
    dist.all_gather_object(calls, (inputs, attrs, out_dtypes))
    # each rank passes its own ids and names its own EP / TP group; the other attributes are the world's
    ids = set(rank_ids(ref, {"attrs": attrs}, rank))
    own = ids | {to_param[kw] for kw in ("group_ep", "group_tp") if kw in given}
    world_attrs = {k: v for k, v in attrs.items() if k not in ids}
    for r, (_, other, _) in enumerate(calls):
        want = rank_ids(ref, {"attrs": attrs}, r)
        got = {k: other.get(k) for k in want}
        if got != want:
            wrong = ", ".join(f"{cases.NPU_ATTRS[k]}={got[k]}" for k in want if got[k] != want[k])
            raise ValueError(f"{fname}(): rank {r} passes {wrong}; rank {r} of this world is "
                             + ", ".join(f"{cases.NPU_ATTRS[k]}={v}" for k, v in want.items()))
        differ = sorted(k for k in set(other) | set(attrs) if k not in own and other.get(k) != attrs.get(k))
        if differ:
            raise ValueError(f"{fname}(): rank {r} passes other {', '.join(differ)} than rank {rank}")

    setup = fname.replace("_teardown", "_setup")
    if setup != fname:
        before = _SETUPS.get((setup, given["group_ep"]))
        cmd = given["comm_cmd_info"]
        if before is None or before.shape != cmd.shape or not torch.equal(before, cmd):
            raise RuntimeError(f"{fname}(): no {setup} on group {given['group_ep']!r} returned this comm_cmd_info"
                               ": a Teardown reads the HCCL windows its Setup filled")

    product = os.environ["OPGEN_NPU_PRODUCT"]
    results = ref.run_world([c[0] for c in calls], world_attrs, product, out_dtypes or None)
    # an output a dtype keyword names has that dtype (FP4-E1M2 and HiF8 codes are plain uint8 in the reference)
    outs = tuple(torch_dtypes.to_torch(data(results[rank][n]), out_dtypes.get(n) or cann_dtype(results[rank][n]))
                 for n in ref.OUTPUTS)
    if fname.endswith("_setup"):
        _SETUPS[(fname, given["group_ep"])] = outs[list(ref.OUTPUTS).index("commCmdInfoOut")]
    if len(outs) != sch.returns:
        raise RuntimeError(f"{fname}: the schema returns {sch.returns} tensors, the op has {len(outs)} outputs")
    return outs if sch.tuple_return else outs[0]
