"""Split backward with memory not binding: a greedy list schedule that reaches the split
bounds S1/S2 (a certificate, checked by simulation).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from schedules.instance import Instance
from schedules.schedule import Schedule
from schedules.simulate import simulate



SPLIT_CERTIFICATE_MAX_SIZE = 4096
"""Largest ``P * m`` for which :func:`split_nonbinding_schedule` builds its greedy schedules
(``O(P m log(P m))``; about 0.05 s at ``P m = 4096``)."""


@lru_cache(maxsize=4096)
def split_nonbinding_schedule(inst: Instance) -> Optional[Schedule]:
    """Split backward, ``v = 1``, memory not binding (``K`` None or ``>= m``), no delay: the
    greedy list schedule (``I`` first, then ``F``, then ``W``, oldest microbatch first;
    :func:`schedules.generators.list_scheduler.list_schedule`), never idle or holding a forward
    back for a backward about to arrive, whichever reaches ``max(S1, S2)`` (then that bound is
    the optimum: a certificate; docs/theory.md section 6); None if neither does, outside that
    case, or above :data:`SPLIT_CERTIFICATE_MAX_SIZE`. Cached per instance."""
    from bounds.single_wave import split_drain_value, split_first_input_value

    from schedules.generators.list_scheduler import list_schedule as greedy

    if not inst.split or inst.v != 1 or inst.c or (inst.K is not None and inst.K < inst.m):
        return None
    if inst.P * inst.m > SPLIT_CERTIFICATE_MAX_SIZE:
        return None
    target = max(split_drain_value(inst), split_first_input_value(inst))
    for hold in (False, True):
        sched = greedy(inst, split=True, hold_forward=hold,
                       source="greedy I>F>W (reaches max(S1, S2))")
        res = simulate(sched)
        if res.valid and res.makespan == target:
            return sched
    return None
