"""Wall time of `opgen build specs/dispatch_v2.spec`: a cold process, then a no-change rebuild.

Each figure is the best of N fresh processes (the machines are noisy); the import-only
time of the package is printed alongside so startup cost can be read as a ratio.
Usage: python benchmarks/bench_build.py [N]
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "dispatch_v2.spec"


def best(cmd: list[str], n: int, cwd: Path) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "gen"
        py = sys.executable
        interp = best([py, "-c", "pass"], n, ROOT)
        imp = best([py, "-c", "import opgen.cli"], n, ROOT)
        cold = []
        for i in range(n):
            fresh = Path(tmp) / f"cold{i}"
            t0 = time.perf_counter()
            subprocess.run([py, "-m", "opgen", "build", str(SPEC), "-o", str(fresh)], check=True, capture_output=True)
            cold.append(time.perf_counter() - t0)
        subprocess.run([py, "-m", "opgen", "build", str(SPEC), "-o", str(out)], check=True, capture_output=True)
        warm = best([py, "-m", "opgen", "build", str(SPEC), "-o", str(out)], n, ROOT)
    print(f"python startup            {interp * 1e3:7.1f} ms")
    print(f"import opgen.cli          {imp * 1e3:7.1f} ms")
    print(f"build, empty output dir   {min(cold) * 1e3:7.1f} ms  ({min(cold) / interp:.1f}x bare python)")
    print(f"rebuild, nothing changed  {warm * 1e3:7.1f} ms  ({warm / interp:.1f}x bare python)")


if __name__ == "__main__":
    main()
