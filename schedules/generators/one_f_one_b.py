"""1F1B, one-forward-one-backward (PipeDream-Flush: Narayanan et al., *Memory-Efficient
Pipeline-Parallel DNN Training*, ICML 2021; the non-interleaved schedule of Megatron-LM).

Placement: one stage per GPU (``v = 1``). Backward: fused ``B``. Order on GPU ``p``:
``w = min(P-1-p, m)`` warm-up forwards, then pairs ``F(w+k,p), B(k,p)``, then the remaining
backwards (:func:`schedules.generators.common.one_f_one_b`); the order of
torch.distributed.pipelining's ``Schedule1F1B`` when ``m >= P``.

Guarantees (uniform durations, ``c = 0``): makespan ``(m + P - 1)(f + b)`` (global), the same as
GPipe; peak memory on GPU ``p`` is ``min(P - p, m)`` (``w`` warm-up activations plus the one
stored by the first steady forward), so ``min(P, m)`` on GPU 0.

>>> from schedules import Instance, simulate
>>> r = simulate(one_f_one_b(Instance(P=3, m=4)))
>>> r.makespan, r.peak_memory
(Fraction(18, 1), [3, 2, 1])
"""

from __future__ import annotations

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import one_f_one_b as skeleton
from .common import require


def one_f_one_b(inst: Instance) -> Schedule:
    """The 1F1B schedule of ``inst`` (``v = 1``); see the module docstring."""
    require(inst.v == 1, "1f1b", f"needs one stage per GPU (v=1), got v={inst.v}; "
                                 "use interleaved for several waves")
    P, m = inst.P, inst.m
    orders = []
    for p in range(P):
        s = inst.stages_of(p)[0]  # p, unless an explicit stage_to_rank permutes the stages
        fwd = [Op(s, "F", j) for j in range(m)]
        bwd = [Op(s, "B", j) for j in range(m)]
        orders.append(tuple(skeleton(fwd, bwd, warmup=P - 1 - s)))
    return Schedule(inst, tuple(orders), "1f1b")
