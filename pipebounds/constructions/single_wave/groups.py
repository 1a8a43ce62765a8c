"""Explicit ``K = 1`` constructions with their proofs: one group per GPU (small ``m``) and
two GPUs (every ``m, f, b``).
"""

from __future__ import annotations


from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule

from .common import _backward_kinds


def single_group_schedule(inst: Instance) -> Schedule:
    """One group on every GPU (``K = 1``, fused): GPU ``p < P-1`` runs ``F(0)`` (kept),
    ``F(1) .. F(m-1)`` (free), ``B(0)``, then ``R(j) B(j)`` for ``j = 1 .. m-1``; the last GPU
    runs ``F(j) B(j)`` in order. When ``m <= 2 + floor(b/f)`` its makespan is T1
    ``= (m + P - 1)(f + b)``, so memory ``K = 1`` costs nothing and T3 (= T1) is exact.

    Proof. Forwards run back to back: ``F(j, p)`` on ``[(p+j) f, (p+j+1) f]`` for ``p < P-1``;
    the last GPU is busy from ``(P-1) f``, pair ``j`` ending at ``P f + b + j B``
    (``B = f + b``; each forward has arrived in time as ``f <= B``). GPU ``p``'s free forwards
    end at ``(p+m) f <= (P-2+m) f <= P f + b`` (this is ``m <= 2 + b/f``), so ``B(0, p)`` follows
    ``B(0, p+1)`` at once and ends at ``P f + (P-p) b``. By induction (downwards in ``p``,
    upwards in ``j``) ``B(j, p)`` ends at ``E(j, p) = P f + (P-p) b + j B``: ``R(j, p)`` starts
    at ``E(j-1, p)`` and ``B(j, p)`` at ``max(E(j-1, p) + f, E(j, p+1)) = E(j, p) - b`` as
    ``f + b = B``. The makespan is ``E(m-1, 0) = (m + P - 1) B``; GPU ``p < P-1`` holds ``0``
    until ``B(0)`` and then each recomputed pair from ``R`` to ``B``: one activation. ∎

    Split backward (every ``B`` is ``I W``): when ``m <= 2 + b_I/f`` its makespan is
    ``(P-1)(f + b_I) + m (f + b_I + b_W)``, T3's split form on GPU ``P-1``, so T3 (split) is
    exact there (docs/theory.md section 6; the same induction with ``E(j, p) = P f +
    (P-p) b_I + j B``, ``B = f + b_I + b_W``, the ``W`` ops following their ``I`` at once).

    >>> from schedules import Instance, simulate
    >>> from bounds.single_wave import single_slot_value
    >>> inst = Instance(P=5, m=4, K=1, f=1, b=2)
    >>> simulate(single_group_schedule(inst)).makespan, single_slot_value(inst)
    (Fraction(24, 1), Fraction(24, 1))
    >>> inst = Instance(P=5, m=4, K=1, f=1, b_I=2, b_W=3)
    >>> simulate(single_group_schedule(inst)).makespan, single_slot_value(inst)
    (Fraction(36, 1), Fraction(36, 1))
    """
    if inst.v != 1:
        raise ValueError("single_group_schedule builds v = 1 schedules")
    P, m = inst.P, inst.m
    back = _backward_kinds(inst)
    orders = []
    for p in range(P - 1):
        ops = [Op(p, "F", j) for j in range(m)] + [Op(p, k, 0) for k in back]
        for j in range(1, m):
            ops += [Op(p, "R", j)] + [Op(p, k, j) for k in back]
        orders.append(tuple(ops))
    orders.append(tuple(Op(P - 1, k, j) for j in range(m) for k in ("F",) + back))
    return Schedule(inst, tuple(orders), source="K=1 single group (constructions.single_wave)")


def two_gpu_schedule(inst: Instance) -> Schedule:
    """The explicit ``K = 1`` schedule for ``P = 2``; it reaches Theorem 3 for every
    ``m, f, b`` (proof below; checked by tests/test_single_slot_construction.py). Split
    backward: every ``B`` below is ``I W`` and ``B = f + b_I + b_W``; it reaches T3's split form
    (``G = f + b_I``; the same proof with ``e0 = s + f + max(a f, f + b_I)``, docs/theory.md
    section 6).

    GPU 0 keeps ``x = argmin_{1 <= x <= m} W_0(x)`` microbatches and forwards the other
    ``N = m - x`` freely, spread as evenly as possible over the ``x`` holds (``a_i`` of them in
    hold ``i``). Group ``i`` (microbatches numbered consecutively) is, on GPU 0,
    ``F(k) F(a_1) .. F(a_{a_i}) B(k) R(a_1) B(a_1) .. R(a_{a_i}) B(a_{a_i})`` and on GPU 1
    ``F(k) B(k) F(a_1) B(a_1) ..``.

    Proof. Let group ``i`` start at ``s`` with GPU 1 idle from ``s + f``. GPU 1 runs
    ``F(k), B(k)`` on ``[s+f, s+f+B]``; GPU 0 runs the ``a`` free forwards on
    ``[s+f, s+(a+1)f]`` and ``B(k)`` from ``e0 = s + f + max(a f, B)``. GPU 1 runs the pairs of
    the free ones back to back, the ``l``-th ending at ``s + f + (l+1) B``, while GPU 0's
    ``R(a_l)`` ends at ``e0 + (l-1) B + f >= s + f + (l+1) B`` (as ``max(a f, B) >= B``): GPU 0
    never waits after the hold, and GPU 1 is done by ``e0 + a B - b``, before the next group.
    So GPU 0 is busy from 0 to the end except inside holds, where it idles
    ``max(0, B - a_i f)``, and the makespan is ``m B + N f + sum_i max(0, B - a_i f)``. With
    ``c = floor(B/f)``, ``r0 = B - c f`` and an even spread this sum is
    ``x B - f min(N, x c) - r0 min(x, max(0, N - x c))`` (a hold with ``a <= c`` idles
    ``B - a f``; with ``a >= c + 1`` it idles 0 ``= B - c f - r0``), i.e. the makespan is
    ``W_0(x)`` of Theorem 3. It equals T3: if T3's minimum over ``x`` is at ``x >= 1`` this is
    immediate; if it is at ``x = 0`` then either ``m - 1 >= c`` and ``W_0(1) < W_0(0)``, or
    ``W_0(1) = (m + 1) B``, which is T1 (GPU 1's term) and at most T3. ∎

    >>> from schedules import Instance, simulate
    >>> from bounds.single_wave import single_slot_value
    >>> inst = Instance(P=2, m=7, K=1, f=3, b=1)
    >>> simulate(two_gpu_schedule(inst)).makespan, single_slot_value(inst)
    (Fraction(42, 1), Fraction(42, 1))
    """
    from bounds.single_wave import _single_slot_W

    if inst.P != 2 or inst.v != 1:
        raise ValueError("two_gpu_schedule builds P = 2, v = 1 schedules")
    m = inst.m
    bc = inst.b_I if inst.split else inst.b
    x_ = min(range(1, m + 1), key=lambda xx: (_single_slot_W(m, 2, inst.f, inst.b, xx, bc), xx))
    N = m - x_
    sizes = [N // x_ + (1 if i < N % x_ else 0) for i in range(x_)]
    back = _backward_kinds(inst)
    gpu0: list[Op] = []
    gpu1: list[Op] = []
    j = 0
    for a in sizes:
        k, free = j, list(range(j + 1, j + 1 + a))
        j += 1 + a
        gpu0 += ([Op(0, "F", k)] + [Op(0, "F", i) for i in free]
                 + [Op(0, kind, k) for kind in back])
        for i in free:
            gpu0 += [Op(0, "R", i)] + [Op(0, kind, i) for kind in back]
        for i in [k] + free:
            gpu1 += [Op(1, "F", i)] + [Op(1, kind, i) for kind in back]
    return Schedule(inst, (tuple(gpu0), tuple(gpu1)),
                    source="K=1 two-GPU groups (constructions.single_wave)")
