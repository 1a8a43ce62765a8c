"""``pipebounds generate NAME <instance> [--json]`` and ``pipebounds generate --list`` (CLI.md).

Prints the orders document of a known schedule (``source`` names the generator; with ``-K`` the
schedule is fitted to ``K`` by rematerialization and the document carries ``K``). Without
``--json`` a short summary (makespan, peak memory, bubble) precedes the document.
"""

from __future__ import annotations

import json


def register(sub) -> None:
    from .common import add_instance_flags, add_progress_flags

    p = sub.add_parser("generate", help="a known schedule as an orders document",
                       description="Build a known schedule (GPipe, 1F1B, interleaved, ZB-H1, ...) "
                                   "for an instance; with -K it is fitted to K by "
                                   "rematerialization. --list names the schedules.")
    p.add_argument("name", nargs="?", help="schedule name (see --list)")
    p.add_argument("--list", action="store_true", help="list the known schedules and exit")
    p.add_argument("--json", action="store_true", help="print only the orders document (JSON)")
    add_progress_flags(p, "a progress display while fitting to -K")
    add_instance_flags(p)
    from .common import add_overlap_flags

    add_overlap_flags(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from schedules.generators import GENERATORS, GeneratorError, generate
    from schedules.io import document_from_schedule
    from schedules.remat import RematError
    from .common import (CLIError, check_schedule_size, exact_string, instance_from_args,
                         print_json, progress_arg)

    if args.list:
        if args.json:
            print_json([{"name": g.name, "summary": g.summary, "requires": g.requires.describe()}
                        for g in GENERATORS.values()])
        else:
            width = max(len(n) for n in GENERATORS)
            for g in GENERATORS.values():
                print(f"{g.name:<{width}}  {g.summary}  [{g.requires.describe()}]")
        return 0
    if not args.name:
        raise CLIError("generate needs a schedule NAME (or --list)")
    from .common import with_overlap_flags

    inst = with_overlap_flags(instance_from_args(args), args)
    check_schedule_size(inst)
    try:
        schedule = generate(args.name, inst, progress=progress_arg(args))
    except (GeneratorError, RematError) as exc:
        raise CLIError(str(exc)) from None
    doc = document_from_schedule(schedule, source=schedule.source or args.name)
    if args.json:
        print_json(doc)
        return 0
    from schedules.simulate import simulate

    res = simulate(schedule)
    K = "inf" if inst.K is None else inst.K
    two = " directions=2" if inst.directions == 2 else ""
    print(f"{doc['source']}: P={inst.P} m={inst.m} v={inst.v} placement={inst.placement}{two} "
          f"K={K} {'valid' if res.valid else 'INVALID'}")
    if res.makespan is not None:
        recomputes = sum(1 for _, op in schedule.ops() if op.kind == "R")
        print(f"  makespan {exact_string(res.makespan)}  peak memory "
              + " ".join(str(x) for x in res.peak_memory) + f" (per GPU)  recomputes {recomputes}")
        print("  bubble ratio " + " ".join(f"{float(x):.3f}" for x in res.bubble_ratio))
    print(json.dumps(doc))
    return 0
