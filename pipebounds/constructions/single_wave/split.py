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


HOLD_VARIANTS = ((False, False), (True, False), (False, True), (True, True))
"""The ``(hold_forward, hold_weight)`` variants of the greedy schedule tried in turn."""


@lru_cache(maxsize=4096)
def split_nonbinding_schedule(inst: Instance) -> Optional[Schedule]:
    """Split backward, ``v = 1``, memory not binding (``K`` None or ``>= m``), no delay: the
    greedy list schedule (``I`` first, then ``F``, then ``W``, oldest microbatch first;
    :func:`schedules.generators.list_scheduler.list_schedule`) in its four hold variants
    (never idle; or hold a forward, a ``W``, or both back for a backward about to arrive),
    the first that reaches ``max(S1, S2)`` (then that bound is the optimum: a certificate;
    docs/theory.md, S-nb); None if none does, outside that case, or above
    :data:`SPLIT_CERTIFICATE_MAX_SIZE`. Cached per instance.

    One of the four reaches it on every instance of ``P`` 2-8, ``m`` 1-16,
    ``f, b_I, b_W`` in 1-4 (7,168 instances; the check ``split_nonbinding_certificate``
    runs them in ``--full``).

    >>> from schedules import Instance, simulate
    >>> simulate(split_nonbinding_schedule(Instance(P=5, m=3, f=2, b_I=1, b_W=2))).makespan
    Fraction(23, 1)
    """
    from bounds.single_wave import split_drain_value, split_first_input_value

    from schedules.generators.list_scheduler import list_schedule as greedy

    if not inst.split or inst.v != 1 or inst.c or (inst.K is not None and inst.K < inst.m):
        return None
    if inst.P * inst.m > SPLIT_CERTIFICATE_MAX_SIZE:
        return None
    target = max(split_drain_value(inst), split_first_input_value(inst))
    for hold_forward, hold_weight in HOLD_VARIANTS:
        sched = greedy(inst, split=True, hold_forward=hold_forward, hold_weight=hold_weight,
                       source="greedy I>F>W (reaches max(S1, S2))")
        res = simulate(sched)
        if res.valid and res.makespan == target:
            return sched
    return None
