"""The ``K = 1`` bounded search (pipebounds/constructions/single_wave/, ``single_slot_search``).

It returns a schedule only when its simulated makespan equals Theorem 3 (then optimal); its
pruning is Theorem 3's own per-GPU argument, so below the bound it must find nothing.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bounds.single_wave import _single_slot_W, single_slot_value
from schedules import Instance, simulate
from pipebounds.constructions.single_wave import (
    _bounded_search, _waste_floor, single_group_schedule, single_slot_schedule, single_slot_search,
    two_gpu_schedule)


def reaches_t3(sched, inst):
    res = simulate(sched)
    assert res.valid, res.errors[:3]
    assert max(res.peak_memory) <= 1
    assert res.makespan == single_slot_value(inst)


# instances the list-schedule family of single_slot_schedule missed (brief of this module)
@pytest.mark.parametrize("P,m,f,b", [(3, 7, 3, 1), (3, 8, 3, 1), (3, 9, 2, 1), (3, 9, 3, 2),
                                     (3, 10, 1, 1), (3, 10, 2, 1), (4, 10, 2, 1)])
def test_search_reaches_t3_where_the_list_family_missed(P, m, f, b):
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    sched = single_slot_schedule(inst)
    assert sched is not None
    reaches_t3(sched, inst)


@given(st.integers(1, 6), st.integers(0, 10), st.integers(1, 5))
def test_waste_floor_is_theorem_3_minus_the_work(n, G, f):
    # W_p(x) of Theorem 3 for a GPU whose gap is G: d - 1 = G / B must be integral, so state
    # it with B = G (d = 2) or G = 0 (d = 1); _single_slot_W takes (m, d, f, b, x).
    if G == 0:
        d, b = 1, Fraction(1)
    else:
        if G <= f:
            return
        d, b = 2, Fraction(G - f)
    B = f + b
    brute = min(_single_slot_W(n, d, Fraction(f), b, x) for x in range(n + 1)) - n * B
    assert _waste_floor(n, G, f) == brute


@pytest.mark.parametrize("P,m,f,b", [(2, 3, 1, 1), (3, 3, 2, 1), (3, 4, 1, 2), (2, 5, 3, 2)])
def test_search_finds_nothing_below_t3(P, m, f, b):
    # hand-derived: Theorem 3 is a valid bound, so no schedule ends by T3 - 1; the search
    # must exhaust its (small) tree without a schedule, not run out of nodes
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    T = int(single_slot_value(inst))
    orders, used = _bounded_search(P, m, f, b, T - 1, nodes=200000)
    assert orders is None and used < 200000
    orders, _ = _bounded_search(P, m, f, b, T, nodes=200000)
    assert orders is not None


@settings(max_examples=25)
@given(st.integers(1, 4), st.integers(1, 7), st.integers(1, 4), st.integers(1, 4))
def test_single_slot_schedule_returns_only_t3_schedules(P, m, f, b):
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    sched = single_slot_schedule(inst, budget=50, nodes=5000)
    if sched is not None:
        reaches_t3(sched, inst)


def test_search_scales_durations():
    # scaling f and b by 1/2 scales T3 and the schedule's makespan alike (exact Fractions)
    inst = Instance(P=3, m=9, K=1, f=1, b=Fraction(1, 2))
    sched = single_slot_search(inst)
    assert sched is not None
    reaches_t3(sched, inst)


durations = st.fractions(min_value=Fraction(1, 4), max_value=6, max_denominator=4)


@settings(max_examples=60)
@given(st.integers(1, 40), durations, durations)
def test_two_gpu_schedule_reaches_t3_for_every_size(m, f, b):
    # the P = 2 construction is proven to reach Theorem 3 (docstring of two_gpu_schedule)
    inst = Instance(P=2, m=m, K=1, f=f, b=b)
    reaches_t3(two_gpu_schedule(inst), inst)


@settings(max_examples=60)
@given(st.integers(1, 40), durations, durations, durations)
def test_two_gpu_schedule_reaches_split_t3_for_every_size(m, f, b_I, b_W):
    # split backward: the same groups with every B replaced by I W reach T3's split form
    inst = Instance(P=2, m=m, K=1, f=f, b_I=b_I, b_W=b_W)
    sched = two_gpu_schedule(inst)
    assert {op.kind for order in sched.orders for op in order} <= {"F", "R", "I", "W"}
    reaches_t3(sched, inst)


@pytest.mark.parametrize("m", range(1, 25))
@pytest.mark.parametrize("f,b", [(1, 1), (3, 1), (1, 3), (5, 2), (2, 5), (4, 3)])
def test_two_gpu_schedule_grid(m, f, b):
    inst = Instance(P=2, m=m, K=1, f=f, b=b)
    reaches_t3(two_gpu_schedule(inst), inst)


@pytest.mark.parametrize("P", [3, 4])
def test_t3_is_not_reached_at_m12_f5_b3(P):
    # hand-derived (report of this module): T3 = 8 P + 120 with zero slack on GPUs P-3 and
    # P-2; GPU P-3's first hold must get B(k,P-2) back by 21 units after it starts, GPU P-2
    # must never idle and keeps every hold 18 units long (two free forwards each), or
    # recomputes k with an idle gap: OPT >= T3 + 1 for every P >= 3.
    m, f, b = 12, 5, 3
    T = int(single_slot_value(Instance(P=P, m=m, K=1, f=f, b=b)))
    assert T == 8 * P + 120
    wide = dict(width_f=m, width_r=m, always_wait=True, last_free=True)
    for target in (T, T + 1):  # the unrestricted search finds nothing (it is exhaustive)
        orders, used = _bounded_search(P, m, f, b, target, nodes=100000, **wide)
        assert orders is None and used < 100000
    orders, _ = _bounded_search(P, m, f, b, T + 2, nodes=100000, **wide)
    assert orders is not None
    assert single_slot_schedule(Instance(P=P, m=m, K=1, f=f, b=b), budget=10, nodes=1000) is None


@settings(max_examples=60)
@given(st.integers(1, 10), st.integers(1, 12), durations, durations)
def test_single_group_reaches_fill_drain_when_m_is_small(P, m, f, b):
    # proven (docstring of single_group_schedule): m <= 2 + floor(b/f) gives T1 = T3 at K = 1
    if (m - 2) * f > b:
        m = 2 + int(b // f)
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    res = simulate(single_group_schedule(inst))
    assert res.valid and max(res.peak_memory) <= 1
    assert res.makespan == (m + P - 1) * (f + b) == single_slot_value(inst)


@settings(max_examples=60)
@given(st.integers(1, 9), st.integers(1, 8), durations, durations, durations)
def test_single_group_reaches_split_t3_when_m_is_small(P, m, f, b_I, b_W):
    # Theorem 3c, split form: m <= 2 + b_I/f gives T3 (split) = (P-1)(f + b_I) + m B = OPT
    inst = Instance(P=P, m=m, K=1, f=f, b_I=b_I, b_W=b_W)
    assume((m - 2) * inst.f <= inst.b_I)
    reaches_t3(single_group_schedule(inst), inst)
    assert single_slot_value(inst) == (P - 1) * (inst.f + inst.b_I) + m * (inst.f + inst.b)
