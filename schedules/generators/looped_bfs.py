"""Looped BFS, breadth-first pipeline parallelism (Lamy-Poirier, *Breadth-First Pipeline
Parallelism*, MLSys 2023; torch.distributed.pipelining's ``ScheduleLoopedBFS``).

Placement: ``v >= 1`` stages per GPU, any placement (``looped`` is the paper's). Backward:
fused ``B``. Order on GPU ``p`` with local stages ``s_1 < .. < s_v``: for each local stage in
increasing order all forwards ``F(0,s) .. F(m-1,s)``; then for each local stage in decreasing
order all backwards in decreasing microbatch order ``B(m-1,s) .. B(0,s)`` (torch's order). For
``v = 1`` this is GPipe with the backwards reversed.

Guarantees (uniform durations, ``c = 0``): peak memory ``v m`` on every GPU (all activations are
held at the turn); makespan ``(v m + P - 1)(f + b)`` (global) for the looped placement when
``m >= P`` (no GPU waits between waves, checked in tests/test_generators.py).

>>> from schedules import Instance, simulate
>>> r = simulate(looped_bfs(Instance(P=2, m=2, v=2)))
>>> r.makespan, r.peak_memory
(Fraction(15, 1), [4, 4])
"""

from __future__ import annotations

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule


def looped_bfs(inst: Instance) -> Schedule:
    """The looped breadth-first schedule of ``inst``; see the module docstring."""
    m = inst.m
    orders = []
    for p in range(inst.P):
        local = inst.stages_of(p)
        order = [Op(s, "F", j) for s in local for j in range(m)]
        order += [Op(s, "B", j) for s in reversed(local) for j in reversed(range(m))]
        orders.append(tuple(order))
    return Schedule(inst, tuple(orders), "looped-bfs")
