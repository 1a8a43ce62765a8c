"""Store the optima (with their schedules) of two check ranges that keep none on disk, for the
table *Tightness by region* of docs/theory.md (tools/tightness_by_region.py reads them).

    python tools/region_optima.py hetero     # data/heterogeneous_optima.jsonl
    python tools/region_optima.py backward   # data/backward_remat_optima.jsonl

``hetero``: the 600 per-stage / delay instances of the check ``heterogeneous_memory_bounds``
(``--full``: :func:`proofs_checks.heterogeneous.random_instances` with its seed, ``K`` in
``{1, 2, 3}``), each solved by the search engine with ``use_theory=False, use_known=False``
(30 s). ``backward``: the ``v = 1`` part of the ``--full`` range of ``backward_remat_valid``
(:func:`proofs_checks.backward_remat.full_range`, 459 split instances), each solved by the
CP-SAT model of the full model (backward ``R`` allowed, ``use_theory=False``, one worker,
20 s). One JSON line per instance: ``Instance.to_dict()`` with ``status``, ``opt`` (exact
string), ``engine``, ``model`` (``plain`` or ``backward``), ``cpu`` (``time.process_time``
seconds of the solve in this process) and ``orders`` (the best schedule's per-GPU actions, to
re-simulate). Optima proven without any bound of ``bounds/``, so the rows can judge the bounds.
"""

from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

OUT = {"hetero": os.path.join(ROOT, "data", "heterogeneous_optima.jsonl"),
       "backward": os.path.join(ROOT, "data", "backward_remat_optima.jsonl")}


def instances(which: str) -> list:
    if which == "hetero":
        from proofs_checks.heterogeneous import MEMORY_COUNTS, MEMORY_SEED, random_instances

        return random_instances(MEMORY_COUNTS["full"], seed=MEMORY_SEED, Ks=(1, 2, 3))
    from proofs_checks.backward_remat import full_range

    return [i for i in full_range() if i.v == 1]


def solve_one(which: str, inst) -> dict:
    t = time.process_time()
    if which == "hetero":
        from pipebounds.search import solve

        res = solve(inst, time_limit=30, engine="search", use_known=False, use_theory=False)
        engine, model = "search", "plain"
    else:
        from pipebounds.search.cpsat import solve_cpsat

        res = solve_cpsat(inst, time_limit=20, workers=1, use_theory=False, backward=True)
        engine, model = "cpsat", "backward"
    row = {**inst.to_dict(), "status": res.status,
           "opt": None if res.makespan is None else str(res.makespan), "engine": engine,
           "model": model, "cpu": round(time.process_time() - t, 3)}
    if res.schedule is not None:
        row["orders"] = res.schedule.to_strings()
    return row


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in OUT:
        print("usage: python tools/region_optima.py hetero|backward", file=sys.stderr)
        return 2
    which = argv[0]
    with open(OUT[which], "w") as fh:
        for inst in instances(which):
            fh.write(json.dumps(solve_one(which, inst)) + "\n")
            fh.flush()
    print(OUT[which])
    return 0


if __name__ == "__main__":
    sys.exit(main())
