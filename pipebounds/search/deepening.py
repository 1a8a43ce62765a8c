"""The branch-and-bound backend: :func:`solve_search` (docs/search.md, "Driver").

1. the root lower bound ``LB`` is the larger of :func:`bounds.lower_bound` (only with
   ``use_theory``) and the search's own node bound at the empty schedule;
2. the incumbent is the best valid known schedule (:mod:`pipebounds.search.incumbent`), improved
   by a short greedy dive of the search (its first leaves);
3. iterative deepening on the makespan: for ``T = LB, LB+1, ...`` (units of ``1/unit``) the
   branch and bound of :mod:`pipebounds.search.bnb` looks for a schedule of makespan ``<= T``
   and stops at the first; when it exhausts the space without one, ``T + 1`` is a proven lower
   bound. It ends when a schedule is found (then it is optimal: ``T`` was proven a lower
   bound), when ``T`` reaches the incumbent (optimal), or at the time limit (``feasible`` with
   the proven ``T`` as ``lower_bound``).

With a :class:`~pipebounds.search.channel.Channel` the search reports each incumbent and each
proven ``T``, ends when the channel says stop, and uses what other engines proved: a larger
lower bound from :meth:`Channel.lower` lets ``T`` jump (``stats["lower_from"]`` then says
``shared``), an incumbent from :meth:`Channel.upper` at or below ``T`` ends the run (the other
engine holds the optimum).
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Optional

from schedules.instance import Instance
from schedules.schedule import Schedule
from .bnb import Search
from .channel import SILENT, Channel
from .incumbent import best_known
from schedules.deadline import Deadline
from .model import Model
from .proof import ceil_units, checked, theory_bound, theory_guard
from .result import SolveResult
from schedules.instance import require_one_direction


def solve_search(inst: Instance, time_limit: Optional[float] = None,
                 use_known: bool = True, use_theory: bool = True, known=None,
                 channel: Channel = SILENT, lb_theory: Optional[Fraction] = None) -> SolveResult:
    """The branch-and-bound engine (see the module docstring). ``known`` is the result of
    :func:`~pipebounds.search.incumbent.best_known`, ``lb_theory`` that of
    :func:`~pipebounds.search.proof.root_lower_bound`, when the caller computed them already."""
    require_one_direction(inst, "the branch and bound")
    t0 = time.monotonic()
    deadline = None if time_limit is None else t0 + time_limit
    mdl = Model.of(inst)
    unit = mdl.unit
    lb_theory = theory_bound(inst, use_theory, lb_theory)
    state = {"T": 0}

    def poll() -> bool:
        if channel.stop():
            return True
        up = channel.upper()
        return channel.lower() > state["T"] or (up is not None and up <= state["T"])

    search = Search(mdl, time_limit=time_limit, poll=poll)
    lb = max(ceil_units(lb_theory, unit), search.root_bound())
    state["T"] = lb
    search.lower = lb
    channel.bound("search", lb)
    best_sched, best_ms, source = None, None, ""
    if known is None and use_known:
        known = best_known(inst, Deadline.after(None if time_limit is None else time_limit / 2))
    if known is not None:  # the caller's known schedule or incumbent (SolveOptions.prepared)
        source, best_sched, ms = known
        best_ms = ceil_units(ms, unit)
        channel.incumbent("search", best_ms, [list(o) for o in best_sched.orders])
    stats = {"lower_bound_theory": lb_theory, "independent": not use_theory,
             "lower_from": "search"}

    def finish(status: str, lower: int) -> SolveResult:
        seconds = time.monotonic() - t0
        stats["memo_states"] = search.memo_count
        if best_sched is None:
            return SolveResult(status, None, None, Fraction(lower, unit), search.nodes, seconds,
                               "search", source, stats)
        ms = checked(inst, best_sched)
        assert ms * unit == best_ms, f"search makespan {Fraction(best_ms, unit)} != simulated {ms}"
        theory_guard(inst, ms, lb_theory)
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
        ms = ceil_units(checked(inst, sched), unit)  # ASAP may be earlier than the search's
        if best_ms is None or ms < best_ms:
            best_sched, best_ms, source = sched, ms, label
            channel.incumbent("search", ms, out.orders)

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
    trivial = mdl.trivial_horizon
    while best_ms is None or T < best_ms:
        if channel.lower() > T:  # another engine proved more: start there
            T = channel.lower()
            state["T"] = T
            stats["lower_from"] = "shared"
            if best_ms is not None and T >= best_ms:
                break
        up = channel.upper()
        if channel.stop() or (up is not None and up <= T):
            return finish("feasible" if best_sched is not None else "unknown", T)
        if best_ms is None and T > trivial:
            return finish("infeasible", T)
        out = search.run(upper=T + 1, stop_at_first=True)
        if out.orders is not None:
            take(out, "search")
            if best_ms <= T:
                return finish("optimal", best_ms)
        if not out.complete:
            timed_out = deadline is not None and time.monotonic() >= deadline
            if not timed_out and channel.lower() > T and not channel.stop():
                continue
            return finish("feasible" if best_sched is not None else "unknown", T)
        T += 1
        state["T"] = T
        channel.bound("search", T)
    return finish("optimal", T)
