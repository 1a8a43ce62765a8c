"""``pipebounds bound <instance> [--json]`` and ``--batch FILE|-`` (CLI.md): the lower bound.

JSON of one instance: ``lower_bound`` (number), ``lower_bound_exact`` (string), ``exact`` (the
bound is proven equal to the optimum for this instance), ``terms`` (list of ``{name, value}``,
plus ``value_exact``). In batch mode: a JSON list, one result per input line with its
``instance``; a bad line gives ``{"instance": ..., "error": ...}`` and the others go on.
"""

from __future__ import annotations

from .common import (add_instance_flags, exact_string, instance_from_args, number,
                     print_json, batch_results)


def register(sub) -> None:
    p = sub.add_parser("bound", help="lower bound on the makespan of an instance",
                       description="The best proven lower bound on the makespan (docs/theory.md), "
                                   "its terms, and whether it is proven exact.")
    add_instance_flags(p)
    p.add_argument("--batch", metavar="FILE", default=None,
                   help="JSON lines of instances (- for standard input); prints a JSON list")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def bound_report(inst) -> dict:
    """The CLI.md JSON object of one instance's bound."""
    from bounds import lower_bound

    lb = lower_bound(inst)
    return {"lower_bound": number(lb.value), "lower_bound_exact": exact_string(lb.value),
            "exact": lb.exact,
            "terms": [{"name": n, "value": number(v), "value_exact": exact_string(v)}
                      for n, v in lb.terms]}


def run(args) -> int:
    if args.batch is not None:
        print_json(batch_results(args, bound_report))
        return 0
    inst = instance_from_args(args)
    rep = bound_report(inst)
    if args.json:
        print_json({"instance": inst.to_dict(), **rep})
        return 0
    K = "inf" if inst.K is None else inst.K
    print(f"P={inst.P} m={inst.m} K={K} v={inst.v} f={exact_string(inst.f)} "
          + (f"b_I={exact_string(inst.b_I)} b_W={exact_string(inst.b_W)}" if inst.split
             else f"b={exact_string(inst.b)}"))
    print(f"lower bound {rep['lower_bound_exact']}"
          + ("  (exact: proven equal to the optimum)" if rep["exact"] else ""))
    for t in rep["terms"]:
        print(f"  {t['name']:<20} {t['value_exact']}")
    return 0
