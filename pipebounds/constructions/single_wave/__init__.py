"""Constructive schedules that reach the single-wave (``v = 1``) lower bounds (docs/theory.md).

* :func:`one_f_one_b` -- 1F1B (fused backward): makespan ``(m + P - 1)(f + b)`` with GPU ``p``
  holding ``min(P - p, m)`` activations. It reaches Theorem 1, so it is optimal whenever
  ``K >= min(m, P)`` (Theorem 1, exact case).
* :func:`single_group_schedule` -- ``K = 1`` (fused), ``m <= 2 + floor(b/f)``: one group per
  GPU; proven to reach T1 ``= (m + P - 1)(f + b)`` (so ``K = 1`` costs nothing there).
* :func:`two_gpu_schedule` -- ``K = 1``, ``P = 2`` (fused): explicit groups (a kept microbatch,
  the free forwards its hold absorbs, their recomputes); proven to reach Theorem 3 for every
  ``m, f, b`` (proof in its docstring).
* :func:`single_slot_search` -- ``K = 1`` (fused): a depth-first search with a node budget,
  pruned per GPU by Theorem 3's own argument (plus the hold in progress), verified by
  simulation; returns a schedule only at Theorem 3's bound.
* :func:`single_slot_schedule` -- ``K = 1`` (fused): the explicit schedules above, then
  :func:`single_slot_search`, then a polynomial-time search over a family of list schedules
  (which activations each GPU keeps, the order the backward passes run in); returns a
  schedule only when its makespan *equals* Theorem 3's bound, hence proven optimal; None
  otherwise. Theorem 3 is not reachable on every instance: ``P = 3, m = 12, f = 5, b = 3``
  has ``T3 = 144`` but no schedule ends before 145 (GPUs 0 and 1 both have zero slack and
  their tight first holds conflict).
* :func:`optimal_schedule` -- the dispatcher hook: one of the above when it is proven optimal,
  else None.

>>> from schedules import Instance, simulate
>>> s = optimal_schedule(Instance(P=3, m=4, K=1, f=3, b=2))
>>> simulate(s).makespan, max(simulate(s).peak_memory)
(Fraction(34, 1), 1)
"""

from __future__ import annotations

from typing import Optional

from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule

from .common import _backward_kinds
from .groups import single_group_schedule, two_gpu_schedule
from .list_schedule import list_schedule
from .one_f_one_b import one_f_one_b
from .single_slot import single_slot_schedule
from .slot_search import _bounded_search, _waste_floor, single_slot_search
from .split import SPLIT_CERTIFICATE_MAX_SIZE, split_nonbinding_schedule

__all__ = ["one_f_one_b", "list_schedule", "single_group_schedule", "two_gpu_schedule",
           "single_slot_search", "single_slot_schedule", "split_nonbinding_schedule",
           "SPLIT_CERTIFICATE_MAX_SIZE", "optimal_schedule", "_bounded_search", "_waste_floor"]


def optimal_schedule(inst: Instance, deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """A schedule proven optimal for ``inst`` (``v = 1``), or None.

    * fused backward, ``K >= min(m, P)`` or unconstrained: 1F1B (Theorem 1 is then exact);
    * fused backward, ``m <= 2 + b/f``, any ``K``: :func:`single_group_schedule` (reaches
      Theorem 1 with one activation per GPU, Theorem 3c);
    * fused backward, ``K = 1``: :func:`single_slot_schedule` (reaches Theorem 3, or None);
    * split backward, ``K = 1``: for ``P = 2`` :func:`two_gpu_schedule`, for ``m <= 2 + b_I/f``
      :func:`single_group_schedule` (both reach T3's split form: Theorems 3b and 3c, split);
    * split backward, memory not binding: a greedy list schedule when it reaches
      ``max(S1, S2)`` (:func:`split_nonbinding_schedule`);
    * anything else (other split backward, ``1 < K < min(m, P)``, ``c > 0``): None, except
      ``m = 1`` where the single microbatch's chain is optimal for every ``K >= 1``.
    """
    if inst.v != 1 or inst.c:
        return None
    if inst.m == 1:
        orders = tuple((Op(p, "F", 0),) + tuple(Op(p, k, 0) for k in _backward_kinds(inst))
                       for p in range(inst.P))
        return Schedule(inst, orders, source="single microbatch chain")
    if inst.split:
        from bounds.single_wave import single_group_split_exact

        greedy = split_nonbinding_schedule(inst)  # reaches max(S1, S2), or None
        if greedy is not None:
            return greedy
        if inst.K != 1:
            return None
        return (two_gpu_schedule(inst) if inst.P == 2 else
                single_group_schedule(inst) if single_group_split_exact(inst) else None)
    if inst.K is None or inst.K >= min(inst.m, inst.P):
        return one_f_one_b(inst)
    from bounds.single_wave import single_group_exact

    if single_group_exact(inst):  # Theorem 3c: T1 with one activation per GPU, any K
        return single_group_schedule(inst)
    if inst.K == 1:  # a search: it stops at ``deadline`` (None: no claim)
        return single_slot_schedule(inst, deadline=deadline)
    return None


__all__ = ["one_f_one_b", "list_schedule", "single_slot_schedule", "single_slot_search",
           "split_nonbinding_schedule", "SPLIT_CERTIFICATE_MAX_SIZE",
           "two_gpu_schedule", "single_group_schedule",
           "optimal_schedule"]
