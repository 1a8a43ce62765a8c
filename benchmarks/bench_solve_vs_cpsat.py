"""``pipebounds solve`` (portfolio, the synthesized schedule as first incumbent) against CP-SAT
alone, wall and CPU time with start-up (one process per run), on fresh mid-K instances.

    python benchmarks/bench_solve_vs_cpsat.py [--time-limit S] [--synthesize S|auto]
        [--fresh N --seed S] [--only I,J] [--plain]

Each instance is run as ``pipebounds solve <flags> --engine cpsat --synthesize 0`` and as
``pipebounds solve <flags> --synthesize S`` (default ``auto``: 10 % of the limit, at most 5 s),
alternately, so that both see the same machine load. Printed: per instance the status, the
makespan, the wall seconds and the CPU seconds (user + system of the run's processes, from
``resource.getrusage(RUSAGE_CHILDREN)`` deltas: the machine is shared, so wall time depends on
the load and CPU time less so) of each, and the geometric means of the ratios portfolio /
CP-SAT, wall and CPU (a run that does not prove counts with its full time), over all instances
and over the *target set*: those CP-SAT alone proved in 1-20 s wall in this run (the issue's
target is 0.5 there, wall).

``--fresh N --seed S`` draws ``N`` instances (:func:`fresh`) instead of the fixed list: mid-K
(``2 <= K < P`` for one wave, so that memory binds), ``P`` 3 to 6, ``m`` ``P`` to ``2P+2``,
fused or split, small integer costs, one wave or two (looped) at ``P <= 4``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

INSTANCES = [
    ["-P", "6", "-m", "12", "-K", "3", "-f", "3", "-b", "5"],   # the slow case
    ["-P", "5", "-m", "10", "-K", "3"],
    ["-P", "4", "-m", "10", "-K", "2", "-f", "2", "-b", "3"],
    ["-P", "5", "-m", "8", "-K", "2", "--b-input", "1", "--b-weight", "1"],
    ["-P", "6", "-m", "10", "-K", "4", "--b-input", "2", "--b-weight", "1"],
    ["-P", "4", "-m", "12", "-K", "3", "-f", "2", "-b", "5"],
    ["-P", "5", "-m", "12", "-K", "4", "-f", "1", "-b", "3"],
    ["-P", "4", "-m", "8", "-K", "3", "--b-input", "3", "--b-weight", "2"],
    ["-P", "3", "-m", "6", "-K", "4", "-v", "2", "-f", "2", "-b", "3"],
    ["-P", "6", "-m", "9", "-K", "3", "--b-input", "1", "--b-weight", "2", "-f", "2"],
]
"""The fixed list (the first measurement of docs/synthesis.md)."""

TARGET = (1.0, 20.0)
"""The target set: instances CP-SAT alone proves in this many wall seconds."""


def fresh(n: int, seed: int) -> list[list[str]]:
    """``n`` seeded mid-K instances as command-line flags (module docstring)."""
    rng = random.Random(seed)
    out: list[list[str]] = []
    while len(out) < n:
        P = rng.randint(3, 6)
        v = 2 if P <= 4 and rng.random() < 0.25 else 1
        m = rng.randint(P, 2 * P + 2)
        K = rng.randint(2, max(2, P - 1)) if v == 1 else rng.randint(2, P)
        flags = ["-P", str(P), "-m", str(m), "-K", str(K), "-f", str(rng.randint(1, 3))]
        if v == 2:
            flags += ["-v", "2"]
        if rng.random() < 0.4:
            flags += ["--b-input", str(rng.randint(1, 3)), "--b-weight", str(rng.randint(1, 3))]
        else:
            flags += ["-b", str(rng.randint(1, 5))]
        if flags not in out:
            out.append(flags)
    return out


def run(flags, extra, limit, root=ROOT):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pipebounds", "solve", *flags, "--json",
                          "--quiet", "--time-limit", str(limit), *extra], cwd=root,
                         env=dict(os.environ, PYTHONPATH=root), capture_output=True,
                         text=True, timeout=limit * 3 + 60)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    r = json.loads(out.stdout)
    return r["status"], r["makespan_exact"], wall, cpu


def gmean(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--time-limit", type=float, default=20.0)
    p.add_argument("--synthesize", default="auto")
    p.add_argument("--plain", action="store_true",
                   help="also run the portfolio without synthesis (--synthesize 0)")
    p.add_argument("--fresh", type=int, default=0, metavar="N",
                   help="N seeded fresh instances instead of the fixed list")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compare", metavar="DIR", default=None,
                   help="also run the portfolio with synthesis from the source tree DIR (e.g. "
                        "an export of an earlier commit), same flags, alternated")
    p.add_argument("--only", type=str, default=None,
                   help="comma-separated indices of the list to run (default all)")
    args = p.parse_args(argv)
    pool = fresh(args.fresh, args.seed) if args.fresh else INSTANCES
    picked = pool if args.only is None else [pool[int(i)] for i in args.only.split(",")]
    target = []
    ratios, cpus, plain, plain_cpu, other, other_cpu = [], [], [], [], [], []
    load0 = os.getloadavg()
    for flags in picked:
        a = run(flags, ["--engine", "cpsat", "--synthesize", "0"], args.time_limit)
        b = run(flags, ["--synthesize", args.synthesize], args.time_limit)
        ratios.append(b[2] / a[2])
        cpus.append(b[3] / a[3])
        if a[0] == "optimal" and TARGET[0] <= a[2] <= TARGET[1]:
            target.append(len(ratios) - 1)
        line = (f"{' '.join(flags):<55} cpsat {a[0]:<8} {a[1]:>5} {a[2]:6.2f} s ({a[3]:6.2f} cpu)  "
                f"portfolio+synth {b[0]:<8} {b[1]:>5} {b[2]:6.2f} s ({b[3]:6.2f} cpu)  "
                f"ratio wall {ratios[-1]:.2f} cpu {cpus[-1]:.2f}")
        if args.plain:
            c = run(flags, ["--synthesize", "0"], args.time_limit)
            plain.append(c[2] / a[2])
            plain_cpu.append(c[3] / a[3])
            line += (f"   portfolio {c[0]:<8} {c[1]:>5} {c[2]:6.2f} s ({c[3]:6.2f} cpu)  "
                     f"ratio wall {plain[-1]:.2f} cpu {plain_cpu[-1]:.2f}")
        if args.compare:
            d = run(flags, ["--synthesize", args.synthesize], args.time_limit, args.compare)
            other.append(d[2] / a[2])
            other_cpu.append(d[3] / a[3])
            line += (f"   compared {d[0]:<8} {d[1]:>5} {d[2]:6.2f} s ({d[3]:6.2f} cpu)  "
                     f"ratio wall {other[-1]:.2f} cpu {other_cpu[-1]:.2f}")
        print(line, flush=True)
    print(f"# geometric mean portfolio+synthesis / cpsat: wall {gmean(ratios):.3f}, "
          f"cpu {gmean(cpus):.3f} over {len(ratios)} instances (limit {args.time_limit} s; "
          f"load average before {load0}, after {os.getloadavg()})")
    if target:
        print(f"# target set (CP-SAT alone optimal in {TARGET[0]:g}-{TARGET[1]:g} s wall): "
              f"wall {gmean([ratios[i] for i in target]):.3f}, "
              f"cpu {gmean([cpus[i] for i in target]):.3f} over {len(target)} instances")
    if other:
        print(f"# geometric mean of {args.compare} / cpsat: wall {gmean(other):.3f}, "
              f"cpu {gmean(other_cpu):.3f}")
        if target:
            print(f"# target set, {args.compare} / cpsat: "
                  f"wall {gmean([other[i] for i in target]):.3f}, "
                  f"cpu {gmean([other_cpu[i] for i in target]):.3f}")
    if plain:
        print(f"# geometric mean portfolio without synthesis / cpsat: wall {gmean(plain):.3f}, "
              f"cpu {gmean(plain_cpu):.3f}")


if __name__ == "__main__":
    main()
