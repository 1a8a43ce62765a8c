"""Benchmark of the portfolio: the time of ``search``, ``cpsat`` and ``portfolio`` on a small
mixed set (issue 11: the default must prove every instance either engine alone proves within
the limit, and be at least as fast as the faster of the two up to process start-up).

Set: single wave ``K = 1``, intermediate ``K`` (single wave and two waves, both placements),
unconstrained memory, split backward, and the two instances of the issue (``P=4 m=5 K=2 v=2
f=b=1``, OPT 29; ``P=4 m=6 K=2 f=2 b_I=b_W=1``, OPT 32). Each engine runs alone, one after the
other, with the default ``solve`` (the theory's bound, the known schedules), CP-SAT on one
worker; the portfolio uses two processes. Times are wall seconds (load-dependent: compare
columns of one run, not runs). The last column is ``portfolio - min(search, cpsat)`` over the
instances that engine proved; ``ok`` when the portfolio proved every instance either engine
proved.

Usage::

    python benchmarks/bench_portfolio.py [--time-limit 60] [--only issue]
"""

from __future__ import annotations

import argparse
import sys
import time

SET = {
    "k1": dict(P=4, m=10, K=1),
    "k1-split": dict(P=3, m=8, K=1, b_I=1, b_W=1),
    "mid": dict(P=4, m=8, K=2),
    "mid-f3": dict(P=3, m=6, K=2, f=3, b=2),
    "inf": dict(P=4, m=8, K=None),
    "v2-looped": dict(P=2, m=4, K=2, v=2),
    "v2-vshape": dict(P=2, m=3, K=2, v=2, placement="vshape"),
    "v2-vshape-K3": dict(P=3, m=2, K=3, v=2, placement="vshape"),
    "split-mid": dict(P=3, m=5, K=2, b_I=1, b_W=1),
    "issue-v2": dict(P=4, m=5, K=2, v=2, f=1, b=1),
    "issue-split": dict(P=4, m=6, K=2, f=2, b_I=1, b_W=1),
}
ENGINES = ("search", "cpsat", "portfolio")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--only", choices=("all", "issue"), default="all")
    args = ap.parse_args(argv)
    from schedules import Instance
    from pipebounds.search import solve

    solve(Instance(P=2, m=2, K=1), engine="portfolio")  # imports and bounds warm
    names = [n for n in SET if args.only == "all" or n.startswith("issue")]
    print(f"{'instance':14} " + " ".join(f"{e:>24}" for e in ENGINES) + "   portfolio - best")
    ok = True
    for name in names:
        inst = Instance(**SET[name])
        cells, t = [], {}
        for engine in ENGINES:
            t0 = time.monotonic()
            res = solve(inst, time_limit=args.time_limit, engine=engine)
            dt = time.monotonic() - t0
            t[engine] = dt if res.status == "optimal" else None
            cells.append(f"{res.status[:4]} {str(res.makespan):>4}/{str(res.lower_bound):<4}"
                         f" {dt:6.2f}s")
        alone = [t[e] for e in ("search", "cpsat") if t[e] is not None]
        if alone and t["portfolio"] is None:
            ok = False
        diff = "" if not alone or t["portfolio"] is None else f"{t['portfolio'] - min(alone):+.2f}s"
        print(f"{name:14} " + " ".join(f"{c:>24}" for c in cells) + f"   {diff}", flush=True)
    print("portfolio proves every instance an engine alone proves:", "ok" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
