"""``K = 1`` multi-wave bounds: MW1 with the forced recomputation chains (MW8c) and the
single-slot per-GPU bound (MW9), docs/theory_multiwave.md."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import lower_bound
from bounds.multi_wave import gpu_subset_value, single_slot_chain, single_slot_value
from schedules import Instance
from pipebounds.search import solve


def test_one_microbatch_chain_waits_for_each_recomputation():
    # looped P = 2, v = 2: stages 0, 2 on GPU 0, 1, 3 on GPU 1; (0, 0) and (0, 1) are
    # recomputed after B(0, 2) and B(0, 3): the backward chain waits max(f, (P-1) b) twice
    inst = Instance(P=2, m=1, v=2, K=1, f=3, b=1)
    chain = single_slot_chain(inst)
    assert ("R", 0) in chain and ("R", 1) in chain and ("R", 2) not in chain
    # F chain 4f = 12, B(0,3) 1, wait max(f, b) = 3 for R(0,1), B(0,1) 1, B(0,0) 1 (R(0,0)
    # ran during B(0,1))
    assert chain[("B", 0)][0] + inst.b == 12 + 1 + 3 + 1 + 1
    assert gpu_subset_value(inst) == 18
    assert solve(inst, use_theory=False).makespan == 18


def test_recomputation_chain_only_at_K1():
    inst = Instance(P=2, m=1, v=2, K=2, f=3, b=1)
    assert gpu_subset_value(inst) == gpu_subset_value(inst.with_(K=None)) == 16
    # MW9 needs one microbatch to fill every slot: K <= v (fused)
    assert single_slot_value(inst.with_(K=3)) is None
    assert single_slot_value(inst.with_(K=2, b=None, b_I=1, b_W=1)) is None  # split: K = 1


@pytest.mark.parametrize("placement,m,f,b,opt,others", [
    ("looped", 4, 2, 1, 30, Fraction(57, 2)), ("vshape", 2, 1, 1, 12, 11),
    ("vshape", 3, 2, 3, 40, 39)])
def test_mw9_with_K_equal_v(placement, m, f, b, opt, others):
    # K = v = 2: a microbatch keeping both its stages fills both slots during its top hold;
    # OPT from pipebounds/data/optima.jsonl (use_theory=False), re-solved here
    inst = Instance(P=2, m=m, v=2, K=2, placement=placement, f=f, b=b)
    # MW11 (first backward, a later argument) reaches OPT on two of these as well
    rest = max(v for name, v in lower_bound(inst).terms
               if name not in ("mw_single_slot", "mw_first_backward"))
    assert rest == others
    assert dict(lower_bound(inst).terms)["mw_first_backward"] <= opt
    assert single_slot_value(inst) == lower_bound(inst).value == opt
    assert solve(inst, use_theory=False, time_limit=60).makespan == opt


@pytest.mark.parametrize("placement", ["looped", "vshape"])
def test_mw9_reaches_the_optimum_where_it_binds(placement):
    # vshape P = 2, m = 5, f = 2, b = 1: OPT 47 (pipebounds/data/optima.jsonl), MW9 = 47 > every other term
    inst = Instance(P=2, m=5, v=2, K=1, placement=placement, f=2, b=1)
    assert lower_bound(inst).value == single_slot_value(inst)
    assert single_slot_value(inst) == {"looped": 44, "vshape": 47}[placement]


def test_mw9_split_form_where_it_binds():
    # split: the span ends b_W after the last I of the lowest stage; every other term gives 20
    # but MW7 and MW11, whose split drain (the same end argument, without the holds) reaches
    # 21 too
    inst = Instance(P=2, m=2, v=2, K=1, placement="looped", f=1, b_I=2, b_W=1)
    later = ("mw_memory_slots", "mw_first_backward")
    others = max(v for name, v in lower_bound(inst).terms
                 if name not in ("mw_single_slot",) + later)
    assert others == 20
    assert [dict(lower_bound(inst).terms)[n] for n in later] == [21, 21]
    assert single_slot_value(inst) == lower_bound(inst).value == 21
    assert solve(inst, use_theory=False).makespan == 21


@settings(max_examples=16, deadline=None)
@given(st.sampled_from(["looped", "vshape"]), st.integers(1, 2),
       st.sampled_from([1, 2, 3, Fraction(1, 2)]), st.sampled_from([1, 2, 3]),
       st.sampled_from([None, 1, 2]))
def test_k1_multi_wave_bound_is_valid(placement, m, f, b, b_W):
    durs = dict(f=f, b=b) if b_W is None else dict(f=f, b_I=b, b_W=b_W)
    inst = Instance(P=2, m=m, v=2, K=1, placement=placement, **durs)
    res = solve(inst, use_theory=False, time_limit=30)
    assert res.status == "optimal"
    assert lower_bound(inst).value <= res.makespan


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(2, 3), st.sampled_from(["looped", "vshape"]),
       st.sampled_from([1, 2, 3, Fraction(1, 2)]), st.sampled_from([1, 2, 3]),
       st.sampled_from([None, 1, 2]))
def test_one_microbatch_at_K1_is_exact(P, v, placement, f, b, b_W):
    # MW8d: the forced-recomputation chain is a schedule; it reaches MW1, flagged exact
    from schedules import simulate
    from pipebounds.constructions.multi_wave import optimal_schedule

    durs = dict(f=f, b=b) if b_W is None else dict(f=f, b_I=b, b_W=b_W)
    inst = Instance(P=P, m=1, v=v, K=1, placement=placement, **durs)
    res = simulate(optimal_schedule(inst))
    lb = lower_bound(inst)
    assert res.valid and max(res.peak_memory) == 1
    assert res.makespan == lb.value and lb.exact
