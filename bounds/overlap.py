"""Lower bounds when the instance allows overlapped ``F&B`` ops (MODEL.md, third round).

Theorem OV1 (docs/theory.md, *Overlapped forward and backward*). Let

    ρ' = min(1, min_s d_FB[s] / (f_s + max_{s' on gpu(s)} b_s'),
                min_s d_FI[s] / (f_s + max_{s' on gpu(s)} b_I,s'))

(a term only for a duration the instance gives; ``ρ' = 1`` when it gives none). Every
schedule that may use ``F&B`` ops lasts at least ``ρ' · LB(inst°)``, where ``inst°`` is the
instance without overlapped durations (and without a byte budget, see the proof) and ``LB``
any valid lower bound. Proof sketch: run each ``F&B`` op of a schedule as its backward part
then its forward part inside the op's window, on the instance with every duration (and ``c``)
scaled by ``ρ'``; both parts fit (``ρ'(f_s + b_s') <= d``), every precedence still holds
(parts start no earlier and end no later than the op), and the live count never rises (the
backward part's release now comes before the forward part's store). So the scaled instance has
a schedule no longer than the original, and every bound is positively homogeneous. No
exactness is claimed with overlaps.
"""

from __future__ import annotations

from fractions import Fraction

from schedules.instance import Instance

from .theorems import SINGLE, theorem


@theorem("OV1", "with overlapped F&B ops: rho' times the bound without them",
         SINGLE + "A.10 Overlapped forward and backward (OV1)")
def overlap_factor(inst: Instance) -> Fraction:
    """``ρ'`` of theorem OV1 (module docstring): 1 when the instance gives no overlapped
    duration."""
    rho = Fraction(1)
    S = inst.S
    for given, kind in ((inst.d_FB, "B"), (inst.d_FI, "I")):
        if given is None:
            continue
        for s in range(S):
            d = given[s] if isinstance(given, tuple) else given
            worst = max(inst.duration_of(kind, t) for t in range(S) if inst.gpu(t) == inst.gpu(s))
            rho = min(rho, Fraction(d) / (inst.duration_of("F", s) + worst))
    return rho


def without_overlaps(inst: Instance) -> Instance:
    """``inst°`` of theorem OV1: no overlapped durations, and no byte budget (the reordered
    parts may hold the forward part's bytes a little earlier than the op's end, so only the
    activation count ``K`` carries over)."""
    memory = inst.memory
    if memory is not None and memory.budget is not None:
        memory = None
    return inst.with_(d_FB=None, d_FI=None, memory=memory)
