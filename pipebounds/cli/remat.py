"""``pipebounds remat FILE (-K N | --budget-bytes X) [--backward] [--objective makespan|span]
[--positions anywhere|adjacent] [--time-limit S] [--json]`` (CLI.md, docs/remat.md).

Optimal rematerialization of the document's fixed order (:func:`schedules.remat_optimal.
optimal_remat`). JSON keys: ``status``, ``makespan`` (+ ``makespan_exact``), ``lower_bound``
(+ ``lower_bound_exact``: a proven lower bound on the objective over the recompute choices of
this order; equal to the objective value when ``optimal``; null when ``infeasible``), ``span``
(objective ``span``), ``theory_lower_bound`` (``bounds.lower_bound`` of the instance at that
``K``, any order; with a byte budget, the bound without a memory limit), ``fit_memory_makespan``
(the greedy :func:`schedules.remat.fit_memory`, count model only), ``recomputed`` (action strings of
every ``R`` op), ``backward_recomputed`` (those between an ``I`` and its ``W``), ``peak``,
``dropped`` (``R`` ops of the input removed first), ``seconds``, ``schedule`` (orders document).
"""

from __future__ import annotations

from schedules.io import INPUT_ERRORS, load_documents, schedule_from_document
from schedules.instance import to_fraction, InstanceError
from schedules.remat import RematError
from .common import CLIError, exact_or_none, number_or_none, print_json, read_text


def register(sub) -> None:
    from schedules.remat_optimal import DEFAULT_TIME_LIMIT

    p = sub.add_parser("remat", help="optimal rematerialization of a fixed order",
                       description="Keep every GPU's order of the document's ops and choose, for "
                                   "every (microbatch, stage), keep or recompute, minimising the "
                                   "makespan (or the largest per-GPU span) under the memory "
                                   "limit; exact (CP-SAT), status optimal only when proven.")
    p.add_argument("file", help="orders document (JSON), or - for standard input")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-K", type=str, default=None,
                   help="activations per GPU (default: the document's K)")
    g.add_argument("--budget-bytes", type=str, default=None, metavar="X",
                   help="bytes per GPU, with the document's 'memory' model")
    p.add_argument("--backward", action="store_true",
                   help="also free after I and recompute before W (split form)")
    p.add_argument("--objective", choices=("makespan", "span"), default="makespan",
                   help="makespan (default) or span: the largest per-GPU span (paper 2)")
    p.add_argument("--positions", choices=("anywhere", "adjacent"), default="anywhere",
                   help="where a recompute may go: anywhere between F and its backward "
                        "(default) or right before it")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help=f"CP-SAT seconds (default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def remat_report(schedule, K=None, budget_bytes=None, backward=False, objective="makespan",
                 positions="anywhere", time_limit=None) -> dict:
    """The JSON object of one ``remat`` run."""
    from schedules.io import document_from_schedule
    from schedules.remat import fit_memory
    from schedules.remat_optimal import optimal_remat
    from schedules.simulate import simulate

    res = optimal_remat(schedule, K=K, budget_bytes=budget_bytes, backward=backward,
                        objective=objective, positions=positions, time_limit=time_limit)
    inst = schedule.instance
    fit_ms = None
    limit = K if K is not None else (inst.K if budget_bytes is None else None)
    if limit is not None and getattr(inst, "memory", None) is None or K is not None:
        try:
            fit_ms = simulate(fit_memory(schedule.with_instance(inst.with_(memory=None)),
                                         limit)).makespan
        except (RematError, InstanceError):
            fit_ms = None
    theory = None
    try:  # with a byte budget: the bound without memory limit (a limit only lengthens)
        from bounds import lower_bound

        theory = lower_bound(inst.with_(K=limit, memory=None)).value
    except (ValueError, ArithmeticError, NotImplementedError):
        theory = None
    lb = None if res.status == "infeasible" else res.lower_bound
    return {
        "status": res.status, "objective": res.objective,
        "makespan": number_or_none(res.makespan), "makespan_exact": exact_or_none(res.makespan),
        "span": number_or_none(res.span), "span_exact": exact_or_none(res.span),
        "lower_bound": number_or_none(lb), "lower_bound_exact": exact_or_none(lb),
        "theory_lower_bound": number_or_none(theory), "theory_lower_bound_exact": exact_or_none(theory),
        "fit_memory_makespan": number_or_none(fit_ms), "fit_memory_makespan_exact": exact_or_none(fit_ms),
        "recomputed": [str(op) for op in res.recomputed + res.backward_recomputed],
        "backward_recomputed": [str(op) for op in res.backward_recomputed],
        "peak": None if res.peak is None else [exact_or_none(x) for x in res.peak],
        "positions": res.positions, "backward": res.backward, "dropped": res.dropped,
        "seconds": round(res.seconds, 3),
        "schedule": None if res.schedule is None else document_from_schedule(
            res.schedule, source=f"pipebounds remat ({res.status})"),
    }


def run(args) -> int:
    docs, was_list = load_documents(read_text(args.file))
    if was_list and len(docs) != 1:
        raise CLIError(f"{args.file} holds {len(docs)} documents, remat takes one")
    try:
        schedule = schedule_from_document(docs[0])
    except INPUT_ERRORS as exc:
        raise CLIError(str(exc)) from None
    K = budget = None
    if args.K is not None:
        try:
            K = int(args.K)
        except ValueError:
            raise CLIError(f"-K must be a whole number >= 1, got {args.K!r}") from None
    if args.budget_bytes is not None:
        try:
            budget = to_fraction(args.budget_bytes, "--budget-bytes")
        except InstanceError as exc:
            raise CLIError(str(exc)) from None
    if args.time_limit is not None and args.time_limit <= 0:
        raise CLIError("--time-limit must be > 0")
    try:
        r = remat_report(schedule, K, budget, args.backward, args.objective, args.positions,
                         args.time_limit)
    except RematError as exc:
        raise CLIError(str(exc)) from None
    if args.json:
        print_json(r)
        return 0
    inst = schedule.instance
    value = r["span_exact"] if args.objective == "span" else r["makespan_exact"]
    print(f"P={inst.P} m={inst.m} v={inst.v}: {r['status']}  {args.objective} {value}  "
          f"lower bound {r['lower_bound_exact']}  makespan {r['makespan_exact']}  "
          f"fit_memory {r['fit_memory_makespan_exact']}  theory bound "
          f"{r['theory_lower_bound_exact']}  ({r['seconds']:.2f} s)")
    print(f"  recomputed ({len(r['recomputed'])}): " + " ".join(r["recomputed"]))
    if r["schedule"] is not None:
        for p, seq in r["schedule"]["orders"].items():
            print(f"  GPU {p}: " + " ".join(seq))
    return 0
