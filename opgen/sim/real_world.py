"""A twin executable of a hand-written op: the twin's runner, the real kernel entry's instance of one tiling key
(``real_kernel.kernel_object``) and the real op_host tiling's objects (the real tiling helper,
``opgen.sim.real_tiling.tiling_objects``), linked and cached; and the combine's world built on a dispatch's outputs.

    tiling = real_tiling.tile(real_tiling.build_tiling(tree, op, "arch22"), ref, case, world, job_dir)   # the key
    exe = executable(kernel_object(tree.ops, ref, product, key, column), real_tiling.tiling_objects(tree, op, arch))
    outputs = jobs.run_job(exe, jobs.write_job(ref, case, world, job_dir, aiv=REAL_AIV))
"""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from opgen.runtime.scope import cann_dtype
from opgen.sim.build import FLAGS, INCLUDE, SIM_DIR, TwinCompileError, cache_dir, compiler

# Vector cores per rank of a real op's world: the real A3 dispatch sizes sumCoreBuf_ as aivNum * 32 bytes and fills
# it with whole 8-block repeats of Duplicate, so it assumes aivNum a multiple of 8 (Atlas A3 has 48); with fewer it
# writes past the buffer, which the twin faults on.
# code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h (InitBuffer(sumCoreBuf_, aivNum_ *
#       UB_ALIGN); Duplicate<int32_t>(sumCoreTensor, sumOfRecvCnt, maskArray, (workCoreNum + 7) / 8, 1, 8))
REAL_AIV = 8


def _cached_build(name: str, inputs: list[bytes], build) -> Path:
    """``build(tmp_path)`` once per content of ``inputs``; a rename puts the result in place."""
    h = hashlib.sha256()
    for part in inputs:
        h.update(hashlib.sha256(part).digest())
    out = cache_dir() / "real" / f"{name}-{h.hexdigest()[:32]}"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}-", dir=out.parent)
    os.close(fd)
    try:
        build(tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise TwinCompileError(f"{shlex.join(cmd)}\nfailed ({proc.returncode}):\n{proc.stderr[-12000:]}")


def runner_object() -> Path:
    """The twin's runner unit (``runner.cpp``), cached by the compiler, its command and the twin's sources."""
    cxx = compiler()
    cmd = [*cxx, *FLAGS, f"-I{INCLUDE}", "-c", str(SIM_DIR / "runner.cpp")]
    version = subprocess.run([*cxx, "--version"], capture_output=True, text=True).stdout.encode()
    sources = [SIM_DIR / "runner.cpp", *sorted(p for p in INCLUDE.rglob("*") if p.is_file())]
    return _cached_build("runner.o", [version, "\0".join(cmd).encode(), *(p.read_bytes() for p in sources)],
                         lambda out: _run([*cmd, "-o", out]))


def executable(kernel: Path, tiling: list[Path]) -> Path:
    """The runner, the real kernel object and the real tiling objects linked (the tiling's host runtime uses dl)."""
    cxx = compiler()
    objects = [runner_object(), kernel, *tiling]
    return _cached_build("twin", [" ".join(cxx).encode(), *(p.read_bytes() for p in objects)],
                         lambda out: _run([*cxx, "-pthread", *map(str, objects), "-ldl", "-o", out]))


def column(ref, world, job) -> dict:
    """The OpDef column of a world (IR name -> dtype): rank 0's present inputs and the outputs the job infers, as
    CANN builds one kernel per column."""
    present = {n: cann_dtype(v) for n, v in world.inputs[0].items() if v is not None and n in ref.INPUTS}
    outputs = {n: dtype for n, (_, dtype, _) in job.outputs[0].items()}
    return {ref.IR_NAMES[n]: d for n, d in {**present, **outputs}.items()}


@dataclass
class Inputs:
    """A world given by its per-rank inputs (``write_job`` reads ``inputs``): a combine's world built on a
    dispatch's outputs (``opgen.harness.testkit.combine_inputs``)."""
    inputs: list
