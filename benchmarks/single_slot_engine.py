"""CPU time of the exact ``K = 1`` engine (:mod:`pipebounds.search.single_slot`) over a grid,
and where T3 and T3d equal the optimum it proves (docs/theory.md A.6, "An exact engine").

    python benchmarks/single_slot_engine.py [--max-P 8] [--ms 2,3,...,64] [--nodes 100000]
        [--ratios 1:1,1:2,...] [--time-limit 5 | --cpu-limit 6] [--no-dominance]
        [--out data/k1_exact_sweep.jsonl]

One JSON line per instance (fused, ``v = 1``, ``K = 1``): ``P, m, f, b, t3, t3d``, the engine's
``status``, ``lower`` and ``upper`` (``upper = lower`` when optimal), ``refuted`` (makespans
proven impossible), ``nodes`` and ``cpu`` (``time.process_time`` seconds, the engine alone:
T3 and T3d are computed outside the timing). The engine starts at T3d (``use_theory``),
``--time-limit`` wall seconds per instance (or ``--cpu-limit`` CPU seconds, the process's
``time.process_time``: the same work on a loaded machine): ``optimal`` means its search found the schedule
(or the construction reached T3 = T3d) and refuted every makespan below it down to T3d.
Resumable: instances already in ``--out`` are skipped. Prints a summary at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from fractions import Fraction
from pathlib import Path
from typing import Optional

from bounds.single_wave import coupled_slot_value, single_slot_value
from pipebounds.search import SolveOptions
from pipebounds.search.single_slot import solve_single_slot
from schedules import Instance, simulate
from schedules.deadline import CpuDeadline

OUT = Path(__file__).resolve().parent.parent / "data" / "k1_exact_sweep.jsonl"
RATIOS = tuple((f, b) for f in range(1, 6) for b in range(1, 6) if math.gcd(f, b) == 1)
MS = (2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48, 56, 64)


def run(P: int, m: int, f: int, b: int, nodes: int, limit: float,
        cpu_limit: Optional[float] = None, dominance: bool = True) -> dict:
    """One instance: the engine's answer and its CPU time (module docstring); ``cpu_limit``:
    CPU seconds (a :class:`~schedules.deadline.CpuDeadline`) in place of the wall ``limit``;
    ``dominance``: L12 on (off: L11's exact-key memo only)."""
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    t3 = single_slot_value(inst)
    t3d = coupled_slot_value(inst, t3)
    c0 = time.process_time()
    deadline = None if cpu_limit is None else CpuDeadline.after(cpu_limit)
    res = solve_single_slot(inst, SolveOptions(time_limit=limit, lb_theory=t3d), nodes=nodes,
                            deadline=deadline, dominance=dominance)
    cpu = time.process_time() - c0
    row = {"P": P, "m": m, "f": f, "b": b, "t3": str(t3), "t3d": str(t3d),
           "status": res.status, "lower": str(res.lower_bound),
           "upper": None if res.makespan is None else str(res.makespan),
           "refuted": res.stats["refuted"], "nodes": res.nodes, "cpu": round(cpu, 4)}
    if res.schedule is not None:  # re-verify: valid, one activation per GPU, the makespan
        sim = simulate(res.schedule)
        assert sim.valid and max(sim.peak_memory) == 1 and sim.makespan == res.makespan, row
    return row


def summary(rows: list[dict]) -> str:
    """Counts: optimal, T3 = OPT, T3d = OPT, CPU time (total, max)."""
    opt = [r for r in rows if r["status"] == "optimal"]
    t3 = sum(Fraction(r["t3"]) == Fraction(r["upper"]) for r in opt)
    t3d = sum(Fraction(r["t3d"]) == Fraction(r["upper"]) for r in opt)
    cpu = [r["cpu"] for r in opt]
    return (f"{len(rows)} instances, {len(opt)} proven optimal; T3 = OPT on {t3}, T3d = OPT on "
            f"{t3d}; CPU of the proven: total {sum(cpu):.1f} s, max {max(cpu, default=0):.2f} s")


def table(rows: list[dict]) -> str:
    """A markdown table by ``(P, m)``: instances, proven optimal, T3 = OPT, T3d = OPT, T3d < OPT
    (proven: a makespan at or above T3d refuted), open (with the interval left)."""
    out = ["| P | m | instances | proven | T3 = OPT | T3d = OPT | T3d < OPT | open |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for P, m in sorted({(r["P"], r["m"]) for r in rows}, key=lambda k: (k[1], k[0])):
        rs = [r for r in rows if (r["P"], r["m"]) == (P, m)]
        opt = [r for r in rs if r["status"] == "optimal"]
        t3 = sum(Fraction(r["t3"]) == Fraction(r["upper"]) for r in opt)
        t3d = sum(Fraction(r["t3d"]) == Fraction(r["upper"]) for r in opt)
        above = [r for r in rs if Fraction(r["lower"]) > Fraction(r["t3d"])]
        opened = [f"{r['f']}:{r['b']} [{r['lower']}, {r['upper'] or '?'}]"
                  for r in rs if r["status"] != "optimal"]
        out.append(f"| {P} | {m} | {len(rs)} | {len(opt)} | {t3} | {t3d} | {len(above)} | "
                   f"{'; '.join(opened) or '-'} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--min-P", type=int, default=3)
    ap.add_argument("--max-P", type=int, default=8)
    ap.add_argument("--ms", default=",".join(map(str, MS)))
    ap.add_argument("--ratios", default=",".join(f"{f}:{b}" for f, b in RATIOS))
    ap.add_argument("--nodes", type=int, default=100_000, help="node budget of one decision")
    ap.add_argument("--time-limit", type=float, default=5.0, help="wall seconds per instance")
    ap.add_argument("--cpu-limit", type=float, default=None,
                    help="CPU seconds per instance (in place of --time-limit)")
    ap.add_argument("--no-dominance", action="store_true",
                    help="the decisions' memo without L12 (exact keys of L11 only)")
    ap.add_argument("--table", action="store_true", help="print the markdown table by (P, m)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    ratios = [tuple(map(int, r.split(":"))) for r in args.ratios.split(",")]
    ms = [int(x) for x in args.ms.split(",")]
    done = {}
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            r = json.loads(line)
            done[(r["P"], r["m"], r["f"], r["b"])] = r
    rows = []
    with args.out.open("a") as fh:
        for m in ms:
            for P in range(args.min_P, args.max_P + 1):
                for f, b in ratios:
                    key = (P, m, f, b)
                    if key in done:
                        rows.append(done[key])
                        continue
                    row = run(P, m, f, b, args.nodes, args.time_limit, args.cpu_limit,
                              not args.no_dominance)
                    rows.append(row)
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    print(row, flush=True)
    print(summary(rows))
    if args.table:
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
