"""The bound's slope against periodic schedules (docs/synthesis.md, *Periodic steady state*).

    python tools/periodic_slope.py [--time-limit 40] [--q-max 12] [--m 32 64 128 256]
        [--horizons 2 1] [--synth-seconds 0] [--instances FILE] [--out data/periodic_slope.jsonl]

For each instance (``--instances``: a JSON list of instance objects, default :data:`DEFAULT`), it
computes the bound's slope ``s`` (makespan per microbatch at large ``m``,
:func:`pipebounds.search.periodic.bound_slope`) and searches periodic templates ``(q, L)`` with
``q <= --q-max`` by CP-SAT (:func:`pipebounds.search.periodic.periodic_template`,
``--time-limit`` wall seconds each, 2 workers; a microbatch may span its chain plus ``h``
periods, for each ``h`` of ``--horizons`` in turn while the search is ``unknown``):

* **below the slope**: the ``(q, L)`` with the largest ratio ``L / q`` below ``s`` must not be
  feasible: a template there would give, for large ``m``, valid schedules below the bound (the
  tool stops with an error if one is found; ``infeasible`` is a proof for that ``(q, L)`` and
  horizon, ``unknown`` proves nothing);
* **at or above the slope**: the candidates in increasing ratio until one is feasible: its ratio
  is the best periodic slope found (an upper bound on the optimal slope, for this horizon and
  ``q``); ``ratio = s`` means the bound's slope is reached.

The template found is unrolled at each ``--m`` (:meth:`PeriodicTemplate.unroll`), re-simulated
(valid, peak ``<= K``) and compared with the bound; with ``--synth-seconds S > 0`` also with
:func:`pipebounds.synthesis.synthesize` (``S`` CPU seconds) alone and started from the unrolled
schedule (``start=``). One JSON line per instance; resumable (instances already in ``--out`` are
skipped).
"""

from __future__ import annotations

import argparse
import json
import math
from fractions import Fraction
from pathlib import Path

from bounds.evaluate import lower_bound
from pipebounds.search.periodic import (best_periodic, bound_slope, default_horizon,
                                        periodic_template)
from schedules import Instance, simulate

ROOT = Path(__file__).resolve().parent.parent

DEFAULT = [
    {"P": 4, "m": 8, "K": 2, "f": 1, "b": 2},
    {"P": 4, "m": 8, "K": 3, "f": 1, "b": 1},
    {"P": 6, "m": 8, "K": 3, "f": 1, "b": 1},
    {"P": 8, "m": 8, "K": 3, "f": 1, "b": 2},
    {"P": 8, "m": 8, "K": 4, "f": 1, "b": 1},
    {"P": 4, "m": 8, "K": 2, "f": 1, "b_I": 1, "b_W": 1},
    {"P": 6, "m": 8, "K": 3, "f": 1, "b_I": 1, "b_W": 1},
    {"P": 4, "m": 8, "K": 4, "v": 2, "f": 1, "b": 1},
    {"P": 4, "m": 8, "K": 3, "v": 2, "placement": "vshape", "f": 1, "b": 1},
    {"P": 4, "m": 8, "K": 4, "v": 2, "f": 1, "b_I": 1, "b_W": 1},
]


def key(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True)


def attempt(inst: Instance, res) -> dict:
    """One search, as a ``tries`` entry."""
    return {"q": res.q, "L": res.L, "ratio": str(Fraction(res.L, res.q * inst.unit)),
            "horizon": res.horizon, "status": res.status, "seconds": round(res.seconds, 1)}


def run(spec: dict, time_limit: float, q_max: int, ms: list[int], synth_seconds: float,
        horizons: list[int]) -> dict:
    inst = Instance.from_dict(spec)
    s, tol = bound_slope(inst)
    out: dict = {"instance": spec, "bound_slope": str(s), "slope_tolerance": float(2 * tol),
                 "tries": []}
    below = [(q, math.ceil(q * s * inst.unit) - 1) for q in range(1, q_max + 1)]
    below = [(q, L) for q, L in below if L >= 1]
    if below:  # the largest ratio below the slope
        q, L = max(below, key=lambda c: (Fraction(c[1], c[0]), -c[0]))
        res = periodic_template(inst, q, L, horizon=default_horizon(inst, L, horizons[0]),
                                time_limit=time_limit)
        out["below"] = attempt(inst, res)
        if res.status == "feasible" and Fraction(L, q * inst.unit) < s - 2 * tol:
            raise AssertionError(f"a periodic template below the bound's slope: {spec} {q} {L}")
    def log(res) -> None:
        out["tries"].append(attempt(inst, res))
        print(json.dumps({"instance": spec, **out["tries"][-1]}), flush=True)

    found = best_periodic(inst, time_limit=math.inf, q_max=q_max, periods=horizons,
                          per_try=time_limit, slope=s, on_try=log)
    best = found.template if found is not None else None
    if best is None:
        out["best_ratio"] = None
        return out
    out["best_ratio"] = str(best.slope)
    out["reaches_bound_slope"] = best.slope <= s + 2 * tol
    rows = []
    for m in ms:
        sched = best.unroll(m)
        sim = simulate(sched)
        if not (sim.valid and max(sim.peak_memory) <= inst.K):
            raise AssertionError(f"unrolled template invalid: {spec} m={m}")
        lb = lower_bound(sched.instance).value
        row = {"m": m, "bound": str(lb), "periodic": str(sim.makespan),
               "gap": round(float(sim.makespan / lb), 4)}
        if synth_seconds > 0:
            from pipebounds.synthesis import synthesize

            alone = synthesize(sched.instance, time_limit=synth_seconds, clock="cpu")
            both = synthesize(sched.instance, time_limit=synth_seconds, clock="cpu",
                              start=[("periodic", sched)])
            row.update(synthesize=str(alone.makespan), synthesize_from_periodic=str(both.makespan))
        rows.append(row)
    out["unrolled"] = rows
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-limit", type=float, default=40.0)
    ap.add_argument("--q-max", type=int, default=12)
    ap.add_argument("--m", type=int, nargs="+", default=[32, 64, 128, 256])
    ap.add_argument("--synth-seconds", type=float, default=0.0)
    ap.add_argument("--horizons", type=int, nargs="+", default=[2, 1],
                    help="periods past the chain allowed to a microbatch, tried in turn")
    ap.add_argument("--instances", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "periodic_slope.jsonl")
    a = ap.parse_args(argv)
    specs = json.loads(a.instances.read_text()) if a.instances else DEFAULT
    done = set()
    if a.out.exists():
        done = {key(json.loads(line)["instance"]) for line in a.out.read_text().splitlines()
                if line.strip()}
    for spec in specs:
        if key(spec) in done:
            continue
        out = run(spec, a.time_limit, a.q_max, a.m, a.synth_seconds, a.horizons)
        with a.out.open("a") as fh:
            fh.write(json.dumps(out) + "\n")
        print(json.dumps({k: out[k] for k in ("instance", "bound_slope", "best_ratio")}),
              flush=True)


if __name__ == "__main__":
    main()
