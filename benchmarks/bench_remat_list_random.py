"""Random parameter sets of the rematerializing list scheduler on one instance: the best
makespan it reaches (docs/synthesis.md, *Stop 42*).

    python benchmarks/bench_remat_list_random.py -P 2 -m 8 -K 2 --seconds 60

Draws the window's extra, ``eager``, the lookahead, ``A`` or the looped group, the eager pairs
and ``keep_first`` at random (seeded), builds
:func:`schedules.generators.remat_list.remat_list_schedule` (``v = 2`` looped, ``f = b = 1``
unless given), times it with :func:`schedules.simulate`, and prints each improvement and the
count of schedules made. A measurement of the scheduler's reach, not part of the synthesis.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from schedules import Instance, simulate  # noqa: E402
from schedules.generators.common import GeneratorError  # noqa: E402
from schedules.generators.remat_list import (natural_pairs, natural_window,  # noqa: E402
                                             remat_list_schedule)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-P", type=int, default=2)
    ap.add_argument("-m", type=int, default=8)
    ap.add_argument("-K", type=int, default=2)
    ap.add_argument("-v", type=int, default=2)
    ap.add_argument("--placement", default="looped")
    ap.add_argument("-f", default="1")
    ap.add_argument("-b", default="1")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    P, K = a.P, a.K
    inst = Instance(P=P, m=a.m, v=a.v, placement=a.placement, K=K, f=a.f, b=a.b)
    rng = random.Random(a.seed)
    nat = [natural_window(inst, p) for p in range(P)]
    pairs = [natural_pairs(inst, p) for p in range(P)]
    best, made, t0 = None, 0, time.monotonic()
    while time.monotonic() - t0 < a.seconds:
        ex = rng.choice([0, 1, 2, 4, 8, P, 2 * P])
        eg = rng.choice([None, None, 0, 1, 2, 4, P])
        la = rng.choice([1, 2, 3])
        looped = inst.v > 1 and rng.random() < 1 / 3
        A = None if looped else rng.choice([None, 1, 2, 3, 4])
        G = rng.choice([1, 2]) * P if looped else None
        ep = rng.choice([None, None, -P, -4, -2, 0, 2, 4, P])
        share = rng.choice([None, None, 0, 0.25, 0.5, 0.75])
        try:
            s = remat_list_schedule(
                inst, K, window=[w + ex + (G or 0) for w in nat],
                eager=None if eg is None else [w + eg for w in nat], lookahead=la, A=A,
                eager_pairs=None if ep is None else [max(1, w + ep) for w in pairs], group=G,
                keep_first=None if share is None else [int(share * K)] * P)
        except GeneratorError:
            continue
        r = simulate(s)
        made += 1
        if r.valid and max(r.peak_memory) <= K and (best is None or r.makespan < best):
            best = r.makespan
            print(f"{time.monotonic() - t0:6.1f} s  {best}  (window+{ex}, eager {eg}, "
                  f"lookahead {la}, A {A}, group {G}, pairs {ep}, keep_first {share})",
                  flush=True)
    print(f"# {made} schedules in {a.seconds:g} s, best {best}")


if __name__ == "__main__":
    main()
