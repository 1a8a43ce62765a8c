"""1F1B as a construction: it reaches Theorem 1, so it is optimal whenever ``K >= min(m, P)``.
"""

from __future__ import annotations

from schedules.instance import Instance
from schedules.schedule import Schedule


def one_f_one_b(inst: Instance) -> Schedule:
    """1F1B for ``v = 1``, fused backward: GPU ``p`` runs ``w = min(P - p - 1, m)`` warm-up
    forwards, then alternates forward/backward, then drains its backwards.

    Its ASAP makespan is ``(m + P - 1)(f + b)`` and GPU ``p`` peaks at ``min(P - p, m)`` live
    activations (checked exhaustively by proofs_checks).
    """
    if inst.v != 1 or inst.split:
        raise ValueError("one_f_one_b builds v = 1 fused-backward schedules")
    from schedules.generators.one_f_one_b import one_f_one_b as generator

    sched = generator(inst)
    return Schedule(inst, sched.orders, source="1F1B (constructions.single_wave)")
