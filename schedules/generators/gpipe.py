"""GPipe (Huang et al., *GPipe: Efficient Training of Giant Neural Networks using Pipeline
Parallelism*, NeurIPS 2019).

Placement: one stage per GPU (``v = 1``). Backward: fused ``B``. Order on GPU ``p``: all ``m``
forwards ``F(0,p) .. F(m-1,p)``, then all backwards ``B(0,p) .. B(m-1,p)`` (the order of
torch.distributed.pipelining's ``ScheduleGPipe``).

Guarantees (uniform durations, ``c = 0``): makespan ``(m + P - 1)(f + b)`` (global); GPU ``p``
holds all ``m`` activations at the end of its forwards, so peak memory ``m`` on every GPU.

>>> from schedules import Instance, simulate
>>> r = simulate(gpipe(Instance(P=3, m=4)))
>>> r.makespan, r.peak_memory
(Fraction(18, 1), [4, 4, 4])
"""

from __future__ import annotations

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import require


def gpipe(inst: Instance) -> Schedule:
    """The GPipe schedule of ``inst`` (``v = 1``); see the module docstring."""
    require(inst.v == 1, "gpipe", f"needs one stage per GPU (v=1), got v={inst.v}; "
                                  "use looped-bfs for several waves")
    stage = [inst.stages_of(p)[0] for p in range(inst.P)]  # p, unless stage_to_rank permutes
    orders = [[Op(stage[p], "F", j) for j in range(inst.m)]
              + [Op(stage[p], "B", j) for j in range(inst.m)] for p in range(inst.P)]
    return Schedule(inst, tuple(map(tuple, orders)), "gpipe")
