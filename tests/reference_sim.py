"""An independent reference simulator, written from MODEL.md only (not from schedules/simulate.py).

It exists so that property tests can check the production simulator against a second,
deliberately naive computation:

* the op graph has one node per listed op and two kinds of arcs: the precedences of MODEL.md
  (*Precedence*) and, on every GPU, each op to the next one in that GPU's order;
* a plain Kahn topological sort either orders every node (then ASAP times are the longest
  paths, computed with :class:`fractions.Fraction`) or leaves some nodes unordered: a cycle,
  i.e. a deadlock;
* peak memory is an event sweep over the timed live intervals ``[start(store), end(release))``
  of MODEL.md (*Resources*), releases before stores at equal times (half-open intervals).

It assumes the orders are structurally valid (every op once, right GPU, ...); the structural
rules are the validator's business and are tested separately.

>>> from schedules import Instance, Schedule
>>> inst = Instance(P=2, m=1, f=1, b=2)
>>> r = reference_simulate(Schedule.from_strings(inst, {0: ["0F0", "0B0"], 1: ["1F0", "1B0"]}))
>>> r.deadlock, r.makespan, r.peak
(False, Fraction(6, 1), [1, 1])
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional


@dataclass(frozen=True)
class ReferenceResult:
    """``times``: {(gpu, position): (start, end)}; None entries when ``deadlock``."""

    deadlock: bool
    makespan: Optional[Fraction]
    times: Optional[dict]
    busy: list
    peak: Optional[list]          # from the timed event sweep (None when deadlocked)
    order_peak: list              # live count by walking each GPU's order (timing-free)


def _key(op):
    return (op.stage, op.kind, op.microbatch)


def precedence_arcs(schedule):
    """``[(u, v)]`` over op keys ``(stage, kind, microbatch)``: u must end before v starts."""
    inst = schedule.instance
    present = {_key(op) for _, op in schedule.ops()}
    S = inst.S
    arcs = []

    def grad(s, j):  # the input-gradient op of (j, s)
        return (s, "I", j) if (s, "I", j) in present else (s, "B", j)

    for (s, kind, j) in present:
        me = (s, kind, j)
        if kind == "F" and s > 0:
            arcs.append(((s - 1, "F", j), me))
        if kind in ("B", "I"):
            if s == S - 1:
                arcs.append(((s, "F", j), me))
            else:
                arcs.append((grad(s + 1, j), me))
            if (s, "R", j) in present:
                arcs.append(((s, "R", j), me))
        if kind == "W":
            arcs.append(((s, "I", j), me))
        if kind == "R":
            arcs.append(((s, "F", j), me))
    return arcs


def reference_simulate(schedule) -> ReferenceResult:
    inst = schedule.instance
    where = {}
    dur = {}
    for p, seq in enumerate(schedule.orders):
        for i, op in enumerate(seq):
            where[_key(op)] = (p, i)
            d = inst.f if op.kind in "FR" else inst.b if op.kind == "B" else \
                inst.b_I if op.kind == "I" else inst.b_W
            dur[(p, i)] = Fraction(d)
    succ = {node: [] for node in dur}
    indeg = {node: 0 for node in dur}
    lag = {}
    for u, v in precedence_arcs(schedule):
        a, z = where[u], where[v]
        succ[a].append(z)
        indeg[z] += 1
        lag[(a, z)] = Fraction(inst.c) if a[0] != z[0] else Fraction(0)
    for p, seq in enumerate(schedule.orders):
        for i in range(1, len(seq)):
            a, z = (p, i - 1), (p, i)
            succ[a].append(z)
            indeg[z] += 1
            lag[(a, z)] = max(lag.get((a, z), Fraction(0)), Fraction(0))
    # Kahn
    ready = deque(n for n, d in indeg.items() if d == 0)
    start = {n: Fraction(0) for n in dur}
    end = {}
    done = 0
    while ready:
        n = ready.popleft()
        end[n] = start[n] + dur[n]
        done += 1
        for z in succ[n]:
            t = end[n] + lag[(n, z)]
            if t > start[z]:
                start[z] = t
            indeg[z] -= 1
            if indeg[z] == 0:
                ready.append(z)
    order_peak = _order_peak(schedule)
    busy = [sum((dur[(p, i)] for i in range(len(seq))), Fraction(0))
            for p, seq in enumerate(schedule.orders)]
    if done < len(dur):
        return ReferenceResult(True, None, None, busy, None, order_peak)
    times = {n: (start[n], end[n]) for n in dur}
    makespan = max((e for _, e in times.values()), default=Fraction(0))
    return ReferenceResult(False, makespan, times, busy, _sweep_peak(schedule, times), order_peak)


def _store_release(schedule):
    """Per GPU: {pair: storing position}, {pair: releasing position} (MODEL.md, *Resources*)."""
    out = []
    for seq in schedule.orders:
        kinds = {}
        for i, op in enumerate(seq):
            kinds.setdefault((op.stage, op.microbatch), {})[op.kind] = i
        store, release = {}, {}
        for pair, ks in kinds.items():
            if "R" in ks:
                store[pair] = ks["R"]
            elif "F" in ks:
                store[pair] = ks["F"]
            if "W" in ks:
                release[pair] = ks["W"]
            elif "B" in ks:
                release[pair] = ks["B"]
        out.append((store, release))
    return out


def _sweep_peak(schedule, times):
    peaks = []
    for p, (store, release) in enumerate(_store_release(schedule)):
        events = []
        for pair, i in store.items():
            events.append((times[(p, i)][0], 1))
            if pair in release:
                events.append((times[(p, release[pair])][1], -1))
        events.sort()  # at equal times -1 sorts before +1: half-open intervals
        live = peak = 0
        for _, d in events:
            live += d
            peak = max(peak, live)
        peaks.append(peak)
    return peaks


def _order_peak(schedule):
    peaks = []
    for p, (store, release) in enumerate(_store_release(schedule)):
        stores_at = set(store.values())
        releases_at = set(release.values())
        live = peak = 0
        for i in range(len(schedule.orders[p])):
            if i in stores_at:
                live += 1
            peak = max(peak, live)
            if i in releases_at:
                live -= 1
        peaks.append(peak)
    return peaks
