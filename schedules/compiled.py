"""The integer form of a schedule that the validator and the simulator work on.

Every op ``kind(j, s)`` gets the id ``(kind_index * S + s) * m + j`` (``kind_index`` from
:data:`schedules.ops.KINDS`, plus :data:`RW` below), so that per-op facts live in flat arrays of
length ``NK*S*m``.

Backward rematerialization (MODEL.md, *Extensions*, split form): an ``R(j,s)`` listed on its
GPU *after* ``I(j,s)`` is the recompute before ``W(j,s)``; it gets the internal kind index
:data:`RW` (written ``R`` like the other), so a pair may have one ``R`` of each kind.
Ops with a stage or microbatch out of range get id ``-1`` (the validator reports them).
Durations are integers in units of ``1/instance.unit``, so timing never touches a Fraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .ops import KIND_INDEX, KINDS
from .schedule import Schedule

F, B, I, W, R, RI = (KIND_INDEX[k] for k in KINDS)
RW = len(KINDS)
"""Internal kind index of a backward recompute (an ``R`` listed after the pair's ``I``)."""
NK = len(KINDS) + 1
"""Kind indices in op ids: ``F B I W R RI`` and :data:`RW`."""
KIND_LETTERS = KINDS + ("R",)
"""Action letter of each kind index (``RW`` prints as ``R``)."""


@dataclass(frozen=True)
class Compiled:
    """Flat arrays over the ops of a schedule, in GPU order then position."""

    schedule: Schedule
    gpu: np.ndarray        # GPU that runs the op (the order it is listed in)
    stage: np.ndarray
    kind: np.ndarray       # index into KIND_LETTERS (RW: backward recompute)
    micro: np.ndarray
    ids: np.ndarray        # op id, or -1 when stage/microbatch is out of range
    offsets: np.ndarray    # ops of GPU p are [offsets[p], offsets[p+1])
    fused: np.ndarray = None  # type: ignore[assignment]
    """True at the first position (the backward part) of every ``F&B`` op, whose second part
    (the forward) is the next position (:attr:`schedules.schedule.Schedule.overlaps`)."""

    @property
    def n_ids(self) -> int:
        inst = self.schedule.instance
        return NK * inst.S * inst.m

    def op_name(self, op_id: int) -> str:
        """Action string of an op id."""
        inst = self.schedule.instance
        j = op_id % inst.m
        rest = op_id // inst.m
        return f"{rest % inst.S}{KIND_LETTERS[rest // inst.S]}{j}"


def compile_schedule(schedule: Schedule) -> Compiled:
    """Flatten ``schedule`` into :class:`Compiled` arrays (one pass over the ops)."""
    inst = schedule.instance
    S, m = inst.S, inst.m
    code, lengths = schedule.packed()
    stage = code >> 35
    kind = (code >> 32) & 7
    micro = code & 0xFFFFFFFF
    gpu = np.repeat(np.arange(inst.P, dtype=np.int64), lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    bad = (stage >= S) | (micro >= m)
    if (kind == R).any() and (kind == I).any():
        _mark_backward_recomputes(kind, stage, micro, gpu, bad, S, m)
    ids = (kind * S + stage) * m + micro
    ids[bad] = -1
    fused = np.zeros(len(ids), dtype=bool)
    if schedule.overlaps is not None:
        for p, starts in enumerate(schedule.overlaps):
            fused[np.asarray(starts, dtype=np.int64) + offsets[p]] = True
    return Compiled(schedule, gpu, stage, kind, micro, ids, offsets, fused)


def expected_gpus(inst, stage: np.ndarray, micro: np.ndarray) -> np.ndarray:
    """The GPU that must run each op ``(stage, microbatch)`` (stages clipped into range):
    ``stage_to_rank[s]``, or with ``directions = 2`` (MODEL.md, *Directions*) ``P-1-s`` for a
    microbatch of copy 1 (``j >= m/2``)."""
    s2r = np.asarray(inst.stage_to_rank, dtype=np.int64)
    st = np.minimum(stage, inst.S - 1)
    if inst.directions == 1:
        return s2r[st]
    return np.where(2 * micro >= inst.m, inst.P - 1 - st, s2r[st])


def has_backward_recompute(schedule: Schedule) -> bool:
    """Whether ``schedule`` lists an ``R`` after its pair's ``I`` (a backward recompute,
    MODEL.md Extensions), or an ``RI`` (the third option, which comes with one): the bound of
    such a schedule is ``bounds.lower_bound(inst, backward_remat=True)`` (docs/theory.md A.11,
    *the third option*)."""
    kind = compile_schedule(schedule).kind
    return bool(((kind == RW) | (kind == RI)).any())


def _mark_backward_recomputes(kind, stage, micro, gpu, bad, S, m) -> None:
    """Give kind :data:`RW` to every ``R`` listed after its pair's ``I`` on the same GPU."""
    pair = np.where(bad, 0, stage * m + micro)
    first_i = np.full(S * m, -1, dtype=np.int64)
    at = np.flatnonzero((kind == I) & ~bad)
    first_i[pair[at][::-1]] = at[::-1]          # the first listed I of each pair
    rs = np.flatnonzero((kind == R) & ~bad)
    k_i = first_i[pair[rs]]
    back = (k_i >= 0) & (k_i < rs) & (gpu[np.maximum(k_i, 0)] == gpu[rs])
    kind[rs[back]] = RW


def durations_in_units(schedule: Schedule) -> np.ndarray:
    """Integer duration of each op kind on each stage, shape ``(NK, S)``, in units of
    ``1/instance.unit`` (per-stage costs, MODEL.md *Extensions*; uniform rows when uniform).

    Kinds the instance has no duration for (``I``, ``W``, ``RI`` of a fused instance) get 0; the
    validator rejects such ops before timing. The table depends on the instance only (a frozen
    dataclass of tuples, so hashable) and is kept for the last 32 instances (a search simulates
    thousands of schedules of one instance); it is read-only.
    """
    return _durations_table(schedule.instance)


@lru_cache(maxsize=32)
def _durations_table(inst) -> np.ndarray:
    u = inst.unit
    out = np.zeros((NK, inst.S), dtype=np.int64)
    for k, kind in enumerate(KIND_LETTERS):
        if kind in ("I", "W", "RI") and not inst.split:
            continue
        out[k] = [int(d * u) for d in inst.durations_of(kind)]
    out.flags.writeable = False
    return out


def op_durations(c: "Compiled", table: np.ndarray) -> np.ndarray:
    """Duration (units) of every listed op of ``c`` from a :func:`durations_in_units` table.

    Both positions of an ``F&B`` op get the op's duration (they start and end together;
    :func:`busy_durations` counts it once)."""
    S = c.schedule.instance.S
    out = table[c.kind, np.minimum(c.stage, S - 1)]
    if c.fused is not None and c.fused.any():
        for k in np.flatnonzero(c.fused).tolist():
            d = overlap_units(c, k)
            out[k] = out[k + 1] = d
    return out


def overlap_units(c: "Compiled", k: int) -> int:
    """Duration (units) of the ``F&B`` op whose backward part is at position ``k`` of ``c`` and
    forward part at ``k + 1`` (:meth:`schedules.instance.Instance.overlap_duration`); the sum
    of the parts' durations when the two positions are not a forward and a backward."""
    inst = c.schedule.instance
    S = inst.S
    kb, kf = int(c.kind[k]), int(c.kind[k + 1])
    sb, sf = min(int(c.stage[k]), S - 1), min(int(c.stage[k + 1]), S - 1)
    if kf == F and kb in (B, I) and (kb == B or inst.split):
        return int(inst.overlap_duration(sf, KIND_LETTERS[kb], sb) * inst.unit)
    table = durations_in_units(c.schedule)
    return int(table[kb, sb] + table[kf, sf])


def busy_durations(c: "Compiled", table: np.ndarray) -> np.ndarray:
    """:func:`op_durations` with the forward part of each ``F&B`` op at 0: the GPU time each
    position uses, so that a GPU's busy time is the sum over its positions."""
    out = op_durations(c, table)
    if c.fused is not None and c.fused.any():
        out[np.flatnonzero(c.fused) + 1] = 0
    return out
