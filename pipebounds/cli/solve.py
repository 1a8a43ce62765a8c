"""``pipebounds solve <instance> [--time-limit S] [--engine search|cpsat|auto] [--json]`` (CLI.md).

Also ``--batch FILE|-``: one instance per JSON line, a JSON list of results (each with its
``instance``; a bad line gives an ``error`` and does not stop the others).
JSON keys: ``status``, ``makespan``, ``makespan_exact``, ``lower_bound``, ``lower_bound_exact``,
``seconds``, ``nodes``, ``engine``, ``source``, ``schedule`` (an orders document, or null),
``optimum_basis`` (why the status is ``optimal``: ``solver``, or the basis of
:mod:`pipebounds.certify` that knows the optimum the schedule reaches; else null).
"""

from __future__ import annotations

from schedules.instance import Instance
from schedules.io import document_from_schedule
from .common import CLIError, add_instance_flags, exact_string, instance_from_args, number, \
    print_json, batch_results


def register(sub) -> None:
    p = sub.add_parser("solve", help="exact optimum by search (or CP-SAT)",
                       description="Find a makespan-optimal schedule and prove it optimal "
                                   "(status optimal), or report the best found and the best "
                                   "proven lower bound (feasible) within --time-limit.")
    add_instance_flags(p)
    p.add_argument("--batch", metavar="FILE", default=None,
                   help="JSON lines of instances (or - for standard input) instead of flags")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="seconds per instance (default: none)")
    p.add_argument("--engine", choices=("search", "cpsat", "auto"), default="search",
                   help="search (default, pure Python branch and bound), cpsat (OR-tools), or "
                        "auto (search first, then CP-SAT if installed)")
    p.add_argument("--workers", type=int, default=1, help="CP-SAT threads (default 1)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def solve_report(inst: Instance, args) -> dict:
    """The JSON object of one solved instance."""
    from schedules.search import solve
    from schedules.search.cpsat import CPSATUnavailable

    try:
        res = solve(inst, time_limit=args.time_limit, engine=args.engine, workers=args.workers)
    except CPSATUnavailable as exc:
        raise CLIError(str(exc)) from None
    # the certifier: a schedule whose makespan is an optimum known on another basis (theorem,
    # checked range, data/optima.jsonl) is optimal even when the solver did not prove it
    from ..certify import certify

    cert = certify(inst)
    status = res.status
    if (status == "feasible" and cert.optimum is not None and res.makespan == cert.optimum):
        status = "optimal"
    out = {"status": status,
           "optimum_basis": ("solver" if res.status == "optimal" else
                             cert.basis if status == "optimal" else None),
           "makespan": None if res.makespan is None else number(res.makespan),
           "makespan_exact": None if res.makespan is None else exact_string(res.makespan),
           "lower_bound": number(res.lower_bound),
           "lower_bound_exact": exact_string(res.lower_bound),
           "seconds": round(res.seconds, 4),
           "nodes": res.nodes,
           "engine": res.engine,
           "source": res.source,
           "schedule": None if res.schedule is None else document_from_schedule(
               res.schedule, source=f"pipebounds solve ({res.engine})")}
    return out


def _text(inst: Instance, r: dict) -> str:
    head = (f"P={inst.P} m={inst.m} v={inst.v} K={inst.K if inst.K else 'inf'}: {r['status']}"
            f"  makespan {r['makespan_exact']}  lower bound {r['lower_bound_exact']}"
            f"  ({r['seconds']:.2f} s, {r['nodes']} nodes, {r['engine']})")
    lines = [head]
    if r["schedule"] is not None:
        for p, seq in r["schedule"]["orders"].items():
            lines.append(f"  GPU {p}: " + " ".join(seq))
    return "\n".join(lines)


def run(args) -> int:
    if args.batch is not None:
        results = batch_results(args, lambda inst: solve_report(inst, args))
        if args.json:
            print_json(results)
        else:
            for r in results:
                if "error" in r:
                    print(f"error: {r['error']}")
                else:
                    print(_text(Instance.from_dict(r["instance"]), r))
        return 0
    inst = instance_from_args(args)
    r = solve_report(inst, args)
    if args.json:
        print_json(r)
    else:
        print(_text(inst, r))
    return 0
