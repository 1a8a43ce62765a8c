"""Megatron interleaved 1F1B (Narayanan et al., *Efficient Large-Scale Language Model Training
on GPU Clusters Using Megatron-LM*, SC 2021; torch.distributed.pipelining's
``ScheduleInterleaved1F1B``).

Placement: ``v >= 2`` stages per GPU, ``looped`` (GPU ``p`` holds ``p, p+P, ..``). Backward:
fused ``B``. Microbatches go in ``rounds = max(1, m // P)`` *rounds* of ``m / rounds`` (torch's rule);
when ``rounds`` does not divide ``m`` the first ``m mod rounds`` rounds take one more (torch
refuses such ``m``; Megatron's rounds of ``P`` with a short last round can deadlock, e.g.
``P=4, m=9, v=3``). Let ``g`` be the size of the first round. GPU ``p`` runs
its forwards round by round, in each round local stage by local stage, and its backwards the
same way with the local stages reversed; it warms up with
``min(v m, (v-1) g + 2 (P-1-p))`` forwards and then alternates one forward / one backward
(:func:`schedules.generators.common.one_f_one_b`). When ``m`` is a multiple of the rounds this
is exactly torch's order. Valid (no deadlock) for all ``P <= 8, m <= 24, v <= 4`` (tested).

Guarantees (uniform durations, ``c = 0``), checked in tests/test_generators.py: for every
``m >= P`` (published for ``m`` a multiple of ``P``) the global makespan is
``(v m + P - 1)(f + b)``: the bubble is ``(P-1)(f+b)`` in per-stage durations, ``1/v`` of
1F1B's for the same model; for ``m < P`` it is ``(v-1)(P-m)(f+b)`` longer. Peak memory on GPU
``p`` is the warm-up plus one, ``min(v m, (v-1) g + 2(P-1-p) + 1)`` stage activations.

>>> from schedules import Instance, simulate
>>> r = simulate(interleaved(Instance(P=2, m=4, v=2)))
>>> r.makespan, r.peak_memory
(Fraction(27, 1), [5, 3])
"""

from __future__ import annotations

from typing import Optional

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import has_placement, one_f_one_b, require


def rounds_of(P: int, m: int) -> list[range]:
    """The rounds: ``max(1, m // P)`` consecutive ranges of microbatches, sizes differing by at
    most one, larger first.

    >>> [list(r) for r in rounds_of(4, 9)]
    [[0, 1, 2, 3, 4], [5, 6, 7, 8]]
    """
    rounds = max(1, m // P)
    out, start = [], 0
    for k in range(rounds):
        size = m // rounds + (1 if k < m % rounds else 0)
        out.append(range(start, start + size))
        start += size
    return out


def round_sequence(local: tuple[int, ...], rounds: list[range],
                   reverse: bool = False) -> list[tuple[int, int]]:
    """``(stage, microbatch)`` pairs round by round, each round local stage by local stage."""
    stages = tuple(reversed(local)) if reverse else local
    return [(s, j) for group in rounds for s in stages for j in group]


def _interleaved_orders(inst: Instance, name: str, lead: int, group: Optional[int] = None
                        ) -> tuple[tuple[Op, ...], ...]:
    """The rounds' orders with the warm-up ``(v-1) g + lead (P-1-p)`` on GPU ``p``; the rounds
    are :func:`rounds_of` ``(group, m)`` (``group`` None: ``P``, Megatron's and torch's)."""
    require(inst.v >= 2, name, f"needs v >= 2 stages per GPU, got v={inst.v}; "
                               "use 1f1b for one stage per GPU")
    require(has_placement(inst, "looped"), name,
            f"needs the looped placement, got {inst.placement}")
    P, m, v = inst.P, inst.m, inst.v
    rounds = rounds_of(P if group is None else group, m)
    g = len(rounds[0])
    orders = []
    for p in range(P):
        local = inst.stages_of(p)
        fwd = [Op(s, "F", j) for s, j in round_sequence(local, rounds)]
        bwd = [Op(s, "B", j) for s, j in round_sequence(local, rounds, reverse=True)]
        orders.append(tuple(one_f_one_b(fwd, bwd, warmup=(v - 1) * g + lead * (P - 1 - p))))
    return tuple(orders)


def interleaved(inst: Instance) -> Schedule:
    """The interleaved 1F1B schedule of ``inst`` (``v >= 2``, looped); see the module docstring."""
    return Schedule(inst, _interleaved_orders(inst, "interleaved", 2), "interleaved")


def interleaved_short(inst: Instance) -> Schedule:
    """Interleaved 1F1B with 1F1B's warm-up: ``(v-1) g + (P-1-p)`` forwards on GPU ``p``
    instead of Megatron's ``(v-1) g + 2 (P-1-p)`` (the rounds and the F/B alternation as in
    :func:`interleaved`; the warm-up of :func:`schedules.generators.zero_bubble.interleaved_zb`,
    with fused backwards).

    Peak memory on GPU ``p`` is the warm-up plus one, ``min(v m, (v-1) g + P - p)``: ``v P``
    on GPU 0 when ``P | m``, ``P - 1`` less than Megatron's. The shorter warm-up costs no time
    under uniform durations without communication delay: the makespan is never above
    :func:`interleaved`'s, and for ``P | m`` it is ``(v m + P - 1)(f + b)``, the lower bound
    MW5 without a memory limit, so the schedule is optimal for every ``K >= v P``. Measured
    (not proven) on every ``P <= 8``, ``v <= 3``, ``m <= 4P`` and five ratios ``f : b``, and
    checked in tests/test_generators.py. Megatron's longer warm-up leaves slack for
    communication: with ``c > 0`` this schedule is the slower one on 16 of 18 measured
    instances (``P = 8, m = 32, v = 2, c = 1``: 339 against 243; docs/schedules.md).

    >>> from schedules import Instance, simulate
    >>> r = simulate(interleaved_short(Instance(P=4, m=8, v=2, f=1, b=2)))
    >>> r.makespan, r.peak_memory
    (Fraction(57, 1), [8, 7, 6, 5])
    """
    return Schedule(inst, _interleaved_orders(inst, "interleaved-short", 1), "interleaved-short")


def interleaved_grouped(inst: Instance, group: int) -> Schedule:
    """:func:`interleaved_short` with rounds of ``group`` microbatches instead of ``P``
    (Megatron's microbatch group size per virtual stage; :func:`rounds_of` ``(group, m)``, so
    the first round has ``g >= group`` when ``group`` does not divide ``m``): the warm-up
    ``(v-1) g + (P-1-p)`` on GPU ``p`` and peak memory ``min(v m, (v-1) g + P - p)``, down to
    ``(v-1) floor(P/2) + P`` on GPU 0, against ``v P`` at ``group = P`` (the same schedule as
    :func:`interleaved_short`). A smaller round costs time: the first forward of a round's
    next local stage waits for the round to come back from GPU ``P - 1``.

    ``group`` must lie in ``max(1, floor(P/2)) .. P``: below, the warm-up of GPU 0 reaches forwards
    whose inputs GPU ``P - 1`` sends only after a backward that waits for GPU 0 (a deadlock;
    measured for every ``group < floor(P/2)`` at ``5 <= P <= 12``, ``v <= 4``, some
    ``m <= 4P``), and inside the range the schedule has no deadlock (measured on every
    ``P <= 12``, ``v <= 4``, ``m <= 4P``, checked in tests/test_generators.py).

    >>> from schedules import Instance, simulate
    >>> r = simulate(interleaved_grouped(Instance(P=4, m=8, v=2, f=1, b=2), 2))
    >>> r.makespan, r.peak_memory
    (Fraction(69, 1), [6, 5, 4, 3])
    """
    P = inst.P
    low = max(1, P // 2)
    require(not isinstance(group, bool) and isinstance(group, int) and low <= group <= P,
            "interleaved-short", f"group must be a whole number from max(1, floor(P/2)) = {low} "
                                 f"to P = {P} (smaller rounds deadlock), got {group!r:.40}")
    name = "interleaved-short" if group == P else f"interleaved-short[group={group}]"
    return Schedule(inst, _interleaved_orders(inst, name, 1, group), name)
