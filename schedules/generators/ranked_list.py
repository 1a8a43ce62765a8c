"""A list scheduler in free order: microbatches ranked, each GPU runs its best-ranked ready op.

:mod:`schedules.generators.list_scheduler` runs each stage's microbatches in increasing order
for each op kind, as every published schedule does. The optima of small memory-bound instances
do not (docs/synthesis.md, *Stop 44*): at ``P = 6, m = 12, K = 3, f = 1, b = 2`` (optimum 51)
GPU 0 forwards microbatches ``0 .. 10`` first, then every GPU runs the backwards in the one order
``0 2 1 4 7 3 6 10 5 8 11 9``: some microbatches go through the pipeline at once and keep
their activations (a *fast lane*), others, forwarded early into GPU 0's fill, wait and are
recomputed (a *slow lane*). This scheduler makes such schedules from a *rank*, a permutation of
the microbatches:

* a GPU that is free starts, among its ready ops, the one with the smallest key
  ``(class, rank[j], -stage)``: class 0 the backward (``B``, or ``I`` split), 1 the forward, 2
  ``W``; except that the forwards of stage 0 go in microbatch order when ``entry="index"``
  (the default: the pipeline's entry order stays ``0, 1, ..``, the rank decides which
  microbatch goes through first after it);
* ready: ``F(j, s)`` once ``F(j, s - 1)`` has ended (plus ``c`` across GPUs); the backward of
  ``(j, s)`` once ``F(j, s)`` and the backward of ``(j, s + 1)`` have ended (``F(j, S - 1)``
  alone for the last stage); ``W(j, s)`` once ``I(j, s)`` has ended;
* memory: the reservation rule of the in-order scheduler: a microbatch *enters* GPU ``p`` with
  its forward at ``p``'s first stage only if ``live + reserved + v <= cap[p]``, reserving the
  later forwards of its pair on ``p``.

**No deadlock** when every ``cap[p] >= v`` (or None), whatever the rank. A GPU never idles
while it has a ready op. Suppose no op is ready or running and some are left. Every microbatch
inside GPU ``p`` (entered, not finished there) has its forwards on ``p`` reserved; take the
largest ``p`` at which some microbatch is blocked at its entry: GPU ``p`` is full, so some
microbatch ``j`` is inside ``p``; ``j`` is not blocked at a higher GPU (maximality of ``p``),
so its forwards on the GPUs past ``p`` are done or ready, and so is its backward chain down to
``p``, whose release frees a slot on ``p``: a contradiction. (The same argument with the GPU
order of the stages covers the V-shape and looped placements: a microbatch inside every GPU
of its chain never waits for memory.)

The produced orders, timed ASAP by :func:`schedules.simulate.simulate`, give the scheduler's
own times: an op waits only for its predecessors and its GPU, except an entry held by the
cap, which waits for a release, and a release on GPU ``p`` is the end of one of ``p``'s
own ops, which the entry follows in the order anyway. Memory is counted as MODEL.md
does (a forward stores at its start, ``B``/``W`` releases at its end); the peak on GPU ``p``
is at most ``cap[p]``; :func:`schedules.remat.fit_memory` brings a schedule made with caps
above ``K`` down to ``K`` with recomputes.

>>> from schedules import Instance, simulate
>>> inst = Instance(P=2, m=3)
>>> s = ranked_list_schedule(inst, rank=[0, 1, 2], cap=[2, 1])
>>> s.to_strings()["0"]
['0F0', '0F1', '0B0', '0F2', '0B1', '0B2']
>>> r = simulate(ranked_list_schedule(Instance(P=4, m=8, f=1, b=1), rank=[7, 6, 5, 4, 3, 2, 1, 0]))
>>> r.valid, r.makespan  # the last microbatch in goes through first: still (m + P - 1)(f + b)
(True, Fraction(22, 1))
"""

from __future__ import annotations

import heapq
from typing import Optional, Sequence

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import GeneratorError, check_caps

ENTRIES = ("index", "rank")
"""How the forwards of stage 0 are ordered: by microbatch index, or by rank like every other op."""


def ranked_list_schedule(inst: Instance, rank: Sequence[int],
                         cap: Optional[Sequence[Optional[int]]] = None, split: bool = False,
                         entry: str = "index", source: str = "ranked-list") -> Schedule:
    """Free-order list schedule of ``inst`` under the microbatch ``rank`` (module docstring).

    Parameters
    ----------
    inst : Instance
        Any placement, ``v``, per-stage costs and ``c``; its ``K`` is ignored (use ``cap``).
    rank : sequence of int
        A permutation of ``0 .. m - 1``: ``rank[j]`` is microbatch ``j``'s priority, smallest
        first.
    cap : sequence of int or None, optional
        GPU ``p``'s memory cap in activations (None: unlimited); each at least ``v``.
    split : bool
        The ``I``/``W`` backward (needs split durations).
    entry : {"index", "rank"}
        The order of stage 0's forwards.

    Returns
    -------
    Schedule
        Per-GPU orders whose ASAP timing is the scheduler's.

    Raises
    ------
    GeneratorError
        A rank that is not a permutation of the microbatches, a cap list of the wrong length or
        below ``v``, ``split`` without split durations, an unknown ``entry``.
    """
    P, m, S, v = inst.P, inst.m, inst.S, inst.v
    caps = check_caps(inst, cap, split)
    if entry not in ENTRIES:
        raise GeneratorError(f"entry must be one of {', '.join(ENTRIES)}, got {entry!r}")
    rank = list(rank)
    if sorted(rank) != list(range(m)):
        raise GeneratorError(f"rank must be a permutation of the microbatches 0..{m - 1}")
    u = inst.unit
    grad = "I" if split else "B"
    kinds = ("F", "I", "W") if split else ("F", "B")
    dur = {k: [int(x * u) for x in inst.durations_of(k)] for k in kinds}
    lag = int(inst.c * u)
    gpu = inst.stage_to_rank
    first_local = [inst.stages_of(p)[0] for p in range(P)]
    is_entry = [False] * S
    for p in range(P):
        is_entry[first_local[p]] = True
    make = Op.trusted

    # predecessors left and ready time of each op; heaps per GPU and class
    left_b = [[2 if s < S - 1 else 1 for _ in range(m)] for s in range(S)]
    ready_b = [[0] * m for _ in range(S)]
    pending: list[list[tuple[int, tuple, Op]]] = [[] for _ in range(P)]  # (ready, key, op)
    # ready heaps: 0 backward, 1 forward (not an entry), 2 entry forward, 3 W
    heaps: list[list[list[tuple[tuple, Op]]]] = [[[], [], [], []] for _ in range(P)]

    def key(kind: str, s: int, j: int) -> tuple:
        if kind == "F":
            return (1, j if (s == 0 and entry == "index") else rank[j], -s)
        return (0 if kind in ("B", "I") else 2, rank[j], -s)

    def heap_of(op: Op) -> int:
        if op.kind == "F":
            return 2 if is_entry[op.stage] else 1
        return 0 if op.kind in ("B", "I") else 3

    def push(kind: str, s: int, j: int, t: int) -> None:
        op = make(s, kind, j)
        heapq.heappush(pending[gpu[s]], (t, key(kind, s, j), op))

    for j in range(m):
        push("F", 0, j, 0)
    live = [0] * P
    reserved = [0] * P
    free = [0] * P
    orders: list[list[Op]] = [[] for _ in range(P)]
    releases: list[tuple[int, int]] = []  # (time, gpu)
    remaining = S * m * len(kinds)
    now = 0

    def arrive(t_end: int, s_from: int, s_to: int) -> int:
        return t_end + (lag if gpu[s_from] != gpu[s_to] else 0)

    def start(p: int, op: Op) -> None:
        nonlocal remaining
        s, j = op.stage, op.microbatch
        end = now + dur[op.kind][s]
        orders[p].append(op)
        free[p] = end
        remaining -= 1
        if op.kind == "F":
            live[p] += 1
            if s == first_local[p]:
                reserved[p] += v - 1
            else:
                reserved[p] -= 1
            if s + 1 < S:
                push("F", s + 1, j, arrive(end, s, s + 1))
            ready_b[s][j] = max(ready_b[s][j], end)
            left_b[s][j] -= 1
            if not left_b[s][j]:
                push(grad, s, j, ready_b[s][j])
        elif op.kind == grad:
            if split:
                push("W", s, j, end)
            else:
                heapq.heappush(releases, (end, p))
            if s > 0:
                t = arrive(end, s, s - 1)
                ready_b[s - 1][j] = max(ready_b[s - 1][j], t)
                left_b[s - 1][j] -= 1
                if not left_b[s - 1][j]:
                    push(grad, s - 1, j, ready_b[s - 1][j])
        else:  # W
            heapq.heappush(releases, (end, p))

    while remaining:
        while releases and releases[0][0] <= now:
            live[heapq.heappop(releases)[1]] -= 1
        for p in range(P):
            pend = pending[p]
            while pend and pend[0][0] <= now:
                _, k, op = heapq.heappop(pend)
                heapq.heappush(heaps[p][heap_of(op)], (k, op))
            if free[p] > now:
                continue
            best = None
            for h in range(4):
                hp = heaps[p][h]
                if not hp:
                    continue
                cp = caps[p]
                if h == 2 and cp is not None and live[p] + reserved[p] + v > cp:
                    continue
                if best is None or hp[0][0] < heaps[p][best][0][0]:
                    best = h
            if best is not None:
                start(p, heapq.heappop(heaps[p][best])[1])
        if not remaining:
            break
        # the next instant at which a GPU frees, an op becomes ready or a slot is released
        # (a release is at the end of the op that frees its GPU)
        nxt = min((t for t in free if t > now), default=None)
        for pd in pending:
            if pd and pd[0][0] > now and (nxt is None or pd[0][0] < nxt):
                nxt = pd[0][0]
        if nxt is None:
            raise GeneratorError("ranked list scheduler stalled (a memory cap below v?)")
        now = nxt
    return Schedule(inst, tuple(tuple(o) for o in orders), source)
