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
    return lambda: pmw.first_backward_finite_K(Context())


def test_check_passes(stored_check):
    res = stored_check()
    assert res.ok, res.detail
    assert "without MW10-MW12" in res.detail


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
