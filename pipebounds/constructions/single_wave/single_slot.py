"""``K = 1`` (fused): the explicit schedules, then the bounded search, then the list-schedule
family; a schedule only when it reaches Theorem 3's bound.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Optional

from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.schedule import Schedule

from .common import _reaching
from .groups import single_group_schedule, two_gpu_schedule
from .list_schedule import _list_orders, _structured_starts
from .one_f_one_b import one_f_one_b
from .slot_search import single_slot_search


def single_slot_schedule(inst: Instance, budget: Optional[int] = None,
                         nodes: Optional[int] = None, quick: bool = False,
                         deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """A ``K = 1`` schedule whose makespan equals Theorem 3's bound, or None.

    For ``P = 2`` the explicit :func:`two_gpu_schedule` (proven). Otherwise the bounded search
    :func:`single_slot_search` (``nodes``, default ``2000 P m``), then structured starts
    (:func:`_structured_starts`, ``96 m + 24`` of them, read off the minimisers of Theorem 3),
    then a deterministic hill climb (seeded by the instance) over
    the kept sets, the backward order and the tie-break priority, ``budget`` moves (default
    ``10 P m``). Time ``O(m + budget)`` list schedules of ``O(P^2 m)`` each plus ``nodes``
    search nodes of ``O(P + m)`` each: polynomial. Only a schedule whose simulated makespan
    equals the bound is returned. ``quick``: the explicit schedules and the search only (no
    list family), for callers that need an answer fast (:mod:`pipebounds.certify`).
    ``deadline`` (:class:`schedules.deadline.Deadline`): the search and the hill climb stop
    there (None: no claim).
    """
    if inst.directions != 1:  # the constructions are for one direction (MODEL.md, Directions)
        return None
    from bounds.single_wave import single_group_exact, single_slot_value

    if inst.v != 1 or inst.split or inst.K != 1:
        return None
    if inst in _REACHED:  # found before (by any budget): it is optimal, no need to search
        return _REACHED[inst]
    sched = _single_slot_schedule(inst, budget, nodes, quick, single_slot_value(inst),
                                  single_group_exact(inst), deadline)
    if sched is not None:
        if len(_REACHED) >= _REACHED_MAX:
            del _REACHED[next(iter(_REACHED))]
        _REACHED[inst] = sched
    return sched


_REACHED: dict[Instance, Schedule] = {}
"""Schedules :func:`single_slot_schedule` returned (each reaches T3, so it is optimal and stays
the answer for its instance whatever budget a later call has): ``lower_bound``'s quick
certificate and the solver's known schedules then build it once."""

_REACHED_MAX = 4096


def _single_slot_schedule(inst: Instance, budget: Optional[int], nodes: Optional[int],
                          quick: bool, target: Fraction, small_m: bool,
                          deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """The work of :func:`single_slot_schedule` (``target`` = T3; ``small_m``: Theorem 3c
    applies); None once ``deadline`` has passed."""
    P, m = inst.P, inst.m
    explicit = (one_f_one_b if P == 1 else
                single_group_schedule if small_m else
                two_gpu_schedule if P == 2 and not inst.c else None)
    if explicit is not None:
        sched = _reaching(explicit(inst), target)
        if sched is not None or P == 1:
            return sched
    best: Optional[tuple[Fraction, tuple, Schedule]] = None

    def consider(kept, sigma, bf):
        nonlocal best
        built = _list_orders(inst, kept, sigma, bf)
        if built is None:
            return None
        sched, T = built
        if best is None or T < best[0]:
            best = (T, ([row[:] for row in kept], sigma, bf), sched)
        return T

    # the search first (on P <= 5, m <= 12 it finds every schedule the list family finds),
    # then the list family and its hill climb as a fallback
    if not inst.c:
        found = single_slot_search(inst, nodes, deadline)
        if found is not None:
            return found
    if quick:
        return None
    for kept, sigma, prio in _structured_starts(inst):
        if deadline.expired():
            return None
        if consider(kept, sigma, prio) == target:
            return _reaching(best[2], target)
    if best is None:
        return None
    rng = random.Random(hash((P, m, inst.f, inst.b)) & 0xFFFFFFFF)
    cur_T, (kept, sigma, bf), _ = best
    if sigma and isinstance(sigma[0], int):
        sigma = [list(sigma) for _ in range(P)]
    for _ in range(budget if budget is not None else 10 * P * m):
        if deadline.expired():
            return None
        k2 = [row[:] for row in kept]
        s2 = [list(sg) for sg in sigma]
        b2 = bf
        r = rng.random()
        if r < 0.05:
            b2 = rng.choice(("BRF", "BFR", "FBR"))
        elif r < 0.45:
            k2[rng.randrange(P - 1)][rng.randrange(m)] ^= True
        elif r < 0.7:  # move one item in every GPU's order
            item, k = s2[0][rng.randrange(m)], rng.randrange(m)
            for sg in s2:
                sg.remove(item)
                sg.insert(k, item)
        elif r < 0.9:  # move one item in one GPU's order
            sg = s2[rng.randrange(P)]
            sg.insert(rng.randrange(m), sg.pop(rng.randrange(m)))
        else:
            j, val = rng.randrange(m), rng.random() < 0.5
            for q in range(P - 1):
                k2[q][j] = val
        built = _list_orders(inst, k2, s2, b2)
        if built is not None and built[1] <= cur_T:
            sched, T = built
            cur_T, kept, sigma, bf = T, k2, s2, b2
            if T < best[0]:
                best = (T, (kept, sigma, bf), sched)
            if T == target:
                return _reaching(sched, target)
    return None
