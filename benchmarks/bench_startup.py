"""Start-up time of ``pipebounds bound -P 4 -m 8 -K 1 --json`` against ``python -c "import numpy"``.

Issue 20 target: the command takes at most 2.5 times as long as importing numpy (the command
needs numpy; sympy, matplotlib and ortools are imported only by the code that uses them). Both
commands run in fresh processes, alternating, ``--repeat`` times each, in the same run (so both
see the same machine load); prints the median wall-clock and child CPU (user + system) seconds
of each and their ratios. On a shared machine the CPU ratio is the steadier figure.

    python benchmarks/bench_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUND = ["-m", "pipebounds", "bound", "-P", "4", "-m", "8", "-K", "1", "--json"]
NUMPY = ["-c", "import numpy"]


def run_once(args: list[str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one fresh ``python ARGS`` process, run outside the
    tree with ``PYTHONPATH`` set to it (this tree when unset)."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or ROOT}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False,
                          env=env, cwd=os.path.dirname(ROOT))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(repeat: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) of each command over ``repeat`` alternating fresh processes (one
    warm-up run each first, not counted: it fills the file cache)."""
    runs: dict[str, list[tuple[float, float]]] = {"bound": [], "numpy": []}
    run_once(BOUND), run_once(NUMPY)
    for _ in range(repeat):
        runs["bound"].append(run_once(BOUND))
        runs["numpy"].append(run_once(NUMPY))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for k, v in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    med = measure(args.repeat)
    (bw, bc), (nw, nc) = med["bound"], med["numpy"]
    print(f"median of {args.repeat} fresh processes each")
    print(f"  pipebounds bound -P 4 -m 8 -K 1 --json   wall {bw:.3f} s   cpu {bc:.3f} s")
    print(f"  python -c 'import numpy'                 wall {nw:.3f} s   cpu {nc:.3f} s")
    print(f"  ratio bound/numpy                        wall {bw / nw:.2f}     cpu {bc / nc:.2f}"
          f"   (target <= 2.5)")


if __name__ == "__main__":
    main()
