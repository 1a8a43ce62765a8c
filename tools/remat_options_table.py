"""What the remat paper's option set buys (docs/remat.md, *The option set*).

For the natural orders of ``1f1b``, ``zb-h1``, ``zb-h2`` (split ``f = b_I = b_W = 1``), ``P`` in
{2, 3, 4}, ``m = 2P``, a bytes model with ``a_s = 4``, ``g_s = 3`` (the bytes ``W`` needs), of
which ``d_s = 2`` are gradients, optional transients (``I`` and ``RI`` 1 byte, ``R`` 1 byte),
and every byte budget from the least that fits with all three options to the natural peak:
:func:`schedules.remat_optimal.optimal_remat` with options ``1``, ``1,2`` and ``1,2,3``
(CP-SAT, one worker; every cell proven optimal or infeasible, or marked). Prints the markdown
table of docs/remat.md (one row per family, ``P`` and transients: the least budget each option
set fits, on how many budgets option 3 is strictly better than options 1,2, the largest ratio
there) and a summary with the CPU seconds (``time.process_time``); ``--all`` also prints every
cell.

    python tools/remat_options_table.py [--all]      # about 25 CPU seconds
"""

from __future__ import annotations

import os
import sys
import time
from fractions import Fraction as Fr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from schedules import Instance, simulate  # noqa: E402
from schedules.generators import generate  # noqa: E402
from schedules.memory import MemoryModel  # noqa: E402
from schedules.remat_optimal import optimal_remat  # noqa: E402

SETS = ((1,), (1, 2), (1, 2, 3))


def ex(x) -> str:
    x = Fr(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def cell(r) -> str:
    if r.status == "infeasible":
        return "—"
    mark = "" if r.status == "optimal" else f" ({r.status})"
    return ex(r.makespan) + mark


def main() -> None:
    rows, stats = [], {"cells": 0, "better3": 0, "only3": 0, "better2": 0, "cpu": 0.0,
                       "max": 0.0, "unproven": 0}
    for transient in ({}, {"I": 1, "RI": 1, "R": 1}):
        for fam in ("1f1b", "zb-h1", "zb-h2"):
            for P in (2, 3, 4):
                m = 2 * P
                mm = MemoryModel(activation=[4] * P, kept_after_input=[3] * P,
                                 kept_gradient=[2] * P, transient=transient)
                base = generate(fam, Instance(P=P, m=m, f=1, b_I=1, b_W=1, memory=mm))
                top = int(max(simulate(base).peak_bytes))
                for budget in range(1, top + 1):
                    res = {}
                    for opts in SETS:
                        t0 = time.process_time()
                        res[opts] = optimal_remat(base, budget_bytes=budget, options=opts)
                        dt = time.process_time() - t0
                        stats["cpu"] += dt
                        stats["max"] = max(stats["max"], dt)
                        stats["unproven"] += res[opts].status not in ("optimal", "infeasible")
                    if res[(1, 2, 3)].status == "infeasible":
                        continue
                    stats["cells"] += 1
                    v1, v2, v3 = (res[o].makespan for o in SETS)
                    if v2 is not None and (v1 is None or v2 < v1):
                        stats["better2"] += 1
                    if v3 is not None and (v2 is None or v3 < v2):
                        stats["better3"] += 1
                        stats["only3"] += v2 is None
                    rows.append((fam, P, m, budget, "yes" if transient else "no",
                                 *(cell(res[o]) for o in SETS),
                                 len(res[(1, 2, 3)].input_recomputed)))
    if "--all" in sys.argv:
        print("| family | P | m | budget (bytes) | transients | options 1 | options 1,2 | "
              "options 1,2,3 | RI ops |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            print("| " + " | ".join(str(x) for x in r) + " |")
        print()
    print("| family | P | m | transients | budgets | least budget that fits: 1 / 1,2 / 1,2,3 | "
          "option 3 strictly better (fits only with it) | largest (1,2) / (1,2,3) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    groups: dict = {}
    for r in rows:
        groups.setdefault(r[:3] + (r[4],), []).append(r)
    for (fam, P, m, tr), rs in groups.items():
        least = []
        for col in (5, 6, 7):
            fit = [r[3] for r in rs if r[col] != "—"]
            least.append(str(min(fit)) if fit else "—")
        better = [r for r in rs if r[7] != "—" and (r[6] == "—" or Fr(r[6]) > Fr(r[7]))]
        only = sum(1 for r in better if r[6] == "—")
        ratios = [Fr(r[6]) / Fr(r[7]) for r in better if r[6] != "—"]
        worst = f"{float(max(ratios)):.3f}" if ratios else "—"
        print(f"| {fam} | {P} | {m} | {tr} | {rs[0][3]}..{rs[-1][3]} | {' / '.join(least)} | "
              f"{len(better)} ({only}) | {worst} |")
    print()
    print(f"{stats['cells']} cells where some choice fits; option 2 improves on option 1 in "
          f"{stats['better2']}; option 3 improves on options 1,2 in {stats['better3']} "
          f"(of which {stats['only3']} fit only with it); not proven: {stats['unproven']}; "
          f"CPU {stats['cpu']:.1f} s over {3 * len(rows)}+ solves, max {stats['max']:.2f} s.")


if __name__ == "__main__":
    main()
