"""Validate + simulate speed on large schedules (issue 2 target: >= 1,000,000 ops/s, one core).

Prints ops/s for 1F1B at P = 64, m = 4096 (524,288 ops) and a few other shapes, best of N runs,
both from a built Schedule (validate + simulate) and from an orders document (parse too).

    python benchmarks/bench_simulate.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time

from schedules import Instance, Op, Schedule, schedule_from_document, simulate


def one_f_one_b(P: int, m: int, split: bool = False) -> list[list[Op]]:
    orders = []
    for p in range(P):
        warm = min(P - p, m)
        seq = [Op(p, "F", j) for j in range(warm)]
        nxt = warm
        for j in range(m):
            seq += [Op(p, "I", j), Op(p, "W", j)] if split else [Op(p, "B", j)]
            if nxt < m:
                seq.append(Op(p, "F", nxt))
                nxt += 1
        orders.append(seq)
    return orders


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cases = [("1F1B", 64, 4096, False, "3/2"), ("1F1B split", 32, 4096, True, 1),
             ("1F1B", 8, 65536, False, 2)]
    print(f"{'schedule':<12} {'P':>4} {'m':>6} {'ops':>9} {'validate+simulate ops/s':>24} "
          f"{'parse+validate+simulate ops/s':>30}")
    for name, P, m, split, b in cases:
        inst = Instance(P=P, m=m, f=1, **({"b_I": 1, "b_W": 1} if split else {"b": b}))
        sched = Schedule(inst, one_f_one_b(P, m, split))
        res = simulate(sched)
        assert res.valid, res.errors[:3]
        n = sched.num_ops
        t_sim = best(lambda: simulate(sched), args.repeat)
        doc = {"P": P, "m": m, "durations": {"F": 1, **({"I": 1, "W": 1} if split else {"B": b})},
               "orders": sched.to_strings()}
        t_all = best(lambda: simulate(schedule_from_document(doc)), max(1, args.repeat // 2))
        print(f"{name:<12} {P:>4} {m:>6} {n:>9} {n / t_sim:>24,.0f} {n / t_all:>30,.0f}")


if __name__ == "__main__":
    main()
