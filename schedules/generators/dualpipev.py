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


Token = tuple[int, str, int]
"""One op of :func:`rank_order`: ``(phase, kind, index)``; phase 0 is the GPU's early stage (the
V's down stage), phase 1 its late one (the up stage), ``index`` counts that phase's chunks."""


def rank_order(P: int, m: int, p: int, overlap: bool, split: bool = True
               ) -> tuple[list[Token], list[int]]:
    """The DualPipe order of one GPU as tokens, and the positions of its ``F&B`` ops (listed
    backward part first, :attr:`Schedule.overlaps`; none without ``overlap``).

    ``P`` GPUs of the V (DualPipe's ``num_half_ranks``), ``m`` chunks per phase
    (``half_num_chunks``), ``p`` the GPU's place (``half_rank``): deepseek-ai/DualPipe's eight
    steps, which DualPipe and DualPipeV share. ``split`` False (a fused instance): the zero-bubble
    steps run a full ``B`` instead of ``I`` and a deferred ``W``.
    """
    joined: list[int] = []
    nf = [0, 0]
    nb = [0, 0]
    wq: list[Token] = []
    order: list[Token] = []

    def fwd(ph: int) -> None:
        order.append((ph, "F", nf[ph]))
        nf[ph] += 1

    def back(ph: int, zb: bool) -> None:
        if zb and split:
            order.append((ph, "I", nb[ph]))
            wq.append((ph, "W", nb[ph]))
        else:
            order.append((ph, "B", nb[ph]))
        nb[ph] += 1

    def weight() -> None:
        if wq:
            order.append(wq.pop(0))

    def fwd_back(fp: int, bp: int) -> None:
        """``F(fp)`` and then ``B(bp)``; with ``overlap`` one ``F&B`` op, listed backward part
        first (:attr:`Schedule.overlaps`)."""
        if not overlap:
            fwd(fp)
            back(bp, False)
            return
        joined.append(len(order))
        back(bp, False)
        fwd(fp)

    for _ in range(2 * (P - p - 1)):
        fwd(0)
    for _ in range(p + 1):
        fwd(0)
        fwd(1)
    for _ in range(P - p - 1):
        back(1, True)
        weight()
        fwd(1)
    for step in range(m - 2 * P + p + 1):
        if step == 0 and p == P - 1:  # DualPipe does not overlap the middle GPU's first pair
            fwd(0)
            back(1, False)
        else:
            fwd_back(0, 1)
        fwd_back(1, 0)
    for _ in range(P - p - 1):
        back(1, False)
        fwd_back(1, 0)
    zb = False
    steps = p + 1
    for i in range(steps):
        if i == steps // 2 and p % 2 == 1:
            zb = True
        back(1, zb)
        if i == steps // 2 and p % 2 == 0:
            zb = True
        back(0, zb)
    for _ in range(P - p - 1):
        weight()
        back(0, zb)
    while wq:
        weight()
    return order, joined


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
        stage = (p, 2 * P - 1 - p)  # phase 0: the down stage d, phase 1: the up stage u
        tokens, joined = rank_order(P, m, p, overlap)
        orders.append(tuple(Op(stage[ph], kind, j) for ph, kind, j in tokens))
        overlaps.append(tuple(joined))
    if overlap:
        return Schedule(inst, tuple(orders), "dualpipev-fb", overlaps=tuple(overlaps))
    return Schedule(inst, tuple(orders), "dualpipev")


def dualpipev_fb(inst: Instance) -> Schedule:
    """DualPipeV with its overlapped chunks as ``F&B`` ops (torch's ``OVERLAP_F_B``)."""
    return dualpipev(inst, overlap=True)
