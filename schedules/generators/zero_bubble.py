"""ZB-H1 and ZB-H2 (Qi, Wan, Huang, Lin, *Zero Bubble Pipeline Parallelism*, ICLR 2024).

Both split every backward into ``I`` (input gradient, on the critical path) and ``W`` (weight
gradient, off it) and use the freedom to place ``W`` to fill bubbles. One stage per GPU
(``v = 1``); split durations ``b_I, b_W`` required. Memory is counted as MODEL.md does: an
activation stays live until its ``W`` ends.

**ZB-H1** (1F1B's memory). GPU ``p`` runs 1F1B's ``w = P-1-p`` warm-up forwards, then steps
``F, I`` followed by ``W`` of the oldest waiting microbatch, except that its first ``p`` steps
leave their ``W`` out (deferred), then the cool-down ``I (W)`` steps and the deferred ``W``\\ s
(the rule of torch.distributed.pipelining's zero-bubble ``_get_1f1b_rank_ops`` with
``num_1f1b_microbatches = rank``). Peak memory ``min(P, m)`` on every GPU (``w + 1`` in flight
plus ``p`` deferred). Per-rank bubble (span minus busy time, largest over GPUs) and global
bubble ``T - m(f + b)`` are both ``(P-1)(f + b_I - b_W)`` when ``b_W <= f`` and ``m >= P``
(tested on a grid in tests/test_generators.py).

**ZB-H2** (twice the memory, no bubble). The greedy list scheduler
(:mod:`schedules.generators.list_scheduler`) with priority ``I`` > ``F`` > ``W`` (oldest
first) and a cap of ``2P - 1`` live activations on every GPU: warm-up forwards fill the wait for
the first ``I`` and deferred ``W`` fill the tail. Peak memory ``min(2P - 1, m)``. With
``m >= 2P`` the global makespan is ``m(f+b) + (P-1) max(f, f + b_I - 2 b_W)`` on every tested
duration triple, and the per-rank bubble is the published ``max(0, (P-1)(f + b_I - 2 b_W))``
on 7 of the 9 tested triples (including ``f = b_I = b_W``, where no GPU idles between its first
and last op, though GPU ``P-1`` cannot start before ``(P-1) f``); it is larger for
``(f, b_I, b_W) = (1, 2, 2)`` and ``(3, 2, 2)`` (docs/schedules.md).

>>> from schedules import Instance, simulate
>>> inst = Instance(P=4, m=8, b_I=1, b_W=1)
>>> r1, r2 = simulate(zb_h1(inst)), simulate(zb_h2(inst))
>>> r1.makespan - 8 * 3, max(r1.peak_memory)
(Fraction(3, 1), 4)
>>> r2.makespan - 8 * 3, max(r2.peak_memory)
(Fraction(3, 1), 7)
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import has_placement, require
from .list_scheduler import list_schedule

ZB_PRIORITY = {"I": 0, "B": 0, "F": 1, "W": 2}


def zb_key(op: Op, gpu: int) -> tuple:
    """``I`` before ``F`` before ``W``; older microbatch first; later stage first."""
    return (ZB_PRIORITY[op.kind], op.microbatch, -op.stage)


def _check(inst: Instance, name: str) -> None:
    require(inst.v == 1, name, f"needs one stage per GPU (v=1), got v={inst.v}; "
                               "use zbv for the V-shape zero-bubble schedule")
    require(inst.split, name, "needs split backward durations (--b-input and --b-weight)")


def zb_h1(inst: Instance) -> Schedule:
    """ZB-H1 of ``inst`` (``v = 1``, split); see the module docstring."""
    _check(inst, "zb-h1")
    P, m = inst.P, inst.m
    orders = []
    for p in range(P):
        s = inst.stages_of(p)[0]  # p, unless an explicit stage_to_rank permutes the stages
        fwd = [(s, j) for j in range(m)]
        orders.append(_deferred_w_order(fwd, fwd, warmup=P - 1 - s, deferred=s))
    return Schedule(inst, tuple(orders), "zb-h1")


def _deferred_w_order(fwd, bwd, warmup: int, deferred: int) -> tuple[Op, ...]:
    """``warmup`` forwards, then steps ``F, I`` each followed by the oldest pending ``W`` except
    in the first ``deferred`` steps, then cool-down ``I (W)`` steps, then the pending ``W``."""
    w = max(0, min(warmup, len(fwd)))
    order = [Op(s, "F", j) for s, j in fwd[:w]]
    pending = 0
    for k, (s, j) in enumerate(bwd):
        if w + k < len(fwd):
            order.append(Op(fwd[w + k][0], "F", fwd[w + k][1]))
        order.append(Op(s, "I", j))
        if k >= deferred:
            order.append(Op(bwd[pending][0], "W", bwd[pending][1]))
            pending += 1
    order += [Op(s, "W", j) for s, j in bwd[pending:]]
    return tuple(order)


def interleaved_zb(inst: Instance, group: Optional[int] = None,
                   deferred: Optional[Sequence[int]] = None) -> Schedule:
    """Interleaved zero bubble (``v >= 2``, looped, split): Megatron's interleaved rounds
    (:mod:`schedules.generators.interleaved`) with warm-up ``(v-1) g + (P-1-p)`` forwards, the
    backward split into ``I`` and ``W`` and GPU ``p`` deferring ``p`` of its ``W`` (ZB-H1's
    rule); torch.distributed.pipelining's ``ScheduleInterleavedZeroBubble`` order. For ``v = 1``
    it is :func:`zb_h1`. Peak memory on GPU ``p``: the warm-up plus one plus ``p`` deferred.

    Variants (None: torch's order): ``group``, rounds of that many microbatches instead of
    ``P`` (:func:`schedules.generators.interleaved.interleaved_grouped`, from ``floor(P/2)``
    to ``P``: smaller rounds deadlock), and ``deferred``, the number of ``W`` GPU ``p`` defers
    (a list of ``P`` counts; peak ``(v-1) g + P - p + deferred[p]``). Inside those ranges
    and with ``deferred[p]`` in ``0 .. p`` no deadlock was found (every ``P <= 10``,
    ``v <= 3``, ``m <= 4P``, deferring ``p`` or ``p // 2``; tests/test_generators.py).

    >>> from schedules import Instance, simulate
    >>> inst = Instance(P=4, m=8, v=2, f=1, b_I=1, b_W=1)
    >>> r = simulate(interleaved_zb(inst, group=2, deferred=[p // 2 for p in range(4)]))
    >>> r.makespan, r.peak_memory
    (Fraction(55, 1), [6, 5, 5, 4])
    """
    from .interleaved import round_sequence, rounds_of

    require(inst.v >= 2, "interleaved-zb", f"needs v >= 2 stages per GPU, got v={inst.v}; "
                                           "use zb-h1 for one stage per GPU")
    require(has_placement(inst, "looped"), "interleaved-zb",
            f"needs the looped placement, got {inst.placement}")
    require(inst.split, "interleaved-zb",
            "needs split backward durations (--b-input and --b-weight)")
    P, m, v = inst.P, inst.m, inst.v
    low = max(1, P // 2)
    require(group is None or (not isinstance(group, bool) and isinstance(group, int)
                              and low <= group <= P), "interleaved-zb",
            f"group must be a whole number from max(1, floor(P/2)) = {low} to P = {P} "
            f"(smaller rounds deadlock), got {group!r:.40}")
    counts = list(range(P)) if deferred is None else list(deferred)
    require(len(counts) == P and all(not isinstance(d, bool) and isinstance(d, int) and d >= 0
                                     for d in counts), "interleaved-zb",
            f"deferred must be {P} whole numbers >= 0 (one per GPU), got {deferred!r:.60}")
    rounds = rounds_of(P if group is None else group, m)
    g = len(rounds[0])
    orders = []
    for p in range(P):
        local = inst.stages_of(p)
        orders.append(_deferred_w_order(round_sequence(local, rounds),
                                        round_sequence(local, rounds, reverse=True),
                                        warmup=(v - 1) * g + P - 1 - p, deferred=counts[p]))
    name = "interleaved-zb"
    if group is not None or deferred is not None:
        named = {tuple(range(P)): "p", tuple(p // 2 for p in range(P)): "p//2"}
        parts = ([] if group is None else [f"group={group}"]) + (
            [] if deferred is None else
            ["deferred=" + named.get(tuple(counts), ",".join(map(str, counts)))])
        name += "[" + ";".join(parts) + "]"
    return Schedule(inst, tuple(orders), name)


def zb_h2(inst: Instance) -> Schedule:
    """ZB-H2 of ``inst`` (``v = 1``, split); see the module docstring."""
    _check(inst, "zb-h2")
    return list_schedule(inst, cap=[2 * inst.P - 1] * inst.P, split=True, key=zb_key,
                         source="zb-h2")
