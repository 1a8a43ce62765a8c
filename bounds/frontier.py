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
* **KF5** (``v >= 2``, fused or split, both placements; proven): ``K* >= max(K_F, K_L)`` with
  ``K_F`` the least ``K`` at which MW11 (the stores before a GPU's first backward) is at most
  ``OPT(inf)`` and ``K_L`` the least ``K`` at which MW7 (the lifespans of the activations of
  the looped or V-shaped chain) is: :func:`first_backward_threshold`,
  :func:`lifespan_threshold`, :func:`kf5_value`.

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


def _least_K(inst: Instance, value, optimum_unconstrained: Fraction) -> int:
    """The least ``K`` in ``1 .. v m`` with ``value(inst at K) <= optimum_unconstrained``
    (``v m`` when none is: memory never binds there)."""
    top = memory_never_binds(inst)
    for K in range(1, top):
        if value(inst.with_(K=K)) <= optimum_unconstrained:
            return K
    return top


def first_backward_threshold(inst: Instance, optimum_unconstrained: Fraction) -> int:
    """``K_F`` of KF5: the least ``K`` with MW11 (:func:`bounds.multi_wave.first_backward_value`)
    at most ``OPT(inf)`` (``v >= 2``).

    MW11 at ``K`` is ``max_p [h_p + v m u - K f + end_p(K)]``, ``h_p = S f + (S - 1 - s_v) b_c``
    the head of the backward of the GPU's top stage: before its first backward a GPU runs only
    ``F`` and ``R``, stores at most ``K`` activations and must not idle more than the slack
    ``OPT(inf) - (h_p + v m u + end_p)``; so ``K f`` must cover the rest. Fused, ``end_p =
    s_1 b`` does not depend on ``K`` and ``K_F = max_p ceil((h_p + v m u + s_1 b - OPT(inf)) /
    f)`` (at least 1).

    >>> inst = Instance(P=2, m=2, v=2, f=1, b_I=1, b_W=1)
    >>> first_backward_threshold(inst, Fraction(13))
    4
    """
    from .multi_wave import first_backward_value

    return _least_K(inst, first_backward_value, optimum_unconstrained)


def lifespan_threshold(inst: Instance, optimum_unconstrained: Fraction) -> int:
    """``K_L`` of KF5: the least ``K`` with MW7 (:func:`bounds.multi_wave.memory_slots_value`,
    the activation lifespans) at most ``OPT(inf)`` (``v >= 2``).

    A kept activation of stage ``s`` lives at least its round trip ``(S - s)(f + b_c)`` (split
    ``(S - s)(f + b_I) + b_W``), a recomputed one ``f + b`` and costs ``f`` more work; at most
    ``K`` live at once, so their total fits ``K`` times the GPU's window less the slot edge.

    >>> lifespan_threshold(Instance(P=2, m=2, v=2, f=1, b_I=1, b_W=1), Fraction(13))
    2
    """
    from .multi_wave import memory_slots_value

    return _least_K(inst, memory_slots_value, optimum_unconstrained)


@theorem("KF5", "v >= 2: K* >= max(K_F, K_L), MW11 and MW7 read at OPT(inf)",
         FRONTIER + "8. KF5 (`v ≥ 2`: first-backward and lifespan thresholds)")
def kf5_value(inst: Instance, optimum_unconstrained: Fraction) -> int:
    """KF5: ``max(K_F, K_L)`` (:func:`first_backward_threshold`, :func:`lifespan_threshold`), a
    lower bound on ``K*`` of every ``v >= 2`` instance (uniform durations, no delay, no byte
    budget, no ``F&B`` ops, one direction), given its ``OPT(inf)``:
    for ``K`` below it MW11 or MW7 exceeds ``OPT(inf)``, so ``OPT(K) > OPT(inf)``.

    >>> kf5_value(Instance(P=2, m=3, v=2, placement="vshape", f=1, b_I=2, b_W=1), Fraction(25))
    5
    """
    if (inst.v < 2 or inst.c or not inst.uniform or inst.memory is not None
            or inst.overlapped or inst.directions != 1):
        raise ValueError("KF5 is stated for v >= 2 with uniform durations, no delay, no byte "
                         "budget, no F&B ops and one direction (MW7 and MW11 as proven)")
    base = inst.with_(K=None)
    return max(first_backward_threshold(base, optimum_unconstrained),
               lifespan_threshold(base, optimum_unconstrained))


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
