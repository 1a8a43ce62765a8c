"""Properties 1 (random source) and 4 (monotonicities) of the lower bound.

Property 1, the central claim: every schedule the validator accepts has makespan >= LB of its
instance with ``K`` = its peak memory (compared exactly, as Fractions). Here the schedules come
from the random list scheduler of tests/strategies.py, which produces orders no generator
would; tests/test_prop_sources.py checks the other sources.

Property 4: the true optimum is non-increasing in ``K`` (a schedule within ``K`` is within
``K+1``), non-decreasing in ``m`` (drop a microbatch's ops) and in every duration (ASAP
makespan of fixed orders is a longest path); a lower bound that broke one of these would be
improvable, so the bound must have them too.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, strategies as st

from bounds.evaluate import lower_bound
from schedules import simulate
import random

from strategies import (DURATIONS, greedy_schedules, hill_climb, instances, note_schedule,
                        valid_schedules)


@given(valid_schedules(instances(c=True)))
def test_random_valid_schedules_are_never_below_the_bound(sched):
    note_schedule(sched)
    res = simulate(sched)
    assert res.valid
    peak = max(res.peak_memory)
    lb = lower_bound(sched.instance.with_(K=peak))
    assert isinstance(lb.value, Fraction)
    assert res.makespan >= lb.value, (lb.terms, res.makespan)
    assert res.makespan >= lower_bound(sched.instance).value


@given(valid_schedules(instances(max_pairs=12, max_K=2)))
def test_random_low_memory_schedules_are_never_below_the_bound(sched):
    """The same with K in {1, 2}, where recomputation is forced and the K-terms bind."""
    note_schedule(sched)
    res = simulate(sched)
    lb = lower_bound(sched.instance.with_(K=max(res.peak_memory)))
    assert res.makespan >= lb.value, (lb.terms, res.makespan)


@given(greedy_schedules(instances(c=True)))
def test_greedy_schedules_are_never_below_the_bound(sched):
    """Near-optimal schedules (randomized greedy list scheduling) probe the bound closely."""
    note_schedule(sched)
    res = simulate(sched)
    lb = lower_bound(sched.instance.with_(K=max(res.peak_memory)))
    assert res.makespan >= lb.value, (lb.terms, res.makespan)


@given(greedy_schedules(instances(max_pairs=12)), st.integers(0, 2**32 - 1))
def test_locally_optimized_schedules_are_never_below_the_bound(sched, seed):
    """Greedy schedules improved by hill climbing (tests/strategies.py): the closest probe."""
    better = hill_climb(sched, random.Random(seed), steps=150)
    note_schedule(better)
    res = simulate(better)
    assert res.valid and res.makespan <= simulate(sched).makespan
    lb = lower_bound(better.instance.with_(K=max(res.peak_memory)))
    assert res.makespan >= lb.value, (lb.terms, res.makespan)


def _values(insts):
    return [lower_bound(i).value for i in insts]


@given(instances(max_pairs=48, K="inf"))
def test_bound_is_non_increasing_in_K(inst):
    top = inst.v * inst.m + 2
    seq = _values([inst.with_(K=k) for k in range(1, top + 1)] + [inst.with_(K=None)])
    assert all(a >= b for a, b in zip(seq, seq[1:])), seq


@given(instances(max_pairs=48), st.integers(1, 4))
def test_bound_is_non_decreasing_in_m(inst, extra):
    seq = _values([inst.with_(m=m) for m in range(inst.m, inst.m + extra + 1)])
    assert all(a <= b for a, b in zip(seq, seq[1:])), seq


@given(instances(max_pairs=48), DURATIONS)
def test_bound_is_non_decreasing_in_f(inst, more):
    assert lower_bound(inst).value <= lower_bound(inst.with_(f=inst.f + more)).value


@given(instances(max_pairs=48), DURATIONS)
def test_bound_is_non_decreasing_in_backward_durations(inst, more):
    base = lower_bound(inst).value
    if inst.split:
        assert base <= lower_bound(inst.with_(b_I=inst.b_I + more, b_W=inst.b_W)).value
        assert base <= lower_bound(inst.with_(b_I=inst.b_I, b_W=inst.b_W + more)).value
    else:
        assert base <= lower_bound(inst.with_(b=inst.b + more)).value
