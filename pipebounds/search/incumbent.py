"""Upper bounds before the search: known schedules of the instance, kept when valid.

Candidates: :func:`pipebounds.constructions.optimal_schedule` (a proven-optimal construction for
the exact cases, when another module provides one) and every generator of
:mod:`schedules.generators` that accepts the instance (fitted to ``K`` by
:func:`schedules.remat.fit_memory`). Each is checked by :func:`schedules.simulate.simulate`;
the best valid one is the incumbent. Failures of a candidate are ignored: an incumbent only
speeds the search up, it never decides a status by itself.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.schedule import Schedule
from schedules.simulate import simulate


def known_schedules(inst: Instance, deadline: Deadline = NO_DEADLINE) -> list[tuple[str, Schedule]]:
    """``(source, schedule)`` for every construction/generator that accepts ``inst``; once
    ``deadline`` has expired the remaining families are skipped (an incumbent is optional). The
    construction (a search when ``K = 1``) gets half of the time ``deadline`` leaves."""
    from pipebounds.constructions import optimal_schedule
    from schedules.generators import GENERATORS, generate

    out = []
    sched = optimal_schedule(inst, deadline.share(0.5))  # a search at K = 1: the families
    # (fitted to K, seconds) keep the other half
    if sched is not None:
        out.append(("construction", sched))
    for name, gen in GENERATORS.items():
        if deadline.expired():
            break
        if gen.requires.problems(inst):
            continue
        try:
            out.append((name, generate(name, inst, deadline=deadline)))
        except ValueError:  # GeneratorError: a size this family refuses (e.g. DualPipeV, m < 2P)
            continue
    return out


def best_known(inst: Instance, deadline: Deadline = NO_DEADLINE
               ) -> Optional[tuple[str, Schedule, Fraction]]:
    """The valid known schedule of least makespan: ``(source, schedule, makespan)``, or None
    (the families reached before ``deadline``)."""
    best = None
    for source, sched in known_schedules(inst, deadline):
        res = simulate(sched.with_instance(inst))
        if res.valid and (best is None or res.makespan < best[2]):
            best = (source, sched.with_instance(inst), res.makespan)
    return best
