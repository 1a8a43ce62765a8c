"""A greedy list scheduler: per-GPU priority rule + memory cap -> per-GPU orders.

Event-driven simulation in exact integer time units (``1/instance.unit``). Whenever a GPU is
free it starts, among its *ready* ops, the one with the smallest ``key``; it never idles while
an op is ready. So the produced orders, timed ASAP by :func:`schedules.simulate.simulate`, give
exactly the simulated times. Each stage runs its microbatches in increasing order for each op
kind (``F``, backward, ``W``), as every published schedule does.

Ready: ``F(j,s)`` once ``F(j,s-1)`` has ended (plus ``c`` across GPUs); the backward (``B`` or
``I``) of ``(j,s)`` once that of ``(j,s+1)`` has ended (``F(j,S-1)`` for the last stage);
``W(j,s)`` once ``I(j,s)`` has ended.

Memory (MODEL.md: a forward stores, ``B``/``W`` releases) is kept at most ``cap[p]`` with a
reservation rule that cannot deadlock: a microbatch *enters* GPU ``p`` with its forward at
``p``'s first stage, and may do so only if ``live + reserved + v <= cap[p]``, where
``reserved`` counts the later forwards on ``p`` of microbatches already inside. Later forwards
use their reservation, backwards need no memory, so every started microbatch can finish and
the oldest unfinished one can always enter the next GPU: the scheduler never deadlocks when
``cap[p] >= v`` (proof sketch in docs/schedules.md). Peak memory on GPU ``p`` is then
``<= cap[p]``.

>>> from schedules import Instance, simulate
>>> inst = Instance(P=2, m=3)
>>> s = list_schedule(inst, cap=[2, 1])
>>> s.to_strings()["0"]
['0F0', '0F1', '0B0', '0F2', '0B1', '0B2']
>>> simulate(s).makespan  # (m + P - 1)(f + b), as 1F1B
Fraction(12, 1)
"""

from __future__ import annotations

import heapq
from typing import Callable, Optional, Sequence

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import GeneratorError, check_caps

KIND_RANK = {"B": 0, "I": 0, "F": 1, "W": 2}


def default_key(op: Op, gpu: int) -> tuple:
    """Backward (``B``/``I``) first, then forward, then ``W``; older microbatch first; among
    equals the later stage (closer to the loss) first."""
    return (KIND_RANK[op.kind], op.microbatch, -op.stage)


def list_schedule(inst: Instance, cap: Optional[Sequence[Optional[int]]] = None, split: bool = False,
                  key: Callable[[Op, int], tuple] = default_key, source: str = "",
                  hold_forward: bool = False, hold_weight: bool = False) -> Schedule:
    """Greedy list schedule of ``inst`` (see the module docstring).

    ``cap[p]`` is GPU ``p``'s memory cap in stage activations (None: unlimited; it must be
    ``>= v``); ``split`` selects the ``I``/``W`` backward (needs split durations);
    ``key(op, gpu)`` ranks ready ops, smallest first. ``hold_forward`` (``hold_weight``): a
    GPU does not start a forward (a ``W``) when an op running on another GPU makes one of its
    backward ops (``B``, ``I``) ready before that forward (``W``) would end; it waits for the
    backward instead (the one exception to never idling). A held kind is decided after every
    other GPU's choice at the same instant, so a backward that starts on a neighbour at that
    instant counts whatever the GPUs' numbering (the upstream GPU of a pair is scanned first).
    """
    P, m, S, v = inst.P, inst.m, inst.S, inst.v
    caps = check_caps(inst, cap, split)
    u = inst.unit
    # per kind, the duration on each stage (per-stage costs, MODEL.md Extensions)
    dur = {k: [int(x * u) for x in inst.durations_of(k)]
           for k in (("F", "I", "W") if split else ("F", "B"))}
    lag = int(inst.c * u)
    gpu = inst.stage_to_rank
    local = [inst.stages_of(p) for p in range(P)]
    first_local = [st[0] for st in local]
    grad = "I" if split else "B"
    fend = [[-1] * m for _ in range(S)]   # end time of F(j,s), -1 if not started
    gend = [[-1] * m for _ in range(S)]   # end time of the B/I op of (j,s)
    nf, nb, nw = [0] * S, [0] * S, [0] * S
    live = [0] * P
    reserved = [0] * P
    free = [0] * P
    orders: list[list[Op]] = [[] for _ in range(P)]
    # (time, kind 0=wake 1=release, gpu, stage): at ``time`` GPU ``gpu`` may start an op, and
    # so may the GPUs of the neighbouring stages of ``stage`` (-1: none), whose ops the
    # ending op readies; only those GPUs are scanned at that time (the others' ready sets and
    # memory are unchanged, so their choice is too)
    events: list[tuple[int, int, int, int]] = []
    remaining = S * m * (3 if split else 2)
    now = 0
    make = Op.trusted  # the arguments are valid by construction

    def ready_at(t_end: int, s_from: int, s_to: int) -> int:
        return t_end + (lag if gpu[s_from] != gpu[s_to] else 0)

    def backward_arrives_before(p: int, limit: int) -> bool:
        """A backward op running now on another GPU readies one of ``p``'s before ``limit``."""
        for s in local[p]:
            j = nb[s]
            if s < S - 1 and j < m and gend[s + 1][j] > now \
                    and ready_at(gend[s + 1][j], s + 1, s) < limit:
                return True
        return False

    neighbours = [tuple(gpu[x] for x in (s - 1, s + 1) if 0 <= x < S) for s in range(S)]

    def start(p: int, op: Op) -> None:
        """GPU ``p`` starts ``op`` at ``now``."""
        nonlocal remaining
        s, j = op.stage, op.microbatch
        end = now + dur[op.kind][s]
        orders[p].append(op)
        free[p] = end
        remaining -= 1
        if op.kind == "F":
            fend[s][j] = end
            nf[s] += 1
            live[p] += 1
            if s == first_local[p]:
                reserved[p] += v - 1
            else:
                reserved[p] -= 1
        elif op.kind in ("B", "I"):
            gend[s][j] = end
            nb[s] += 1
        else:
            nw[s] += 1
        heapq.heappush(events, (end, 1 if op.kind in ("B", "W") else 0, p, s))
        if lag and op.kind != "W":  # a successor on another GPU is ready c later
            heapq.heappush(events, (end + lag, 0, p, s))
        if end == now:  # a zero-duration op: its successors may start in this same pass
            for q in neighbours[s]:
                if q > p:
                    wake[q] = True

    held: list[tuple[int, Op]] = []  # the choices of held kinds, decided last
    wake = [True] * P
    while remaining:
        for p in range(P):
            if not wake[p]:
                continue
            wake[p] = False
            if free[p] > now:
                continue
            best, best_key = None, None
            for s in local[p]:
                j = nf[s]
                if j < m and (s == 0 or (fend[s - 1][j] >= 0 and ready_at(fend[s - 1][j], s - 1, s) <= now)):
                    if s != first_local[p] or caps[p] is None or live[p] + reserved[p] + v <= caps[p]:
                        op = make(s, "F", j)
                        k = key(op, p)
                        if best_key is None or k < best_key:
                            best, best_key = op, k
                j = nb[s]
                if j < nf[s] and 0 <= fend[s][j] <= now:
                    if s == S - 1:
                        ok = True
                    else:
                        e = gend[s + 1][j]
                        ok = e >= 0 and ready_at(e, s + 1, s) <= now
                    if ok:
                        op = make(s, grad, j)
                        k = key(op, p)
                        if best_key is None or k < best_key:
                            best, best_key = op, k
                if split:
                    j = nw[s]
                    if j < nb[s] and 0 <= gend[s][j] <= now:
                        op = make(s, "W", j)
                        k = key(op, p)
                        if best_key is None or k < best_key:
                            best, best_key = op, k
            if best is None:
                continue
            if (hold_forward and best.kind == "F") or (hold_weight and best.kind == "W"):
                held.append((p, best))
                continue
            start(p, best)
        for p, best in held:
            if not backward_arrives_before(p, now + dur[best.kind][best.stage]):
                start(p, best)
        held.clear()
        if not remaining:
            break
        if not events:
            raise GeneratorError("list scheduler stalled (memory cap too small for this rule)")
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, p, s = heapq.heappop(events)
            if kind == 1:
                live[p] -= 1
            wake[p] = True
            for q in neighbours[s]:
                wake[q] = True
    return Schedule(inst, tuple(tuple(o) for o in orders), source)
