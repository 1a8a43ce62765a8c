"""DualPipe, bidirectional (DeepSeek-V3 technical report, 2024; deepseek-ai/DualPipe,
``dualpipe/dualpipe.py``): two copies of the parameters, microbatches fed from both ends.

Model: ``directions = 2`` (MODEL.md, *Directions*): microbatches ``j < m/2`` run through copy 0
(stage ``s`` on GPU ``s``), ``j >= m/2`` through copy 1 (stage ``s`` on GPU ``P-1-s``), so GPU
``r`` holds stage ``r`` of copy 0 and stage ``P-1-r`` of copy 1. Needs ``P`` even and
``m >= 2P`` (DualPipe's ``num_chunks >= 2 num_ranks``, even).

Order of GPU ``r``: DualPipe's eight steps (:func:`schedules.generators.dualpipev.rank_order`,
shared with DualPipeV) with ``num_half_ranks = P/2`` GPUs, ``half_num_chunks = m/2`` chunks per
phase and ``half_rank h = min(r, P-1-r)``. Phase 0 is the direction in which GPU ``r`` sits at
chain position ``h`` (copy 0 on the first half of the GPUs, copy 1 on the second), phase 1 the
other one (position ``P-1-h``): as in ``_forward_compute_chunk``, ``phase ^= is_in_second_half``.
Phase 0's ``i``-th chunk is microbatch ``i`` of its copy (copy 1's are numbered ``m/2 + i``).

Backward: split instances run DualPipe's zero-bubble steps as ``I`` and a deferred ``W``
(``enable_zb``), the others as fused ``B``; a fused instance runs ``B`` everywhere. Overlap: when
the instance gives ``d_FB`` (``--d-fb``, ``durations."F&B"``), each overlapped chunk
(``_forward_backward_chunk``) is one ``F&B`` op (MODEL.md, third round), else its forward then
its backward. The middle GPUs' first main-step pair is not overlapped (DualPipe's note).

Structure (tested in tests/test_dualpipe.py): valid for every even ``P <= 8`` and even
``2P <= m``; GPU ``r`` and GPU ``P-1-r`` run mirrored orders (copies swapped); the timing equals
DualPipeV's on ``P/2`` GPUs with ``m/2`` microbatches (the "cut-in-half"); peak ``P + 1``
activations on every GPU (the DualPipe README's figure).

>>> from schedules import Instance, simulate
>>> r = simulate(dualpipe(Instance(P=4, m=8, directions=2, b_I=1, b_W=1)))
>>> r.valid, r.peak_memory
(True, [5, 5, 5, 5])
"""

from __future__ import annotations

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .common import require
from .dualpipev import rank_order


def dualpipe(inst: Instance) -> Schedule:
    """The bidirectional DualPipe schedule of ``inst`` (``directions = 2``, ``P`` even,
    ``m >= 2P``); ``F&B`` ops iff ``inst.d_FB`` is given (module docstring)."""
    require(inst.directions == 2, "dualpipe",
            "needs directions=2 (--directions 2: two copies, microbatches from both ends)")
    P, m = inst.P, inst.m
    require(P % 2 == 0, "dualpipe", f"needs an even number of GPUs P, got P={P}")
    require(m >= 2 * P, "dualpipe", f"needs m >= 2P = {2 * P} microbatches, got m={m}")
    overlap = inst.d_FB is not None
    half = m // 2
    orders, overlaps = [], []
    for r in range(P):
        h = min(r, P - 1 - r)
        second = r >= P // 2
        # (stage, first microbatch number) of each phase: copy 0 is stage r, copy 1 stage P-1-r
        copy0, copy1 = (r, 0), (P - 1 - r, half)
        phase = (copy1, copy0) if second else (copy0, copy1)
        tokens, joined = rank_order(P // 2, half, h, overlap, inst.split)
        orders.append(tuple(Op(phase[ph][0], kind, phase[ph][1] + i) for ph, kind, i in tokens))
        overlaps.append(tuple(joined))
    return Schedule(inst, tuple(orders), "dualpipe", overlaps=tuple(overlaps) if overlap else None)
