"""The memory frontier ``K*`` (docs/theory_frontier.md): formulas only.

``K*`` of an instance (its ``K`` ignored) is the least ``K`` with ``OPT(K) = OPT(inf)``; since
``OPT(K)`` is non-increasing in ``K`` (a schedule feasible at ``K`` is feasible at ``K + 1``),
``OPT(K) > OPT(inf)`` exactly for ``K < K*``. Theorems (ids as in the document):

* **KF0** (``v = 1``, fused): ``OPT(inf) = T1 = (m + P - 1)(f + b)`` and ``K* <= min(m, P)``
  (1F1B holds ``min(P - p, m)`` on GPU ``p`` and reaches T1; docs/theory.md, Theorem 1).
* **KF1** (``v = 1``, fused, ``P >= 2``): ``K* = 1`` iff ``m <= 2 + b/f``. (If: Theorem 3c's
  single-group schedule. Only if: T3 on GPU ``P - 2`` exceeds T1.)
* **KF2** (``v = 1``, fused, lower bound): ``K* >= K2 = max_{2 <= d <= P} min { K : C_d(K) }``
  with ``C_d(K)``: ``(m - r_d)(d - 1) + m + k(k - 1)/2 <= K (m + d - 1)``,
  ``r_d = min(m, floor((d - 1)(f + b)/f))``, ``k = min(K, m)``: Theorem 2 (memory-time) on the
  GPU with ``d`` stages to go, at makespan T1.
* **KF3** (``v = 1``, fused, ``b >= 2 f``, conjecture checked on a declared range):
  ``K* = max(KF2, 1 + [m > 2 + b/f])`` (false for ``b < 2 f``).
* **KF4** (``v = 2``, fused, ``m >= P``; observed, open): looped with ``f <= b``:
  ``K* = P + 1``; vshape with ``f = b``: ``K* = 2 P``.

:func:`K_star_low` is the generic lower bound (any instance): the least ``K`` whose proven lower
bound does not exceed a known ``OPT(inf)``.

>>> from schedules.instance import Instance, placement_stage_to_rank
>>> inst = Instance(P=4, m=8, f=1, b=2)
>>> fill_drain(inst), single_slot_free(inst), memory_time_threshold(inst), kf3_value(inst)
(Fraction(33, 1), False, 2, 2)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from schedules.instance import Instance, placement_stage_to_rank

from .evaluate import lower_bound
from .single_wave import fill_drain_value
from .theorems import FRONTIER, theorem


def _single_wave_fused(inst: Instance) -> bool:
    return inst.v == 1 and not inst.split and not inst.c and inst.directions == 1 and (
        inst.stage_to_rank is None or tuple(inst.stage_to_rank) == tuple(range(inst.P)))


def fill_drain(inst: Instance) -> Fraction:
    """T1 ``= (m + P - 1)(f + b)`` (:func:`bounds.single_wave.fill_drain_value`): ``OPT(inf)``
    of a single-wave fused instance (KF0)."""
    return fill_drain_value(inst)


@theorem("KF0", "OPT(inf) = T1 and K* <= min(m, P) (1F1B)", FRONTIER + "1. KF0 (no memory limit)")
def one_f_one_b_memory(inst: Instance) -> int:
    """KF0: ``min(m, P)``, the peak of 1F1B, an upper bound on ``K*`` (``v = 1``, fused)."""
    return min(inst.m, inst.P)


@theorem("KF1", "K* = 1 iff m <= 2 + b/f",
         FRONTIER + "2. KF1 (one activation suffices iff `m ≤ 2 + b/f`)")
def single_slot_free(inst: Instance) -> bool:
    """KF1: ``K* = 1`` iff ``m <= 2 + b/f`` (``v = 1``, fused; always for ``P = 1``)."""
    return inst.P == 1 or (inst.m - 2) * Fraction(inst.f) <= Fraction(inst.b)


def memory_time_condition(inst: Instance, d: int, K: int) -> bool:
    """``C_d(K)`` of KF2: Theorem 2's term of the GPU with ``d`` stages to go is at most T1."""
    m = inst.m
    B = Fraction(inst.f) + Fraction(inst.b)
    r = min(m, int((d - 1) * B // Fraction(inst.f)))
    k = min(K, m)
    return (m - r) * (d - 1) + m + Fraction(k * (k - 1), 2) <= K * (m + d - 1)


@theorem("KF2", "K* >= the memory-time threshold K2",
         FRONTIER + "3. KF2 (the memory-time threshold)")
def memory_time_threshold(inst: Instance) -> int:
    """KF2: ``max_d min{K : C_d(K)}`` over ``d = 2 .. P`` (1 when ``P = 1``); a lower bound on
    ``K*`` (``v = 1``, fused). ``C_d(min(m, d))`` always holds, so the value is at most
    ``min(m, P)``."""
    out = 1
    for d in range(2, inst.P + 1):
        K = 1
        while not memory_time_condition(inst, d, K):
            K += 1
        out = max(out, K)
    return out


@theorem("KF3", "K* = max(K2, 1 + [m > 2 + b/f]) when b >= 2f (checked)",
         FRONTIER + "4. KF3 (the frontier equals the bound when `b ≥ 2f`)")
def kf3_value(inst: Instance) -> int:
    """KF3's value ``max(KF2, 1 + [m > 2 + b/f])``: a proven lower bound on ``K*`` for every
    single-wave fused instance (KF1 and KF2), conjectured equal to ``K*`` when ``f <= b``."""
    return max(memory_time_threshold(inst), 1 if single_slot_free(inst) else 2)


@theorem("KF4", "v = 2 frontier: looped P + 1, vshape (f = b) 2P (observed)",
         FRONTIER + "7. Beyond single wave (what `frontier` does today)")
def kf4_value(inst: Instance) -> Optional[int]:
    """KF4's value where it is stated (``v = 2``, fused, no delay, ``m >= P``; looped with
    ``f <= b``, vshape with ``f = b``), else None. An observation on the table of optima
    (docs/theory_frontier.md), not a theorem."""
    if inst.v != 2 or inst.split or inst.c or inst.m < inst.P:
        return None
    if inst.stage_to_rank is not None and tuple(inst.stage_to_rank) != placement_stage_to_rank(
            inst.P, 2, inst.placement):
        return None
    if inst.placement == "looped" and inst.f <= inst.b:
        return inst.P + 1
    if inst.placement == "vshape" and inst.f == inst.b:
        return 2 * inst.P
    return None


def unconstrained_optimum(inst: Instance) -> Optional[Fraction]:
    """``OPT(inf)`` where the theory proves it: T1 for single-wave fused (KF0), else the lower
    bound at ``K = inf`` when :func:`bounds.lower_bound` flags it exact; None otherwise."""
    if _single_wave_fused(inst):
        return fill_drain(inst)
    lb = lower_bound(inst.with_(K=None))
    return lb.value if lb.exact else None


def K_star_low(inst: Instance, optimum_unconstrained: Fraction, K_max: int) -> int:
    """The least ``K`` in ``1 .. K_max`` whose lower bound is at most ``optimum_unconstrained``
    (``K_max`` when none is): a lower bound on ``K*``, because ``OPT(K) >= LB(K) > OPT(inf)``
    for every smaller ``K``. For single-wave fused instances it is at least KF1/KF2's value
    (checked against :func:`kf3_value` by proofs_checks/frontier.py)."""
    for K in range(1, K_max + 1):
        if lower_bound(inst.with_(K=K)).value <= optimum_unconstrained:
            return K
    return K_max


def memory_never_binds(inst: Instance) -> int:
    """A ``K`` at which memory cannot bind: ``v m`` (every activation of a GPU at once)."""
    return inst.v * inst.m
