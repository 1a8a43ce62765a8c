"""``pipebounds sweep GRID --task T --store PATH``: a grid of instances x a task -> a results table.

See :mod:`pipebounds.sweep` and docs/sweep.md. Results go to an SQLite store as they finish;
``--resume`` skips what is stored; ``--scheduler ADDRESS`` runs on a Dask distributed cluster.
"""

from __future__ import annotations

import sys

from .common import CLIError, print_json, whole_flag


def register(sub) -> None:
    from ..sweep import EXECUTORS, TASKS

    p = sub.add_parser("sweep", help="run a task over a grid of instances into a results store",
                       description="Run --task over every instance of the GRID file (JSON: "
                                   "'product' of instance fields, or 'instances'; see "
                                   "docs/sweep.md) and store each result as it finishes.")
    p.add_argument("grid", help="grid file (JSON)")
    p.add_argument("--task", required=True, choices=sorted(TASKS), help="what to compute")
    p.add_argument("--store", required=True, help="SQLite results store (created if missing)")
    p.add_argument("--workers", type=whole_flag("--workers", 1, 1024), default=2,
                   help="local processes (default 2)")
    p.add_argument("--executor", choices=EXECUTORS, default=None,
                   help="inprocess, pool (default) or dask (implied by --scheduler)")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (tcp://host:8786): run on that cluster")
    p.add_argument("--resume", action="store_true", help="skip items already in the store")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--progress", action="store_true", default=None,
                   help="progress bar on stderr even when it is not a terminal")
    p.add_argument("--quiet", action="store_const", const=False, dest="progress",
                   help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..sweep import Store, expand, load_grid, make_executor, run_sweep
    from ..sweep.grid import GridError
    from .output import check_output_path
    from schedules.stopping import Interrupted

    if args.workers < 1:
        raise CLIError(f"--workers must be >= 1, got {args.workers}")
    executor_name = args.executor or ("dask" if args.scheduler else "pool")
    if executor_name == "dask" and not args.scheduler:
        raise CLIError("--executor dask needs --scheduler ADDRESS")
    try:
        items = expand(load_grid(args.grid), args.task)
    except GridError as exc:
        raise CLIError(str(exc)) from None
    check_output_path(args.store)
    try:
        store = Store(args.store)
    except ValueError as exc:  # StoreError: not a store, corrupt, another schema
        raise CLIError(str(exc)) from None
    executor = make_executor(executor_name, workers=args.workers, address=args.scheduler)
    try:
        summary = run_sweep(items, store, executor, resume=args.resume, progress=args.progress)
    except Interrupted as exc:
        stored = len(store)
        raise Interrupted(exc.signum, f"{stored} of {len(items)} items are stored in "
                          f"{args.store}; go on with the same command and --resume") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    except RuntimeError as exc:
        raise CLIError(str(exc)) from None
    finally:
        store.close()
    if args.json:
        print_json(summary.to_dict())
    else:
        print(f"{summary.items} items: {summary.ran} run ({summary.failed} failed), "
              f"{summary.skipped} already stored; {summary.rows} rows in {summary.seconds:.1f} s "
              f"-> {summary.store}", file=sys.stdout)
    return 0
