"""Multi-wave bounds (bounds/multi_wave.py, docs/theory_multiwave.md): the exact Fraction
evaluations agree with the sympy statements, the bounds are valid against exact optima of tiny
instances, and the hook is wired into bounds.evaluate."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from bounds import multi_wave as mw
from bounds.evaluate import lower_bound
from bounds.symbols import substitutions
from proofs_checks.multi_wave import brute_force
from schedules import Instance, simulate
from pipebounds.constructions.multi_wave import looped_bfs

durations = st.fractions(min_value=Fraction(1, 4), max_value=4, max_denominator=4)


def _sym(expr, inst):
    val = sp.nsimplify(expr.subs(substitutions(inst)))
    return Fraction(int(sp.fraction(val)[0]), int(sp.fraction(val)[1]))


@given(st.integers(1, 8), st.integers(1, 12), st.integers(2, 4),
       st.sampled_from(["looped", "vshape"]), durations, durations)
@settings(max_examples=60, deadline=None)
def test_closed_forms_match_sympy(P, m, v, placement, f, b):
    inst = Instance(P=P, m=m, v=v, placement=placement, f=f, b=b)
    got = {"mw_fill_drain": mw.fill_drain_value(inst), "mw_last_stage": mw.last_stage_value(inst),
           "mw_vshape_pair": mw.vshape_pair_value(inst)}
    assert got["mw_fill_drain"] == _sym(mw.fill_drain_expr(), inst)
    assert got["mw_last_stage"] == _sym(mw.last_stage_expr(), inst)
    if placement == "vshape":
        assert got["mw_vshape_pair"] == _sym(mw.vshape_pair_expr(), inst)
    else:
        assert mw.looped_opt_value(inst) == _sym(mw.looped_opt_expr(), inst)
    if v == 2 and placement == "vshape":
        assert mw.vshape_opt_value(inst) == _sym(mw.vshape_opt_expr(), inst)
    # MW1 dominates the closed forms it generalises (they are some of its subsets)
    sub = mw.gpu_subset_value(inst)
    assert sub >= got["mw_fill_drain"] and sub >= got["mw_last_stage"]
    if placement == "vshape":
        assert sub >= got["mw_vshape_pair"]


@given(st.integers(1, 4), st.integers(1, 5), st.integers(2, 3),
       st.sampled_from(["looped", "vshape"]), durations, durations, durations)
@settings(max_examples=40, deadline=None)
def test_gpu_subset_best_matches_its_sympy_expression(P, m, v, placement, f, bI, bW):
    for inst in (Instance(P=P, m=m, v=v, placement=placement, f=f, b=bI + bW),
                 Instance(P=P, m=m, v=v, placement=placement, f=f, b_I=bI, b_W=bW)):
        val, p, subset = mw.gpu_subset_best(inst)
        assert _sym(mw.gpu_subset_expr(inst, p, subset), inst) == val


def test_memory_slots_matches_sympy():
    for inst in (Instance(P=2, m=3, v=2, K=1, f=1, b=2),
                 Instance(P=3, m=2, v=2, K=2, placement="vshape", f=Fraction(1, 2), b=1)):
        best = None
        for p in range(inst.P):
            stages = inst.stages_of(p)
            Ls = sorted(sp.Integer(inst.S - s) * (mw.f + mw.b)
                        for s in stages for _ in range(inst.m))
            lo = min(stages)
            e = mw.memory_slots_gpu_expr(Ls, lo * mw.f, lo * mw.b,
                                         inst.v * inst.m * (mw.f + mw.b))
            val = _sym(e, inst)
            best = val if best is None else max(best, val)
        assert best == mw.memory_slots_value(inst)


def test_memory_bound_is_monotone_in_K():
    vals = [mw.memory_slots_value(Instance(P=3, m=4, v=2, K=K, f=1, b=2)) for K in range(1, 9)]
    assert all(a >= b_ for a, b_ in zip(vals, vals[1:]))
    assert vals[0] > mw.fill_drain_expr().subs({mw.P: 3, mw.m: 4, mw.v: 2, mw.f: 1, mw.b: 2})


@pytest.mark.parametrize("placement", ["looped", "vshape"])
@pytest.mark.parametrize("P,m", [(2, 1), (2, 2), (2, 3), (3, 2), (3, 3)])
@pytest.mark.parametrize("f,b", [(1, 2), (2, 1)])
def test_bound_valid_and_exact_claims_hold(placement, P, m, f, b):
    inst = Instance(P=P, m=m, v=2, placement=placement, f=f, b=b)
    lb = lower_bound(inst)
    opt = brute_force(inst)
    assert lb.value <= opt
    if lb.exact:
        assert lb.value == opt
    if placement == "looped":  # MW5: proven exact for every looped instance
        assert lb.exact and lb.value == opt == mw.looped_opt_value(inst)


def test_split_bound_valid():
    for placement in ("looped", "vshape"):
        for m in (1, 2, 3):
            inst = Instance(P=2, m=m, v=2, placement=placement, f=1, b_I=2, b_W=1)
            assert lower_bound(inst).value <= brute_force(inst)


def test_vshape_lower_bound_is_not_always_tight():
    """Documented gaps (docs/theory_multiwave.md, MW6): near the boundary MW2 = MW4 with a large
    ratio b/f the vshape optimum exceeds MW1, so no exactness may be claimed there.
    P=2, m=4, f=1/2, b=3: MW1 = MW4 = 32 (MW2 = 63/2), OPT = 65/2 by exhaustive search.
    P=3, m=6, f=1, b=4: MW1 = MW2 = MW4 = 70, OPT = 71 (exhaustive search, ~4 s, not rerun)."""
    inst = Instance(P=2, m=4, v=2, placement="vshape", f=Fraction(1, 2), b=3)
    assert mw.gpu_subset_value(inst) == 32 == mw.vshape_opt_value(inst)
    assert brute_force(inst) == Fraction(65, 2)
    assert not lower_bound(inst).exact
    inst = Instance(P=3, m=6, v=2, placement="vshape", f=1, b=4)
    assert mw.gpu_subset_value(inst) == 70
    assert not lower_bound(inst).exact


def test_looped_exact_flag_respects_memory():
    inst = Instance(P=3, m=2, v=2, f=1, b=2)
    assert lower_bound(inst.with_(K=4)).exact
    assert not lower_bound(inst.with_(K=3)).exact
    assert simulate(looped_bfs(inst)).peak_memory == [4, 4, 4]


def test_batch_closed_forms_match_exact():
    """The array twin's MW2/MW3/MW4 (bounds.batch) agree with the exact values (and these are
    the terms' values)."""
    from bounds.batch import Rows, lower_bounds

    inst = Instance(P=3, m=2, v=2, placement="vshape", f=1, b=2)
    named = {n: val for n, val, _ in mw.terms(inst)}
    assert (named["mw_fill_drain"], named["mw_last_stage"], named["mw_vshape_pair"]) == \
        (mw.fill_drain_value(inst), mw.last_stage_value(inst), mw.vshape_pair_value(inst))
    rng = np.random.default_rng(0)
    insts = [Instance(P=int(rng.integers(1, 9)), m=int(rng.integers(1, 20)),
                      v=int(rng.integers(2, 5)), f=int(rng.integers(1, 7)),
                      b=int(rng.integers(1, 9)),
                      placement="vshape" if rng.integers(0, 2) else "looped")
             for _ in range(200)]
    res = lower_bounds(Rows.of(insts))
    for k, inst in enumerate(insts):
        got = {n: Fraction(a, d) for n, a, d in res.terms[k]}
        assert got["mw_fill_drain"] == mw.fill_drain_value(inst), inst
        assert got["mw_last_stage"] == mw.last_stage_value(inst), inst
        if inst.placement == "vshape":
            assert got["mw_vshape_pair"] == mw.vshape_pair_value(inst), inst


def test_forced_remat_bounds_match_sympy_and_are_valid():
    for inst in (Instance(P=2, m=2, v=2, K=1, placement="vshape", f=1, b=2),
                 Instance(P=3, m=1, v=3, K=2, f=Fraction(1, 2), b=1)):
        assert mw.forced_remat_value(inst) == _sym(mw.forced_remat_expr(), inst)
        if inst.placement == "vshape":
            assert mw.vshape_forced_remat_value(inst) == _sym(mw.vshape_forced_remat_expr(), inst)
    # m = 1, K = 1, vshape: chain + one recomputation, reached by the obvious schedule
    from schedules import Schedule

    inst = Instance(P=2, m=1, v=2, K=1, placement="vshape", f=1, b=2)
    sched = Schedule.from_strings(inst, {0: ["0F0", "3F0", "3B0", "0R0", "0B0"],
                                         1: ["1F0", "2F0", "2B0", "1R0", "1B0"]})
    res = simulate(sched)
    assert res.valid and res.makespan == mw.vshape_forced_remat_value(inst) == 13
    assert lower_bound(inst).value == 13
    assert mw.forced_remat_value(inst.with_(K=2)) is None
