"""The exact ``K = 1`` engine (issue 25): deepening over a complete single-slot decision search.

The class it is exact for (:func:`in_class`): fused backward, ``v = 1``, ``K = 1``, uniform
durations, no communication delay, one direction, no byte budget, no overlapped ops. For a
makespan ``T`` (integer units of ``1 / inst.unit``) the *decision* :func:`decide` runs the
chronological depth-first search of
:func:`pipebounds.constructions.single_wave.slot_search._bounded_search` with its rules
unrestricted (every forward and recompute candidate, waits allowed everywhere), except that the
last GPU only keeps: docs/theory.md, A.6 "An exact engine for `K = 1`", proves that

* **L8 (last GPU keeps)**: some optimal schedule has no recomputation on GPU ``P - 1``;
* **L9 (the tree is complete)**: every semi-active ``K = 1`` schedule whose last GPU keeps
  is, up to relabelling interchangeable microbatches, a leaf of the tree;
* **L10 (the pruning is sound)**: a pruned node has no completion ending by ``T`` (Theorem 3's
  argument on the rest of a GPU's window, L1's latest backward end);
* **L11 (searched-out nodes are remembered)**: a node with the key (clocks and the multiset
  of microbatch states with their frontier ends) of a searched-out node has no completion
  ending by ``T`` either, so it is not expanded again;
* **L12 (dominated nodes are cut)**: nor has a node in the same microbatch states whose
  clocks and frontier ends are componentwise at least those of a searched-out node
  (:class:`~pipebounds.constructions.single_wave.slot_search.DominanceMemo`);
* **L13 (recomputed holds)**: L10's hold bound (the wait for the backward below, filled only by
  free forwards) applies to a recomputed pair in the slot as to a kept one.

So a searched-out tree proves ``OPT > T``, and a leaf is a schedule ending by ``T``.
:func:`solve_single_slot` starts at the theory's bound (T3d, when ``use_theory``; otherwise at
0, where the search's root check refutes every ``T`` below T1 at no cost: ``OPT`` then rests on
the search alone), refutes ``T`` upwards until a decision finds a schedule (``optimal``: every
smaller makespan was refuted; or, at ``T`` = T3, the construction reaches it) or runs out of
nodes or time (``feasible`` with the best known schedule, or ``unknown``; the lower bound is
the last refuted ``T`` plus one).

>>> from schedules import Instance
>>> r = solve_single_slot(Instance(P=3, m=12, K=1, f=5, b=3))   # T3 = 144 < OPT = T3d = 146
>>> r.status, r.makespan, r.stats["refuted"]
('optimal', Fraction(146, 1), [])
>>> r = solve_single_slot(Instance(P=3, m=12, K=1, f=7, b=4))   # T3d = 201 < OPT = 202
>>> r.status, r.makespan, r.stats["refuted"]
('optimal', Fraction(202, 1), [201])
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from schedules.deadline import NO_DEADLINE, Deadline
from schedules.errors import InputError
from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule

from .backend import FunctionBackend, SolveOptions, register
from .channel import SILENT, Channel
from .proof import ceil_units, checked, plain_problems, status_of, theory_guard
from .result import SolveResult

DEFAULT_NODES = 2_000_000
"""Node budget of one decision when the caller gives none (about 40 s of CPU time at the
measured 50 000 nodes per second; benchmarks/single_slot_engine.py)."""


def class_problems(inst: Instance) -> list[str]:
    """Why ``inst`` is outside the engine's class (empty: inside). The class: fused backward,
    ``v = 1``, ``K = 1``, uniform durations, ``c = 0``, one direction, no byte budget, no
    overlapped ``F&B`` ops."""
    out = []
    if inst.split:
        out.append("split backward")
    if inst.v != 1:
        out.append("v != 1")
    if inst.K != 1:
        out.append("K != 1")
    return out + plain_problems(inst)


def in_class(inst: Instance) -> bool:
    """Whether the engine's exactness proof (docs/theory.md A.6, L8-L10) covers ``inst``.

    >>> in_class(Instance(P=4, m=8, K=1, f=1, b=2)), in_class(Instance(P=4, m=8, K=2))
    (True, False)
    """
    return not class_problems(inst)


@dataclass(frozen=True)
class Decision:
    """The outcome of :func:`decide` at makespan ``T`` (integer units): ``orders`` (per GPU,
    ``(kind, microbatch)``) of a schedule ending by ``T``, or None; ``refuted`` True when the
    whole tree was searched without a leaf (a proof that ``OPT > T``); ``nodes`` used."""

    T: int
    orders: Optional[list]
    refuted: bool
    nodes: int


def decide(inst: Instance, T: int, nodes: int = DEFAULT_NODES,
           deadline: Deadline = NO_DEADLINE, dominance: bool = True) -> Decision:
    """Is there a schedule of ``inst`` (in the class) ending by ``T`` units? The complete
    single-slot tree (L9) with the last GPU keeping (L8), Theorem 3's pruning (L10) and the memo
    of searched-out nodes up to dominance (L11, L12; ``dominance`` False: the exact-key memo of
    L11 alone), next to the 16 narrow trees of
    :data:`~pipebounds.constructions.single_wave.slot_search.NARROW` (incomplete: a leaf is a
    schedule, a searched-out narrow tree proves nothing and is dropped), at most about ``nodes``
    nodes in all, stopping at ``deadline``. In rounds whose budget doubles from ``nodes / 32``,
    the complete tree gets half of each round and the narrow trees left share the other half;
    every tree keeps its own memo from round to round, so a restart from the root skips the
    subtrees searched out before. Only a searched-out *complete* tree refutes ``T``.

    >>> inst = Instance(P=3, m=12, K=1, f=5, b=3)
    >>> decide(inst, 145).refuted, decide(inst, 146).orders is not None
    (True, True)
    """
    from pipebounds.constructions.single_wave.slot_search import (
        NARROW, DominanceMemo, _bounded_search)

    u = inst.unit
    P, m, f, b = inst.P, inst.m, int(inst.f * u), int(inst.b * u)
    complete: dict[str, Any] = dict(width_f=m, width_r=m, always_wait=True, last_free=False,
                                    check_all=True)
    new_memo = DominanceMemo if dominance else set
    trees: list[tuple[dict[str, Any], Any]] = [(complete, new_memo())]
    trees += [(dict(config), new_memo()) for config in NARROW]
    spent, round_ = 0, max(2, nodes // 32)
    while spent < nodes and not deadline.expired():
        narrow = len(trees) - 1
        for config, memo in list(trees):
            if spent >= nodes or deadline.expired():
                break
            share = round_ // 2 if config is complete else round_ // (2 * narrow)
            budget = max(1, min(share, nodes - spent))
            orders, used = _bounded_search(P, m, f, b, T, budget, deadline=deadline,
                                           memo=memo, **config)
            spent += min(used, budget)
            if orders is not None:
                return Decision(T, orders, False, spent)
            if used <= budget:  # searched out
                if config is complete:
                    return Decision(T, None, True, spent)
                trees.remove((config, memo))
        round_ *= 2
    return Decision(T, None, False, spent)


def _schedule(inst: Instance, orders: list) -> Schedule:
    return Schedule(inst, tuple(tuple(Op(p, k, j) for k, j in o) for p, o in enumerate(orders)),
                    source="K=1 exact single-slot search (search.single_slot)")


def solve_single_slot(inst: Instance, options: SolveOptions = SolveOptions(),
                      channel: Channel = SILENT, nodes: int = DEFAULT_NODES,
                      deadline: Optional[Deadline] = None,
                      dominance: bool = True) -> SolveResult:
    """An optimal schedule of ``inst`` (in the class of :func:`in_class`; otherwise
    :class:`~schedules.errors.InputError`) by refuting makespans upwards (module docstring).

    ``options``: ``time_limit`` (wall seconds, as every backend), ``use_theory`` (start at
    :func:`bounds.lower_bound`, which holds T3d; off: start at 0), ``use_known`` (at ``T`` = T3
    the construction
    :func:`~pipebounds.constructions.single_wave.single_slot_schedule`, which returns only a
    schedule of makespan T3, runs first, with half the time left: T3 being a proven bound, a
    hit is optimal; when the solve ends undecided the known schedules give the reported upper
    bound), ``incumbent``/``known``.
    ``nodes``: the budget of each decision. ``deadline``: in place of the one made from
    ``time_limit`` (e.g. a :class:`~schedules.deadline.CpuDeadline`, as the benchmark uses).
    ``dominance``: the decisions' memo cuts dominated nodes (L12; False: L11's exact keys
    only). ``stats``: ``refuted`` (the makespans proven
    impossible, in units), ``nodes``, ``cpu_seconds`` (``time.process_time``), ``independent``
    (no bound of ``bounds/`` used).
    """
    problems = class_problems(inst)
    if problems:
        raise InputError("the single_slot engine is exact only for fused backward, v = 1, "
                         f"K = 1, uniform durations, c = 0; this instance has {', '.join(problems)}")
    t0, c0 = time.perf_counter(), time.process_time()
    if deadline is None:
        deadline = Deadline.after(options.time_limit)
    u = inst.unit
    from .proof import theory_bound

    lb_theory = theory_bound(inst, options.use_theory, options.lb_theory)
    T = ceil_units(lb_theory, u)
    from bounds.single_wave import single_slot_value

    t3_units = ceil_units(single_slot_value(inst), u) if options.use_known else -1
    refuted: list[int] = []
    total = 0
    found: Optional[Schedule] = None
    known = options.known
    if options.incumbent is not None:
        sched = options.incumbent.with_instance(inst)
        known = (sched.source or "incumbent", sched, checked(inst, sched))
    while not deadline.expired() and not channel.stop():
        if known is not None and T >= ceil_units(known[2], u):
            break  # every makespan below the incumbent's is refuted: it is optimal
        if T == t3_units:  # the construction targets T3 exactly: a hit is optimal
            from pipebounds.constructions.single_wave import single_slot_schedule

            found = single_slot_schedule(inst, deadline=deadline.share(0.5))
            if found is not None:
                break
        dec = decide(inst, T, nodes, deadline, dominance)
        total += dec.nodes
        if dec.orders is not None:
            found = _schedule(inst, dec.orders)
            break
        if not dec.refuted:
            break
        refuted.append(T)
        channel.bound("single_slot", T + 1)
        T += 1
    lower = Fraction(T, u)
    best: Optional[tuple[str, Schedule, Fraction]] = None
    if found is not None:
        best = (found.source or "single_slot", found, checked(inst, found))
    elif known is not None:
        best = known
    elif options.use_known and not deadline.expired():
        from .incumbent import best_known

        best = best_known(inst, deadline)
    makespan = None if best is None else best[2]
    if makespan is not None:
        theory_guard(inst, makespan, lb_theory)
        lower = min(lower, makespan)
    return SolveResult(status_of(makespan, lower), None if best is None else best[1], makespan,
                       lower, total, time.perf_counter() - t0, engine="single_slot",
                       source="" if best is None else best[0],
                       stats={"refuted": refuted, "nodes": total,
                              "cpu_seconds": time.process_time() - c0,
                              "independent": not options.use_theory, "class": "fused v=1 K=1"})


def _backend(inst: Instance, options: SolveOptions, channel: Channel) -> SolveResult:
    return solve_single_slot(inst, options, channel)


BACKEND = FunctionBackend("single_slot", _backend, "the exact K = 1 engine (fused, v = 1, "
                          "uniform): refutes makespans upwards by a complete single-slot search")
"""The engine as a :class:`~pipebounds.search.backend.Backend` (the contract of every exact
engine). It is not in :data:`~pipebounds.search.backend.BACKENDS` by default (the command
line's engine list is unchanged); :func:`register_backend` adds it."""


def register_backend() -> None:
    """Add :data:`BACKEND` to :data:`~pipebounds.search.backend.BACKENDS` (then
    ``pipebounds.search.solve(inst, engine="single_slot")`` reaches it)."""
    register(BACKEND)


__all__ = ["solve_single_slot", "BACKEND", "register_backend", "decide", "Decision", "in_class",
           "class_problems", "DEFAULT_NODES"]
