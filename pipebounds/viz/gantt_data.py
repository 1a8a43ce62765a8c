"""What a Gantt chart shows, as arrays: shared by the static (matplotlib) and interactive (plotly)
charts, so both draw the same facts.

:func:`gantt_data` times a schedule (:func:`schedules.simulate.simulate`) and returns, per op
(in GPU order, then position): GPU, kind, stage, microbatch, start, end, the live activations on
its GPU right after it ends, and whether it *offends*, i.e. runs while its GPU holds more than
``K`` live activations (the ``memory`` rule of MODEL.md). A schedule whose only violations are
in its send/receive order (``comm_order``, ``comm_deadlock``) is timed by its op orders and keeps
those violations. A schedule whose op orders deadlock is drawn as far as it runs: each GPU's ops
up to the one it is blocked at (ASAP timing of that prefix), with ``blocked`` naming, per stuck
GPU, the op and the time from which it waits forever. A schedule with structural errors (missing
ops, wrong placement...) raises :class:`GanttError`: it is not a schedule of its instance.

Past a size the per-op picture is neither fast nor readable; :func:`busy_bands` aggregates it:
the busy fraction of each GPU, per op kind, in equal time bins (exact integrals of the per-GPU
busy indicator, so the bands sum to the GPU's busy time).

>>> from schedules import Instance
>>> from schedules.generators import generate
>>> d = gantt_data(generate("1f1b", Instance(P=2, m=2)))
>>> d.n_ops, d.makespan, d.mem_after.tolist()
(8, 9.0, [1, 2, 1, 0, 1, 0, 1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from fractions import Fraction

import numpy as np

from schedules.compiled import RW, compile_schedule
from schedules.ops import KINDS
from schedules.schedule import Schedule
from schedules.simulate import SimulationResult, simulate, store_release
from schedules.errors import InputError


class GanttError(InputError):
    """The schedule cannot be drawn (it is invalid: no timing exists)."""


@dataclass(frozen=True)
class GanttData:
    """Per-op arrays of a timed schedule (see the module docstring); times are floats in the
    schedule's time unit, ``start_exact``/``end_exact`` give them as exact Fractions."""

    schedule: Schedule
    result: SimulationResult
    gpu: np.ndarray
    kind: np.ndarray        # index into KINDS
    stage: np.ndarray
    micro: np.ndarray
    start: np.ndarray
    end: np.ndarray
    mem_after: np.ndarray   # live activations on the op's GPU right after it ends
    offending: np.ndarray   # bool: the op runs while its GPU holds more than K
    offsets: np.ndarray
    blocked: tuple = ()     # (gpu, action string, time) per GPU stuck in a deadlock
    fused: np.ndarray = None  # type: ignore[assignment]
    """bool per op: the first (backward) part of an ``F&B`` op, whose forward part is the next
    op; both parts share one time window and are drawn as the two halves of one bar."""

    @property
    def n_ops(self) -> int:
        return len(self.gpu)

    @property
    def makespan(self) -> float:
        return float(self.result.makespan)

    def start_exact(self, k: int) -> Fraction:
        return Fraction(int(self.result.start_units[k]), self.result.unit)

    def end_exact(self, k: int) -> Fraction:
        return Fraction(int(self.result.end_units[k]), self.result.unit)

    def op_name(self, k: int) -> str:
        return f"{self.stage[k]}{KINDS[self.kind[k]]}{self.micro[k]}"

    @cached_property
    def overlapped(self) -> np.ndarray:
        """bool per op: a part of an ``F&B`` op (either half)."""
        out = np.zeros(self.n_ops, bool)
        if self.fused is not None and self.fused.any():
            k = np.flatnonzero(self.fused)
            out[k] = out[k + 1] = True
        return out

    @cached_property
    def bar_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """``(centre, height)`` of each op's bar in GPU-row units: ``(gpu, 0.8)`` for an op, and
        for an ``F&B`` op its forward part on the upper half ``(gpu - 0.2, 0.4)`` and its
        backward part on the lower half ``(gpu + 0.2, 0.4)`` (rows grow downward)."""
        centre = self.gpu.astype(float)
        height = np.full(self.n_ops, 0.8)
        if self.fused is not None and self.fused.any():
            k = np.flatnonzero(self.fused)
            centre[k] += 0.2
            centre[k + 1] -= 0.2
            height[k] = height[k + 1] = 0.4
        return centre, height

    def _store_times(self, lo: int, hi: int) -> np.ndarray:
        """When each op of ``[lo, hi)`` would store: its start, or its end for the forward
        part of an ``F&B`` op (both parts' memory effects happen at the op's end)."""
        out = self.start[lo:hi].copy()
        if self.fused is not None and self.fused.any():
            late = np.zeros(self.n_ops, bool)
            late[np.flatnonzero(self.fused) + 1] = True
            out[late[lo:hi]] = self.end[lo:hi][late[lo:hi]]
        return out

    def memory_steps(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        """Step function of GPU ``p``'s live activations: ``(times, counts)``, the count holding
        from each time to the next (a store counts at its op's start, a release at its op's end;
        at equal times the release comes first: intervals are half-open)."""
        lo, hi = self.offsets[p], self.offsets[p + 1]
        store, release = self._store_release
        st, rl = store[lo:hi], release[lo:hi]
        times = np.concatenate(([0.0], self._store_times(lo, hi)[st], self.end[lo:hi][rl]))
        delta = np.concatenate(([0], np.ones(int(st.sum()), np.int64),
                                -np.ones(int(rl.sum()), np.int64)))
        order = np.lexsort((delta, times))
        times, counts = times[order], np.cumsum(delta[order])
        last = np.append(times[1:] != times[:-1], True)  # keep the final count at each time
        return np.append(times[last], self.makespan), np.append(counts[last], counts[-1])

    @cached_property
    def _store_release(self):
        """Per op: stores an activation, releases one (computed once, for every GPU)."""
        return store_release(compile_schedule(self.schedule))

    def predecessors(self) -> list[list[int]]:
        """For each op, the ops it depends on (MODEL.md *Precedence*; not the previous op on
        its GPU), as op indices."""
        S = self.schedule.instance.S
        index = {(int(s), int(k), int(j)): i for i, (s, k, j) in
                 enumerate(zip(self.stage.tolist(), self.kind.tolist(), self.micro.tolist()))}
        F, B, I, W, R, RI = (KINDS.index(x) for x in KINDS)  # noqa: E741 (the op kinds)
        out = []
        for s, k, j in zip(self.stage.tolist(), self.kind.tolist(), self.micro.tolist()):
            cands = []
            if k == F and s > 0:
                cands = [(s - 1, F, j)]
            elif k in (B, I):
                cands = [(s, R, j)] + ([(s, F, j)] if s == S - 1 else [(s + 1, B, j), (s + 1, I, j)])
            elif k == W:
                cands = [(s, I, j), (s, RI, j)]
            elif k == RI:
                cands = [(s, R, j)]
            elif k == R:
                cands = [(s, F, j)]
            out.append([index[c] for c in cands if c in index])
        return out


def _letter_kinds(kind: np.ndarray) -> np.ndarray:
    """Compiled kinds as indices into ``KINDS``: a backward recompute (internal kind ``RW``) is
    drawn, named and counted as the ``R`` it is written as."""
    return np.where(kind == RW, KINDS.index("R"), kind)


def stage_waves(data: GanttData) -> np.ndarray:
    """Each op's wave on its GPU: 0 for the GPU's first stage, 1 for its second, ... (all 0 when
    ``v = 1``). The pictures and the HTML page shade later waves lighter with :func:`wave_alpha`.
    With ``directions = 2`` (MODEL.md) the "wave" is the microbatch's copy: copy 1 (the
    microbatches fed from GPU ``P-1``) is drawn lighter."""
    inst = data.schedule.instance
    if inst.directions == 2:
        return (2 * data.micro >= inst.m).astype(np.int64)
    if inst.v <= 1:
        return np.zeros(data.n_ops, np.int64)
    rank_of_stage = {s: i for p in range(inst.P) for i, s in enumerate(inst.stages_of(p))}
    return np.array([rank_of_stage[s] for s in data.stage.tolist()], np.int64)


def wave_alpha(w: int) -> float:
    """The opacity of an op of wave ``w``: 1 for the first, 0.3 lighter per wave, at least 0.45."""
    return 1.0 if w == 0 else max(0.45, 1.0 - 0.3 * int(w))


def gantt_data(schedule: Schedule) -> GanttData:
    """Time ``schedule`` and gather what a chart shows; :class:`GanttError` if it has no timing."""
    res = simulate(schedule)
    if res.start_units is None and schedule.comms is not None and \
            {v.rule for v in res.violations} <= {"comm_order", "comm_deadlock"}:
        timed = simulate(Schedule(schedule.instance, schedule.orders, schedule.source, None,
                                  schedule.overlaps))
        res = replace(timed, violations=res.violations + timed.violations)
    if res.start_units is None and res.violations and \
            {v.rule for v in res.violations} <= {"deadlock", "memory"}:
        return _deadlocked(schedule, res)
    if res.start_units is None:
        raise GanttError("cannot draw an invalid schedule, it has no timing: "
                         + "; ".join(res.errors[:3]))
    c = compile_schedule(schedule)
    mem_after, offending = _memory_marks(c)
    u = res.unit
    return GanttData(schedule, res, c.gpu, _letter_kinds(c.kind), c.stage, c.micro,
                     res.start_units / u, res.end_units / u, mem_after, offending, c.offsets,
                     fused=c.fused)


def _memory_marks(c) -> tuple[np.ndarray, np.ndarray]:
    """Per op: live activations on its GPU right after it, and whether it runs above ``K``."""
    store, release = store_release(c)
    K = c.schedule.instance.K
    mem_after = np.zeros(len(c.ids), np.int64)
    offending = np.zeros(len(c.ids), bool)
    for p in range(c.schedule.instance.P):
        lo, hi = c.offsets[p], c.offsets[p + 1]
        during = np.cumsum(store[lo:hi], dtype=np.int64) - (
            np.cumsum(release[lo:hi], dtype=np.int64) - release[lo:hi])
        mem_after[lo:hi] = during - release[lo:hi]
        if K is not None:
            offending[lo:hi] = during > K
    if c.fused is not None and c.fused.any():  # an F&B op: one state after both parts
        k = np.flatnonzero(c.fused)
        mem_after[k] = mem_after[k + 1]
    return mem_after, offending


def _deadlocked(schedule: Schedule, res: SimulationResult) -> GanttData:
    """The prefix of each GPU's order that runs before the deadlock, timed ASAP, and where each
    stuck GPU waits (see the module docstring)."""
    from schedules.compiled import durations_in_units, op_durations
    from schedules.simulate import _timing

    c = compile_schedule(schedule)
    dur_kind = durations_in_units(schedule)
    end, stuck = _timing(c, dur_kind)
    inst = schedule.instance
    ends = end
    prefix = []
    for p in range(inst.P):
        ran = ends[c.offsets[p]:c.offsets[p + 1]] >= 0
        prefix.append(int(ran.argmin()) if not ran.all() else int(len(ran)))
    overlaps = None
    if schedule.overlaps is not None:  # an F&B op runs whole or not at all: cut between ops
        overlaps = tuple(tuple(i for i in schedule.overlaps[p] if i + 1 < k)
                         for p, k in enumerate(prefix))
    part = Schedule(inst, tuple(seq[:k] for seq, k in zip(schedule.orders, prefix)),
                    schedule.source, None, overlaps)
    pc = compile_schedule(part)
    end_units = np.concatenate([ends[c.offsets[p]:c.offsets[p] + k]
                                for p, k in enumerate(prefix)]).astype(np.int64)
    start_units = end_units - op_durations(pc, dur_kind)
    u = inst.unit
    last = [int(end_units[pc.offsets[p + 1] - 1]) for p in range(inst.P)
            if pc.offsets[p + 1] > pc.offsets[p]]
    timed = SimulationResult(part, res.violations, Fraction(max(last, default=0), u), start_units,
                             end_units, pc.offsets, u, None, res.peak_memory)
    mem_after, offending = _memory_marks(pc)
    blocked = tuple((p, c.op_name(o), float(end_units[pc.offsets[p + 1] - 1]) / u
                     if pc.offsets[p + 1] > pc.offsets[p] else 0.0) for p, o, _ in stuck)
    return GanttData(part, timed, pc.gpu, _letter_kinds(pc.kind), pc.stage, pc.micro, start_units / u,
                     end_units / u, mem_after, offending, pc.offsets, blocked, pc.fused)


def busy_bands(data: GanttData, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, frac)``: ``bins + 1`` equal time edges over ``[0, makespan]`` and ``frac[p, k, i]``,
    the fraction of bin ``i`` during which GPU ``p`` runs an op of kind ``KINDS[k]``."""
    P = data.schedule.instance.P
    T = data.makespan
    edges = np.linspace(0.0, T, bins + 1)
    width = T / bins if bins else 1.0
    frac = np.zeros((P, len(KINDS), bins))
    for p in range(P):
        lo, hi = data.offsets[p], data.offsets[p + 1]
        s, e, k = data.start[lo:hi].copy(), data.end[lo:hi].copy(), data.kind[lo:hi]
        if data.fused is not None and data.fused[lo:hi].any():
            # an F&B op counts half its window for each part: the GPU's busy time stays exact
            a = np.flatnonzero(data.fused[lo:hi])
            mid = (s[a] + e[a]) / 2
            e[a] = mid
            s[a + 1] = mid
        for ki in range(len(KINDS)):
            mask = k == ki
            if not mask.any():
                continue
            dur = np.where(mask, e - s, 0.0)
            cum_end = np.cumsum(dur)
            cum_start = cum_end - dur
            # busy time of this kind up to t is piecewise linear through these points (the ops of
            # one GPU are disjoint and in time order): rising over a masked op, flat elsewhere
            xs = np.empty(2 * len(s))
            ys = np.empty(2 * len(s))
            xs[0::2], xs[1::2] = s, e
            ys[0::2], ys[1::2] = cum_start, cum_end
            cum = np.interp(edges, xs, ys, left=0.0, right=float(cum_end[-1]))
            frac[p, ki] = np.diff(cum) / width
    return edges, frac
