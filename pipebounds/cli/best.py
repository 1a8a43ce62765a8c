"""``pipebounds best <instance> [-K N | --budget-bytes X --memory JSON] [--backward] [--options LIST]
[--time-limit S] [--solve-time-limit S] [--json]`` (CLI.md, docs/remat.md).

Every applicable family, optimally rematerialized to the budget (:func:`pipebounds.services.best.best`),
ranked by makespan. JSON: ``ranking`` (list of ``{family, makespan, makespan_exact, peak,
status, order, recomputed}``, best first; ``order``: ``natural`` or ``fit_memory``, the
family's order after fit_memory moved W ops earlier), ``lower_bound`` (+ ``_exact``), ``optimum``
(+ ``_exact``;
null unless proven), ``optimum_status``, ``gap`` (+ ``gap_exact``: best makespan / reference - 1)
and ``gap_to`` (``optimum`` or ``lower_bound``), ``skipped`` (family -> reason), ``seconds``.
"""

from __future__ import annotations

from fractions import Fraction

from schedules.stopping import signalled

from .common import (CLIError, add_budget_flags, add_instance_flags, add_progress_flags,
                     exact_or_none, exact_string, instance_from_args, memory_limit,
                     number_or_none, print_json, progress_arg, quantity, seconds_flag,
                     check_solvable)


from schedules.remat_policies import POLICIES
from .remat import options_flag


def register(sub) -> None:
    p = sub.add_parser("best", help="every family optimally rematerialized to a budget, ranked",
                       description="Generate every applicable schedule family, rematerialize "
                                   "each optimally to the memory budget (its order fixed), rank "
                                   "them by makespan beside the lower bound and the exact "
                                   "optimum (when proven quickly).")
    add_instance_flags(p)
    add_budget_flags(p)
    p.add_argument("--backward", action="store_true",
                   help="also allow backward recomputes (split form; the bound and optimum do "
                        "not model them)")
    p.add_argument("--options", type=options_flag, default=None, metavar="LIST",
                   help="recompute options per pair, comma-separated subset of 1,2,3 (default "
                        "1; --backward adds 2; 3: recompute F and I before W), as in remat")
    p.add_argument("--time-limit", type=seconds_flag("--time-limit"), default=20.0, metavar="S",
                   help="CP-SAT seconds per family (default 20)")
    p.add_argument("--solve-time-limit", type=seconds_flag("--solve-time-limit", allow_zero=True),
                   default=5.0, metavar="S",
                   help="seconds for the exact optimum, 0 to skip (default 5)")
    p.add_argument("--synthesize", type=seconds_flag("--synthesize", allow_zero=True), default=0.0,
                   metavar="S",
                   help="also rank the schedule `pipebounds synthesize` finds in S seconds "
                        "(family 'synthesized'; default 0: off, so that best stays a ranking "
                        "of the families within their limits)")
    p.add_argument("--policy", choices=POLICIES, default="optimal",
                   help="how each family recomputes: optimal (default, exact), or a fixed rule "
                        "(megatron: microbatch j checkpointed iff j mod max_outstanding >= k; "
                        "deepspeed: every n-th stage; all; none), docs/remat.md")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_progress_flags(p, "a progress bar (families done, weighted by their op counts)")
    p.set_defaults(func=run, defer_signals=True)  # a signal: the ranking so far is printed


def synthesized_entry(inst, budget, seconds: float, start=()):
    """The :class:`~pipebounds.services.best.Entry` of the schedule synthesized in
    ``seconds`` (:func:`pipebounds.synthesis.synthesize`, started also from ``start``, the
    families' schedules, so it is never worse than them), as a ranking entry: ``status`` is
    the synthesis's (``optimal`` only when proven)."""
    from schedules.remat_optimal import RematResult
    from schedules.simulate import simulate
    from pipebounds.services.best import Entry
    from pipebounds.synthesis import synthesize

    syn = synthesize(inst, K=inst.K if budget is None else None, budget_bytes=budget,
                     time_limit=seconds, start=start)
    sim = simulate(syn.schedule)
    peak = sim.peak_bytes if budget is not None else sim.peak_memory
    recomputed = tuple(op for _, op in syn.schedule.ops() if op.kind == "R")
    result = RematResult(syn.status, "makespan", syn.schedule, syn.makespan, syn.lower_bound,
                         recomputed=recomputed, peak=list(peak), seconds=syn.seconds,
                         stats={"source": syn.source})
    return Entry("synthesized", result, order=syn.source), syn.seconds


def best_report(res) -> dict:
    from schedules.io import document_from_schedule

    return {
        "instance": res.instance.to_dict(),
        "ranking": [{"family": e.family, "makespan": number_or_none(e.makespan),
                     "makespan_exact": exact_or_none(e.makespan),
                     **quantity("peak", e.peak),
                     "status": e.status, "order": e.order,
                     "recomputed": len(e.result.recomputed) + len(e.result.backward_recomputed)
                     + len(e.result.input_recomputed),
                     "schedule": None if e.result.schedule is None else document_from_schedule(
                         e.result.schedule, source=f"pipebounds best ({e.family})")}
                    for e in res.ranking],
        "lower_bound": number_or_none(res.lower_bound),
        "lower_bound_exact": exact_or_none(res.lower_bound),
        "optimum": number_or_none(res.optimum), "optimum_exact": exact_or_none(res.optimum),
        "optimum_status": res.optimum_status,
        "gap": None if res.gap is None else float(res.gap), "gap_exact": exact_or_none(res.gap),
        "gap_to": res.gap_to, "skipped": res.skipped, "seconds": round(res.seconds, 3),
        "interrupted": signalled() is not None,
    }


def best_text(inst, budget, r: dict) -> list[str]:
    """``best``'s text: the reference values, then one line per family (written for people)."""
    from .simulate import percent

    limit = f"K={inst.K}" if budget is None else f"budget {exact_string(budget)} bytes"
    head = f"P={inst.P} m={inst.m} v={inst.v} {limit}: lower bound {r['lower_bound_exact']}"
    if r["optimum_exact"] is not None:
        head += f", optimum {r['optimum_exact']} (proven)"
    else:
        head += f", optimum not proven ({r['optimum_status'] or 'not solved'})"
    if r["gap_exact"] is not None:
        to = "the optimum" if r["gap_to"] == "optimum" else "the lower bound"
        head += f"; best family {percent(Fraction(r['gap_exact']))} above {to}"
    lines = [head]
    for k, e in enumerate(r["ranking"], 1):
        if e["makespan_exact"] is None:
            lines.append(f"  {k:2d}. {e['family']:<15} {e['status']:<10} no recompute choice fits")
            continue
        peak = " ".join(e["peak_exact"]) if e["peak_exact"] is not None else "unknown"
        lines.append(f"  {k:2d}. {e['family']:<15} {e['status']:<10} makespan "
                     f"{e['makespan_exact']:<6} peak {peak}  recomputes {e['recomputed']}  "
                     + ("(fit_memory's order: W ops moved earlier)" if e["order"] == "fit_memory"
                        else f"(its own order, policy {e['order']})" if e["order"] in POLICIES
                        else f"(by {e['order']})" if e["family"] == "synthesized"
                        else "(its own order)"))
    return lines


def run(args) -> int:
    from schedules.deadline import command_started
    from schedules.remat import RematError
    from pipebounds.services.best import best

    if not args.synthesize >= 0:
        raise CLIError(f"--synthesize must be >= 0 seconds, got {args.synthesize}")
    inst, budget = memory_limit(args, instance_from_args(args), "best")
    check_solvable(inst, args.time_limit, "best")
    try:
        res = best(inst, K=inst.K if budget is None else None, budget_bytes=budget,
                   backward=args.backward, time_limit=args.time_limit,
                   solve_time_limit=args.solve_time_limit or None, progress=progress_arg(args),
                   policy=args.policy, options=args.options,
                   started=command_started())  # the user's wait
    except RematError as exc:
        raise CLIError(str(exc)) from None
    if args.synthesize > 0:
        from pipebounds.synthesis import SynthesisError

        try:
            entry, seconds = synthesized_entry(
                inst, budget, args.synthesize,
                [(e.family, e.result.schedule) for e in res.ranking
                 if e.result.schedule is not None])
        except SynthesisError as exc:
            raise CLIError(str(exc)) from None
        res = res.with_entry(entry, seconds)
    r = best_report(res)
    r["policy"] = args.policy
    if args.json:
        print_json(r)
        return 0
    print("\n".join(best_text(inst, budget, r)))
    for name, why in r["skipped"].items():
        print(f"      {name:<15} skipped: {why}")
    return 0
