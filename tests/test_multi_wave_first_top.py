"""MW13 (first backward over a GPU's top stages), docs/theory_multiwave.md B.6: the value where
it binds against independent optima, its formula against a brute force over every set of
stages, its domain, and a planted error the check first_backward_top_finite_K catches."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import pytest

from bounds import lower_bound
from bounds import multi_wave as mw
from pipebounds.search import solve
from proofs_checks import multi_wave as pmw
from proofs_checks.registry import Context
from schedules import Instance
from schedules.schedule import Schedule
from schedules.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent


def _rest(inst):
    return max(v for n, v in lower_bound(inst).terms if n != "mw_first_backward_top")


@pytest.mark.parametrize("inst,opt,rest", [
    (Instance(P=2, m=2, v=3, K=2, placement="vshape", f=1, b=3), 32, 31),
    (Instance(P=3, m=2, v=3, K=2, placement="vshape", f=1, b_I=3, b_W=1), 47, 43)])
def test_mw13_is_the_optimum_where_it_binds(inst, opt, rest):
    # OPT from data/multiwave_finite_k_v3.jsonl (CP-SAT, use_theory=False), re-solved here
    assert mw.first_backward_top_value(inst) == lower_bound(inst).value == opt
    assert _rest(inst) == rest
    res = solve(inst, time_limit=60, use_known=False, use_theory=False, engine="cpsat")
    assert res.status == "optimal" and res.makespan == opt


def test_mw13_closes_the_loosest_three_wave_instance():
    # the loosest v = 3, K <= v row before MW13 (69 / 63): its stored optimal orders (CP-SAT,
    # use_theory=False) re-simulate to 69, which MW13 reaches on GPU 0 with H = {7, 8}
    inst = Instance(P=4, m=2, v=3, K=2, placement="vshape", f=Fraction(3, 2), b_I=3, b_W=2)
    rows = [json.loads(line) for line in
            (ROOT / "data" / "multiwave_finite_k_random.jsonl").read_text().splitlines()]
    row = next(r for r in rows if Instance.from_dict(r) == inst)
    assert row["status"] == "optimal" and row["opt"] == "69"
    assert simulate(Schedule.from_strings(inst, row["orders"])).makespan == 69
    assert mw.first_backward_top_value(inst) == lower_bound(inst).value == 69
    assert _rest(inst) == 63


def _brute(inst):
    """MW13 over every set ``H`` of a GPU's stages whose least backward tail ``q`` is above the
    GPU's least (the threshold sets but every stage, MW11's)."""
    bk = "I" if inst.split else "B"
    bc = inst.b_I if inst.split else inst.b
    unit = inst.f + (inst.b_W if inst.split else 0)
    best = None
    for types in mw.all_op_types(inst):
        back = {t[1]: t for t in types if t[0] == bk}
        h = back[max(back)][2]
        low = min(t[3] for t in back.values())
        for k in range(1, len(back) + 1):
            for H in combinations(back, k):
                if min(back[s][3] for s in H) == low:
                    continue
                n = k * inst.m
                val = (h + n * bc + max(0, n - inst.K) * unit
                       + min(back[s][3] for s in H))
                best = val if best is None else max(best, val)
    return best


def test_mw13_formula_is_the_maximum_over_every_set_of_stages():
    rng = random.Random(5)
    for _ in range(150):
        d = (dict(b_I=rng.randint(1, 4), b_W=rng.randint(1, 3)) if rng.random() < 0.5
             else dict(b=rng.randint(1, 4)))
        inst = Instance(P=rng.randint(1, 4), m=rng.randint(1, 4), v=rng.choice([2, 3, 4]),
                        K=rng.randint(1, 6), placement=rng.choice(["looped", "vshape"]),
                        f=rng.choice([1, 2, 3, Fraction(3, 2)]), **d)
        assert mw.first_backward_top_value(inst) == _brute(inst), inst


def test_mw13_domain_and_monotone_in_K():
    inst = Instance(P=3, m=2, v=3, K=2, placement="vshape", f=1, b_I=3, b_W=1)
    assert mw.first_backward_top_value(inst.with_(K=None)) is None
    vals = [mw.first_backward_top_value(inst.with_(K=k)) for k in range(1, 8)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))
    assert mw.first_backward_top_value(Instance(P=3, m=2, K=2, f=1, b=3)) is None   # v = 1
    # not in the full model's bound (its W count fails with backward recomputation)
    names = [n for n, _ in lower_bound(inst, backward_remat=True).terms]
    assert "mw_first_backward_top" not in names
    assert "mw_first_backward_top" in [n for n, _ in lower_bound(inst).terms]


@pytest.fixture()
def stored_check(monkeypatch):
    """The check on the stored optima only (no fresh solve: seconds)."""
    monkeypatch.setattr(pmw, "first_backward_top_instances", lambda mode: [])
    return lambda: pmw.first_backward_top_finite_K(Context())


def test_check_passes(stored_check):
    res = stored_check()
    assert res.ok, res.detail
    assert "without MW13" in res.detail and "mw_first_backward_top" in res.detail


def test_planted_error_is_caught(monkeypatch, stored_check):
    # on the stored three-wave rows alone (seconds): MW13 is tight on some, so a term a little
    # too large is above an optimum there
    three = pmw.stored_split_optima(pmw.V3_FINITE_K)
    monkeypatch.setattr(pmw, "stored_split_optima", lambda path=None: (list(three[0]), []))
    monkeypatch.setattr(pmw, "optima_rows", lambda pred: [])
    assert pmw.first_backward_top_finite_K(Context()).ok
    real = mw.first_backward_top_value

    def planted(*a, **k):
        val = real(*a, **k)
        return None if val is None else val + Fraction(1, 1000)

    monkeypatch.setattr(mw, "first_backward_top_value", planted)
    res = stored_check()
    assert not res.ok and "mw_first_backward_top" in res.detail
