"""A twin executable of a hand-written op: the twin's runner, the real kernel entry's instance of one tiling key
(``real_kernel.kernel_object``) and the real op_host tiling's objects (the real tiling helper,
``opgen.sim.real_tiling.tiling_objects``), linked and cached; the real op run on one world; and the combine's world
built on a dispatch's outputs.

    outputs = run(tree, ref, case, world, work)   # the real tiling picks the key, that instance runs in work/run
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
from opgen.sim import job as jobs
from opgen.sim import real_tiling
from opgen.sim.build import FLAGS, INCLUDE, SIM_DIR, TwinCompileError, cache_dir, compiler
from opgen.sim.real_kernel import kernel_object

# Vector cores per rank of a real op's world: the real A3 dispatch sizes sumCoreBuf_ as aivNum * 32 bytes and fills
# it with whole 8-block repeats of Duplicate, so it assumes aivNum a multiple of 8 (Atlas A3 has 48); with fewer it
# writes past the buffer, which the twin faults on.
# code: mc2/moe_distribute_dispatch_v2/op_kernel/moe_distribute_dispatch_v2.h (InitBuffer(sumCoreBuf_, aivNum_ *
#       UB_ALIGN); Duplicate<int32_t>(sumCoreTensor, sumOfRecvCnt, maskArray, (workCoreNum + 7) / 8, 1, 8))
REAL_AIV = 8


# The real HCCL's window per rank is ProductFacts.window_per_buffsize times HCCL_BUFFSIZE (twice on Ascend 950, as
# the real ops' tilings size totalWinSizeEp); their kernels trap when the context's winSize is smaller
# (check_winsize.h CheckWindowSize: a DataCopy of 1 int32, which the device rejects).
# code: mc2/moe_distribute_dispatch_v2/op_kernel/hccl_context_holder.h (Check)


def real_platform(ref, case: dict) -> dict:
    """``jobs.write_job``'s platform arguments of the real CANN for the op's world, for an op on HCCL's windows (not
    an MC2 context's, whose window is the context's ccl_buffer_size: ``jobs.write_job``): each rank's window bytes
    and its HCCL_BUFFSIZE bytes. (The UB the platform reports is the product table's ``platform_ub_bytes``, which
    every job carries.)"""
    facts = ref.INFO.fact(case["product"])
    platform = {}
    if not getattr(ref, "MC2_CONTEXT", {}):
        env = {**ref.ENV, **case.get("env", {})}
        buffsize = int(env.get("HCCL_BUFFSIZE", jobs.HCCL_BUFFSIZE_DEFAULT)) * jobs.MIB
        platform.update(window=facts.window_per_buffsize * buffsize, hccl_buffsize=buffsize)
    return platform


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


def run(tree, ref, case: dict, world, work: Path, *, aiv: int = REAL_AIV, timeout: float | None = None,
        windows_in: Path | None = None, windows_out: bool = False, kernel_root: Path | None = None,
        platform: dict | None = None) -> list[dict]:
    """Per rank {output: ndarray} of the real op of ``ref`` on one world: the real tiling (``tree``: the unpacked
    ``real_tiling.CannTree``) picks the tiling key in ``work/tiling``, the real entry's instance of that key runs in
    ``work/run`` (its ``result.txt`` keeps the cost lines; ``windows_in`` / ``windows_out`` as ``jobs.write_job``;
    ``kernel_root``: another ``ops-transformer/`` to take the kernel entry from, e.g. a mutated temp copy;
    ``platform``: overrides of ``real_platform``'s job arguments)."""
    arch = real_tiling.arch_of(ref, case["product"])
    platform = {**real_platform(ref, case), **(platform or {})}
    tiled = real_tiling.tile(real_tiling.build_tiling(tree, ref.OP, arch), ref, case, world, work / "tiling", aiv=aiv,
                             **platform)
    rejected = {r: t.message for r, t in sorted(tiled.tilings.items()) if not t.ok}
    if tiled.status != "ok" or rejected or tiled.faults:
        raise jobs.TwinTilingRejected(f"the real {ref.OP} tiling: status {tiled.status}, rejected {rejected}, "
                                      f"faults {tiled.faults} (job {work / 'tiling'})")
    keys = {t.key for t in tiled.tilings.values()}
    if len(keys) != 1:
        raise jobs.TwinError(f"the ranks' real {ref.OP} tilings set different keys {sorted(keys)}")
    job = jobs.write_job(ref, case, world, work / "run", aiv=aiv, timeout=timeout, windows_in=windows_in,
                         windows_out=windows_out, **platform)
    exe = executable(kernel_object(kernel_root or tree.ops, ref, case["product"], keys.pop(), column(ref, world, job)),
                     real_tiling.tiling_objects(tree, ref.OP, arch))
    return jobs.run_job(exe, job)
