"""Properties 4 (exactness consistency) and 5 (constructions), and property 1 for the search.

Three independent sources of the optimum are compared:

* ``reference_optimum`` (tests/reference_sim.py): exhaustive enumeration of per-GPU orders,
  written for these tests, feasible only on tiny instances;
* :func:`pipebounds.search.solve`, the exact search;
* :func:`pipebounds.constructions.optimal_schedule`, the constructive optima of the exact cases;

against :func:`bounds.evaluate.lower_bound`: ``LB <= OPT`` always, ``LB == OPT`` when the bound
says ``exact``, a construction's makespan ``== LB`` when it is an exact case, never above the
search's, never below the bound.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import event, given, settings, strategies as st

from bounds.evaluate import lower_bound
from reference_sim import reference_optimum
from schedules import Instance, simulate
from pipebounds.constructions import optimal_schedule
from pipebounds.search import solve
from strategies import instances, note_schedule, scaled

# Tiny instances where exhaustive enumeration takes well under a second each.
TINY = [Instance(P=P, m=m, v=v, placement=pl, K=K, **dur)
        for (P, m, v), pl, K, dur in itertools.product(
            [(2, 1, 1), (2, 2, 1), (3, 1, 1), (4, 1, 1), (3, 2, 1), (2, 1, 2)],
            ("looped", "vshape"), (1, 2, None),
            ({"b": 2}, {"b_I": 1, "b_W": 1}, {"f": 2, "b": 3}, {"f": 1, "b_I": 2, "b_W": 1}))
        if not (v == 1 and pl == "vshape")
        and not ((P, m) == (3, 2) and "b_I" in dur)]  # split P=3, m=2: a few seconds each

_OPT: dict = {}


def brute_opt(inst):
    if inst not in _OPT:
        _OPT[inst] = reference_optimum(inst)
    return _OPT[inst]


@pytest.mark.parametrize("inst", TINY, ids=lambda i: f"P{i.P}m{i.m}v{i.v}{i.placement[0]}K{i.K}"
                         f"f{i.f}b{i.b}{'s' if i.split else ''}")
def test_bound_and_search_match_exhaustive_enumeration(inst):
    opt, witness = brute_opt(inst)
    assert simulate(witness).makespan == opt
    lb = lower_bound(inst)
    assert lb.value <= opt, (lb.terms, opt)
    if lb.exact:
        assert lb.value == opt, (lb.terms, opt)
    res = solve(inst, time_limit=20, use_theory=False)
    assert res.status == "optimal" and res.makespan == opt
    built = optimal_schedule(inst)
    if built is not None:
        r = simulate(built)
        assert r.valid and (inst.K is None or max(r.peak_memory) <= inst.K)
        assert r.makespan == opt


@st.composite
def tiny_instances(draw):
    """Shapes the enumeration handles in well under a second, any K, durations and delay c."""
    P, m, v = draw(st.sampled_from([(2, 1, 1), (2, 2, 1), (3, 1, 1), (4, 1, 1), (2, 1, 2)]))
    inst = draw(instances(max_P=P, v=v, max_m=m, c=True, max_K=3))
    return inst.with_(P=P, m=m, placement=inst.placement)


@settings(max_examples=scaled(30))
@given(tiny_instances())
def test_bound_is_valid_and_exact_claims_hold_against_enumeration(inst):
    """LB <= OPT, and LB == OPT wherever the bound says ``exact`` (OPT by exhaustive
    enumeration, independent of the bounds and of the search)."""
    opt, witness = brute_opt(inst)
    note_schedule(witness, "an optimal schedule")
    lb = lower_bound(inst)
    assert lb.value <= opt, (lb.terms, opt)
    if lb.exact:
        assert lb.value == opt, (lb.terms, opt)


@settings(max_examples=scaled(25))
@given(instances(max_P=3, max_v=2, max_m=4, max_pairs=8, max_K=3))
def test_search_results_are_consistent_with_the_bound(inst):
    """Property 1 for the search's schedules, and exactness consistency: a proven optimum never
    contradicts an ``exact`` bound, and no found schedule beats the bound. The search runs with
    ``use_theory=False``, so its proofs do not rest on the bound under test."""
    res = solve(inst, time_limit=2, use_theory=False)
    event(f"search: {res.status}")
    lb = lower_bound(inst)
    if res.schedule is None:
        assert res.status == "unknown"
        return
    note_schedule(res.schedule)
    r = simulate(res.schedule)
    assert r.valid and r.makespan == res.makespan
    assert res.makespan >= lower_bound(inst.with_(K=max(r.peak_memory))).value
    assert res.makespan >= lb.value
    assert res.lower_bound <= res.makespan
    if res.status == "optimal":
        assert lb.value <= res.makespan
        if lb.exact:
            assert res.makespan == lb.value, (lb.terms, res.makespan)


@st.composite
def exact_case_instances(draw, max_pairs=40):
    """Instances in the exact regimes: K = 1, or K large enough not to bind (or unconstrained)."""
    inst = draw(instances(max_P=5, max_v=3, max_m=8, max_pairs=max_pairs, K="inf", c=True))
    K = draw(st.sampled_from([1, None, inst.v * inst.m, inst.v * inst.m + 3]))
    return inst.with_(K=K)


@given(exact_case_instances())
def test_constructions_reach_the_bound(inst):
    """Property 5 (bound side): a construction is valid, within K, and its makespan equals the
    bound (``exact`` may still be False: it only claims what is proven for the formula)."""
    built = optimal_schedule(inst)
    event("construction" if built is not None else "no construction claimed")
    if built is None:
        return  # not a case the constructions claim
    note_schedule(built)
    r = simulate(built)
    assert r.valid, r.errors
    assert built.instance == inst or built.instance.with_(K=inst.K) == inst
    if inst.K is not None:
        assert max(r.peak_memory) <= inst.K
    lb = lower_bound(inst)
    assert r.makespan >= lb.value
    assert r.makespan >= lower_bound(inst.with_(K=max(r.peak_memory))).value
    # a construction is optimal only by meeting a proven lower bound
    assert r.makespan == lb.value, (lb.terms, r.makespan)


@settings(max_examples=scaled(20))
@given(exact_case_instances(max_pairs=8))
def test_constructions_are_never_worse_than_the_search(inst):
    """Property 5 (search side): on small instances, no schedule the search finds is shorter."""
    built = optimal_schedule(inst)
    if built is None:
        return
    note_schedule(built)
    T = simulate(built).makespan
    res = solve(inst, time_limit=2)
    if res.makespan is not None:
        assert T <= res.makespan
    if res.status == "optimal":
        assert T == res.makespan
