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
   or the synthesized one): ``T <= U - 1``, hinted with the synthesized schedule. Its
   *infeasible* proves the lower bound ``U`` (:func:`pipebounds.search.cpsat.build`, ``cap``), so
   the incumbent ``U`` is optimal; a schedule it finds is posted like any other.

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


def quick_seconds(time_limit: Optional[float]) -> float:
    """The seconds of :func:`quick_start` under ``time_limit`` (:data:`QUICK_START`)."""
    share, cap = QUICK_START
    return cap if time_limit is None else min(cap, share * time_limit)


def quick_start(inst: Instance, lower: Fraction, seconds: float) -> Optional[tuple]:
    """The best list schedule of ``inst`` (memory a count ``K``) found in ``seconds``, stopping
    at the first whose makespan is at most ``lower`` (a proven bound: it is then optimal), as
    ``(source, schedule, makespan)`` (the ``known`` of
    :class:`~pipebounds.search.backend.SolveOptions`), or None (no list schedule fits)."""
    from .start import list_candidates

    if inst.K is None:
        return None
    cands = list_candidates(inst, inst.K, time.monotonic() + seconds, target=lower)
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

    def solve(self, inst: Instance, options: SolveOptions = SolveOptions(),
              channel: Channel = SILENT) -> SolveResult:
        from pipebounds.search.cpsat import solve_cpsat
        from .synthesize import SynthesisError, synthesize

        t0 = time.monotonic()
        limit = options.time_limit
        unit = inst.unit
        lb = theory_bound(inst, options.use_theory, options.lb_theory)
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
        c = solve_cpsat(inst, time_limit=left, workers=options.workers, hint=sched,
                        use_theory=options.use_theory, channel=channel,
                        catch_sigint=options.catch_sigint, lb_theory=options.lb_theory, cap=cap)
        stats.update(c.stats)
        lower = max(lb, c.lower_bound)
        if c.schedule is not None and c.makespan is not None and c.makespan < ms:
            sched, ms, source = c.schedule, c.makespan, "cpsat"
        return SolveResult(status_of(ms, lower), sched, ms, Fraction(lower), c.nodes,
                           time.monotonic() - t0, self.name, source, stats)
