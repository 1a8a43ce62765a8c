"""Exact optima of small multi-wave instances with finite ``K`` in split form (issue 25).

The optima table (pipebounds/data/optima.jsonl) holds fused two-wave rows only; this sweep adds
split ones, where the multi-wave bounds were loosest: ``v = 2``, both placements, ``P`` in
``{2, 3}``, ``m`` in ``{2, 3, 4}``, ``2 <= K <= 4`` with ``K < 2m``, and six duration triples
``(f, b_I, b_W)``. Every instance is solved by CP-SAT with ``use_theory=False`` (no bound of
:mod:`bounds` in the model, no known schedule), so the optima can check the bounds without
circularity; each row keeps the optimal orders, which the check re-simulates.

    python tools/multiwave_finite_k.py [--time-limit 20] [--out FILE]
    python tools/multiwave_finite_k.py --random SEED --cpu SECONDS [--out FILE]
    python tools/multiwave_finite_k.py --random SEED --three-waves --cpu SECONDS [--out FILE]

``--random``: instead of the grid, random instances until ``SECONDS`` of CPU time have passed
(:func:`random_instance`: ``P`` in 2..4, ``v`` in {2, 3}, ``K`` in ``1..2v``, both placements,
fused or split, ``f`` in {1, 2, 3, 3/2}; 15 s per solve), written to
data/multiwave_finite_k_random.jsonl by default (the committed file: seed 7; a repeated
instance is solved once). ``--three-waves``: only ``v = 3`` with ``K <= v`` (the region of
MW13), written to data/multiwave_finite_k_v3.jsonl by default (the committed file: seed 11).

One JSON line per instance (resumable: instances already in ``--out`` are skipped):
``Instance.to_dict()`` and ``status``, ``opt`` (exact string), ``cpu`` (CPU seconds of this
process), ``orders`` (per-GPU action strings). Read by ``proofs_checks.multi_wave``
(``split_memory_finite_K``).
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import product
from pathlib import Path

from schedules import Instance

OUT = Path(__file__).resolve().parent.parent / "data" / "multiwave_finite_k_split.jsonl"
OUT_RANDOM = OUT.with_name("multiwave_finite_k_random.jsonl")
OUT_V3 = OUT.with_name("multiwave_finite_k_v3.jsonl")
TRIPLES = ((2, 3, 1), (1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 2), (1, 3, 1))


def instances() -> list[Instance]:
    """The sweep, in its order."""
    return [Instance(P=Pn, m=mn, K=Kn, v=2, placement=pl, f=f, b_I=bi, b_W=bw)
            for Pn, mn, Kn, pl, (f, bi, bw) in product((2, 3), (2, 3, 4), (2, 3, 4),
                                                       ("vshape", "looped"), TRIPLES)
            if Kn < 2 * mn]


def random_instance(rng, three_waves: bool = False) -> Instance:
    """One instance of the ``--random`` sweep (module docstring); ``three_waves``: ``v = 3``
    and ``K <= v`` only."""
    from fractions import Fraction

    P = rng.choice([2, 3, 4])
    v = 3 if three_waves else rng.choice([2, 2, 3])
    m = rng.randint(2, 4 if P < 4 else 3)
    if v == 3 and P > 2:
        m = 2
    K = rng.randint(1, v if three_waves else 2 * v)
    pl = rng.choice(["looped", "vshape"])
    f = rng.choice([1, 2, 3, Fraction(3, 2)])
    d = (dict(b_I=rng.choice([1, 2, 3]), b_W=rng.choice([1, 2])) if rng.random() < 0.5
         else dict(b=rng.choice([1, 2, 3, 4])))
    return Instance(P=P, m=m, K=K, v=v, placement=pl, f=f, **d)


def _row(inst: Instance, r, cpu: float) -> dict:
    row = inst.to_dict()
    row.update(status=r.status, opt=None if r.makespan is None else str(r.makespan),
               cpu=round(cpu, 3), orders=None if r.schedule is None else
               [[str(op) for op in seq] for seq in r.schedule.orders])
    return row


def main(argv=None) -> int:
    from pipebounds.search import solve

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--random", type=int, default=None, metavar="SEED")
    ap.add_argument("--cpu", type=float, default=400.0)
    ap.add_argument("--three-waves", action="store_true",
                    help="with --random: v = 3 and K <= v only")
    args = ap.parse_args(argv)
    if args.random is not None:
        import random

        rng = random.Random(args.random)
        out_path = args.out or (OUT_V3 if args.three_waves else OUT_RANDOM)
        t_start = time.process_time()
        seen = set()
        with out_path.open("a") as out:
            while time.process_time() - t_start < args.cpu:
                inst = random_instance(rng, args.three_waves)
                key = json.dumps(inst.to_dict(), sort_keys=True)
                if key in seen:
                    continue
                seen.add(key)
                t0 = time.process_time()
                r = solve(inst, time_limit=15, use_known=False, use_theory=False,
                          engine="cpsat")
                out.write(json.dumps(_row(inst, r, time.process_time() - t0)) + "\n")
                out.flush()
        return 0
    args.out = args.out or OUT
    done = set()
    if args.out.exists():
        done = {json.dumps(Instance.from_dict(json.loads(line)).to_dict(), sort_keys=True)
                for line in args.out.read_text().splitlines() if line.strip()}
    with args.out.open("a") as out:
        for inst in instances():
            key = json.dumps(inst.to_dict(), sort_keys=True)
            if key in done:
                continue
            t0 = time.process_time()
            r = solve(inst, time_limit=args.time_limit, use_known=False, use_theory=False,
                      engine="cpsat")
            out.write(json.dumps(_row(inst, r, time.process_time() - t0)) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
