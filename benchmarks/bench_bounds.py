"""Speed of the lower-bound evaluation over arrays (issue 5 target: >= 1,000,000 instances/s).

Prints instances/second (wall clock, and per CPU-second, which is what to read on a shared,
loaded machine) of :func:`bounds.batch.lower_bounds` (the array twin of
:func:`bounds.lower_bound`, exact int64 fractions) on a random grid of single-wave instances
(fused with K in {1, 2, 4, inf}, and split), and of the exact Fraction evaluation
:func:`bounds.lower_bound` for comparison. ``benchmarks/bench_bound_batch.py`` times the same
path through the command line.

    python benchmarks/bench_bounds.py [--n N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000, help="instances per array call")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from bounds import lower_bound
    from bounds.batch import Rows, lower_bounds
    from schedules import Instance

    rng = np.random.default_rng(0)
    n = args.n
    P = rng.integers(1, 17, n)
    m = rng.integers(1, 65, n)
    K = rng.choice([1, 2, 4, 0], n)          # 0: unconstrained
    f = rng.integers(1, 5, n)
    b = 2 * rng.integers(1, 5, n)
    zero, one = np.zeros(n, np.int64), np.ones(n, np.int64)
    for name, rows in (("fused", Rows(P, m, K, one, zero.astype(bool), f, b, zero, zero)),
                       ("split", Rows(P, m, K, one, zero.astype(bool), f, b, b // 2, b // 2))):
        best = cpu = float("inf")
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            lower_bounds(rows)
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
        print(f"batch {name:5s}: {n / best:,.0f} instances/s wall, {n / cpu:,.0f} per "
              f"CPU-second  ({n:,} in {best:.3f} s wall, {cpu:.3f} s CPU)")
    k = 2000
    t0 = time.perf_counter()
    for i in range(k):
        lower_bound(Instance(P=int(P[i]), m=int(m[i]), K=None if K[i] == 0 else int(K[i]),
                             f=int(f[i]), b=int(b[i])))
    dt = time.perf_counter() - t0
    print(f"exact (Fraction) : {k / dt:,.0f} instances/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
