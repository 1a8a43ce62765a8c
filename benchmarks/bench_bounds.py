"""Speed of the lower-bound evaluation (issue 5 target: >= 1,000,000 instances/s vectorised).

Prints instances/second (wall clock, and per CPU-second, which is what to read on a shared,
loaded machine) of :mod:`bounds.vectorized` on a random grid of single-wave instances
(fused with K in {1, 2, 4, inf}, and split), and of the exact Fraction evaluation
:func:`bounds.lower_bound` for comparison.

    python benchmarks/bench_bounds.py [--n N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000, help="instances per vectorised call")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from bounds import lower_bound
    from bounds.vectorized import lower_bound_fused, lower_bound_split
    from schedules import Instance

    rng = np.random.default_rng(0)
    n = args.n
    P = rng.integers(1, 17, n).astype(float)
    m = rng.integers(1, 65, n).astype(float)
    K = rng.choice([1.0, 2.0, 4.0, np.inf], n)
    f = rng.integers(1, 5, n).astype(float)
    b = rng.integers(1, 9, n).astype(float)
    for name, fn, xs in (("fused", lower_bound_fused, (P, m, K, f, b)),
                         ("split", lower_bound_split, (P, m, K, f, b / 2, b / 2))):
        best = cpu = float("inf")
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            fn(*xs)
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
        print(f"vectorised {name:5s}: {n / best:,.0f} instances/s wall, {n / cpu:,.0f} per "
              f"CPU-second  ({n:,} in {best:.3f} s wall, {cpu:.3f} s CPU)")
    k = 2000
    t0 = time.perf_counter()
    for i in range(k):
        lower_bound(Instance(P=int(P[i]), m=int(m[i]), K=None if K[i] == np.inf else int(K[i]),
                             f=int(f[i]), b=int(b[i])))
    dt = time.perf_counter() - t0
    print(f"exact (Fraction) : {k / dt:,.0f} instances/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
