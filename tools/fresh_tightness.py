"""A fresh, seeded adversarial set against the bounds: OPT / LB by region, outside the stored
ranges, with every optimum proven without any bound of ``bounds/`` (issue 25's targets).

    python tools/fresh_tightness.py [--seed 2612] [--cpu 2400] [--time-limit 20] [--out FILE]
    python tools/fresh_tightness.py --summary [--out FILE]     # the table only, no solving

Draws instances round-robin over six regions, at sizes just past the stored optima's ranges
(an instance stored in any source of ``tools/tightness_by_region.py`` is never drawn):

* ``v1_fused``: ``v = 1`` fused, ``(P, m)`` in ``3 x 13..15``, ``4 x 13``, ``5 x 9..10``,
  ``6 x 6..8`` (past optima.jsonl's ``m <= 12, 12, 8`` at ``P = 3, 4, 5``), ``2 <= K <= P``,
  ``f, b`` in 1..5;
* ``v1_split``: ``v = 1`` split, ``(P, m)`` in ``3 x 9..12``, ``4 x 7..9``, ``5 x 5..7``,
  ``2 <= K <= P``, ``f, b_I, b_W`` in 1..3;
* ``k1``: ``K = 1``, fused or split, ``v = 1`` with ``P`` 2..5, ``m`` 3..10, or ``v = 2``
  (both placements) with ``P`` 2..3, ``m`` 3..4;
* ``mw_finite``: ``v`` 2 (or 3 at ``P = 2``, ``m = 2``), both placements, fused or split,
  ``(P, m)`` in ``2 x 3..6``, ``3 x 2..4``, ``4 x 2..3``, ``2 <= K <= 2 v``;
* ``hetero``: per-stage ``f_s, b_s`` (or ``b_I,s, b_W,s``) and ``c`` in 0..2, ``K`` 1..4,
  ``v = 1`` with ``P`` 2..4, ``m`` 2..5, or ``v = 2`` with ``P`` 2..3, ``m`` 2..3;
* ``backward``: the full model (a backward ``R`` allowed, ``lower_bound(backward_remat=True)``),
  split ``v = 1``, ``P`` 2..4, ``m`` 3..6, ``1 <= K < m``.

Each instance is solved by CP-SAT with ``use_theory=False, use_known=False`` (one worker,
``--time-limit`` wall seconds; the full model's CP-SAT for ``backward``) until ``--cpu`` CPU
seconds of this process have passed. Every schedule found is re-simulated (valid, within ``K``,
its makespan). A row is a *violation* when the bound is above a makespan found (optimal or not)
or claims ``exact`` where the proven optimum differs; the script exits 1 if there is one.
One JSON line per instance (resumable: instances already in ``--out`` are not drawn again):
``Instance.to_dict()``, ``region``, ``model``, ``status``, ``opt`` (the best makespan, exact
string), ``lb``, ``exact``, ``binding``, ``cpu``, ``orders``. Regions as in the table *Tightness
by region* of docs/theory.md (``tools/tightness_by_region.py``), whose predicates classify the
rows here too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from schedules import Instance, simulate  # noqa: E402
from schedules.schedule import Schedule  # noqa: E402

OUT = os.path.join(ROOT, "data", "fresh_tightness.jsonl")
ROW_KEYS = ("region", "model", "status", "opt", "lb", "exact", "binding", "cpu", "orders")
"""A row's keys besides the instance's."""
ORDER = ["v1_fused", "v1_split", "k1", "mw_finite", "hetero", "backward"]
ISSUE_REGIONS = [  # issue 25's regions over the rows: (name, predicate, target mean / worst)
    ("single wave (v = 1, uniform, every K, both models)",
     lambda r: r["region"] != "hetero" and r.get("v", 1) == 1, "<= 1.005 / <= 1.074"),
    ("multi-wave, finite K (v >= 2, K = 1 included)",
     lambda r: r["region"] != "hetero" and r.get("v", 1) >= 2, "<= 1.02 / <= 1.08"),
    ("per-stage costs or delay c", lambda r: r["region"] == "hetero", "<= 1.03 / <= 1.10"),
]


def row_instance(row: dict) -> Instance:
    """The instance of a stored row."""
    return Instance.from_dict({k: v for k, v in row.items() if k not in ROW_KEYS})


def instance_key(inst: Instance) -> str:
    """A hashable key of ``inst`` (its dictionary, sorted)."""
    return json.dumps(inst.to_dict(), sort_keys=True)


def draw(region: str, rng: random.Random) -> Instance:
    """One instance of ``region`` (module docstring)."""
    if region == "v1_fused":
        P = rng.randint(3, 6)
        m = rng.randint(*{3: (13, 15), 4: (13, 13), 5: (9, 10), 6: (6, 8)}[P])
        return Instance(P=P, m=m, K=rng.randint(2, P), f=rng.randint(1, 5),
                        b=rng.randint(1, 5))
    if region == "v1_split":
        P = rng.randint(3, 5)
        m = rng.randint(*{3: (9, 12), 4: (7, 9), 5: (5, 7)}[P])
        return Instance(P=P, m=m, K=rng.randint(2, P), f=rng.randint(1, 3),
                        b_I=rng.randint(1, 3), b_W=rng.randint(1, 3))
    if region == "k1":
        v = rng.choice((1, 1, 2))
        P = rng.randint(2, 5 if v == 1 else 3)
        m = rng.randint(3, 10 if v == 1 else 4)
        d = (dict(b=rng.randint(1, 5)) if rng.random() < 0.5
             else dict(b_I=rng.randint(1, 3), b_W=rng.randint(1, 3)))
        return Instance(P=P, m=m, K=1, v=v, placement=rng.choice(("looped", "vshape")),
                        f=rng.randint(1, 5), **d)
    if region == "mw_finite":
        P = rng.randint(2, 4)
        v = 3 if P == 2 and rng.random() < 0.3 else 2
        m = rng.randint(*{2: (3, 6), 3: (2, 4), 4: (2, 3)}[P]) if v == 2 else 2
        d = (dict(b=rng.randint(1, 4)) if rng.random() < 0.5
             else dict(b_I=rng.randint(1, 3), b_W=rng.randint(1, 2)))
        return Instance(P=P, m=m, K=rng.randint(2, 2 * v), v=v,
                        placement=rng.choice(("looped", "vshape")),
                        f=rng.choice((1, 2, 3, Fraction(3, 2))), **d)
    if region == "hetero":
        while True:
            P = rng.randint(2, 4)
            v = rng.choice((1, 2)) if P <= 3 else 1
            S = P * v
            kw = dict(P=P, m=rng.randint(2, 5 if v == 1 else 3), v=v, K=rng.randint(1, 4),
                      placement=rng.choice(("looped", "vshape")), c=rng.choice((0, 1, 2)),
                      f=[rng.randint(1, 4) for _ in range(S)])
            if rng.random() < 0.5:
                kw["b"] = [rng.randint(1, 5) for _ in range(S)]
            else:
                kw["b_I"] = [rng.randint(1, 3) for _ in range(S)]
                kw["b_W"] = [rng.randint(1, 3) for _ in range(S)]
            inst = Instance(**kw)
            if not inst.uniform:
                return inst
    if region == "backward":
        m = rng.randint(3, 6)
        return Instance(P=rng.randint(2, 4), m=m, K=rng.randint(1, min(3, m - 1)),
                        f=rng.randint(1, 3), b_I=rng.randint(1, 3), b_W=rng.randint(1, 3))
    raise ValueError(f"unknown region {region!r}; expected one of {ORDER}")


def solve_row(region: str, inst: Instance, time_limit: float) -> dict:
    """Solve ``inst`` without the theory and compare it with the bound (module docstring)."""
    from bounds import lower_bound

    backward = region == "backward"
    t0 = time.process_time()
    if backward:
        from pipebounds.search.cpsat import solve_cpsat

        res = solve_cpsat(inst, time_limit=time_limit, workers=1, use_theory=False,
                          backward=True)
    else:
        from pipebounds.search import solve

        res = solve(inst, time_limit=time_limit, engine="cpsat", use_known=False,
                    use_theory=False)
    cpu = time.process_time() - t0
    lb = lower_bound(inst, backward_remat=backward)
    row = {**inst.to_dict(), "region": region, "model": "backward" if backward else "plain",
           "status": res.status, "opt": None if res.makespan is None else str(res.makespan),
           "lb": str(lb.value), "exact": bool(lb.exact), "binding": list(lb.binding),
           "cpu": round(cpu, 3)}
    if res.schedule is not None:
        sim = simulate(res.schedule)
        if not sim.valid or sim.makespan != res.makespan:
            raise AssertionError(f"the solver's schedule of {inst.to_dict()} re-simulates to "
                                 f"{sim.makespan} (valid={sim.valid}), not {res.makespan}")
        row["orders"] = res.schedule.to_strings()
    return row


def violations(row: dict) -> list[str]:
    """What is wrong with the bound on ``row`` (empty when nothing)."""
    out = []
    if row["opt"] is None:
        return out
    opt, lb = Fraction(row["opt"]), Fraction(row["lb"])
    if lb > opt:
        out.append(f"bound {lb} above a schedule of {opt}")
    if row["status"] == "optimal" and row["exact"] and lb != opt:
        out.append(f"bound {lb} claimed exact, OPT = {opt}")
    return out


def load(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def check_stored(row: dict) -> None:
    """Re-simulate a stored row's orders to its ``opt`` (a stored file is not trusted)."""
    if row.get("orders"):
        inst = row_instance(row)
        sim = simulate(Schedule.from_strings(inst, row["orders"]))
        if not sim.valid or sim.makespan != Fraction(row["opt"]):
            raise ValueError(f"{inst.to_dict()}: stored orders give {sim.makespan}, "
                             f"not {row['opt']}")


def _stats_line(label: str, rows: list[dict], target: str) -> str:
    """One table line: drawn, proven, LB = OPT, mean and worst OPT/LB of the proven rows."""
    proven = [r for r in rows if r["status"] == "optimal"]
    ratios = [(Fraction(r["opt"]) / Fraction(r["lb"]), r) for r in proven]
    if not ratios:
        return f"| {label} | {len(rows)} | 0 | | | | | {target} |"
    worst, wrow = max(ratios, key=lambda t: t[0])
    mean = sum(t[0] for t in ratios) / len(ratios)
    inst = {k: wrow[k] for k in ("P", "m", "K", "v") if k in wrow}
    return (f"| {label} | {len(rows)} | {len(proven)} | {sum(t[0] == 1 for t in ratios)} | "
            f"{float(mean):.4f} | {float(worst):.4f} | {inst}: {wrow['opt']} / {wrow['lb']} | "
            f"{target} |")


def summary(rows: list[dict]) -> tuple[list[str], int]:
    """Markdown tables (the tool's six regions, then issue 25's regions with its targets) and
    the number of violations."""
    head = ("| {} | drawn | proven | LB = OPT | mean OPT/LB | worst OPT/LB | loosest (OPT / LB) "
            "| target mean / worst |")
    rule = "| --- | --- | --- | --- | --- | --- | --- | --- |"
    lines = [head.format("region"), rule]
    lines += [_stats_line(region, [r for r in rows if r["region"] == region], "-")
              for region in ORDER]
    lines += ["", head.format("issue 25's region"), rule]
    lines += [_stats_line(label, [r for r in rows if pred(r)], target)
              for label, pred, target in ISSUE_REGIONS]
    return lines, sum(bool(violations(r)) for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2612)
    ap.add_argument("--cpu", type=float, default=2400.0, help="CPU seconds of solving")
    ap.add_argument("--time-limit", type=float, default=20.0, help="wall seconds per solve")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--summary", action="store_true", help="print the table of --out only")
    args = ap.parse_args(argv)
    rows = load(args.out)
    for r in rows:
        check_stored(r)
    if not args.summary:
        import tightness_by_region

        stored = {instance_key(i) for i, _, _, _ in tightness_by_region.rows()}
        rng = random.Random(args.seed)
        seen = {(instance_key(row_instance(r)), r["region"]) for r in rows}
        t_start = time.process_time()
        k = 0
        with open(args.out, "a") as out:
            while time.process_time() - t_start < args.cpu:
                region = ORDER[k % len(ORDER)]
                k += 1
                inst = draw(region, rng)
                key = instance_key(inst)
                if (key, region) in seen or key in stored:
                    continue
                seen.add((key, region))
                row = solve_row(region, inst, args.time_limit)
                rows.append(row)
                out.write(json.dumps(row) + "\n")
                out.flush()
                flag = "; ".join(violations(row))
                print(f"{region:9s} {row['status']:8s} opt={row['opt']} lb={row['lb']} "
                      f"cpu={row['cpu']:.1f} {flag}", flush=True)
    lines, bad = summary(rows)
    print("\n".join(lines))
    print(f"violations: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
