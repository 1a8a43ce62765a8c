"""The single-GPU relaxation Psi_p (docs/theory.md A.7) against bounds.lower_bound on a grid of
split, v = 1, finite-K instances: one JSON line per (instance, GPU).

    PYTHONPATH=. python tools/split_relaxation_grid.py OUT.jsonl [--limit S] [--P 2,3] [--K 1,2]
        [--mmax 12] [--durs 1,2] [--gpus all|0]
    PYTHONPATH=. python tools/split_relaxation_grid.py OUT.jsonl --annotate

Each line: P, m, K, f, b_I, b_W, gpu; the relaxation's proven value ``psi`` (CP-SAT's objective
bound, a lower bound on ``Ψ_p`` even when stopped early), its best relaxed makespan ``best``
(None: none found; an upper bound on ``Ψ_p``), ``optimal`` (``psi == best``), ``cpu`` (CPU
seconds of the call, time.process_time, one CP-SAT worker); and, rewritten by ``--annotate``
with the current code, ``lower_bound`` (:func:`bounds.lower_bound`), ``lower_bound_without_s4``
(its largest term other than S4's) and ``s4`` (S4's term of this GPU,
:func:`bounds.single_wave.split_window_fill_gpu_value`; None outside ``K = 2 < m``). Values are
exact Fractions written as strings. Runs already in OUT are skipped, so the script resumes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time

import bounds
from pipebounds.search.relaxation import gpu_relaxation
from schedules import Instance


def rows(out: str):
    if not os.path.exists(out):
        return set()
    with open(out) as fh:
        return {(r["P"], r["m"], r["K"], r["f"], r["b_I"], r["b_W"], r["gpu"])
                for r in map(json.loads, fh)}


def annotate(row: dict) -> dict:
    """``row`` with the bound columns of the current code (module docstring)."""
    from bounds.single_wave import split_window_fill_gpu_value

    inst = Instance(P=row["P"], m=row["m"], K=row["K"], f=row["f"], b_I=row["b_I"],
                    b_W=row["b_W"])
    lb = bounds.lower_bound(inst)
    s4 = (split_window_fill_gpu_value(inst, row["gpu"]) if inst.K == 2 and inst.m > 2
          else None)
    return {**row, "lower_bound": str(lb.value),
            "lower_bound_without_s4": str(max(x for n, x in lb.terms
                                              if n != "split_window_fill")),
            "s4": None if s4 is None else str(s4)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--limit", type=float, default=3.0)
    ap.add_argument("--P", default="2,3,4,5,6")
    ap.add_argument("--K", default="1,2,3,4")
    ap.add_argument("--mmax", type=int, default=12)
    ap.add_argument("--durs", default="1,2")
    ap.add_argument("--gpus", default="all")
    ap.add_argument("--annotate", action="store_true",
                    help="rewrite the bound columns of OUT with the current code and stop")
    a = ap.parse_args()
    if a.annotate:
        with open(a.out) as fh:
            lines = [annotate(json.loads(line)) for line in fh if line.strip()]
        with open(a.out, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in lines)
        return
    done = rows(a.out)
    durs = [int(x) for x in a.durs.split(",")]
    with open(a.out, "a") as fh:
        for P in map(int, a.P.split(",")):
            for K in map(int, a.K.split(",")):
                for m in range(K + 1, a.mmax + 1):
                    for f, bi, bw in itertools.product(durs, repeat=3):
                        inst = Instance(P=P, m=m, K=K, f=f, b_I=bi, b_W=bw)
                        gpus = range(P) if a.gpus == "all" else map(int, a.gpus.split(","))
                        for g in gpus:
                            if (P, m, K, f, bi, bw, g) in done:
                                continue
                            t = time.process_time()
                            r = gpu_relaxation(inst, g, time_limit=a.limit)
                            row = dict(P=P, m=m, K=K, f=f, b_I=bi, b_W=bw, gpu=g,
                                       psi=str(r.value),
                                       best=None if r.best is None else str(r.best),
                                       optimal=r.optimal,
                                       cpu=round(time.process_time() - t, 2))
                            fh.write(json.dumps(annotate(row)) + "\n")
                            fh.flush()


if __name__ == "__main__":
    main()
