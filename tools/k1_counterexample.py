"""The K = 1, f <= b question (issue 13): record an instance with f <= b where T3 < OPT.

At ``P = 3, m = 24, f = 5, b = 8`` (``f < b``) two independent arguments give ``OPT > T3 = 416``:

- the theorem T3d (docs/theory.md A.6, proven; check ``coupled_slot_valid``) evaluates to 417;
- the branch-and-bound engine run *without any bound of ``bounds/``* (``use_theory=False``,
  ``use_known=False``) exhausts every makespan up to 416: its proven lower bound is 417.

This script re-runs the engine (``--time-limit`` seconds, default 150) and appends one JSON line
to data/k1_counterexamples.jsonl: the instance, T3, T3d, the engine's status, proven lower bound
and best makespan (its schedule's orders too), read by ``python -m proofs_checks.evidence``.

    python tools/k1_counterexample.py [P m f b] [--time-limit 150]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bounds.single_wave import coupled_slot_value, single_slot_value  # noqa: E402
from schedules import Instance, simulate  # noqa: E402
from pipebounds.search import solve  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "data" / "k1_counterexamples.jsonl"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("size", type=int, nargs="*", default=[3, 24, 5, 8], help="P m f b")
    ap.add_argument("--time-limit", type=float, default=150.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    P, m, f, b = args.size
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    t0 = time.perf_counter()
    res = solve(inst, time_limit=args.time_limit, engine="search", use_theory=False,
                use_known=False)
    row = {"P": P, "m": m, "f": f, "b": b, "K": 1, "t3": str(single_slot_value(inst)),
           "t3d": str(coupled_slot_value(inst)), "engine": "search", "use_theory": False,
           "use_known": False, "time_limit": args.time_limit, "status": res.status,
           "lower": str(res.lower_bound),
           "best": None if res.makespan is None else str(res.makespan),
           "seconds": round(time.perf_counter() - t0, 1)}
    if res.schedule is not None:
        sim = simulate(res.schedule)
        assert sim.valid and max(sim.peak_memory) <= 1 and sim.makespan == res.makespan, row
        row["orders"] = res.schedule.to_strings()
    with args.out.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k != "orders"}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
