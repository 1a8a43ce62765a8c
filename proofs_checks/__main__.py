"""``python -m proofs_checks [--quick|--full] [--workers N] [--only TEXT] [--json]``.

Runs every registered check and prints the table (theorem, kind, range, instances, worst gap
OPT/LB, result, seconds). Exit status 1 if any check fails, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import run_checks
from .registry import Context


def _gap(g) -> str:
    return "-" if g is None else (f"{float(g):.4f}" if g.denominator != 1 else str(g))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m proofs_checks", description=__doc__)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_const", dest="mode", const="quick",
                      help="the CI ranges (default)")
    mode.add_argument("--full", action="store_const", dest="mode", const="full",
                      help="the full declared ranges (see docs/theory.md for the run time)")
    ap.add_argument("--workers", type=int, default=1, help="processes for exhaustive checks")
    ap.add_argument("--only", default=None, help="run only checks whose theorem contains TEXT")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    if args.workers < 1:
        print("error: --workers must be >= 1", file=sys.stderr)
        return 2
    ctx = Context(mode=args.mode or "quick", workers=args.workers)
    rows = run_checks(ctx, args.only)
    if args.json:
        json.dump([{**r, "worst_gap": _gap(r["worst_gap"])} for r in rows], sys.stdout, indent=1)
        print()
    else:
        head = ("theorem", "kind", "range", "instances", "worst OPT/LB", "result", "s")
        table = [(r["theorem"], r["kind"], r["range"], str(r["instances"]), _gap(r["worst_gap"]),
                  "ok" if r["ok"] else "FAIL", f"{r['seconds']:.1f}") for r in rows]
        widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h)
                  for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for t in table:
            print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
        for r in rows:
            if not r["ok"]:
                print(f"FAILED {r['theorem']}: {r['detail']}")
        print(f"{sum(r['ok'] for r in rows)} passed, {sum(not r['ok'] for r in rows)} failed")
    if not rows:
        print("error: no checks registered", file=sys.stderr)
        return 1
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
