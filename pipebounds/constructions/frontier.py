"""Schedules at the memory frontier: fill-drain makespan with few activations (docs/theory_frontier.md).

For a single-wave fused instance the unconstrained optimum is T1 ``= (m + P - 1)(f + b)``
(docs/theory.md, Theorem 1). :func:`frontier_schedule` looks for a schedule that reaches T1
holding at most ``K`` activations per GPU, recomputing some pairs (KF3's construction side).

**Search.** GPU ``P-1`` runs 1F1B, whose times are forced (its window is exactly its work:
``F(j, P-1)`` on ``[(P-1) f + j B, P f + j B]``, ``B = f + b``). Then GPUs ``P-2, ..., 0`` in
turn: a depth-first search builds GPU ``p``'s op sequence against the *fixed times of GPU
``p+1``*: each op starts as soon as GPU ``p`` is free, a backward ``B(k, p)`` no earlier than
``B(k, p+1)`` ends, a forward ``F(j, p)`` must end by the start of ``F(j, p+1)`` (its
deadline), the last backward must end by ``T1 - p b`` (Fact W), and at most ``K`` activations
are live. Pairs are numbered in the order of their backwards (the same on every GPU: an
optimal schedule need not treat microbatches in index order, and here it does not). Choices at
each step: the next backward; a kept forward (earliest deadline first: swapping two kept
forwards changes no live count); a free forward of any pair (recomputed later); a recompute of
the pending pair with the earliest backward. Failed states are memoised; the search
backtracks across GPUs (a choice on GPU ``p`` fixes GPU ``p-1``'s deadlines) within a node
budget. GPU ``p``'s forwards are not checked against GPU ``p-1`` while ``p`` is built: their
start times are GPU ``p-1``'s deadlines, and GPU 0 (no predecessor) starts at 0.

**Certificate.** The orders are simulated: the schedule is returned only if it is valid, its
makespan is T1 and its peak is ``<= K``. Since T1 is a lower bound for every ``K``, such a
schedule proves ``OPT(K) = T1``, i.e. ``K* <= K``. None means only that the search found
nothing within its budget.

>>> from schedules import Instance, simulate
>>> s = frontier_schedule(Instance(P=4, m=8, K=2, f=1, b=2))
>>> r = simulate(s); r.makespan, max(r.peak_memory)
(Fraction(33, 1), 2)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterator, Optional

from bounds.single_wave import fill_drain_value
from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.simulate import simulate

DEFAULT_NODES = 200_000
"""Node budget of :func:`frontier_schedule` (all GPUs together)."""


class _Budget(Exception):
    pass


def _gpu_plans(m: int, K: int, f: Fraction, b: Fraction, start: Fraction, end: Fraction,
               b_ready: list, dl: list, counter: list,
               deadline: Deadline = NO_DEADLINE) -> Iterator[tuple]:
    """Every op sequence of one GPU ``p < P-1`` (plans, lazily, depth first) that fits the
    times fixed on GPU ``p+1``: ``b_ready[k]`` the end of ``B(k, p+1)``, ``dl[j]`` the start of
    ``F(j, p+1)`` (the deadline of ``F(j, p)``), the GPU free from ``start``, its last backward
    ending by ``end``, at most ``K`` live activations. Pairs are numbered in the order of their
    backwards, the same on every GPU. Ops run as early as the GPU allows; a backward waits for
    ``B(k, p+1)``; forwards are not released by GPU ``p-1`` here: their start times become
    GPU ``p-1``'s deadlines. Kept forwards go earliest-deadline first (swapping two kept
    forwards changes no live count); a free forward (its pair recomputed later) may take any
    pair; a recompute takes the pending pair with the earliest backward.

    A plan is ``(ops, times)``: the op sequence as ``(kind, j)`` (kind ``F`` kept, ``f`` free,
    ``R``, ``B``) and their start times. The node budget (``counter``) and ``deadline``
    (looked at every 256 nodes) end the search with :class:`_Budget`."""
    fail: set = set()
    ops: list = []
    times: list = []

    def step(t, k, unf, live, pending):
        counter[0] += 1
        if counter[0] > 0 or (not counter[0] & 255 and deadline.expired()):
            raise _Budget
        if k == m:
            yield tuple(ops), tuple(times)
            return
        # work left must fit; every forward left must meet its deadline (EDF, forwards only)
        if t + (m - k) * b + (len(unf) + len(pending)) * f > end:
            return
        for i, dj in enumerate(sorted(dl[j] for j in unf)):
            if t + (i + 1) * f > dj:
                return
        key = (t, k, unf, live, pending)
        if key in fail:
            return
        found = False
        options = []
        if k in live:
            options.append(("B", k))
        elif k in pending:
            if len(live) < K:
                options.append(("R", k))
        if unf:
            if len(live) < K:
                options.append(("F", min(unf, key=lambda j: (dl[j], j))))
            for j in sorted(unf, key=lambda j: (dl[j], j)):
                if j != k:
                    options.append(("f", j))
        if pending and len(live) < K:
            r = min(pending)
            if r != k:
                options.append(("R", r))
        for kind, j in options:
            if kind == "B":
                st = max(t, b_ready[k])
                nt, k2, unf2, live2, pend2 = st + b, k + 1, unf, live - {k}, pending
            else:
                st, nt, k2 = t, t + f, k
                unf2, live2, pend2 = unf, live, pending
                if kind == "F":
                    unf2, live2 = unf - {j}, live | {j}
                elif kind == "f":
                    unf2, pend2 = unf - {j}, pending | {j}
                else:
                    pend2, live2 = pending - {j}, live | {j}
                if kind in "Ff" and nt > dl[j]:
                    continue
            ops.append((kind, j))
            times.append(st)
            for plan in step(nt, k2, unf2, live2, pend2):
                found = True
                yield plan
            ops.pop()
            times.pop()
        if not found:
            fail.add(key)

    yield from step(start, 0, frozenset(range(m)), frozenset(), frozenset())


def frontier_schedule(inst: Instance, K: Optional[int] = None,
                       nodes: int = DEFAULT_NODES,
                       deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """A schedule of ``inst`` (``v = 1``, fused, no delay) with makespan T1 and at most ``K``
    (default ``inst.K``) activations per GPU, found by the search of the module docstring;
    None when the search finds none within ``nodes`` or before ``deadline``
    (:class:`schedules.deadline.Deadline`) (no claim: not a proof of absence)."""
    if inst.v != 1 or inst.split or inst.c or getattr(inst, "per_stage", False):
        return None
    if inst.stage_to_rank is not None and tuple(inst.stage_to_rank) != tuple(range(inst.P)):
        return None
    K = inst.K if K is None else K
    if K is None:
        K = inst.m
    P, m = inst.P, inst.m
    T1 = fill_drain_value(inst)
    counter = [-nodes]
    f, b = Fraction(inst.f), Fraction(inst.b)
    B = f + b
    # GPU P-1 runs 1F1B: F(j) on [(P-1) f + j B, P f + j B], B(j) right after
    last = (tuple(x for j in range(m) for x in (("F", j), ("B", j))),
            tuple(x for j in range(m) for x in ((P - 1) * f + j * B, P * f + j * B)))
    plans: list = [None] * P
    plans[P - 1] = last

    def place(p: int) -> bool:
        if p < 0:
            return True
        ops, times = plans[p + 1]
        b_ready = [None] * m
        dl = [None] * m
        for (kind, j), st in zip(ops, times):
            if kind == "B":
                b_ready[j] = st + b
            elif kind in "Ff":
                dl[j] = st
        for plan in _gpu_plans(m, K, f, b, p * f, T1 - p * b, b_ready, dl, counter,
                               deadline):
            plans[p] = plan
            if place(p - 1):
                return True
        return False

    try:
        ok = place(P - 2)
    except _Budget:
        return None
    if not ok:
        return None
    orders = tuple(tuple(Op(p, "F" if kind in "Ff" else kind, j) for kind, j in plans[p][0])
                   for p in range(P))
    sched = Schedule(inst.with_(K=K), orders, source=f"frontier timetable (K={K})")
    res = simulate(sched)
    if not res.valid or res.makespan != T1 or max(res.peak_memory) > K:
        return None
    return sched
