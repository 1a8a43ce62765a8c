"""The K = 1 question, decision form (docs/theory.md, T3; issue 13): is there a ``K = 1``
schedule of makespan at most T3?

For an instance where the construction misses and no search found a schedule of makespan T3
(the open rows of data/k1_question.jsonl), this asks CP-SAT the decision question directly: the
exact model of :mod:`pipebounds.search.cpsat`, built without any bound of ``bounds/``
(``use_theory=False``), with the constraint ``makespan <= T3`` added. The answer is a proof
either way:

- ``infeasible``: no schedule of makespan ``<= T3`` exists, so ``OPT > T3`` and, durations being
  integers (every makespan an integer), ``OPT >= T3 + 1``: T3 is not exact there;
- ``feasible``: CP-SAT returns a schedule, re-simulated here (valid, one activation per GPU,
  makespan ``<= T3``): T3 = OPT there;
- ``unknown``: the time limit ran out.

One JSON line per run is appended to ``--out`` (default data/k1_decision.jsonl), read by
``python -m proofs_checks.evidence``.

    python tools/k1_decision.py P m f b [--time-limit 1800] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bounds.single_wave import single_slot_value  # noqa: E402
from schedules import Instance, simulate  # noqa: E402
from pipebounds.search import cpsat  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "data" / "k1_decision.jsonl"


def decide(P: int, m: int, f: int, b: int, time_limit: float, workers: int = 1) -> dict:
    """The decision row of one instance (keys as in the module docstring)."""
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    t3 = single_slot_value(inst)
    t0 = time.perf_counter()
    built = cpsat.build(inst, use_theory=False)
    unit = built.mdl.unit
    limit = int(t3 * unit)          # T3 in the model's time units (durations are integers)
    assert limit == t3 * unit
    built.model.add(built.T <= limit)
    solver, code = cpsat.run(built, time_limit, workers)
    res = cpsat.result(built, solver, code, time.perf_counter() - t0)
    row = {"P": P, "m": m, "f": f, "b": b, "K": 1, "t3": str(t3), "question": "makespan <= T3",
           "status": {"optimal": "feasible", "feasible": "feasible"}.get(res.status,
                                                                          res.status),
           "engine": "cpsat", "use_theory": False, "time_limit": time_limit,
           "workers": workers, "seconds": round(time.perf_counter() - t0, 1),
           "conflicts": res.stats.get("conflicts")}
    if res.schedule is not None:
        sim = simulate(res.schedule)
        assert sim.valid and max(sim.peak_memory) <= 1 and sim.makespan <= t3, row
        row["makespan"] = str(sim.makespan)
        row["orders"] = res.schedule.to_strings()
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for k in ("P", "m", "f", "b"):
        ap.add_argument(k, type=int)
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    row = decide(args.P, args.m, args.f, args.b, args.time_limit, args.workers)
    with args.out.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k != "orders"}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
