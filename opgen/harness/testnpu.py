"""The NPU mode of generated suites: the real op in a torchrun world, each rank checked against run_rank.

``launch`` (called by ``test_npu`` when ``OPGEN_BACKEND=npu``) starts, for one positive world,

    torchrun --standalone --nproc-per-node=<world> -m opgen.harness.testnpu <op dir> --case <case id>

Each process is one rank: it joins an HCCL process group, builds the case's inputs exactly as the
reference tests do (``opgen.harness.testworld``, so every rank sees the same bytes), calls the op through
torch_npu (``cases.NPU_FUNCTION`` with the keywords of ``cases.NPU_INPUTS`` / ``NPU_ATTRS``), and compares
its own outputs with ``run_rank`` of the generated reference: integer outputs and outputs the spec
declares exact bit for bit, the others within the spec's tolerance, unspecified outputs not at all, and
for capacity-shaped outputs only the rows the op writes.  ``--world-size W`` instead runs every runnable
case of W ranks for the product the NPUs are.  Without torch_npu, NPUs or enough of them, the tests skip
and say why.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from opgen.core.families import FAMILIES
from opgen.core.products import PRODUCTS
from opgen.harness import testkit
from opgen.runtime.scope import Typed



def device_product() -> str | None:
    """The spec's product id of the local NPUs (OPGEN_NPU_PRODUCT overrides), None when unknown: the product-table
    row whose CANN SoC name starts the device name.  A product a spec defines by ``extends`` runs on the NPUs of
    its base's SoC only when OPGEN_NPU_PRODUCT names it."""
    forced = os.environ.get("OPGEN_NPU_PRODUCT")
    if forced:
        return forced
    import torch
    importlib.import_module("torch_npu")  # registers torch.npu
    name = torch.npu.get_device_name(0)
    return next((f.soc for f in PRODUCTS.values() if name.startswith(f.soc_name)), None)


def unavailable(world: int, product: str) -> str | None:
    """Why this machine cannot run a world of ``world`` ranks of ``product`` (None: it can)."""
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu is not installed"
    if shutil.which("torchrun") is None:
        return "torchrun is not on PATH"
    import torch
    importlib.import_module("torch_npu")
    if not torch.npu.is_available():
        return "no Ascend NPU is visible (torch.npu.is_available() is false)"
    n = torch.npu.device_count()
    if n < world:
        return f"the world needs {world} NPUs, this host has {n} (run it across hosts with torchrun --nnodes)"
    here = device_product()
    if here != product:
        return f"the case is for {product}, the NPUs here are {here or 'unknown'} (set OPGEN_NPU_PRODUCT to override)"
    return None


def command(op_dir: Path, world: int, case_id: str | None = None) -> list[str]:
    cmd = ["torchrun", "--standalone", f"--nproc-per-node={world}", "-m", "opgen.harness.testnpu", str(op_dir)]
    return cmd + (["--case", case_id] if case_id else ["--world-size", str(world)])


def launch(op_dir: Path, case: dict) -> None:
    proc = subprocess.run(command(op_dir, case["world"], case["id"]), capture_output=True, text=True)
    assert proc.returncode == 0, f"torchrun failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"


# ---- one rank (run by torchrun) -------------------------------------------------------------------------

def _load(op_dir: Path):
    sys.path.insert(0, str(op_dir.parent))
    snake = op_dir.name
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")




def run_case(ref, cases, case: dict, rank: int, group_names: dict) -> list[str]:
    import torch
    import torch_npu

    world = testkit.build_world(ref, case)
    attrs, out_dtypes = testkit.call_args(ref, case, rank)
    attrs.update(group_names)
    expected = ref.run_rank(rank, world.inputs, testkit.world_attrs(case), case["product"], out_dtypes or None)
    kwargs = {}
    for name, value in world.inputs[rank].items():
        if value is None:
            continue
        array = value.data if isinstance(value, Typed) else np.asarray(value)
        kwargs[cases.NPU_INPUTS[name]] = torch.from_numpy(np.ascontiguousarray(array)).npu()
    for name, value in testkit.full_attrs(ref, dict(case, attrs=attrs)).items():
        kwargs[cases.NPU_ATTRS[name]] = value
    fn = getattr(torch_npu, cases.NPU_FUNCTION, None)
    if fn is None:
        return [f"torch_npu has no {cases.NPU_FUNCTION}"]
    outs = fn(**kwargs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    got = {name: t.cpu().numpy() for name, t in zip(cases.OUTPUTS, outs)}
    return testkit.output_problems(ref, cases, case, world, rank, got, expected,
                                   skip=tuple(ref.INFO.roles.get(n, n) for n in FAMILIES[cases.SEMANTICS].seed_opaque))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opgen.harness.testnpu",
                                 description="One rank of a generated suite's NPU mode (start it with torchrun).")
    ap.add_argument("op_dir", type=Path, help="generated/<op_snake>")
    ap.add_argument("--case", action="append", default=[], help="a positive case id (repeatable)")
    ap.add_argument("--world-size", type=int, help="every runnable case of this many ranks for the local product")
    args = ap.parse_args(argv)

    import torch
    import torch.distributed as dist
    importlib.import_module("torch_npu")

    ref, cases = _load(args.op_dir.resolve())
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.npu.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group(backend="hccl", rank=rank, world_size=world_size)
    product = device_product()
    picked = [c for c in cases.POSITIVE if c["run"] is None and c["world"] == world_size and
              (c["id"] in args.case or (not args.case and c["product"] == product))]
    problems = []
    for case in picked:
        groups = {}
        for attr in ("groupEp", "groupTp"):
            tp_world = ref.INFO.roles.get("tpWorldSize", "tpWorldSize")
            if attr in cases.NPU_ATTRS and (attr == "groupEp" or int(case["attrs"].get(tp_world, 0)) > 1):
                group = dist.new_group(backend="hccl", ranks=list(range(world_size)))
                groups[attr] = group._get_backend(torch.device("npu")).get_hccl_comm_name(rank)
        found = run_case(ref, cases, case, rank, groups)
        print(f"rank {rank} {case['id']}: {'ok' if not found else '; '.join(found)}", flush=True)
        problems += found
    dist.barrier()
    dist.destroy_process_group()
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
