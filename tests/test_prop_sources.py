"""Property 1, the central claim, for schedules from every source other than the random one:
the generators (natural and fitted to K), :func:`schedules.remat.fit_memory` applied to random
valid schedules, the exact search and the constructions. Every valid schedule has makespan >=
LB(its instance with K = its peak memory), compared exactly.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, strategies as st

from bounds.evaluate import lower_bound
from schedules import simulate
from schedules.generators import GENERATORS, GeneratorError, generate
from schedules.remat import fit_memory
from reference_sim import reference_simulate
from strategies import instances, note_schedule, valid_schedules


def assert_central_claim(sched, K=None):
    note_schedule(sched)
    res = simulate(sched)
    assert res.valid, res.errors
    peak = max(res.peak_memory)
    if K is not None:
        assert peak <= K
    lb = lower_bound(sched.instance.with_(K=peak))
    assert res.makespan >= lb.value, (lb.terms, res.makespan)
    return res


@st.composite
def generator_cases(draw):
    """A generator name, then an instance it declares it supports (``Requires``)."""
    # one direction: the bidirectional dualpipe has its own tests (tests/test_dualpipe.py)
    name = draw(st.sampled_from(sorted(n for n, g in GENERATORS.items()
                                       if g.requires.directions == 1)))
    req = GENERATORS[name].requires
    v = draw(st.integers(req.v_min, req.v_max or 3))
    inst = draw(instances(max_P=4, max_m=8, max_pairs=40, v=v, placement=req.placement,
                          split=True if req.split else None))
    assume(not req.problems(inst))
    return name, inst


@given(generator_cases())
def test_generated_schedules_are_valid_and_never_below_the_bound(case):
    name, inst = case
    try:
        sched = generate(name, inst)
    except GeneratorError:
        return  # a size the family declares it cannot build (message checked elsewhere)
    res = assert_central_claim(sched, inst.K)
    # property 2 on structured schedules too: the independent simulator agrees
    ref = reference_simulate(sched)
    assert not ref.deadlock and ref.makespan == res.makespan and ref.peak == res.peak_memory


def test_every_generator_builds_on_its_home_instance():
    """Each family builds a valid schedule on a mid-size instance it declares it supports."""
    from schedules import Instance
    for name, gen in GENERATORS.items():
        if gen.requires.directions != 1:  # two directions: tests/test_dualpipe.py
            continue
        v = gen.requires.v_min
        inst = Instance(P=4, m=8, v=v, placement=gen.requires.placement or "looped",
                        b_I=1, b_W=1)
        natural = generate(name, inst)
        assert_central_claim(natural)
        if natural.overlaps is not None:  # F&B ops: fitting to K would drop them, so refused
            with pytest.raises(GeneratorError, match="F&B"):
                generate(name, inst.with_(K=2))
            continue
        assert_central_claim(generate(name, inst.with_(K=2)), 2)


@given(valid_schedules(instances(max_pairs=20)), st.integers(1, 6))
def test_fit_memory_of_random_schedules_fits_and_respects_the_bound(sched, K):
    res = simulate(sched)
    K = min(K, max(res.peak_memory))  # the schedule may already hold R ops: they are refitted
    fitted = fit_memory(sched, K)
    assert_central_claim(fitted, K)
    assert fitted.instance.K == K  # documented: the result carries K in its instance
