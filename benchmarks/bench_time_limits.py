"""``--time-limit`` as a wall-clock promise (issue 26): how far past its limit each command
answers, process start-up included.

For every command that takes a time limit (``solve``, ``solve --synthesize auto``,
``synthesize``, ``remat``, ``best``, ``frontier``) and a few mid-size instances, runs the
command in a fresh process with ``--json`` and prints the wall-clock seconds from the start of
the process to its exit, the budget it was given and the overrun (wall - budget), with the
status it answered. The budget is the command's own promise:

* ``solve``, ``synthesize``, ``remat``: ``--time-limit T``;
* ``frontier``: ``--total-time T`` (with ``--time-limit T`` per solve);
* ``best``: ``T`` per family it ranks, plus the model-building grace (1 s) of each, plus
  ``--solve-time-limit T`` for the exact optimum (``--time-limit`` is per family, CLI.md).

Wall-clock, not CPU: the promise is about a user's wait (on a loaded machine both the work
and the start-up are slower; the CPU seconds of the child are printed beside it).

    python benchmarks/bench_time_limits.py [--limits 1,3,5] [--quick] [--max-over 1.5]

Exits 1 when some overrun is above ``--max-over`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

INSTANCES = [  # (P, m, v, K): mid sizes, K mid (memory binds, the optimum is not obvious)
    (6, 12, 1, 3), (8, 32, 1, 4), (12, 48, 1, 6), (6, 18, 2, 4), (8, 24, 2, 5),
]
QUICK = [(8, 32, 1, 4), (8, 24, 2, 5)]


def _run(argv: list[str], cwd: str) -> tuple[float, float, int, dict]:
    """(wall seconds, child CPU seconds, exit status, parsed JSON or {})."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or ROOT}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pipebounds", *argv], capture_output=True,
                          text=True, check=False, env=env, cwd=cwd, timeout=600)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except ValueError:
        out = {}
    if proc.returncode != 0:
        out.setdefault("status", f"exit {proc.returncode}: {proc.stderr.strip()[:80]}")
    return wall, cpu, proc.returncode, out


def _status(r: dict) -> str:
    """What the answer says: a status, best's top entry, frontier's K* or range."""
    if "status" in r:
        return str(r["status"])
    if "ranking" in r:
        top = r["ranking"][0] if r["ranking"] else {}
        return f"{top.get('status')} ({top.get('family')}), optimum {r.get('optimum_status')}"
    if "K_star_exact" in r:
        return (f"K* = {r['K_star']}" if r["K_star_exact"]
                else f"K* in [{r.get('K_star_low')}, {r.get('K_star_high')}]")
    return "?"


def cases(P: int, m: int, v: int, K: int, T: float, doc: str):
    """``(command label, argv, budget function of the JSON answer)`` for one instance."""
    inst = ["-P", str(P), "-m", str(m), "-v", str(v), "-K", str(K)]
    t = f"{T:g}"
    yield "solve", ["solve", *inst, "--time-limit", t, "--json"], lambda r: T
    yield "solve --synthesize auto", ["solve", *inst, "--time-limit", t, "--synthesize", "auto",
                                      "--json"], lambda r: T
    yield "synthesize", ["synthesize", *inst, "--time-limit", t, "--json"], lambda r: T
    yield "remat", ["remat", doc, "-K", str(K), "--time-limit", t, "--json"], lambda r: T
    yield "best", ["best", *inst, "--time-limit", t, "--solve-time-limit", t, "--json"], \
        lambda r: (T + 1) * max(1, len(r.get("ranking", []))) + T
    yield "frontier", ["frontier", *inst[:6], "--time-limit", t, "--total-time", t, "--json"], \
        lambda r: T


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limits", default="1,3,5", help="time limits in seconds, comma-separated")
    ap.add_argument("--quick", action="store_true", help=f"only {QUICK}")
    ap.add_argument("--only", default=None, help="only commands whose label starts with this")
    ap.add_argument("--max-over", type=float, default=1.5)
    args = ap.parse_args()
    limits = [float(x) for x in args.limits.split(",")]
    worst = 0.0
    print(f"{'command':<24} {'P':>3} {'m':>3} {'v':>2} {'K':>2} {'limit':>5} {'budget':>6} "
          f"{'wall':>6} {'over':>6} {'cpu':>6}  status")
    with tempfile.TemporaryDirectory() as tmp:
        for P, m, v, K in (QUICK if args.quick else INSTANCES):
            doc = os.path.join(tmp, f"doc_{P}_{m}_{v}.json")
            family = "1f1b" if v == 1 else "interleaved"
            _, _, code, out = _run(["generate", family, "-P", str(P), "-m", str(m), "-v", str(v),
                                    "--json"], tmp)
            with open(doc, "w", encoding="utf-8") as fh:
                json.dump(out, fh)
            for T in limits:
                for label, argv, budget in cases(P, m, v, K, T, doc):
                    if args.only and not label.startswith(args.only):
                        continue
                    wall, cpu, code, r = _run(argv, tmp)
                    b = budget(r)
                    over = wall - b
                    worst = max(worst, over)
                    print(f"{label:<24} {P:>3} {m:>3} {v:>2} {K:>2} {T:>5g} {b:>6g} {wall:>6.2f} "
                          f"{over:>+6.2f} {cpu:>6.2f}  {_status(r)}",
                          flush=True)
    print(f"worst overrun {worst:+.2f} s (promise: <= {args.max_over:g} s)")
    return 1 if worst > args.max_over else 0


if __name__ == "__main__":
    sys.exit(main())
