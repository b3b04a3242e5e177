"""Wall time of `opgen build`, side by side with the import cost of its libraries.

Every figure is the median of N fresh processes (default 7; the machines are noisy):

  (a) python -c "import numpy, jinja2, lark"                      the floor a build cannot go under
  (b) python -m opgen build specs/dispatch_v2.spec -o <empty dir>  cold single-spec build
  (c) python -m opgen build specs/*.spec -o <empty dir>            cold build of every spec
  (d) the build of (b) again into a tree it already wrote          no-change rebuild (.opgen-cache.json)

The cold builds write into a fresh empty directory each run, so neither the no-change cache (it lives in
the output directory) nor any file from an earlier run is there.  The ratios b/a and c/b are printed.
Usage: python benchmarks/bench_build.py [N] [--root DIR]   (DIR: another checkout to measure, default this one)
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=cwd, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    args = sys.argv[1:]
    root = ROOT
    if "--root" in args:
        i = args.index("--root")
        root = Path(args[i + 1]).resolve()
        del args[i:i + 2]
    n = int(args[0]) if args else 7
    py = sys.executable
    spec = "specs/dispatch_v2.spec"
    specs = sorted(str(p.relative_to(root)) for p in (root / "specs").glob("*.spec"))
    a, b, c, d = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"
        subprocess.run([py, "-m", "opgen", "build", spec, "-o", str(warm)], check=True, cwd=root,
                       capture_output=True)
        for i in range(n):  # interleaved, so a burst of load elsewhere hits every figure alike
            a.append(timed([py, "-c", "import numpy, jinja2, lark"], root))
            b.append(timed([py, "-m", "opgen", "build", spec, "-o", str(Path(tmp) / f"one{i}")], root))
            c.append(timed([py, "-m", "opgen", "build", *specs, "-o", str(Path(tmp) / f"all{i}")], root))
            d.append(timed([py, "-m", "opgen", "build", spec, "-o", str(warm)], root))
    ma, mb, mc, md = (statistics.median(x) for x in (a, b, c, d))
    print(f"{root}  (median of {n} fresh processes)")
    print(f"(a) import numpy, jinja2, lark        {ma * 1e3:8.1f} ms")
    print(f"(b) cold build dispatch_v2.spec       {mb * 1e3:8.1f} ms   b/a = {mb / ma:.2f}")
    print(f"(c) cold build specs/*.spec ({len(specs)})      {mc * 1e3:8.1f} ms   c/b = {mc / mb:.2f}")
    print(f"(d) no-change rebuild dispatch_v2     {md * 1e3:8.1f} ms   d/a = {md / ma:.2f}")


if __name__ == "__main__":
    main()
