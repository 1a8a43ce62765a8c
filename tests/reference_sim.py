"""An independent reference simulator, written from MODEL.md only (not from schedules/simulate.py).

It exists so that property tests can check the production simulator against a second,
deliberately naive computation:

* the op graph has one node per listed op and two kinds of arcs: the precedences of MODEL.md
  (*Precedence*) and, on every GPU, each op to the next one in that GPU's order;
* a plain Kahn topological sort either orders every node (then ASAP times are the longest
  paths, computed with :class:`fractions.Fraction`) or leaves some nodes unordered: a cycle,
  i.e. a deadlock;
* peak memory is an event sweep over the timed live intervals ``[start(store), end(release))``
  of MODEL.md (*Resources*), releases before stores at equal times (half-open intervals);
* per-stage durations (MODEL.md, *Extensions*): each op lasts its stage's duration, read with
  ``Instance.duration_of``; the delay ``c`` sits on every precedence arc between two GPUs;
* memory in bytes (MODEL.md, *Extensions*), when the instance has a ``memory`` model: a second
  timed event sweep, ``+a_s`` at the start of the storing op, ``-a_s`` at the end of ``B``,
  ``-(a_s - g_s)`` at the end of ``I``, ``-g_s`` at the end of ``W``, each op's transient from
  its start to its end, on top of ``M_p``;
* backward rematerialization (split form): an ``R`` listed after its pair's ``I`` on the same
  GPU follows ``I`` and precedes ``W``; the pair's first live interval ends with ``I`` (all
  ``a_s`` bytes freed) and the recompute stores again (``g_s`` bytes) until ``W`` ends.

* overlapped ``F&B`` ops (MODEL.md, third-round extensions; ``Schedule.overlaps``): the two
  listed parts are *one* node of the graph, lasting ``d_FB`` (``d_FI`` when the backward part
  is an ``I``) of the forward part's stage, or the sum of the parts when the instance gives
  none; every precedence of either part is an arc of that node (an arc inside it is a cycle);
  the forward part's store and the backward part's release both happen at the node's end.

* two directions (MODEL.md, *Directions*): nothing to do: every arc above is by stage index,
  whatever the copy, and an op's GPU is the order it is listed in (``c`` between two GPUs).

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
    peak_bytes: Optional[list] = None   # bytes sweep (memory model, not deadlocked)


def op_keys(schedule) -> dict:
    """``{(gpu, position): (stage, kind, microbatch)}``; an ``R`` listed after its pair's ``I`` on
    the same GPU is the backward recompute (MODEL.md, *Extensions*), kind ``"Rw"``."""
    keys = {}
    for p, seq in enumerate(schedule.orders):
        after_i = set()
        for i, op in enumerate(seq):
            pair = (op.stage, op.microbatch)
            kind = "Rw" if op.kind == "R" and pair in after_i else op.kind
            if op.kind == "I":
                after_i.add(pair)
            keys[(p, i)] = (op.stage, kind, op.microbatch)
    return keys


def precedence_arcs(schedule):
    """``[(u, v)]`` over op keys ``(stage, kind, microbatch)``: u must end before v starts."""
    inst = schedule.instance
    present = set(op_keys(schedule).values())
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
            if (s, "Rw", j) in present:
                arcs.append(((s, "Rw", j), me))
        if kind == "R":
            arcs.append(((s, "F", j), me))
        if kind == "Rw":
            arcs.append(((s, "I", j), me))
    return arcs


def groups(schedule) -> dict:
    """``{(gpu, position): node}``: the graph node of every listed op, ``(gpu, position)`` of
    the op itself, or of the first of the two listed parts of an ``F&B`` op."""
    node = {}
    for p, seq in enumerate(schedule.orders):
        joined = set(schedule.overlaps[p]) if schedule.overlaps else set()
        for i in range(len(seq)):
            node[(p, i)] = (p, i - 1) if (i - 1) in joined else (p, i)
    return node


def _overlap_duration(inst, fwd, bwd) -> Fraction:
    given = inst.d_FB if bwd.kind == "B" else inst.d_FI
    if given is None:
        return Fraction(inst.duration_of("F", fwd.stage) + inst.duration_of(bwd.kind, bwd.stage))
    return Fraction(given[fwd.stage] if isinstance(given, tuple) else given)


def reference_simulate(schedule) -> ReferenceResult:
    inst = schedule.instance
    where = {}
    dur = {}
    keys = op_keys(schedule)
    node = groups(schedule)
    for p, seq in enumerate(schedule.orders):
        for i, op in enumerate(seq):
            where[keys[(p, i)]] = node[(p, i)]
            if node[(p, i)] == (p, i):
                dur[(p, i)] = Fraction(inst.duration_of(op.kind, op.stage))
            else:  # second part of an F&B op: the node lasts the overlapped duration
                dur[node[(p, i)]] = _overlap_duration(inst, op, seq[i - 1])
    succ = {n: [] for n in dur}
    indeg = {n: 0 for n in dur}
    lag = {}
    for u, v in precedence_arcs(schedule):
        a, z = where[u], where[v]
        succ[a].append(z)
        indeg[z] += 1
        lag[(a, z)] = max(lag.get((a, z), Fraction(0)),
                          Fraction(inst.c) if a[0] != z[0] else Fraction(0))
    for p, seq in enumerate(schedule.orders):
        chain = sorted({node[(p, i)] for i in range(len(seq))})
        for a, z in zip(chain, chain[1:]):
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
    busy = [sum((d for n, d in dur.items() if n[0] == p), Fraction(0))
            for p in range(len(schedule.orders))]
    if done < len(dur):
        return ReferenceResult(True, None, None, busy, None, order_peak)
    times = {k: (start[n], end[n]) for k, n in node.items()}
    makespan = max((e for _, e in times.values()), default=Fraction(0))
    peak_bytes = _sweep_bytes(schedule, times) if inst.memory is not None else None
    return ReferenceResult(False, makespan, times, busy, _sweep_peak(schedule, times), order_peak,
                           peak_bytes)


def _sweep_bytes(schedule, times):
    """Peak bytes per GPU from the timed events (see the module docstring)."""
    mm = schedule.instance.memory
    keys = op_keys(schedule)
    peaks = []
    for p, seq in enumerate(schedule.orders):
        pairs = {}
        for i in range(len(seq)):
            s, kind, j = keys[(p, i)]
            pairs.setdefault((s, j), {})[kind] = i
        events = []
        late = _late_stores(schedule, p)
        for (s, _), ks in pairs.items():
            a, g = mm.stored(s), mm.kept(s)
            store = ks.get("R", ks.get("F"))
            if store is not None:
                events.append((times[(p, store)][1 if store in late else 0], a))
            if "B" in ks:
                events.append((times[(p, ks["B"])][1], -a))
            if "I" in ks:
                events.append((times[(p, ks["I"])][1], -a if "Rw" in ks else -(a - g)))
            if "Rw" in ks:
                events.append((times[(p, ks["Rw"])][0], g))
            if "W" in ks:
                events.append((times[(p, ks["W"])][1], -g))
        for i, op in enumerate(seq):  # an F&B op holds both parts' transients while it runs
            t = mm.transient_of(op.kind, op.stage)
            events.append((times[(p, i)][0], t))
            events.append((times[(p, i)][1], -t))
        events.sort()  # at equal times frees (negative) come first: half-open intervals
        level = peak = mm.static_of(p)
        for _, d in events:
            level += d
            peak = max(peak, level)
        peaks.append(peak)
    return peaks


def _store_release(schedule):
    """Per GPU: the live intervals as ``[(storing position, releasing position or None)]``
    (MODEL.md, *Resources*; a backward recompute adds a second interval ``[R, W]`` and the
    first one then ends at ``I``)."""
    keys = op_keys(schedule)
    out = []
    for p, seq in enumerate(schedule.orders):
        kinds = {}
        for i in range(len(seq)):
            s, kind, j = keys[(p, i)]
            kinds.setdefault((s, j), {})[kind] = i
        intervals = []
        for pair, ks in kinds.items():
            store = ks.get("R", ks.get("F"))
            if "Rw" in ks:
                intervals.append((store, ks.get("I")))
                intervals.append((ks["Rw"], ks.get("W")))
            elif store is not None:
                intervals.append((store, ks.get("W", ks.get("B"))))
        out.append(intervals)
    return out


def _late_stores(schedule, p) -> set:
    """Positions of GPU ``p`` that are the forward part of an ``F&B`` op (stores at its end)."""
    node = groups(schedule)
    return {i for (q, i), n in node.items() if q == p and n != (q, i)}


def _sweep_peak(schedule, times):
    peaks = []
    for p, intervals in enumerate(_store_release(schedule)):
        events = []
        late = _late_stores(schedule, p)
        for i, r in intervals:
            events.append((times[(p, i)][1 if i in late else 0], 1))
            if r is not None:
                events.append((times[(p, r)][1], -1))
        events.sort()  # at equal times -1 sorts before +1: half-open intervals
        live = peak = 0
        for _, d in events:
            live += d
            peak = max(peak, live)
        peaks.append(peak)
    return peaks


def _order_peak(schedule):
    """Live count walking each GPU's ops: a plain op stores at its start, releases at its end;
    an ``F&B`` op (both listed parts) holds the count it found while it runs, then applies its
    stores and releases together at its end."""
    node = groups(schedule)
    peaks = []
    for p, intervals in enumerate(_store_release(schedule)):
        stores_at = [node[(p, i)] for i, _ in intervals]
        releases_at = [node[(p, r)] for _, r in intervals if r is not None]
        live = peak = 0
        for n in sorted({node[(p, i)] for i in range(len(schedule.orders[p]))}):
            overlapped = node.get((p, n[1] + 1)) == n
            if overlapped:
                peak = max(peak, live)
                live += stores_at.count(n) - releases_at.count(n)
                peak = max(peak, live)
            else:
                live += stores_at.count(n)
                peak = max(peak, live)
                live -= releases_at.count(n)
        peaks.append(peak)
    return peaks


# ------------------------------------------------------------------ exhaustive optimum
def _gpu_orders(inst, p, recomputed, K, limit=None):
    """Every order of GPU ``p``'s ops that respects the same-GPU precedences and ``K``."""
    from schedules import Op

    S = inst.S
    ops = []
    for s in inst.stages_of(p):
        for j in range(inst.m):
            ops.append(Op(s, "F", j))
            if (s, j) in recomputed:
                ops.append(Op(s, "R", j))
            if inst.split:
                ops += [Op(s, "I", j), Op(s, "W", j)]
            else:
                ops.append(Op(s, "B", j))
    grad = "I" if inst.split else "B"
    preds = {}
    for op in ops:
        s, j, k = op.stage, op.microbatch, op.kind
        pr = []
        if k == "F" and s > 0 and inst.gpu(s - 1) == p:
            pr.append(Op(s - 1, "F", j))
        if k == "R":
            pr.append(Op(s, "F", j))
        if k == grad:
            pr.append(Op(s, "F", j))
            if (s, j) in recomputed:
                pr.append(Op(s, "R", j))
            if s + 1 < S and inst.gpu(s + 1) == p:
                pr.append(Op(s + 1, grad, j))
        if k == "W":
            pr.append(Op(s, "I", j))
        preds[op] = pr
    stores = {op for op in ops if op.kind == "R"
              or (op.kind == "F" and (op.stage, op.microbatch) not in recomputed)}
    releases = {op for op in ops if op.kind == ("W" if inst.split else "B")}
    # microbatches are interchangeable: relabel so that stage 0 runs its forwards in order
    for j in range(1, inst.m):
        if inst.gpu(0) == p:
            preds[Op(0, "F", j)].append(Op(0, "F", j - 1))
    out = []
    seq, placed = [], set()

    def dfs(live):
        if len(seq) == len(ops):
            out.append(tuple(seq))
            if limit is not None and len(out) > limit:
                raise ValueError(f"GPU {p} alone has more than {limit} orders")
            return
        for op in ops:
            if op in placed or any(x not in placed for x in preds[op]):
                continue
            now = live + (op in stores)
            if K is not None and now > K:
                continue
            placed.add(op)
            seq.append(op)
            dfs(now - (op in releases))
            seq.pop()
            placed.discard(op)

    dfs(0)
    return out


def reference_optimum(inst, limit: int = 200_000):
    """``(OPT, schedule)`` by exhaustive enumeration of per-GPU orders (tiny instances only).

    Enumerates, per GPU, every order respecting the same-GPU precedences and ``K`` for every
    choice of recomputed pairs, then every combination across GPUs, timed by the simulator.
    Three reductions, all exact: on split instances only the split form is tried (``B`` is
    ``I`` then ``W`` at the same place, never better); recomputation is tried only when ``K``
    can bind (``K < v*m``): dropping an ``R`` never lengthens a longest path; and stage 0 runs
    its forwards in microbatch order (microbatches are identical: any schedule relabelled).
    Raises ``ValueError`` when more than ``limit`` combinations would be needed.
    """
    from itertools import combinations, product

    from schedules import Schedule, simulate

    K = inst.K
    remat = K is not None and K < inst.v * inst.m
    per_gpu = []
    for p in range(inst.P):
        pairs = [(s, j) for s in inst.stages_of(p) for j in range(inst.m)]
        orders = []
        choices = [()]
        if remat:
            choices = [c for r in range(len(pairs) + 1) for c in combinations(pairs, r)]
        for rec in choices:
            orders += _gpu_orders(inst, p, set(rec), K, limit)
            if len(orders) > limit:
                raise ValueError(f"GPU {p} alone has more than {limit} orders")
        per_gpu.append(orders)
    total = 1
    for o in per_gpu:
        total *= len(o)
    if total > limit:
        raise ValueError(f"{total} combinations exceed the limit {limit}")
    best = None
    for combo in product(*per_gpu):
        res = simulate(Schedule(inst, combo))
        if res.valid and (best is None or res.makespan < best[0]):
            best = (res.makespan, res.schedule)
    return best
