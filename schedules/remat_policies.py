"""Fixed-rule recomputation, what the systems do today, against the optimum (docs/remat.md).

Every policy keeps the order of the schedule's ops (its ``R`` ops dropped first) and decides
which pairs ``(j, s)`` are *fully checkpointed*: their forward stores nothing and ``R(j, s)``
runs right before the pair's input-gradient op (``B`` or ``I``), as the systems recompute
(activation checkpointing inside the backward). A policy's parameters are chosen for the
memory limit (``K``, or a byte budget with the instance's bytes model) by trying every value
and keeping the shortest makespan that fits (ties: the fewest recomputes):

``none``       no pair is recomputed (fits or not).
``all``        every pair is recomputed ("checkpoint everything").
``megatron``   Megatron-LM's microbatch rule: on GPU ``p`` microbatch ``j`` is fully
               checkpointed iff ``j mod max_outstanding_p >= k``. ``max_outstanding_p``: the
               microbatches in flight on ``p`` in the order, ``ceil(natural peak_p / v)`` (the
               peak live stage activations of the order without recomputation, per wave;
               Megatron's ``max_outstanding_backprops``, its warm-up count plus one); ``k``
               (its ``num_microbatches_with_partial_activation_checkpoints``): every value
               ``0 .. max_p max_outstanding_p`` is tried.
``deepspeed``  DeepSpeed's ``activation_checkpoint_interval``: checkpoint every ``n`` layers.
               Here the stage is the unit (a layer inside a stage is below this model's
               granularity): the pairs of every stage ``s`` with ``s mod n = 0`` are
               recomputed; every ``n = 1 .. S`` is tried (``n = 1`` is ``all``).
``optimal``    :func:`schedules.remat_optimal.optimal_remat` (exact: CP-SAT proof; positions
               ``anywhere`` by default).

>>> from schedules import Instance
>>> from schedules.generators import generate
>>> sched = generate("1f1b", Instance(P=2, m=4))
>>> r = remat_policy(sched, "megatron", K=1)
>>> r.feasible, r.parameters["max_outstanding"], str(r.makespan)
(True, [2, 1], '19')
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Iterable, Optional

from .ops import Op
from .remat import RematError
from .schedule import Schedule
from .instance import require_one_direction

POLICIES = ("optimal", "megatron", "deepspeed", "all", "none")
"""The policies of :func:`remat_policy` (module docstring)."""


@dataclass(frozen=True)
class PolicyResult:
    """Outcome of one policy: ``feasible`` (the schedule fits the limit), ``status``
    (``optimal``/``feasible``/``infeasible``/``unknown`` for ``optimal``; ``feasible`` or
    ``infeasible`` for a fixed rule), the ``schedule`` with its ``R`` ops (the best-fitting one;
    for an infeasible rule the one with the fewest violations' peak, for reference), its
    ``makespan`` and ``peak`` per GPU, the ``recomputed`` ``R`` ops and the chosen
    ``parameters``."""

    policy: str
    feasible: bool
    status: str
    schedule: Optional[Schedule]
    makespan: Optional[Fraction]
    peak: Optional[list]
    recomputed: tuple[Op, ...] = ()
    parameters: dict = field(default_factory=dict)


def base_order(schedule: Schedule) -> Schedule:
    """The schedule without its ``R`` ops."""
    return Schedule(schedule.instance, tuple(tuple(op for op in seq if op.kind != "R")
                                             for seq in schedule.orders), schedule.source)


def with_checkpoints(schedule: Schedule, pairs: Iterable[tuple[int, int]]) -> Schedule:
    """The base order of ``schedule`` with ``R(j, s)`` right before the input-gradient op of
    every pair ``(s, j)`` of ``pairs``."""
    chosen = set(pairs)
    orders = []
    for seq in base_order(schedule).orders:
        new = []
        for op in seq:
            if op.kind in ("B", "I") and (op.stage, op.microbatch) in chosen:
                new.append(Op(op.stage, "R", op.microbatch))
            new.append(op)
        orders.append(tuple(new))
    return Schedule(schedule.instance, tuple(orders), schedule.source)


def _limited(schedule: Schedule, K, budget_bytes) -> Schedule:
    inst = schedule.instance
    if budget_bytes is not None:
        if inst.memory is None:
            raise RematError("a byte budget needs the instance's memory model (bytes per stage)")
        return schedule.with_instance(inst.with_(K=None, memory=replace(
            inst.memory, budget=Fraction(budget_bytes))))
    if K is None:
        K = inst.K
    if K is None:
        raise RematError("give a memory limit: K or a byte budget")
    return schedule.with_instance(inst.with_(K=K))


def _measure(schedule: Schedule):
    from .simulate import simulate

    res = simulate(schedule)
    peak = res.peak_bytes if schedule.instance.memory is not None else res.peak_memory
    return res.valid, res.makespan, peak


def _best(policy: str, candidates, K, budget_bytes, base: Schedule) -> PolicyResult:
    """Among ``(parameters, pairs)`` candidates, the fitting one with the least makespan
    (ties: fewer recomputes); infeasible when none fits."""
    best = None
    fallback = None
    for params, pairs in candidates:
        sched = _limited(with_checkpoints(base, pairs), K, budget_bytes)
        ok, ms, peak = _measure(sched)
        key = (ms, len(pairs))
        if ok and (best is None or key < best[0]):
            best = (key, sched, ms, peak, params)
        if fallback is None or len(pairs) > len(fallback[4]):
            fallback = (sched, ms, peak, params, pairs)
    if best is None:
        sched, ms, peak, params, _ = fallback
        return PolicyResult(policy, False, "infeasible", sched, ms, peak,
                            _recomputes(sched), params)
    _, sched, ms, peak, params = best
    return PolicyResult(policy, True, "feasible", sched, ms, peak, _recomputes(sched), params)


def _recomputes(schedule: Schedule) -> tuple[Op, ...]:
    return tuple(op for _, op in schedule.ops() if op.kind == "R")


def megatron_candidates(schedule: Schedule):
    """``(parameters, pairs)`` of Megatron's rule for every ``k`` (module docstring)."""
    from .simulate import simulate

    base = base_order(schedule)
    inst = base.instance
    natural = simulate(base.with_instance(inst.with_(K=None, memory=None))).peak_memory
    if natural is None:
        raise RematError("the order (R ops removed) is not a valid schedule")
    outstanding = [max(1, -(-peak // inst.v)) for peak in natural]
    pairs_all = [(s, j) for s in range(inst.S) for j in range(inst.m)]
    for k in range(max(outstanding), -1, -1):
        pairs = [(s, j) for s, j in pairs_all if j % outstanding[inst.gpu(s)] >= k]
        yield {"k": k, "max_outstanding": outstanding}, pairs


def deepspeed_candidates(schedule: Schedule):
    """``(parameters, pairs)`` of DeepSpeed's interval rule at stage granularity, every ``n``."""
    inst = schedule.instance
    for n in range(inst.S, 0, -1):
        yield {"interval": n}, [(s, j) for s in range(inst.S) if s % n == 0
                                for j in range(inst.m)]


def remat_policy(schedule: Schedule, policy: str, K: Optional[int] = None, budget_bytes=None,
                 backward: bool = False, time_limit: Optional[float] = None,
                 positions: str = "anywhere") -> PolicyResult:
    """The recomputation of ``schedule``'s fixed order chosen by ``policy`` (:data:`POLICIES`)
    for the limit ``K`` (default the instance's) or ``budget_bytes``; see the module
    docstring. ``backward``, ``time_limit`` and ``positions`` are for ``optimal`` only."""
    require_one_direction(schedule, "remat policies")
    if policy not in POLICIES:
        raise RematError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if policy == "optimal":
        from .remat_optimal import DEFAULT_TIME_LIMIT, optimal_remat

        res = optimal_remat(schedule, K=K, budget_bytes=budget_bytes, backward=backward,
                            positions=positions,
                            time_limit=DEFAULT_TIME_LIMIT if time_limit is None else time_limit)
        feasible = res.schedule is not None and res.status in ("optimal", "feasible")
        return PolicyResult("optimal", feasible, res.status, res.schedule, res.makespan,
                            res.peak, res.recomputed + res.backward_recomputed,
                            {"positions": res.positions, "backward": res.backward})
    base = base_order(schedule)
    inst = base.instance
    every = [(s, j) for s in range(inst.S) for j in range(inst.m)]
    if policy == "none":
        candidates: list[tuple[dict, list]] = [({}, [])]
    elif policy == "all":
        candidates = [({}, every)]
    elif policy == "megatron":
        candidates = list(megatron_candidates(base))
    else:
        candidates = list(deepspeed_candidates(base))
    return _best(policy, candidates, K, budget_bytes, base)


def as_remat_result(r: PolicyResult):
    """A fixed rule's result as a :class:`schedules.remat_optimal.RematResult` (for rankings
    such as ``best``): status ``feasible`` or ``infeasible``; ``lower_bound`` is the rule's own
    makespan (its every parameter was tried), not a bound over all recompute choices."""
    from .remat_optimal import RematResult

    fwd = tuple(op for op in r.recomputed)
    return RematResult(r.status, "makespan", r.schedule if r.feasible else None,
                       r.makespan if r.feasible else None,
                       r.makespan if r.feasible and r.makespan is not None else Fraction(0),
                       recomputed=fwd, peak=r.peak if r.feasible else None,
                       positions="adjacent")


__all__ = ["POLICIES", "as_remat_result", "PolicyResult", "base_order", "deepspeed_candidates",
           "megatron_candidates", "remat_policy", "with_checkpoints"]
