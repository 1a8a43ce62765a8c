"""Exact optima of small multi-wave instances with finite ``K`` in split form (issue 25).

The optima table (pipebounds/data/optima.jsonl) holds fused two-wave rows only; this sweep adds
split ones, where the multi-wave bounds were loosest: ``v = 2``, both placements, ``P`` in
``{2, 3}``, ``m`` in ``{2, 3, 4}``, ``2 <= K <= 4`` with ``K < 2m``, and six duration triples
``(f, b_I, b_W)``. Every instance is solved by CP-SAT with ``use_theory=False`` (no bound of
:mod:`bounds` in the model, no known schedule), so the optima can check the bounds without
circularity; each row keeps the optimal orders, which the check re-simulates.

    python tools/multiwave_finite_k.py [--time-limit 20] [--out FILE]

One JSON line per instance (resumable: instances already in ``--out`` are skipped):
``Instance.to_dict()`` and ``status``, ``opt`` (exact string), ``cpu`` (CPU seconds of this
process), ``orders`` (per-GPU action strings). Read by ``proofs_checks.multi_wave``
(``split_memory_finite_K``).
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import product
from pathlib import Path

from schedules import Instance

OUT = Path(__file__).resolve().parent.parent / "data" / "multiwave_finite_k_split.jsonl"
TRIPLES = ((2, 3, 1), (1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 2), (1, 3, 1))


def instances() -> list[Instance]:
    """The sweep, in its order."""
    return [Instance(P=Pn, m=mn, K=Kn, v=2, placement=pl, f=f, b_I=bi, b_W=bw)
            for Pn, mn, Kn, pl, (f, bi, bw) in product((2, 3), (2, 3, 4), (2, 3, 4),
                                                       ("vshape", "looped"), TRIPLES)
            if Kn < 2 * mn]


def main(argv=None) -> int:
    from pipebounds.search import solve

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    done = set()
    if args.out.exists():
        done = {json.dumps(Instance.from_dict(json.loads(line)).to_dict(), sort_keys=True)
                for line in args.out.read_text().splitlines() if line.strip()}
    with args.out.open("a") as out:
        for inst in instances():
            key = json.dumps(inst.to_dict(), sort_keys=True)
            if key in done:
                continue
            t0 = time.process_time()
            r = solve(inst, time_limit=args.time_limit, use_known=False, use_theory=False,
                      engine="cpsat")
            row = inst.to_dict()
            row.update(status=r.status, opt=None if r.makespan is None else str(r.makespan),
                       cpu=round(time.process_time() - t0, 3),
                       orders=None if r.schedule is None else
                       [[str(op) for op in seq] for seq in r.schedule.orders])
            out.write(json.dumps(row) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
