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


# --- what each bound covers (docs/theory.md A.11, table; bounds.backward_remat.COVERAGE) ---

def _probe_instances():
    """Split and fused instances through every branch of lower_bound(backward_remat=True):
    v = 1, 2, 3, both placements, K in {1, 2, 3, None}, per-stage costs, c > 0, a byte
    budget, overlapped F&B ops, two directions."""
    from schedules.memory import MemoryModel

    out = []
    for v, K, pl in [(1, 1, "looped"), (1, 2, "looped"), (1, 3, "looped"), (1, None, "looped"),
                     (2, 1, "vshape"), (2, 2, "looped"), (2, 3, "vshape"), (2, None, "looped"),
                     (3, 1, "looped"), (3, 2, "vshape")]:
        out.append(Instance(P=3, m=4, K=K, v=v, placement=pl, f=1, b_I=2, b_W=1))
        out.append(Instance(P=3, m=4, K=K, v=v, placement=pl, f=2, b=3))
    out.append(Instance(P=2, m=3, K=1, f=[1, 2], b_I=[2, 1], b_W=[1, 1]))
    out.append(Instance(P=2, m=3, K=2, v=2, f=[1, 2, 1, 1], b_I=[2, 1, 1, 2], b_W=1))
    out.append(Instance(P=2, m=3, K=2, f=1, b_I=2, b_W=1, c=1))
    out.append(Instance(P=2, m=3, K=None, f=1, b_I=2, b_W=1,
                        memory=MemoryModel(activation=[2, 2], budget=5)))
    out.append(Instance(P=2, m=2, K=1, f=1, b_I=1, b_W=1, d_FI=Fraction(3, 2)))
    out.append(Instance(P=4, m=4, K=2, f=1, b_I=1, b_W=1, directions=2))
    return out


def _uncovered(insts):
    """Terms of lower_bound(inst, backward_remat=True) that COVERAGE does not mark as holding
    over the full model (empty when the code does what the table says)."""
    from bounds.backward_remat import covers_backward

    return [(name, inst) for inst in insts
            for name, _ in lower_bound(inst, backward_remat=True).terms
            if not covers_backward(name, inst)]


def test_every_registered_term_has_a_coverage_row():
    from bounds.backward_remat import COVERAGE
    from bounds.theorems import all_theorems

    with_terms = {i for i, th in all_theorems().items() if th.terms}
    assert with_terms - set(COVERAGE) == set()
    assert set(COVERAGE) - with_terms == set()
    assert {c.status for c in COVERAGE.values()} <= {"holds", "replaced", "left out", "fused"}


def test_every_term_used_with_backward_remat_is_covered():
    insts = _probe_instances()
    assert not _uncovered(insts)
    used = {ev.TERM_IDS[n] for inst in insts if inst.split
            for n, _ in lower_bound(inst, backward_remat=True).terms}
    # every r form and every plain term marked "holds" that applies to a probe is exercised
    assert {"T0", "S2", "MW1", "S1r", "S3r", "T3r", "MW1r", "MW7r", "MW9r", "MW11r", "H1",
            "H4"} <= used


def test_a_wrong_coverage_mark_is_caught(monkeypatch):
    """Planted: S2 marked as not covering, and MW1's condition dropped the other way (the
    plain MW1 term planted into the K = 1 path): both are reported."""
    import bounds.backward_remat as br

    monkeypatch.setitem(br.COVERAGE, "S2", br.Coverage("left out", "planted"))
    assert any(n == "split_first_input" for n, _ in _uncovered(_probe_instances()))
    monkeypatch.undo()
    real = ev.backward_terms

    def planted(inst):
        out = real(inst)
        return out + ([("mw_gpu_subset", 0, False)] if inst.K == 1 and inst.v >= 2 else [])

    monkeypatch.setattr(ev, "backward_terms", planted)
    assert any(n == "mw_gpu_subset" for n, _ in _uncovered(_probe_instances()))


def test_the_coverage_table_of_the_docs_matches_the_code():
    """docs/theory.md A.11, *What each bound covers*: a row for every theorem with terms (a
    row may list several ids), its status column equal to COVERAGE's."""
    import re
    from pathlib import Path

    from bounds.backward_remat import COVERAGE

    text = Path(__file__).resolve().parents[1].joinpath("docs/theory.md").read_text()
    part = text.split("**What each bound covers**", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in part.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        ids = cells[0].split(", ")
        if len(cells) >= 3 and all(re.fullmatch(r"[A-Z]+\d*[a-z]?", i) for i in ids):
            rows.update((i, cells[2]) for i in ids)
    assert rows == {i: c.status for i, c in COVERAGE.items()}


def test_plain_t3_split_is_refuted_and_mw11r_reaches_the_optimum():
    """P = 3, m = 6, K = 1, f = 2, b_I = 6, b_W = 3: T3 split = 84 = the optimum without
    backward R; with it OPT = 82 (a re-simulated schedule with backward R), which MW11r
    (v = 1) reaches."""
    inst = Instance(P=3, m=6, K=1, f=2, b_I=6, b_W=3)
    res = solve_cpsat(inst, time_limit=30, use_theory=False, backward=True)
    assert res.status == "optimal" and res.makespan == 82
    assert has_backward_recompute(res.schedule)
    sim = simulate(res.schedule)
    assert sim.valid and sim.makespan == 82
    assert dict(lower_bound(inst).terms)["single_slot"] == 84
    lb = lower_bound(inst, backward_remat=True)
    assert lb.value == 82 and "mw_first_backward_backward" in lb.binding
