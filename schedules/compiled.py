"""The integer form of a schedule that the validator and the simulator work on.

Every op ``kind(j, s)`` gets the id ``(kind_index * S + s) * m + j`` (``kind_index`` from
:data:`schedules.ops.KINDS`), so that per-op facts live in flat arrays of length ``5*S*m``.
Ops with a stage or microbatch out of range get id ``-1`` (the validator reports them).
Durations are integers in units of ``1/instance.unit``, so timing never touches a Fraction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ops import KIND_INDEX, KINDS
from .schedule import Schedule

F, B, I, W, R = (KIND_INDEX[k] for k in KINDS)


@dataclass(frozen=True)
class Compiled:
    """Flat arrays over the ops of a schedule, in GPU order then position."""

    schedule: Schedule
    gpu: np.ndarray        # GPU that runs the op (the order it is listed in)
    stage: np.ndarray
    kind: np.ndarray       # index into KINDS
    micro: np.ndarray
    ids: np.ndarray        # op id, or -1 when stage/microbatch is out of range
    offsets: np.ndarray    # ops of GPU p are [offsets[p], offsets[p+1])

    @property
    def n_ids(self) -> int:
        inst = self.schedule.instance
        return len(KINDS) * inst.S * inst.m

    def op_name(self, op_id: int) -> str:
        """Action string of an op id."""
        inst = self.schedule.instance
        j = op_id % inst.m
        rest = op_id // inst.m
        return f"{rest % inst.S}{KINDS[rest // inst.S]}{j}"


def compile_schedule(schedule: Schedule) -> Compiled:
    """Flatten ``schedule`` into :class:`Compiled` arrays (one pass over the ops)."""
    inst = schedule.instance
    S, m = inst.S, inst.m
    lengths = [len(seq) for seq in schedule.orders]
    total = sum(lengths)
    code = np.fromiter((op.code for seq in schedule.orders for op in seq), dtype=np.int64,
                       count=total)
    stage = code >> 35
    kind = (code >> 32) & 7
    micro = code & 0xFFFFFFFF
    gpu = np.repeat(np.arange(inst.P, dtype=np.int64), lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    ids = (kind * S + stage) * m + micro
    ids[(stage >= S) | (micro >= m)] = -1
    return Compiled(schedule, gpu, stage, kind, micro, ids, offsets)


def durations_in_units(schedule: Schedule) -> np.ndarray:
    """Integer duration of each op kind on each stage, shape ``(len(KINDS), S)``, in units of
    ``1/instance.unit`` (per-stage costs, MODEL.md *Extensions*; uniform rows when uniform).

    Kinds the instance has no duration for (``I``, ``W`` of a fused instance) get 0; the
    validator rejects such ops before timing.
    """
    inst = schedule.instance
    u = inst.unit
    out = np.zeros((len(KINDS), inst.S), dtype=np.int64)
    for k, kind in enumerate(KINDS):
        if kind in ("I", "W") and not inst.split:
            continue
        out[k] = [int(d * u) for d in inst.durations_of(kind)]
    return out


def op_durations(c: "Compiled", table: np.ndarray) -> np.ndarray:
    """Duration (units) of every listed op of ``c`` from a :func:`durations_in_units` table."""
    S = c.schedule.instance.S
    return table[c.kind, np.minimum(c.stage, S - 1)]
