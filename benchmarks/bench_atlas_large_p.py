"""Synthesis on a seeded sample of the atlas frontier at large P, at a fixed CPU budget.

    python benchmarks/bench_atlas_large_p.py --per-P 10 --budget 5 [--P 16 32] [--v 1] [--out F.jsonl]

Samples ``--per-P`` pairs of ``data/atlas/frontier.csv`` for each ``P`` (seed ``--seed``; the
same pairs whatever the code, so two runs of different code compare), runs
:func:`pipebounds.synthesis.synthesize` with ``clock='cpu'`` and ``time_limit=--budget`` CPU
seconds, and prints per pair the best family's makespan (the atlas row's), the synthesized one,
the bound, the certified gap and the CPU seconds used; then per ``P`` the mean gap and how many
pairs end within 2 %. CPU time (``time.process_time``), not wall: the machine is shared.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FRONTIER = ROOT / "data" / "atlas" / "frontier.csv"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-P", type=int, default=10)
    ap.add_argument("--budget", type=float, default=5.0, help="CPU seconds per pair")
    ap.add_argument("--P", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--v", type=int, nargs="+", default=None,
                    help="only the pairs of these v (default: every v)")
    ap.add_argument("--out", default=None, help="also write one JSON line per pair here")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tools"))
    from atlas_frontier_grid import instance_object
    from pipebounds.synthesis import synthesize
    from schedules.instance import Instance

    with open(FRONTIER, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if int(r["P"]) in args.P
                and (args.v is None or int(r["v"]) in args.v)]
    by_P: dict = defaultdict(list)
    for r in rows:
        by_P[int(r["P"])].append(r)
    rng = random.Random(args.seed)
    out = open(args.out, "w") if args.out else None
    print(f"load average {os.getloadavg()[0]:.2f}; budget {args.budget} CPU s per pair")
    summary: dict = defaultdict(list)
    for P in sorted(by_P):
        for r in rng.sample(by_P[P], min(args.per_P, len(by_P[P]))):
            obj = instance_object(r)
            inst = Instance.from_dict(obj)
            t0 = time.process_time()
            res = synthesize(inst, K=int(r["K"]), time_limit=args.budget, clock="cpu")
            cpu = time.process_time() - t0
            fam = Fraction(r["makespan"])
            gap = res.makespan / res.lower_bound
            summary[P].append((gap, fam / res.lower_bound, cpu))
            print(f"P={P} m={obj['m']} v={obj['v']} {obj.get('placement', '-')} {r['durations']}"
                  f" K={r['K']}: family {float(fam):.6g} synthesized {float(res.makespan):.6g} "
                  f"bound {float(res.lower_bound):.6g} gap {float(gap):.4f} cpu {cpu:.1f} "
                  f"[{res.source[:50]}]", flush=True)
            if out:
                out.write(json.dumps({"instance": obj, "K": int(r["K"]), "gap": float(gap),
                                      "family_gap": float(fam / res.lower_bound),
                                      "cpu": round(cpu, 2), "source": res.source}) + "\n")
                out.flush()
    for P, xs in sorted(summary.items()):
        gaps = [float(g) for g, _, _ in xs]
        print(f"P={P}: {len(xs)} pairs, mean gap {sum(gaps) / len(gaps):.4f} (families "
              f"{sum(float(f) for _, f, _ in xs) / len(xs):.4f}), within 2 %: "
              f"{sum(g <= 1.02 for g in gaps)}, worst {max(gaps):.4f}, mean CPU "
              f"{sum(c for _, _, c in xs) / len(xs):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
