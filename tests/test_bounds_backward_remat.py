"""Bounds over the full model with backward recomputation (bounds/backward_remat.py,
docs/theory.md A.11) and the CP-SAT model that proves its optima (``backward=True``)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bounds.evaluate as ev
from bounds import lower_bound
from bounds.single_wave import input_drain
from pipebounds.search.cpsat import solve_cpsat
from proofs_checks.backward_remat import (QUICK, REFUTATIONS, _inst, backward_remat_valid,
                                          instances)
from proofs_checks.registry import Context
from schedules import Instance
from schedules.compiled import has_backward_recompute
from schedules.generators import GENERATORS
from schedules.remat_optimal import optimal_remat
from schedules.simulate import simulate


@given(A=st.integers(0, 30), k=st.integers(1, 6), n_max=st.integers(1, 8),
       f=st.integers(1, 5), bW=st.integers(1, 5))
@settings(max_examples=300, deadline=None)
def test_input_drain_is_the_minimum_over_n(A, k, n_max, f, bW):
    brute = min(max(A - (n - 1) * bW, max(0, n - k) * f) for n in range(1, n_max + 1))
    assert input_drain(A, k, n_max, f, bW) == brute
    assert input_drain(Fraction(A, 3), k, n_max, Fraction(f, 2), Fraction(bW, 5)) == min(
        max(Fraction(A, 3) - (n - 1) * Fraction(bW, 5), max(0, n - k) * Fraction(f, 2))
        for n in range(1, n_max + 1))


def test_the_refutations_of_the_plain_terms():
    """S1 and MW1 (MW8d's exact case) are above optima of the full model; their backward
    forms are not. The optima are re-simulated schedules that contain backward R ops."""
    for kw, name in REFUTATIONS:
        inst = _inst(kw)
        res = solve_cpsat(inst, time_limit=20, use_theory=False, backward=True)
        assert res.status == "optimal"
        assert has_backward_recompute(res.schedule)
        sim = simulate(res.schedule)
        assert sim.valid and sim.makespan == res.makespan
        assert dict(lower_bound(inst).terms)[name] > res.makespan
        assert lower_bound(inst, backward_remat=True).value <= res.makespan


def test_backward_bound_is_below_plain_on_fused_unchanged():
    fused = Instance(P=3, m=4, K=1, f=2, b=3)
    assert lower_bound(fused, backward_remat=True) == lower_bound(fused)
    for kw in QUICK:
        inst = _inst(kw)
        assert lower_bound(inst, backward_remat=True).value <= lower_bound(inst).value


SMALL = [Instance(P=P, m=m, K=K, f=f, b_I=bI, b_W=bW)
         for P, m, K, f, bI, bW in [(2, 3, 1, 1, 2, 1), (2, 3, 2, 2, 1, 1), (3, 3, 1, 1, 1, 2),
                                   (3, 3, 2, 1, 3, 1), (2, 4, 1, 2, 1, 2)]]


@pytest.mark.parametrize("inst", SMALL, ids=str)
def test_full_model_optimum_is_below_every_fixed_order_with_backward_remat(inst):
    """The CP-SAT model with backward R is not over-constrained: its optimum is at most the
    plain optimum and at most optimal_remat(backward=True) of every family order (an
    independent exact model of the same recompute choices on a fixed order)."""
    full = solve_cpsat(inst, time_limit=20, use_theory=False, backward=True)
    plain = solve_cpsat(inst, time_limit=20, use_theory=False)
    assert full.status == plain.status == "optimal"
    assert full.makespan <= plain.makespan
    assert lower_bound(inst, backward_remat=True).value <= full.makespan
    tried = 0
    for name, gen in GENERATORS.items():
        try:
            sched = gen(inst.with_(K=None))
        except Exception:   # a family that does not apply to this instance
            continue
        r = optimal_remat(sched.with_instance(inst), K=inst.K, backward=True, time_limit=10)
        if r.status == "optimal":
            tried += 1
            assert full.makespan <= r.makespan, name
    assert tried


def test_quick_check_passes():
    res = backward_remat_valid(Context(mode="quick"))
    assert res.ok, res.detail
    assert res.instances == len(instances("quick"))   # every optimum proven


@pytest.mark.parametrize("name,mutate", [
    ("split_drain_backward", lambda x: x + 1),
    ("split_memory_time_backward", lambda x: x + 1),
    ("single_slot_backward", lambda x: x + 1),
    ("mw_gpu_subset_backward", lambda x: x + 1),
    ("mw_single_slot_backward", lambda x: x + 1),
    ("mw_first_backward_backward", lambda x: x + 1),
    ("mw_memory_slots_backward", lambda x: x * Fraction(17, 16)),
])
def test_a_planted_error_in_each_backward_term_is_caught(monkeypatch, name, mutate):
    real = ev.backward_terms

    def planted(inst):
        return [(n, mutate(x) if n == name else x, e) for n, x, e in real(inst)]

    monkeypatch.setattr(ev, "backward_terms", planted)
    res = backward_remat_valid(Context(mode="quick"))
    assert not res.ok and name in res.detail


def test_simulate_uses_the_full_model_bound_for_backward_documents():
    from pipebounds.cli.simulate import simulation_report

    inst = _inst(REFUTATIONS[0][0])
    res = solve_cpsat(inst, time_limit=20, use_theory=False, backward=True)
    rep = simulation_report(res.schedule)
    assert rep["lower_bound_backward_remat"] is True
    assert rep["respects_bound"] is True
    plain = solve_cpsat(inst, time_limit=20, use_theory=False)
    rep2 = simulation_report(plain.schedule)
    assert rep2["lower_bound_backward_remat"] is False
