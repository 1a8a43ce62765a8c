"""Run time of the machine checks and its projection on N workers:
``python -m proofs_checks.timing RESULTS.json [--workers 1 2 4 8 16 32] [--markdown]``.

``RESULTS.json`` is the output of ``python -m proofs_checks --full --workers W --json``. Each row
records its wall time and, in ``parallel``, what ran through
:func:`pipebounds.sweep.parallel_map`: the number of items, the sum and the largest of their own
run times and the wall time spent in the map. The projection on ``N`` workers keeps the rest
(serial) and replaces the map's wall time by the best a perfect balance of its items allows:

    T_N = (seconds - parallel.wall) + max(parallel.item_seconds / N, parallel.longest)

It ignores process start-up and the scheduler's overhead (a few ms per item on a Dask cluster)
and assumes each worker runs an item as fast as the measuring run did, so it is a lower bound
on the wall time with N workers and a good estimate when items are many and short.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def projected(row: dict, N: int) -> float:
    """The projected wall time of one check on ``N`` workers (see the module docstring)."""
    par = row.get("parallel") or {}
    wall = par.get("wall", 0.0)
    serial = max(row["seconds"] - wall, 0.0)
    if not par.get("items"):
        return serial + wall
    return serial + max(par["item_seconds"] / N, par["longest"])


def table(rows: list[dict], workers: list[int]) -> list[str]:
    """Markdown lines: one per check, then the total, measured and projected."""
    head = ("| check | measured s | serial s | items | item s (sum) | longest s | "
            + " | ".join(f"N = {n}" for n in workers) + " |")
    out = [head, "| " + " | ".join(["---"] * (6 + len(workers))) + " |"]
    tot = [0.0] * len(workers)
    for r in rows:
        par = r.get("parallel") or {}
        proj = [projected(r, n) for n in workers]
        tot = [a + b for a, b in zip(tot, proj)]
        out.append(f"| `{r['check'].rsplit('.', 1)[-1]}` | {r['seconds']:.1f} | "
                   f"{max(r['seconds'] - par.get('wall', 0.0), 0.0):.1f} | "
                   f"{par.get('items', 0)} | {par.get('item_seconds', 0.0):.1f} | "
                   f"{par.get('longest', 0.0):.1f} | "
                   + " | ".join(f"{p:.0f}" for p in proj) + " |")
    total = sum(r["seconds"] for r in rows)
    items = sum((r.get("parallel") or {}).get("items", 0) for r in rows)
    item_s = sum((r.get("parallel") or {}).get("item_seconds", 0.0) for r in rows)
    out.append(f"| **all {len(rows)} checks** | **{total:.0f}** | | {items} | {item_s:.0f} | | "
               + " | ".join(f"**{t:.0f}**" for t in tot) + " |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m proofs_checks.timing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", type=Path, help="JSON of python -m proofs_checks --json")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    args = ap.parse_args(argv)
    try:
        rows = json.loads(args.results.read_text())
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {args.results}: {exc}", file=sys.stderr)
        return 2
    print("\n".join(table(rows, args.workers)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
