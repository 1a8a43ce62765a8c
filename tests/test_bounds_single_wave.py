"""Single-wave bounds (bounds/single_wave.py, bounds/batch.py; docs/theory.md).

Hand-derived values (the proofs in docs/theory.md) and cross-checks between the three forms of
each bound: the sympy expression, the exact Fraction evaluation, the numpy array twin.
Optima of small instances come from a tiny exhaustive enumeration written here (not the
project's solver), so these tests do not depend on the search package.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from bounds import lower_bound
from bounds import single_wave as sw
from bounds.symbols import K, P, b, b_I, b_W, exact_lambdify, f, m, substitutions
from schedules import Instance, simulate
from pipebounds.constructions import optimal_schedule


exact_fn = exact_lambdify


_FUSED = (P, m, K, f, b, sw.p)
_SPLIT = (P, m, K, f, b_I, b_W, sw.p)
T2 = exact_fn(sw.memory_time_gpu_expr(), _FUSED)
T3 = exact_fn(sw.single_slot_gpu_expr(), _FUSED)
S1 = exact_fn(sw.split_drain_gpu_expr(), _SPLIT)
S3 = exact_fn(sw.split_memory_time_gpu_expr(), _SPLIT)
T3S = exact_fn(sw.single_slot_gpu_expr(split=True), _SPLIT)


# ----------------------------------------------------------------------------- hand values
def test_fill_drain_and_nonbinding_memory_are_exact():
    inst = Instance(P=4, m=8, K=4, f=1, b=2)
    lb = lower_bound(inst)
    assert lb.value == 33 and lb.exact          # (m+P-1)(f+b) = 11 * 3, 1F1B reaches it
    assert not lower_bound(inst.with_(K=3)).exact  # K < min(m, P): no claim from T1


def test_single_slot_hand_example():
    # P=3, m=4, f=3, b=2, K=1: GPU 1 (d=2): G = 5, c = 1, r0 = 2; x = 1 kept:
    # W = 4*5 + 3*3 + 5 - 3*1 - 2*1 = 29, plus p(f+b) = 5 -> 34 (brute-force optimum 34)
    inst = Instance(P=3, m=4, K=1, f=3, b=2)
    assert sw.single_slot_gpu_value(inst, 1) == 34
    assert sw.single_slot_choice(inst, 1) == (1, 29)
    assert sw.single_slot_value(inst) == 34


def test_split_drain_matches_zero_bubble_figures():
    # ZB-H1: K = P -> bubble (P-1)(f + b_I - b_W); ZB-H2: K = 2P-1 -> (P-1)(f + b_I - 2 b_W)
    inst = Instance(P=4, m=8, K=4, f=2, b_I=3, b_W=1)
    assert sw.split_drain_value(inst) == 8 * 6 + 3 * (2 + 3 - 1)
    assert sw.split_drain_value(inst.with_(K=7)) == 8 * 6 + 3 * (2 + 3 - 2)


def test_terms_reject_multi_wave():
    with pytest.raises(ValueError):
        sw.terms(Instance(P=2, m=2, v=2))


# ----------------------------------------------------------------------------- three forms agree
@given(st.integers(1, 6), st.integers(1, 10), st.integers(1, 4),
       st.sampled_from([1, 2, 3, Fraction(1, 2), Fraction(5, 3)]),
       st.sampled_from([1, 2, 3, Fraction(3, 2)]))
def test_sympy_expressions_equal_exact_evaluation(P_, m_, K_, f_, b_):
    inst = Instance(P=P_, m=m_, K=K_, f=f_, b=b_)
    F = Fraction
    args = (F(P_), F(m_), F(K_), inst.f, inst.b)
    assert max(T2(*args, F(q)) for q in range(P_)) == sw.memory_time_value(inst)
    assert max(T3(*args, F(q)) for q in range(P_)) == sw.single_slot_value(inst.with_(K=1))
    si = Instance(P=P_, m=m_, K=K_, f=f_, b_I=b_, b_W=f_)
    sa = (F(P_), F(m_), F(K_), si.f, si.b_I, si.b_W)
    assert max(S1(*sa, F(q)) for q in range(P_)) == sw.split_drain_value(si)
    assert max(S3(*sa, F(q)) for q in range(P_)) == sw.split_memory_time_value(si)
    assert max(T3S(*sa, F(q)) for q in range(P_)) == sw.single_slot_value(si.with_(K=1))


def test_sympy_subs_agrees_on_a_sample():
    inst = Instance(P=3, m=5, K=1, f=2, b=1)
    e = sw.single_slot_gpu_expr().subs(substitutions(inst))
    assert max(Fraction(str(e.subs(sw.p, q))) for q in range(3)) == sw.single_slot_value(inst)


@given(st.integers(1, 7), st.integers(1, 14), st.sampled_from([1, 2, 3, Fraction(1, 2)]),
       st.sampled_from([1, 2, 3, Fraction(7, 3)]))
def test_single_slot_closed_form_minimum_is_the_minimum_over_all_x(P_, m_, f_, b_):
    inst = Instance(P=P_, m=m_, K=1, f=f_, b=b_)
    for q in range(P_):
        brute = min(sw._single_slot_W(m_, P_ - q, inst.f, inst.b, x) for x in range(m_ + 1))
        assert sw.single_slot_choice(inst, q)[1] == brute


@given(st.integers(1, 7), st.integers(1, 14), st.sampled_from([1, 2, 3, Fraction(1, 2)]),
       st.sampled_from([1, 2, Fraction(7, 3)]), st.sampled_from([1, 3, Fraction(1, 3)]))
def test_split_single_slot_minimum_is_the_minimum_over_all_x(P_, m_, f_, bi, bw):
    inst = Instance(P=P_, m=m_, K=1, f=f_, b_I=bi, b_W=bw)
    for q in range(P_):
        brute = min(sw._single_slot_W(m_, P_ - q, inst.f, inst.b, x, inst.b_I)
                    for x in range(m_ + 1))
        assert sw.single_slot_choice(inst, q)[1] == brute


def test_single_slot_dominates_memory_time_at_K1():
    for P_, m_, f_, b_ in itertools.product(range(1, 6), range(1, 9), (1, 2, 3), (1, 2, 3)):
        inst = Instance(P=P_, m=m_, K=1, f=f_, b=b_)
        assert sw.single_slot_value(inst) >= sw.memory_time_value(inst)
        # split form (b_I = b, b_W = f): at least S1 and S3 at K = 1
        si = Instance(P=P_, m=m_, K=1, f=f_, b_I=b_, b_W=f_)
        assert sw.single_slot_value(si) >= sw.split_drain_value(si)
        if m_ > 1:
            assert sw.single_slot_value(si) >= sw.split_memory_time_value(si)


def test_batch_equals_exact_on_a_grid():
    """The array twin (bounds.batch) gives lower_bound's exact value on a single-wave grid,
    fused and split (tests/test_bounds_batch.py compares terms and theorems too)."""
    from bounds.batch import Rows, lower_bounds

    insts = [Instance(P=P_, m=m_, K=K_, f=f_, b=b_) for P_, m_, K_, f_, b_ in itertools.product(
        range(1, 7), range(1, 10), (1, 2, 3, 5, None), (1, 2, 3), (1, 2, 3))]
    insts += [Instance(P=P_, m=m_, K=K_, f=f_, b_I=bi, b_W=bw)
              for P_, m_, K_, f_, bi, bw in itertools.product(range(1, 6), range(1, 8),
                                                              (1, 2, 4, None), (1, 2), (1, 3),
                                                              (1, 2))]
    res = lower_bounds(Rows.of(insts))
    for k, inst in enumerate(insts):
        assert Fraction(int(res.num[k]), int(res.den[k])) == lower_bound(inst).value, inst


# ----------------------------------------------------------------------------- against optima
def _brute_optimum(inst: Instance) -> Fraction:
    """Exhaustive optimum of a tiny fused v = 1 instance: every per-GPU order built op by op
    (any op whose predecessors are placed), every remat choice, ASAP timing, memoised on the
    set of placed ops and the finishing times (independent of the project's solver)."""
    P_, m_ = inst.P, inst.m
    Kc = inst.K if inst.K is not None else m_
    u = inst.unit
    fd, bd = int(inst.f * u), int(inst.b * u)
    best = [None]
    seen = set()

    def rec(state, gpu_free, live, fend, bend, rend, stored):
        key = (state, gpu_free, live, fend, bend, rend)
        if key in seen:
            return
        seen.add(key)
        T = max(gpu_free)
        if best[0] is not None and T >= best[0]:
            return
        if all(e is not None for e in bend):
            best[0] = T
            return
        for j in range(m_):
            for s in range(P_):
                i = j * P_ + s
                if fend[i] is None:
                    if s > 0 and fend[i - 1] is None:
                        continue
                    ready = 0 if s == 0 else fend[i - 1]
                    st_ = max(gpu_free[s], ready)
                    for store in (True, False):
                        if store and live[s] >= Kc:
                            continue
                        gf = list(gpu_free); gf[s] = st_ + fd
                        lv = list(live); lv[s] += store
                        fe = list(fend); fe[i] = st_ + fd
                        so = list(stored); so[i] = store
                        rec(state, tuple(gf), tuple(lv), tuple(fe), bend, rend, tuple(so))
                    continue
                if bend[i] is not None:
                    continue
                if not stored[i] and rend[i] is None:
                    if live[s] < Kc:
                        st_ = max(gpu_free[s], fend[i])
                        gf = list(gpu_free); gf[s] = st_ + fd
                        lv = list(live); lv[s] += 1
                        re = list(rend); re[i] = st_ + fd
                        rec(state, tuple(gf), tuple(lv), fend, bend, tuple(re), stored)
                    continue
                nxt = fend[i] if s == P_ - 1 else bend[i + 1]
                if nxt is None:
                    continue
                st_ = max(gpu_free[s], nxt, rend[i] or 0)
                gf = list(gpu_free); gf[s] = st_ + bd
                lv = list(live); lv[s] -= 1
                be = list(bend); be[i] = st_ + bd
                rec(state, tuple(gf), tuple(lv), fend, tuple(be), rend, stored)

    n = m_ * P_
    rec(0, (0,) * P_, (0,) * P_, (None,) * n, (None,) * n, (None,) * n, (False,) * n)
    return Fraction(best[0], u)


@pytest.mark.parametrize("P_,m_,K_,f_,b_", [
    (2, 2, 1, 1, 2), (2, 3, 1, 2, 1), (2, 3, 1, 3, 2), (3, 2, 1, 1, 1),
    (3, 2, 1, 2, 3), (2, 2, None, 1, 2), (3, 2, None, 2, 1)])
def test_bound_valid_and_exact_claims_hold_on_tiny_instances(P_, m_, K_, f_, b_):
    inst = Instance(P=P_, m=m_, K=K_, f=f_, b=b_)
    opt = _brute_optimum(inst)
    lb = lower_bound(inst)
    assert lb.value <= opt
    if lb.exact:
        assert lb.value == opt
    if K_ == 1:                      # Theorem 3 is exact (docs/theory.md)
        assert sw.single_slot_value(inst) == opt
    sched = optimal_schedule(inst)
    if sched is not None:
        assert simulate(sched).makespan == opt


@pytest.mark.parametrize("P_,m_,f_,b_", [
    (3, 10, 1, 2), (3, 10, 1, 1), (4, 9, 2, 5), (6, 10, 1, 2), (3, 12, 5, 3), (5, 9, 1, 3)])
def test_single_slot_exactness_outside_the_checked_range_rests_on_a_certificate(P_, m_, f_, b_):
    """Outside the checked range ``lower_bound`` claims no exactness for T3 (no theorem covers
    it, and it never searches); the certifier claims it exactly when the construction returns a
    schedule, and that schedule is a certificate: valid, one activation per GPU, makespan = LB."""
    from pipebounds.certify import certify, single_slot_checked
    from pipebounds.constructions.single_wave import single_slot_schedule

    inst = Instance(P=P_, m=m_, K=1, f=f_, b=b_)
    assert not single_slot_checked(inst)
    sched = single_slot_schedule(inst)
    lb = lower_bound(inst)
    assert not lb.exact
    cert = certify(inst, schedules=[sched] if sched is not None else [], table=False)
    assert cert.exact == (sched is not None)
    if sched is not None:
        res = simulate(sched)
        assert cert.basis == "certificate" and cert.schedule is sched
        assert res.valid and max(res.peak_memory) == 1
        assert res.makespan == lb.value == sw.single_slot_value(inst)


def test_single_slot_is_not_exact_at_the_counterexample():
    """P=3, m=12, f=5, b=3: T3 = 144 (hand-computed in docs/theory.md section 5) but OPT = 146
    (pipebounds/data/optima.jsonl, independent CP-SAT): T3 stays below and claims no exactness; the bound
    is T3d = 146 (docs/theory.md, Theorem 3d), which no theorem claims exact: only the table's
    optimum makes it so."""
    from pipebounds.certify import certify

    inst = Instance(P=3, m=12, K=1, f=5, b=3)
    lb = lower_bound(inst)
    assert sw.single_slot_value(inst) == 144 and not sw.single_slot_exact(inst)
    assert lb.value == sw.coupled_slot_value(inst) == 146
    assert not lb.exact
    cert = certify(inst)
    assert (cert.optimum, cert.basis, cert.exact, cert.exact_basis) == (146, "table", True,
                                                                        "table")
    # scaling every duration scales the optimum: the table answers for 2x too
    assert certify(Instance(P=3, m=12, K=1, f=10, b=6)).optimum == 292


@given(st.integers(1, 40), st.integers(1, 7), st.integers(1, 7))
def test_single_slot_is_exact_for_two_gpus(m_, f_, b_):
    """Theorem 3b: for P = 2 the explicit schedule reaches T3 at every size."""
    from pipebounds.constructions.single_wave import two_gpu_schedule

    inst = Instance(P=2, m=m_, K=1, f=f_, b=b_)
    lb = lower_bound(inst)
    res = simulate(two_gpu_schedule(inst))
    assert lb.exact and res.valid and max(res.peak_memory) == 1
    assert res.makespan == lb.value


# --- S4 (split window fill, K = 2; docs/theory.md A.7) ---
def test_s4_minimum_over_r_is_the_brute_minimum():
    """window_fill_choices holds a minimiser: the candidates give the minimum over every r."""
    from proofs_checks.single_wave import window_fill_choice_misses

    grid = [(m_, f_, A, g) for m_ in range(2, 30)
            for f_, A, g in itertools.product((1, 2, Fraction(1, 2)), (0, 1, 3, Fraction(5, 2)),
                                              (-1, 0, 1, 2, 5))]
    assert window_fill_choice_misses(grid) == []


def test_s4_by_hand_and_a_term_of_the_bound():
    """P = 3, m = 9, K = 2, f = b_I = b_W = 1, GPU 0: L = 4, u = 3, g = 1, A = 3; r = 3 gives
    max(3, 3 + 1), r = 4 max(4, 3): S4 = 27 + 4 = 31 = OPT (data/split_v1_midK_optima.jsonl),
    one above every other term; S4 applies only at K = 2 < m."""
    inst = Instance(P=3, m=9, K=2, f=1, b_I=1, b_W=1)
    assert sw.split_window_fill_gpu_value(inst, 0) == 31
    assert sw.split_window_fill_value(inst) == 31
    lb = lower_bound(inst)
    terms = dict(lb.terms)
    assert lb.value == 31 and max(x for n, x in terms.items() if n != "split_window_fill") == 30
    assert "split_window_fill" not in dict(lower_bound(Instance(P=3, m=9, K=3, f=1, b_I=1,
                                                                  b_W=1)).terms)
    assert "split_window_fill" not in dict(lower_bound(Instance(P=3, m=2, K=2, f=1, b_I=1,
                                                                  b_W=1)).terms)


def test_s4_against_stored_optima_and_the_relaxation_with_a_planted_error():
    """S4 <= every stored K = 2 optimum and <= every relaxed schedule of
    data/split_relaxation_grid.jsonl; S4 with a lag one unit too long exceeds stored optima."""
    from proofs_checks.single_wave import window_fill_failures

    n, fails, equal = window_fill_failures()
    assert n > 300 and not fails and equal > 100
    _, planted, _ = window_fill_failures(lag_extra=1, fresh=[])
    assert planted and all("> OPT" in x for x in planted)
