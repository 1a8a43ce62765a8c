"""Building-block schedules (Qi, Wan, Amar, Lin, *Pipeline Parallelism with Controllable Memory*,
NeurIPS 2024, section 3): a pipeline schedule as one microbatch's *block* repeated.

A block fixes the start time of every op of microbatch 0; microbatch ``j`` repeats it shifted by
the period ``T = v(f + b)``, the work of one microbatch on one GPU. If on every GPU the block's
ops occupy disjoint intervals modulo ``T``, the repeated block is a conflict-free timing, so
its per-GPU orders (ops sorted by block time) are valid: the ASAP timing of those orders exists
and is never later ("squeezing" the warm-up and cool-down). The peak memory of the steady
state is set by the *lifespans* (store to release) of the block's activations: about
``sum of lifespans on a GPU / T``.

:func:`block_schedule` builds the block greedily along the chain ``F`` of stages ``0..S-1``,
then the input gradients of stages ``S-1..0``: each op starts at the earliest time, not before
its predecessor's end plus a chosen *gap*, at which its interval is free modulo ``T`` on its GPU;
then each ``W`` takes the first free slot after its ``I``. When some op finds no free slot
(durations that do not tile the period), the period grows by one time unit and the block is
rebuilt, so the construction always ends. Zero gaps give the shortest lifespans
(V-Min); gaps trade memory for fewer bubbles (V-Half).

>>> from schedules import Instance, simulate
>>> inst = Instance(P=4, m=12, v=2, placement="vshape", b_I=1, b_W=1)
>>> r = simulate(block_schedule(inst))
>>> r.valid, max(r.peak_memory)
(True, 4)
"""

from __future__ import annotations

from typing import Callable, Optional

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule

Gap = Optional[Callable[[int], int]]


def block_times(inst: Instance, forward_gap: Gap = None, backward_gap: Gap = None,
                split: Optional[bool] = None) -> tuple[dict[tuple[int, str], int], int]:
    """The greedy block of ``inst`` (see the module docstring): ``(start, period)``, the start
    of every op ``(stage, kind)`` of microbatch 0 and the period ``T``, in units of
    ``1/inst.unit``. Microbatch ``j``'s op starts at ``start[stage, kind] + j T`` in the
    repeated block. Arguments as in :func:`block_schedule`.

    >>> from schedules import Instance
    >>> start, T = block_times(Instance(P=2, m=4, v=2, placement="vshape"))
    >>> T, [start[s, "F"] for s in range(4)]
    (6, [0, 1, 2, 3])
    """
    split = inst.split if split is None else split
    P, u = inst.P, inst.unit
    kinds = ("F", "I", "W") if split else ("F", "B")
    # per kind, the duration on each stage (per-stage costs); the period starts at the work of
    # the busiest GPU per microbatch
    d = {k: [int(x * u) for x in inst.durations_of(k)] for k in kinds}
    period = max(sum(d[k][s] for k in kinds for s in inst.stages_of(p)) for p in range(P))
    while True:
        start = _block(inst, d, period, split, forward_gap, backward_gap)
        if start is not None:
            return start, period
        period += 1  # the ops do not tile the period: allow an idle unit per period


def block_schedule(inst: Instance, forward_gap: Gap = None, backward_gap: Gap = None,
                   split: Optional[bool] = None, source: str = "") -> Schedule:
    """The repeated greedy block of ``inst`` (see the module docstring).

    ``forward_gap(s)``: extra idle time units (of ``1/inst.unit``) before ``F(0,s)``, ``s >= 1``;
    ``backward_gap(s)``: the same before the input-gradient op of stage ``s < S-1``.
    ``split`` defaults to ``inst.split``.
    """
    start, period = block_times(inst, forward_gap, backward_gap, split)
    P = inst.P
    timed = sorted(((t0 + j * period, inst.gpu(s), Op(s, k, j))
                    for j in range(inst.m) for (s, k), t0 in start.items()),
                   key=lambda x: x[0])
    orders: list[list[Op]] = [[] for _ in range(P)]
    for _, p, op in timed:
        orders[p].append(op)
    return Schedule(inst, tuple(map(tuple, orders)), source)


def _block(inst: Instance, d: dict, period: int, split: bool, forward_gap: Gap,
           backward_gap: Gap) -> Optional[dict[tuple[int, str], int]]:
    """Start times of microbatch 0's ops, or None when some op finds no free slot mod ``period``."""
    S, P = inst.S, inst.P
    used: list[list[tuple[int, int]]] = [[] for _ in range(P)]

    def conflict_end(p: int, t: int, length: int) -> Optional[int]:
        """The latest end (in the frame of ``t mod period``) of a placed op that overlaps
        ``[t, t + length)`` modulo the period, or None when that slot is free."""
        a = t % period
        end = None
        for b, lb in used[p]:
            for shift in (-period, 0, period):
                if a < b + shift + lb and b + shift < a + length:
                    e = b + shift + lb
                    end = e if end is None or e > end else end
        return end

    def place(p: int, t: int, length: int) -> Optional[int]:
        # the first free start >= t: every start before the latest end of a conflicting op
        # still overlaps that op, so the scan jumps there instead of stepping one unit
        t1 = t
        while t1 < t + period:
            end = conflict_end(p, t1, length)
            if end is None:
                used[p].append((t1 % period, length))
                return t1
            t1 += end - t1 % period
        return None

    start: dict[tuple[int, str], int] = {}
    t = 0
    for s in range(S):
        gap = forward_gap(s) if (forward_gap and s > 0) else 0
        t = place(inst.gpu(s), t + gap, d["F"][s])
        if t is None:
            return None
        start[s, "F"] = t
        t += d["F"][s]
    grad = "I" if split else "B"
    for s in reversed(range(S)):
        gap = backward_gap(s) if (backward_gap and s < S - 1) else 0
        t = place(inst.gpu(s), t + gap, d[grad][s])
        if t is None:
            return None
        start[s, grad] = t
        t += d[grad][s]
    if split:
        for s in reversed(range(S)):
            tw = place(inst.gpu(s), start[s, "I"] + d["I"][s], d["W"][s])
            if tw is None:
                return None
            start[s, "W"] = tw
    return start
