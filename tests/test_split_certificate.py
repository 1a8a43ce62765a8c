"""S-nb: at ``K = ∞`` (split backward, ``v = 1``) a greedy schedule reaches ``max(S1, S2)``.

The certificate (:func:`pipebounds.constructions.single_wave.split_nonbinding_schedule`) tries
the greedy ``I > F > W`` list schedule in four hold variants. On the sizes where the two
variants of the previous version missed (15 of the 1,620 instances of ``P`` 2-6, ``m`` 1-12,
durations 1-3, e.g. ``P = 5, m = 3, f = 2, b_I = 1, b_W = 2``) it reaches the bound; the check
behind the checked range ``S-nb-checked`` (``split_nonbinding_certificate``, whose quick range
holds these sizes) fails when a variant is taken away or a bound raised.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

import bounds.single_wave as bsw
from bounds import lower_bound
from pipebounds.certify.checked import split_nonbinding_checked
from pipebounds.constructions.single_wave import split, split_nonbinding_schedule
from proofs_checks.single_wave import split_nonbinding_misses
from schedules import Instance, simulate

# the old certificate's misses lie here: P 4-6, m 3-6, (f, b_I, b_W) in {1, 2, 3}^3
SIZES = (range(4, 7), range(3, 7), (1, 2, 3))


@pytest.fixture(autouse=True)
def _fresh_cache():
    split_nonbinding_schedule.cache_clear()
    yield
    split_nonbinding_schedule.cache_clear()


def test_two_hold_variants_are_not_enough(monkeypatch):
    """Planted: the previous version's two variants (no hold, hold forwards) miss some."""
    monkeypatch.setattr(split, "HOLD_VARIANTS", split.HOLD_VARIANTS[:2])
    _, fails = split_nonbinding_misses(*SIZES)
    assert any((d["P"], d["m"], d["f"], d["b_input"], d["b_weight"]) == (4, 4, 3, 2, 2)
               for d in fails)


@pytest.mark.parametrize("name", ["split_drain_value", "split_first_input_value"])
def test_a_raised_bound_is_caught(monkeypatch, name):
    """Planted: S1 (S2) raised by 1/64 exceeds the certificate's makespan where it binds."""
    orig = getattr(bsw, name)
    monkeypatch.setattr(bsw, name, lambda inst: orig(inst) + Fraction(1, 64))
    _, fails = split_nonbinding_misses(*SIZES)
    assert fails


@settings(max_examples=40, deadline=None)
@given(P=st.integers(2, 10), m=st.integers(1, 20), f=st.integers(1, 5), bI=st.integers(1, 5),
       bW=st.integers(1, 5), slack=st.sampled_from([None, 0, 3]))
def test_a_certificate_is_valid_and_at_the_bound(P, m, f, bI, bW, slack):
    """Inside the checked range it returns a schedule; wherever it does (inside or outside),
    that schedule is valid and its makespan is the bound, with ``K`` unlimited or ``>= m``."""
    inst = Instance(P=P, m=m, K=None if slack is None else m + slack, f=f, b_I=bI, b_W=bW)
    sched = split_nonbinding_schedule(inst)
    assert sched is not None or not split_nonbinding_checked(inst)
    if sched is not None:
        res = simulate(sched)
        assert res.valid and res.makespan == lower_bound(inst).value
