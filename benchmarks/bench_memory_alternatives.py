"""Three ways to meet a memory limit at size that were tried instead of recomputation and left
out (docs/synthesis.md, *Stop 43*): what each makespan is against ``fit_memory``'s.

    python benchmarks/bench_memory_alternatives.py defer    # reorder instead of recompute
    python benchmarks/bench_memory_alternatives.py tail     # the last microbatches checkpointed early
    python benchmarks/bench_memory_alternatives.py warmup   # 1F1B with a shorter warm-up
    python benchmarks/bench_memory_alternatives.py relax    # one GPU alone: a bound's headroom

``defer``: where a forward would store a ``K + 1``-th activation, move it after the next release
on its GPU (within ``w`` ops; else :func:`schedules.remat.fit_memory` recomputes as usual), on
the V-shape block, interleaved 1F1B, 1F1B and Hanayo at ``P = 32, m = 128, f = b = 1``; an
order that deadlocks is reported as such. ``tail``: the synthesized schedule of the first
``m - e`` microbatches with the last ``e`` forwarded (storing nothing) after each GPU's warm-up
and recomputed and run backward at the end, at ``P = 16, m = 64, K = 8``. ``warmup``: 1F1B's
orders with ``ceil(a (P - p))`` warm-up forwards on GPU ``p``, fitted by ``fit_memory``, at
``P = 32, m = 128, K = 16``. Every schedule is simulated (valid, its peak printed). ``relax``:
CP-SAT on one GPU with the others infinitely fast
(:func:`pipebounds.search.relaxation.gpu_relaxation`, docs/theory.md A.7): what it finds caps
what any argument about that GPU alone can prove. Library calls; the numbers do not depend on
the machine except ``tail``'s synthesis (3 CPU s) and ``relax`` (CP-SAT, ``--time-limit``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from schedules import Instance, Op, Schedule, simulate  # noqa: E402
from schedules.generators import generate  # noqa: E402
from schedules.generators.building_block import block_schedule  # noqa: E402
from schedules.remat import fit_memory  # noqa: E402


def deferred(order, K: int, w: int) -> list[Op]:
    """``order`` (its ``R`` dropped) with each forward that would store a ``K + 1``-th
    activation moved after the next release of a live pair within ``w`` ops."""
    seq = [op for op in order if op.kind != "R"]
    release = "W" if any(op.kind == "W" for op in seq) else "B"
    live: set = set()
    i = 0
    while i < len(seq):
        op = seq[i]
        pair = (op.stage, op.microbatch)
        if op.kind == "F":
            if len(live) >= K:
                j = next((k for k in range(i + 1, min(len(seq), i + 1 + w))
                          if seq[k].kind == release
                          and (seq[k].stage, seq[k].microbatch) in live), None)
                if j is not None:
                    seq.insert(j, seq.pop(i))  # now right after that release
                    continue
            live.add(pair)
        elif op.kind == release:
            live.discard(pair)
        i += 1
    return seq


def run_defer() -> None:
    cases = [("block", "vshape", (33, 30, 24)), ("interleaved", "looped", (32, 28, 20)),
             ("1f1b", None, (16, 24)), ("hanayo", "vshape", (24, 16))]
    for name, placement, Ks in cases:
        inst = (Instance(P=32, m=128, f=1, b=1) if placement is None else
                Instance(P=32, m=128, v=2, placement=placement, f=1, b=1))
        base = block_schedule(inst) if name == "block" else generate(name, inst)
        for K in Ks:
            fitted = simulate(fit_memory(base, K, polish=False))
            cells = []
            for w in (1, 2, 8):
                orders = tuple(tuple(deferred(seq, K, w)) for seq in base.orders)
                sched = Schedule(inst, orders, name + "+defer")
                if not simulate(sched).valid:
                    cells.append(f"w={w}: deadlock")
                    continue
                r = simulate(fit_memory(sched, K, polish=False))
                assert r.valid and max(r.peak_memory) <= K
                cells.append(f"w={w}: {r.makespan}")
            print(f"{name} K={K}: fit_memory {fitted.makespan}; deferred " + ", ".join(cells))


def run_tail() -> None:
    from pipebounds.synthesis import synthesize

    P, m, K = 16, 64, 8
    inst = Instance(P=P, m=m, K=K, f=1, b=1)
    whole = synthesize(inst, time_limit=3, workers=1, clock="cpu")
    print(f"P={P} m={m} K={K}: synthesize (3 CPU s) {whole.makespan}")
    for e in (4, 8, 16):
        head = synthesize(inst.with_(m=m - e), time_limit=3, workers=1, clock="cpu")
        for frac in (0.5, 1.0, 2.0):
            orders = []
            for p, seq in enumerate(head.schedule.orders):
                seq = list(seq)
                at = max(1, int(frac * (P - p)))
                forwards = [i for i, op in enumerate(seq) if op.kind == "F"]
                cut = forwards[min(at, len(forwards)) - 1] + 1
                late = range(m - e, m)
                seq[cut:cut] = [Op(p, "F", j) for j in late]
                seq += [x for j in late for x in (Op(p, "R", j), Op(p, "B", j))]
                orders.append(tuple(seq))
            r = simulate(Schedule(inst, tuple(orders), "tail"))
            got = (f"{r.makespan}" if r.valid and max(r.peak_memory) <= K else
                   "invalid (" + (r.errors[0][:40] if r.errors else "peak above K") + ")")
            print(f"  e={e} (first m-e: {head.makespan}), after {frac} x (P - p) forwards: {got}")


def run_warmup() -> None:
    P, m, K = 32, 128, 16
    inst = Instance(P=P, m=m, f=1, b=1)
    for a in (0.8, 0.9, 0.95, 1.0):
        orders = []
        for p in range(P):
            w = max(1, min(m, math.ceil(a * (P - p))))
            seq = [Op(p, "F", j) for j in range(w)]
            for j in range(m):
                seq.append(Op(p, "B", j))
                if w + j < m:
                    seq.append(Op(p, "F", w + j))
            orders.append(tuple(seq))
        sched = Schedule(inst, tuple(orders), "1f1b-warmup")
        free = simulate(sched)
        r = simulate(fit_memory(sched, K, polish=False))
        assert r.valid and max(r.peak_memory) <= K
        print(f"P={P} m={m} warm-up {a} x (P - p): no limit {free.makespan} (peak "
              f"{max(free.peak_memory)}), K={K} {r.makespan}")


def run_relax(time_limit: float) -> None:
    from bounds import lower_bound
    from pipebounds.search.relaxation import gpu_relaxation

    for P, m, K, gpus in ((8, 16, 3, (1, 2)), (8, 32, 4, (0,)), (16, 64, 8, (0, 4))):
        inst = Instance(P=P, m=m, K=K, f=1, b=1)
        lb = lower_bound(inst).value
        for p in gpus:
            r = gpu_relaxation(inst, p, time_limit=time_limit, workers=2)
            print(f"P={P} m={m} K={K} f=b=1, GPU {p} alone: {r.status}, found {r.best}, proven "
                  f">= {r.value} ({time_limit:g} s); the bound {lb}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("defer", "tail", "warmup", "relax"))
    ap.add_argument("--time-limit", type=float, default=60.0, help="relax: seconds per GPU")
    a = ap.parse_args(argv)
    if a.what == "relax":
        run_relax(a.time_limit)
    else:
        {"defer": run_defer, "tail": run_tail, "warmup": run_warmup}[a.what]()


if __name__ == "__main__":
    main()
