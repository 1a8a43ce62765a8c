"""bounds.batch (the array evaluation behind ``bound --batch``) equals bounds.lower_bound: the
same value, the same terms in the same order, the same theorem of the exact flag."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np

from bounds import lower_bound
from bounds.batch import Rows, lower_bounds
from schedules import Instance


def _rows(insts):
    A = lambda xs: np.array(xs, dtype=np.int64)  # noqa: E731
    return Rows(A([i.P for i in insts]), A([i.m for i in insts]), A([i.K or 0 for i in insts]),
                A([i.v for i in insts]), np.array([i.placement == "vshape" and i.v > 1
                                                   for i in insts]),
                A([int(i.f) for i in insts]), A([int(i.b) for i in insts]),
                A([int(i.b_I or 0) for i in insts]), A([int(i.b_W or 0) for i in insts]))


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
