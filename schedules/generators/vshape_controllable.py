"""V-Min and V-Half (Qi, Wan, Amar, Lin, *Pipeline Parallelism with Controllable Memory*,
NeurIPS 2024).

Placement: ``v = 2``, ``vshape``. Backward: split ``I``/``W``. Both repeat a V-shape building
block (:func:`schedules.generators.building_block.block_schedule`); the block's lifespans fix
the memory. The paper's table states activation memory in *microbatches* (one microbatch = one
GPU's share of the model = 2 stage activations here) against 1F1B's ``P``: V-Min ``(P+4)//3``,
V-Half ``(P+2)//2``; and bubble rates about ``2/3`` and ``1/2`` of 1F1B's, with
``f = b_I = b_W``.

* **V-Min**: the tightest block (every op as early as its predecessor and the period allow).
* **V-Half**: the same with an idle gap of one forward time ``f`` before each forward of the
  second (up) wave, which spreads the block so that fewer ops wait on each other.

Measured (tests/test_generators.py, ``f = b_I = b_W``, ``m = 3P``, ``P = 2..8``): peak memory
exactly ``2((P+4)//3)`` (V-Min) and ``2((P+2)//2)`` (V-Half) stage activations, the paper's
figures; global bubble ``T - 2m(f+b)`` between 0.5 and 0.7 (V-Min) and 0.5 and 0.57 (V-Half)
of 1F1B's on the same model (1F1B with one stage of ``2f, 2b`` per GPU).
For other durations the block still gives valid schedules but the figures are not claimed.

>>> from schedules import Instance, simulate
>>> inst = Instance(P=4, m=12, v=2, placement="vshape", b_I=1, b_W=1)
>>> max(simulate(v_half(inst)).peak_memory), max(simulate(v_min(inst)).peak_memory)
(6, 4)
"""

from __future__ import annotations

from ..instance import Instance
from ..schedule import Schedule
from .building_block import block_schedule
from .common import has_placement, require


def v_min_memory(P: int) -> int:
    """V-Min's peak in stage activations, ``2 ((P+4)//3)`` (the paper's ``(P+4)//3`` microbatches)."""
    return 2 * ((P + 4) // 3)


def v_half_memory(P: int) -> int:
    """V-Half's peak in stage activations, ``2 ((P+2)//2)`` (the paper's ``(P+2)//2`` microbatches)."""
    return 2 * ((P + 2) // 2)


def _check(inst: Instance, name: str) -> None:
    require(inst.v == 2 and has_placement(inst, "vshape"), name,
            f"needs v=2 stages per GPU in the vshape placement, got v={inst.v}, "
            f"placement={inst.placement}")
    require(inst.split, name, "needs split backward durations (--b-input and --b-weight)")


def v_min(inst: Instance) -> Schedule:
    """V-Min of ``inst`` (``v = 2``, vshape, split): the tightest V-shape block, repeated."""
    _check(inst, "v-min")
    return block_schedule(inst, source="v-min")


def v_half(inst: Instance) -> Schedule:
    """V-Half of ``inst`` (``v = 2``, vshape, split): a gap of ``f`` before each up-wave forward."""
    _check(inst, "v-half")
    gaps = [int(x * inst.unit) for x in inst.durations_of("F")]   # f_s before F(0,s), s >= P
    P = inst.P
    return block_schedule(inst, forward_gap=lambda s: gaps[s] if s >= P else 0, source="v-half")
