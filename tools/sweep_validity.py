"""Fresh exact solves against every bound: no lower bound may exceed an optimum or incumbent.

Solves small multi-wave instances off the grid of pipebounds/data/optima.jsonl (``v`` in {2, 3}, both
placements, ``K`` in {1, 2, 3}, fused; and split ``K = 1``) with the exact engines run *without*
the theory (``use_theory=False``), and compares ``bounds.lower_bound`` with the result. Prints
one line per instance and a summary; exits non-zero if a bound is above a makespan the solver
found (a bug) or claims exactness it does not have.

Usage::

    python tools/sweep_validity.py [--time-limit 15] [--max-P 3] [--max-m 3] [--limit N]

Measured (2026-11-29, one core, ``--time-limit 15``, about 25 min): 408 instances, 407 proven
optimal, no bound above a makespan, every exact flag holds; LB = OPT on 231, mean OPT/LB 1.026,
worst 47/40 (see docs/theory_multiwave.md, MW9).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from fractions import Fraction


def instances(max_P: int, max_m: int):
    from schedules import Instance

    for v, pl, P, m, K, (f, b) in itertools.product(
            (2, 3), ("looped", "vshape"), range(2, max_P + 1), range(1, max_m + 1), (1, 2, 3),
            ((1, 1), (1, 2), (2, 1), (3, 1), (1, 3))):
        yield Instance(P=P, m=m, v=v, placement=pl, K=K, f=f, b=b)
    for pl, P, m, (f, bi, bw) in itertools.product(
            ("looped", "vshape"), range(2, max_P + 1), range(1, max_m + 1),
            ((1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2))):
        yield Instance(P=P, m=m, v=2, placement=pl, K=1, f=f, b_I=bi, b_W=bw)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-limit", type=float, default=15.0)
    ap.add_argument("--max-P", type=int, default=3)
    ap.add_argument("--max-m", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    from bounds import lower_bound
    from pipebounds.search import solve

    bugs, ratios, n = [], [], 0
    for inst in itertools.islice(instances(args.max_P, args.max_m), args.limit):
        lb = lower_bound(inst)
        t0 = time.monotonic()
        res = solve(inst, use_theory=False, time_limit=args.time_limit, engine="auto")
        n += 1
        if res.makespan is not None and lb.value > res.makespan:
            bugs.append(f"LB {lb.value} > makespan {res.makespan}: {inst.to_dict()}")
        if res.status == "optimal":
            ratios.append(res.makespan / lb.value)
            if lb.exact and lb.value != res.makespan:
                bugs.append(f"claimed exact, LB {lb.value} != OPT {res.makespan}: "
                            f"{inst.to_dict()}")
        print(f"{inst.to_dict()} LB {lb.value} {res.status} {res.makespan} "
              f"{time.monotonic() - t0:.1f}s", flush=True)
    mean = sum(ratios, Fraction(0)) / len(ratios) if ratios else None
    print(f"{n} instances, {len(ratios)} proven optimal, {len(bugs)} bugs"
          + (f"; mean OPT/LB {float(mean):.4f}, worst {max(ratios)}" if ratios else ""))
    for line in bugs:
        print("BUG", line)
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
