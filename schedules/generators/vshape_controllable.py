"""V-Half and V-Min (Qi, Wan, Amar, Lin, *Pipeline Parallelism with Controllable Memory*,
NeurIPS 2024).

Placement: ``v = 2``, ``vshape``. Backward: split ``I``/``W``. The paper builds them by repeating
a V-shape building block whose lifespan fixes the peak memory: about 1/2 (V-Half) and 1/3
(V-Min) of 1F1B's. Its table states the activation memory in *microbatches* (one microbatch =
one GPU's share of the model = 2 stage activations here): V-Half ``(P+2)//2``, V-Min
``(P+4)//3``, against 1F1B's ``P``.

Here both come from the greedy list scheduler (:mod:`schedules.generators.list_scheduler`)
with priority ``I`` > ``F`` > ``W`` (oldest microbatch first, later stage first) and that memory
as a hard cap in stage activations: ``2((P+2)//2)`` for V-Half, ``2((P+4)//3)`` for V-Min (at
least 2). So the peak memory figure holds by construction (tested); the bubble is whatever the
greedy rule achieves, which is close to the paper's for V-Half (about 1/2 of 1F1B's bubble at
``f = b_I = b_W``, ``m = 3P``) but well above it for V-Min (the paper's block keeps deliberate
gaps that a non-delaying greedy rule does not): see docs/schedules.md for the numbers.

>>> from schedules import Instance, simulate
>>> inst = Instance(P=4, m=12, v=2, placement="vshape", b_I=1, b_W=1)
>>> max(simulate(v_half(inst)).peak_memory), max(simulate(v_min(inst)).peak_memory)
(6, 4)
"""

from __future__ import annotations

from ..instance import Instance
from ..schedule import Schedule
from .common import require
from .list_scheduler import list_schedule
from .zero_bubble import zb_key


def v_half_memory(P: int) -> int:
    """V-Half's peak in stage activations: ``2 ((P+2)//2)``."""
    return 2 * ((P + 2) // 2)


def v_min_memory(P: int) -> int:
    """V-Min's peak in stage activations: ``2 ((P+4)//3)``."""
    return 2 * ((P + 4) // 3)


def _check(inst: Instance, name: str) -> None:
    require(inst.v == 2 and inst.placement == "vshape", name,
            f"needs v=2 stages per GPU in the vshape placement, got v={inst.v}, "
            f"placement={inst.placement}")
    require(inst.split, name, "needs split backward durations (--b-input and --b-weight)")


def v_half(inst: Instance) -> Schedule:
    """V-Half of ``inst`` (``v = 2``, vshape, split): peak ``2((P+2)//2)`` stage activations."""
    _check(inst, "v-half")
    return list_schedule(inst, cap=[v_half_memory(inst.P)] * inst.P, split=True, key=zb_key,
                         source="v-half")


def v_min(inst: Instance) -> Schedule:
    """V-Min of ``inst`` (``v = 2``, vshape, split): peak ``2((P+4)//3)`` stage activations."""
    _check(inst, "v-min")
    return list_schedule(inst, cap=[v_min_memory(inst.P)] * inst.P, split=True, key=zb_key,
                         source="v-min")
