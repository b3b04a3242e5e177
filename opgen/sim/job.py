"""One positive world as a twin job: write the job directory, run the runner, read the outputs back.

The protocol (``job.txt``, ``result.txt``, exit status) is the one ``opgen/sim/README.md`` defines.  Tensor
files hold the storage bytes the device would hold: numpy's, except FP4, which the device packs two
values per byte (element 2i in the low nibble) where the numpy storage keeps one per byte.
"""
from __future__ import annotations

import math
import os
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from opgen.core.dtypes import DTYPES
from opgen.sim.build import Twin
from opgen.runtime.roles import aliased
from opgen.runtime.calls import call_args, rank_attrs
from opgen.runtime.dtypes import np_dtype
from opgen.runtime.scope import cann_dtype, data

FORMAT_ND = 2  # ge::FORMAT_ND
MIB = 1 << 20
HCCL_BUFFSIZE_DEFAULT = 200  # MiB, CANN's default when the variable is not set
DEFAULT_AIV = 4
DEFAULT_TIMEOUT = 60.0
# the runner reports a core that waits past the timeout itself; one that loops without waiting is caught only
# by killing the process, after this many timeouts of wall time
WALL_FACTOR = 4
WINDOWS_FILE = "windows.bin"  # the window pages a pipeline's job leaves for the next (windows_out)
# the windows file (runner.cpp SaveWindows / LoadWindows): per (kind, group, rank) window its non-zero pages, each
# as kind u32, group u32, rank u32, offset u64 (little-endian), then WINDOW_PAGE bytes
WINDOWS_IN, WINDOWS_EXP, WINDOWS_OUT = 0, 1, 2
WINDOW_PAGE = 4096
_PAGE_HEAD = struct.Struct("<IIIQ")


def read_windows(path: Path) -> dict:
    """{(kind, group, rank): {page offset: bytes}} of a windows file."""
    data, at, out = Path(path).read_bytes(), 0, {}
    while at < len(data):
        kind, group, rank, offset = _PAGE_HEAD.unpack_from(data, at)
        at += _PAGE_HEAD.size
        out.setdefault((kind, group, rank), {})[offset] = data[at:at + WINDOW_PAGE]
        at += WINDOW_PAGE
    return out


def window_bytes(pages: dict, kind: int, rank: int, offset: int, count: int, group: int = 0) -> bytes:
    """``count`` bytes at ``offset`` of a window in ``read_windows``'s pages (zero where no page was saved)."""
    out = bytearray(count)
    for at in range(offset - offset % WINDOW_PAGE, offset + count, WINDOW_PAGE):
        page = pages.get((kind, group, rank), {}).get(at)
        if page is not None:
            lo, hi = max(at, offset), min(at + WINDOW_PAGE, offset + count)
            out[lo - offset:hi - offset] = page[lo - at:hi - at]
    return bytes(out)


def write_windows(path: Path, writes: dict, group: int = 0) -> None:
    """A windows file (for a job's ``windows_in``) holding ``writes``: {(kind, rank): {offset: bytes}}."""
    pages: dict = {}
    for (kind, rank), spans in writes.items():
        for offset, blob in spans.items():
            at = offset
            while at < offset + len(blob):
                base = at - at % WINDOW_PAGE
                n = min(base + WINDOW_PAGE, offset + len(blob)) - at
                page = pages.setdefault((kind, group, rank, base), bytearray(WINDOW_PAGE))
                page[at - base:at - base + n] = blob[at - offset:at - offset + n]
                at += n
    with open(path, "wb") as out:
        for (kind, grp, rank, at), page in sorted(pages.items()):
            out.write(_PAGE_HEAD.pack(kind, grp, rank, at) + bytes(page))


class TwinError(RuntimeError):
    """The twin gave no outputs for a reason that is not the op's (a malformed job, a crashed runner)."""


class TwinFault(TwinError):
    """The kernel faulted on some rank or core (out-of-bounds access, a wait nobody ends, a crash)."""


class TwinHostLimit(TwinError):
    """The world is well formed but this host cannot map its memory (the runner's exit status 4): e.g. a window
    of cclBufferSize 2^63 - 1 bytes, which the tiling accepts and no host allocates. Not a verdict on the op."""


class TwinTilingRejected(TwinError):
    """The generated tiling function rejected a rank of a world the reference accepts."""


@dataclass
class Tiling:
    ok: bool
    key: int = 0
    block_dim: int = 0
    workspace: int = 0
    message: str = ""


# The columns of a `cost` line after rank and core (opgen_sim::CoreCosts, include/opgen_sim/world.h).
COST_FIELDS = ("scalar", "gm_read", "gm_write", "window_read", "own_window_write", "peer_window_write", "poll_read",
               "poll_scalar", "vec_calls", "vec_repeats", "vec_elements", "vec_bytes", "set_flag", "wait_flag",
               "pipe_barrier", "sync_all", "enque", "deque")


@dataclass
class Result:
    status: str = ""  # ok | fault | tiling ("" when result.txt has no status line)
    tilings: dict = field(default_factory=dict)  # rank -> Tiling
    faults: list = field(default_factory=list)
    costs: dict = field(default_factory=dict)  # (rank, core) -> {COST_FIELDS name: count}
    # (rank, core) -> {input name: bytes the core read of it from GM}: the `input_read` lines, inputs read at all
    input_reads: dict = field(default_factory=dict)


@dataclass
class Job:
    dir: Path
    outputs: list  # per rank: {output: (shape, CANN dtype, file name)}
    timeout: float


def timeout_default() -> float:
    return float(os.environ.get("OPGEN_SIM_TIMEOUT") or DEFAULT_TIMEOUT)


# ---- writing a job --------------------------------------------------------------------------------------

# '_' stands for an empty field (an empty string or list, a scalar's dims) so that fields stay positional
def _hex_text(text: str) -> str:
    return text.encode("utf-8").hex() or "_"


def _ints(values) -> str:
    return ",".join(str(int(v)) for v in values) or "_"


def attr_value(typ: str, value) -> str:
    """KIND VALUE of one attribute line."""
    if value is None:
        return "-"  # the node does not carry it
    if typ == "int64":
        return f"i {int(value)}"
    if typ == "bool":
        return f"b {int(bool(value))}"
    if typ == "float":
        return f"f {float(value).hex()}"  # C99 hex float: strtod reads back the exact double
    if typ == "string":
        return f"s {_hex_text(value)}"
    if typ == "list<int64>":
        return f"I {_ints(value)}"
    raise ValueError(f"the twin's job format has no attribute kind for {typ}")


def tensor_bytes(value, dtype: str) -> bytes:
    raw = np.ascontiguousarray(data(value)).reshape(-1).view(np.uint8)
    if DTYPES[dtype].bits == 4:
        codes = raw & 0x0F
        if codes.size % 2:
            codes = np.append(codes, np.uint8(0))
        return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8).tobytes()
    return raw.tobytes()


def groups(comm: tuple, rank: int, world: int, attrs: dict) -> list[tuple[int, int, list[int]]]:
    """(group index, member id, member global ranks) of world rank ``rank``, per domain of COMM.

    The reference's rank rule (``drivers.ep_rank_attrs``): world rank i is epRankId i // T, tpRankId i % T,
    T = max(tpWorldSize, 1); its EP group is the ranks of its TP slot, its TP group its TP neighbours."""
    T = max(int(attrs.get("tpWorldSize", 0) or 0), 1)
    W = int(attrs["epWorldSize"])
    if W * T != world:
        raise ValueError(f"a world of {world} ranks is not epWorldSize {W} x {T} TP ranks")
    e, t = divmod(rank, T)
    if (int(attrs["epRankId"]), int(attrs.get("tpRankId", 0) or 0)) != (e, t):
        raise ValueError(f"rank {rank} carries epRankId {attrs['epRankId']}, tpRankId {attrs.get('tpRankId')}")
    out = []
    for g, domain in enumerate(comm):
        if domain == "ep":
            out.append((g, e, [t + T * m for m in range(W)]))
        elif domain == "tp":
            out.append((g, t, [e * T + m for m in range(T)]))
        else:
            raise ValueError(f"no rank rule for the communication domain {domain!r}")
    return out


def header_lines(ref, product: str, world: int, env: dict, aiv: int, timeout: float,
                 window: int | None = None, platform_ub: int | None = None, groups: bool = True) -> list[str]:
    """The job's world and platform directives: the platform the product reports to the tiling (PlatformAscendC:
    Short_SoC_version, NpuArch, the UB bytes of a vector core and those it reports to the tiling, ``platform_ub``
    where the caller overrides the product's) from the product-table facts the generated reference carries, and its
    HCCL windows (``window``: bytes of each rank's window, by default what HCCL allocates for HCCL_BUFFSIZE of
    ``env``: ProductFacts.window_per_buffsize times it; ``groups``: the op has HCCL groups, not an MC2 context)."""
    facts = ref.INFO.fact(product)
    buffsize = int(env.get('HCCL_BUFFSIZE', HCCL_BUFFSIZE_DEFAULT)) * MIB
    if window is None:
        window = facts.window_per_buffsize * buffsize
    # where HCCL allocates a multiple of HCCL_BUFFSIZE as each window, a real tiling still reads HCCL_BUFFSIZE from
    # the env, and a group's CCL buffer size is HCCL_BUFFSIZE (code: mc2/common/utils/mc2_hcom_topo_info.cpp
    # CommGetGroupLocalWindowSize, GetMaxWindowSize): what mc2tiling::GetCclBufferSize tells a tiling of HCCL groups
    apart = [f"hccl_buffsize {buffsize}"] + ([f"ccl_buffer {buffsize}"] if groups else [])
    return [f"world {world}", f"soc {facts.soc_name}", f"npu_arch {facts.npu_arch}", f"node {ref.OP}",
            f"aiv {aiv}", f"aic {max(aiv // 2, 1)}",  # the 2:1 vector:cube ratio of these chips
            f"ub {facts.ub_bytes}",
            f"platform_ub {facts.platform_ub_bytes if platform_ub is None else int(platform_ub)}",
            f"window {window}",
            # every rank's windowsExp where the product's HCCL context lists one (Atlas A3), at its size
            f"exp_window {facts.exp_window or 0}",
            f"timeout {timeout:g}",
            # ranks per server where MTE stops at the server (Atlas A2), else 0: one server
            f"server {facts.ranks_per_server or 0}", *(apart if facts.window_per_buffsize != 1 else [])]


def attr_lines(ref, attrs: dict) -> list[str]:
    """One `attr` line per IR attribute of one rank (``attrs``: every attribute by name, None: not given)."""
    return [f"attr {i} {name} {attr_value(typ, attrs.get(name))}" for i, (name, (typ, _)) in enumerate(ref.ATTRS.items())]


def write_job(ref, case: dict, world, job_dir: Path, *, aiv: int = DEFAULT_AIV,
              timeout: float | None = None, windows_in: Path | None = None, windows_out: bool = False,
              window: int | None = None, hccl_buffsize: int | None = None, platform_ub: int | None = None) -> Job:
    """Write ``job.txt`` and the input files of one positive world (``world``: ``opgen.harness.testkit.build_world``).

    A pipeline (DispatchSetup, then DispatchTeardown on the same HCCL windows): the first job sets
    ``windows_out`` (the runner leaves ``windows.bin`` in its directory), the next passes that file as
    ``windows_in``. ``window``: each rank's window bytes where the caller knows them (a real op's HCCL
    allocation), else the spec's window size or HCCL_BUFFSIZE; ``hccl_buffsize``: the HCCL_BUFFSIZE bytes the
    tiling reads where they differ from the window; ``platform_ub``: the UB bytes the platform reports to the
    tiling where the caller overrides the product's (``platform_ub_bytes`` of its row)."""
    if "ranks" in case:
        raise ValueError(f"{case['id']} lists only some ranks: the twin runs whole worlds")
    timeout = timeout_default() if timeout is None else timeout
    job_dir.mkdir(parents=True, exist_ok=True)
    # an MC2 context domain's window is the ccl_buffer_size its context was built with: the spec's window size
    mc2_contexts = getattr(ref, "MC2_CONTEXT", {})
    if window is None and mc2_contexts:
        scope = ref.reference.make_scope(ref.INFO, world.inputs[0], rank_attrs(ref, case, 0), case["product"])
        window = int(scope.let("win_window"))
    lines = [f"# {ref.OP} {case['id']} (opgen.sim.job)",
             *header_lines(ref, case["product"], case["world"], {**ref.ENV, **case.get("env", {})}, aiv, timeout,
                           window, platform_ub, groups=not mc2_contexts)]
    if hccl_buffsize is not None:
        lines.append(f"hccl_buffsize {int(hccl_buffsize)}")
    if windows_in is not None:
        lines.append(f"windows_in {Path(windows_in).resolve()}")
    if windows_out:
        lines.append(f"windows_out {WINDOWS_FILE}")
    outputs = []
    for r in range(case["world"]):
        inputs = world.inputs[r]
        attrs = rank_attrs(ref, case, r)
        call_attrs, out_dtypes = call_args(ref, case, r)
        lines.append(f"rank {r}")
        # the rank rule names the family's attributes by role (opgen.runtime.roles)
        for g, member, ranks in groups(ref.COMM, r, case["world"], aliased(attrs, ref.INFO.roles)):
            lines.append(f"group {g} {member} {' '.join(map(str, ranks))}")
        for domain, name in mc2_contexts.items():  # the op_api's context of the domain, which the runner fills
            lines.append(f"mc2_context {list(ref.INPUTS).index(name)} {ref.COMM.index(domain)}")
        lines += attr_lines(ref, attrs)
        for i, name in enumerate(ref.INPUTS):
            value = inputs.get(name)
            if value is None:
                lines.append(f"input {i} {name} -")
                continue
            dtype, file = cann_dtype(value), f"r{r}.in{i}.bin"
            (job_dir / file).write_bytes(tensor_bytes(value, dtype))
            lines.append(f"input {i} {name} {DTYPES[dtype].ge_value} {FORMAT_ND} {_ints(data(value).shape)} {file}")
        inferred = ref.infer(inputs, call_attrs, case["product"], out_dtypes)
        mine = {}
        for i, name in enumerate(ref.OUTPUTS):
            shape, dtype = inferred[name]
            file = f"r{r}.out{i}.bin"
            mine[name] = (tuple(int(d) for d in shape), dtype, file)
            lines.append(f"output {i} {name} {DTYPES[dtype].ge_value} {FORMAT_ND} {_ints(shape)} {file}")
        outputs.append(mine)
        lines.append("end")
    (job_dir / "job.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Job(job_dir, outputs, timeout)


# ---- reading the result ---------------------------------------------------------------------------------

def _unhex(token: str) -> str:
    return "" if token in ("", "_") else bytes.fromhex(token).decode("utf-8", errors="replace")


def _counts(line: str, tok: list[str], n: int) -> list[int]:
    """The ``n`` unsigned integers after a line's directive, or a TwinError naming the line."""
    if len(tok) != 1 + n or not all(t.isdigit() for t in tok[1:]):
        raise TwinError(f"result.txt: a {tok[0]} line needs {n} unsigned integers after {tok[0]!r}: {line!r}")
    return [int(t) for t in tok[1:]]


def parse_result(text: str) -> Result:
    """result.txt as the runner writes it (opgen/sim/runner.cpp); a cost or input_read line of another shape than
    the runner's is a TwinError, never a line left out of the costs."""
    out = Result()
    for line in text.splitlines():
        tok = line.split()
        if not tok or tok[0].startswith("#"):
            continue
        if tok[0] == "tiling" and len(tok) >= 3:
            rank = int(tok[1])
            if tok[2] == "ok":
                out.tilings[rank] = Tiling(True, int(tok[3]), int(tok[4]), int(tok[5]))
            else:
                out.tilings[rank] = Tiling(False, message=_unhex(tok[3] if len(tok) > 3 else ""))
        elif tok[0] == "fault":
            out.faults.append(_unhex(tok[1] if len(tok) > 1 else ""))
        elif tok[0] == "cost":
            rank, core, *counts = _counts(line, tok, 2 + len(COST_FIELDS))
            if (rank, core) in out.costs:
                raise TwinError(f"result.txt: a second cost line of rank {rank} core {core}: {line!r}")
            out.costs[(rank, core)] = dict(zip(COST_FIELDS, counts))
        elif tok[0] == "input_read":
            if len(tok) != 5 or not tok[3].isidentifier():
                raise TwinError(f"result.txt: an input_read line is `input_read RANK CORE INPUT BYTES`: {line!r}")
            rank, core, nbytes = _counts(line, tok[:3] + tok[4:], 3)
            reads = out.input_reads.setdefault((rank, core), {})
            if tok[3] in reads:
                raise TwinError(f"result.txt: a second input_read line of {tok[3]} on rank {rank} core {core}: "
                                f"{line!r}")
            reads[tok[3]] = nbytes
        elif tok[0] == "status":
            out.status = tok[1]
    return out


def read_output(path: Path, shape: tuple, dtype: str) -> np.ndarray:
    """One output file as the numpy storage array of its inferred shape and dtype."""
    raw = np.frombuffer(path.read_bytes(), dtype=np.uint8)
    n = math.prod(shape)
    packed = DTYPES[dtype].bits == 4
    want = (n + 1) // 2 if packed else n * np_dtype(dtype).itemsize
    if raw.size != want:
        raise TwinError(f"{path}: {raw.size} bytes, a {dtype} tensor of shape {shape} has {want}")
    if packed:
        codes = np.empty(2 * raw.size, dtype=np.uint8)
        codes[0::2], codes[1::2] = raw & 0x0F, raw >> 4
        raw = codes[:n]
    return raw.view(np_dtype(dtype)).reshape(shape).copy()


def _where(exe: Path, job: Job) -> str:
    return f"(job {job.dir}; rerun: {exe} {job.dir})"


def run_job(exe: Path, job: Job) -> list[dict]:
    """Run the job; per rank {output: ndarray}, or TwinFault / TwinTilingRejected / TwinHostLimit / TwinError."""
    wall = WALL_FACTOR * job.timeout
    (job.dir / "result.txt").unlink(missing_ok=True)  # a rerun in the same directory must not read the old one
    try:
        proc = subprocess.run([str(exe), str(job.dir)], cwd=job.dir, capture_output=True, text=True,
                              errors="replace", timeout=wall)
    except subprocess.TimeoutExpired as err:
        tail = (err.stderr or b"")[-4000:]
        tail = tail.decode("utf-8", "replace") if isinstance(tail, bytes) else tail
        raise TwinFault(f"the twin ran past {wall:g} s and was killed {_where(exe, job)}\n{tail}") from None
    result_file = job.dir / "result.txt"
    result = parse_result(result_file.read_text(encoding="utf-8")) if result_file.is_file() else Result()
    stderr = proc.stderr[-4000:]
    rejected = {r: t.message for r, t in sorted(result.tilings.items()) if not t.ok}
    if proc.returncode == 2 or result.status == "tiling" or rejected:
        raise TwinTilingRejected("the generated tiling rejected " + "; ".join(
            f"rank {r}: {m}" for r, m in rejected.items()) + f" {_where(exe, job)}\n{stderr}")
    if proc.returncode == 1 or result.status == "fault" or result.faults:
        raise TwinFault(f"{len(result.faults)} fault(s) {_where(exe, job)}:\n" +
                        "\n".join(f"  {f}" for f in result.faults[:40]) + f"\n{stderr}")
    if proc.returncode == 3:
        raise TwinError(f"the runner calls the job malformed {_where(exe, job)}:\n{stderr}")
    if proc.returncode == 4:
        said = stderr.strip().splitlines()[-1] if stderr.strip() else "host limit"
        raise TwinHostLimit(f"{said} {_where(exe, job)}")
    if proc.returncode != 0 or result.status != "ok":
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"status {proc.returncode}"
        raise TwinFault(f"the runner ended with {how} and result status {result.status or 'none'} "
                        f"{_where(exe, job)}:\n{stderr}")
    return [{name: read_output(job.dir / file, shape, dtype) for name, (shape, dtype, file) in rank.items()}
            for rank in job.outputs]


def read_costs(job_dir: Path) -> dict:
    """What each core of the last run in ``job_dir`` did: (rank, core) -> {COST_FIELDS name: count}."""
    return parse_result((Path(job_dir) / "result.txt").read_text(encoding="utf-8")).costs


def read_input_reads(job_dir: Path) -> dict:
    """Bytes each core of the last run in ``job_dir`` read of each input: (rank, core) -> {input name: bytes}."""
    return parse_result((Path(job_dir) / "result.txt").read_text(encoding="utf-8")).input_reads


def run(exe, ref, case: dict, world, job_dir: Path, *, aiv: int = DEFAULT_AIV,
        timeout: float | None = None, windows_in: Path | None = None, windows_out: bool = False,
        **platform) -> list[dict]:
    """Per rank {output: ndarray} of one positive world on the twin ``exe``: an executable (``opgen.sim.build``),
    or the op's ``Twin`` (``opgen.sim.build_for``), whose executable for the world's OpDef column is built here
    (``platform``: ``write_job``'s window / hccl_buffsize / platform_ub, e.g. a real op's partner on its windows)."""
    job = write_job(ref, case, world, job_dir, aiv=aiv, timeout=timeout, windows_in=windows_in,
                    windows_out=windows_out, **platform)
    return run_job(executable(exe, ref, world, job), job)


def executable(exe, ref, world, job: Job) -> Path:
    """The executable that runs ``job``: ``exe`` itself, or the ``Twin``'s for the world's OpDef column (the dtypes
    of rank 0's present inputs and of the outputs the job infers), built first if need be."""
    if not isinstance(exe, Twin):
        return exe
    inputs = {n: cann_dtype(v) for n, v in world.inputs[0].items() if v is not None and n in ref.INPUTS}
    return exe.exe(exe.column(inputs, {n: dtype for n, (_, dtype, _) in job.outputs[0].items()}))
