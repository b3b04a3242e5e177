"""The NPU mode of generated suites: the op torch_npu ships, in a torchrun world, each rank checked against run_rank.

``launch`` (called by ``test_npu`` when ``OPGEN_BACKEND=npu``) starts, once per world size and product,

    torchrun --standalone --nproc-per-node=<world> -m opgen.harness.testnpu <op dir> --case <id> --case <id> ...

and reads each rank's verdict on each case.  Each process is one rank: it joins the world's process group on its
LOCAL device (LOCAL_RANK), builds the case's inputs exactly as the reference tests do (``opgen.harness.testworld``,
so every rank sees the same bytes), calls ``torch_npu.<cases.NPU_FUNCTION>`` exactly as torch_npu's schema says
(the keywords of ``cases.NPU_INPUTS`` / ``NPU_ATTRS``, its own ep / tp rank ids, dtypes as the schema's dtype
keywords take them: ``opgen.harness.torch_dtypes``; ``opgen.core.torch_npu``), and compares its outputs with
``run_rank`` of the generated reference (``testkit.output_problems``).  A Teardown case runs its Setup op (built
alongside) first, through torch_npu too.  One process group per world (ep / tp sub-groups made once), destroyed
at the end; HCCL_BUFFSIZE is set from the case before its groups are made.  After every case the ranks exchange
their verdicts over a gloo group with a timeout (``OPGEN_NPU_CASE_TIMEOUT`` seconds, default 300), so a rank that
fails or hangs is reported and no rank waits forever; the launcher kills a world that outlives all its cases'
timeouts.

``OPGEN_NPU_OP`` selects what runs: ``shipped`` (the only target so far: torch_npu's op).  ``OPGEN_NPU_DIST`` is
the collective backend: ``hccl`` (NPUs) or ``gloo`` (CPU tensors: the rehearsal with a stand-in torch_npu,
tests/test_npu_rehearsal.py).  Without torch_npu, NPUs or enough of them the tests skip and say why.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from opgen.core.families import FAMILIES
from opgen.core.products import PRODUCTS
from opgen.harness import testkit, torch_dtypes
from opgen.runtime.calls import rank_attrs, rank_ids
from opgen.runtime.scope import Typed, cann_dtype, data

NPU_OPS = ("shipped",)
DISTS = ("hccl", "gloo")
DEFAULT_CASE_TIMEOUT = 300  # seconds one case may take on every rank
_HOST_ENV = dict(os.environ)  # as the ranks started, before a case set its HCCL_BUFFSIZE


def npu_op() -> str:
    value = os.environ.get("OPGEN_NPU_OP", "shipped").strip() or "shipped"
    if value not in NPU_OPS:
        raise ValueError(f"OPGEN_NPU_OP={value!r}: expected one of {', '.join(NPU_OPS)} (the generated op is not "
                         "callable from this harness yet)")
    return value


def dist_backend() -> str:
    value = os.environ.get("OPGEN_NPU_DIST", "hccl").strip() or "hccl"
    if value not in DISTS:
        raise ValueError(f"OPGEN_NPU_DIST={value!r}: expected one of {', '.join(DISTS)}")
    return value


def case_timeout() -> int:
    return int(os.environ.get("OPGEN_NPU_CASE_TIMEOUT", DEFAULT_CASE_TIMEOUT))


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


def unavailable(world: int, product: str, function: str | None = None) -> str | None:
    """Why this machine cannot run a world of ``world`` ranks of ``product`` through torch_npu's ``function``
    (None: it can)."""
    npu_op()
    if function is None:
        return "torch_npu ships no function for this op (none in its schema file), so OPGEN_NPU_OP=shipped has " \
               "nothing to call"
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu is not installed"
    if shutil.which("torchrun") is None:
        return "torchrun is not on PATH"
    if dist_backend() == "hccl":
        import torch
        importlib.import_module("torch_npu")
        if not torch.npu.is_available():
            return "no Ascend NPU is visible (torch.npu.is_available() is false)"
        n = torch.npu.device_count()
        if n < world:
            return (f"the world needs {world} NPUs, this host has {n}: run it across hosts with torchrun --nnodes "
                    "(README, NPU mode)")
    here = device_product()
    if here != product:
        return f"the case is for {product}, the NPUs here are {here or 'unknown'} (set OPGEN_NPU_PRODUCT to override)"
    return None


def command(op_dirs, world: int, case_ids=(), torchrun: tuple = ("--standalone",)) -> list[str]:
    cmd = ["torchrun", *torchrun, f"--nproc-per-node={world}", "-m", "opgen.harness.testnpu", *map(str, op_dirs)]
    return cmd + [a for c in case_ids for a in ("--case", c)]


VERDICT = re.compile(r"^rank (\d+) ([^/\s]+/\S+): (ok|skip|FAIL)(?:: (.*))?$")
_VERDICTS: dict = {}


def verdicts(text: str) -> dict:
    """{"<op>/<case id>": {rank: (verdict, detail)}} of a world's output."""
    found: dict = {}
    for line in text.splitlines():
        m = VERDICT.match(line.strip())
        if m:
            found.setdefault(m.group(2), {})[int(m.group(1))] = (m.group(3), m.group(4) or "")
    return found


def run_world(op_dirs, world: int, case_ids: list[str], env: dict | None = None) -> tuple[dict, str]:
    """Every case of ``case_ids`` (of the ops in ``op_dirs``) in one torchrun world: (verdicts, its output)."""
    timeout = case_timeout() * (len(case_ids) + 1)
    # its own session, so a world that outlives its timeout goes with all its ranks
    proc = subprocess.Popen(command(op_dirs, world, case_ids), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return verdicts(out), f"torchrun outlived {timeout} s and was killed\n{out[-4000:]}\n{err[-4000:]}"
    return verdicts(out), f"torchrun exit {proc.returncode}\n{out[-4000:]}\n{err[-4000:]}"


def launch(op_dir: Path, case: dict, cases) -> str | None:
    """The case's verdict from its world (every runnable case of the same size and product, run once): None when
    every rank passed, the reason when the case cannot run through the shipped op; AssertionError otherwise."""
    key = (str(op_dir), case["world"], case["product"])
    if key not in _VERDICTS:
        ids = [c["id"] for c in cases.POSITIVE if c["run"] is None and c["world"] == case["world"]
               and c["product"] == case["product"]]
        _VERDICTS[key] = run_world([op_dir], case["world"], ids)
    found, output = _VERDICTS[key]
    return verdict(found.get(f"{Path(op_dir).name}/{case['id']}", {}), case["world"], output)


def verdict(ranks: dict, world: int, output: str) -> str | None:
    missing = [r for r in range(world) if r not in ranks]
    failed = [f"rank {r}: {d}" for r, (v, d) in sorted(ranks.items()) if v == "FAIL"]
    if failed or missing:
        raise AssertionError("\n".join(failed + [f"rank {r}: no verdict" for r in missing] + [output]))
    skips = {d for v, d in ranks.values() if v == "skip"}
    return "; ".join(sorted(skips)) or None


# ---- one rank (run by torchrun) -------------------------------------------------------------------------

def _load(op_dir: Path):
    sys.path.insert(0, str(op_dir.parent))
    snake = op_dir.name
    return importlib.import_module(f"{snake}.reference"), importlib.import_module(f"{snake}.tests.cases")


class World:
    """This rank's view of the torchrun world: its device, the process groups (made once, by every rank in the
    same order) and a gloo group with a timeout for the verdicts."""

    def __init__(self):
        import torch
        import torch.distributed as dist
        self.torch, self.dist = torch, dist
        self.rank, self.size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        self.local = int(os.environ["LOCAL_RANK"])
        self.backend = dist_backend()
        timeout = datetime.timedelta(seconds=case_timeout())
        if self.backend == "hccl":
            importlib.import_module("torch_npu")
            torch.npu.set_device(self.local)
            self.device = torch.device("npu", self.local)
        else:
            self.device = torch.device("cpu")
        dist.init_process_group(backend=self.backend, rank=self.rank, world_size=self.size, timeout=timeout)
        self.control = dist.new_group(backend="gloo", timeout=timeout)
        self.groups: dict = {}

    def group_name(self, ranks: tuple[int, ...], buffsize) -> str | None:
        """The name torch_npu takes for the group of ``ranks``, made (once, with HCCL_BUFFSIZE ``buffsize``) by every
        rank, as new_group requires; None on a rank outside it."""
        key = (ranks, buffsize)
        if key not in self.groups:
            self.groups[key] = self.dist.new_group(backend=self.backend, ranks=list(ranks))
        group = self.groups[key]
        if self.rank not in ranks:
            return None
        if self.backend == "hccl":
            return group._get_backend(self.torch.device("npu")).get_hccl_comm_name(self.rank)
        return group.group_name

    def verdicts(self, mine: tuple[str, str]) -> list:
        """Every rank's (verdict, detail) of the case, None for a rank that did not answer within the timeout."""
        found = [None] * self.size
        try:
            self.dist.all_gather_object(found, mine, group=self.control)
        except RuntimeError as err:  # a rank hung or died: report what this rank knows
            return [mine if r == self.rank else ("FAIL", f"no answer within {case_timeout()} s ({err})")
                    for r in range(self.size)]
        return found

    def close(self) -> None:
        self.dist.destroy_process_group()


def _groups(ref, cases, case: dict, world: World) -> dict:
    """{group attribute: its name} for this rank: the EP group (ranks with this rank's TP id), the TP group (ranks
    with its EP id) when the case has a TP domain of more than one rank."""
    ids = [rank_ids(ref, case, r) for r in range(case["world"])]
    buffsize = case.get("env", {}).get("HCCL_BUFFSIZE")
    tp_world = int(testkit.read_attrs(ref, case).get(testkit.named(ref, "tpWorldSize"), 0) or 0)
    out = {}
    for attr, same, wanted in (("groupEp", "tpRankId", True), ("groupTp", "epRankId", tp_world > 1)):
        if attr not in cases.NPU_ATTRS or not wanted:
            continue
        key = testkit.named(ref, same)
        parts = sorted({tuple(r for r in range(case["world"]) if ids[r].get(key) == ids[q].get(key))
                        for q in range(case["world"])})
        for part in parts:  # every rank makes every group, in the same order
            name = world.group_name(part, buffsize)
            if name is not None:
                out[attr] = name
    return out


def unreachable(cases, inputs: dict, attrs: dict) -> str | None:
    """Why the shipped op cannot make this call: a parameter its schema lacks set to another value than the one
    torch_npu's wrapper passes."""
    for name, fixed in cases.NPU_FIXED.items():
        value = inputs.get(name) if name in inputs else attrs.get(name)
        if (value is None) != (fixed is None) or (fixed is not None and value != fixed):
            shown = "a tensor" if name in inputs else repr(value)
            return (f"torch_npu.{cases.NPU_FUNCTION} has no keyword for {name} and always passes {fixed!r}; "
                    f"this case passes {shown}")
    return None


def call(ref, cases, case: dict, rank: int, inputs: dict, groups: dict, world: World) -> dict:
    """One call of torch_npu's function on this rank: its outputs as numpy storage arrays."""
    torch_npu = importlib.import_module("torch_npu")
    attrs = rank_attrs(ref, case, rank)
    attrs.update(groups)
    kwargs = {}
    for name, keyword in cases.NPU_INPUTS.items():
        value = inputs.get(name)
        if value is not None:
            kwargs[keyword] = torch_dtypes.to_torch(data(value), cann_dtype(value)).to(world.device)
    for name, keyword in cases.NPU_ATTRS.items():
        kwargs[keyword] = attrs[name]
    out_dtypes = testkit.inferred_dtypes(ref, case, inputs, rank)
    for keyword, tensor in cases.NPU_DTYPE_KEYWORDS.items():
        if tensor in out_dtypes:
            kwargs[keyword] = torch_dtypes.keyword(out_dtypes[tensor])
        elif inputs.get(tensor) is not None:
            kwargs[keyword] = torch_dtypes.keyword(cann_dtype(inputs[tensor]))
    outs = getattr(torch_npu, cases.NPU_FUNCTION)(**kwargs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    if len(outs) != len(cases.OUTPUTS):
        raise AssertionError(f"torch_npu.{cases.NPU_FUNCTION} returned {len(outs)} tensors, the op has "
                             f"{len(cases.OUTPUTS)} outputs")
    return {name: torch_dtypes.from_torch(t, out_dtypes[name]) for name, t in zip(cases.OUTPUTS, outs)}


def run_case(ref, cases, case: dict, world: World, prelude) -> tuple[str, str]:
    """(verdict, detail) of this rank on one case: ok, skip (why the shipped op cannot run it) or FAIL."""
    rank = world.rank
    if world.backend == "gloo":  # the rehearsal: no NPUs, the stand-in torch_npu plays each case's product
        os.environ["OPGEN_NPU_PRODUCT"] = case["product"]
    product = device_product()
    if case["product"] != product:
        return "skip", f"the case is for {case['product']}, the NPUs here are {product or 'unknown'}"
    for name in ref.INFO.env:  # HCCL reads them when it makes a communicator: the case's, else the host's own
        value = case.get("env", {}).get(name, _HOST_ENV.get(name))
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)
    built = testkit.build_world(ref, case)
    inputs = built.inputs
    why = unreachable(cases, inputs[rank], rank_attrs(ref, case, rank))
    if why:
        return "skip", why
    groups = _groups(ref, cases, case, world)
    problems = []
    if FAMILIES[cases.SEMANTICS].prelude is not None:  # a Teardown: its Setup first, on the same windows
        pref, pcases = prelude
        plan = testkit.prelude_plan(ref, case, built, pref)
        if isinstance(plan, str):
            return "skip", plan
        pcase, pworld, feeds, pexpected = plan
        if pcases.NPU_FUNCTION is None:
            return "skip", f"torch_npu ships no function for {pref.OP}, the Setup this Teardown needs first"
        pgot = call(pref, pcases, pcase, rank, pworld.inputs[rank], _groups(pref, pcases, pcase, world), world)
        problems += [f"prelude {pref.OP}: {p}" for p in
                     testkit.output_problems(pref, pcases, pcase, pworld, rank, pgot, pexpected[rank])]
        expected_inputs = testkit.fed_inputs(built, feeds, pexpected)
        inputs = [dict(inp) for inp in expected_inputs]
        for name, target in feeds.items():  # the device's own Setup outputs go into the Teardown call
            inputs[rank][target] = _as_input(pgot[name], pexpected[rank][name])
        built = dataclasses.replace(built, inputs=expected_inputs)
    expected = ref.run_rank(rank, built.inputs, testkit.world_attrs(case), case["product"],
                            case.get("out_dtypes") or None)
    got = call(ref, cases, case, rank, inputs[rank], groups, world)
    skip = tuple(testkit.named(ref, n) for n in FAMILIES[cases.SEMANTICS].seed_opaque)
    problems += testkit.output_problems(ref, cases, case, built, rank, got, expected, skip=skip)
    return ("FAIL", "; ".join(problems)) if problems else ("ok", "")


def _as_input(got, like):
    """A device output fed to the next call, typed as the reference's value it stands for (HiF8 codes stay Typed)."""
    return dataclasses.replace(like, data=got) if isinstance(like, Typed) else got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opgen.harness.testnpu",
                                 description="One rank of a generated suite's NPU mode (start it with torchrun).")
    ap.add_argument("op_dirs", type=Path, nargs="+", metavar="op_dir", help="generated/<op_snake>")
    ap.add_argument("--case", action="append", default=[], help="a positive case id (repeatable; each op runs the "
                    "ones it has; default: every runnable case of the world's size for the local product)")
    ap.add_argument("--world-size", type=int, help="the world's size, checked against torchrun's (the op docs' "
                    "commands name it)")
    args = ap.parse_args(argv)
    npu_op()
    if args.world_size is not None and args.world_size != int(os.environ["WORLD_SIZE"]):
        raise SystemExit(f"--world-size {args.world_size}, but torchrun started {os.environ['WORLD_SIZE']} ranks")
    ops = []
    for op_dir in (d.resolve() for d in args.op_dirs):
        ref, cases = _load(op_dir)
        prelude = None
        if FAMILIES[cases.SEMANTICS].prelude is not None:
            found = testkit.twin_prelude(op_dir, cases.SEMANTICS)
            prelude = (found[0], importlib.import_module(f"{found[0].__name__.split('.')[0]}.tests.cases"))
        ops.append((op_dir.name, ref, cases, prelude))
    unknown = set(args.case) - {c["id"] for _, _, cases, _ in ops for c in cases.POSITIVE}
    if unknown:
        raise SystemExit(f"no positive case {', '.join(sorted(unknown))} in {', '.join(o[0] for o in ops)}")
    world = World()
    product = device_product() if world.backend == "hccl" else os.environ.get("OPGEN_NPU_PRODUCT")
    failed = False
    for snake, ref, cases, prelude in ops:
        picked = [c for c in cases.POSITIVE if c["id"] in args.case] if args.case else \
            [c for c in cases.POSITIVE if c["run"] is None and c["world"] == world.size and c["product"] == product]
        for case in picked:
            failed |= _report(world, f"{snake}/{case['id']}", _verdict(ref, cases, case, world, prelude))
    world.close()
    return 1 if failed else 0


def _verdict(ref, cases, case: dict, world: World, prelude) -> tuple[str, str]:
    if case["world"] != world.size:
        return "skip", f"the case needs {case['world']} ranks, this world has {world.size}"
    try:
        return run_case(ref, cases, case, world, prelude)
    except Exception as err:  # noqa: BLE001 - reported per rank and case, the world goes on
        return "FAIL", f"{type(err).__name__}: {err}"


def _report(world: World, what: str, mine: tuple[str, str]) -> bool:
    """Every rank's verdict on one case, printed by rank 0 (the ranks' lines would interleave on torchrun's
    stdout); True when a rank failed."""
    failed = False
    for r, answer in enumerate(world.verdicts(mine)):
        verdict_, detail = answer if answer is not None else ("FAIL", "no answer")
        failed |= verdict_ == "FAIL"
        if world.rank == 0:
            line = f"rank {r} {what}: {verdict_}" + (f": {detail}" if detail else "")
            print(line.replace("\n", " | "), flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
