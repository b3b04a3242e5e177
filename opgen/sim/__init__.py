"""The CPU twin: opgen's generated Ascend C kernels and host tiling, compiled with g++ and run on the CPU.

    twin = build_for(op_dir, ref, "ascend910_93")           # the op's twins for that product's kernel arch
    outputs = run(twin, ref, case, world, job_dir)          # per rank {output: ndarray}; the executable of the
                                                            # world's OpDef column is built (cached) first
    exe = build(op_dir, "MoeDistributeDispatchV2", 2201, {"x": "BFLOAT16", "expand_x": "BFLOAT16", ...})

See README.md next to this file for the layout and the runner's job protocol.
"""
from opgen.sim.build import Twin, TwinCompileError, TwinUnavailable, build, build_for, compiler
from opgen.sim.job import TwinError, TwinFault, TwinTilingRejected, run

__all__ = ["build", "build_for", "compiler", "run", "Twin", "TwinCompileError", "TwinError", "TwinFault", "TwinTilingRejected", "TwinUnavailable"]
