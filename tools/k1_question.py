"""The K = 1 question for f <= b (docs/theory.md, T3; issue 13): is T3 = OPT for every size?

For every instance of the sweep (fused, ``v = 1``, ``K = 1``, ``f <= b`` with ``f, b <= 5``
coprime, ``3 <= P <= P_max``, ``2 <= m <= m_max``) this tries the ``K = 1`` construction
(:func:`pipebounds.constructions.single_wave.single_slot_schedule`): a returned schedule is valid,
holds one activation per GPU and has makespan T3, so it *proves* T3 = OPT for that instance.
On a miss the exact CP-SAT model runs without any bound of ``bounds`` (``use_theory=False``) to
decide whether T3 < OPT (a counterexample) or T3 = OPT (the construction's fault).

    python tools/k1_question.py [--max-P 6] [--max-m 16] [--time-limit 300] [--out FILE]

One JSON line per instance (resumable: instances already in ``--out`` are skipped): ``P, m, f,
b, t3, certified, seconds`` and, on a miss, ``opt, status, engine_seconds``. Read by
``python -m proofs_checks.evidence``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from bounds.single_wave import single_slot_value
from schedules import Instance, simulate
from pipebounds.constructions.single_wave import single_slot_schedule

OUT = Path(__file__).resolve().parent.parent / "data" / "k1_question.jsonl"
RATIOS = tuple((f, b) for b in range(1, 6) for f in range(1, b + 1) if math.gcd(f, b) == 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-P", type=int, default=6)
    ap.add_argument("--max-m", type=int, default=16)
    ap.add_argument("--min-m", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["P"], r["m"], r["f"], r["b"]))
    insts = sorted(((P, m, f, b) for P in range(3, args.max_P + 1)
                    for m in range(args.min_m, args.max_m + 1) for f, b in RATIOS),
                   key=lambda t: (t[1], t[0], t[3] / t[2]))
    with args.out.open("a") as fh:
        for P, m, f, b in insts:
            if (P, m, f, b) in done:
                continue
            inst = Instance(P=P, m=m, K=1, f=f, b=b)
            t3 = single_slot_value(inst)
            t0 = time.perf_counter()
            sched = single_slot_schedule(inst)
            row = {"P": P, "m": m, "f": f, "b": b, "t3": str(t3), "certified": sched is not None,
                   "seconds": round(time.perf_counter() - t0, 3)}
            if sched is not None:  # re-verify the certificate here: valid, 1 activation, T3
                sim = simulate(sched)
                assert sim.valid and max(sim.peak_memory) == 1 and sim.makespan == t3, row
            else:
                from pipebounds.search import solve

                t1 = time.perf_counter()
                res = solve(inst, time_limit=args.time_limit, engine="cpsat",
                            use_theory=False, use_known=True)
                row.update(opt=None if res.makespan is None else str(res.makespan),
                           status=res.status,
                           lower=str(res.lower_bound) if getattr(res, "lower_bound", None)
                           is not None else None,
                           engine_seconds=round(time.perf_counter() - t1, 1))
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
