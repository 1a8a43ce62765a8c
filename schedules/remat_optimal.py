"""Optimal rematerialization of a fixed order: :func:`optimal_remat` (docs/remat.md).

Paper 2 (REFERENCES.md) takes a schedule's per-GPU op orders as fixed and chooses, for every pair
``(j,s)``, what to keep and what to recompute. This module solves that problem *exactly* with
a CP-SAT model (OR-tools) and reports an honest status.

**Choice space.** The per-GPU order of the given non-recompute ops is kept (``R`` and ``RI``
ops already in the input are dropped first, and counted in ``RematResult.dropped``). On GPU ``p`` let the base
order be ``o_0 .. o_{n-1}``; *gap* ``g`` is the place just before ``o_g``. Every pair chooses

* **keep**: ``F(j,s)`` stores the activation; or
* **forward recompute** in one gap ``g`` with ``pos F(j,s) < g <= pos G(j,s)`` (``G`` the
  input-gradient op ``B`` or ``I``): ``R(j,s)`` runs there and stores the activation
  (``positions="anywhere"``, the default); ``positions="adjacent"`` allows only
  ``g = pos G(j,s)``, the recompute immediately before its input gradient (the issue's and the
  paper's form, whose ILP adds the recompute time to the backward);
* with option 2 (``options`` holds 2, or ``backward=True``; split form; MODEL.md, *Backward
  rematerialization*), independently: **free after I** and recompute before ``W``: a second
  ``R(j,s)`` in one gap ``h`` with ``pos I(j,s) < h <= pos W(j,s)`` (``"adjacent"``:
  ``h = pos W``); the pair keeps its gradients ``d_s`` from ``I`` to ``W``;
* or, with option 3 (the remat paper's third option; MODEL.md third round), **free the
  activation and the gradients after I** and re-run the forward and the input gradient before
  ``W``: ``R(j,s)`` then ``RI(j,s)``, back to back in one such gap ``h``.

Options are :data:`OPTIONS`; the default is option 1 alone. Several candidates in one gap run
back to back in a canonical order (:func:`_gap_order`: the larger residual transient first,
then forward ones, each by stage then microbatch): timing does not depend on it and, by an
exchange argument (below), no other order has a lower peak, so the choice space is exactly the
gap assignment.

**Exactness (theorem RM1).** For a fixed assignment ``y``:

1. *Memory is linear in y.* On one GPU the storing and releasing events follow the order
   (MODEL.md), so the memory during base op ``o_i`` is ``M_p + t(o_i) + sum`` over the GPU's
   pairs of their contribution at ``i``: a kept pair holds ``a_s`` on ``[pos F, pos G]``, a
   pair recomputed in gap ``g`` holds ``a_s`` on ``[g, pos G]``; in split form it holds
   ``g_s`` on ``[pos I + 1, pos W]``; with option 2 in gap ``h``, ``d_s`` there and
   ``g_s - d_s`` on ``[h, pos W]``; with option 3, ``g_s`` on ``[h, pos W]`` (``a_s = g_s = 1``,
   ``d_s = 0`` in the count model ``K``). So the contribution at ``i`` is the kept one minus
   ``a_s * sum_{g > i} y_g`` (and ``(g_s - d_s)`` or ``g_s`` times ``sum_{h > i} y_h``), linear.
   Inside a gap nothing is released and every recompute stores, so the level rises through the
   gap; an item (one candidate's ops) storing ``S`` in all and peaking ``h`` above its starting
   level peaks at (the level at the gap's end) - (the stores of the later items) - ``S + h``.
   For two adjacent items ``x, y`` the peak is ``max(h_x, S_x + h_y)`` in that order, at most the
   other order's ``S_y + h_x`` when ``h_x - S_x >= h_y - S_y``: the order by decreasing residual
   ``h - S`` is best. The model adds that constraint for every candidate with a positive
   residual (enforced when it is chosen); with residual 0 the item peaks at most at the memory
   during ``o_g``, which adds ``o_g``'s own store and transient.
2. *Timing is a precedence graph without disjunctions.* An ``R`` op's predecessors (its ``F``,
   or its ``I``; an ``RI``'s: its ``R``) are earlier on its own GPU and its successor (``G`` or
   ``W``) later, so a candidate only adds its duration (``f_s``, option 3 ``f_s + b_I,s``) to its
   GPU's sequence: ``start(o_i) >= end(o_{i-1}) + sum``
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
from typing import Any, Optional

from .deadline import Deadline
from .stopping import keep_sigint, solve_seconds, stop_requested, stoppable, watching
from .ops import Op
from .schedule import Schedule
from .memory import TRANSIENT_KINDS
from .remat import RematError
from .instance import require_one_direction

OBJECTIVES = ("makespan", "span")
OPTIONS = (1, 2, 3)
"""The recompute options per pair (docs/remat.md, the remat paper's code): 1 recompute the forward
before the input gradient (``R`` before ``B``/``I``); 2 free after ``I`` and recompute the
forward before ``W`` (``R`` between ``I`` and ``W``); 3 free the activation and the gradients
after ``I`` and recompute the forward and the input gradient before ``W`` (``R`` then ``RI``)."""
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
    """Memory of the problem, integers: per-stage ``activation`` (``a_s``), ``kept`` (``g_s``,
    held from the end of ``I`` to the end of ``W``) and ``gradient`` (``d_s``, the part of
    ``g_s`` a backward ``R`` cannot rebuild and an ``RI`` can), per-GPU ``static`` (``M_p``),
    ``transient`` (kind in ``F B I W R RI`` -> one number per stage), and ``budget``; ``scale``
    is what the original numbers were multiplied by (1 for the count model ``K``).
    ``in_bytes`` says which model it is."""

    activation: tuple[int, ...]
    kept: tuple[int, ...]
    static: tuple[int, ...]
    transient: dict
    budget: int
    scale: int = 1
    in_bytes: bool = False
    requested: Optional[Fraction] = None
    """The byte budget as given (``budget`` may be lower: clamped to the most any GPU can hold)."""
    gradient: Optional[tuple[int, ...]] = None

    @classmethod
    def count(cls, S: int, P: int, K: int) -> "MemorySpec":
        """The activation count ``K`` (MODEL.md): one unit per activation, nothing else."""
        return cls((1,) * S, (1,) * S, (0,) * P, {k: (0,) * S for k in TRANSIENT_KINDS}, K)

    def value(self, x: int) -> Fraction:
        return Fraction(x, self.scale)

    def grad(self, s: int) -> int:
        """``d_s`` (0 unless the bytes model gives ``kept_gradient``)."""
        return 0 if self.gradient is None else self.gradient[s]

    def trans(self, kind: str, s: int) -> int:
        """The transient of an op of ``kind`` on stage ``s``."""
        return self.transient[kind][s]


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
    grad = [mem.gradient(s) for s in range(S)]
    static = [mem.static_of(p) for p in range(P)]
    trans = {(k, s): mem.transient_of(k, s) for k in TRANSIENT_KINDS for s in range(S)}
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
    nums = act + kept + grad + static + list(trans.values()) + [budget]
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
                      {k: tuple(i(trans[(k, s)]) for s in range(S)) for k in TRANSIENT_KINDS},
                      i(budget), scale, True, requested,
                      tuple(map(i, grad)) if any(grad) else None)


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
    horizon = (sum(1 for _ in base.ops()) * d + inst.S * inst.m * (3 * f + 2 * d + 2 * inst.c)) * tscale
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
    ``backward_recomputed``: the ``R`` ops between an ``I`` and its ``W`` (options 2 and 3);
    ``input_recomputed``: the ``RI`` ops (option 3). ``peak``: peak memory per GPU (count, or
    bytes as exact Fractions). ``dropped``: ``R`` and ``RI`` ops of the input removed before
    optimizing. ``options``: the recompute options allowed (:data:`OPTIONS`).
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
    input_recomputed: tuple[Op, ...] = ()
    options: tuple[int, ...] = (1,)

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
    """The least ``K`` that some recompute choice of this fixed order fits (count model);
    ``backward``: options 2 or 3 allowed (in the count model they hold the same).

    Every pair can recompute right before its input gradient ``G`` (``B`` or ``I``), so at base
    position ``i`` of a GPU only these activations are unavoidable (RM1's memory, every pair
    recomputed as late as possible): the pairs whose ``G`` is at ``i``, and in split form the
    pairs with ``pos I < i <= pos W`` (without ``backward``; with it, only the pair whose ``W``
    is at ``i``). The floor is the largest count, at least 1; ``optimal_remat(K)`` is
    infeasible exactly when ``K`` is below it (no transients in the count model).
    """
    require_one_direction(schedule, "memory_floor (remat)")
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


RECOMPUTE_KINDS = ("R", "RI")
"""The op kinds a recompute choice adds (and that the input's orders lose first)."""


def _base(schedule: Schedule):
    """The order without ``R`` and ``RI`` ops, checked to be complete and deadlock-free."""
    from .simulate import simulate

    orders = tuple(tuple(op for op in seq if op.kind not in RECOMPUTE_KINDS)
                   for seq in schedule.orders)
    dropped = sum(1 for _, op in schedule.ops() if op.kind in RECOMPUTE_KINDS)
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


CHOICE_OPTION = {"f": 1, "b": 2, "i": 3}
"""A candidate's kind: ``f`` an ``R`` before the input gradient (option 1), ``b`` an ``R``
between ``I`` and ``W`` (option 2), ``i`` an ``R`` then an ``RI`` there (option 3)."""


def remat_options(backward: bool = False, options=None) -> tuple[int, ...]:
    """The options allowed: ``options`` (a collection of 1, 2, 3; default ``(1,)``) plus 2 when
    ``backward`` (the older spelling of ``options=(1, 2)``)."""
    opts = {1} if options is None else set(options)
    if not opts or not opts <= set(OPTIONS):
        raise RematError(f"options must be a non-empty subset of 1, 2, 3, got {options!r}")
    if backward:
        opts.add(2)
    return tuple(sorted(opts))


def _choices(pairs, positions: str, options):
    """Candidate placements ``(pair index, kind, gap)``, kind in :data:`CHOICE_OPTION`: forward
    gaps ``pos F < g <= pos G`` (option 1), backward gaps ``pos I < h <= pos W`` (options 2, 3);
    ``adjacent`` keeps only the gap right before the consumer. ``options``: a collection of
    1, 2, 3, or a bool (True: 1 and 2; the older signature)."""
    if isinstance(options, bool):
        options = (1, 2) if options else (1,)
    out = []
    for k, pr in enumerate(pairs):
        if 1 in options:
            lo = pr.beta if positions == "adjacent" else pr.phi + 1
            out += [(k, "f", g) for g in range(lo, pr.beta + 1)]
        if pr.split:
            lo = pr.rho if positions == "adjacent" else pr.beta + 1
            for kind in ("b", "i"):
                if CHOICE_OPTION[kind] in options:
                    out += [(k, kind, h) for h in range(lo, pr.rho + 1)]
    return out


def _stores(mem: MemorySpec, pr: _Pair, kind: str) -> int:
    """What a candidate's ops store in all (the ``S`` of RM1's in-gap order): ``a_s`` (option
    1), ``g_s - d_s`` (option 2: the gradients ``d_s`` stayed), ``g_s`` (option 3)."""
    if kind == "f":
        return mem.activation[pr.s]
    return mem.kept[pr.s] - (mem.grad(pr.s) if kind == "b" else 0)


def _residual(mem: MemorySpec, pr: _Pair, kind: str) -> int:
    """How far a candidate's ops peak above the level they leave (``h - S`` of RM1's in-gap
    order): the ``R`` transient, and for option 3 the larger of the ``R``'s (whose ``g_s - d_s``
    is stored, the ``d_s`` not yet) and the ``RI``'s."""
    t_r = mem.trans("R", pr.s)
    if kind != "i":
        return t_r
    return max(t_r - mem.grad(pr.s), mem.trans("RI", pr.s))


def _gap_order(mem: Optional[MemorySpec], pairs, kind: str, k: int) -> tuple:
    """Sort key of a candidate inside its gap: the larger residual first (the exchange argument
    of RM1 makes this order's peak the least), then forward ones, by stage, microbatch."""
    pr = pairs[k]
    res = 0 if mem is None else _residual(mem, pr, kind)
    return (-res, kind != "f", pr.s, pr.j)


# -------------------------------------------------------- independent evaluation

def build_orders(base: Schedule, pairs, chosen, mem: Optional[MemorySpec] = None
                 ) -> tuple[tuple[Op, ...], ...]:
    """The base orders with the ops of ``chosen`` (``(pair index, kind, gap)``) inserted, in the
    canonical order inside a gap (:func:`_gap_order`; option 3 inserts ``R`` then ``RI``)."""
    gaps: dict[tuple[int, int], list] = {}
    for k, kind, g in chosen:
        pr = pairs[k]
        gaps.setdefault((pr.p, g), []).append((_gap_order(mem, pairs, kind, k), kind, pr))
    out = []
    for p, seq in enumerate(base.orders):
        new = []
        for i, op in enumerate(seq):
            for _, kind, pr in sorted(gaps.get((p, i), ()), key=lambda x: x[0]):
                new.append(Op(pr.s, "R", pr.j))
                if kind == "i":
                    new.append(Op(pr.s, "RI", pr.j))
            new.append(op)
        out.append(tuple(new))
    return tuple(out)


def _recompute_durations(inst, scale: int) -> dict:
    """Per kind, per stage integer durations in units of ``1/scale`` (``R`` as ``F``, ``RI``
    as ``I``)."""
    dur = {k: [int(x * scale) for x in _durations(inst, k)] for k in
           (("F", "B", "I", "W") if inst.split else ("F", "B"))}
    dur["R"] = dur["F"]
    if inst.split:
        dur["RI"] = dur["I"]
    return dur


def _walk_memory(schedule: Schedule, memory: MemorySpec) -> list[int]:
    """Peak per GPU (memory units) by a direct walk of each GPU's order, event by event."""
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
            d = memory.grad(op.stage)
            i_pos = first.get(("I", op.stage, op.microbatch))
            r_pos = [k for k, o in enumerate(seq) if o.kind == "R" and (o.stage, o.microbatch) == pair]
            g_pos = first.get(("B", op.stage, op.microbatch), i_pos)
            if g_pos is None or any(k < first.get(("F",) + pair, -1) for k in r_pos):
                raise RematError(f"{op}: R before its F, or a pair without backward")
            fwd_r = any(k < g_pos for k in r_pos)
            bwd_r = i_pos is not None and any(k > i_pos for k in r_pos)
            third = ("RI",) + pair in first
            if op.kind == "F" and not fwd_r:
                live += a
            elif op.kind == "R":
                live += (g - d) if (i_pos is not None and i > i_pos) else a
            elif op.kind == "RI":
                live += d
            peak = max(peak, memory.static[p] + live + memory.trans(op.kind, op.stage))
            if op.kind == "B":
                live -= a
            elif op.kind == "I":
                live -= a if third else (a - d) if bwd_r else (a - g)
            elif op.kind == "W":
                live -= g
        peaks.append(peak)
    return peaks


def _walk_timing(schedule: Schedule) -> Fraction:
    """The ASAP makespan by repeated passes over the GPUs (RematError on a deadlock)."""
    inst = schedule.instance
    unit = inst.unit
    dur = _recompute_durations(inst, unit)
    lag = int(inst.c * unit)
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
                t += dur[op.kind][s]
                end[key] = t
                tfree[p] = t
                ptr[p] += 1
                progress = True
    if any(ptr[p] < len(seq) for p, seq in enumerate(schedule.orders)):
        raise RematError("the orders deadlock")
    return Fraction(max(tfree), unit)


def evaluate(schedule: Schedule, memory: MemorySpec, span: bool = False):
    """``(makespan, peak per GPU in memory units, min span or None)`` of orders that may hold a
    backward ``R`` (between ``I`` and ``W``) and ``RI`` ops, by a direct walk: memory event by
    event in each GPU's order (:func:`_walk_memory`), ASAP timing by repeated passes
    (:func:`_walk_timing`; an ``R`` or ``RI`` waits only for ops earlier on its own GPU).
    Raises RematError on a deadlock or misplaced ``R``. Independent of the CP-SAT model and of
    the simulator (a second check of both)."""
    peaks = _walk_memory(schedule, memory)
    makespan = _walk_timing(schedule)
    return makespan, peaks, (min_span(schedule) if span else None)


def min_span(schedule: Schedule) -> Fraction:
    """The least over all timings (precedences and orders respected, starts not necessarily
    ASAP) of the largest per-GPU span ``end(last op) - start(first op)``: binary search on the
    span with a Bellman-Ford feasibility test of the difference constraints, in units of
    ``1/(unit * lcm(1..P))`` where the optimum is an integer (module docstring)."""
    require_one_direction(schedule, "min_span (remat)")
    inst = schedule.instance
    scale = inst.unit * lcm(*range(1, inst.P + 1))
    dur = _recompute_durations(inst, scale)
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
    from .ortools_import import cp_model as load

    try:
        cp_model = load()
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RematError("optimal_remat needs OR-tools: pip install ortools "
                         "(or the project's 'solver' extra)") from exc
    return cp_model


def _limit(schedule: Schedule, K, budget_bytes):
    """``(mem, inst)``: the memory limit as a :class:`MemorySpec` (the count ``K`` or the bytes
    model with ``budget_bytes``) and the instance the result is checked on."""
    inst0 = schedule.instance
    if budget_bytes is not None and K is not None:
        raise RematError("give either K or budget_bytes, not both")
    if budget_bytes is None and getattr(inst0, "memory", None) is None or K is not None:
        K = inst0.K if K is None else K
        if K is None:
            raise RematError("no memory limit: give K (or budget_bytes with a memory model)")
        if isinstance(K, bool) or not isinstance(K, int) or K < 1:
            raise RematError(f"K must be a whole number >= 1, got {K!r}")
        # a bytes model, if any, is kept for measurement only (its budget is not the limit)
        model = getattr(inst0, "memory", None)
        return (MemorySpec.count(inst0.S, inst0.P, K),
                inst0.with_(K=K, memory=None if model is None else replace(model, budget=None)))
    mem = _bytes_spec(inst0, budget_bytes)
    return mem, inst0.with_(K=None, memory=replace(inst0.memory, budget=mem.requested))


@dataclass
class _Problem:
    """One optimal_remat model under construction: the base order, its pairs, the candidates
    (``choices``) with their Booleans ``y``, the memory limit and the time unit."""

    model: Any
    base: Schedule
    pairs: list
    choices: list
    y: list
    mem: MemorySpec
    tscale: int

    def on_gpu(self, p: int):
        """``(candidate index, pair, kind, gap)`` of GPU ``p``'s candidates."""
        for c, (k, kind, g) in enumerate(self.choices):
            if self.pairs[k].p == p:
                yield c, self.pairs[k], kind, g


def _add_choice_limits(pb: _Problem) -> None:
    """At most one forward recompute and one backward one (option 2 or 3) per pair."""
    by_pair: dict[tuple[int, bool], list[int]] = {}
    for c, (k, kind, _) in enumerate(pb.choices):
        by_pair.setdefault((k, kind == "f"), []).append(c)
    for cs in by_pair.values():
        pb.model.add_at_most_one(pb.y[c] for c in cs)


def _add_gpu_memory(pb: _Problem, p: int) -> bool:
    """RM1 part 1 on GPU ``p``: the memory during each base op, and inside each gap during its
    recomputes (per candidate, in the canonical in-gap order, when it peaks above the level it
    leaves). False when a base op exceeds the budget whatever the choice."""
    mem, y, model = pb.mem, pb.y, pb.model
    seq = pb.base.orders[p]
    n = len(seq)
    const = [mem.static[p] + mem.trans(op.kind, op.stage) for op in seq]
    terms: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    gap_const = [mem.static[p]] * (n + 1)      # the level at the end of gap i (before o_i)
    gap_terms: list[list[tuple[int, int]]] = [[] for _ in range(n + 1)]
    for pr in pb.pairs:
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
    for c, pr, kind, g in pb.on_gpu(p):
        if kind == "f":
            amt, lo, glo = mem.activation[pr.s], pr.phi, pr.phi + 1
        else:  # after I only d_s (option 2) or nothing (option 3) until the gap
            amt, lo, glo = _stores(mem, pr, kind), pr.beta + 1, pr.beta + 1
        for i in range(lo, g):       # not yet stored at positions before the gap
            terms[i].append((c, -amt))
        for i in range(glo, g):      # nor in the gaps before it
            gap_terms[i].append((c, -amt))
    feasible = True
    for i in range(n):
        if terms[i]:
            model.add(sum(w * y[c] for c, w in terms[i]) <= mem.budget - const[i])
        elif const[i] > mem.budget:
            feasible = False
    # inside gap gi: candidate c peaks at (level at the gap's end) - (stores of the gap's
    # candidates after it) - S_c + h_c; dominated by o_gi's own constraint when h_c = S_c
    in_gap: dict[int, list] = {}
    for c, pr, kind, g in pb.on_gpu(p):
        in_gap.setdefault(g, []).append((_gap_order(mem, pb.pairs, kind, pb.choices[c][0]),
                                         c, pr, kind))
    for gi, items in in_gap.items():
        items.sort(key=lambda x: x[0])
        for r, (_, c, pr, kind) in enumerate(items):
            res = _residual(mem, pr, kind)
            if res <= 0:
                continue
            later = [(c2, -_stores(mem, pr2, kind2)) for _, c2, pr2, kind2 in items[r + 1:]]
            level = sum(w * y[c3] for c3, w in gap_terms[gi] + later)
            model.add(level + res <= mem.budget - gap_const[gi]).only_enforce_if(y[c])
    return feasible


def _add_timing(pb: _Problem, inst, horizon: int, span_obj: bool):
    """RM1 part 2: start times of the base ops, each after the previous op of its GPU plus the
    recomputes chosen in its gap, and after its cross-op predecessors; returns ``T``."""
    model, y, choices, pairs = pb.model, pb.y, pb.choices, pb.pairs
    dur = _recompute_durations(inst, pb.tscale)
    lag = int(inst.c * pb.tscale)
    start: dict[tuple, object] = {}
    for p, seq in enumerate(pb.base.orders):
        for op in seq:
            start[(op.kind, op.stage, op.microbatch)] = model.new_int_var(
                0, horizon, f"s{op}")
    gap_r: dict[tuple[int, int], list[int]] = {}
    for c, (k, _, g) in enumerate(choices):
        gap_r.setdefault((pairs[k].p, g), []).append(c)

    def cost(c: int) -> int:  # time a candidate adds to its gap
        k, kind, _ = choices[c]
        s = pairs[k].s
        return dur["R"][s] + (dur["RI"][s] if kind == "i" else 0)

    grad = {}
    for _, op in pb.base.ops():
        if op.kind in ("B", "I"):
            grad[(op.stage, op.microbatch)] = op.kind
    S = inst.S

    def end(kind, s, j):
        return start[(kind, s, j)] + dur[kind][s]

    for p, seq in enumerate(pb.base.orders):
        for i, op in enumerate(seq):
            s, j = op.stage, op.microbatch
            me = start[(op.kind, s, j)]
            if i > 0:
                prev = seq[i - 1]
                extra = sum(cost(c) * y[c] for c in gap_r.get((p, i), ()))
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
    for p, seq in enumerate(pb.base.orders):
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
    return T


def _horizon(pb: _Problem, inst) -> int:
    """A time no ASAP op of any choice ends after (every op and candidate back to back)."""
    dur = _recompute_durations(inst, pb.tscale)
    lag = int(inst.c * pb.tscale)
    extra = sum(dur["R"][pb.pairs[k].s] + (dur["RI"][pb.pairs[k].s] if kind == "i" else 0)
                for k, kind, _ in pb.choices)
    return (sum(dur[op.kind][op.stage] for _, op in pb.base.ops()) + extra
            + lag * 2 * len(pb.pairs))


def optimal_remat(schedule: Schedule, K: Optional[int] = None, budget_bytes=None,
                  backward: bool = False, objective: str = "makespan",
                  positions: str = "anywhere", time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
                  workers: int = 1, hint: Optional[Schedule] = None,
                  catch_sigint: bool = True, options=None,
                  grace: float = MODEL_GRACE) -> RematResult:
    """The best recompute choices for the fixed order of ``schedule`` (module docstring).

    Memory: ``K`` (activations per GPU; default the instance's ``K``), or ``budget_bytes`` with
    the instance's bytes model (MODEL.md, *Memory in bytes*; its transients, per op kind and
    stage, count). ``options``: the recompute options allowed per pair (:data:`OPTIONS`;
    default ``(1,)``); ``backward=True`` adds option 2 (free after ``I`` and recompute before
    ``W``, split form). ``objective``: ``makespan`` or ``span`` (the largest per-GPU span).
    ``positions``: ``anywhere`` or ``adjacent`` (see the choice space). ``hint``: a schedule
    with the same base order whose ``R`` placements start the search (by default
    :func:`schedules.remat.fit_memory`'s when it keeps the order). ``catch_sigint``: CP-SAT's
    own SIGINT handler during the solve (off when the caller has its own: after a solve with
    it on, a later SIGINT was seen to kill the process instead of reaching the caller's
    handler). ``grace``: seconds past ``time_limit`` that building the model may take (default
    :data:`MODEL_GRACE`; 0 when the limit is a hard promise, as in ``pipebounds remat``); past
    them the answer is ``unknown``.
    """
    require_one_direction(schedule, "optimal_remat (remat)")
    t0 = time.monotonic()
    if objective not in OBJECTIVES:
        raise RematError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if positions not in POSITIONS:
        raise RematError(f"positions must be one of {', '.join(POSITIONS)}, got {positions!r}")
    opts = remat_options(backward, options)
    mem, inst = _limit(schedule, K, budget_bytes)
    back = 2 in opts or 3 in opts
    if back and not inst.split:
        raise RematError("backward rematerialization (options 2, 3) needs the split form "
                         "(I and W ops)")
    if time_limit is not None and time.monotonic() - t0 > time_limit + grace or \
            stop_requested():  # no time left even to import the solver (seconds when loaded)
        return RematResult("unknown", objective, None, None, Fraction(0),
                           positions=positions, backward=back, options=opts,
                           seconds=time.monotonic() - t0,
                           stats={"stopped": "before building the model"})
    cp_model = _ortools()
    base, pairs, dropped = _base(schedule.with_instance(inst))
    base = base.with_instance(inst)
    choices = _choices(pairs, positions, opts)
    span_obj = objective == "span"
    tscale = inst.unit * (lcm(*range(1, inst.P + 1)) if span_obj else 1)
    _check_time_scale(base, tscale, span_obj)
    model = cp_model.CpModel()
    pb = _Problem(model, base, pairs, choices,
                  [model.new_bool_var(f"y{k}{kind}{g}") for k, kind, g in choices], mem, tscale)
    common = dict(dropped=dropped, positions=positions, backward=back, options=opts)

    def out_of_time() -> bool:  # past the limit by more than the grace: no answer in time
        return stop_requested() or (time_limit is not None
                                    and time.monotonic() - t0 > time_limit + grace)

    def answer(status: str, lower=Fraction(0), **more) -> RematResult:  # no schedule
        return RematResult(status, objective, None, None, lower,
                           seconds=time.monotonic() - t0, **common, **more)

    _add_choice_limits(pb)
    feasible = True
    for p in range(inst.P):
        if out_of_time():  # model building stays within the time limit and signals
            return answer("unknown", stats={"stopped": "while building the model"})
        feasible = _add_gpu_memory(pb, p) and feasible
    if out_of_time():
        return answer("unknown", stats={"stopped": "while building the model"})
    T = _add_timing(pb, inst, _horizon(pb, inst), span_obj)
    _hint(pb, schedule.with_instance(inst), hint, back, time_limit)
    stats = {"choices": len(choices), "pairs": len(pairs)}
    if not feasible:
        return answer("infeasible", stats=stats)
    solver, code = _solve(pb, time_limit, t0, workers, catch_sigint)
    stats["cpsat_status"] = solver.status_name(code)
    stats["branches"] = solver.num_branches
    if code == cp_model.INFEASIBLE:
        return answer("infeasible", stats=stats)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raw = solver.best_objective_bound
        lower = Fraction(_integer_bound(raw), tscale) if raw == raw and abs(raw) != float("inf") \
            else Fraction(0)
        return answer("unknown", max(lower, Fraction(0)), stats=stats)
    return _result(pb, solver, code == cp_model.OPTIMAL, T, schedule, inst, objective, t0,
                   common, stats)


def _hint(pb: _Problem, schedule: Schedule, hint: Optional[Schedule], back: bool,
          time_limit) -> None:
    """Hint the search: ``hint``'s placements, by default fit_memory's (count model, forward
    recomputes only) when it keeps the order."""
    if hint is None and not pb.mem.in_bytes and not back:
        from .remat import fit_memory

        try:
            hint = fit_memory(schedule, pb.mem.budget,
                              deadline=Deadline.after(None if time_limit is None
                                                      else time_limit / 4))
        except RematError:
            hint = None
    if hint is not None:
        _add_hint(pb.model, pb.y, pb.choices, pb.pairs, pb.base, hint)


def _solve(pb: _Problem, time_limit, t0: float, workers: int, catch_sigint: bool):
    """Run CP-SAT on the model within what is left of ``time_limit``; ``(solver, status)``."""
    cp_model = _ortools()
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
        code = solver.solve(pb.model)
    return solver, code


def _result(pb: _Problem, solver, proven: bool, T, schedule: Schedule, inst, objective: str,
            t0: float, common: dict, stats: dict) -> RematResult:
    """The solution's schedule, checked independently (:func:`_check`), with an honest status:
    ``optimal`` only when CP-SAT's proven bound meets the value returned."""
    span_obj = objective == "span"
    mem, pairs = pb.mem, pb.pairs
    chosen = [pb.choices[c] for c in range(len(pb.choices)) if solver.boolean_value(pb.y[c])]
    orders = build_orders(pb.base, pairs, chosen, mem)
    out = Schedule(inst, orders, (schedule.source + "+" if schedule.source else "")
                   + f"optimal-remat({'K=' + str(mem.budget) if not mem.in_bytes else 'bytes'})")
    value = Fraction(solver.value(T), pb.tscale)
    bound = Fraction(_integer_bound(solver.best_objective_bound), pb.tscale)
    makespan, peak, span = _check(out, mem, span_obj)
    if span_obj:
        assert span == value or not proven, \
            f"CP-SAT span {value} but the orders' least span is {span}"
        assert span <= value
    else:
        assert makespan <= value, f"CP-SAT makespan {value} below the ASAP one {makespan}"
        if proven:
            assert makespan == value, f"CP-SAT optimum {value} but the orders time to {makespan}"
    achieved = span if span_obj else makespan
    status = "optimal" if bound >= achieved else "feasible"

    def ops(kinds) -> tuple[Op, ...]:
        return tuple(sorted(Op(pairs[k].s, "R", pairs[k].j) for k, kind, _ in chosen
                            if kind in kinds))

    ri = tuple(sorted(Op(pairs[k].s, "RI", pairs[k].j) for k, kind, _ in chosen if kind == "i"))
    peak_out = [mem.value(x) for x in peak] if mem.in_bytes else peak
    return RematResult(status, objective, out, makespan, min(bound, achieved), span,
                       ops("f"), ops("bi"), peak_out, time.monotonic() - t0,
                       stats=stats, input_recomputed=ri, **common)


def _check(out: Schedule, mem: MemorySpec, span_obj: bool):
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
    plain = tuple(tuple(op for op in seq if op.kind not in RECOMPUTE_KINDS) for seq in hint.orders)
    if plain != base.orders:
        return
    where: dict[tuple[int, int], int] = {}
    for p, seq in enumerate(hint.orders):
        g = 0
        for op in seq:
            if op.kind == "R":
                where[(op.stage, op.microbatch)] = g
            elif op.kind != "RI":
                g += 1
    for c, (k, kind, g) in enumerate(choices):
        pr = pairs[k]
        model.add_hint(y[c], kind == "f" and where.get((pr.s, pr.j)) == g)


def recompute_actions(result: RematResult) -> list[str]:
    """The recompute ops of a result as action strings (forward ``R`` ops, then backward ones,
    then the ``RI`` ops)."""
    return [str(op) for op in result.recomputed + result.backward_recomputed
            + result.input_recomputed]
