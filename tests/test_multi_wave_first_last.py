"""MW11 (first backward) and MW12 (last forward), docs/theory_multiwave.md B.6: values where
they bind, and planted errors the check first_backward_finite_K catches."""

from __future__ import annotations

from fractions import Fraction

import pytest

from bounds import lower_bound
from bounds import multi_wave as mw
from pipebounds.search import solve
from proofs_checks import multi_wave as pmw
from proofs_checks.registry import Context
from schedules import Instance


def _rest(inst, name):
    return max(v for n, v in lower_bound(inst).terms if n != name)


def test_mw11_closes_the_issue_instance():
    # issue 25's loosest instance: bound 43, OPT 52 (data/multiwave_finite_k_split.jsonl);
    # GPU 2 holds stages 2, 3: its first I waits 6 f + 2 b_I = 18, at most 3 f of work before
    inst = Instance(P=3, m=3, K=3, v=2, placement="vshape", f=2, b_I=3, b_W=1)
    assert mw.first_backward_value(inst) == lower_bound(inst).value == 52
    assert _rest(inst, "mw_first_backward") == 44
    res = solve(inst, time_limit=60, use_known=False, use_theory=False, engine="cpsat")
    assert res.status == "optimal" and res.makespan == 52


def test_mw11_and_mw12_domains():
    inst = Instance(P=2, m=3, K=3, v=2, placement="vshape", f=3, b=1)
    assert mw.first_backward_value(inst.with_(K=None)) is None
    assert mw.last_forward_value(inst.with_(K=None)) is None
    assert mw.last_forward_value(inst.with_(b=None, b_I=1, b_W=1)) is None   # fused only
    assert mw.first_backward_value(inst.with_(b=None, b_I=1, b_W=1)) is not None
    # both fall with K
    vals = [(mw.first_backward_value(inst.with_(K=k)), mw.last_forward_value(inst.with_(K=k)))
            for k in range(1, 8)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))


def test_last_forward_inner_is_the_minimum():
    for A, K, N, f, b, c in [(20, 2, 8, 3, 1, 2), (7, 1, 4, 1, 2, 0), (30, 5, 6, 2, 3, 1),
                             (Fraction(9, 2), 2, 9, Fraction(1, 2), 1, 0)]:
        brute = min(max(A - min(K + n, N) * b, n * f + c) for n in range(N + 1))
        assert mw.last_forward_inner(A, K, N, f, b, c) == brute


@pytest.mark.parametrize("m,f,b,opt,rest", [(3, 3, 1, 31, 29), (2, 3, 1, 23, 22)])
def test_mw12_is_the_optimum_where_it_binds(m, f, b, opt, rest):
    # vshape P = 2, K = 3: OPT from pipebounds/data/optima.jsonl (use_theory=False), re-solved
    inst = Instance(P=2, m=m, K=3, v=2, placement="vshape", f=f, b=b)
    assert mw.last_forward_value(inst) == lower_bound(inst).value == opt
    assert _rest(inst, "mw_last_forward") == rest
    res = solve(inst, time_limit=60, use_known=False, use_theory=False, engine="cpsat")
    assert res.status == "optimal" and res.makespan == opt


@pytest.fixture()
def stored_check(monkeypatch):
    """The check on the stored optima only (no fresh solve: seconds)."""
    monkeypatch.setattr(pmw, "first_backward_instances", lambda mode: [])
    monkeypatch.setattr(pmw, "first_backward_v1_instances", lambda mode: [])
    return lambda: pmw.first_backward_finite_K(Context())


def test_check_passes(stored_check):
    res = stored_check()
    assert res.ok, res.detail
    assert "without MW10-MW12" in res.detail
    assert "stored split v=1 rows (K < m)" in res.detail


@pytest.mark.parametrize("name,term", [("first_backward_value", "mw_first_backward"),
                                       ("last_forward_value", "mw_last_forward")])
def test_planted_error_is_caught(monkeypatch, stored_check, name, term):
    real = getattr(mw, name)

    def planted(*a, **k):
        val = real(*a, **k)
        return None if val is None else val + Fraction(1, 1000)

    monkeypatch.setattr(mw, name, planted)
    res = stored_check()
    assert not res.ok and term in res.detail


def test_mw11_at_v1_closes_the_stored_split_rows():
    """MW11 at v = 1 (a term of the single-wave bound, split, K < m): on the stored split
    single-wave optima with K < m (pipebounds/data/optima.jsonl, independent rows) it never
    exceeds OPT, it raises the bound on some rows, and every row raised reaches OPT."""
    rows, bad = pmw._single_wave_split_rows()
    assert rows and not bad
    raised = []
    for inst, opt in rows:
        terms = dict(lower_bound(inst).terms)
        assert terms["mw_first_backward"] <= opt, inst
        rest = max(v for n, v in terms.items() if n != "mw_first_backward")
        if terms["mw_first_backward"] > rest:
            raised.append(terms["mw_first_backward"] == opt)
    assert raised and all(raised)


def test_planted_error_at_v1_is_caught(monkeypatch, stored_check):
    """MW11 too high by 1/1000 only at v = 1 (the single-wave term): the stored split v = 1
    rows alone catch it (the multi-wave rows are left out here, for speed: on them alone the
    unplanted check finds no invalid term, only MW12 never tight)."""
    monkeypatch.setattr(pmw, "stored_split_optima", lambda path=None: ([], []))
    monkeypatch.setattr(pmw, "optima_rows", lambda pred: [])
    clean = stored_check()
    assert clean.detail == "term mw_last_forward is never tight on the range: an error in it could pass"
    real = mw.first_backward_value

    def planted(inst, *a, **k):
        val = real(inst, *a, **k)
        return val + Fraction(1, 1000) if val is not None and inst.v == 1 else val

    monkeypatch.setattr(mw, "first_backward_value", planted)
    res = stored_check()
    assert not res.ok and "INVALID mw_first_backward" in res.detail
