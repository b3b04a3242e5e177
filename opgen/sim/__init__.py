"""The CPU twin: opgen's generated Ascend C kernels and host tiling, compiled with g++ and run on the CPU.

    exe = build(op_dir, "MoeDistributeDispatchV2")         # cached under $OPGEN_SIM_CACHE
    outputs = run(exe, ref, case, world, job_dir)           # per rank {output: ndarray}

See README.md next to this file for the layout and the runner's job protocol.
"""
from opgen.sim.build import TwinCompileError, TwinUnavailable, build, build_for, compiler
from opgen.sim.job import TwinError, TwinFault, TwinTilingRejected, run

__all__ = ["build", "build_for", "compiler", "run", "TwinCompileError", "TwinError", "TwinFault", "TwinTilingRejected", "TwinUnavailable"]
