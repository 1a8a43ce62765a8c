"""Hanayo-style wave schedule (Liu et al., *Hanayo: Harnessing Wave-like Pipeline Parallelism
for Enhanced Large Model Training Efficiency*, SC 2023).

Placement: ``v >= 2`` waves, ``vshape`` (the model goes down the GPUs, back up, down again...).
Backward: fused ``B``. The paper's exact per-GPU orders are not reproduced here; this is a wave
schedule in its spirit, 1F1B-like on the V:

* ``v = 2`` (one wave): ZB-V's order (:func:`schedules.generators.zbv.zbv_orders`) with each
  ``I`` a full ``B`` and no ``W``: a V-shape 1F1B. Peak memory ``2P`` stage activations (1F1B's
  ``P`` microbatches of two half-size stages).
* ``v >= 3``: the greedy list scheduler (:mod:`schedules.generators.list_scheduler`), backward
  first, oldest microbatch first, later stage first, at most ``2vP`` stage activations per GPU.

No closed-form makespan is claimed. Measured (``f = 1, b = 2``; makespan / peak), against
Megatron interleaved on the looped placement: ``P=4, m=8, v=2``: 60 / 8 (interleaved 57 / 11);
``P=8, m=24, v=2``: 172 / 16 (165 / 23); ``P=4, m=8, v=3``: 95 / 16 (81 / 15).

>>> from schedules import Instance, simulate
>>> r = simulate(hanayo(Instance(P=4, m=8, v=2, placement="vshape")))
>>> r.makespan, max(r.peak_memory)
(Fraction(60, 1), 8)
"""

from __future__ import annotations

from ..instance import Instance
from ..schedule import Schedule
from .common import has_placement, require
from .list_scheduler import default_key, list_schedule
from .zbv import zbv_orders


def hanayo(inst: Instance) -> Schedule:
    """The Hanayo-style wave schedule of ``inst`` (``v >= 2``, vshape); see the module docstring."""
    require(inst.v >= 2 and has_placement(inst, "vshape"), "hanayo",
            f"needs v >= 2 waves in the vshape placement, got v={inst.v}, "
            f"placement={inst.placement}")
    if inst.v == 2:
        return Schedule(inst, zbv_orders(inst, fused=True), "hanayo")
    return list_schedule(inst, cap=[2 * inst.v * inst.P] * inst.P, split=False, key=default_key,
                         source="hanayo")
