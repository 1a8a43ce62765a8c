"""fit_memory (schedules/remat.py): every family fitted to every K from 1 to its natural peak
is valid, holds at most K, keeps the base ops (plus R), and is unchanged when K does not bind."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, strategies as st

from schedules import Instance, Schedule, simulate
from schedules.generators import GENERATORS, generate
from schedules.remat import RematError, fit_memory


@st.composite
def family_instances(draw):
    # one direction: the bidirectional dualpipe has its own tests (tests/test_dualpipe.py)
    name = draw(st.sampled_from(sorted(n for n, g in GENERATORS.items()
                                       if g.requires.directions == 1)))
    req = GENERATORS[name].requires
    v = draw(st.integers(req.v_min, req.v_max or 3))
    P = draw(st.integers(1, 4))
    m = draw(st.integers(2 * P if name.startswith("dualpipev") else 1, 8))
    split = req.split or draw(st.booleans())
    durations = draw(st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 2), (1, 1, 3)]))
    f, bi, bw = durations
    kw = {"b_I": bi, "b_W": bw} if split else {"b": bi + bw}
    inst = Instance(P=P, m=m, v=v, placement=req.placement or draw(
        st.sampled_from(["looped", "vshape"])), f=f, **kw)
    return name, inst


def non_r(schedule: Schedule) -> Counter:
    return Counter(op for _, op in schedule.ops() if op.kind != "R")


@given(family_instances(), st.data())
def test_fit_memory_valid_at_every_K(case, data):
    name, inst = case
    base = generate(name, inst)
    res = simulate(base)
    peak = max(res.peak_memory)
    K = data.draw(st.integers(1, peak), label="K")
    fitted = fit_memory(base, K)
    out = simulate(fitted)
    assert out.valid, out.errors[:3]
    assert max(out.peak_memory) <= K and fitted.instance.K == K
    assert non_r(fitted) == non_r(base)
    recomputed = [op for _, op in fitted.ops() if op.kind == "R"]
    assert len(set(recomputed)) == len(recomputed)
    if K >= peak:
        assert fitted.orders == base.orders  # nothing changes when K does not bind


def test_every_family_every_K_on_one_instance():
    for name, gen in GENERATORS.items():
        if gen.requires.directions != 1:  # fit_memory refuses two directions (test_dualpipe.py)
            continue
        v = gen.requires.v_min
        inst = Instance(P=3, m=6, v=v, placement=gen.requires.placement or "looped",
                        b_I=1, b_W=1)
        base = generate(name, inst)
        peak = max(simulate(base).peak_memory)
        for K in range(1, peak + 1):
            res = simulate(fit_memory(base, K))
            assert res.valid and max(res.peak_memory) <= K, (name, K, res.errors[:2])


def test_K1_puts_each_recompute_right_before_its_backward():
    """With K = 1 nothing may store between R(j,s) and its backward (MODEL.md)."""
    base = generate("1f1b", Instance(P=4, m=8))
    fitted = fit_memory(base, 1)
    assert simulate(fitted).peak_memory == [1, 1, 1, 1]
    for seq in fitted.orders:
        for i, op in enumerate(seq):
            if op.kind == "R":
                assert seq[i + 1].kind == "B" and seq[i + 1].stage == op.stage \
                    and seq[i + 1].microbatch == op.microbatch


def test_split_form_moves_weight_gradients_when_needed():
    base = generate("zb-h2", Instance(P=3, m=6, b_I=1, b_W=1))
    fitted = fit_memory(base, 1)
    res = simulate(fitted)
    assert res.valid and max(res.peak_memory) == 1


def test_refit_drops_existing_recomputes():
    base = generate("gpipe", Instance(P=3, m=5))
    once = fit_memory(base, 2)
    again = fit_memory(once, 4)
    assert simulate(again).valid and max(simulate(again).peak_memory) <= 4
    assert fit_memory(once, 5).orders == base.orders  # K = natural peak: back to the base


def test_makespan_of_fitted_1f1b_decreases_to_the_base():
    """On P=4, m=8, f=1, b=2: measured makespans by K (documented in docs/schedules.md)."""
    base = generate("1f1b", Instance(P=4, m=8))
    spans = [simulate(fit_memory(base, K)).makespan for K in range(1, 5)]
    assert spans == sorted(spans, reverse=True) and spans[-1] == 33


@pytest.mark.parametrize("K", [0, -1, 1.5, True, "2"])
def test_bad_K(K):
    with pytest.raises(RematError):
        fit_memory(generate("1f1b", Instance(P=2, m=2)), K)


def test_invalid_base_is_reported():
    inst = Instance(P=2, m=1)
    bad = Schedule.from_strings(inst, {0: ["0B0", "0F0"], 1: ["1F0", "1B0"]})
    with pytest.raises(RematError, match="invalid"):
        fit_memory(bad, 1)


def test_fit_memory_with_per_stage_durations():
    """fit_memory works on the orders; the polish times them with the stage's durations."""
    from schedules import Instance, simulate
    from schedules.generators import generate
    from schedules.remat import fit_memory

    inst = Instance(P=3, m=5, f=[1, 3, 2], b_I=[2, 1, 3], b_W=[1, 2, 1], c=1)
    base = generate("zb-h1", inst)
    for K in (1, 2):
        fitted = fit_memory(base, K)
        r = simulate(fitted)
        assert r.valid and max(r.peak_memory) <= K
        assert r.makespan >= simulate(base).makespan
