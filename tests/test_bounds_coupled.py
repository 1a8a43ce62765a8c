"""T3d, the coupled single-slot bound (docs/theory.md, A.6 Theorem 3d; bounds.single_wave):
its evaluation equals its statement (brute force over the hold fillings), it is exact on the
known counterexample, it never falls below T3, the array path agrees, and its machine check
catches a bound planted one unit too high."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from bounds import lower_bound
from bounds import single_wave as sw
from bounds.batch import lower_bounds
from proofs_checks import load_checks
from proofs_checks.registry import Context, checks_of
from schedules import Instance
from test_bounds_batch import _rows


def _fill(x, G, f, y, first_gap=None, at_least=0):
    """min over multisets of x hold fillings (each >= at_least, sum <= y) of
    sum max(0, G - a f); the first hold's gap is ``first_gap`` when given."""
    best = None
    for a in itertools.combinations_with_replacement(range(at_least, y + 1), x):
        if sum(a) > y:
            continue
        orders = set(itertools.permutations(a)) if first_gap is not None else [a]
        for o in orders:
            gaps = [first_gap if (first_gap is not None and i == 0) else G for i in range(x)]
            c = sum(max(0, g - ai * f) for g, ai in zip(gaps, o))
            best = c if best is None else min(best, c)
    return best


def _brute_pair(P, m, f, b, p):
    """T3d's pair value of ``(p, p+1)`` from its statement (docs/theory.md), by enumeration."""
    u, q = f + b, p + 1
    Gp, Gq = (P - p - 1) * u, (P - q - 1) * u

    def lam(G, g, minus):
        vals = []
        for x in range(0, m + 1):
            y = m - x
            budget = y - 1 if minus else y
            if budget < 0:
                continue
            c = _fill(x, G, f, budget) if x else 0
            vals.append(g * u + m * u + y * f + c)
        return min(vals)

    case1 = max(lam(Gp, p, True), lam(Gq, q, False))
    case2 = max(lam(Gp, p, False), lam(Gq, q, True))
    case3 = None
    for alpha in range(m):
        G1 = max(Gp, u + alpha * f)
        pv = min(p * u + m * u + (m - x) * f + _fill(x, Gp, f, m - x, first_gap=G1)
                 for x in range(1, m + 1))
        qs = []
        for x in range(1, m + 1):
            y = m - x
            if x * alpha > y:
                continue
            # exactly: some hold has alpha forwards, all have >= alpha
            best = None
            for a in itertools.combinations_with_replacement(range(alpha, y + 1), x):
                if sum(a) <= y and min(a) == alpha:
                    c = sum(max(0, Gq - ai * f) for ai in a)
                    best = c if best is None else min(best, c)
            if best is not None:
                qs.append(q * u + m * u + y * f + best)
        if qs:
            v = max(pv, min(qs))
            case3 = v if case3 is None else min(case3, v)
    vals = [case1, case2] + ([case3] if case3 is not None else [])
    return min(vals)


@pytest.mark.parametrize("P,m,f,b", [(3, 4, 3, 2), (3, 5, 2, 1), (4, 5, 1, 1), (3, 6, 5, 3),
                                     (4, 4, 2, 3), (3, 5, 3, 1), (2, 5, 3, 2)])
def test_pair_value_equals_its_statement(P, m, f, b):
    inst = Instance(P=P, m=m, K=1, f=f, b=b)
    for p in range(P - 1):
        assert sw.coupled_pair_value(inst, p) == _brute_pair(P, m, f, b, p), p


def test_pour_and_minus_equal_brute_force():
    for f, G, y in itertools.product((1, 2, 3, 5), (0, 3, 7, 8, 16), range(0, 7)):
        for cnt in range(1, 4):
            assert sw.pour_waste(f, y, [(G, cnt)]) == _fill(cnt, G, f, y)
            for G1 in (G, G + 2, G + f + 1):
                assert sw.pour_waste(f, y, [(G, cnt - 1), (G1, 1)]) == \
                    _fill(cnt, G, f, y, first_gap=G1)
    for P, m, f, b in [(3, 5, 5, 3), (4, 6, 2, 1), (3, 6, 1, 4)]:
        inst = Instance(P=P, m=m, K=1, f=f, b=b)
        u = f + b
        for g in range(P):
            G = (P - g - 1) * u
            want = min(g * u + m * u + (m - x) * f + (_fill(x, G, f, m - x - 1) if x else 0)
                       for x in range(0, m))
            assert sw.single_slot_minus(inst, g) == want


def test_exact_on_the_counterexample_and_never_below_t3():
    inst = Instance(P=3, m=12, K=1, f=5, b=3)
    assert sw.single_slot_value(inst) == 144
    assert sw.coupled_slot_value(inst) == 146          # = OPT (CP-SAT, pipebounds/data/optima.jsonl)
    lb = lower_bound(inst)
    assert lb.value == 146 and dict(lb.terms)["single_slot_coupled"] == 146
    assert "T3d" in lb.term_ids()
    for P, m, f, b in itertools.product(range(2, 6), range(1, 13), (1, 2, 5), (1, 3, 4)):
        i = Instance(P=P, m=m, K=1, f=f, b=b)
        assert sw.coupled_slot_value(i) >= sw.single_slot_value(i)


def test_batch_agrees_where_t3d_fires():
    insts = [Instance(P=P, m=12, K=1, f=5, b=3) for P in range(2, 8)] + \
            [Instance(P=P, m=m, K=1, f=f, b=b) for P in (3, 4) for m in (11, 12, 13)
             for f, b in ((5, 3), (3, 4), (4, 5))]
    res = lower_bounds(_rows(insts))
    fired = 0
    for k, inst in enumerate(insts):
        lb = lower_bound(inst)
        assert Fraction(int(res.num[k]), int(res.den[k])) == lb.value, inst
        assert [(n, Fraction(a, d)) for n, a, d in res.terms[k]] == list(lb.terms), inst
        fired += lb.value > sw.single_slot_value(inst)
    assert fired >= 3


def test_lower_bound_stays_fast():
    import time

    inst = Instance(P=6, m=12, K=1, f=5, b=3)   # T3d fires on a pair here
    lower_bound(inst)
    t0 = time.process_time()  # CPU time: a loaded machine slows the wall clock, not this
    for _ in range(20):
        lower_bound(inst)
    assert (time.process_time() - t0) / 20 < 5e-3


def test_a_planted_error_in_t3d_is_caught(monkeypatch):
    """Mutation: T3d one unit too high makes its machine check fail (the counterexample row
    OPT = 146 is then below the bound). The unmutated check passes in ``python -m
    proofs_checks --quick`` (CI runs it), so it is not run a second time here."""
    load_checks()
    (chk,) = [c for c in checks_of("T3d") if c.name.endswith("coupled_slot_valid")]
    real = sw.coupled_slot_value
    monkeypatch.setattr(sw, "coupled_slot_value", lambda inst, t3=None: real(inst, t3) + 1)
    res = chk.func(Context("quick"))
    assert not res.ok and "T3d" in res.detail


def test_the_k1_verdict_follows_the_data():
    """docs/evidence.md §3's verdict per sweep row (proofs_checks.evidence): a schedule of makespan
    T3 settles T3 = OPT (a recorded orders document is re-simulated, and a wrong one is refused),
    an optimal status above T3 or T3d above T3 is a counterexample, anything else stays open."""
    from proofs_checks.evidence import _k1_verdict

    row = {"P": 6, "m": 12, "f": 3, "b": 4, "t3": "139", "opt": "139", "status": "feasible",
           "schedule": "data/k1_T3_reached_P6_m12_f3_b4_K1.json"}
    assert _k1_verdict(row, None)[0] == "t3"
    with pytest.raises(ValueError):
        _k1_verdict({**row, "opt": "138"}, None)
    open_row = {"P": 5, "m": 14, "f": 4, "b": 5, "t3": "195", "opt": "197", "status": "feasible"}
    assert _k1_verdict(open_row, None)[0] == "open"
    assert _k1_verdict({**open_row, "status": "optimal"}, None)[0] == "cex"
    assert _k1_verdict(open_row, {"status": "infeasible"})[0] == "cex"
    # T3d > T3 is a proof of OPT > T3 without any solver
    gap = {"P": 3, "m": 12, "f": 5, "b": 3, "t3": "144", "opt": "146", "status": "feasible"}
    assert _k1_verdict(gap, None)[:3] == ("cex", "T3 < T3d ≤ OPT (counterexample)", 146)


def test_t3d_rises_above_t3_with_f_below_b():
    """The K = 1, f <= b counterexample of docs/theory.md A.6: at P = 3, m = 24, f = 5, b = 8
    the proven bound T3d exceeds T3 (so T3 < OPT there), and T3d is a term of lower_bound."""
    from bounds import lower_bound
    from bounds.single_wave import coupled_slot_value, single_slot_value
    from schedules import Instance

    inst = Instance(P=3, m=24, K=1, f=5, b=8)
    assert single_slot_value(inst) == 416
    assert coupled_slot_value(inst) == 417
    assert lower_bound(inst).value == 417
