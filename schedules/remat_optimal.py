"""Optimal rematerialization of a fixed order: :func:`optimal_remat` (docs/remat.md).

Paper 2 (REFERENCES.md) takes a schedule's per-GPU op orders as fixed and chooses, for every pair
``(j,s)``, what to keep and what to recompute. This module solves that problem *exactly* with
a CP-SAT model (OR-tools) and reports an honest status.

**Choice space.** The per-GPU order of the given non-``R`` ops is kept (``R`` ops already in the
input are dropped first, and counted in ``RematResult.dropped``). On GPU ``p`` let the base
order be ``o_0 .. o_{n-1}``; *gap* ``g`` is the place just before ``o_g``. Every pair chooses

* **keep**: ``F(j,s)`` stores the activation; or
* **forward recompute** in one gap ``g`` with ``pos F(j,s) < g <= pos G(j,s)`` (``G`` the
  input-gradient op ``B`` or ``I``): ``R(j,s)`` runs there and stores the activation
  (``positions="anywhere"``, the default); ``positions="adjacent"`` allows only
  ``g = pos G(j,s)``, the recompute immediately before its input gradient (the issue's and the
  paper's form, whose ILP adds the recompute time to the backward);
* with ``backward=True`` (split form; MODEL.md, *Backward rematerialization*), independently:
  **free after I** and recompute before ``W``: a second ``R(j,s)`` in one gap ``h`` with
  ``pos I(j,s) < h <= pos W(j,s)`` (``"adjacent"``: ``h = pos W``).

Several ``R`` ops in one gap run back to back in a canonical order (forward recomputes, then
backward ones, each by stage then microbatch): their order changes neither the timing nor the
peak (below), so the choice space is exactly the gap assignment.

**Exactness (theorem RM1).** For a fixed assignment ``y``:

1. *Memory is linear in y.* On one GPU the storing and releasing events follow the order
   (MODEL.md), so the memory during base op ``o_i`` is ``M_p + t(o_i) + sum`` over the GPU's
   pairs of their contribution at ``i``: a kept pair holds ``a_s`` on ``[pos F, pos G]``, a
   pair recomputed in gap ``g`` holds ``a_s`` on ``[g, pos G]``; in split form it holds
   ``g_s`` on ``[pos I + 1, pos W]``, or on ``[h, pos W]`` when recomputed in gap ``h``
   (a backward ``R`` stores the ``g_s`` bytes ``W`` needs; ``a_s = g_s = 1`` in the count
   model ``K``). So the contribution at ``i`` is the kept one minus ``a_s * sum_{g > i} y_g``
   (and ``g_s * sum_{h > i} y_h``), linear. Inside a gap ``g`` nothing is released and every
   ``R`` stores, so the memory during its ``R`` ops is largest at the last one: the stores of
   all ops before ``o_g`` (the gap's ``R`` ops included) minus the releases before ``o_g``,
   plus the ``R`` transient. Without transients this is at most the memory during ``o_g`` (which
   adds ``o_g``'s own store), so only the base positions need a constraint; with transients one
   constraint per gap is added, enforced when the gap holds an ``R``. The gap's internal order
   does not matter.
2. *Timing is a precedence graph without disjunctions.* An ``R`` op's predecessors (its ``F``,
   or its ``I``) are earlier on its own GPU and its successor (``G`` or ``W``) later, so an
   ``R`` only adds its duration to its GPU's sequence: ``start(o_i) >= end(o_{i-1}) + sum``
   of the durations of the ``R`` ops chosen in gap ``i``, plus the cross-op precedences of
   MODEL.md (with ``c``). Both are linear in ``y`` and the start times. The ASAP start times are
   the least solution of these difference constraints, so for fixed ``y`` the least ``T`` with
   ``T >= end(last op of every GPU)`` equals the ASAP makespan. Minimising over ``(y, starts)``
   therefore gives ``min_y`` ASAP makespan, exactly; times are integers in units of
   ``1/unit`` so integrality loses nothing.

**Span objective** (``objective="span"``, what the paper's ILP minimises): the maximum over GPUs
of the span ``end(last op of p) - start(first op of p)``, minimised over all timings that satisfy
the precedences (start times need not be ASAP, as in the paper's ILP), not the sum. The least
maximum of such a system is the largest ratio ``weight / k`` of a cycle through ``k <= P`` span
edges, a multiple of ``1/(unit * k)``: the model runs in units of ``1/(unit * lcm(1..P))`` so
that its integer optimum is the exact rational one. The returned schedule is the orders (its
makespan the ASAP one); ``RematResult.span`` is the optimal span value and
:func:`min_span` recomputes it independently (Bellman-Ford).

The output is checked before it is returned, twice and independently of the model: by
:func:`schedules.simulate.simulate` (valid, peak within the budget, makespan equal to the
model's; it reads an ``R`` after ``I`` as the backward recompute) and by :func:`evaluate`, this
module's direct order walk and ASAP pass, which must agree with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from math import gcd, lcm
from typing import Optional

from .deadline import Deadline
from .stopping import keep_sigint, solve_seconds, stop_requested, stoppable, watching
from .ops import Op
from .schedule import Schedule
from .remat import RematError

OBJECTIVES = ("makespan", "span")
POSITIONS = ("anywhere", "adjacent")
DEFAULT_TIME_LIMIT = 60.0
MODEL_GRACE = 1.0
"""Seconds past ``time_limit`` that building the model may take before the answer is
``unknown`` (the limit is a wall-clock promise, model building included)."""
MIN_SOLVE_SECONDS = 0.1
"""The least time CP-SAT gets once the model is built (to turn the hint into a solution)."""
MAX_MODEL_INTEGER = 1 << 53
"""The largest integer a model's constant or horizon may reach (CP-SAT's are 64-bit; this keeps
sums of them, and their float images, exact)."""


# --------------------------------------------------------------------------- the data

@dataclass(frozen=True)
class MemorySpec:
    """Memory of the problem, integers: per-stage ``activation`` (``a_s``) and ``kept`` (``g_s``,
    held from the end of ``I`` to the end of ``W``), per-GPU ``static`` (``M_p``), per-kind
    ``transient`` (``F B I W R``), and ``budget``; ``scale`` is what the original numbers were
    multiplied by (1 for the count model ``K``). ``in_bytes`` says which model it is."""

    activation: tuple[int, ...]
    kept: tuple[int, ...]
    static: tuple[int, ...]
    transient: dict
    budget: int
    scale: int = 1
    in_bytes: bool = False
    requested: Optional[Fraction] = None
    """The byte budget as given (``budget`` may be lower: clamped to the most any GPU can hold)."""

    @classmethod
    def count(cls, S: int, P: int, K: int) -> "MemorySpec":
        """The activation count ``K`` (MODEL.md): one unit per activation, nothing else."""
        return cls((1,) * S, (1,) * S, (0,) * P, {k: 0 for k in "FBIWR"}, K)

    def value(self, x: int) -> Fraction:
        return Fraction(x, self.scale)


def _bytes_spec(inst, budget_bytes) -> MemorySpec:
    """The bytes model of ``inst.memory`` (:class:`schedules.memory.MemoryModel`; MODEL.md,
    *Memory in bytes*) with ``budget_bytes`` (or the model's own budget), scaled to integers."""
    from .instance import to_fraction

    mem = getattr(inst, "memory", None)
    if mem is None:
        raise RematError("a byte budget needs a memory model in the instance (the orders "
                         "document's 'memory' object with per-stage 'activation' bytes)")
    S, P = inst.S, inst.P
    act = [mem.stored(s) for s in range(S)]
    kept = [mem.kept(s) for s in range(S)]
    static = [mem.static_of(p) for p in range(P)]
    trans = {k: mem.transient_of(k) for k in "FBIWR"}
    budget = budget_bytes if budget_bytes is not None else mem.budget
    if budget is None:
        raise RematError("no memory budget: give --budget-bytes or memory.budget")
    budget = to_fraction(budget, "budget")
    if budget < 0:
        raise RematError(f"the byte budget must be >= 0, got {budget}")
    # The most a GPU can ever hold: its static bytes, every activation and kept gradient of its
    # stages for every microbatch, and the largest transient. A budget above it constrains
    # nothing, so clamping it there is exact (and keeps 2^62 or 40-digit budgets out of CP-SAT's
    # 64-bit integers).
    most = max(static[p] + inst.m * sum(act[s] + kept[s] for s in inst.stages_of(p))
               + max(trans.values(), default=0) for p in range(P))
    requested = budget
    budget = min(budget, most)
    nums = act + kept + static + list(trans.values()) + [budget]
    scale = lcm(*(x.denominator for x in nums))
    ints = [int(x * scale) for x in nums]
    g = gcd(*ints) or 1  # a common factor of every byte count (e.g. all in KiB) changes nothing
    scale = Fraction(scale, g)
    top = max(int(most * scale), 1)
    if top > MAX_MODEL_INTEGER:
        raise RematError(f"the byte counts are too large for the exact solver: a GPU may hold "
                         f"{top} units of {1 / scale} bytes, above {MAX_MODEL_INTEGER} (2^53); "
                         f"give the memory model in larger units (KiB, MiB)")

    def i(x):
        return int(x * scale)

    return MemorySpec(tuple(map(i, act)), tuple(map(i, kept)), tuple(map(i, static)),
                      {k: i(x) for k, x in trans.items()}, i(budget), scale, True, requested)


def _integer_bound(raw: float) -> int:
    """CP-SAT's proven bound on an integer objective as an integer: ``ceil`` (a float within
    1e-6 of an integer is that integer, never truncated one below it)."""
    import math

    near = round(raw)
    return int(near) if abs(raw - near) <= 1e-6 else math.ceil(raw)


def _check_time_scale(base: Schedule, tscale: int, span_obj: bool) -> None:
    """RematError unless every time of the model (its horizon: all durations, every possible
    recompute and every delay, in units of ``1/tscale``) fits CP-SAT's integers with room."""
    inst = base.instance
    f = max(inst.durations_of("F"))
    d = max(max(inst.durations_of(k)) for k in (("F", "B", "I", "W") if inst.split else ("F", "B")))
    horizon = (sum(1 for _ in base.ops()) * d + inst.S * inst.m * (f + 2 * inst.c)) * tscale
    if horizon > MAX_MODEL_INTEGER:
        what = (f"the span objective's time unit 1/(unit·lcm(1..P)) at P = {inst.P}" if span_obj
                else "the time unit of the durations")
        raise RematError(f"the model's times are too large for the exact solver: {what} gives a "
                         f"horizon of {int(horizon)} units, above {MAX_MODEL_INTEGER} (2^53)"
                         + ("; use --objective makespan" if span_obj else ""))


def _durations(inst, kind: str) -> list[Fraction]:
    """Per-stage durations of ``kind`` (uniform instances repeat the one number)."""
    per = getattr(inst, "durations_of", None)
    if per is not None:
        return list(per(kind))
    return [inst.duration(kind)] * inst.S


@dataclass(frozen=True)
class RematResult:
    """Outcome of :func:`optimal_remat`.

    ``status``: ``optimal`` (proven by CP-SAT), ``feasible`` (best found, not proven),
    ``infeasible`` (proven: no recompute choice fits the budget in this order), ``unknown``.
    ``makespan``: ASAP makespan of ``schedule`` (the orders with their ``R`` ops);
    ``span``: the objective value for ``objective="span"`` (max per-GPU span under the best
    timing), else None; ``lower_bound``: a proven lower bound on the objective over the choice
    space (equal to the objective value when optimal). ``recomputed``: the forward ``R`` ops;
    ``backward_recomputed``: the ``R`` ops between an ``I`` and its ``W``. ``peak``: peak memory
    per GPU (count, or bytes as exact Fractions). ``dropped``: ``R`` ops of the input removed
    before optimizing.
    """

    status: str
    objective: str
    schedule: Optional[Schedule]
    makespan: Optional[Fraction]
    lower_bound: Fraction
    span: Optional[Fraction] = None
    recomputed: tuple[Op, ...] = ()
    backward_recomputed: tuple[Op, ...] = ()
    peak: Optional[list] = None
    seconds: float = 0.0
    dropped: int = 0
    positions: str = "anywhere"
    backward: bool = False
    stats: dict = field(default_factory=dict, compare=False)

    @property
    def value(self) -> Optional[Fraction]:
        """The objective value (makespan or span)."""
        return self.span if self.objective == "span" else self.makespan

    def __repr__(self) -> str:
        from .brief import brief_repr

        return brief_repr("RematResult", status=self.status, objective=self.objective,
                          value=self.value, lower_bound=self.lower_bound,
                          recomputed=len(self.recomputed) + len(self.backward_recomputed),
                          peak=self.peak)

@dataclass(frozen=True)
class MemoryFloor:
    """The least activation count a fixed order needs (count model), and where it is reached.

    ``K``: the least ``K`` for which :func:`optimal_remat` of the order is not ``infeasible``;
    ``gpu`` and ``op``: the first base op where it is reached; ``deferred``: how many of those
    activations belong to pairs whose input gradient ``I`` ran and whose ``W`` has not
    (without backward recomputes they stay live until ``W``).
    """

    K: int
    gpu: int
    op: Op
    deferred: int


def memory_floor(schedule: Schedule, backward: bool = False) -> MemoryFloor:
    """The least ``K`` that some recompute choice of this fixed order fits (count model).

    Every pair can recompute right before its input gradient ``G`` (``B`` or ``I``), so at base
    position ``i`` of a GPU only these activations are unavoidable (RM1's memory, every pair
    recomputed as late as possible): the pairs whose ``G`` is at ``i``, and in split form the
    pairs with ``pos I < i <= pos W`` (without ``backward``; with it, only the pair whose ``W``
    is at ``i``). The floor is the largest count, at least 1; ``optimal_remat(K)`` is
    infeasible exactly when ``K`` is below it (no transients in the count model).
    """
    base, pairs, _ = _base(schedule)
    best = None
    for p, seq in enumerate(base.orders):
        live = [0] * len(seq)
        deferred = [0] * len(seq)
        for pr in pairs:
            if pr.p != p:
                continue
            live[pr.beta] += 1
            if pr.split:
                if backward:
                    live[pr.rho] += 1
                else:
                    for i in range(pr.beta + 1, pr.rho + 1):
                        live[i] += 1
                        deferred[i] += 1
        for i, n in enumerate(live):
            if best is None or n > best.K:
                best = MemoryFloor(n, p, seq[i], deferred[i])
    if best is None or best.K < 1:
        return MemoryFloor(1, 0, base.orders[0][0], 0)
    return best


# ------------------------------------------------------------------ the base order

@dataclass(frozen=True)
class _Pair:
    s: int
    j: int
    p: int
    phi: int            # position of F
    beta: int           # position of the input-gradient op (B or I)
    rho: int            # position of the releasing op (B, or W)
    split: bool


def _base(schedule: Schedule):
    """The order without ``R`` ops, checked to be complete and deadlock-free."""
    from .simulate import simulate

    orders = tuple(tuple(op for op in seq if op.kind != "R") for seq in schedule.orders)
    dropped = sum(1 for _, op in schedule.ops() if op.kind == "R")
    inst = schedule.instance
    model = getattr(inst, "memory", None)
    free = inst.with_(K=None, memory=None if model is None else replace(model, budget=None))
    base = Schedule(free, orders, schedule.source)
    res = simulate(base)
    if not res.valid:
        raise RematError("the base order (R ops removed) is not a valid schedule: "
                         + "; ".join(res.errors[:3]))
    pairs = []
    for p, seq in enumerate(orders):
        pos = {(op.kind, op.stage, op.microbatch): i for i, op in enumerate(seq)}
        for (kind, s, j), i in pos.items():
            if kind != "F":
                continue
            if ("B", s, j) in pos:
                b = pos[("B", s, j)]
                pairs.append(_Pair(s, j, p, i, b, b, False))
            else:
                pairs.append(_Pair(s, j, p, i, pos[("I", s, j)], pos[("W", s, j)], True))
    return base, pairs, dropped


def _choices(pairs, positions: str, backward: bool):
    """Candidate ``R`` placements: ``(pair index, "f"|"b", gap)``."""
    out = []
    for k, pr in enumerate(pairs):
        lo = pr.beta if positions == "adjacent" else pr.phi + 1
        out += [(k, "f", g) for g in range(lo, pr.beta + 1)]
        if backward and pr.split:
            lo = pr.rho if positions == "adjacent" else pr.beta + 1
            out += [(k, "b", h) for h in range(lo, pr.rho + 1)]
    return out


# -------------------------------------------------------- independent evaluation

def build_orders(base: Schedule, pairs, chosen) -> tuple[tuple[Op, ...], ...]:
    """The base orders with the ``R`` ops of ``chosen`` (``(pair index, kind, gap)``) inserted,
    in the canonical order inside a gap."""
    gaps: dict[tuple[int, int], list] = {}
    for k, kind, g in chosen:
        pr = pairs[k]
        gaps.setdefault((pr.p, g), []).append((kind != "f", pr.s, pr.j))
    out = []
    for p, seq in enumerate(base.orders):
        new = []
        for i, op in enumerate(seq):
            for _, s, j in sorted(gaps.get((p, i), ())):
                new.append(Op(s, "R", j))
            new.append(op)
        out.append(tuple(new))
    return tuple(out)


def evaluate(schedule: Schedule, memory: MemorySpec, span: bool = False):
    """``(makespan, peak per GPU in memory units, min span or None)`` of orders that may hold a
    backward ``R`` (between ``I`` and ``W``), by a direct walk: memory event by event in each
    GPU's order, ASAP timing by repeated passes. Raises RematError on a deadlock or misplaced
    ``R``. Independent of the CP-SAT model and of the simulator (a second check of both)."""
    inst = schedule.instance
    unit = inst.unit
    dur = {k: [int(x * unit) for x in _durations(inst, k)] for k in
           (("F", "B", "I", "W") if inst.split else ("F", "B"))}
    dur["R"] = dur["F"]
    lag = int(inst.c * unit)
    peaks = []
    for p, seq in enumerate(schedule.orders):
        first: dict = {}
        for i, op in enumerate(seq):
            first.setdefault((op.kind, op.stage, op.microbatch), i)
        live = 0
        peak = memory.static[p]
        for i, op in enumerate(seq):
            pair = (op.stage, op.microbatch)
            a, g = memory.activation[op.stage], memory.kept[op.stage]
            i_pos = first.get(("I", op.stage, op.microbatch))
            r_pos = [k for k, o in enumerate(seq) if o.kind == "R" and (o.stage, o.microbatch) == pair]
            g_pos = first.get(("B", op.stage, op.microbatch), i_pos)
            if g_pos is None or any(k < first.get(("F",) + pair, -1) for k in r_pos):
                raise RematError(f"{op}: R before its F, or a pair without backward")
            fwd_r = any(k < g_pos for k in r_pos)
            bwd_r = i_pos is not None and any(k > i_pos for k in r_pos)
            if op.kind == "F" and not fwd_r:
                live += a
            elif op.kind == "R":
                live += g if (i_pos is not None and i > i_pos) else a
            peak = max(peak, memory.static[p] + live + memory.transient.get(op.kind, 0))
            if op.kind == "B":
                live -= a
            elif op.kind == "I":
                live -= a
                if not bwd_r:
                    live += g
            elif op.kind == "W":
                live -= g
        peaks.append(peak)
    # ASAP timing: op -> end, GPUs advanced while possible
    S = inst.S
    end: dict[tuple, int] = {}
    ptr = [0] * inst.P
    tfree = [0] * inst.P
    grad = {}
    for seq in schedule.orders:
        for op in seq:
            if op.kind in ("B", "I"):
                grad[(op.stage, op.microbatch)] = op.kind
    nR: dict = {}
    progress = True
    starts: dict = {}
    while progress:
        progress = False
        for p, seq in enumerate(schedule.orders):
            while ptr[p] < len(seq):
                op = seq[ptr[p]]
                s, j = op.stage, op.microbatch
                preds = []
                if op.kind == "F" and s > 0:
                    preds.append((("F", s - 1, j), inst.gpu(s - 1) != p))
                if op.kind in ("B", "I"):
                    if s == S - 1:
                        preds.append((("F", s, j), False))
                    else:
                        preds.append(((grad[(s + 1, j)], s + 1, j), inst.gpu(s + 1) != p))
                if op.kind == "W":
                    preds.append((("I", s, j), False))
                if op.kind == "R":
                    preds.append((("F", s, j), False))
                t = tfree[p]
                ok = True
                for key, cross in preds:
                    if key not in end:
                        ok = False
                        break
                    t = max(t, end[key] + (lag if cross else 0))
                if not ok:
                    break
                key = (op.kind, s, j)
                if op.kind == "R":
                    nR[(s, j)] = nR.get((s, j), 0) + 1
                    key = ("R", s, j, nR[(s, j)])
                starts[key] = t
                t += dur[op.kind][s]
                end[key] = t
                tfree[p] = t
                ptr[p] += 1
                progress = True
    if any(ptr[p] < len(seq) for p, seq in enumerate(schedule.orders)):
        raise RematError("the orders deadlock")
    makespan = Fraction(max(tfree), unit)
    return makespan, peaks, (min_span(schedule) if span else None)


def min_span(schedule: Schedule) -> Fraction:
    """The least over all timings (precedences and orders respected, starts not necessarily
    ASAP) of the largest per-GPU span ``end(last op) - start(first op)``: binary search on the
    span with a Bellman-Ford feasibility test of the difference constraints, in units of
    ``1/(unit * lcm(1..P))`` where the optimum is an integer (module docstring)."""
    inst = schedule.instance
    scale = inst.unit * lcm(*range(1, inst.P + 1))
    dur = {k: [int(x * scale) for x in _durations(inst, k)] for k in
           (("F", "B", "I", "W") if inst.split else ("F", "B"))}
    dur["R"] = dur["F"]
    lag = int(inst.c * scale)
    nodes: dict = {}
    edges = []  # (u, v, w): start(v) >= start(u) + w
    keys = []
    for p, seq in enumerate(schedule.orders):
        cnt: dict = {}
        for op in seq:
            key = (op.kind, op.stage, op.microbatch)
            if op.kind == "R":
                cnt[key] = cnt.get(key, 0) + 1
                key = key + (cnt[key],)
            nodes[key] = len(nodes)
            keys.append((key, p, op))
    grad = {(op.stage, op.microbatch): op.kind for _, op in schedule.ops() if op.kind in "BI"}
    S = inst.S
    for p, seq in enumerate(schedule.orders):
        prev = None
        for key, q, op in keys:
            if q != p:
                continue
            d = dur[op.kind][op.stage]
            if prev is not None:
                edges.append((nodes[prev[0]], nodes[key], prev[1]))
            prev = (key, d)
            s, j = op.stage, op.microbatch
            if op.kind == "F" and s > 0:
                edges.append((nodes[("F", s - 1, j)], nodes[key],
                              dur["F"][s - 1] + (lag if inst.gpu(s - 1) != p else 0)))
            if op.kind in "BI":
                if s == S - 1:
                    edges.append((nodes[("F", s, j)], nodes[key], dur["F"][s]))
                else:
                    gk = grad[(s + 1, j)]
                    edges.append((nodes[(gk, s + 1, j)], nodes[key],
                                  dur[gk][s + 1] + (lag if inst.gpu(s + 1) != p else 0)))
    firsts, lasts = [], []
    for p, seq in enumerate(schedule.orders):
        if seq:
            ks = [k for k, q, _ in keys if q == p]
            firsts.append(nodes[ks[0]])
            lasts.append((nodes[ks[-1]], dur[seq[-1].kind][seq[-1].stage]))
    n = len(nodes)

    def feasible(T: int) -> bool:
        es = edges + [(last, first, d - T) for first, (last, d) in zip(firsts, lasts)]
        dist = [0] * n
        for _ in range(n + 1):
            changed = False
            for u, v, w in es:
                if dist[u] + w > dist[v]:
                    dist[v] = dist[u] + w
                    changed = True
            if not changed:
                return True
        return False

    lo, hi = 0, sum(dur[op.kind][op.stage] for _, op in schedule.ops()) + lag * n
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid + 1
    return Fraction(lo, scale)


# ------------------------------------------------------------------- the model

def _ortools():
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RematError("optimal_remat needs OR-tools: pip install ortools "
                         "(or the project's 'solver' extra)") from exc
    return cp_model


def optimal_remat(schedule: Schedule, K: Optional[int] = None, budget_bytes=None,
                  backward: bool = False, objective: str = "makespan",
                  positions: str = "anywhere", time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
                  workers: int = 1, hint: Optional[Schedule] = None,
                  catch_sigint: bool = True) -> RematResult:
    """The best recompute choices for the fixed order of ``schedule`` (module docstring).

    Memory: ``K`` (activations per GPU; default the instance's ``K``), or ``budget_bytes`` with
    the instance's bytes model (MODEL.md, *Memory in bytes*). ``backward``: also allow freeing
    after ``I`` and recomputing before ``W`` (split form). ``objective``: ``makespan`` or
    ``span`` (the largest per-GPU span). ``positions``: ``anywhere`` or ``adjacent`` (see the
    choice space). ``hint``: a schedule with the same base order whose ``R`` placements start
    the search (by default :func:`schedules.remat.fit_memory`'s when it keeps the order).
    ``catch_sigint``: CP-SAT's own SIGINT handler during the solve (off when the caller has
    its own: after a solve with it on, a later SIGINT was seen to kill the process instead of
    reaching the caller's handler).
    """
    t0 = time.monotonic()
    if objective not in OBJECTIVES:
        raise RematError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if positions not in POSITIONS:
        raise RematError(f"positions must be one of {', '.join(POSITIONS)}, got {positions!r}")
    inst0 = schedule.instance
    if budget_bytes is not None and K is not None:
        raise RematError("give either K or budget_bytes, not both")
    if budget_bytes is None and getattr(inst0, "memory", None) is None or K is not None:
        K = inst0.K if K is None else K
        if K is None:
            raise RematError("no memory limit: give K (or budget_bytes with a memory model)")
        if isinstance(K, bool) or not isinstance(K, int) or K < 1:
            raise RematError(f"K must be a whole number >= 1, got {K!r}")
        mem = MemorySpec.count(inst0.S, inst0.P, K)
        # a bytes model, if any, is kept for measurement only (its budget is not the limit)
        model = getattr(inst0, "memory", None)
        inst = inst0.with_(K=K, memory=None if model is None else replace(model, budget=None))
    else:
        mem = _bytes_spec(inst0, budget_bytes)
        inst = inst0.with_(K=None, memory=replace(inst0.memory, budget=mem.requested))
    if backward and not inst.split:
        raise RematError("backward rematerialization needs the split form (I and W ops)")
    cp_model = _ortools()
    base, pairs, dropped = _base(schedule.with_instance(inst))
    base = base.with_instance(inst)
    choices = _choices(pairs, positions, backward)
    P = inst.P
    span_obj = objective == "span"
    tscale = inst.unit * (lcm(*range(1, P + 1)) if span_obj else 1)
    _check_time_scale(base, tscale, span_obj)
    dur = {k: [int(x * tscale) for x in _durations(inst, k)] for k in
           (("F", "B", "I", "W") if inst.split else ("F", "B"))}
    dur["R"] = dur["F"]
    lag = int(inst.c * tscale)
    horizon = sum(dur[op.kind][op.stage] for _, op in base.ops()) + sum(
        dur["R"][pairs[k].s] for k, _, _ in choices) + lag * 2 * len(pairs)

    model = cp_model.CpModel()

    def out_of_time() -> bool:  # past the limit by more than the grace: no answer in time
        return stop_requested() or (time_limit is not None
                                    and time.monotonic() - t0 > time_limit + MODEL_GRACE)

    def stopped() -> RematResult:  # no answer yet: the honest status, the trivial bound
        return RematResult("unknown", objective, None, None, Fraction(0), dropped=dropped,
                           positions=positions, backward=backward,
                           seconds=time.monotonic() - t0,
                           stats={"stopped": "while building the model"})
    y = [model.new_bool_var(f"y{k}{kind}{g}") for k, kind, g in choices]
    by_pair: dict[tuple[int, str], list[int]] = {}
    for c, (k, kind, _) in enumerate(choices):
        by_pair.setdefault((k, kind), []).append(c)
    for cs in by_pair.values():
        model.add_at_most_one(y[c] for c in cs)

    # memory, position by position (RM1, part 1)
    infeasible_const = False
    for p, seq in enumerate(base.orders):
        if out_of_time():  # model building stays within the time limit and signals
            return stopped()
        n = len(seq)
        const = [mem.static[p] + mem.transient.get(op.kind, 0) for op in seq]
        terms: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        gap_const = [mem.static[p] + mem.transient.get("R", 0)] * (n + 1)
        gap_terms: list[list[tuple[int, int]]] = [[] for _ in range(n + 1)]
        for k, pr in enumerate(pairs):
            if pr.p != p:
                continue
            a, g = mem.activation[pr.s], mem.kept[pr.s]
            for i in range(pr.phi, pr.beta + 1):
                const[i] += a
            for i in range(pr.phi + 1, pr.beta + 1):
                gap_const[i] += a  # stores before o_i: F kept, or R in a gap <= i
            if pr.split:
                for i in range(pr.beta + 1, pr.rho + 1):
                    const[i] += g
                    gap_const[i] += g  # after I (position beta): g_s held
        for c, (k, kind, g) in enumerate(choices):
            pr = pairs[k]
            if pr.p != p:
                continue
            if kind == "f":
                amt, lo, glo = mem.activation[pr.s], pr.phi, pr.phi + 1
            else:
                amt, lo, glo = mem.kept[pr.s], pr.beta + 1, pr.beta + 1
            for i in range(lo, g):       # not yet stored at positions before the gap
                terms[i].append((c, -amt))
            for i in range(glo, g):      # nor in the gaps before it
                gap_terms[i].append((c, -amt))
        for i in range(n):
            if terms[i]:
                model.add(sum(w * y[c] for c, w in terms[i]) <= mem.budget - const[i])
            elif const[i] > mem.budget:
                infeasible_const = True
        if mem.transient.get("R", 0) > 0:
            for gi in range(1, n + 1):
                here = [c for c, (k, _, g) in enumerate(choices) if g == gi and pairs[k].p == p]
                if not here:
                    continue
                z = model.new_bool_var(f"z{p}_{gi}")
                for c in here:
                    model.add_implication(y[c], z)
                model.add(sum(w * y[c] for c, w in gap_terms[gi]) + mem.transient["R"] * z
                          <= mem.budget - gap_const[gi] + mem.transient["R"])
    # the gap constant above counts the R transient in gap_const; z switches it on
    # timing (RM1, part 2)
    start: dict[tuple, object] = {}
    for p, seq in enumerate(base.orders):
        for op in seq:
            start[(op.kind, op.stage, op.microbatch)] = model.new_int_var(
                0, horizon, f"s{op}")
    gap_r: dict[tuple[int, int], list[int]] = {}
    for c, (k, _, g) in enumerate(choices):
        gap_r.setdefault((pairs[k].p, g), []).append(c)
    grad = {}
    for _, op in base.ops():
        if op.kind in ("B", "I"):
            grad[(op.stage, op.microbatch)] = op.kind
    S = inst.S

    def end(kind, s, j):
        return start[(kind, s, j)] + dur[kind][s]

    for p, seq in enumerate(base.orders):
        if out_of_time():  # model building stays within the time limit and signals
            return stopped()
        for i, op in enumerate(seq):
            s, j = op.stage, op.microbatch
            me = start[(op.kind, s, j)]
            if i > 0:
                prev = seq[i - 1]
                extra = sum(dur["R"][pairs[choices[c][0]].s] * y[c]
                            for c in gap_r.get((p, i), ()))
                model.add(me >= end(prev.kind, prev.stage, prev.microbatch) + extra)
            if op.kind == "F" and s > 0:
                model.add(me >= end("F", s - 1, j) + (lag if inst.gpu(s - 1) != p else 0))
            if op.kind in ("B", "I"):
                if s == S - 1:
                    model.add(me >= end("F", s, j))
                else:
                    model.add(me >= end(grad[(s + 1, j)], s + 1, j)
                              + (lag if inst.gpu(s + 1) != p else 0))
            if op.kind == "W":
                model.add(me >= end("I", s, j))
    T = model.new_int_var(0, horizon, "T")
    for p, seq in enumerate(base.orders):
        if not seq:
            continue
        last = seq[-1]
        e = end(last.kind, last.stage, last.microbatch)
        if span_obj:
            first = seq[0]
            model.add(T >= e - start[(first.kind, first.stage, first.microbatch)])
        else:
            model.add(T >= e)
    model.minimize(T)

    # hint: fit_memory's placements when they fit this choice space
    if hint is None and not mem.in_bytes and not backward:
        from .remat import fit_memory

        try:
            hint = fit_memory(schedule.with_instance(inst), mem.budget,
                              deadline=Deadline.after(None if time_limit is None
                                                      else time_limit / 4))
        except RematError:
            hint = None
    if hint is not None:
        _add_hint(model, y, choices, pairs, base, hint)

    stats = {"choices": len(choices), "pairs": len(pairs)}
    if infeasible_const:
        return RematResult("infeasible", objective, None, None, Fraction(0), dropped=dropped,
                           positions=positions, backward=backward,
                           seconds=time.monotonic() - t0, stats=stats)
    solver = cp_model.CpSolver()
    # CP-SAT's own SIGINT handler hides the signal from a command that watches signals
    solver.parameters.catch_sigint_signal = bool(catch_sigint) and not watching()
    solver.parameters.num_workers = max(1, int(workers))
    # model building came out of the limit; the solve keeps a moment to turn the hint into a
    # solution (so a short limit still answers with the hinted schedule)
    limit = solve_seconds(None if time_limit is None else max(MIN_SOLVE_SECONDS, time_limit - (
        time.monotonic() - t0)))
    if limit is not None:
        solver.parameters.max_time_in_seconds = float(limit)
    with keep_sigint(), stoppable(solver.stop_search):
        code = solver.solve(model)
    stats["cpsat_status"] = solver.status_name(code)
    stats["branches"] = solver.num_branches
    seconds = time.monotonic() - t0
    if code == cp_model.INFEASIBLE:
        return RematResult("infeasible", objective, None, None, Fraction(0), seconds=seconds,
                           dropped=dropped, positions=positions, backward=backward, stats=stats)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raw = solver.best_objective_bound
        lower = Fraction(_integer_bound(raw), tscale) if raw == raw and abs(raw) != float("inf") \
            else Fraction(0)
        return RematResult("unknown", objective, None, None, max(lower, Fraction(0)),
                           seconds=seconds,
                           dropped=dropped, positions=positions, backward=backward, stats=stats)
    chosen = [choices[c] for c in range(len(choices)) if solver.boolean_value(y[c])]
    orders = build_orders(base, pairs, chosen)
    out = Schedule(inst, orders, (schedule.source + "+" if schedule.source else "")
                   + f"optimal-remat({'K=' + str(mem.budget) if not mem.in_bytes else 'bytes'})")
    value = Fraction(solver.value(T), tscale)
    bound = Fraction(_integer_bound(solver.best_objective_bound), tscale)
    makespan, peak, span = _check(out, mem, chosen, pairs, span_obj)
    if span_obj:
        assert span == value or code != cp_model.OPTIMAL, \
            f"CP-SAT span {value} but the orders' least span is {span}"
        assert span <= value
    else:
        assert makespan <= value, f"CP-SAT makespan {value} below the ASAP one {makespan}"
        if code == cp_model.OPTIMAL:
            assert makespan == value, f"CP-SAT optimum {value} but the orders time to {makespan}"
    achieved = span if span_obj else makespan
    # optimal only when the proven bound equals the value returned (the reported lower bound)
    status = "optimal" if bound >= achieved else "feasible"
    fwd = tuple(Op(pairs[k].s, "R", pairs[k].j) for k, kind, _ in chosen if kind == "f")
    bwd = tuple(Op(pairs[k].s, "R", pairs[k].j) for k, kind, _ in chosen if kind == "b")
    peak_out = [mem.value(x) for x in peak] if mem.in_bytes else peak
    return RematResult(status, objective, out, makespan, min(bound, achieved), span,
                       tuple(sorted(fwd)), tuple(sorted(bwd)),
                       peak_out, time.monotonic() - t0, dropped, positions, backward, stats)


def _check(out: Schedule, mem: MemorySpec, chosen, pairs, span_obj: bool):
    """Makespan, peak and span of the result, checked independently of the model."""
    makespan, peak, span = evaluate(out, mem, span=span_obj)
    assert all(x <= mem.budget for x in peak), f"peak {peak} above the budget {mem.budget}"
    from .simulate import simulate

    res = simulate(out)
    assert res.valid, f"optimal_remat produced an invalid schedule: {res.errors[:3]}"
    assert res.makespan == makespan, (res.makespan, makespan)
    if mem.in_bytes:
        assert res.peak_bytes == [mem.value(x) for x in peak], (res.peak_bytes, peak)
    else:
        assert res.peak_memory == peak, (res.peak_memory, peak)
    return makespan, peak, span


def _add_hint(model, y, choices, pairs, base: Schedule, hint: Schedule) -> None:
    """Hint the ``R`` placements of ``hint`` when its non-``R`` order is the base order."""
    plain = tuple(tuple(op for op in seq if op.kind != "R") for seq in hint.orders)
    if plain != base.orders:
        return
    where: dict[tuple[int, int], int] = {}
    for p, seq in enumerate(hint.orders):
        g = 0
        for op in seq:
            if op.kind == "R":
                where[(op.stage, op.microbatch)] = g
            else:
                g += 1
    for c, (k, kind, g) in enumerate(choices):
        pr = pairs[k]
        model.add_hint(y[c], kind == "f" and where.get((pr.s, pr.j)) == g)


def recompute_actions(result: RematResult) -> list[str]:
    """The ``R`` ops of a result as action strings (forward ones, then backward ones)."""
    return [str(op) for op in result.recomputed] + [str(op) for op in result.backward_recomputed]
