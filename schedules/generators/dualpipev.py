"""DualPipeV (DeepSeek-V3 technical report, 2024, "cut-in-half" DualPipe; the order of
torch.distributed.pipelining's ``ScheduleDualPipeV``, itself from deepseek-ai/DualPipe).

Placement: ``v = 2``, ``vshape`` (GPU ``p`` holds down stage ``d = p`` and up stage
``u = 2P-1-p``). Backward: mostly fused ``B`` (its overlapped forward+backward chunks), with
split ``I``/``W`` in the cool-down to fill bubbles, so split durations are required.
torch's ``OVERLAP_F_B`` action (a forward of one stage run together with a backward of the
other) is an ``F&B`` op (MODEL.md, third-round extensions) with ``overlap=True`` (the family
``dualpipev-fb``: each steady-state step is two ``F&B`` ops ``F(d)&B(u)``, ``F(u)&B(d)`` (GPU ``P-1``'s
first step only the second), each
cool-down triple ``B(u)``, ``F(u)&B(d)``, the order torch 2.13 builds), else the forward then
the backward (``dualpipev``). Needs ``m >= 2P``.

Order on GPU ``p`` (counters per stage and kind; ``W`` queue in ``I`` order):
``2(P-p-1)`` ``F(d)``; ``p+1`` pairs ``F(d), F(u)``; ``P-p-1`` triples ``I(u), W(queued),
F(u)``; ``m - 2P + p + 1`` steps of ``F(d), B(u), F(u), B(d)`` (on GPU ``P-1`` the first step
the same); ``P-p-1`` triples ``B(u), F(u), B(d)``; ``p+1`` pairs ``X(u), X(d)`` where ``X`` is
``B`` until the middle pair then ``I``; ``P-p-1`` pairs ``W(queued), X(d)``; the queued ``W``.

Guarantees (tested in tests/test_generators.py): valid for ``m >= 2P``; peak memory ``2P + 1``
stage activations on every GPU (the DualPipe README's figure); with ``f = b_I = b_W`` the global
makespan is ``2m(f+b) + (P-1) f`` (no bubble but GPU ``P-1``'s unavoidable start delay).

>>> from schedules import Instance, simulate
>>> r = simulate(dualpipev(Instance(P=2, m=4, v=2, placement="vshape", b_I=1, b_W=1)))
>>> r.valid
True
"""

from __future__ import annotations

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import has_placement, require


def dualpipev(inst: Instance, overlap: bool = False) -> Schedule:
    """The DualPipeV schedule of ``inst`` (``v = 2``, vshape, split, ``m >= 2P``); with
    ``overlap`` its overlapped chunks are ``F&B`` ops (module docstring)."""
    name = "dualpipev-fb" if overlap else "dualpipev"
    require(inst.v == 2 and has_placement(inst, "vshape"), name,
            f"needs v=2 stages per GPU in the vshape placement, got v={inst.v}, "
            f"placement={inst.placement}")
    require(inst.split, name, "needs split backward durations (--b-input and --b-weight)")
    P, m = inst.P, inst.m
    require(m >= 2 * P, name, f"needs m >= 2P = {2 * P} microbatches, got m={m}")
    orders, overlaps = [], []
    for p in range(P):
        d, u = p, 2 * P - 1 - p
        joined: list[int] = []
        nf = {d: 0, u: 0}
        nb = {d: 0, u: 0}
        wq: list[Op] = []
        order: list[Op] = []

        def fwd(s: int) -> None:
            order.append(Op(s, "F", nf[s]))
            nf[s] += 1

        def back(s: int, split: bool) -> None:
            if split:
                order.append(Op(s, "I", nb[s]))
                wq.append(Op(s, "W", nb[s]))
            else:
                order.append(Op(s, "B", nb[s]))
            nb[s] += 1

        def weight() -> None:
            if wq:
                order.append(wq.pop(0))

        def fwd_back(fs: int, bs: int) -> None:
            """``F(fs)`` and then ``B(bs)``; with ``overlap`` one ``F&B`` op, listed backward
            part first (:attr:`Schedule.overlaps`)."""
            if not overlap:
                fwd(fs)
                back(bs, False)
                return
            joined.append(len(order))
            back(bs, False)
            fwd(fs)

        for _ in range(2 * (P - p - 1)):
            fwd(d)
        for _ in range(p + 1):
            fwd(d)
            fwd(u)
        for _ in range(P - p - 1):
            back(u, True)
            weight()
            fwd(u)
        for step in range(m - 2 * P + p + 1):
            if step == 0 and p == P - 1:  # torch does not overlap the last GPU's first pair
                fwd(d)
                back(u, False)
            else:
                fwd_back(d, u)
            fwd_back(u, d)
        for _ in range(P - p - 1):
            back(u, False)
            fwd_back(u, d)
        split = False
        steps = p + 1
        for i in range(steps):
            if i == steps // 2 and p % 2 == 1:
                split = True
            back(u, split)
            if i == steps // 2 and p % 2 == 0:
                split = True
            back(d, split)
        for _ in range(P - p - 1):
            weight()
            back(d, split)
        while wq:
            weight()
        orders.append(tuple(order))
        overlaps.append(tuple(joined))
    if overlap:
        return Schedule(inst, tuple(orders), "dualpipev-fb", overlaps=tuple(overlaps))
    return Schedule(inst, tuple(orders), "dualpipev")


def dualpipev_fb(inst: Instance) -> Schedule:
    """DualPipeV with its overlapped chunks as ``F&B`` ops (torch's ``OVERLAP_F_B``)."""
    return dualpipev(inst, overlap=True)
