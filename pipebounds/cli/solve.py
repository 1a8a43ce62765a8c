"""``pipebounds solve <instance> [--engine portfolio|search|cpsat|auto] [--time-limit S]
[--progress|--quiet] [--json]`` (CLI.md, docs/CLI.md).

Also ``--batch FILE|-``: one instance per JSON line, a JSON list of results (each with its
``instance``; a bad line gives an ``error`` and does not stop the others).
JSON keys: ``status``, ``makespan``, ``makespan_exact``, ``lower_bound``, ``lower_bound_exact``,
``seconds``, ``nodes``, ``engine``, ``source``, ``schedule`` (an orders document, or null),
``interrupted``, ``optimum_basis`` (why the status is ``optimal``: ``solver``, or the basis of
:mod:`pipebounds.certify` that knows the optimum the schedule reaches; else null).

SIGINT and SIGTERM end the solve with the best schedule and bound found so far (status
``feasible`` or ``unknown``); with ``--batch`` the finished results are kept and the lines not
reached get an ``error`` (not solved: interrupted). The exit status is then 130 (SIGINT) or
143 (SIGTERM).
"""

from __future__ import annotations

import dataclasses
import signal
import sys

from schedules.instance import Instance
from schedules.io import document_from_schedule
from .common import END_SECONDS, CLIError, add_instance_flags, exact_string, instance_from_args, number, \
    print_json, batch_results, check_solvable, seconds_flag, whole_flag

DEFAULT_TIME_LIMIT = 60.0
"""Seconds per instance unless ``--time-limit`` says otherwise."""

SYNTH_SHARE, SYNTH_MAX = 0.1, 5.0
"""``--synthesize auto``: this share of the time limit, at most this many seconds."""

EXIT_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""Exit status after an interrupt: 128 + the signal number, as shells report it."""


def register(sub) -> None:
    p = sub.add_parser(
        "solve", help="exact optimum (portfolio of branch and bound and CP-SAT)",
        description="Find a makespan-optimal schedule and prove it optimal (status optimal), or "
                    "report the best found and the best proven lower bound (feasible; unknown "
                    "when nothing was found) at the time limit. SIGINT (Ctrl-C) or SIGTERM ends "
                    "with the best found so far, exit status 130 or 143.")
    add_instance_flags(p)
    p.add_argument("--batch", metavar="FILE", default=None,
                   help="JSON lines of instances (or - for standard input) instead of flags")
    p.add_argument("--time-limit", type=str, default=str(int(DEFAULT_TIME_LIMIT)), metavar="S",
                   help=f"seconds per instance (default {int(DEFAULT_TIME_LIMIT)}; 'inf' for "
                        "none); at the limit the result is the best schedule and bound so far")
    p.add_argument("--engine", choices=("portfolio", "search", "cpsat", "auto"),
                   default="portfolio",
                   help="portfolio (default: branch and bound and CP-SAT side by side in two "
                        "processes, the first proof wins), search (pure Python branch and "
                        "bound), cpsat (OR-tools CP-SAT), auto (alias of portfolio)")
    p.add_argument("--workers", type=whole_flag("--workers", 1, 1024), default=1,
                   help="CP-SAT threads (default 1)")
    p.add_argument("--synthesize", type=str, default="0", metavar="S|auto",
                   help="seconds of `pipebounds synthesize` (list rules, families with optimal "
                        "remat, neighbourhood search) whose schedule is the engines' first "
                        "incumbent; 'auto': 10%% of the time limit, at most "
                        f"{SYNTH_MAX:g} s, for the portfolio and cpsat engines; with the "
                        "portfolio list schedules come first and the synthesis runs beside "
                        "CP-SAT (docs/search.md); 0 (default): off (not measured faster on "
                        "mid-K instances)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true",
                   help="print incumbent, bound, elapsed time and engine to stderr (default "
                        "when stderr is a terminal)")
    g.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _time_limit(text: str) -> float | None:
    """``--time-limit``: seconds > 0, or ``inf`` (None), through the one number reader."""
    import argparse

    try:
        return seconds_flag("--time-limit", allow_inf=True)(text)
    except argparse.ArgumentTypeError as exc:
        raise CLIError(str(exc)) from None


class _Interrupt:
    """The signal that asked the solve to stop (None while running)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self) -> bool:
        return self.signum is not None

    def handler(self, signum, frame) -> None:
        if self.signum is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: give up at once
        self.signum = signum


def _synthesis_seconds(args, limit) -> float:
    """The seconds of ``--synthesize`` (0: off); CLIError for a bad value."""
    text = str(getattr(args, "synthesize", "0")).strip().lower()
    if text == "auto":
        if args.engine not in ("portfolio", "auto", "cpsat"):
            return 0.0
        return SYNTH_MAX if limit is None else min(SYNTH_MAX, SYNTH_SHARE * limit)
    import argparse

    try:  # the one number reader: ASCII digits, no nan/inf, >= 0
        return seconds_flag("--synthesize", allow_zero=True)(text)
    except argparse.ArgumentTypeError as exc:
        raise CLIError(f"{exc} (or 'auto')") from None


def _synthesized(inst: Instance, args, limit, channel, deadline=None):
    """The schedule of a short synthesis (the engines' first incumbent), or None (off, or the
    instance needs a feature the synthesis refuses). It gets at most half of what ``deadline``
    (a :class:`schedules.deadline.Deadline`) leaves: the engines need the rest."""
    seconds = _synthesis_seconds(args, limit)
    left = None if deadline is None else deadline.remaining()
    if left is not None:
        seconds = min(seconds, left / 2)
    from ..services.incumbent import synthesized_incumbent

    return synthesized_incumbent(inst, seconds, channel=_Quiet(channel))


def _beside(inst: Instance, args, limit):
    """The portfolio's synthesis engine (:class:`pipebounds.synthesis.engine.SynthesisEngine`)
    when ``--synthesize`` asks for it with the portfolio on an instance whose memory is a count
    ``K`` (docs/search.md, "Portfolio with synthesis"), else None (the synthesis, if any, runs
    first and hands its schedule over)."""
    seconds = _synthesis_seconds(args, limit)
    if (args.engine not in ("portfolio", "auto") or seconds <= 0.05 or inst.K is None
            or (inst.memory is not None and inst.memory.budget is not None)):
        return None
    from pipebounds.synthesis.engine import SynthesisEngine

    return SynthesisEngine(seconds)


def _quick_options(inst: Instance, deadline, workers: int, stop):
    """``(options, floor, shot)``: the portfolio's options after the steps in the caller's
    process (docs/search.md, "Portfolio with synthesis"). First the list schedules of
    :func:`pipebounds.synthesis.engine.quick_start`: the best is the first incumbent, and when
    it meets the theory's bound the known schedules are not computed (the portfolio answers at
    its root check). Else the known schedules (the portfolio's ``known``; when one meets the
    bound, the root check answers), then :func:`pipebounds.synthesis.engine.at_bound` (CP-SAT
    capped at the bound, hinted with the best family): ``shot`` is its
    ``(source, schedule, makespan)`` when it found a schedule at the bound it proved (optimal,
    no engine needed), else None, and ``floor`` that bound in units (0 when it proved nothing
    beyond the theory's). ``deadline``: when the answer is due (a
    :class:`schedules.deadline.Deadline`); the options' time limit is what these steps leave
    of it."""
    from pipebounds.search.backend import SolveOptions
    from pipebounds.search.incumbent import best_known
    from pipebounds.search.proof import ceil_units, root_lower_bound
    from schedules.deadline import Deadline
    from pipebounds.synthesis.engine import at_bound, at_bound_seconds, quick_seconds, \
        quick_start

    def left():  # the time left for the engines, at the moment they start
        rest = deadline.remaining()
        return None if rest is None else max(0.05, rest - END_SECONDS)

    lb = root_lower_bound(inst)
    options = SolveOptions(time_limit=left(), workers=workers, lb_theory=lb)
    if stop is not None and stop():
        return options, 0, None
    quick = quick_start(inst, lb, quick_seconds(left()))
    if quick is not None and quick[2] <= lb:
        return options.replace(known=quick, time_limit=left()), 0, None
    # the known schedules (families) now, as the portfolio would: their best is the hint of
    # CP-SAT at the bound (a family's early part is a better partial hint than a list
    # schedule's: at P=6 m=8 K=3 f=3 split 1/1, 0.1 CPU s against 2.5-5 without finding)
    rest = left()
    known = best_known(inst, Deadline.after(None if rest is None else rest / 2))
    options = options.replace(known=known) if known is not None else options.replace(
        use_known=False)
    if quick is not None:
        options = options.replace(incumbent=quick[1])
    if known is not None and known[2] <= lb:  # the portfolio answers at its root check
        return options.replace(time_limit=left()), 0, None
    hint = known[1] if known is not None else None if quick is None else quick[1]
    shot, floor = at_bound(inst, lb, at_bound_seconds(left()), hint=hint,
                           stop=stop if stop is not None else (lambda: False))
    return (options.replace(time_limit=left()),
            floor if floor > ceil_units(lb, inst.unit) else 0, shot)


def _Quiet(outer):
    """A channel with the caller's stop test only (the solve's progress reports the incumbent
    it adopts)."""
    from pipebounds.search.channel import Channel

    class Quiet(Channel):
        def stop(self) -> bool:
            return outer.stop()

    return Quiet()


def solve_report(inst: Instance, args, stop=None, deadline=None) -> dict:
    """The JSON object of one solved instance. ``deadline``: when the answer is due (a
    :class:`schedules.deadline.Deadline`; default: ``--time-limit`` from now), the synthesis,
    the engines and their ending included."""
    from pipebounds.search import Progress, solve
    from pipebounds.search.backend import SolveOptions
    from pipebounds.search.portfolio import solve_portfolio
    from schedules.deadline import Deadline

    if stop is not None and stop():
        raise ValueError("not solved: interrupted")
    show = not args.quiet and (args.progress or sys.stderr.isatty())
    channel = Progress(inst.unit, stop=stop, enabled=show)
    limit = _time_limit(args.time_limit)
    check_solvable(inst, limit)
    if deadline is None:
        deadline = Deadline.after(limit)
    beside = _beside(inst, args, limit)
    incumbent = None if beside is not None else _synthesized(inst, args, limit, channel, deadline)
    left = deadline.remaining()
    left = None if left is None else max(0.05, left - END_SECONDS)
    if beside is not None:  # list schedules and CP-SAT at the bound first, then the
        # synthesis beside CP-SAT
        import time

        t0 = time.monotonic()
        options, floor, shot = _quick_options(inst, deadline, args.workers, stop)
        if shot is not None:  # CP-SAT's schedule at the bound CP-SAT proved: optimal
            from pipebounds.search.result import SolveResult

            res = SolveResult("optimal", shot[1], shot[2], shot[2], 0, time.monotonic() - t0,
                              "portfolio", shot[0], {"proof": "at_bound"})
        else:
            if floor:
                beside = dataclasses.replace(beside, floor=floor)
            res = solve_portfolio(inst, options, channel=channel, engines=(beside, "cpsat"),
                                  engine_name="portfolio")
    elif args.engine == "cpsat":  # in a process too, so that a signal gets its best answer
        res = solve_portfolio(inst, SolveOptions(time_limit=left, workers=args.workers,
                                                 incumbent=incumbent),
                              channel=channel, engines=("cpsat",), engine_name="cpsat")
    else:
        res = solve(inst, time_limit=left, engine=args.engine, workers=args.workers,
                    channel=channel, incumbent=incumbent)
    interrupted = bool(stop is not None and stop())
    # the certifier: a schedule whose makespan is an optimum known on another basis (theorem,
    # checked range, pipebounds/data/optima.jsonl) is optimal even when the solver did not prove it
    # (a proven optimum needs none: the bound is the makespan already; the table's reader is
    # about 0.08 CPU s of a command that may take 0.4)
    cert = None
    if res.status != "optimal":
        from ..certify import certify

        cert = certify(inst)
    status, bound = res.status, res.lower_bound
    if cert is not None and cert.optimum is not None:  # a known optimum is the best bound
        bound = max(bound, cert.optimum)
        if status == "feasible" and res.makespan == cert.optimum:
            status = "optimal"
    return {"status": status,
            "optimum_basis": ("solver" if res.status == "optimal" else
                              cert.basis if status == "optimal" and cert is not None
                              else None),
            "makespan": None if res.makespan is None else number(res.makespan),
            "makespan_exact": None if res.makespan is None else exact_string(res.makespan),
            "lower_bound": number(bound),
            "lower_bound_exact": exact_string(bound),
            "seconds": round(res.seconds, 4),
            "nodes": res.nodes,
            "proof": (res.stats or {}).get("proof"),
            "unreported": list((res.stats or {}).get("unreported", [])),
            "engine": res.engine,
            "source": res.source,
            "interrupted": interrupted,
            "schedule": None if res.schedule is None else document_from_schedule(
                res.schedule, source=f"pipebounds solve ({res.engine})")}


def _nodes_text(r: dict) -> str:
    """The search effort for people: nodes of every engine, or why there was no search."""
    if r["nodes"] == 0 and r["status"] == "optimal" and r.get("source") not in (
            "search", "cpsat", "portfolio", None, ""):
        return f"no search: the {r['source']} schedule meets the bound"
    text = f"{r['nodes']} nodes"
    if r.get("unreported"):
        text += f" ({', '.join(r['unreported'])} stopped before reporting its count)"
    return text


def _text(inst: Instance, r: dict) -> str:
    head = (f"P={inst.P} m={inst.m} v={inst.v} K={inst.K if inst.K else 'inf'}: {r['status']}"
            f"  makespan {r['makespan_exact'] or 'none found'}  lower bound {r['lower_bound_exact']}"
            f"  ({r['seconds']:.2f} s, {_nodes_text(r)}, {r['engine']})"
            + ("  [interrupted]" if r.get("interrupted") else ""))
    lines = [head]
    if r["schedule"] is not None:
        for p, seq in r["schedule"]["orders"].items():
            lines.append(f"  GPU {p}: " + " ".join(seq))
    return "\n".join(lines)


def run(args) -> int:
    _synthesis_seconds(args, _time_limit(args.time_limit))  # usage errors before any work
    stop = _Interrupt()
    saved = {s: signal.signal(s, stop.handler) for s in EXIT_SIGNAL}
    try:
        if args.batch is not None:
            results = batch_results(args, lambda inst: solve_report(inst, args, stop))
            if args.json:
                print_json(results)
            else:
                for r in results:
                    if "error" in r:
                        print(f"error: {r['error']}")
                    else:
                        print(_text(Instance.from_dict(r["instance"]), r))
        else:
            from schedules.deadline import Deadline

            inst = instance_from_args(args)
            # one instance: the limit is the user's wait, the process start-up included
            r = solve_report(inst, args, stop, Deadline.since_start(_time_limit(args.time_limit)))
            if args.json:
                print_json(r)
            else:
                print(_text(inst, r))
        sys.stdout.flush()
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    return EXIT_SIGNAL[stop.signum] if stop.signum is not None else 0
