"""The synthesis as an engine of the portfolio (docs/search.md, "Portfolio with synthesis"):
:func:`quick_start`, the list schedules the caller tries before any engine starts, and
:class:`SynthesisEngine`, a backend (``solve(inst, options, channel) -> SolveResult``) that
:func:`pipebounds.search.portfolio.solve_portfolio` runs beside CP-SAT.

0. :func:`quick_start` (in the caller's process, a fraction of a second): the list schedules
   of :func:`~pipebounds.synthesis.start.list_candidates` until one meets the proven bound. On
   mid-``K`` instances the theory's bound is often the optimum and a list rule reaches it in
   milliseconds; the portfolio then answers ``optimal`` at its root check, with no process;

1. :func:`~pipebounds.synthesis.synthesize` (list rules, families with optimal remat,
   neighbourhoods; no exact phase) for ``seconds``, posting every improvement to the channel:
   when it meets the proven bound (the theory's, with ``use_theory``) the portfolio ends at once;
2. then CP-SAT *capped* one unit below the best makespan the portfolio holds (``channel.upper``,
   or the synthesized one): ``T <= U - 1``, hinted with the best schedule it has. Its
   *infeasible* proves the lower bound ``U`` (:func:`pipebounds.search.cpsat.build`, ``cap``), so
   the incumbent ``U`` is optimal. The capped solve is *restarted* (:func:`capped_restarts`) at
   its first schedule ``U' <= U - 1`` (posted like any other) with the cap ``U' - 1``, and when
   another engine posts a makespan at or below its cap: the proof of the final cap runs on the
   tightest horizon, which CP-SAT's presolve uses (a fresh solve at ``U - 1`` proved the optimum
   of ``-P 3 -m 5 -K 2 -v 2 -f 3 -b 3`` in 1.8-3.9 CPU s, where the uncapped solve that had found
   it needed 7.8 CPU s more; docs/search.md).

:func:`at_bound` (in the caller's process, after the list schedules and the families, before
any engine starts): CP-SAT capped *at* the proven bound ``L``, a feasibility problem
(``T = L``), hinted with the best family. When the theory's bound is the optimum this finds an
optimal schedule several times faster than the minimising solve (0.02-0.07 CPU s against
0.02-0.38 on the fresh mid-``K`` sets), and ``pipebounds solve`` then answers without engine
processes; when it is *infeasible* it proves ``L + 1`` and tries that, within its share of the
limit (:data:`AT_BOUND`). Its proven bound goes to the engine (``floor``). Its proofs rest on
the theory's bound (the model has ``T >= L``), so the engine takes ``floor`` only with
``use_theory``.

The lower bound it returns is CP-SAT's own proof (or the theory's bound with ``use_theory``):
the synthesis contributes schedules only, never a bound, so ``use_theory=False`` stays
independent of the theory. The synthesis lives above the engines (docs/architecture.md), so the
engines cannot import it: the caller (``pipebounds solve``) hands this object to the portfolio.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from schedules.instance import Instance
from pipebounds.search.backend import SolveOptions
from pipebounds.search.channel import SILENT, Channel
from pipebounds.search.proof import ceil_units, checked, status_of, theory_bound
from pipebounds.search.result import SolveResult

SYNTHESIS_SHARE = 0.5
"""The synthesis gets at most this share of the time limit; the capped CP-SAT the rest."""
QUICK_START = (0.03, 0.5)
""":func:`quick_start` gets ``min(share * time_limit, cap)`` seconds (the cap alone without a
limit); it stops as soon as a list schedule meets the bound."""
QUICK_START_CPU = 0.1
"""CPU seconds at most of :func:`quick_start`: on the fresh mid-``K`` sets a list rule that meets
the bound did so within 0.08 CPU s, and a miss tried every rule for up to 0.18 (at a wall budget
of 0.5 s under load 10), which the steps after it then waited for."""
AT_BOUND = (0.1, 2.0)
""":func:`at_bound` gets ``min(share * time_limit, cap)`` seconds (the cap alone without a
limit)."""


def quick_seconds(time_limit: Optional[float]) -> float:
    """The seconds of :func:`quick_start` under ``time_limit`` (:data:`QUICK_START`)."""
    share, cap = QUICK_START
    return cap if time_limit is None else min(cap, share * time_limit)


def at_bound_seconds(time_limit: Optional[float]) -> float:
    """The seconds of :func:`at_bound` under ``time_limit`` (:data:`AT_BOUND`)."""
    share, cap = AT_BOUND
    return cap if time_limit is None else min(cap, share * time_limit)


def at_bound(inst: Instance, lower: Fraction, seconds: float, hint=None,
             stop=lambda: False) -> tuple[Optional[tuple], int]:
    """CP-SAT capped at the proven bound ``lower`` (module docstring): ``(known, floor)``, where
    ``known`` is ``(source, schedule, makespan)`` of a schedule of makespan ``floor / unit`` (then
    optimal) or None, and ``floor`` is the bound proven (units: ``lower``, raised by one unit per
    infeasible cap), within ``seconds``. ``hint``: a valid schedule (above the cap: a partial
    hint). ``stop``: the caller's stop test (a signal)."""
    from pipebounds.search.cpsat import solve_cpsat

    unit = inst.unit
    floor = ceil_units(lower, unit)
    end = time.monotonic() + seconds
    while not stop():
        left = end - time.monotonic()
        if left <= 0.02:
            break
        c = solve_cpsat(inst, time_limit=left, hint=hint, use_known=False, lb_theory=lower,
                        cap=floor, catch_sigint=False, until=stop)
        code = c.stats.get("cpsat_status")
        if c.makespan is not None and ceil_units(c.makespan, unit) <= floor:
            return ("cpsat (at the bound)", c.schedule, c.makespan), floor
        if code != "INFEASIBLE":
            break
        floor += 1
    return None, floor


def quick_start(inst: Instance, lower: Fraction, seconds: float,
                cpu_seconds: Optional[float] = None) -> Optional[tuple]:
    """The best list schedule of ``inst`` (memory a count ``K``) found in ``seconds`` (and,
    when given, ``cpu_seconds`` of this process's CPU time, whichever runs out first; default
    :data:`QUICK_START_CPU`), stopping at the first whose makespan is at most ``lower`` (a proven
    bound: it is then optimal), as ``(source, schedule, makespan)`` (the ``known`` of
    :class:`~pipebounds.search.backend.SolveOptions`), or None (no list schedule fits)."""
    from .start import list_candidates

    if inst.K is None:
        return None
    cpu = QUICK_START_CPU if cpu_seconds is None else cpu_seconds
    w0, c0 = time.monotonic(), time.process_time()
    scale = seconds / cpu if cpu > 0 else 0.0

    def now() -> float:  # the elapsed share of the budget that runs out first, in wall seconds
        return max(time.monotonic() - w0, (time.process_time() - c0) * scale)

    cands = list_candidates(inst, inst.K, seconds, target=lower, now=now)
    if not cands:
        return None
    best = min(cands, key=lambda c: c.makespan)
    sched = best.schedule.with_instance(inst)
    return (f"synthesize ({best.source})", sched, checked(inst, sched))


class _Schedules(Channel):
    """Forwards the synthesis's schedules and the caller's stop; drops its bounds (the theory's:
    the portfolio has it when it may use it, and must not get it otherwise)."""

    def __init__(self, outer: Channel, name: str):
        self.outer, self.name = outer, name

    def stop(self) -> bool:
        return self.outer.stop()

    def upper(self) -> Optional[int]:
        return self.outer.upper()

    def lower(self) -> int:
        return self.outer.lower()

    def incumbent(self, engine: str, makespan: int, orders) -> None:
        self.outer.incumbent(self.name, makespan, orders)


@dataclass(frozen=True)
class SynthesisEngine:
    """The backend ``synthesize``: ``seconds`` of synthesis, then CP-SAT capped below the best
    makespan held (module docstring). Frozen and made of plain values, so that it travels to an
    engine process under any start method."""

    seconds: float
    name: str = "synthesize"
    memory_bytes: bool = False
    floor: int = 0
    """A lower bound (units) the caller proved by CP-SAT (:func:`at_bound`), or 0."""

    def solve(self, inst: Instance, options: SolveOptions = SolveOptions(),
              channel: Channel = SILENT) -> SolveResult:
        from .synthesize import SynthesisError, synthesize

        t0 = time.monotonic()
        limit = options.time_limit
        unit = inst.unit
        lb = theory_bound(inst, options.use_theory, options.lb_theory)
        if self.floor and options.use_theory:  # at_bound's proof rests on the theory's bound
            lb = max(lb, Fraction(self.floor, unit))
            channel.bound(self.name, self.floor)
        seconds = self.seconds if limit is None else min(self.seconds, SYNTHESIS_SHARE * limit)
        stats: dict = {"synthesis_seconds": 0.0, "independent": not options.use_theory}
        try:
            syn = synthesize(inst, time_limit=max(0.05, seconds), exact=False,
                             channel=_Schedules(channel, self.name))
        except SynthesisError as exc:  # a feature it does not model: no schedule from it
            stats["synthesis_error"] = str(exc)
            syn = None
        stats["synthesis_seconds"] = time.monotonic() - t0
        if syn is None:
            return SolveResult("unknown", None, None, lb, 0, time.monotonic() - t0, self.name,
                               "", stats)
        sched = syn.schedule.with_instance(inst)
        ms = checked(inst, sched)
        stats["synthesized"] = ms
        source = f"synthesize ({syn.source})"
        left = None if limit is None else limit - (time.monotonic() - t0)
        own = ceil_units(ms, unit)
        up = channel.upper()
        cap = (own if up is None else min(own, up)) - 1
        if channel.stop() or (left is not None and left <= 0.05) or cap < ceil_units(lb, unit):
            return SolveResult(status_of(ms, lb), sched, ms, lb, 0, time.monotonic() - t0,
                               self.name, source, stats)
        sched, ms, source, lower, nodes = capped_restarts(
            inst, options, channel, sched, ms, source, lb, None if limit is None else t0 + limit,
            stats)
        return SolveResult(status_of(ms, lower), sched, ms, Fraction(lower), nodes,
                           time.monotonic() - t0, self.name, source, stats)


class _FirstSolution(Channel):
    """The caller's channel, stopping at the first schedule reported through it."""

    def __init__(self, outer: Channel):
        self.outer, self.found = outer, False

    def stop(self) -> bool:
        return self.found or self.outer.stop()

    def upper(self) -> Optional[int]:
        return self.outer.upper()

    def lower(self) -> int:
        return self.outer.lower()

    def incumbent(self, engine: str, makespan: int, orders) -> None:
        self.found = True
        self.outer.incumbent(engine, makespan, orders)

    def bound(self, engine: str, lower: int) -> None:
        self.outer.bound(engine, lower)


def capped_restarts(inst: Instance, options: SolveOptions, channel: Channel, sched, ms: Fraction,
                    source: str, lower: Fraction, end: Optional[float], stats: dict):
    """CP-SAT capped one unit below the best makespan held (its own ``ms`` or the channel's
    ``upper``), restarted below each schedule it finds and whenever another engine posts one at
    or below its cap (module docstring), until a cap is proven infeasible (the held makespan is
    then optimal), the proven ``lower`` is reached, ``end`` (a ``time.monotonic`` instant) or a
    stop. Returns ``(schedule, makespan, source, lower bound, nodes)``: the best schedule it has
    and the largest bound it proved (with ``lower``); ``stats["restarts"]`` counts the solves."""
    from pipebounds.search.cpsat import solve_cpsat

    unit = inst.unit
    nodes, restarts = 0, 0
    while not channel.stop():
        left = None if end is None else end - time.monotonic()
        up = channel.upper()
        held = ceil_units(ms, unit) if up is None else min(ceil_units(ms, unit), up)
        cap = held - 1
        if cap < ceil_units(lower, unit) or (left is not None and left <= 0.05):
            break

        def overtaken(cap=cap) -> bool:  # another engine holds a schedule within the cap
            u = channel.upper()
            return u is not None and u <= cap

        c = solve_cpsat(inst, time_limit=left, workers=options.workers, hint=sched,
                        use_theory=options.use_theory, channel=_FirstSolution(channel),
                        catch_sigint=options.catch_sigint, lb_theory=options.lb_theory, cap=cap,
                        until=overtaken)
        restarts += 1
        nodes += c.nodes
        stats.update(c.stats)
        lower = max(lower, c.lower_bound)
        if c.schedule is not None and c.makespan is not None and c.makespan < ms:
            sched, ms, source = c.schedule, c.makespan, "cpsat"
        code = c.stats.get("cpsat_status")
        if code in ("INFEASIBLE", "OPTIMAL"):
            break  # cap + 1 proven (or the optimum within the cap found)
        if code == "FEASIBLE" or overtaken():
            continue  # a schedule within the cap: restart below it
        break  # the limit or a stop
    stats["restarts"] = restarts
    return sched, ms, source, lower, nodes
