"""Write data/atlas/frontier_grid.json: the atlas frontier pairs as a sweep grid for the
``synthesize`` task.

    python tools/atlas_frontier_grid.py [--time-limit 3] [--seed 0]
    python -m pipebounds sweep data/atlas/frontier_grid.json --task synthesize \\
        --store data/atlas/synthesis.sqlite --executor inprocess --resume
    python tools/make_atlas.py
    python tools/atlas_frontier_grid.py --optima [--min-P 1] [--max-P 4] [--sample N]
                                        [--synthesize S] [--out FILE]   # a solve grid

One instance object per (instance, K) pair of ``data/atlas/frontier.csv`` (no family within
2 % of the bound), ``K`` in the instance, ``time_limit`` CPU seconds per pair. Every pair of
``P < 8`` comes first (in order of ``P``); then the pairs of ``P = 8, 16, 32``, each ``P`` in a
seeded random order, taken round robin (two of ``P = 8`` for one of each larger ``P``). The
in-process executor runs them in that order, so a sweep stopped part way has run every small
``P`` and a uniform random sample of each larger one (what docs/atlas.md's estimate of the
unrun part rests on).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
FRONTIER = ROOT / "data" / "atlas" / "frontier.csv"
OUT = ROOT / "data" / "atlas" / "frontier_grid.json"
LEFT = ROOT / "data" / "atlas" / "frontier_after_synthesis.csv"
OPTIMA_OUT = ROOT / "data" / "atlas" / "frontier_optima_grid.json"
SAMPLED_FROM = 8
"""From this ``P`` on, the pairs of a ``P`` are in a seeded random order, the strata taken
round robin (:data:`SHARE` of each per round) so that all are sampled from the start."""
SHARE = {8: 2, 16: 1, 32: 1}


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


def optima_grid(max_P: int, time_limit: float, engine: str = "cpsat", min_P: int = 1,
                sample: Optional[int] = None, seed: int = 0, synthesize: float = 0.0,
                out: Optional[Path] = None) -> int:
    """Write ``out`` (default :data:`OPTIMA_OUT`): the open pairs left after synthesis,
    ``min_P <= P <= max_P``, for the ``solve`` task with ``engine`` (and ``synthesize`` seconds
    of synthesis first, when positive: the task's option). ``sample``: a seeded random sample
    of that many of them (default all). CP-SAT by default: the library's default engine (the
    branch and bound, ``search``) proved 19 of the 139 such pairs it ran in 20 s each
    (2026-12-03), CP-SAT proves ``P = 2, m = 8, v = 2, K = 2`` (38) in 1.5 s where the search
    held 43 after 20 s."""
    out = OPTIMA_OUT if out is None else out
    with open(LEFT, newline="") as fh:
        rows = [r for r in csv.DictReader(fh)
                if r["why"] == "open" and min_P <= int(r["P"]) <= max_P]
    if sample is not None and sample < len(rows):
        rows = random.Random(seed).sample(rows, sample)
    rows.sort(key=lambda r: (int(r["P"]), int(r["m"]), int(r["v"])))
    instances = [{**instance_object(r), "K": int(r["K"])} for r in rows]
    options: dict = {"time_limit": time_limit, "engine": engine}
    if synthesize > 0:
        options["synthesize"] = synthesize
    grid = {"name": "atlas-frontier-optima",
            "description": "The open pairs left after synthesis (data/atlas/"
                           "frontier_after_synthesis.csv) for the solve task; "
                           "tools/atlas_frontier_grid.py --optima",
            "instances": instances, "options": options}
    out.write_text(json.dumps(grid, indent=0) + "\n")
    what = "" if sample is None else f" (a sample, seed {seed})"
    print(f"{out}: {len(instances)} open pairs with {min_P} <= P <= {max_P}{what}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per pair (default 3 CPU s to synthesize; 20 to solve)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--optima", action="store_true",
                    help="write the solve grid of the open pairs left after synthesis")
    ap.add_argument("--max-P", type=int, default=4, help="with --optima: the largest P")
    ap.add_argument("--min-P", type=int, default=1, help="with --optima: the smallest P")
    ap.add_argument("--sample", type=int, default=None,
                    help="with --optima: a random sample of this many pairs (seeded by --seed)")
    ap.add_argument("--synthesize", type=float, default=0.0,
                    help="with --optima: seconds of synthesis before the engines (the first "
                         "incumbent; default 0, off)")
    ap.add_argument("--out", type=Path, default=None,
                    help="with --optima: the grid file (default data/atlas/frontier_optima_grid.json)")
    ap.add_argument("--engine", default="cpsat",
                    help="with --optima: the solve engine (default cpsat; docstring of optima_grid)")
    args = ap.parse_args(argv)
    if args.optima:
        return optima_grid(args.max_P, 20.0 if args.time_limit is None else args.time_limit,
                           args.engine, min_P=args.min_P, sample=args.sample, seed=args.seed,
                           synthesize=args.synthesize, out=args.out)
    if args.time_limit is None:
        args.time_limit = 3.0
    with open(FRONTIER, newline="") as fh:
        rows = list(csv.DictReader(fh))
    rng = random.Random(args.seed)
    small = [r for r in rows if int(r["P"]) < SAMPLED_FROM]
    small.sort(key=lambda r: int(r["P"]))
    large: dict = {}
    for r in rows:
        if int(r["P"]) >= SAMPLED_FROM:
            large.setdefault(int(r["P"]), []).append(r)
    for pool in large.values():
        rng.shuffle(pool)
    mixed: list = []
    while any(large.values()):  # round robin over the large strata
        for P_, pool in sorted(large.items()):
            take, large[P_] = pool[:SHARE.get(P_, 1)], pool[SHARE.get(P_, 1):]
            mixed += take
    instances = [{**instance_object(r), "K": int(r["K"])} for r in small + mixed]
    grid = {"name": "atlas-frontier",
            "description": "The atlas frontier pairs (data/atlas/frontier.csv) for the synthesize "
                           "task; tools/atlas_frontier_grid.py",
            "instances": instances, "options": {"time_limit": args.time_limit}}
    OUT.write_text(json.dumps(grid, indent=0) + "\n")
    print(f"{OUT}: {len(instances)} pairs ({len(small)} with P < {SAMPLED_FROM} first)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
