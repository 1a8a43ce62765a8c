"""Generate the table of optimal makespans, pipebounds/data/optima.jsonl (format: data/README.md).

One JSON object per line: the instance (``Instance.to_dict()``) plus ``opt`` (exact string, the
best makespan found), ``lower_bound`` (exact string, the proven lower bound; equal to ``opt``
when ``status`` is ``optimal``), ``status``, ``seconds``, ``nodes``, ``engine``.

Independent of the theory: both engines run with ``use_theory=False`` (no lower bound from
:mod:`bounds`), so the table can check the theory's bounds without circularity; such rows carry
``"independent": true`` (rows without it, from older runs, are re-solved).

Resumable: instances already in the output with status ``optimal`` are skipped (others are
retried with ``--retry``; the last line of an instance wins). Results are appended as they
arrive, so an interrupted run loses at most the instances in flight.

Families (the ranges of the issue):

* ``single``: ``v = 1``, ``P <= 4``, ``m <= 8``, ``K = 1..m-1`` and unconstrained;
* ``multi``: ``v = 2``, looped and vshape, ``P <= 3``, ``m <= 5``, ``K = 1..2m-1`` and
  unconstrained;
* ``split``: ``v = 1``, split backward, ``P <= 3``, ``m <= 6``, ``K = 1..m-1`` and unconstrained;
* ``k1``: ``v = 1``, fused, ``K = 1`` only, ``2 <= P <= --max-P``, ``2 <= m <= --max-m`` (no
  caps), durations every ratio ``f : b`` with ``f, b`` in ``{1..5}`` coprime (``--durations
  all``; ``base`` is ``f=1, b=2``): the wider check of Theorem 3 (docs/theory.md, section 5);
* ``split-k1``: ``v = 1``, split backward, ``K = 1`` only, ``2 <= P <= --max-P``,
  ``2 <= m <= --max-m`` (no caps), durations every ``f, b_I, b_W`` in ``{1,2,3}`` with no common
  factor (``--durations all``; ``base`` is ``f = b_I = b_W = 1``): the check of Theorem S4
  (docs/theory.md, section 6).

(``K >= v m`` is the unconstrained instance: a GPU never holds more than ``v m`` activations.)

Durations: ``--durations base`` is ``f=1, b=2`` (split ``b_I = b_W = 1``); ``all`` adds every
``f, b`` in ``{1,2,3}`` (split: ``f, b_I, b_W`` in ``{1,2}``). Engine ``auto`` runs the search
for ``--search-limit`` seconds and, if it does not prove optimality, CP-SAT for the rest.

Usage::

    python tools/optima_table.py --family single --max-P 3 --workers 2 --time-limit 60
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from multiprocessing import Pool

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "pipebounds", "data", "optima.jsonl")


def instance_key(d: dict) -> str:
    """A canonical string of an instance dict (the fields of ``Instance.to_dict()``)."""
    return json.dumps({k: d[k] for k in sorted(d) if k in (
        "P", "m", "K", "v", "placement", "stage_to_rank", "f", "b", "b_input", "b_weight", "c")},
        sort_keys=True)


def durations(family: str, which: str) -> list[dict]:
    if family in ("split", "split-k1"):
        if which == "base":
            return [dict(f=1, b_I=1, b_W=1)]
        if family == "split-k1":
            from math import gcd
            return [dict(f=f, b_I=bi, b_W=bw) for f, bi, bw in itertools.product((1, 2, 3), repeat=3)
                    if gcd(gcd(f, bi), bw) == 1]
        return [dict(f=f, b_I=bi, b_W=bw) for f, bi, bw in itertools.product((1, 2), repeat=3)]
    if which == "base":
        return [dict(f=1, b=2)]
    if family == "k1":
        from math import gcd
        return [dict(f=f, b=b) for f, b in itertools.product(range(1, 6), repeat=2)
                if gcd(f, b) == 1]
    return [dict(f=f, b=b) for f, b in itertools.product((1, 2, 3), repeat=2)]


def instances(family: str, which: str, max_P: int, max_m: int, min_P: int = 1):
    """Instance dicts of one family, small first (``P*m*v``), base durations first."""
    from schedules import Instance

    out = []
    durs = durations(family, which)
    for rank, dur in enumerate(durs):
        if family == "single":
            shapes = [(P, m, 1, "looped") for P in range(min_P, min(max_P, 4) + 1)
                      for m in range(1, min(max_m, 8) + 1)]
            kmax = lambda m, v: m  # noqa: E731
        elif family == "multi":
            shapes = [(P, m, 2, pl) for P in range(max(min_P, 2), min(max_P, 3) + 1)
                      for m in range(1, min(max_m, 5) + 1) for pl in ("looped", "vshape")]
            kmax = lambda m, v: v * m  # noqa: E731
        elif family == "split":
            shapes = [(P, m, 1, "looped") for P in range(min_P, min(max_P, 3) + 1)
                      for m in range(1, min(max_m, 6) + 1)]
            kmax = lambda m, v: m  # noqa: E731
        elif family in ("k1", "split-k1"):
            shapes = [(P, m, 1, "looped") for P in range(max(min_P, 2), max_P + 1)
                      for m in range(2, max_m + 1)]
            kmax = None
        else:
            raise SystemExit(f"unknown family {family!r}")
        for P, m, v, pl in shapes:
            for K in [1] if kmax is None else list(range(1, kmax(m, v))) + [None]:
                inst = Instance(P=P, m=m, v=v, placement=pl, K=K, **dur)
                out.append((0 if rank == 0 else 1, P * m * v, inst.to_dict()))
    out.sort(key=lambda x: (x[0], x[1]))
    return [d for _, _, d in out]


def solve_one(job):
    """Worker: solve one instance dict; returns the table row."""
    d, engine, time_limit, search_limit = job
    from schedules import Instance
    from pipebounds.cli.common import exact_string
    from pipebounds.search import solve
    from pipebounds.search.solve import solve_auto

    inst = Instance.from_dict(d)
    t0 = time.monotonic()
    if engine == "auto":
        res = solve_auto(inst, time_limit=time_limit, use_theory=False,
                         search_seconds=search_limit)
        used = res.stats["engines"][-1][0]
    else:
        res = solve(inst, time_limit=time_limit, engine=engine, use_theory=False)
        used = res.engine
    ms, lb, status, nodes = res.makespan, res.lower_bound, res.status, res.nodes
    row = dict(d)
    row.update(opt=None if ms is None else exact_string(ms), lower_bound=exact_string(lb),
               status=status, seconds=round(time.monotonic() - t0, 3), nodes=nodes, engine=used,
               independent=True)
    return row


def read_table(path: str) -> dict[str, dict]:
    """The rows of a table file by instance key (the last line of an instance wins)."""
    rows = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line:
                    row = json.loads(line)
                    rows[instance_key(row)] = row
    return rows


def compact(path: str) -> int:
    """Rewrite the table with one line per instance, in a stable order: the last line, with the
    least ``opt`` and the largest ``lower_bound`` of all independent lines of the instance; rows
    of older runs without the ``independent`` key get ``"independent": false``."""
    rows = read_table(path)
    # several independent rows of one instance: the best schedule and the best proven bound
    # (both are proofs/witnesses, so combining them is sound)
    from fractions import Fraction

    with open(path, encoding="utf-8") as fh:
        every = [json.loads(line) for line in fh if line.strip()]
    for old in every:
        row = rows[instance_key(old)]
        if not (old.get("independent") and row.get("independent")):
            continue
        if old["opt"] is not None and (row["opt"] is None
                                       or Fraction(old["opt"]) < Fraction(row["opt"])):
            row["opt"] = old["opt"]
        if Fraction(old["lower_bound"]) > Fraction(row["lower_bound"]):
            row["lower_bound"] = old["lower_bound"]
        if row["opt"] is not None and Fraction(row["opt"]) == Fraction(row["lower_bound"]):
            row["status"] = "optimal"
    for row in rows.values():
        row.setdefault("independent", False)
    order = sorted(rows.values(), key=lambda r: (r["v"], "b_input" in r, r["P"], r["m"],
                                                 r.get("placement", ""), r["K"] is None,
                                                 r["K"] or 0, str(r["f"]), str(r["b"]),
                                                 str(r.get("b_input", ""))))
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in order:
            fh.write(json.dumps(row) + "\n")
    os.replace(tmp, path)
    return len(order)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="single",
                    help="single, multi, split, k1, split-k1, or all (the first three)")
    ap.add_argument("--durations", default="base", choices=("base", "all"))
    ap.add_argument("--min-P", type=int, default=1)
    ap.add_argument("--max-P", type=int, default=4)
    ap.add_argument("--max-m", type=int, default=8)
    ap.add_argument("--engine", default="auto", choices=("auto", "search", "cpsat"))
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance")
    ap.add_argument("--search-limit", type=float, default=5.0,
                    help="auto: seconds of search before CP-SAT")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="at most this many instances")
    ap.add_argument("--retry", action="store_true", help="re-solve rows not proven optimal")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--compact", action="store_true",
                    help="only rewrite the table with one line per instance, then exit")
    args = ap.parse_args(argv)
    if args.compact:
        print(f"{compact(args.out)} rows in {args.out}", file=sys.stderr)
        return 0
    fams = ("single", "split", "multi") if args.family == "all" else (args.family,)
    todo = []
    for fam in fams:
        todo += instances(fam, args.durations, args.max_P, args.max_m, args.min_P)
    done = read_table(args.out)
    todo = [d for d in todo if instance_key(d) not in done
            or not done[instance_key(d)].get("independent")
            or (args.retry and done[instance_key(d)]["status"] != "optimal")]
    if args.limit is not None:
        todo = todo[:args.limit]
    print(f"{len(todo)} instances to solve ({len(done)} rows already in {args.out})",
          file=sys.stderr)
    jobs = [(d, args.engine, args.time_limit, args.search_limit) for d in todo]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "a", encoding="utf-8") as fh:
        if args.workers <= 1:
            results = map(solve_one, jobs)
            pool = None
        else:
            pool = Pool(args.workers)
            results = pool.imap_unordered(solve_one, jobs)
        try:
            for row in results:
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(f"P={row['P']} m={row['m']} v={row['v']} K={row['K']} f={row['f']} "
                      f"b={row['b']} -> {row['opt']} {row['status']} {row['seconds']}s "
                      f"{row['engine']}", file=sys.stderr, flush=True)
        finally:
            if pool is not None:
                pool.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
