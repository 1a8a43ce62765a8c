"""S4 (split window fill, ``K = 2``) against fresh optima where it lifts the bound.

    python tools/s4_fresh_check.py [--seed 2026] [--count 14] [--time-limit 30] [--out FILE]

Draws random split ``v = 1``, ``K = 2`` instances (``P`` in 3..5, ``m`` in 5..12, ``f, b_I, b_W``
in 1..4; seeded), keeps those where S4 is above every other term of ``bounds.lower_bound`` (so
S4 alone decides the bound), and solves each with CP-SAT without the theory
(``use_theory=False``: no bound of ``bounds/`` in the model) for ``--time-limit`` wall seconds.
One JSON line per instance: the instance, S4, the largest other term, the solver's status, best
makespan and proven lower bound, ``below_s4`` (a schedule shorter than S4 was found: S4 refuted)
and the CPU seconds of the solve (``time.process_time``). Any schedule, proven optimal or not,
that is shorter than S4 would refute it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from bounds import lower_bound
    from bounds.single_wave import split_window_fill_value
    from pipebounds.search import solve
    from schedules import Instance

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--count", type=int, default=14)
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--out", default=None, help="also append the JSON lines to this file")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    seen: set = set()
    done = refuted = 0
    while done < args.count:
        P, m = rng.randint(3, 5), rng.randint(5, 12)
        f, b_I, b_W = (rng.randint(1, 4) for _ in range(3))
        inst = Instance(P=P, m=m, K=2, f=f, b_I=b_I, b_W=b_W)
        if inst in seen:
            continue
        seen.add(inst)
        s4 = split_window_fill_value(inst)
        others = max(x for name, x in lower_bound(inst).terms if name != "split_window_fill")
        if s4 <= others:
            continue
        t = time.process_time()
        r = solve(inst, time_limit=args.time_limit, engine="cpsat", use_theory=False)
        below = r.makespan is not None and r.makespan < s4
        done += 1
        refuted += below
        row = dict(P=P, m=m, f=f, b_I=b_I, b_W=b_W, s4=str(s4), others=str(others),
                   status=r.status, best=None if r.makespan is None else str(r.makespan),
                   proven_lb=str(r.lower_bound), below_s4=below,
                   cpu=round(time.process_time() - t, 1))
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    print(f"# {done} instances where S4 lifts the bound; S4 refuted on {refuted}",
          file=sys.stderr)
    return 1 if refuted else 0


if __name__ == "__main__":
    sys.exit(main())
