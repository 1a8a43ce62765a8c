"""``pipebounds synthesize <instance> [-K N | --budget-bytes X --memory JSON|FILE]
[--time-limit S] [--objective makespan|span] [--backward] [--seed N] [--workers N]
[--periodic S|auto]
[--progress|--quiet] [--json]`` (CLI.md third round, docs/synthesis.md).

A valid schedule under the memory limit, improved until the time limit
(:func:`pipebounds.synthesis.synthesize`). JSON: ``schedule`` (an orders document),
``makespan``/``makespan_exact``, ``value``/``value_exact`` (the objective's value: the makespan,
or the largest per-GPU span), ``lower_bound``/``lower_bound_exact`` (proven, on the objective),
``binding`` (the theorem ids of the bound's terms that reach it; ``solver`` when CP-SAT proved
more), ``gap``/``gap_exact`` (value / bound, the certified gap), ``status`` (``optimal`` only when
proven), ``source`` (the method that produced the schedule), ``methods`` (what ran, what was
skipped and why), ``history`` (``[seconds, value]`` at each improvement), ``objective``,
``seconds``, ``interrupted``, ``instance``; when a periodic template was searched (``--periodic
S``, or ``auto`` on large ``m / P``: :func:`periodic_seconds`), ``periodic`` (the periodic
template searched first, :func:`pipebounds.search.periodic.best_periodic`, whose unrolled
schedule the synthesis starts from: ``found``, ``q``, ``period``/``period_exact``,
``ratio``/``ratio_exact`` (its makespan per microbatch), ``bound_slope_exact``,
``makespan_exact`` of the unrolled schedule, ``seconds``).

SIGINT and SIGTERM end the run with the best schedule so far (exit 130 or 143).
"""

from __future__ import annotations

import signal
import sys
import time

from .common import (CLIError, add_budget_flags, add_instance_flags, exact_string, instance_from_args,
                     memory_limit, number, print_json, quantity)
from .common import END_SECONDS, check_solvable, seconds_flag, whole_flag
from .solve import EXIT_SIGNAL, _Interrupt, _time_limit

DEFAULT_TIME_LIMIT = 60.0
DEFAULT_WORKERS = 2
#: ``--periodic auto`` (the default) searches a template only where one was measured to pay
#: (docs/synthesis.md, *Periodic steady state*): ``m >= AUTO_M_PER_P * P``, ``P <= AUTO_MAX_P``
#: (CP-SAT found none at ``P = 16`` in 30 s), ``K < v P`` (memory binds) and an instance the
#: periodic model covers; it then takes a third of the time.
AUTO_M_PER_P, AUTO_MAX_P, AUTO_SHARE = 16, 8, 1 / 3


def _periodic_flag(text: str):
    """``--periodic``: ``auto`` or seconds (0: off)."""
    if text == "auto":
        return text
    return seconds_flag("--periodic", allow_zero=True)(text)


_periodic_flag.__name__ = "--periodic"


def register(sub) -> None:
    p = sub.add_parser(
        "synthesize", help="a schedule for any size, improved until the time limit, with its "
                           "certified gap",
        description="Synthesize a valid schedule under the memory limit: the best of the "
                    "families (optimally rematerialized) and of list schedules with searched "
                    "priority rules, improved by large neighbourhood search (CP-SAT on windows "
                    "of the schedule) until the time limit; reports the gap to the proven lower "
                    "bound. SIGINT (Ctrl-C) or SIGTERM ends with the best so far, exit status "
                    "130 or 143.")
    add_instance_flags(p)
    add_budget_flags(p)
    p.add_argument("--time-limit", type=str, default=str(int(DEFAULT_TIME_LIMIT)), metavar="S",
                   help=f"seconds (default {int(DEFAULT_TIME_LIMIT)})")
    p.add_argument("--objective", choices=("makespan", "span"), default="makespan",
                   help="makespan (default) or span (the largest per-GPU span)")
    p.add_argument("--backward", action="store_true",
                   help="the families may also recompute between I and W (split form)")
    p.add_argument("--seed", type=whole_flag("--seed", 0), default=0, help="seed of the neighbourhood choice")
    p.add_argument("--workers", type=whole_flag("--workers", 1), default=DEFAULT_WORKERS,
                   help="CP-SAT threads of the exact phase (instances of at most 400 ops; "
                        "with 2 or more, up to 2000 ops) (default "
                        f"{DEFAULT_WORKERS}: the two cores the synthesis is measured on)")
    p.add_argument("--periodic", type=_periodic_flag, default="auto", metavar="S|auto",
                   help="first spend up to S of the seconds (at most half) on a periodic "
                        "template at the bound's slope (CP-SAT) and start from its unrolled "
                        "schedule, for m much larger than P (needs -K and one direction); "
                        f"'auto' (default): a third of the time where m >= {AUTO_M_PER_P} P, "
                        f"P <= {AUTO_MAX_P} and K < v P, else off; 0: off")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true",
                   help="print each improvement to stderr (default when it is a terminal)")
    g.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def synthesis_report(res) -> dict:
    """The JSON object of a :class:`~pipebounds.synthesis.SynthesisResult`."""
    from schedules.io import document_from_schedule

    gap = res.gap
    return {
        "status": res.status, "objective": res.objective,
        "makespan": number(res.makespan), "makespan_exact": exact_string(res.makespan),
        "value": number(res.value), "value_exact": exact_string(res.value),
        "lower_bound": number(res.lower_bound),
        "lower_bound_exact": exact_string(res.lower_bound),
        "binding": list(res.binding),
        **quantity("gap", gap),
        "source": res.source, "methods": list(res.methods),
        "history": [[t, number(v)] for t, v in res.history],
        "seconds": round(res.seconds, 3), "interrupted": res.interrupted,
        "instance": res.schedule.instance.to_dict(),
        "schedule": document_from_schedule(res.schedule,
                                           source=f"pipebounds synthesize ({res.source})"),
    }


def _gap_text(gap) -> str:
    """The certified gap (value / bound) for people: how far above the bound, in percent."""
    from .simulate import percent

    if gap is None:
        return "gap unknown"
    return "on the bound" if gap == 1 else f"{percent(gap - 1)} above the bound"


def _periodic_start(inst, budget, seconds: float, stop=None):
    """``--periodic``: the best periodic template found in ``seconds``
    (:func:`pipebounds.search.periodic.best_periodic`) unrolled to ``inst.m``, as a synthesis
    start, and its JSON object."""
    from pipebounds.search.periodic import PeriodicError, best_periodic, bound_slope
    from schedules.simulate import simulate

    if budget is not None:
        raise CLIError("--periodic needs the memory limit in activations (-K), not "
                       "--budget-bytes")
    t0 = time.perf_counter()
    try:
        slope, _ = bound_slope(inst)
        res = best_periodic(inst, time_limit=seconds, slope=slope, stop=stop)
    except PeriodicError as exc:
        raise CLIError(f"--periodic: {exc}") from None
    out: dict = {"found": res is not None, "bound_slope_exact": exact_string(slope)}
    if res is None:
        out["seconds"] = round(time.perf_counter() - t0, 3)
        return (), out
    tpl = res.template
    sched = tpl.unroll(inst.m)
    out.update(q=tpl.q, **quantity("period", tpl.period),
               **quantity("ratio", tpl.slope),
               makespan_exact=exact_string(simulate(sched).makespan),
               seconds=round(res.seconds, 3))
    return ((sched.source, sched),), out


def periodic_seconds(flag, inst, budget, left: float) -> float:
    """Seconds for the periodic template: ``flag`` (``--periodic``) capped at half of ``left``,
    or for ``auto`` a third of ``left`` on the instances of :data:`AUTO_M_PER_P` and
    :data:`AUTO_MAX_P` that the periodic model covers (else 0)."""
    if flag != "auto":
        return min(flag, left / 2)
    from pipebounds.search.periodic import PeriodicError, check_covered

    if (budget is not None or inst.K is None or inst.P > AUTO_MAX_P
            or inst.m < AUTO_M_PER_P * inst.P or inst.K >= inst.v * inst.P):
        return 0.0
    try:
        check_covered(inst)
    except PeriodicError:
        return 0.0
    return left * AUTO_SHARE


def run(args) -> int:
    from pipebounds.search import Progress
    from pipebounds.synthesis import SynthesisError, synthesize

    limit = _time_limit(args.time_limit)
    if limit is None:
        raise CLIError("--time-limit must be finite for synthesize (it stops only at the limit "
                       "or at the bound)")
    inst, budget = memory_limit(args, instance_from_args(args), "synthesize")
    check_solvable(inst, limit, "synthesize")
    stop = _Interrupt()
    saved = {s: signal.signal(s, stop.handler) for s in EXIT_SIGNAL}
    try:
        show = not args.quiet and (args.progress or sys.stderr.isatty())
        channel = Progress(inst.unit, stop=stop, enabled=show)
        from schedules.deadline import Deadline

        # the limit is the user's wait: the process start-up and the output included
        left = max(0.05, (Deadline.since_start(limit).remaining() or 0.0) - END_SECONDS)
        start, periodic = (), None
        seconds = periodic_seconds(args.periodic, inst, budget, left)
        if seconds > 0:
            start, periodic = _periodic_start(inst, budget, seconds, stop)
            left = max(0.05, (Deadline.since_start(limit).remaining() or 0.0) - END_SECONDS)
        try:
            res = synthesize(inst, K=inst.K if budget is None else None, budget_bytes=budget,
                             time_limit=left, objective=args.objective, channel=channel,
                             seed=args.seed, backward=args.backward, start=start,
                             workers=args.workers)
        except SynthesisError as exc:
            raise CLIError(str(exc)) from None
        r = synthesis_report(res)
        if periodic is not None:
            r["periodic"] = periodic
        if args.json:
            print_json(r)
        else:
            print(f"P={inst.P} m={inst.m} v={inst.v} "
                  + (f"K={inst.K}" if budget is None else f"budget {exact_string(budget)} bytes")
                  + f": {r['status']}  {res.objective} {r['value_exact']}  lower bound "
                  f"{r['lower_bound_exact']} ({', '.join(res.binding)})  {_gap_text(res.gap)}"
                  f"  source {res.source}  ({res.seconds:.1f} s)"
                  + ("  [interrupted]" if res.interrupted else ""))
            if periodic is not None:
                print("  periodic start: " + (
                    f"q={periodic['q']} period {periodic['period_exact']} "
                    f"({periodic['ratio_exact']} per microbatch; the bound's slope "
                    f"{periodic['bound_slope_exact']}), unrolled {periodic['makespan_exact']}"
                    if periodic["found"] else
                    f"none found in {periodic['seconds']} s (the bound's slope "
                    f"{periodic['bound_slope_exact']})"))
            for p, seq in r["schedule"]["orders"].items():
                print(f"  GPU {p}: " + " ".join(seq))
        sys.stdout.flush()
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    return EXIT_SIGNAL[stop.signum] if stop.signum is not None else 0
