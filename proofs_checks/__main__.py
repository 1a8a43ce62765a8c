"""``python -m proofs_checks [--quick|--full] [--workers N] [--only TEXT] [--json]``.

Runs every registered check and prints the table (result, seconds, instances, worst gap OPT/LB,
kind, theorem, and the range on the next line) one row as each check finishes, within 100 columns;
a progress bar on stderr when it is a terminal (``--quiet``: none). Exit status 1 if any check
fails, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from schedules.progress import progress_bar

from . import run_checks, selected_checks
from .registry import Context

WIDTH = 100
"""The table fits this many columns."""
COLUMNS = (("result", 7), ("s", 7), ("instances", 10), ("worst OPT/LB", 13), ("kind", 11))
"""Fixed columns (name, width incl. the gap); the theorem fills the rest of the line."""


def _gap(g) -> str:
    return "-" if g is None else (f"{float(g):.4f}" if g.denominator != 1 else str(g))


def table_header() -> str:
    return "".join(name.ljust(w) for name, w in COLUMNS) + "theorem"


def table_row(r: dict) -> list[str]:
    """The lines of one check: the fixed columns and the theorem (wrapped), then its range."""
    cells = ("ok" if r["ok"] else "FAIL", f"{r['seconds']:.1f}", str(r["instances"]),
             _gap(r["worst_gap"]), r["kind"])
    lead = "".join(str(c)[:w - 1].ljust(w) for c, (_, w) in zip(cells, COLUMNS))
    indent = " " * len(lead)
    theorem = textwrap.wrap(r["theorem"], WIDTH - len(lead)) or [""]
    lines = [lead + theorem[0]] + [indent + t for t in theorem[1:]]
    lines += textwrap.wrap("range: " + r["range"], WIDTH, initial_indent=" " * 6,
                           subsequent_indent=" " * 13)
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m proofs_checks", description=__doc__)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_const", dest="mode", const="quick",
                      help="the CI ranges (default)")
    mode.add_argument("--full", action="store_const", dest="mode", const="full",
                      help="the full declared ranges (see docs/theory.md for the run time)")
    ap.add_argument("--workers", type=int, default=1, help="processes for exhaustive checks")
    ap.add_argument("--scheduler", default=None,
                    help="Dask scheduler address (tcp://host:8786): run the exhaustive checks' "
                         "solves on that cluster (docs/sweep.md)")
    ap.add_argument("--only", default=None, help="run only checks whose theorem contains TEXT")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    args = ap.parse_args(argv)
    if args.workers < 1:
        print("error: --workers must be >= 1", file=sys.stderr)
        return 2
    ctx = Context(mode=args.mode or "quick", workers=args.workers, scheduler=args.scheduler)
    bar = progress_bar(len(selected_checks(args.only)), "proofs_checks",
                       enabled=False if args.quiet else None, unit="check")
    if not args.json:
        print(table_header(), flush=True)

    def finished(r: dict) -> None:
        bar.update()
        bar.set_postfix_str(r["theorem"][:30])
        if not args.json:
            bar.clear()
            print("\n".join(table_row(r)), flush=True)

    try:
        rows = run_checks(ctx, args.only, on_result=finished)
    finally:
        bar.close()
    if args.json:
        json.dump([{**r, "worst_gap": _gap(r["worst_gap"])} for r in rows], sys.stdout, indent=1)
        print()
    else:
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
