"""How much the optimum beats the fixed recomputation rules (docs/remat.md, *Fixed rules*).

For every instance of a small grid (families ``1f1b``, ``gpipe`` (``v = 1``, ``f = 1, b = 2``),
``interleaved`` (``v = 2``), ``zb-h1`` (split ``f = b_I = b_W = 1``); ``P`` in {2, 3, 4},
``m = 2P``; every ``K`` from 1 to the order's natural peak minus one), each policy of
:mod:`schedules.remat_policies` on the family's natural order: ``optimal`` (CP-SAT, proven),
``megatron``, ``deepspeed``, ``all``, ``none``, as makespan and ratio to the optimum. Then the
byte-budget examples: 1F1B, ``P = 4, m = 8``, per-stage activation bytes and static bytes, for
a few budgets.

    python tools/remat_policy_table.py            # prints the markdown tables (about a minute)
"""

from __future__ import annotations

import os
import sys
from fractions import Fraction as Fr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from schedules import Instance, simulate  # noqa: E402
from schedules.generators import generate  # noqa: E402
from schedules.memory import memory_from_json  # noqa: E402
from schedules.remat_policies import remat_policy  # noqa: E402

RULES = ("megatron", "deepspeed", "all", "none")


def ex(x) -> str:
    x = Fr(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def cell(r, opt) -> str:
    if not r.feasible:
        return "—"
    if opt.feasible and opt.makespan:
        return f"{ex(r.makespan)} ({float(r.makespan / opt.makespan):.3f})"
    return ex(r.makespan)


def grid():
    rows, ratios, lost = [], {k: [] for k in RULES}, {k: 0 for k in RULES}
    cases = []
    for P in (2, 3, 4):
        m = 2 * P
        cases += [("1f1b", Instance(P=P, m=m, f=1, b=2)), ("gpipe", Instance(P=P, m=m, f=1, b=2)),
                  ("interleaved", Instance(P=P, m=m, v=2, f=1, b=2)),
                  ("zb-h1", Instance(P=P, m=m, b_I=1, b_W=1))]
    for name, inst in cases:
        sched = generate(name, inst)
        natural = max(simulate(sched).peak_memory)
        for K in range(1, natural):
            opt = remat_policy(sched, "optimal", K=K, time_limit=10)
            res = {k: remat_policy(sched, k, K=K) for k in RULES}
            for k, r in res.items():
                if r.feasible and opt.feasible:
                    ratios[k].append(r.makespan / opt.makespan)
                elif opt.feasible:
                    lost[k] += 1
            rows.append(f"| {name} | {inst.P} | {inst.m} | {K} | "
                        + (f"{ex(opt.makespan)} ({opt.status})" if opt.feasible else opt.status)
                        + " | " + " | ".join(cell(res[k], opt) for k in RULES) + " |")
    return rows, ratios, lost


def byte_examples():
    mm = {"activation": [4, 3, 2, 1], "static": [6, 6, 6, 6], "budget": None}
    inst = Instance(P=4, m=8, f=1, b=2, memory=memory_from_json(mm))
    sched = generate("1f1b", inst)
    rows = []
    for budget in (10, 12, 14, 18, 22):
        opt = remat_policy(sched, "optimal", budget_bytes=budget, time_limit=10)
        res = {k: remat_policy(sched, k, budget_bytes=budget) for k in RULES}
        rows.append(f"| {budget} | " + (f"{ex(opt.makespan)} ({opt.status})" if opt.feasible
                                        else opt.status)
                    + " | " + " | ".join(cell(res[k], opt) for k in RULES) + " |")
    return rows


def main() -> None:
    rows, ratios, lost = grid()
    print("| family | P | m | K | optimal | megatron | deepspeed | all | none |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print()
    print("| rule | cells where it fits | mean ratio to the optimum | worst ratio | "
          "cells where only the optimum fits |")
    print("| --- | --- | --- | --- | --- |")
    for k in RULES:
        xs = ratios[k]
        mean = f"{float(sum(xs) / len(xs)):.3f}" if xs else "—"
        worst = f"{float(max(xs)):.3f}" if xs else "—"
        print(f"| {k} | {len(xs)} | {mean} | {worst} | {lost[k]} |")
    print()
    print("| budget (bytes) | optimal | megatron | deepspeed | all | none |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(byte_examples()))


if __name__ == "__main__":
    main()
