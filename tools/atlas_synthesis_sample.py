"""Synthesize schedules for a seeded random sample of the atlas frontier (data/atlas/frontier.csv).

    python tools/atlas_synthesis_sample.py --per-P 12 --time-limit 5   # about 5 CPU-min
    python tools/make_atlas.py                                          # the page reads the sample

For each sampled (instance, K) pair of the frontier (no family within 2 % of the bound), runs
:func:`pipebounds.synthesis.synthesize` with the given limit and records the best family's
makespan, the synthesized makespan, the current lower bound and the certified gap, with the code
and theory versions, to ``data/atlas/synthesis_sample.jsonl`` (one JSON line per pair; a rerun
replaces the file). The sample is stratified by ``P`` (``--per-P`` pairs of each ``P``, every pair
of a smaller stratum), so the page can estimate, per ``P``, how much of the frontier a synthesized
schedule closes: an estimate from a sample, stated as such, not the recomputed atlas (which is an
hours-long sweep: 4,845 pairs at seconds each).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FRONTIER = ROOT / "data" / "atlas" / "frontier.csv"
OUT = ROOT / "data" / "atlas" / "synthesis_sample.jsonl"
THRESHOLD = Fraction(102, 100)


def instance_object(row: dict) -> dict:
    """The CLI instance object of a frontier.csv row (durations ``f=.. b=..`` or split)."""
    obj: dict = {"P": int(row["P"]), "m": int(row["m"]), "v": int(row["v"])}
    if row["placement"] not in ("", "-"):
        obj["placement"] = row["placement"]
    names = {"f": "f", "b": "b", "b_I": "b_input", "b_W": "b_weight"}
    for part in row["durations"].split():
        k, val = part.split("=")
        obj[names[k]] = val
    return obj


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-P", type=int, default=12, help="pairs sampled per P (default 12)")
    ap.add_argument("--time-limit", type=float, default=5.0, help="seconds per pair (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from pipebounds.sweep.store import code_version, theory_version
    from pipebounds.synthesis import synthesize
    from schedules.instance import Instance, fraction_json

    with open(FRONTIER, newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_P: dict = defaultdict(list)
    for r in rows:
        by_P[int(r["P"])].append(r)
    rng = random.Random(args.seed)
    sample = []
    for P in sorted(by_P):
        pool = by_P[P]
        sample += pool if len(pool) <= args.per_P else rng.sample(pool, args.per_P)
    cv, tv = code_version(), theory_version()
    with open(OUT, "w") as out:
        for i, r in enumerate(sample):
            obj = instance_object(r)
            inst = Instance.from_dict({**obj, "K": int(r["K"])})
            t0 = time.process_time()
            res = synthesize(inst, time_limit=args.time_limit)
            cpu = time.process_time() - t0
            family = Fraction(r["makespan"])
            line = {"instance": obj, "K": int(r["K"]), "frontier_size_P": len(by_P[obj["P"]]),
                    "best_family": r["best_family"], "family_makespan": fraction_json(family),
                    "makespan": fraction_json(res.makespan),
                    "lower_bound": fraction_json(res.lower_bound),
                    "gap": fraction_json(res.makespan / res.lower_bound), "status": res.status,
                    "source": res.source, "within_2pc": res.makespan <= THRESHOLD * res.lower_bound,
                    "time_limit": args.time_limit, "cpu_seconds": round(cpu, 2),
                    "code_version": cv, "theory_version": tv}
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(f"[{i + 1}/{len(sample)}] P={obj['P']} m={obj['m']} v={obj['v']} K={r['K']}: "
                  f"family {float(family):.6g}, synthesized {float(res.makespan):.6g}, bound "
                  f"{float(res.lower_bound):.6g}, gap {float(res.makespan / res.lower_bound):.4f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
