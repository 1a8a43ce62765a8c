"""``pipebounds frontier <instance> [--time-limit S] [--json]`` (CLI.md): the memory frontier.

JSON: ``K_star``, ``K_star_exact``, ``K_star_low`` and ``K_star_high`` (when not exact),
``optimum_unconstrained``, ``curve`` (list of ``{K, lower_bound, optimum or null, exact}``),
and for single-wave fused instances ``closed_form`` (the values of KF0-KF3,
docs/theory_frontier.md). The instance's ``-K`` is ignored.

SIGINT/SIGTERM: no more ``K`` is tried and no solve starts (every deadline expires, the running
solve stops); what is settled is printed (``K*`` as the proven range, the curve's rows with
their bounds), ``interrupted: true``, then exit 130/143 (a second signal ends it at once).
"""

from __future__ import annotations

from .common import (END_SECONDS, add_instance_flags, add_progress_flags, instance_from_args, print_json,
                     progress_arg, seconds_flag, check_solvable)


def register(sub) -> None:
    p = sub.add_parser("frontier", help="the least memory K* reaching the unconstrained optimum",
                       description="K* = the least K with OPT(K) = OPT(inf), and the curve "
                                   "OPT(K) for K = 1..K* (docs/theory_frontier.md). -K is "
                                   "ignored. Exact solves (when the theory and the "
                                   "construction do not settle K*) use at most --time-limit "
                                   "seconds each.")
    add_instance_flags(p)
    p.add_argument("--time-limit", type=seconds_flag("--time-limit", allow_zero=True),
                   default=10.0, help="seconds per exact solve (default 10; 0: no solving)")
    p.add_argument("--total-time", type=seconds_flag("--total-time", allow_inf=True),
                   default=60.0, metavar="S",
                   help="seconds for the whole run (default 60; inf: none): past it no more K "
                        "is tried and K* may be left as a proven range")
    p.add_argument("--solve-curve", action="store_true",
                   help="also solve each K < K* whose optimum the bounds do not give")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_progress_flags(p, "a progress bar (memory limits looked at)")
    p.set_defaults(func=run, defer_signals=True)  # a signal: what was settled is printed


def run(args) -> int:
    from pipebounds.services.frontier import frontier, frontier_report
    from .common import CLIError

    if args.time_limit < 0:
        raise CLIError("--time-limit must be >= 0")
    inst = instance_from_args(args)
    check_solvable(inst, args.time_limit or None, "frontier")
    from schedules.deadline import Deadline
    from schedules.stopping import signalled

    # --total-time is the user's wait: the process start-up and the output included; a signal
    # expires the deadline too (schedules.stopping), so K* is then left as the range proven
    total = None if args.total_time is None else max(0.05, args.total_time - END_SECONDS)
    rep = frontier_report(frontier(inst, time_limit=args.time_limit,
                                   solve_curve=args.solve_curve,
                                   progress=progress_arg(args),
                                   deadline=Deadline.since_start(total)))
    rep["interrupted"] = signalled() is not None
    if args.json:
        print_json({"instance": inst.with_(K=None).to_dict(), **rep})
        return 0
    opt = rep["optimum_unconstrained_exact"]
    if rep["interrupted"]:
        print("interrupted: what was settled before the signal")
    if rep["K_star_exact"]:
        print(f"K* = {rep['K_star']} (exact); OPT(inf) = {opt}")
    elif rep.get("K_star_high") is None:
        print(f"K* >= {rep['K_star_low']} (not settled); OPT(inf) = "
              + (opt if opt is not None else "not known"))
    else:
        print(f"{rep['K_star_low']} <= K* <= {rep['K_star_high']} (not settled); OPT(inf) = "
              + (opt if opt is not None else "not known"))
    for pt in rep["curve"]:
        known = pt["optimum_exact"] if pt["optimum_exact"] is not None else "not known"
        print(f"  K={pt['K']:<3} lower bound {pt['lower_bound_exact']:<8} optimum {known}"
              + ("  (exact)" if pt["exact"] else ""))
    return 0
