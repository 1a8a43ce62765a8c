"""The searched microbatch ranks alone (docs/synthesis.md, *Stop 44*): what the free-order list
scheduler reaches under :func:`pipebounds.synthesis.ranks.ranked_candidates` in a time limit,
against the identity rank and the bound, on ``v = 1`` memory-bound instances.

    python benchmarks/bench_ranks.py                      # the three instances of Stop 44, 30 s
    python benchmarks/bench_ranks.py --seconds 150 --only 1
    python benchmarks/bench_ranks.py --clock cpu --seed 3

For each instance: the bound (``bounds.lower_bound``), the best of the identity rank under the
starting grid of cap profiles, the searched ranks' best after ``--seconds`` (its schedule
simulated again: valid, peak within ``K``), and that schedule's order refitted by
``fit_memory`` with its polish. Library calls on one thread; with ``--clock wall`` (the default)
the numbers depend on the machine's speed and load, with ``--clock cpu`` on its speed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bounds import lower_bound  # noqa: E402
from schedules import Instance, simulate  # noqa: E402

INSTANCES = (
    Instance(P=8, m=32, K=4, f=1, b=1),
    Instance(P=16, m=64, K=8, f=1, b=1),
    Instance(P=32, m=128, K=16, f=1, b=1),
)


def run(inst: Instance, seconds: float, clock: str, seed: int) -> dict:
    from pipebounds.synthesis.ranks import identity_best, ranked_candidates
    from pipebounds.synthesis.start import free_peak
    from schedules.remat import fit_memory

    now = time.process_time if clock == "cpu" else time.monotonic
    K = inst.K
    top = free_peak(inst)
    got = identity_best(inst, K, top)
    ident = got[0].makespan if got is not None else None
    lb = lower_bound(inst).value
    t0 = now()
    cands = ranked_candidates(inst, K, t0 + seconds, seed=seed, top=top, target=lb, now=now)
    out = {"bound": lb, "identity": ident, "seconds": now() - t0}
    if cands:
        best = cands[0]
        res = simulate(best.schedule.with_instance(inst))
        assert res.valid and max(res.peak_memory) <= K and res.makespan == best.makespan
        out["ranks"] = best.makespan
        if best.base is not None:
            pol = simulate(fit_memory(best.base, K, polish=True).with_instance(inst))
            assert pol.valid and max(pol.peak_memory) <= K
            out["polished"] = pol.makespan
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="the search's limit (30)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default=None, help="comma-separated indices of INSTANCES")
    args = ap.parse_args(argv)
    chosen = range(len(INSTANCES)) if args.only is None else \
        [int(x) for x in args.only.split(",")]
    print("| instance | bound | identity rank | searched ranks | polished | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for i in chosen:
        inst = INSTANCES[i]
        r = run(inst, args.seconds, args.clock, args.seed)
        print(f"| P={inst.P} m={inst.m} K={inst.K} | {r['bound']} | {r['identity']} | "
              f"{r.get('ranks')} | {r.get('polished')} | {r['seconds']:.1f} ({args.clock}) |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
