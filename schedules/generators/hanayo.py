"""Hanayo wave schedule (Liu et al., *Hanayo: Harnessing Wave-like Pipeline Parallelism for
Enhanced Large Model Training Efficiency*, SC 2023).

Placement: ``v >= 2`` waves, ``vshape`` (the model goes down the GPUs, back up, down again...).
Backward: fused ``B``. Hanayo runs each GPU in 1F1B fashion over its ``v`` stages: a backward as
soon as one is ready, else the forward of the oldest microbatch (the later stage first),
keeping at most ``v P`` stage activations per GPU (1F1B's ``P`` microbatches of ``v`` stages
each, the same bytes). Here that rule is run by the greedy list scheduler
(:mod:`schedules.generators.list_scheduler`), so the peak memory is at most ``v P``
(tested); no closed-form makespan is claimed (the paper gives none for this model).

>>> from schedules import Instance, simulate
>>> r = simulate(hanayo(Instance(P=2, m=4, v=2, placement="vshape")))
>>> r.valid, max(r.peak_memory) <= 4
(True, True)
"""

from __future__ import annotations

from ..instance import Instance
from ..schedule import Schedule
from .common import require
from .list_scheduler import default_key, list_schedule


def hanayo(inst: Instance) -> Schedule:
    """The Hanayo wave schedule of ``inst`` (``v >= 2``, vshape); see the module docstring."""
    require(inst.v >= 2 and inst.placement == "vshape", "hanayo",
            f"needs v >= 2 waves in the vshape placement, got v={inst.v}, "
            f"placement={inst.placement}")
    return list_schedule(inst, cap=[inst.v * inst.P] * inst.P, split=False, key=default_key,
                         source="hanayo")
