"""``solve(instance, time_limit)``: an optimal schedule and an honest status (docs/search.md).

Engine ``search`` (default, pure Python):

1. the root lower bound ``LB`` is the larger of :func:`bounds.lower_bound` and the search's own
   node bound at the empty schedule;
2. the incumbent is the best valid known schedule (:mod:`schedules.search.incumbent`), improved
   by a short greedy dive of the search (its first leaves);
3. iterative deepening on the makespan: for ``T = LB, LB+1, ...`` (units of ``1/unit``) the
   branch and bound of :mod:`schedules.search.bnb` looks for a schedule of makespan ``<= T``
   and stops at the first; when it exhausts the space without one, ``T + 1`` is a proven lower
   bound. It ends when a schedule is found (then it is optimal: ``T`` was proven a lower
   bound), when ``T`` reaches the incumbent (optimal), or at the time limit (``feasible`` with
   the proven ``T`` as ``lower_bound``).

Engine ``cpsat``: the CP-SAT model of :mod:`schedules.search.cpsat` (needs OR-tools).

Engine ``auto``: the search for a slice of the time (:data:`AUTO_SEARCH_SLICE`), then, if it
has not proven optimality and OR-tools is installed, CP-SAT for the rest; the answer combines
both runs (the best schedule found by either, the larger proven lower bound: each is a proof,
so the combination is sound). Without OR-tools it is the search with the whole time limit.

Every returned schedule is checked by :func:`schedules.simulate.simulate`: it must be valid and
have the makespan reported (an ``AssertionError`` otherwise: a bug, never a silent result).

>>> from schedules import Instance
>>> r = solve(Instance(P=2, m=2, K=1))
>>> r.status, r.makespan
('optimal', Fraction(9, 1))
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Optional

from ..instance import Instance
from ..schedule import Schedule
from ..simulate import simulate
from .bnb import Search
from .incumbent import best_known
from .model import Model
from .result import SolveResult

ENGINES = ("search", "cpsat", "auto")

AUTO_SEARCH_SLICE = (0.25, 5.0)
"""Engine ``auto``: the search runs ``min(share * time_limit, cap)`` seconds (the cap alone
without a time limit) before CP-SAT takes over."""


def root_lower_bound(inst: Instance) -> Fraction:
    """:func:`bounds.lower_bound` (the theory's bound)."""
    from bounds import lower_bound

    return Fraction(lower_bound(inst).value)


def _ceil_units(x: Fraction, unit: int) -> int:
    return -((-x.numerator * unit) // x.denominator)


def checked(inst: Instance, schedule: Schedule) -> Fraction:
    """The makespan of ``schedule``, asserting it is valid for ``inst``."""
    res = simulate(schedule)
    assert res.valid, f"solver produced an invalid schedule: {res.errors[:3]}"
    return res.makespan


def solve(inst: Instance, time_limit: Optional[float] = None, engine: str = "search",
          workers: int = 1, use_known: bool = True, use_theory: bool = True) -> SolveResult:
    """An optimal schedule of ``inst`` within ``time_limit`` seconds (None: no limit).

    ``engine`` is ``"search"`` or ``"cpsat"``; ``workers`` is CP-SAT's thread count;
    ``use_known`` seeds the incumbent with the known schedules (off for independent cross-checks);
    ``use_theory`` starts from :func:`bounds.lower_bound`. With ``use_theory=False`` every
    proof rests on the engine alone, so the result can *check* the theory's bounds (the table
    of optima is made this way); the result's ``stats["independent"]`` says which.
    """
    if inst.memory is not None and inst.memory.budget is not None and engine != "cpsat":
        if engine == "search":
            raise ValueError("the search engine does not model memory in bytes; use engine "
                             "'cpsat' (OR-tools) for an instance with a memory budget")
        engine = "cpsat"   # auto: the search cannot take part
    if engine == "cpsat":
        from .cpsat import solve_cpsat

        return solve_cpsat(inst, time_limit=time_limit, workers=workers, use_known=use_known,
                           use_theory=use_theory)
    if engine == "auto":
        return solve_auto(inst, time_limit, workers, use_known, use_theory)
    if engine != "search":
        raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
    return solve_search(inst, time_limit, use_known, use_theory)


def solve_search(inst: Instance, time_limit: Optional[float] = None,
                 use_known: bool = True, use_theory: bool = True) -> SolveResult:
    """The branch-and-bound engine (see the module docstring)."""
    t0 = time.monotonic()
    mdl = Model.of(inst)
    unit = mdl.unit
    lb_theory = root_lower_bound(inst) if use_theory else Fraction(0)
    search = Search(mdl, time_limit=time_limit)
    lb = max(_ceil_units(lb_theory, unit), search.root_bound())
    search.lower = lb
    best_sched, best_ms, source = None, None, ""
    if use_known:
        known = best_known(inst)
        if known is not None:
            source, best_sched, ms = known
            best_ms = _ceil_units(ms, unit)
    stats = {"lower_bound_theory": lb_theory, "independent": not use_theory}

    def finish(status: str, lower: int) -> SolveResult:
        seconds = time.monotonic() - t0
        stats["memo_states"] = search.memo_count
        if best_sched is None:
            return SolveResult(status, None, None, Fraction(lower, unit), search.nodes, seconds,
                               "search", source, stats)
        ms = checked(inst, best_sched)
        assert ms * unit == best_ms, f"search makespan {Fraction(best_ms, unit)} != simulated {ms}"
        assert ms >= lb_theory, (f"bounds.lower_bound = {lb_theory} exceeds the makespan {ms} of a "
                                 f"valid schedule of {inst}: the bound is wrong")
        lower_f = Fraction(lower, unit)
        assert lower_f <= ms, f"proven lower bound {lower_f} above a found makespan {ms}"
        if lower_f == ms:
            status = "optimal"
        return SolveResult(status, best_sched, ms, lower_f, search.nodes, seconds, "search",
                           source, stats)

    def take(out, label: str) -> None:
        nonlocal best_sched, best_ms, source
        if out.orders is None:
            return
        sched = Schedule(inst, tuple(tuple(o) for o in out.orders), source=label)
        ms = _ceil_units(checked(inst, sched), unit)  # ASAP may be earlier than the search's
        if best_ms is None or ms < best_ms:
            best_sched, best_ms, source = sched, ms, label

    if best_ms is not None and best_ms <= lb:
        return finish("optimal", lb)
    # greedy dive: the first leaves of the search, for a quick incumbent
    out = search.run(upper=best_ms, stop_at_first=False, nodes=2000)
    take(out, "search")
    if out.complete:  # exhausted below the incumbent: it is optimal
        return finish("optimal" if best_sched is not None else "infeasible",
                      best_ms if best_ms is not None else lb)
    T = lb
    # one microbatch at a time, every pair recomputed: always feasible for K >= 1
    trivial = mdl.m * mdl.S * (2 * mdl.dF + mdl.dIG + mdl.dW) + mdl.m * (sum(mdl.lag_f)
                                                                        + sum(mdl.lag_b))
    while best_ms is None or T < best_ms:
        if best_ms is None and T > trivial:
            return finish("infeasible", T)
        out = search.run(upper=T + 1, stop_at_first=True)
        if out.orders is not None:
            take(out, "search")
            if best_ms <= T:
                return finish("optimal", best_ms)
        if not out.complete:
            return finish("feasible" if best_sched is not None else "unknown", T)
        T += 1
    return finish("optimal", T)


def _cpsat_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ortools") is not None


def solve_auto(inst: Instance, time_limit: Optional[float] = None, workers: int = 1,
               use_known: bool = True, use_theory: bool = True,
               search_seconds: Optional[float] = None) -> SolveResult:
    """Engine ``auto``: the search first (``search_seconds``, default from
    :data:`AUTO_SEARCH_SLICE`), CP-SAT for what it leaves open (see the module docstring).
    ``engine`` of the result is ``"auto"``; ``stats["engines"]`` lists the runs as
    ``(engine, status, seconds)``; ``source`` is where the returned schedule came from."""
    t0 = time.monotonic()
    if not _cpsat_available():
        res = solve_search(inst, time_limit, use_known, use_theory)
        return SolveResult(res.status, res.schedule, res.makespan, res.lower_bound, res.nodes,
                           res.seconds, "auto", res.source,
                           dict(res.stats, engines=[("search", res.status, res.seconds)]))
    share, cap = AUTO_SEARCH_SLICE
    first = cap if time_limit is None else min(share * time_limit, cap)
    if search_seconds is not None:
        first = search_seconds if time_limit is None else min(search_seconds, time_limit)
    a = solve_search(inst, first, use_known, use_theory)
    runs = [("search", a.status, a.seconds)]
    if a.status in ("optimal", "infeasible"):
        return SolveResult(a.status, a.schedule, a.makespan, a.lower_bound, a.nodes, a.seconds,
                           "auto", a.source, dict(a.stats, engines=runs))
    from .cpsat import solve_cpsat

    left = None if time_limit is None else max(0.1, time_limit - (time.monotonic() - t0))
    # the search already started from the known schedules: hand CP-SAT its best one instead of
    # computing them again
    c = solve_cpsat(inst, time_limit=left, workers=workers, use_known=False,
                    use_theory=use_theory, hint=a.schedule if use_known else None)
    runs.append(("cpsat", c.status, c.seconds))
    if c.status == "infeasible":
        return SolveResult("infeasible", None, None, c.lower_bound, a.nodes + c.nodes,
                           time.monotonic() - t0, "auto", "cpsat", dict(c.stats, engines=runs))
    pick = min((r for r in (a, c) if r.makespan is not None), key=lambda r: r.makespan,
               default=None)
    lower = max(a.lower_bound, c.lower_bound)
    stats = dict(a.stats, engines=runs, independent=a.stats.get("independent", not use_theory)
                 and c.stats.get("independent", not use_theory))
    if pick is None:
        return SolveResult("unknown", None, None, lower, a.nodes + c.nodes,
                           time.monotonic() - t0, "auto", "", stats)
    assert lower <= pick.makespan, f"proven lower bound {lower} above a found makespan"
    status = "optimal" if lower == pick.makespan else "feasible"
    return SolveResult(status, pick.schedule, pick.makespan, lower, a.nodes + c.nodes,
                       time.monotonic() - t0, "auto", pick.source or pick.engine, stats)
