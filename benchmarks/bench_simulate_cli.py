"""End-to-end speed of ``pipebounds simulate`` (issue 11 target: >= 1,000,000 ops/s on the
524,288-op 1F1B document, P = 64, m = 4096, parsing included, process start-up subtracted).

Writes the document to a temporary file, runs ``python -m pipebounds simulate FILE --json`` in a
fresh process N times, and subtracts the time of the same command on a 2-op document (start-up:
interpreter, imports, the lower bound). Prints wall-clock and CPU (user + system of the child)
figures, best of N; on a shared machine the CPU figure is the steadier one.

    python benchmarks/bench_simulate_cli.py [--repeat N] [--P 64] [--m 4096]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_simulate import one_f_one_b  # noqa: E402
from schedules import Instance, Schedule  # noqa: E402


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(path: str) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one ``simulate --json`` process.

    The child runs in the document's folder, so the code it runs is the one on ``PYTHONPATH``
    (this tree when unset), never a ``pipebounds`` that happens to be in the current directory.
    """
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or ROOT}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pipebounds", "simulate", path, "--json"],
                          capture_output=True, text=True, check=False, env=env,
                          cwd=os.path.dirname(path))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"simulate failed ({proc.returncode}): {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def best(path: str, repeat: int) -> tuple[float, float]:
    runs = [run_once(path) for _ in range(repeat)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--P", type=int, default=64)
    ap.add_argument("--m", type=int, default=4096)
    args = ap.parse_args()
    sched = Schedule(Instance(P=args.P, m=args.m, b="3/2"), one_f_one_b(args.P, args.m))
    doc = {"P": args.P, "m": args.m, "v": 1, "placement": "looped",
           "durations": {"F": 1, "B": "3/2"}, "orders": sched.to_strings()}
    tiny = {"P": 1, "m": 1, "durations": {"F": 1, "B": "3/2"}, "orders": {"0": ["0F0", "0B0"]}}
    with tempfile.TemporaryDirectory() as tmp:
        big_path, tiny_path = os.path.join(tmp, "big.json"), os.path.join(tmp, "tiny.json")
        with open(big_path, "w") as fh:
            json.dump(doc, fh)
        with open(tiny_path, "w") as fh:
            json.dump(tiny, fh)
        w0, c0 = best(tiny_path, args.repeat)
        w1, c1 = best(big_path, args.repeat)
    n = sched.num_ops
    print(f"1F1B P={args.P} m={args.m}: {n} ops, {len(json.dumps(doc)):,} "
          f"bytes of JSON")
    print(f"start-up (2-op document): wall {w0:.3f} s, cpu {c0:.3f} s")
    print(f"document:                 wall {w1:.3f} s, cpu {c1:.3f} s")
    print(f"end to end, start-up subtracted: {n / max(w1 - w0, 1e-9):,.0f} ops/s wall, "
          f"{n / max(c1 - c0, 1e-9):,.0f} ops/s cpu (target 1,000,000)")


if __name__ == "__main__":
    main()
