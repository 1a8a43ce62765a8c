"""Starting schedules of the synthesis (docs/synthesis.md): every one valid for the instance.

* **families**: every family of :data:`schedules.generators.GENERATORS` that applies (the
  natural schedules of :func:`pipebounds.services.best.family_schedules`), fitted by
  :func:`schedules.remat.fit_memory` (no polish: fast), then optimally rematerialized to the
  memory limit by :func:`schedules.remat_optimal.optimal_remat` as ``best`` does (its order
  fixed, every recompute choice optimized by CP-SAT within a short limit per family, hinted
  with the fast fit);
* **list schedules**: :func:`schedules.generators.list_scheduler.list_schedule` under a memory
  cap, with a searched priority rule: each rule of :data:`RULES` (at ``v >= 2`` the
  :func:`wave_rule` first), with and without
  ``hold_forward``, for every cap from ``K`` up (a cap above ``K`` leaves recomputes to
  :func:`~schedules.remat.fit_memory`, which can beat holding fewer microbatches).

Each candidate is re-timed by :func:`schedules.simulate.simulate` on the instance with the
limit (``K`` or the byte budget) and kept only when valid. Deadlines are read on the clock
``now`` (``time.monotonic``, or ``time.process_time`` for a CPU budget); the limits handed to
the sub-solvers are the seconds left, in wall time, which never uses more CPU than that.
"""

from __future__ import annotations

from random import Random
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable, Optional

from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.simulate import simulate

KIND = {"B": 0, "I": 0, "F": 1, "W": 2}


def _oldest_backward(op: Op, gpu: int) -> tuple:
    """1F1B-like: backward first, then forward, then ``W``; older microbatch first."""
    return (KIND[op.kind], op.microbatch, -op.stage)


def _deepest_first(op: Op, gpu: int) -> tuple:
    """Interleaved-like: backward first, later stage (closer to the loss) first."""
    return (KIND[op.kind], -op.stage, op.microbatch)


def _forward_old(op: Op, gpu: int) -> tuple:
    """Backward first; forwards of the oldest microbatch before newer ones, later stage first
    among equals; ``W`` last (zero-bubble's deferral)."""
    return (KIND[op.kind], op.microbatch + (0 if op.kind == "F" else -op.stage), -op.stage)


def _chain_order(op: Op, gpu: int) -> tuple:
    """By microbatch, then by position on the microbatch's chain (depth-first)."""
    depth = op.stage if op.kind == "F" else 10 ** 6 - op.stage
    return (op.microbatch, depth, KIND[op.kind])


RULES: dict[str, Callable[[Op, int], tuple]] = {
    "oldest-backward": _oldest_backward,
    "deepest-first": _deepest_first,
    "forward-old": _forward_old,
    "chain": _chain_order,
}
"""Priority rules for the list scheduler (smallest key first among the ready ops)."""


@dataclass(frozen=True)
class Candidate:
    """A valid schedule, its makespan and the method that produced it."""

    source: str
    schedule: Schedule
    makespan: Fraction
    base: Optional[Schedule] = None
    """The schedule before :func:`~schedules.remat.fit_memory` without polish, when it was
    fitted that way (:func:`polish_candidates` refits it with the polish)."""


def check(inst: Instance, sched: Schedule) -> Optional[Fraction]:
    """The makespan of ``sched`` on ``inst`` (its limit enforced), None when invalid."""
    try:
        res = simulate(sched.with_instance(inst))
    except ValueError:
        return None
    return res.makespan if res.valid else None


BUILD_SECONDS_PER_CHOICE = 1e-3
"""Measured build time of :func:`~schedules.remat_optimal.optimal_remat`'s model per recompute
choice (about 14 s for 13,800 choices at ``P = 8, m = 32, v = 2`` on the loaded 2-core machine;
its time limit covers only the solve): a family whose model would take longer to build than the
start phase has left is not rematerialized optimally (its fast fit stays a candidate)."""


def _remat_choices(sched: Schedule) -> int:
    """The number of forward-recompute gaps of ``sched``'s order (``pos G - pos F`` summed over
    the pairs): the size of optimal_remat's model."""
    pos = {}
    for seq in sched.orders:
        for i, op in enumerate(seq):
            pos[op] = i
    return sum(i - pos.get(Op(op.stage, "F", op.microbatch), i) for op, i in pos.items()
               if op.kind in "BI")


def family_candidates(inst: Instance, K: Optional[int], budget, backward: bool,
                      per_family: float, deadline: float, families=None,
                      stop=lambda: False, now: Callable[[], float] = time.monotonic
                      ) -> tuple[list[Candidate], list[str], object]:
    """Every family fitted by fit_memory, then optimally rematerialized (one family at a time
    until ``deadline`` on the clock ``now``). Returns ``(candidates, notes, entries)`` (an
    :class:`pipebounds.services.best.Entry` per family rematerialized)."""
    from pipebounds.services.best import Entry, family_schedules
    from schedules.remat import RematError, fit_memory
    from schedules.remat_optimal import optimal_remat

    notes: list[str] = []
    if families is None:
        families, _ = family_schedules(inst)
    out: list[Candidate] = []
    fitted_of = {}
    if K is not None:  # fast fallback first: every family fitted by fit_memory (no polish),
        for name, sched in families.items():  # the first valid one whatever the time left
            if out and (now() > deadline or stop()):
                break
            try:
                fitted = fit_memory(sched, K, polish=False)
            except (RematError, ValueError):
                continue
            ms = check(inst, fitted)
            if ms is not None:
                fitted_of[name] = fitted
                out.append(Candidate(f"{name}+fit_memory", fitted, ms, sched))
    ranked = []
    for name, sched in families.items():
        if stop():
            break
        if now() >= deadline:
            notes.append(f"families from {name!r} on not rematerialized optimally: start "
                         f"phase time over")
            break
        choices = _remat_choices(sched)
        left = deadline - now()
        if choices * BUILD_SECONDS_PER_CHOICE > left:
            notes.append(f"{name}: optimal remat skipped (about {choices} recompute choices, "
                         f"more to build than the {max(0.0, left):.1f} s left)")
            continue
        try:  # best's optimal remat, hinted with the fast fit (its polish is slow at size)
            r = optimal_remat(sched, K=K, budget_bytes=budget, backward=backward,
                              time_limit=max(0.1, min(per_family, deadline - now())),
                              hint=None if backward else fitted_of.get(name),
                              catch_sigint=False)
        except (RematError, ValueError) as exc:
            notes.append(f"{name}: {exc}")
            continue
        ranked.append(Entry(name, r))
        if r.schedule is not None:
            ms = check(inst, r.schedule)
            if ms is not None:
                out.append(Candidate(f"{name}+optimal_remat", r.schedule, ms))
    res = tuple(ranked)
    return out, notes, res


CAP_STEPS = 8
"""List-scheduler caps tried above ``K``: ``K + d v`` for ``d = 0 .. CAP_STEPS`` and no cap,
up to the unconstrained schedule's peak. Measured on the hidden-like set (docs/synthesis.md):
the best cap is often far above ``K`` (``K + 4v`` to ``K + 7v`` on the ``v = 2`` instances at
small ``K``): an order that keeps many microbatches in flight, fitted by recomputes, beats one
that holds fewer."""

POLISH_TOP = 4
"""How many of the best fitted candidates get :func:`~schedules.remat.fit_memory`'s polish
(recomputes moved earlier into idle time; measured 1-4 % shorter on the tight ``v = 2``
instances, about 0.1-0.3 s each at ``P m v = 512``)."""


def cap_step(K: int, v: int, top: Optional[int]) -> float:
    """The step between the list scheduler's caps above ``K' = max(K, v)``: ``v``, or
    ``(top - K') / (CAP_STEPS + 1)`` when that is wider (``top``: the unconstrained list
    schedule's peak), so that the :data:`CAP_STEPS` caps span ``K' .. top`` whatever the
    size. Measured at ``P = 32, v = 2`` (uncapped peak about 64, ``K`` 3 to 8): a cap within
    ``8 v`` of a small ``K`` holds too few microbatches in flight on each GPU (the reservation
    rule keeps ``v`` activations per microbatch entered), 2-16x the bound, while the
    uncapped schedule fitted by ``fit_memory`` is 1.11-1.14x."""
    lo = max(K, v)
    if top is None:
        return float(v)
    return max(float(v), (top - lo) / (CAP_STEPS + 1))


def _cap_order(K: int, v: int, top: int) -> list[Optional[int]]:
    """The caps ``K' + round(d step)`` (``K' = max(K, v)``, :func:`cap_step`) below ``top``
    (the unconstrained schedule's peak) and None (no cap), interleaved so that a short
    deadline still samples the range: no cap first (the tight cap alone can be many times the
    bound at small ``K``, :func:`cap_step`), ``K'``, then the middle, then the rest."""
    lo = max(K, v)
    step = cap_step(K, v, top)
    caps: list[Optional[int]] = list(dict.fromkeys(
        lo + round(d * step) for d in range(CAP_STEPS + 1) if lo + round(d * step) < top))
    if not caps:
        return [None]
    order: list[Optional[int]] = [None, caps[0]]
    rest = caps[1:]
    while rest:  # bisect the remaining range: middle first, then the halves
        mid = len(rest) // 2
        order.append(rest.pop(mid))
        rest = rest[mid:] + rest[:mid]
    return order


def free_peak(inst: Instance) -> Optional[int]:
    """The peak memory of the unconstrained list schedule of ``inst`` (default rule; None when
    it cannot be made): no cap above it changes the list scheduler's schedule."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.list_scheduler import list_schedule

    try:
        return max(simulate(list_schedule(inst.with_(K=None, memory=None),
                                          split=inst.split)).peak_memory)
    except (GeneratorError, ValueError):
        return None


FAMILY_PRIORITY = ("interleaved-short", "interleaved", "hanayo", "interleaved-zb", "1f1b", "zbv",
                   "dualpipev", "zb-h1", "zb-h2", "v-half", "v-min")
"""The families in the order they are generated when time is short: by how often each was
the best family of the atlas (docs/atlas.md, *Best family per memory*), ``interleaved-short``
first (added after the atlas ran: never slower than ``interleaved`` and lighter, so it leads
where time is short); the others after, in
:data:`schedules.generators.GENERATORS`' order. At 50k ops (``P = 32, m = 256, v = 2``)
generating every family takes about 5 CPU seconds."""


FAMILY_PRIORITY_SPLIT = ("interleaved-zb", "zbv", "dualpipev", "zb-h2", "zb-h1",
                         "interleaved-short", "interleaved", "hanayo", "1f1b", "v-half", "v-min")
"""The order for a split backward: the split families first, by how often each is the one
best family of the atlas's split (instance, K) pairs of ``P >= 8`` (ties left out; the
pairs above every other family's peak, where only GPipe and looped BFS remain, left out):
looped ``interleaved-zb`` 641 against ``interleaved`` 544; V-shape ``zbv`` 484,
``dualpipev`` 332, ``v-min`` 34, ``v-half`` 30, ``hanayo`` none; ``v = 1`` ``zb-h2`` 318,
``1f1b`` 143, ``zb-h1`` 122. Under :data:`FAMILY_PRIORITY` a short limit at ``P = 32``
generated only ``hanayo`` on the V-shape placement, and on 296 of the 361 split V-shape
frontier pairs of ``P = 32`` the synthesis at 2 CPU s was longer than the best family
(docs/synthesis.md, *Stop 45*)."""


def family_priority(inst: Instance) -> tuple[str, ...]:
    """The families in the order the synthesis generates them: :data:`FAMILY_PRIORITY_SPLIT`
    for a split backward, else :data:`FAMILY_PRIORITY`, then the others in
    :data:`schedules.generators.GENERATORS`' order."""
    from schedules.generators import GENERATORS

    first = FAMILY_PRIORITY_SPLIT if inst.split else FAMILY_PRIORITY
    return tuple([f for f in first if f in GENERATORS] +
                 [f for f in GENERATORS if f not in first])


def ranked_families(inst: Instance, deadline: float, stop=lambda: False,
                    now: Callable[[], float] = time.monotonic) -> dict[str, Schedule]:
    """The natural schedules of the families that apply to ``inst`` (as
    :func:`pipebounds.services.best.family_schedules`), generated in :func:`family_priority`
    order until ``deadline`` on the clock ``now`` (the first one in any case)."""
    from pipebounds.services.best import family_schedules

    names = family_priority(inst)
    out: dict[str, Schedule] = {}
    for name in names:
        if out and (now() >= deadline or stop()):
            break
        got, _ = family_schedules(inst, only=(name,))
        out.update(got)
    return out


def _fitted(inst: Instance, sched: Schedule, K: Optional[int], above: bool
            ) -> Optional[Candidate]:
    """A list schedule as a candidate: rematerialized to ``K`` by ``fit_memory`` when its cap
    was ``above`` ``K`` (the unfitted schedule kept as the candidate's base), validated by
    :func:`check` (or by the fit's own simulation, when it ran on ``inst``); None when it
    cannot be fitted or is not valid."""
    from schedules.remat import RematError, fit_memory_simulated

    base = None
    if K is not None and above:
        base = sched
        try:
            sched, res = fit_memory_simulated(sched, K, polish=False)
        except RematError:
            return None
        if sched.instance == inst:  # fit_memory validated it on this very instance
            return Candidate(sched.source, sched, res.makespan, base) if res.valid else None
    ms = check(inst, sched)
    return None if ms is None else Candidate(sched.source, sched, ms, base)


def list_candidates(inst: Instance, K: Optional[int], deadline: float,
                    byte_caps: Optional[list[int]] = None,
                    stop=lambda: False, target: Optional[Fraction] = None,
                    now: Callable[[], float] = time.monotonic,
                    top: Optional[int] = None) -> list[Candidate]:
    """List schedules for every rule of :data:`RULES`, ``hold_forward`` off and on, and caps
    from ``K`` up (:func:`_cap_order`; count model) or ``byte_caps`` (a bytes budget: caps
    that fit it), until ``deadline`` or ``stop()``; the first valid one is made in any case (a
    short time limit still gets a schedule: each takes milliseconds to a second at the ops
    limits). At ``v >= 2`` the first :func:`remat_head` entries of the rematerializing list
    scheduler's grid come first. A schedule under a cap above ``K`` is fitted by
    :func:`~schedules.remat.fit_memory` (no polish here: :func:`polish_candidates`). Returns
    early once a candidate's makespan is at most ``target`` (a lower bound: optimal).
    ``top``: :func:`free_peak` when the caller has it (else computed here)."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.list_scheduler import list_schedule

    v = inst.v
    free = inst.with_(K=None, memory=None)
    caps: list[Optional[int]]
    if byte_caps is not None:
        caps = list(byte_caps)
    elif K is None:
        caps = [None]
    else:
        if top is None and now() < deadline:  # the unconstrained list schedule's peak: no
            top = free_peak(inst)                # cap above it changes anything
        if top is None:
            top = max(K, v) + CAP_STEPS * v + 1
        caps = _cap_order(K, v, top)
    out: list[Candidate] = []
    if byte_caps is None:  # v >= 2: the best order of the rematerializing list scheduler first
        for prm in _grid(inst)[:remat_head(inst, K)]:
            got = _remat_list_one(inst, K, prm) if K is not None else None
            if got is not None:
                out.append(got)
                if target is not None and got.makespan <= target:
                    return out
    head = len(out)  # the list rules still make their first valid schedule in any case
    rules: dict[str, Callable[[Op, int], tuple]] = dict(RULES)
    if v >= 2:
        rules = {"wave": wave_rule(inst), **rules}
    for cap in caps:
        for name, key in rules.items():
            for hold in (False, True):
                if len(out) > head and (now() > deadline or stop()):
                    return out  # one valid schedule at least, whatever the time left
                try:
                    sched = list_schedule(free, cap=None if cap is None else [cap] * inst.P,
                                          split=inst.split, key=key, hold_forward=hold,
                                          source=f"list[{name}{',hold' if hold else ''},"
                                                 f"cap={'inf' if cap is None else cap}]")
                except GeneratorError:
                    continue
                got = _fitted(inst, sched, K, cap is None or (K is not None and cap > K))
                if got is not None:
                    out.append(got)
                    if target is not None and got.makespan <= target:
                        return out
    return out


GROUPS = 4
""":func:`grouped_candidates`: how many round sizes, from the largest whose peak fits ``K``."""


def grouped_candidates(inst: Instance, K: Optional[int], deadline: float,
                       stop=lambda: False, now: Callable[[], float] = time.monotonic
                       ) -> list[Candidate]:
    """Interleaved schedules with rounds of ``g`` microbatches (peak ``(v-1) g + P`` on GPU
    0), fitted to ``K`` by :func:`~schedules.remat.fit_memory` (no polish here), for the
    :data:`GROUPS` sizes from ``g0 = floor((K - P) / (v - 1))`` (the largest that fits ``K``
    without recomputes; at least ``floor(P/2)``, the smallest without a deadlock) up, until
    ``deadline`` (the first one in any case): fused, ``interleaved-short`` with smaller rounds
    (:func:`schedules.generators.interleaved.interleaved_grouped`, ``g < P``); split,
    interleaved zero bubble with those rounds and GPU ``p`` deferring ``floor(p/2)`` of its
    ``W`` (:func:`schedules.generators.zero_bubble.interleaved_zb`, ``g <= P``). Empty unless
    ``K`` binds below the schedules' peak on a looped ``v >= 2`` instance in one direction
    without F&B ops or a byte budget.

    Measured (2026-12-05, before they joined the synthesis; library calls), against the
    frontier sweep's synthesized schedule (2 CPU s) on the looped ``v = 2`` frontier pairs of
    the atlas (``P <= 16`` and 60 of ``P = 32``), the best of them is shorter on 114 of 411
    fused pairs (within 2 % of the bound on 2; ``P = 16, m = 64, f = b = 1, K = 24``: 302
    with ``group = 8`` and no recompute, against 318, bound 286) and on 139 of 337 split
    pairs (within 2 % on 20); all of them take 0.003 (``P = 2``) to 0.48 (``P = 32``, at
    most 1.3) CPU s a pair."""
    from schedules.generators.common import GeneratorError, has_placement
    from schedules.generators.interleaved import interleaved_grouped
    from schedules.generators.zero_bubble import interleaved_zb

    P, v = inst.P, inst.v
    if (K is None or v < 2 or inst.directions != 1 or inst.overlapped
            or (inst.memory is not None and inst.memory.budget is not None)
            or not has_placement(inst, "looped") or K >= v * P):
        return []
    free = inst.with_(K=None, memory=None)
    g0 = min(P, max(1, P // 2, (K - P) // (v - 1)))
    half = [p // 2 for p in range(P)]
    out: list[Candidate] = []
    for g in range(g0, min(P + (1 if inst.split else 0), g0 + GROUPS)):
        if out and (now() > deadline or stop()):
            break
        try:
            sched = (interleaved_zb(free, group=g, deferred=half) if inst.split
                     else interleaved_grouped(free, g))
        except GeneratorError:
            continue
        got = _fitted(inst, sched, K, True)
        if got is not None:
            out.append(got)
    return out


BLOCK_CAPS = (16, 2, 8, 0, 4)
""":func:`block_candidates`: the list scheduler's caps ``max(K, v) + d`` tried with the block's
times as priorities, in the order of how often each ``d`` gave the best of them on the
measured pairs (16, 16, 14, 9 and 9 of 142)."""


def block_candidates(inst: Instance, K: Optional[int], deadline: float,
                     stop=lambda: False, now: Callable[[], float] = time.monotonic
                     ) -> list[Candidate]:
    """The fused V-shape building block and list schedules ranked by it, fitted to ``K``.

    The block (:func:`schedules.generators.building_block.block_schedule` with no gaps: each
    op of microbatch 0 as early as its predecessor and the period ``T = 2 (f + b)`` allow,
    microbatch ``j`` shifted by ``j T``) holds ``P + 2`` activations on a GPU and takes ``T m +
    2 S - 2`` at ``f = b = 1`` (measured, ``P = 2 .. 32``, ``m = 8P``): the steady state at full
    rate, a fill and drain of one round trip; more memory with ``b > f`` (peaks 12, 22, 44 at
    ``P = 8, 16, 32``, ``f = 1, b = 2``), the period growing where the ops do not tile it.
    Then :func:`~schedules.generators.list_scheduler.list_schedule` with the key ``start(s, k)
    + j T`` (the op's time in the repeated block) under the caps ``max(K, v) + d``, ``d`` in
    :data:`BLOCK_CAPS`: with room above the block's peak it runs forwards into the fill's idle
    time. Each is fitted to ``K`` by
    :func:`~schedules.remat.fit_memory` (no polish here), until ``deadline`` (the block in any
    case). Empty unless ``K`` is set on a fused ``v = 2`` V-shape instance in one direction
    without F&B ops or a byte budget (on the looped and split frontier pairs the fitted block
    was never shorter: measured below; split V-shape has the block as V-Min).

    Measured (2026-12-05, library calls, against the frontier sweep's synthesized schedule of
    2 CPU s at synthesis version 649e292e05f0), on the 554 fused V-shape frontier pairs: shorter
    on 152 (106 at ``P = 32``, 42 at ``P = 16``), the block alone on 78 of them; ``P = 32, m =
    256, f = b = 1, K = 34``: the block 1150 with no recompute, against 1358 (Hanayo fitted;
    bound 1116). On the 823 looped fused and 170 split V-shape pairs the fitted block was
    shorter on none. About 0.01 (``P = 8``) to 0.9 (``P = 32``) CPU s a pair."""
    from schedules.generators.building_block import block_schedule, block_times
    from schedules.generators.common import GeneratorError, has_placement
    from schedules.generators.list_scheduler import list_schedule

    if (K is None or inst.v != 2 or inst.split or inst.directions != 1 or inst.overlapped
            or (inst.memory is not None and inst.memory.budget is not None)
            or not has_placement(inst, "vshape")):
        return []
    free = inst.with_(K=None, memory=None)
    out: list[Candidate] = []
    got = _fitted(inst, block_schedule(free, source="block"), K, True)
    if got is not None:
        out.append(got)
    start, period = block_times(free)

    def key(op: Op, gpu: int) -> tuple:
        return (start[op.stage, op.kind] + op.microbatch * period,)

    for d in BLOCK_CAPS:
        if (out and now() > deadline) or stop():
            break
        cap = max(K, inst.v) + d
        try:
            sched = list_schedule(free, cap=[cap] * inst.P, key=key,
                                  source=f"list[block,cap={cap}]")
        except GeneratorError:
            continue
        got = _fitted(inst, sched, K, cap > K)
        if got is not None:
            out.append(got)
    return out


def polish_candidates(inst: Instance, K: int, cands: list[Candidate], deadline: float,
                      top: int = POLISH_TOP, stop=lambda: False,
                      now: Callable[[], float] = time.monotonic) -> list[Candidate]:
    """The ``top`` best candidates that were fitted by :func:`~schedules.remat.fit_memory`
    without polish, fitted again with it (until ``deadline``); those that got shorter."""
    from schedules.deadline import Deadline
    from schedules.remat import RematError, fit_memory

    out: list[Candidate] = []
    fitted = sorted((c for c in cands if c.base is not None), key=lambda c: c.makespan)
    for c in fitted[:top]:
        left = deadline - now()
        if left <= 0 or stop():
            break
        try:
            sched = fit_memory(c.base, K, polish=True, deadline=Deadline.after(left))
        except (RematError, ValueError):
            continue
        ms = check(inst, sched)
        if ms is not None and ms < c.makespan:
            out.append(Candidate(c.source + "+polish", sched, ms))
    return out


@dataclass(frozen=True)
class Rule:
    """A searched priority rule for the list scheduler: the key of op ``o`` of microbatch ``j``
    on GPU ``p`` is ``a_o(p) + beta j + gamma c / S`` (smallest first; ties by microbatch),
    where ``c`` is the op's position on its microbatch's chain (``s`` for ``F(j,s)``,
    ``2S - 1 - s`` for its backward and ``W``) and ``a_o(p)`` a per-kind offset, linear in the
    GPU: ``a_F + eta p / P`` for forwards, ``a_W + omega p / P`` for ``W``, 0 for the backward.
    ``beta`` spaces the microbatches (how many are in flight), ``gamma`` favours ops near the
    loss or near the input, the offsets place forwards and deferred ``W`` against the
    backwards, and their slopes let the warm-up differ by GPU (1F1B's ``P - p`` microbatches).
    The four fixed rules of :data:`RULES` are corners of this family."""

    a_F: float
    a_W: float
    beta: float
    gamma: float
    S: int
    eta: float = 0.0
    omega: float = 0.0
    P: int = 1

    def __call__(self, op: Op, gpu: int) -> tuple:
        c = op.stage if op.kind == "F" else 2 * self.S - 1 - op.stage
        x = gpu / self.P
        a = (self.a_F + self.eta * x if op.kind == "F" else
             self.a_W + self.omega * x if op.kind == "W" else 0.0)
        return (a + self.beta * op.microbatch + self.gamma * c / self.S, op.microbatch)

    def describe(self) -> str:
        return (f"rule(F{self.a_F:+.2f}{self.eta:+.2f}p,W{self.a_W:+.2f}{self.omega:+.2f}p,"
                f"j*{self.beta:.2f},c*{self.gamma:+.2f})")

    @classmethod
    def random(cls, rng: Random, S: int, P: int = 1) -> "Rule":
        slopes = rng.random() < 0.5
        return cls(rng.uniform(-3, 3), rng.uniform(0, 6), rng.uniform(0.3, 3),
                   rng.uniform(-4, 4), S, rng.uniform(-3, 3) if slopes else 0.0,
                   rng.uniform(-3, 3) if slopes else 0.0, P)

    def near(self, rng: Random, scale: float) -> "Rule":
        """A perturbation of this rule (Gaussian steps of ``scale`` times each range)."""
        g = rng.gauss
        return replace(self, a_F=self.a_F + g(0, 1.5 * scale), a_W=self.a_W + g(0, 1.5 * scale),
                       beta=max(0.05, self.beta + g(0, 0.7 * scale)),
                       gamma=self.gamma + g(0, 2 * scale), eta=self.eta + g(0, 1.5 * scale),
                       omega=self.omega + g(0, 1.5 * scale))


def wave_rule(inst: Instance) -> Rule:
    """The *wave* rule of the multi-wave list schedules: :class:`Rule` with ``beta = 4 / P``,
    ``gamma = 4``, ``eta = -2`` (``a_F = a_W = omega = 0``), so the key of an op at chain
    position ``c`` of microbatch ``j`` on GPU ``p`` is ``4 (j / P + c / S)``, less ``2 p / P``
    for a forward: microbatch ``j + P`` ranks with microbatch ``j`` one leg (``S`` chain
    positions) further on, and the later GPUs start their forwards earlier.

    Found by the rule search (:func:`searched_candidates`) on ``P = 32, m = 128, v = 2``
    vshape, ``f = 1, b = 2`` and simplified. Measured (not proven), without a cap, fused,
    ``v = 2`` vshape: its makespan equals :func:`bounds.lower_bound` without a memory limit on
    all 1,425 instances with ``2 <= P <= 16``, ``2P <= m <= 4P`` and ``f : b`` in
    ``1 : 1, 1 : 3/2, 1 : 2, 2 : 3, 11.57 : 23.53`` (there Hanayo is ``(P - 1) f`` or more
    longer), at a peak of at most ``3P`` (``3P - 1`` at ``P = 2, 4, 8, 16``) when
    ``f <= b <= 2f``, and ``4P - 2`` at ``11.57 : 23.53``; with ``b < f`` it is a few per cent
    above the bound. The synthesis tries it first among the list rules at ``v >= 2``."""
    return Rule(0.0, 0.0, 4 / inst.P, 4.0, inst.S, -2.0, 0.0, inst.P)


def _tilted_caps(lo: int, v: int, step: int, tilt: float, P: int,
                 inc: Optional[float] = None) -> Optional[list[int]]:
    """Per-GPU caps ``lo + v round(inc step (1 - tilt p / (P - 1)) / v)`` (``inc``: the cap
    step, :func:`cap_step`, default ``v``; None: ``step`` past :data:`CAP_STEPS`, no cap):
    ``tilt`` in ``[0, 1]`` takes the extra in-flight microbatches away from the later GPUs,
    which need fewer (1F1B holds ``P - p`` on GPU ``p``)."""
    if step > CAP_STEPS:
        return None
    inc = float(v) if inc is None else inc
    return [lo + v * round(inc * step * (1 - tilt * p / max(1, P - 1)) / v) for p in range(P)]


PATIENCE = 500
""":func:`searched_candidates` stops after this many restarts without a shorter schedule
(tiny instances: well under a second)."""


def searched_candidates(inst: Instance, K: Optional[int], deadline: float, seed: int = 0,
                        stop=lambda: False, target: Optional[Fraction] = None,
                        patience: int = PATIENCE, restart: bool = False,
                        now: Callable[[], float] = time.monotonic,
                        top: Optional[int] = None) -> list[Candidate]:
    """The list scheduler under searched priority rules (:class:`Rule`) and caps (``K`` up to
    ``K + CAP_STEPS v`` or none, fitted by :func:`~schedules.remat.fit_memory`), many restarts
    until ``deadline``: a third drawn at random, the rest perturbations of the best so far
    (hill climbing over the rule's parameters, the cap and ``hold_forward``); it stops early
    at ``target`` (a lower bound) or after ``patience`` restarts without a shorter schedule
    (``restart``: the climb starts again from random rules instead, until ``deadline``).
    Returns the best few distinct candidates found (each valid under the limit). ``top``
    (:func:`free_peak`): the caps' step is :func:`cap_step` (default ``v``)."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.list_scheduler import list_schedule

    rng = Random(seed)
    v, S = inst.v, inst.S
    free = inst.with_(K=None, memory=None)
    lo = v if K is None else max(K, v)
    steps = 0 if K is None else CAP_STEPS + 1  # step CAP_STEPS + 1: no cap
    inc = cap_step(lo, v, top)
    best: Optional[tuple] = None  # (makespan, rule, step, tilt, hold)
    found: list[Candidate] = []
    n = last = 0
    while now() < deadline and not stop():
        if best is not None and target is not None and best[0] <= target:
            break
        if n - last >= patience:
            if not restart:
                break
            best, last = None, n  # a new climb (the candidates found so far are kept)
        n += 1
        if best is None or rng.random() < 0.35:
            rule, step, hold = (Rule.random(rng, S, inst.P), rng.randrange(steps + 1),
                                 rng.random() < 0.5)
            tilt = 0.0 if rng.random() < 0.5 else rng.random()
        else:
            _, rule, step, tilt, hold = best
            rule = rule.near(rng, rng.choice((0.1, 0.3, 1.0)))
            if rng.random() < 0.3:
                step = min(steps, max(0, step + rng.choice((-1, 1))))
            if rng.random() < 0.3:
                tilt = min(1.0, max(0.0, tilt + rng.gauss(0, 0.25)))
            if rng.random() < 0.2:
                hold = not hold
        caps = _tilted_caps(lo, v, step, tilt, inst.P, inc) if K is not None else None
        label = "inf" if caps is None else (str(caps[0]) if len(set(caps)) == 1
                                            else ":".join(map(str, caps)))
        try:
            sched = list_schedule(free, cap=caps, split=inst.split, key=rule, hold_forward=hold,
                                  source=f"list[{rule.describe()}{',hold' if hold else ''},"
                                         f"cap={label}]")
        except GeneratorError:
            continue
        got = _fitted(inst, sched, K, caps is None or (K is not None and max(caps) > K))
        if got is None:
            continue
        ms = got.makespan
        if best is None or ms <= best[0]:
            if best is None or ms < best[0]:
                if not found or ms < min(c.makespan for c in found):
                    last = n
                found.append(got)
            best = (ms, rule, step, tilt, hold)
    return sorted(found, key=lambda c: c.makespan)[:POLISH_TOP]


REMAT_LIST_GRID: dict[str, tuple[tuple, ...]] = {
    "v1": ((8, 0, 2, None, 0, None), (16, None, 2, None, 0, -2), (8, 1, 2, 2, 0, None),
           (2, 0, 1, None, 0, None), (8, None, 1, None, 0, None), (0, 0, 1, None, 0, None)),
    "v1-split": ((8, None, 3, None, 1, None), (8, None, 1, None, 1, None),
                 (0, None, 1, None, 1, None), (2, 0, 1, None, 2, None)),
    "v2": ((0, None, 2, None, 0, 0, 1, 0.5), (0, None, 1, 1, 0, 4),
           (0, None, 2, 1, 0, 0, None, 0), (8, 0, 1, 1, 0, None),
           (0, None, 2, 2, 0, 0, None, 0.5), (0, None, 2, 2, 0, None),
           (16, None, 1, 2, 0, -2), (8, None, 2, 2, 0, -4), (8, None, 1, 2, 0, None),
           (2, None, 2, 2, 0, 0)),
    "v2-split": ((0, None, 2, 1, 1, 0, None, 0), (2, None, 2, 2, 1, None),
                 (0, None, 2, None, 1, 0, 1, 0), (0, None, 2, 2, 1, 0), (0, None, 2, 2, 0, None),
                 (0, None, 2, 2, 0, 0, None, 0.5), (8, None, 2, 2, 0, -4),
                 (16, None, 1, 2, 0, -2), (0, None, 1, 1, 1, 0), (8, None, 2, 2, 1, None)),
}
"""Parameters of :func:`schedules.generators.remat_list.remat_list_schedule` tried by
:func:`remat_list_candidates`, in this order: ``(extra window, extra eager or None, lookahead,
A or None, w_room, extra eager pairs or None[, group, keep_first])`` over
:func:`natural_window` and :func:`natural_pairs`; ``group``: None, or ``g`` for Megatron's
looped order in groups of ``g P`` microbatches (its window ``g P`` wider);
``keep_first``: None, or the share of ``K`` the forwards of a GPU's earlier stages may keep
(rounded down). Split instances try their own list first, then the fused one's. The best
measured on frontier pairs at ``P = 8`` (docs/synthesis.md, *Rematerializing list
scheduler*): at ``v = 1`` a wide window with 1F1B's rhythm (warm-up, then one forward per
backward), recomputes in the bubbles; at ``v = 2`` interleaved's order (``A = 1, 2``). The
``v = 2`` entries with ``group`` or ``keep_first`` (*The v = 2 orders*): the best of a sweep
over the orders (looped, ``A = 1, 2, 3``) and the keep limits on 45 frontier pairs at
``P = 8, 16, 32``; the ``v = 2`` lists are in the greedy order of that sweep (old entries
included), except that the old first split entry stays second: at ``P = 16, 32`` the remat
phase has time for one entry after the head, and it is the best at large ``K`` there
(``P = 16, m = 128`` split ``K = 29``: 1.0013)."""


REMAT_LIST_HEAD: dict[tuple[str, bool], tuple] = {
    ("looped", False): (0, None, 2, None, 0, 0, 1, 0.5),
    ("looped", True): (0, None, 2, 1, 1, 0, None, 0),
    ("vshape", True): (0, None, 2, 2, 1, 0),
}
"""The first entry of :func:`_grid` at ``v >= 2`` per (placement, split form): the best on the
large pairs of the sweep (``S m >= HEAD_PAIRS``) where the remat phase has time for one or two
entries, measured against the families and list rules there (docs/synthesis.md, *The v = 2
orders*): the looped order keeping half of ``K`` for the earlier chunk (looped, fused),
``A = 1`` keeping none of it (looped, split), ZB-V's ``A = 2`` (V-shape, split). None at
V-shape fused, where Hanayo fitted by ``fit_memory`` is better on every large pair."""

HEAD_PAIRS = 2048
""":func:`remat_head`: the head entry runs first (in :func:`list_candidates`) from ``S m`` this
many pairs (``P = 16, m = 64`` at ``v = 2``, 0.05-0.1 CPU s per schedule); below, the remat
phase runs most of the grid within its share anyway."""


def _head(inst: Instance) -> Optional[tuple]:
    """The :data:`REMAT_LIST_HEAD` entry of ``inst`` (None at ``v = 1`` or an explicit
    placement that is neither named one)."""
    from schedules.instance import placement_stage_to_rank

    if inst.v < 2 or inst.placement not in ("looped", "vshape") or tuple(
            inst.stage_to_rank) != placement_stage_to_rank(inst.P, inst.v, inst.placement):
        return None
    return REMAT_LIST_HEAD.get((inst.placement, inst.split))


def _grid(inst: Instance) -> tuple[tuple, ...]:
    key = "v1" if inst.v == 1 else "v2"
    grid = (REMAT_LIST_GRID[key + "-split"] if inst.split else ()) + REMAT_LIST_GRID[key]
    head = _head(inst)
    return tuple(dict.fromkeys(((head,) if head is not None else ()) + grid))


def remat_list_candidates(inst: Instance, K: Optional[int], deadline: float,
                          stop=lambda: False, target: Optional[Fraction] = None,
                          now: Callable[[], float] = time.monotonic,
                          skip: int = 0) -> list[Candidate]:
    """Rematerializing list schedules (:mod:`schedules.generators.remat_list`) of ``inst``
    under ``K`` for the parameters of :data:`REMAT_LIST_GRID` until ``deadline`` on the clock
    ``now`` (the first one in any case); each within ``K`` by construction, validated by
    :func:`check`. Empty when ``K`` is None or the instance has a byte budget, two directions
    or F&B ops. Returns early at ``target`` (a lower bound). ``skip``: the first entries are
    left out (:func:`remat_head`: :func:`list_candidates` made them)."""
    if not _remat_list_applies(inst, K):
        return []
    out: list[Candidate] = []
    for prm in _grid(inst)[skip:]:
        if out and (now() > deadline or stop()):
            break
        got = _remat_list_one(inst, K, prm)
        if got is not None:
            out.append(got)
            if target is not None and got.makespan <= target:
                break
    return out


def _remat_list_applies(inst: Instance, K: Optional[int]) -> bool:
    """The rematerializing list scheduler applies: a count limit ``K``, one direction, no F&B
    ops, no byte budget."""
    return K is not None and inst.directions == 1 and not inst.overlapped and (
        inst.memory is None or inst.memory.budget is None)


def remat_head(inst: Instance, K: Optional[int]) -> int:
    """How many entries of :func:`_grid` :func:`list_candidates` runs first (and
    :func:`remat_list_candidates` may skip): one, the :data:`REMAT_LIST_HEAD` entry, at
    ``v >= 2`` from :data:`HEAD_PAIRS` pairs on (made before the families and the list rules,
    it is there even when a short limit at ``P = 32`` leaves no time for the remat phase),
    else none."""
    big = inst.S * inst.m >= HEAD_PAIRS
    return 1 if big and _head(inst) is not None and _remat_list_applies(inst, K) else 0


def _remat_list_one(inst: Instance, K: int, prm: tuple) -> Optional[Candidate]:
    """The rematerializing list schedule of ``inst`` for one entry ``prm`` of
    :data:`REMAT_LIST_GRID`, validated by :func:`check`; None when it fails."""
    from schedules.generators.common import GeneratorError
    from schedules.generators.remat_list import (natural_pairs, natural_window,
                                                 remat_list_schedule)

    nat = [natural_window(inst, p) for p in range(inst.P)]
    pairs = [natural_pairs(inst, p) for p in range(inst.P)]
    ex, eg, la, A, wr, ep, *more = prm
    g, share = (tuple(more) + (None, None))[:2]
    G = None if g is None else g * inst.P
    kf = None if share is None else int(share * K)
    src = (f"remat-list[w+{ex},eager{'' if eg is None else f'+{eg}'},la={la},"
           f"{f'looped={G}' if G is not None else 'A=S' if A is None else f'A={A}'}"
           f"{f',wr={wr}' if wr else ''}"
           f"{'' if ep is None else f',pairs{ep:+d}'}"
           f"{'' if kf is None else f',kf={kf}'}]")
    try:
        sched = remat_list_schedule(
            inst, K, window=[w + ex + (G or 0) for w in nat],
            eager=None if eg is None else [w + eg for w in nat], lookahead=la,
            A=None if G is not None else A, w_room=wr,
            eager_pairs=None if ep is None else [max(1, w + ep) for w in pairs],
            group=G, keep_first=None if kf is None else [kf] * inst.P, source=src)
    except GeneratorError:
        return None
    ms = check(inst, sched)
    return None if ms is None else Candidate(src, sched, ms)
