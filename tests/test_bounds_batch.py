"""bounds.batch (the array evaluation behind ``bound --batch``) equals bounds.lower_bound: the
same value, the same terms in the same order, the same theorem of the exact flag."""

from __future__ import annotations

import random
from fractions import Fraction


from bounds import lower_bound
from bounds.batch import Rows, lower_bounds
from schedules import Instance


_rows = Rows.of

T3D_RAISES = [Instance(P=3, m=24, K=1, f=5, b=8), Instance(P=3, m=12, K=1, f=5, b=3)]
"""Instances where T3d is above T3 (417 > 416 and 146 > 144): a batch without T3d is wrong
there (the removed float vectorisation gave 416 on the first)."""


def test_batch_equals_lower_bound_on_random_instances():
    rng = random.Random(3)
    insts = []
    for _ in range(600):
        v = rng.choice([1, 2, 3])
        d = (dict(b_I=rng.randint(1, 4), b_W=rng.randint(1, 4)) if rng.random() < 0.4
             else dict(b=rng.randint(1, 5)))
        insts.append(Instance(P=rng.randint(1, 7), m=rng.randint(1, 24),
                              K=rng.choice([1, 2, 3, 5, None]), v=v,
                              placement=rng.choice(["looped", "vshape"]), f=rng.randint(1, 4),
                              **d))
    res = lower_bounds(_rows(insts))
    for k, inst in enumerate(insts):
        lb = lower_bound(inst)
        assert Fraction(int(res.num[k]), int(res.den[k])) == lb.value, inst
        assert [(n, Fraction(a, d)) for n, a, d in res.terms[k]] == list(lb.terms), inst
        assert res.theorem[k] == lb.theorem, inst


def test_a_wrong_term_in_the_batch_is_caught(monkeypatch):
    """The comparison can fail: a batch T1 one unit too high differs from lower_bound."""
    from bounds import batch

    real = batch._single_wave

    def wrong(r):
        terms = real(r)
        for t in terms:
            if t.name == "fill_drain":
                t.num = t.num + 1
        return terms

    monkeypatch.setattr(batch, "_single_wave", wrong)
    inst = Instance(P=4, m=8, K=None, f=1, b=2)
    res = batch.lower_bounds(_rows([inst]))
    assert Fraction(int(res.num[0]), int(res.den[0])) != lower_bound(inst).value


def test_batch_has_the_coupled_slot_term():
    """T3d raises the bound on these instances; the batch gives lower_bound's value there."""
    assert lower_bound(T3D_RAISES[0]).value == 417
    res = lower_bounds(_rows(T3D_RAISES))
    for k, inst in enumerate(T3D_RAISES):
        lb = lower_bound(inst)
        assert dict(lb.terms)["single_slot_coupled"] > dict(lb.terms)["single_slot"]
        assert Fraction(int(res.num[k]), int(res.den[k])) == lb.value, inst
        assert [(n, Fraction(a, d)) for n, a, d in res.terms[k]] == list(lb.terms), inst


def test_batch_equals_lower_bound_on_random_single_slot_instances():
    """K = 1 fused instances with larger f/b (where T3d can exceed T3), against lower_bound."""
    rng = random.Random(7)
    insts = T3D_RAISES + [Instance(P=rng.randint(2, 5), m=rng.randint(2, 30), K=1,
                                   f=rng.randint(1, 9), b=rng.randint(1, 9)) for _ in range(300)]
    res = lower_bounds(_rows(insts))
    for k, inst in enumerate(insts):
        assert Fraction(int(res.num[k]), int(res.den[k])) == lower_bound(inst).value, inst


def test_a_missing_term_in_the_batch_is_caught(monkeypatch):
    """The comparison can fail: a batch without T3d gives 416 where lower_bound gives 417."""
    from bounds import batch

    real = batch._single_wave
    monkeypatch.setattr(batch, "_single_wave",
                        lambda r: [t for t in real(r) if t.name != "single_slot_coupled"])
    res = batch.lower_bounds(_rows(T3D_RAISES[:1]))
    assert Fraction(int(res.num[0]), int(res.den[0])) == 416 != lower_bound(T3D_RAISES[0]).value


def test_batch_with_repeated_rows_equals_lower_bound():
    """Rows repeated and interleaved (the batch evaluates MW1 once per distinct (durations, m)
    and T3d once per distinct (P, m, f, b)): every copy gets its own instance's bound, terms and
    theorem, over T3d-raising rows, multi-wave rows of both placements and P up to 10."""
    rng = random.Random(11)
    base = list(T3D_RAISES)
    for _ in range(60):
        d = (dict(b_I=rng.randint(1, 3), b_W=rng.randint(1, 3)) if rng.random() < 0.4
             else dict(b=rng.randint(1, 9)))
        base.append(Instance(P=rng.randint(2, 10), m=rng.randint(1, 20), K=rng.choice([1, 2, None]),
                             v=rng.choice([1, 2]), placement=rng.choice(["looped", "vshape"]),
                             f=rng.randint(1, 9), **d))
    insts = [rng.choice(base) for _ in range(400)] + base
    res = lower_bounds(_rows(insts))
    cache: dict = {}
    for k, inst in enumerate(insts):
        lb = cache.setdefault(inst, lower_bound(inst))
        assert Fraction(int(res.num[k]), int(res.den[k])) == lb.value, inst
        assert [(n, Fraction(a, d)) for n, a, d in res.terms[k]] == list(lb.terms), inst
        assert res.theorem[k] == lb.theorem, inst
