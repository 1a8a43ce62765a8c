"""Single-wave constructions (pipebounds/constructions/single_wave/; docs/theory.md).

Every schedule returned is valid, within ``K`` and reaches the bound it claims (hence optimal);
None is returned where no claim is made.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from bounds import lower_bound
from bounds.single_wave import fill_drain_value, single_slot_value
from schedules import Instance, simulate
from pipebounds.constructions import optimal_schedule
from pipebounds.constructions.single_wave import list_schedule, one_f_one_b, single_slot_schedule


def check(sched, K):
    res = simulate(sched)
    assert res.valid, res.errors[:3]
    if K is not None:
        assert max(res.peak_memory) <= K
    return res


@pytest.mark.parametrize("P,m", [(1, 1), (1, 5), (4, 2), (4, 4), (4, 9), (7, 3), (8, 16)])
@pytest.mark.parametrize("f,b", [(1, 2), (3, 1), (Fraction(1, 2), Fraction(5, 3))])
def test_one_f_one_b_reaches_fill_drain_with_min_P_m_memory(P, m, f, b):
    inst = Instance(P=P, m=m, K=min(P, m), f=f, b=b)
    res = check(one_f_one_b(inst), inst.K)
    assert res.makespan == fill_drain_value(inst)
    assert res.peak_memory == [min(P - p, m) for p in range(P)]


def test_dispatcher_nonbinding_memory_is_optimal():
    for P, m, K in [(3, 5, 3), (3, 5, None), (5, 2, 2), (2, 6, 4)]:
        inst = Instance(P=P, m=m, K=K, f=2, b=3)
        sched = optimal_schedule(inst)
        assert sched is not None
        res = check(sched, K)
        lb = lower_bound(inst)
        assert lb.exact and res.makespan == lb.value


def test_dispatcher_single_microbatch_chain():
    for inst in (Instance(P=4, m=1, K=1, f=1, b=2), Instance(P=3, m=1, K=1, f=1, b_I=1, b_W=2)):
        res = check(optimal_schedule(inst), 1)
        assert res.makespan == lower_bound(inst).value


def test_dispatcher_makes_no_claim_elsewhere():
    assert optimal_schedule(Instance(P=4, m=8, K=2)) is None            # 1 < K < min(m, P)
    assert optimal_schedule(Instance(P=4, m=8, K=2, b_I=1, b_W=1)) is None  # split
    assert optimal_schedule(Instance(P=2, m=3, K=1, c=1)) is None        # communication delay


@pytest.mark.parametrize("P,m,f,b", [
    (2, 4, 1, 2), (2, 7, 3, 1), (3, 4, 3, 2), (3, 6, 1, 1), (3, 5, 2, 3), (4, 5, 1, 2),
    (4, 6, 2, 3), (5, 4, 1, 1), (6, 3, 2, 1), (2, 6, Fraction(1, 2), Fraction(3, 2))])
def test_single_slot_schedule_reaches_theorem_3(P, m, f, b):
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    sched = single_slot_schedule(inst)
    assert sched is not None, "the search family should reach T3 on these instances"
    res = check(sched, 1)
    assert res.makespan == single_slot_value(inst)


def test_single_slot_schedule_returns_only_bound_reaching_schedules():
    # whatever it returns must reach the bound; None is allowed (docs/theory.md, coverage)
    for P, m, f, b in itertools.product((2, 3), (3, 5), (1, 2), (1, 3)):
        inst = Instance(P=P, m=m, K=1, f=f, b=b)
        sched = single_slot_schedule(inst, budget=20)
        if sched is not None:
            assert check(sched, 1).makespan == single_slot_value(inst)
    assert single_slot_schedule(Instance(P=3, m=4, K=2)) is None


def test_list_schedule_keeps_memory_and_matches_simulation():
    inst = Instance(P=3, m=5, K=1, f=1, b=2)
    kept = [[j == 0 for j in range(5)], [j in (0, 3) for j in range(5)], [True] * 5]
    sched = list_schedule(inst, kept, [0, 3, 1, 2, 4], "BFR")
    res = check(sched, 1)
    assert res.makespan >= single_slot_value(inst)
