"""Benchmark of the exact search: instance -> seconds, nodes, status (one core).

Groups (the targets of the issue; docs/search.md reports the measured numbers):

* ``single``: ``v = 1``, ``P <= 4``, ``m <= 8``, every ``K``, ``f, b`` in ``{1,2,3}``;
* ``multi``: ``v = 2``, looped and vshape, ``P <= 3``, ``m <= 5``;
* ``split``: split backward, ``P <= 3``, ``m <= 6``;
* ``k1``: ``P = 4, m = 10, K = 1, f = 1, b = 2``;
* ``largest``: for each family and ``K`` in ``{1, 2, inf}``, the largest ``m`` proven within
  ``--largest-limit`` seconds (``m`` grows until a failure);
* ``crosscheck``: every proven row of pipebounds/data/optima.jsonl with ``P m v <= --max-size`` (every
  ``--sample``-th) solved again by *both* engines without known schedules and without the
  theory's bound (so neither is seeded by other modules); counts the instances both prove and
  whether they agree.

``--durations base`` keeps ``f = 1, b = 2`` (split ``b_I = b_W = 1``) only; ``--sample N`` takes
every N-th instance. The summary line per group: instances, proven optimal, proven within the
target (10 s), the slowest, and the instances not proven.

Usage::

    python benchmarks/bench_search.py single --durations base --time-limit 10
    python benchmarks/bench_search.py k1 largest --engine search
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from optima_table import instances  # noqa: E402


def run_one(d: dict, engine: str, time_limit: float):
    from schedules import Instance
    from pipebounds.search import solve

    inst = Instance.from_dict(d)
    t0 = time.monotonic()
    res = solve(inst, time_limit=time_limit, engine=engine)
    dt = time.monotonic() - t0
    return inst, res, dt


def describe(inst) -> str:
    dur = f"f={inst.f} b_I={inst.b_I} b_W={inst.b_W}" if inst.split else f"f={inst.f} b={inst.b}"
    pl = f" {inst.placement}" if inst.v > 1 else ""
    return f"P={inst.P} m={inst.m} v={inst.v}{pl} K={inst.K if inst.K else 'inf'} {dur}"


def bench_group(name: str, dicts: list[dict], args) -> None:
    proven = fast = 0
    slow = []
    worst = (0.0, "")
    for d in dicts:
        inst, res, dt = run_one(d, args.engine, args.time_limit)
        ok = res.status == "optimal"
        proven += ok
        fast += ok and dt <= args.target
        if not ok or dt > args.target:
            slow.append(describe(inst))
        worst = max(worst, (dt, describe(inst)))
        print(f"{describe(inst):40s} {dt:8.3f} s {res.nodes:9d} nodes  {res.status:9s} "
              f"T={res.makespan} LB={res.lower_bound} ({res.source})", flush=True)
    print(f"# {name}: {len(dicts)} instances, {proven} proven optimal, {fast} within "
          f"{args.target:g} s; slowest {worst[0]:.2f} s ({worst[1]})", flush=True)
    if slow:
        print(f"# {name}: not proven within {args.target:g} s: " + "; ".join(slow[:40])
              + (" ..." if len(slow) > 40 else ""), flush=True)


def largest(args) -> None:
    from schedules import Instance

    fams = [("single", dict(v=1), 4), ("split", dict(v=1, b_I=1, b_W=1), 3),
            ("multi-looped", dict(v=2, placement="looped"), 3),
            ("multi-vshape", dict(v=2, placement="vshape"), 3)]
    for fam, kw, maxP in fams:
        for P in range(2, maxP + 1):
            for K in (1, 2, None):
                best = None
                for m in range(2, 33):
                    inst = Instance(P=P, m=m, K=K, **kw)
                    _, res, dt = run_one(inst.to_dict(), args.engine, args.largest_limit)
                    if res.status != "optimal":
                        break
                    best = (m, dt)
                print(f"# largest {fam} P={P} K={K if K else 'inf'}: "
                      + (f"m={best[0]} proven in {best[1]:.2f} s" if best else "none"),
                      flush=True)


def crosscheck(args) -> None:
    from fractions import Fraction

    from optima_table import DEFAULT_OUT, read_table
    from schedules import Instance
    from pipebounds.search import solve

    rows = [r for r in read_table(DEFAULT_OUT).values()
            if r["status"] == "optimal"
            and args.min_size <= r["P"] * r["m"] * r["v"] <= args.max_size]
    rows.sort(key=lambda r: (r["P"] * r["m"] * r["v"], json_key(r)))
    rows = rows[::args.sample]
    both = agree = 0
    bad = []
    for r in rows:
        inst = Instance.from_dict(r)
        a = solve(inst, time_limit=args.time_limit, engine="search", use_known=False,
                  use_theory=False)
        b = solve(inst, time_limit=args.time_limit, engine="cpsat", use_known=False,
                  use_theory=False)
        if a.status == "optimal" and b.status == "optimal":
            both += 1
            if a.makespan == b.makespan == Fraction(r["opt"]):
                agree += 1
            else:
                bad.append((describe(inst), a.makespan, b.makespan, r["opt"]))
        print(f"{describe(inst):40s} search {a.status} {a.makespan} ({a.seconds:.2f} s)  "
              f"cpsat {b.status} {b.makespan} ({b.seconds:.2f} s)  table {r['opt']}", flush=True)
    print(f"# crosscheck: {len(rows)} instances, both engines proved {both}, agree {agree}, "
          f"disagree {len(bad)}: {bad}", flush=True)


def json_key(r) -> str:
    import json

    return json.dumps(r, sort_keys=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("groups", nargs="+", choices=("single", "multi", "split", "k1", "largest",
                                                  "crosscheck"))
    ap.add_argument("--engine", default="search", choices=("search", "cpsat", "auto"))
    ap.add_argument("--durations", default="all", choices=("base", "all"))
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--target", type=float, default=10.0)
    ap.add_argument("--largest-limit", type=float, default=60.0)
    ap.add_argument("--max-P", type=int, default=4)
    ap.add_argument("--max-m", type=int, default=8)
    ap.add_argument("--sample", type=int, default=1)
    ap.add_argument("--max-size", type=int, default=12, help="crosscheck: max P*m*v")
    ap.add_argument("--min-size", type=int, default=1, help="crosscheck: min P*m*v")
    args = ap.parse_args(argv)
    for g in args.groups:
        if g == "k1":
            from schedules import Instance

            bench_group(g, [Instance(P=4, m=10, K=1, f=1, b=2).to_dict()], args)
        elif g == "largest":
            largest(args)
        elif g == "crosscheck":
            crosscheck(args)
        else:
            ds = instances(g, args.durations, args.max_P, args.max_m)[::args.sample]
            bench_group(g, ds, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
