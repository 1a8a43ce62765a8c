"""The memory frontier ``K*`` of ``v = 2`` split instances beyond data/frontier_v2_split.jsonl,
closed by KF5 and a schedule (docs/theory_frontier.md §8, issue 25).

For each base instance of the range (``v = 2``, split, both placements, ``f, b_I, b_W`` in
``{1, 2}``, ``(P, m)`` given by ``--sizes``):

1. ``OPT(inf)`` by CP-SAT with no bound of :mod:`bounds` and no known schedule
   (``use_theory=False, use_known=False``); only an ``optimal`` status is kept.
2. ``K = KF5`` (:func:`bounds.frontier.kf5_value` at that ``OPT(inf)``, a proven lower bound on
   ``K*``), then ``K + 1``, ...: the decision "a schedule of makespan ``<= OPT(inf)`` with peak
   ``<= K``" by CP-SAT (``cap``: the model holds only such schedules, again without any bound
   of ``bounds``). *Feasible*: its schedule reaches ``OPT(inf)`` at ``K``, so ``K* <= K``,
   and the sweep stops; *infeasible*: ``OPT(K) > OPT(inf)`` proven, so ``K* > K``; *unknown*
   (time limit): the next ``K`` is tried for a schedule.

``K_star_low`` is KF5 raised past every proven-infeasible ``K`` (``OPT(K)`` does not rise
with ``K``, so an infeasible ``K`` is infeasible below it too); ``K_star_high`` the ``K`` of
the feasible decision (``v m`` when none was reached: memory never binds there); closed when
they meet. One JSON line per base instance (resumable: bases already in ``--out`` are skipped):
``P, m, v, placement, f, b_I, b_W``, ``opt_inf`` (exact string), ``opt_inf_cpu``, ``kf5``,
``decisions`` ``{K: "feasible" | "infeasible" | "unknown"}`` with ``decision_cpu``,
``K_star_low``, ``K_star_high``, ``orders`` (the feasible schedule's per-GPU actions, or None).
CPU seconds are ``time.process_time`` of this process (CP-SAT runs in it, one worker).
Read by ``proofs_checks.frontier`` (``kf5_attained``), which re-simulates every schedule.

    python tools/frontier_v2_split.py [--sizes 2x4,3x4] [--time-limit 60] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction
from itertools import product
from pathlib import Path

from schedules import Instance

OUT = Path(__file__).resolve().parent.parent / "data" / "frontier_v2_split_kf5.jsonl"
TRIPLES = tuple(product((1, 2), repeat=3))


def bases(sizes) -> list[Instance]:
    """The base instances (``K`` None) of the sweep, in its order."""
    return [Instance(P=P, m=m, v=2, placement=pl, f=f, b_I=bi, b_W=bw)
            for (P, m), pl, (f, bi, bw) in product(sizes, ("looped", "vshape"), TRIPLES)]


def _num(x):
    """A duration as JSON: an int when whole, else its exact string."""
    x = Fraction(x)
    return x.numerator if x.denominator == 1 else str(x)


def _key(inst: Instance) -> tuple:
    return (inst.P, inst.m, inst.placement, _num(inst.f), _num(inst.b_I), _num(inst.b_W))


def sweep_one(base: Instance, time_limit: float) -> dict:
    from bounds.frontier import kf5_value
    from pipebounds.search.cpsat import solve_cpsat

    row: dict = {"P": base.P, "m": base.m, "v": 2, "placement": base.placement,
                 **{k: _num(getattr(base, k)) for k in ("f", "b_I", "b_W")}}
    t0 = time.process_time()
    r = solve_cpsat(base, time_limit=time_limit, use_known=False, use_theory=False)
    row["opt_inf_cpu"] = round(time.process_time() - t0, 2)
    if r.status != "optimal":
        row.update(opt_inf=None, opt_inf_status=r.status)
        return row
    opt_inf = Fraction(r.makespan)
    if opt_inf.denominator != 1:
        raise ValueError("integer durations only (the cap is in whole units)")
    kf5 = kf5_value(base, opt_inf)
    row.update(opt_inf=str(opt_inf), kf5=kf5, decisions={}, decision_cpu={})
    high, orders = None, None
    top = base.v * base.m
    for K in range(kf5, top + 1):
        t0 = time.process_time()
        d = solve_cpsat(base.with_(K=K), time_limit=time_limit, use_known=False,
                        use_theory=False, cap=int(opt_inf))
        row["decision_cpu"][str(K)] = round(time.process_time() - t0, 2)
        if d.schedule is not None and d.makespan is not None and d.makespan <= opt_inf:
            row["decisions"][str(K)] = "feasible"
            high, orders = K, [[str(op) for op in seq] for seq in d.schedule.orders]
            break
        if d.lower_bound > opt_inf:
            row["decisions"][str(K)] = "infeasible"
            continue
        row["decisions"][str(K)] = "unknown"   # go on: a schedule at a larger K still bounds
    infeasible = [int(K) for K, v in row["decisions"].items() if v == "infeasible"]
    # OPT(K) is non-increasing in K: infeasible at K is infeasible at every smaller K too
    low = max([kf5] + [K + 1 for K in infeasible])
    row.update(K_star_low=min(low, top), K_star_high=top if high is None else high,
               orders=orders)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="2x4,3x4", help="P x m pairs, comma separated")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per CP-SAT solve")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                done.add((d["P"], d["m"], d["placement"], d["f"], d["b_I"], d["b_W"]))
    with args.out.open("a") as out:
        for base in bases(sizes):
            if _key(base) in done:
                continue
            row = sweep_one(base, args.time_limit)
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(json.dumps({k: v for k, v in row.items() if k != "orders"}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
