"""Exact ASAP simulation of per-GPU orders (MODEL.md, *Orders, timing, makespan*).

ASAP timing: each op starts at the later of the end of the previous op on its GPU and the ends
of its predecessors (plus ``c`` when a predecessor runs on another GPU):

* ``F(j,s)`` after ``F(j,s-1)``; the first backward op of ``(j,S-1)`` after ``F(j,S-1)``;
* the input-gradient op (``B`` or ``I``) of ``(j,s)`` after that of ``(j,s+1)``;
* ``W(j,s)`` after ``I(j,s)``; ``R(j,s)`` after ``F(j,s)`` and before the backward of ``(j,s)``;
* with the third remat option, ``RI(j,s)`` after the backward ``R(j,s)`` and before ``W(j,s)``.

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

from .compiled import (B, F, I, KIND_LETTERS, NK, R, RI, RW, W, Compiled, busy_durations,
                       compile_schedule, durations_in_units, expected_gpus, op_durations)
from .instance import require
from .ops import Op
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
    ``peak_memory`` is computed from the orders whenever the structure is valid; so is
    ``peak_bytes`` (exact, one per GPU) when the instance has a memory model in bytes
    (:class:`schedules.memory.MemoryModel`; None otherwise), and a GPU above its ``budget`` is a
    ``memory`` violation.
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
    peak_bytes: Optional[list[Fraction]] = None

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
        late = set(i + 1 for i in self.schedule.overlap_starts(p))  # F&B: stores at its end
        for k in range(len(seq)):
            if store[k]:
                at = ends[k] if k in late else starts[k]
                events[at] = events.get(at, 0) + 1
            if release[k]:
                events[ends[k]] = events.get(ends[k], 0) - 1
        live, out = 0, [(Fraction(0), 0)]
        for t in sorted(events):
            live += events[t]
            out.append((Fraction(t, self.unit), live))
        return out


    def memory_profile_bytes(self, p: int) -> list[tuple[Fraction, Fraction]]:
        """Step function of GPU ``p``'s memory in bytes (needs ``instance.memory``):
        ``[(time, bytes from then on), ...]`` starting at ``(0, M_p)``. Stored bytes rise at
        the start of a storing op, freed bytes fall at the end of ``B``/``I``/``W``, and the
        op kind's transient is held from the start to the end of each op."""
        if self.start is None:
            raise ValueError("the schedule has no timing (it is invalid)")
        mm = self.schedule.instance.memory
        if mm is None:
            raise ValueError("the instance has no memory model in bytes")
        c = compile_schedule(self.schedule)
        stored, freed, trans, u = byte_events(c)
        lo, hi = int(self.offsets[p]), int(self.offsets[p + 1])
        events: dict[int, Fraction] = {}
        late = set(lo + i + 1 for i in self.schedule.overlap_starts(p))  # F&B: stores at its end
        for k in range(lo, hi):
            t0, t1 = int(self.start_units[k]), int(self.end_units[k])
            ts = t1 if k in late else t0
            events[ts] = events.get(ts, 0) + Fraction(int(stored[k]), u)
            events[t0] = events.get(t0, 0) + Fraction(int(trans[k]), u)
            events[t1] = events.get(t1, 0) - Fraction(int(freed[k]) + int(trans[k]), u)
        level = mm.static_of(p)
        out = [(Fraction(0), level)]
        for t in sorted(events):
            if not events[t]:
                continue
            level += events[t]
            if t == 0:
                out[0] = (Fraction(0), level)
            else:
                out.append((Fraction(t, self.unit), level))
        return out

    def __repr__(self) -> str:
        from .brief import brief_repr

        return brief_repr("SimulationResult", valid=self.valid, makespan=self.makespan,
                          peak_memory=self.peak_memory, errors=len(self.errors))

def _predecessors(c: Compiled) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pred1, pred2, lag1`` over op ids (int64 arrays): the (at most two) predecessors of
    each op id, -1 for none.

    pred1: the chain predecessor (previous forward, next stage's input-gradient op, ``F`` of a
    recompute, ``I`` of a ``W``); pred2: the recompute ``R(j,s)`` of a backward op, if any.
    lag1: the delay ``c`` (in units) when pred1 runs on another GPU.
    """
    inst = c.schedule.instance
    S, m, nk = inst.S, inst.m, NK
    size = S * m
    has = np.zeros(nk * size, dtype=bool)
    has[c.ids] = True
    has = has.reshape(nk, S, m)
    base = np.arange(size, dtype=np.int64).reshape(S, m)  # s*m + j
    pred1 = np.full((nk, S, m), -1, dtype=np.int64)
    pred2 = np.full((nk, S, m), -1, dtype=np.int64)
    pred1[F, 1:] = F * size + base[:-1]
    pred1[R] = F * size + base
    pred1[W] = I * size + base
    pred1[RW] = I * size + base        # backward recompute: after I(j,s), before W(j,s)
    pred1[RI] = RW * size + base       # third option: RI(j,s) after that R, before W(j,s)
    pred2[W] = np.where(has[RI], RI * size + base, np.where(has[RW], RW * size + base, -1))
    # input-gradient op of (j, s+1): B if that pair is fused else I
    grad = np.where(has[I], I * size + base, B * size + base)
    for k in (B, I):
        pred1[k, :-1] = grad[1:]
        pred1[k, -1] = F * size + base[-1]
        pred2[k] = np.where(has[R], R * size + base, -1)
    pred1 = pred1.ravel()
    lag = np.zeros(nk * size, dtype=np.int64)
    if inst.c:
        stage_of = np.tile(np.repeat(np.arange(S), m), nk)
        # the GPU of each op id (two directions: by its microbatch's copy, MODEL.md)
        micro_of = np.tile(np.arange(m), nk * S) if inst.directions != 1 else stage_of
        home = expected_gpus(inst, stage_of, micro_of)
        cross = (pred1 >= 0) & (home != home[np.maximum(pred1, 0)])
        lag[cross] = int(inst.c * inst.unit)
    return pred1, pred2.ravel(), lag


def _timing(c: Compiled, table: np.ndarray) -> tuple[np.ndarray, list]:
    """Kahn's pass over the per-GPU sequences.

    Returns ``(end, blocked)``: ``end`` the end time (units) of every op, by position in ``c``
    (-1 if it never ran); ``blocked`` the ``(gpu, op id, [unfinished predecessors' op ids])``
    where GPUs stopped (empty iff the orders are feasible).

    The pass runs on *compact* ids (only the op kinds the schedule lists), and skips the delay
    and the recompute predecessor when the instance has none: the same arithmetic on fewer and
    shorter lists.
    """
    inst = c.schedule.instance
    P, m = inst.P, inst.m
    size = inst.S * m
    present = np.flatnonzero(np.bincount(c.kind, minlength=NK))
    slot = np.full(NK, -1, dtype=np.int64)
    slot[present] = np.arange(present.size)
    full = (present[:, None] * size + np.arange(size, dtype=np.int64)).ravel()

    def compact(ids: np.ndarray) -> np.ndarray:
        return np.where(ids >= 0, slot[np.maximum(ids, 0) // size] * size + ids % size, -1)

    p1, p2, lg = _predecessors(c)
    pred1 = compact(p1[full]).tolist()
    p2 = p2[full]
    pred2 = compact(p2).tolist() if (p2 >= 0).any() else None
    lg = lg[full]
    lag1 = lg.tolist() if lg.any() else None
    # op id (kind*S + s)*m + j lasts table[kind, s] (per-stage costs)
    dur: list[int] = np.repeat(table[present].ravel(), m).tolist()
    cids = compact(c.ids)
    if c.fused is not None and c.fused.any():
        return _timing_overlapped(c, cids, pred1, pred2, lag1, op_durations(c, table), full)
    end = [-1] * len(dur)
    # GPUs waiting for an op: a linked list per op (head[o], then nxt[gpu])
    head = [-1] * len(dur)
    nxt = [-1] * P
    ids_all = cids.tolist()
    offs = c.offsets.tolist()
    seqs = [ids_all[offs[p]:offs[p + 1]] for p in range(P)]
    ptr = [0] * P
    tfree = [0] * P
    stack = list(range(P))
    lagged, two = lag1 is not None, pred2 is not None
    while stack:
        p = stack.pop()
        seq = seqs[p]
        i = ptr[p]
        t = tfree[p]
        n = len(seq)
        while i < n:
            o = seq[i]
            a = pred1[o]
            if a >= 0:
                ea = end[a]
                if ea < 0:
                    nxt[p] = head[a]
                    head[a] = p
                    break
                if lagged:
                    ea += lag1[o]  # type: ignore[index]
                if ea > t:
                    t = ea
                if two:
                    a = pred2[o]  # type: ignore[index]
                    if a >= 0:
                        ea = end[a]
                        if ea < 0:
                            nxt[p] = head[a]
                            head[a] = p
                            break
                        if ea > t:
                            t = ea
            t += dur[o]
            end[o] = t
            i += 1
            w = head[o]
            while w >= 0:
                stack.append(w)
                w = nxt[w]
        ptr[p] = i
        tfree[p] = t
    blocked = []
    for p in range(P):
        if ptr[p] < len(seqs[p]):
            o = seqs[p][ptr[p]]
            waits = [a for a in (pred1[o], pred2[o] if pred2 is not None else -1)
                     if a >= 0 and end[a] < 0]
            blocked.append((p, int(full[o]), [int(full[a]) for a in waits]))
    return np.asarray(end, dtype=np.int64)[cids], blocked


def _timing_overlapped(c: Compiled, cids: np.ndarray, pred1: list, pred2, lag1, odur,
                       full: np.ndarray) -> tuple[np.ndarray, list]:
    """:func:`_timing` for orders with ``F&B`` ops (``c.fused``): the two positions of one such
    op start together, when the GPU is free and the predecessors of *both* parts have ended,
    and end together after the op's duration (MODEL.md, third-round extensions)."""
    P = c.schedule.instance.P
    offs = c.offsets.tolist()
    ids_all = cids.tolist()
    seqs = [ids_all[offs[p]:offs[p + 1]] for p in range(P)]
    fl = c.fused.tolist()
    dl = odur.tolist()
    joined = [fl[offs[p]:offs[p + 1]] for p in range(P)]
    durs = [dl[offs[p]:offs[p + 1]] for p in range(P)]
    end = [-1] * len(pred1)
    waiters: dict[int, list[int]] = {}
    ptr = [0] * P
    tfree = [0] * P
    stack = list(range(P))

    def preds(o):
        out = [(pred1[o], lag1[o] if lag1 is not None else 0)]
        if pred2 is not None:
            out.append((pred2[o], 0))
        return [(a, lag) for a, lag in out if a >= 0]

    while stack:
        p = stack.pop()
        seq, i, t = seqs[p], ptr[p], tfree[p]
        while i < len(seq):
            parts = seq[i:i + 2] if joined[p][i] else seq[i:i + 1]
            waiting = next((a for o in parts for a, _ in preds(o) if end[a] < 0), None)
            if waiting is not None:
                waiters.setdefault(waiting, []).append(p)
                break
            for o in parts:
                for a, lag in preds(o):
                    t = max(t, end[a] + lag)
            t += durs[p][i]
            for o in parts:
                end[o] = t
                stack.extend(waiters.pop(o, ()))
            i += len(parts)
        ptr[p], tfree[p] = i, t
    blocked = []
    for p in range(P):
        i = ptr[p]
        if i < len(seqs[p]):
            parts = seqs[p][i:i + 2] if joined[p][i] else seqs[p][i:i + 1]
            waits = [a for o in parts for a, _ in preds(o) if end[a] < 0]
            blocked.append((p, int(full[parts[0]]), [int(full[a]) for a in waits]))
    return np.asarray(end, dtype=np.int64)[cids], blocked


def store_release(c: Compiled) -> tuple[np.ndarray, np.ndarray]:
    """Per op (in ``c``'s order): does it store an activation, does it release one (MODEL.md).

    The storing op of ``(j,s)`` is ``R(j,s)`` if the pair is recomputed, else ``F(j,s)``; the
    releasing op is ``W(j,s)`` in split form, else ``B(j,s)``. With backward rematerialization
    (an ``R`` after ``I(j,s)``), ``I(j,s)`` releases and that ``R`` stores again until ``W``.
    """
    has, pair, size = _present(c)
    store = (c.kind == R) | (c.kind == RW) | ((c.kind == F) & ~has[R * size + pair])
    release = ((c.kind == W) | ((c.kind == B) & ~has[W * size + pair])
               | ((c.kind == I) & has[RW * size + pair]))
    return store, release


def _present(c: Compiled):
    """``(has, pair, size)``: which op ids are listed, each op's pair index ``s*m + j``."""
    size = c.schedule.instance.S * c.schedule.instance.m
    has = np.zeros(NK * size, dtype=bool)
    has[c.ids[c.ids >= 0]] = True
    return has, c.ids % size, size


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


def byte_events(c: Compiled) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Per op (in ``c``'s order), in units of ``1/unit`` bytes (MODEL.md, *memory in bytes*):
    ``(stored, freed, transient, unit)``. ``stored``: ``a_s`` for the storing op of a pair;
    ``freed`` (at the op's end): ``a_s`` for a fused ``B``, ``a_s - g_s`` for ``I``, ``g_s`` for
    ``W``; ``transient``: the op kind's transient bytes. Needs ``instance.memory``.
    An ``F&B`` op's transient is the sum of its parts', at its first (backward) position; its
    forward part stores at the op's end, which the order (backward part first) gives.
    Backward rematerialization: ``I`` frees ``a_s - d_s`` and the ``R`` after it stores
    ``g_s - d_s`` (the bytes ``W`` uses, less the gradients ``d_s`` it kept), ``W`` frees ``g_s``;
    with an ``RI`` (third option) ``I`` frees all ``a_s`` and the ``RI`` stores ``d_s``. The
    transient is the op's, by kind and stage (``transient_of(kind, s)``).
    """
    inst = c.schedule.instance
    mm = inst.memory
    u = mm.unit
    S = inst.S
    stage = np.minimum(c.stage, S - 1)
    a = np.asarray([int(x * u) for x in mm.activation], dtype=object)[stage]
    g = np.asarray([int(mm.kept(s) * u) for s in range(S)], dtype=object)[stage]
    d = np.asarray([int(mm.gradient(s) * u) for s in range(S)], dtype=object)[stage]
    store, release = store_release(c)
    has, pair, size = _present(c)
    back = has[RW * size + pair]
    third = has[RI * size + pair]
    stored = np.where(c.kind == RW, g - d, np.where(c.kind == RI, d, np.where(store, a, 0)))
    freed = np.where(c.kind == B, np.where(release, a, 0),
                     np.where(c.kind == I, np.where(third, a, np.where(back, a - d, a - g)),
                              np.where(c.kind == W, g, 0)))
    trans_table = np.asarray([[int(mm.transient_of(k, s) * u) for s in range(S)]
                              for k in KIND_LETTERS], dtype=object)
    trans = trans_table[c.kind, stage]
    if c.fused is not None and c.fused.any():
        # an F&B op holds both parts' transients while it runs (at its first position)
        k = np.flatnonzero(c.fused)
        trans[k] = trans[k] + trans[k + 1]
        trans[k + 1] = 0
    return stored, freed, trans, u


def _memory_bytes(c: Compiled) -> tuple[list[Fraction], list[np.ndarray], int]:
    """Peak bytes per GPU and the level (units of ``1/unit`` bytes) during each op, by position:
    ``M_p + stored(ops <= i) - freed(ops < i) + transient(i)``; an empty GPU holds ``M_p``."""
    inst = c.schedule.instance
    mm = inst.memory
    stored, freed, trans, u = byte_events(c)
    peaks, levels = [], []
    for p in range(inst.P):
        lo, hi = c.offsets[p], c.offsets[p + 1]
        static = int(mm.static_of(p) * u)
        st = np.cumsum(stored[lo:hi]) if hi > lo else np.zeros(0, dtype=object)
        fr = (np.cumsum(freed[lo:hi]) - freed[lo:hi]) if hi > lo else np.zeros(0, dtype=object)
        level = static + st - fr + trans[lo:hi]
        levels.append(level)
        peaks.append(Fraction(max(level.tolist(), default=static), u))
    return peaks, levels, u


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
                op = schedule.orders[p][k]
                violations.append(Violation(
                    "memory", f"GPU {p} holds {int(live[k])} live activations during {op}, "
                              f"above K={inst.K} (peak {peaks[p]})"))
    peak_bytes = None
    if inst.memory is not None:
        peak_bytes, levels, u = _memory_bytes(c)
        budget = inst.memory.budget
        if budget is not None:
            for p, level in enumerate(levels):
                over = [k for k, x in enumerate(level.tolist()) if Fraction(x, u) > budget]
                if over:
                    k = over[0]
                    violations.append(Violation(
                        "memory", f"GPU {p} holds {_exact(Fraction(level[k], u))} bytes during "
                                  f"{schedule.orders[p][k]}, above the budget {_exact(budget)} "
                                  f"(peak {_exact(peak_bytes[p])})"))
            for p, peak in enumerate(peak_bytes):
                if not len(levels[p]) and peak > budget:
                    violations.append(Violation(
                        "memory", f"GPU {p}'s static bytes {_exact(peak)} exceed the budget "
                                  f"{_exact(budget)}"))
    table = durations_in_units(schedule)
    end, blocked = _timing(c, table)
    if blocked:
        parts = []
        for p, o, waits in blocked:
            names = ", ".join(f"{c.op_name(a)} (GPU "
                              f"{inst.gpu_of((a // inst.m) % inst.S, a % inst.m)})"
                              for a in waits)
            parts.append(f"GPU {p} is blocked at {c.op_name(o)} waiting for {names}")
        violations.append(Violation(
            "deadlock", "the orders contradict the precedences: " + "; ".join(parts)))
        return SimulationResult(schedule, tuple(violations), unit=inst.unit, peak_memory=peaks,
                                _live=lives, peak_bytes=peak_bytes)
    end_units = end
    dur_units = op_durations(c, table)
    start_units = end_units - dur_units
    offs = c.offsets
    used = busy_durations(c, table)
    busy = [Fraction(int(used[offs[p]:offs[p + 1]].sum()), inst.unit) for p in range(inst.P)]
    last = [int(end_units[offs[p + 1] - 1]) for p in range(inst.P) if offs[p + 1] > offs[p]]
    makespan = Fraction(max(last, default=0), inst.unit)
    return SimulationResult(schedule, tuple(violations), makespan, start_units, end_units, offs,
                            inst.unit, busy, peaks, lives, peak_bytes)


def _exact(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def validate(schedule) -> list[Violation]:
    """Every violation of ``schedule`` (structure, then deadlock and memory); empty iff valid.
    (Here rather than in :mod:`schedules.validate`, which :func:`simulate` uses: no circle.)"""
    require(schedule, Schedule, "schedule", "validate")
    return list(simulate(schedule).violations)


def is_valid(schedule) -> bool:
    """True iff :func:`validate` finds nothing."""
    return not validate(schedule)

