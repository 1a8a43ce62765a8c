"""Where the ``K = 1`` construction alone proves the optimum on the rows the exact engine left
open (docs/theory.md A.6, "An exact engine for K = 1", *The construction with a CPU budget*).

    python tools/k1_construction_reach.py [--cpu-limit 40] [--grid data/k1_exact_grid_cpu6.jsonl]
        [--out data/k1_construction_reach.jsonl]

For every row of ``--grid`` (the engine's 6-CPU-s table) whose status is not ``optimal`` and
where T3 = T3d, it runs :func:`pipebounds.constructions.single_wave.single_slot.single_slot_schedule`
(explicit schedules, the bounded search, structured starts, the hill climb) under a
``CpuDeadline`` of ``--cpu-limit`` CPU seconds (``time.process_time``). That function returns a
schedule only when its makespan equals Theorem 3's bound T3, a lower bound on ``OPT``; the
schedule is re-simulated here (valid, at most one activation per GPU, makespan T3), so a row
with ``reached`` true has ``OPT = T3`` proven by a schedule meeting a proven bound. ``reached``
false proves nothing (the construction's search is incomplete). One JSON line per row: ``P, m,
f, b, t3, reached, cpu, cpu_limit`` and ``makespan`` when reached. Resumable: rows already in
``--out`` are skipped.
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction
from pathlib import Path

from pipebounds.constructions.single_wave.single_slot import single_slot_schedule
from schedules import Instance, simulate
from schedules.deadline import CpuDeadline

ROOT = Path(__file__).resolve().parent.parent


def reach(row: dict, cpu_limit: float) -> dict:
    """The construction on one open row (module docstring)."""
    inst = Instance(P=row["P"], m=row["m"], K=1, f=row["f"], b=row["b"])
    c0 = time.process_time()
    sched = single_slot_schedule(inst, deadline=CpuDeadline.after(cpu_limit))
    cpu = time.process_time() - c0
    out = {"P": row["P"], "m": row["m"], "f": row["f"], "b": row["b"], "t3": row["t3"],
           "reached": sched is not None, "cpu": round(cpu, 2), "cpu_limit": cpu_limit}
    if sched is not None:
        sim = simulate(sched)
        if not (sim.valid and max(sim.peak_memory) == 1 and sim.makespan == Fraction(row["t3"])):
            raise AssertionError(f"construction schedule does not re-simulate to T3: {out}")
        out["makespan"] = str(sim.makespan)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu-limit", type=float, default=40.0)
    ap.add_argument("--grid", type=Path, default=ROOT / "data" / "k1_exact_grid_cpu6.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "k1_construction_reach.jsonl")
    a = ap.parse_args(argv)
    rows = [json.loads(line) for line in a.grid.read_text().splitlines() if line.strip()]
    done = set()
    if a.out.exists():
        done = {(r["P"], r["m"], r["f"], r["b"])
                for r in map(json.loads, a.out.read_text().splitlines())}
    todo = sorted((r for r in rows if r["status"] != "optimal" and r["t3"] == r["t3d"]
                   and (r["P"], r["m"], r["f"], r["b"]) not in done),
                  key=lambda r: (r["P"] * r["m"], r["P"]))
    for r in todo:
        out = reach(r, a.cpu_limit)
        print(json.dumps(out), flush=True)
        with a.out.open("a") as fh:
            fh.write(json.dumps(out) + "\n")
    got = [json.loads(line) for line in a.out.read_text().splitlines()] if a.out.exists() else []
    print(f"{sum(r['reached'] for r in got)} of {len(got)} open rows reached at T3 (OPT = T3)")


if __name__ == "__main__":
    main()
