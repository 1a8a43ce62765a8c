"""Split multi-wave bounds at finite ``K``: MW10 (split single slot, ``2 <= K <= v``) and the
split drain of MW7 (docs/theory_multiwave.md B.6), with planted errors the check catches."""

from __future__ import annotations

from fractions import Fraction

import pytest

from bounds import lower_bound
from bounds import multi_wave as mw
from pipebounds.search import solve
from proofs_checks import multi_wave as pmw
from proofs_checks.registry import Context
from schedules import Instance


def _others(inst, name):
    return max(v for n, v in lower_bound(inst).terms if n != name)


def test_mw10_domain():
    inst = Instance(P=2, m=2, v=2, K=2, f=1, b_I=1, b_W=1)
    assert mw.split_single_slot_value(inst) == 14
    assert mw.split_single_slot_value(inst.with_(K=1)) is None      # MW9's split form
    assert mw.split_single_slot_value(inst.with_(K=3)) is None      # K > v
    assert mw.split_single_slot_value(inst.with_(b_I=None, b_W=None, b=2)) is None  # fused
    assert mw.split_single_slot_value(inst.with_(v=3, K=3)) is not None


@pytest.mark.parametrize("placement,m,f,bI,bW,opt,others", [
    ("vshape", 3, 2, 1, 1, 30, 29), ("vshape", 4, 2, 1, 1, 40, 37),
    ("looped", 4, 2, 1, 1, 38, 37)])
def test_mw10_is_the_optimum_where_it_binds(placement, m, f, bI, bW, opt, others):
    # P = 2, K = v = 2: OPT from data/multiwave_finite_k_split.jsonl, re-solved here with
    # CP-SAT and no bound of `bounds`; every other term (MW11 included) is below it
    inst = Instance(P=2, m=m, v=2, K=2, placement=placement, f=f, b_I=bI, b_W=bW)
    assert _others(inst, "mw_split_single_slot") == others
    assert mw.split_single_slot_value(inst) == lower_bound(inst).value == opt
    res = solve(inst, time_limit=60, use_known=False, use_theory=False, engine="cpsat")
    assert res.status == "optimal" and res.makespan == opt


def test_split_drain():
    # GPU 1 of looped P = 3 (lowest stage 1 ... 2): after its last I at most min(K, v m) W
    inst = Instance(P=3, m=2, v=2, K=2, f=1, b_I=3, b_W=1)
    assert mw.split_drain(inst, 2) == 2 * 3 - (2 - 1) * 1
    assert mw.split_drain(inst, 0) == 0
    assert mw.split_drain(inst.with_(K=4), 1) == 0          # 3 - 3 b_W < 0
    # with backward recomputation a W may follow a later R: never more than without
    assert mw.split_drain(inst, 2, backward=True) <= mw.split_drain(inst, 2)


def test_stored_optima_are_reproduced():
    rows, bad = pmw.stored_split_optima()
    assert not bad and len(rows) >= 150
    assert all(i.split and i.v == 2 and i.K is not None for i, _ in rows)


def _plus(fn, eps=Fraction(1, 1000)):
    def mutated(*a, **k):
        val = fn(*a, **k)
        return None if val is None else val + eps
    return mutated


@pytest.fixture()
def small_check(monkeypatch):
    """The check on its stored rows and no fresh solve (seconds)."""
    monkeypatch.setattr(pmw, "split_memory_instances", lambda mode: [])
    return lambda: pmw.split_memory_finite_K(Context())


def test_check_passes(small_check):
    res = small_check()
    assert res.ok, res.detail


@pytest.mark.parametrize("name", ["split_single_slot_value", "split_drain"])
def test_planted_error_is_caught(monkeypatch, small_check, name):
    monkeypatch.setattr(mw, name, _plus(getattr(mw, name)))
    res = small_check()
    assert not res.ok and "INVALID" in res.detail


def test_planted_error_in_memory_slots_is_caught(monkeypatch, small_check):
    monkeypatch.setattr(mw, "memory_slots_value", _plus(mw.memory_slots_value))
    res = small_check()
    assert not res.ok and "mw_memory_slots" in res.detail


def test_a_range_where_mw10_is_never_tight_fails(monkeypatch, small_check):
    # the check demands MW10 be tight somewhere: without such rows an error could pass unseen
    rows, _ = pmw.stored_split_optima()
    loose = [(i, o) for i, o in rows if mw.split_single_slot_value(i) != o]
    monkeypatch.setattr(pmw, "stored_split_optima", lambda: (loose, []))
    res = small_check()
    assert not res.ok and "never tight" in res.detail
