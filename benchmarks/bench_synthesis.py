"""Synthesis quality (docs/synthesis.md): certified gap against seconds, against ``best``, and
against the zero-bubble heuristic on its published instances.

    python benchmarks/bench_synthesis.py set [--time-limit S] [--clock wall|cpu] [--only I,J]
                                             [--best-limit S] [--out FILE]
    python benchmarks/bench_synthesis.py curve [--time-limit S]
    python benchmarks/bench_synthesis.py zb [--time-limit S]

``set``: 24 instances like the issue's hidden set (P 4-8, m 8-32, v 1 and 2, looped and
V-shape, fused and split, K from 1 to 2P, uniform, the profiled ratio f : b_I : b_W = 11.57 :
13.30 : 10.23 and per-stage costs), drawn with a fixed seed; per instance the certified gap
(makespan / lower bound) of ``synthesize`` and of ``best`` (every family optimally
rematerialized, ``--best-limit`` seconds per family). ``curve``: the anytime curve (gap at each
improvement) on three sizes. ``zb``: the zero-bubble repository's two published instances at
its memory limit (REFERENCES.md): per-rank span and makespan of its heuristic (the ``zb-2p``
generator), of ``synthesize`` with each objective, and the bounds. Every schedule is validated.
Wall times on the shared machine are inflated by its load; the script prints the load average.
``--clock cpu`` gives each instance ``--time-limit`` CPU seconds instead (``synthesize(clock=
"cpu")``): the measure to use on a loaded machine. ``--only`` runs a few of the 24 (indices).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from fractions import Fraction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from schedules import Instance, simulate  # noqa: E402
from schedules.memory import memory_from_json  # noqa: E402

PROFILE = dict(f="1157/100", b_I="1330/100", b_W="1023/100")


def hidden_like_set(seed: int = 21) -> list[Instance]:
    """24 instances like the issue's hidden set (module docstring)."""
    rng = random.Random(seed)
    out = []
    for i in range(24):
        P = rng.choice([4, 6, 8])
        m = rng.choice([8, 16, 32])
        v = 1 if i % 2 == 0 else 2
        placement = "vshape" if v == 2 and i % 4 == 1 else "looped"
        split = (i // 2) % 2 == 1
        kind = (i // 4) % 3
        S = v * P
        if kind == 0:
            d = dict(b_I=1, b_W=1) if split else dict(b=2)
        elif kind == 1:
            d = dict(PROFILE) if split else dict(f=PROFILE["f"], b="2353/100")
        else:
            f = [1 + (s % 3) for s in range(S)]
            if split:
                d = dict(f=f, b_I=[x + (s % 2) for s, x in enumerate(f)], b_W=[1] * S)
            else:
                d = dict(f=f, b=[2 * x + (s % 2) for s, x in enumerate(f)])
        K = rng.randint(1, 2 * P)
        out.append(Instance(P=P, m=m, v=v, placement=placement, K=K, **d))
    return out


def _row(inst, res, best_ms, best_lb, best_secs, cpu=None):
    sim = simulate(res.schedule)
    assert sim.valid and sim.makespan == res.makespan
    return {"instance": inst.to_dict(), "makespan": str(res.makespan),
            "lower_bound": str(res.lower_bound), "binding": list(res.binding),
            "gap": float(res.gap), "status": res.status, "source": res.source,
            "seconds": round(res.seconds, 2),
            "cpu_seconds": None if cpu is None else round(cpu, 2),
            "history": [[t, str(v)] for t, v in res.history],
            "best_makespan": None if best_ms is None else str(best_ms),
            "best_gap": None if best_ms is None or not best_lb else float(best_ms / best_lb),
            "best_seconds": round(best_secs, 2)}


def run_set(args) -> None:
    from pipebounds.services.best import best
    from pipebounds.synthesis import synthesize

    rows = []
    done = set()
    if args.out and os.path.exists(args.out):
        with open(args.out) as fh:
            for line in fh:
                r = json.loads(line)
                rows.append(r)
                done.add(json.dumps(r["instance"], sort_keys=True))
    chosen = None if args.only is None else {int(x) for x in args.only.split(",")}
    for i, inst in enumerate(hidden_like_set()):
        if chosen is not None and i not in chosen:
            continue
        key = json.dumps(inst.to_dict(), sort_keys=True)
        if key in done:
            continue
        c0 = time.process_time()
        res = synthesize(inst, time_limit=args.time_limit, clock=args.clock,
                         seed=args.seed, workers=args.workers)
        cpu = time.process_time() - c0
        t0 = time.monotonic()
        if args.best_limit > 0:
            b = best(inst, time_limit=args.best_limit, solve_time_limit=None)
            top, blb = b.best, b.lower_bound
        else:
            top, blb = None, None
        row = _row(inst, res, None if top is None else top.makespan, blb,
                   time.monotonic() - t0, cpu)
        row["workers"] = args.workers
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    for v in (1, 2):
        for split in (False, True):
            g = [r["gap"] for r in rows if r["instance"].get("v", 1) == v
                 and ("b_input" in r["instance"]) == split]
            if g:
                print(f"# v = {v}, {'split' if split else 'fused'}: {len(g)} instances, mean "
                      f"gap {sum(g) / len(g):.4f}, worst {max(g):.4f}")
    cpus = [r["cpu_seconds"] for r in rows if r.get("cpu_seconds") is not None]
    if cpus:
        print(f"# CPU seconds per instance (this process): mean {sum(cpus) / len(cpus):.2f}")
    gaps = [r["gap"] for r in rows]
    bgaps = [r["best_gap"] for r in rows if r["best_gap"] is not None]
    print(f"# synthesize ({args.time_limit} {args.clock} s each, {args.workers} worker(s)): "
          f"mean gap {sum(gaps) / len(gaps):.4f}, "
          f"worst {max(gaps):.4f}, optimal {sum(r['status'] == 'optimal' for r in rows)} "
          f"of {len(rows)}")
    print(f"# best ({args.best_limit} s per family): schedule on {len(bgaps)} of {len(rows)}, "
          f"mean gap {sum(bgaps) / max(1, len(bgaps)):.4f}, worst {max(bgaps, default=0):.4f}")
    worse = [r for r in rows if r["best_makespan"] is not None
             and Fraction(r["makespan"]) > Fraction(r["best_makespan"])]
    print(f"# synthesize worse than best on {len(worse)} instances")
    print(f"# load average {os.getloadavg()}")


def run_curve(args) -> None:
    from pipebounds.synthesis import synthesize

    for inst in (Instance(P=4, m=8, K=2, b_I=1, b_W=1),
                 Instance(P=8, m=16, K=4, **PROFILE),
                 Instance(P=8, m=32, K=8, v=2, placement="vshape", **PROFILE)):
        res = synthesize(inst, time_limit=args.time_limit)
        curve = [(t, float(v / res.lower_bound)) for t, v in res.history]
        two = next((t for t, g in curve if g <= 1.02), None)
        print(json.dumps({"instance": inst.to_dict(), "lower_bound": str(res.lower_bound),
                          "curve": curve, "final_gap": float(res.gap),
                          "seconds_to_2pct": two, "source": res.source}), flush=True)
    print(f"# load average {os.getloadavg()}")


def zb_instances():
    """The zero-bubble repository's published instances (REFERENCES.md) at ZB-2p's memory."""
    big = Instance(P=8, m=32, f=[30715, 29233, 29106, 29078, 28850, 28919, 28924, 41678],
                   b_I=[31308, 29344, 29357, 29455, 29217, 29384, 29354, 38731],
                   b_W=[18746, 18789, 19062, 19367, 19455, 19967, 20096, 32833], c=473,
                   memory=memory_from_json({"activation": [943] + [1240] * 6 + [1071],
                                            "budget": 16 * 1240}))
    small = Instance(P=4, m=12, f=5478, b_I=5806, b_W=3534, c=200, K=8)
    return [("P=8 m=32 profiled, budget 16 x 1240 bytes", big),
            ("P=4 m=12, K = 2P = 8", small)]


def run_zb(args) -> None:
    from schedules.generators import GENERATORS
    from schedules.remat_optimal import min_span
    from pipebounds.synthesis import synthesize

    for name, inst in zb_instances():
        theirs = GENERATORS["zb-2p"](inst.with_(K=None, memory=None)).with_instance(inst)
        sim = simulate(theirs)
        row = {"instance": name, "theirs_valid": sim.valid,
               "theirs_makespan": str(sim.makespan), "theirs_span": str(min_span(theirs))}
        for objective in ("makespan", "span"):
            res = synthesize(inst, time_limit=args.time_limit, objective=objective,
                             start=[("zb-2p", theirs)] if sim.valid else ())
            row[objective] = {"makespan": str(res.makespan), "value": str(res.value),
                              "lower_bound": str(res.lower_bound), "gap": float(res.gap),
                              "source": res.source}
        print(json.dumps(row), flush=True)
    print(f"# load average {os.getloadavg()}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("set", "curve", "zb"))
    p.add_argument("--time-limit", type=float, default=15.0)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="set: --time-limit in wall or CPU seconds (cpu: a fixed budget per "
                        "instance whatever the load)")
    p.add_argument("--only", default=None,
                   help="set: comma-separated indices into the 24 instances (default all)")
    p.add_argument("--seed", type=int, default=0, help="set: synthesize's seed")
    p.add_argument("--workers", type=int, default=1,
                   help="set: synthesize's workers (CP-SAT threads of the exact phase)")
    p.add_argument("--best-limit", type=float, default=2.0,
                   help="seconds per family for best (0: skip best)")
    p.add_argument("--out", default=None, help="JSON lines (resumed when it exists)")
    args = p.parse_args(argv)
    {"set": run_set, "curve": run_curve, "zb": run_zb}[args.what](args)


if __name__ == "__main__":
    main()
