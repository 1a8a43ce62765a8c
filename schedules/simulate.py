"""Exact ASAP simulation of per-GPU orders (MODEL.md, *Orders, timing, makespan*).

ASAP timing: each op starts at the later of the end of the previous op on its GPU and the ends
of its predecessors (plus ``c`` when a predecessor runs on another GPU):

* ``F(j,s)`` after ``F(j,s-1)``; the first backward op of ``(j,S-1)`` after ``F(j,S-1)``;
* the input-gradient op (``B`` or ``I``) of ``(j,s)`` after that of ``(j,s+1)``;
* ``W(j,s)`` after ``I(j,s)``; ``R(j,s)`` after ``F(j,s)`` and before the backward of ``(j,s)``.

The orders are feasible iff this timing exists (no deadlock) and no GPU ever holds more than
``K`` live activations. Activation ``(j,s)`` is live from the start of its storing op (``R`` if
the pair is recomputed, else ``F``) to the end of its releasing op (``B``, or ``W`` when split);
on one GPU these events follow the op order, so the live count during the ``i``-th op is
``stores(ops <= i) - releases(ops < i)``, a property of the orders alone.

Implementation: one topological pass (Kahn's algorithm over the per-GPU sequences with a
waiter list per blocking op), integer times in units of ``1/instance.unit``; no Fraction is
touched per op. Results that are compared (makespan, busy time) are exact Fractions.

>>> from schedules import Instance, Schedule, simulate
>>> inst = Instance(P=2, m=1, f=1, b=2)
>>> r = simulate(Schedule.from_strings(inst, {0: ["0F0", "0B0"], 1: ["1F0", "1B0"]}))
>>> r.makespan, r.peak_memory
(Fraction(6, 1), [1, 1])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from fractions import Fraction
from typing import Optional

import numpy as np

from .compiled import B, F, I, R, W, Compiled, compile_schedule, durations_in_units
from .ops import KINDS, Op
from .instance import require
from .schedule import Schedule
from .validate import Violation, check_structure


@dataclass(frozen=True)
class SimulationResult:
    """Timing and memory of a schedule.

    ``valid`` is True iff ``violations`` is empty. Timing fields are None when the structure is
    invalid or the orders deadlock. ``start_units``/``end_units`` are flat integer arrays in units
    of ``1/unit`` over the ops in GPU order then position (GPU ``p``'s slice is
    ``offsets[p]:offsets[p+1]``); :attr:`start`/:attr:`end` give them per GPU and
    :meth:`op_times` as exact Fractions.
    ``peak_memory`` is computed from the orders whenever the structure is valid.
    """

    schedule: Schedule
    violations: tuple[Violation, ...]
    makespan: Optional[Fraction] = None
    start_units: Optional[np.ndarray] = field(default=None, repr=False)
    end_units: Optional[np.ndarray] = field(default=None, repr=False)
    offsets: Optional[np.ndarray] = field(default=None, repr=False)
    unit: int = 1
    busy: Optional[list[Fraction]] = None
    peak_memory: Optional[list[int]] = None
    _live: Optional[list[np.ndarray]] = field(default=None, repr=False)

    @property
    def start(self) -> Optional[list[list[int]]]:
        """Start times per GPU (units of ``1/unit``), aligned with ``schedule.orders``."""
        return None if self.start_units is None else self._per_gpu(self.start_units)

    @property
    def end(self) -> Optional[list[list[int]]]:
        """End times per GPU (units of ``1/unit``), aligned with ``schedule.orders``."""
        return None if self.end_units is None else self._per_gpu(self.end_units)

    def _per_gpu(self, arr: np.ndarray) -> list[list[int]]:
        o = self.offsets
        return [arr[o[p]:o[p + 1]].tolist() for p in range(len(o) - 1)]

    @property
    def valid(self) -> bool:
        return not self.violations

    @property
    def errors(self) -> list[str]:
        return [str(v) for v in self.violations]

    @property
    def bubble_ratio(self) -> Optional[list[Fraction]]:
        """Per GPU ``1 - busy(p)/T`` (exact)."""
        if self.makespan is None:
            return None
        return [1 - busy / self.makespan for busy in self.busy]

    def op_times(self) -> dict[Op, tuple[Fraction, Fraction]]:
        """``{op: (start, end)}`` as exact Fractions."""
        if self.start is None:
            raise ValueError("the schedule has no timing (it is invalid)")
        u = self.unit
        return {op: (Fraction(s, u), Fraction(e, u))
                for (_, op), s, e in zip(self.schedule.ops(), self.start_units.tolist(),
                                         self.end_units.tolist())}

    @cached_property
    def _store_release(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`store_release` of the schedule, computed once for all GPUs' profiles."""
        return store_release(compile_schedule(self.schedule))

    def memory_profile(self, p: int) -> list[tuple[Fraction, int]]:
        """Step function of GPU ``p``'s live activations: ``[(time, count from then on), ...]``.

        The count rises at the start of a storing op and falls at the end of a releasing op.
        """
        if self.start is None:
            raise ValueError("the schedule has no timing (it is invalid)")
        seq = self.schedule.orders[p]
        lo = int(self.offsets[p])
        store_all, release_all = self._store_release
        store = store_all[lo:lo + len(seq)].tolist()
        release = release_all[lo:lo + len(seq)].tolist()
        starts = self.start_units[lo:lo + len(seq)].tolist()
        ends = self.end_units[lo:lo + len(seq)].tolist()
        events: dict[int, int] = {}
        for k in range(len(seq)):
            if store[k]:
                events[starts[k]] = events.get(starts[k], 0) + 1
            if release[k]:
                events[ends[k]] = events.get(ends[k], 0) - 1
        live, out = 0, [(Fraction(0), 0)]
        for t in sorted(events):
            live += events[t]
            out.append((Fraction(t, self.unit), live))
        return out


def _predecessors(c: Compiled) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pred1, pred2, lag1`` by position: the positions (in ``c``'s order) of the (at most two)
    predecessors of each listed op, ``n`` (a sentinel that is always finished) when there is none.

    pred1: the chain predecessor (previous forward, next stage's input-gradient op, ``F`` of a
    recompute, ``I`` of a ``W``); pred2: the recompute ``R(j,s)`` of a backward op, if any.
    lag1: the delay ``c`` (in units) when pred1 runs on another GPU. Needs a valid structure
    (every op a predecessor names is listed once).
    """
    inst = c.schedule.instance
    S, m = inst.S, inst.m
    size = S * m
    n = len(c.ids)
    pos = np.full(len(KINDS) * size + 1, n, dtype=np.int64)  # id -1 -> the sentinel n
    pos[c.ids] = np.arange(n, dtype=np.int64)
    kind, stage = c.kind, c.stage
    pair = stage * m + c.micro
    none = np.full(n, -1, dtype=np.int64)
    prev_f = np.where(stage > 0, F * size + pair - m, -1)           # F(j, s-1)
    nxt = pair + m                                                  # (j, s+1)
    nxt_grad = np.where(pos[np.minimum(I * size + nxt, len(pos) - 1)] < n, I * size + nxt,
                        B * size + nxt)
    grad_pred = np.where(stage < S - 1, nxt_grad, F * size + pair)  # backward's chain pred
    pred1 = np.select([kind == F, kind == R, kind == W, (kind == B) | (kind == I)],
                      [prev_f, F * size + pair, I * size + pair, grad_pred], none)
    pred2 = np.where((kind == B) | (kind == I), R * size + pair, -1)
    p1 = pos[pred1]
    p2 = pos[pred2]
    lag = np.zeros(n, dtype=np.int64)
    if inst.c:
        s2r = np.asarray(inst.stage_to_rank, dtype=np.int64)
        other = np.select([kind == F, (kind == B) | (kind == I)], [stage - 1, stage + 1], stage)
        other = np.clip(other, 0, S - 1)
        lag[(p1 < n) & (s2r[stage] != s2r[other])] = int(inst.c * inst.unit)
    return p1, p2, lag


def _timing(c: Compiled, dur_kind: list[int]):
    """Kahn's pass over the per-GPU sequences, by position.

    Returns ``(end, blocked)``: ``end`` the end time (units) of every op by position (-1 if
    never run); ``blocked`` the ``(gpu, position, [unfinished predecessor positions])`` where
    GPUs stopped (empty iff the orders are feasible).
    """
    P = c.schedule.instance.P
    n = len(c.ids)
    p1a, p2a, laga = _predecessors(c)
    pred1, pred2, lag1 = p1a.tolist(), p2a.tolist(), laga.tolist()
    dur = np.asarray(dur_kind, dtype=np.int64)[c.kind].tolist()
    end = [-1] * n + [0]  # end[n]: the sentinel "no predecessor", finished at 0
    wait = [-1] * (n + 1)  # the GPU stopped at an op waiting for this one (rarely a second:)
    more: dict[int, list[int]] = {}
    offs = c.offsets.tolist()
    ptr = offs[:-1]
    tfree = [0] * P
    stack = list(range(P))
    while stack:
        p = stack.pop()
        i = ptr[p]
        t = tfree[p]
        hi = offs[p + 1]
        while i < hi:
            ea = end[pred1[i]]
            eb = end[pred2[i]]
            if ea < 0 or eb < 0:
                a = pred1[i] if ea < 0 else pred2[i]
                if wait[a] < 0:
                    wait[a] = p
                else:
                    more.setdefault(a, []).append(p)
                break
            ea += lag1[i]
            if eb > ea:
                ea = eb
            if ea > t:
                t = ea
            t += dur[i]
            end[i] = t
            if wait[i] >= 0:
                stack.append(wait[i])
                if more and i in more:
                    stack.extend(more.pop(i))
            i += 1
        ptr[p] = i
        tfree[p] = t
    blocked = []
    for p in range(P):
        i = ptr[p]
        if i < offs[p + 1]:
            waits = [a for a in (pred1[i], pred2[i]) if a < n and end[a] < 0]
            blocked.append((p, i, waits))
    end.pop()
    return end, blocked


def store_release(c: Compiled) -> tuple[np.ndarray, np.ndarray]:
    """Per op (in ``c``'s order): does it store an activation, does it release one (MODEL.md).

    The storing op of ``(j,s)`` is ``R(j,s)`` if the pair is recomputed, else ``F(j,s)``; the
    releasing op is ``W(j,s)`` in split form, else ``B(j,s)``.
    """
    size = c.schedule.instance.S * c.schedule.instance.m
    has = np.zeros(len(KINDS) * size, dtype=bool)
    has[c.ids[c.ids >= 0]] = True
    pair = c.ids % size
    store = (c.kind == R) | ((c.kind == F) & ~has[R * size + pair])
    release = (c.kind == W) | ((c.kind == B) & ~has[W * size + pair])
    return store, release


def _memory(c: Compiled) -> tuple[list[int], list[np.ndarray]]:
    """Peak live activations per GPU and the live count during each op (by position)."""
    inst = c.schedule.instance
    store, release = store_release(c)
    peaks, lives = [], []
    for p in range(inst.P):
        lo, hi = c.offsets[p], c.offsets[p + 1]
        st = np.cumsum(store[lo:hi], dtype=np.int64)
        rl = np.cumsum(release[lo:hi], dtype=np.int64) - release[lo:hi]
        live = st - rl
        lives.append(live)
        peaks.append(int(live.max()) if len(live) else 0)
    return peaks, lives


def simulate(schedule: Schedule) -> SimulationResult:
    """Validate ``schedule`` and time it ASAP; see :class:`SimulationResult`.

    Violations of every rule in :mod:`schedules.validate` are collected; timing is computed
    whenever the structure is valid (a memory violation still has a timing, a deadlock has none).
    """
    require(schedule, Schedule, "schedule", "simulate")
    c = compile_schedule(schedule)
    violations = check_structure(c)
    inst = schedule.instance
    if violations:
        return SimulationResult(schedule, tuple(violations), unit=inst.unit)
    peaks, lives = _memory(c)
    if inst.K is not None:
        for p, live in enumerate(lives):
            over = np.flatnonzero(live > inst.K)
            if len(over):
                k = int(over[0])
                op = c.op_name(int(c.ids[c.offsets[p] + k]))
                violations.append(Violation(
                    "memory", f"GPU {p} holds {int(live[k])} live activations during {op}, "
                              f"above K={inst.K} (peak {peaks[p]})"))
    dur_kind = durations_in_units(schedule)
    end, blocked = _timing(c, dur_kind)
    if blocked:
        parts = []
        for p, o, waits in blocked:
            names = ", ".join(f"{c.op_name(int(c.ids[a]))} (GPU {int(c.gpu[a])})" for a in waits)
            parts.append(f"GPU {p} is blocked at {c.op_name(int(c.ids[o]))} waiting for {names}")
        violations.append(Violation(
            "deadlock", "the orders contradict the precedences: " + "; ".join(parts)))
        return SimulationResult(schedule, tuple(violations), unit=inst.unit, peak_memory=peaks,
                                _live=lives)
    end_units = np.asarray(end, dtype=np.int64)
    dur_units = np.asarray(dur_kind, dtype=np.int64)[c.kind]
    start_units = end_units - dur_units
    offs = c.offsets
    busy = [Fraction(int(dur_units[offs[p]:offs[p + 1]].sum()), inst.unit) for p in range(inst.P)]
    last = [int(end_units[offs[p + 1] - 1]) for p in range(inst.P) if offs[p + 1] > offs[p]]
    makespan = Fraction(max(last, default=0), inst.unit)
    return SimulationResult(schedule, tuple(violations), makespan, start_units, end_units, offs,
                            inst.unit, busy, peaks, lives)


def validate(schedule) -> list[Violation]:
    """Every violation of ``schedule`` (structure, then deadlock and memory); empty iff valid.
    (Here rather than in :mod:`schedules.validate`, which :func:`simulate` uses: no circle.)"""
    require(schedule, Schedule, "schedule", "validate")
    return list(simulate(schedule).violations)


def is_valid(schedule) -> bool:
    """True iff :func:`validate` finds nothing."""
    return not validate(schedule)
