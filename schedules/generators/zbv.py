"""ZB-V (Qi et al., *Zero Bubble Pipeline Parallelism*, ICLR 2024, section 6; the order of
torch.distributed.pipelining's ``ScheduleZBVZeroBubble``).

Placement: ``v = 2``, ``vshape`` (GPU ``p`` holds the down stage ``p`` and the up stage
``2P-1-p``, so GPU 0 holds both the first and the last stage). Backward: split ``I``/``W``.

Order on GPU ``p`` (``d = p`` its down stage, ``u = 2P-1-p`` its up stage), written for
``n = max(m, 2P-1)`` microbatches, ops of microbatches ``>= m`` then dropped:

1. warm-up: ``2(P-p)-1`` forwards of ``d``; then ``p`` pairs ``F(u), F(d)``; then ``P-p``
   triples ``F(u), I(u), W(u)``;
2. steady: while forwards remain, ``F(d)`` (if any left), ``I(d), W(d)``, ``F(u), I(u), W(u)``;
3. cool-down: ``p`` pairs ``I(d), I(u)``; ``P-p`` pairs ``I(d), W(d)``; the remaining ``W(u)``
   then ``W(d)``.

Guarantees (tested in tests/test_generators.py): with ``f = b_I = b_W`` and ``m >= 2P`` the
per-rank bubble (span minus busy time) is 0 on every GPU, the published "zero bubble"; the
global makespan is then ``2m(f+b) + (P-1) f`` (GPU ``P-1`` starts at ``(P-1) f``). Peak memory
``2P`` stage activations on GPU 0, i.e. 1F1B's ``P`` microbatches of ``2`` half-size stages.

>>> from schedules import Instance, simulate
>>> r = simulate(zbv(Instance(P=4, m=8, v=2, placement="vshape", b_I=1, b_W=1)))
>>> r.makespan - 8 * 2 * 3, max(r.peak_memory)
(Fraction(3, 1), 8)
"""

from __future__ import annotations

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import has_placement, require


def zbv(inst: Instance) -> Schedule:
    """The ZB-V schedule of ``inst`` (``v = 2``, vshape, split); see the module docstring."""
    require(inst.v == 2 and has_placement(inst, "vshape"), "zbv",
            f"needs v=2 stages per GPU in the vshape placement, got v={inst.v}, "
            f"placement={inst.placement}")
    require(inst.split, "zbv", "needs split backward durations (--b-input and --b-weight)")
    return Schedule(inst, zbv_orders(inst), "zbv")


def zbv_orders(inst: Instance, fused: bool = False) -> tuple[tuple[Op, ...], ...]:
    """ZB-V's per-GPU orders (``v = 2``, vshape); ``fused``: each ``I`` becomes ``B`` and the
    ``W`` are dropped (a V-shape 1F1B, used by :mod:`schedules.generators.hanayo`)."""
    P, m = inst.P, inst.m
    n = max(m, 2 * P - 1)
    orders = []
    for p in range(P):
        d, u = p, 2 * P - 1 - p
        cnt = {(s, k): 0 for s in (d, u) for k in "FIW"}
        order: list[Op] = []

        def put(s: int, k: str) -> None:
            order.append(Op(s, k, cnt[s, k]))
            cnt[s, k] += 1

        for _ in range(2 * (P - p) - 1):
            put(d, "F")
        for _ in range(p):
            put(u, "F")
            put(d, "F")
        for _ in range(P - p):
            put(u, "F")
            put(u, "I")
            put(u, "W")
        while cnt[u, "F"] < cnt[d, "F"] or cnt[d, "F"] < n:
            if cnt[d, "F"] < n:
                put(d, "F")
            put(d, "I")
            put(d, "W")
            put(u, "F")
            put(u, "I")
            put(u, "W")
        for _ in range(p):
            put(d, "I")
            put(u, "I")
        for _ in range(P - p):
            put(d, "I")
            put(d, "W")
        while cnt[u, "W"] < cnt[u, "I"]:
            put(u, "W")
        while cnt[d, "W"] < cnt[d, "I"]:
            put(d, "W")
        if fused:
            order = [op if op.kind == "F" else Op(op.stage, "B", op.microbatch)
                     for op in order if op.kind != "W"]
        orders.append(tuple(op for op in order if op.microbatch < m))
    return tuple(orders)
