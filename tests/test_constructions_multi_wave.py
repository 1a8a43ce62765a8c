"""Multi-wave constructions (pipebounds/constructions/multi_wave.py): valid, makespan equal to
the lower bound (hence optimal), and equal to the exact optimum on small instances."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from bounds import multi_wave as mw
from bounds.evaluate import lower_bound
from proofs_checks.multi_wave import brute_force
from schedules import Instance, simulate
from pipebounds.certify import certify
from pipebounds.constructions import optimal_schedule
from pipebounds.constructions.multi_wave import looped_bfs, looped_bfs_makespan, vshape_certified

durations = st.fractions(min_value=Fraction(1, 3), max_value=3, max_denominator=3)


@given(st.integers(1, 7), st.integers(1, 16), st.integers(2, 4), durations, durations)
@settings(max_examples=60, deadline=None)
def test_looped_bfs_reaches_the_bound(P, m, v, f, b):
    inst = Instance(P=P, m=m, v=v, f=f, b=b)
    res = simulate(looped_bfs(inst))
    assert res.valid
    assert res.makespan == looped_bfs_makespan(inst) == mw.looped_opt_value(inst)
    lb = lower_bound(inst)
    assert lb.value == res.makespan and lb.exact
    assert max(res.peak_memory) == v * m


def test_looped_bfs_timetable():
    """The proof's timetable: F(j, qP+p) starts at (p + qM + j) f, M = max(m, P)."""
    for P, m in ((3, 2), (2, 5)):
        inst = Instance(P=P, m=m, v=3, f=1, b=2)
        times = simulate(looped_bfs(inst)).op_times()
        M = max(m, P)
        for op, (start, _) in times.items():
            q, p = divmod(op.stage, P)
            if op.kind == "F":
                assert start == p + q * M + op.microbatch
            else:
                TF = P - 1 + (3 - 1) * M + m
                assert start == TF + 2 * (P - 1 - p + (3 - 1 - q) * M + op.microbatch)


@pytest.mark.parametrize("placement", ["looped", "vshape"])
@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_construction_is_optimal_on_small_instances(placement, P, m):
    for f, b in ((1, 2), (1, 1)):
        inst = Instance(P=P, m=m, v=2, placement=placement, f=f, b=b)
        sched = optimal_schedule(inst)
        if placement == "looped":
            assert sched is not None
        if sched is None:
            continue
        res = simulate(sched)
        assert res.valid
        assert res.makespan == brute_force(inst)


def test_vshape_certificate_equals_bound():
    for P, m, f, b in ((4, 3, 1, 2), (3, 5, 2, 1), (4, 6, 1, 1), (2, 4, Fraction(1, 2), 1)):
        inst = Instance(P=P, m=m, v=2, placement="vshape", f=f, b=b)
        sched = vshape_certified(inst)
        assert sched is not None
        res = simulate(sched)
        assert res.valid and res.makespan == mw.gpu_subset_value(inst)
        cert = certify(inst, seconds=30, table=False)
        assert cert.exact and cert.basis in ("theorem", "certificate")


def test_memory_and_out_of_scope_return_none():
    inst = Instance(P=3, m=3, v=2, f=1, b=2)
    assert optimal_schedule(inst.with_(K=5)) is None
    assert optimal_schedule(inst.with_(K=6)) is not None
    assert optimal_schedule(Instance(P=2, m=2, v=2, f=1, b_I=1, b_W=1)) is None
    assert optimal_schedule(Instance(P=2, m=2, v=2, f=1, b=2, c=1)) is None
    vs = Instance(P=3, m=3, v=2, placement="vshape", f=1, b=2)
    peak = max(simulate(optimal_schedule(vs)).peak_memory)
    assert optimal_schedule(vs.with_(K=peak)) is not None
    assert optimal_schedule(vs.with_(K=peak - 1)) is None


@pytest.mark.parametrize("P", [1, 2, 3, 5, 8])
def test_vshape_periodic_reaches_mw4(P):
    from pipebounds.constructions.multi_wave import vshape_periodic

    for m in range(1, P + 1):
        inst = Instance(P=P, m=m, v=2, placement="vshape", f=Fraction(3, 2), b=Fraction(3, 2))
        res = simulate(vshape_periodic(inst))
        assert res.valid and res.makespan == (4 * P + 2 * (m - 1)) * inst.f
        assert lower_bound(inst).exact and lower_bound(inst).value == res.makespan
    for k in (2, 3):  # P | m: MW2 = 2(2m + P - 1) f
        inst = Instance(P=P, m=k * P, v=2, placement="vshape", f=2, b=2)
        res = simulate(vshape_periodic(inst))
        assert res.valid and res.makespan == 2 * (2 * k * P + P - 1) * 2 == lower_bound(inst).value
    if P > 1:
        assert vshape_periodic(Instance(P=P, m=P + 1, v=2, placement="vshape", f=1, b=1)) is None
    assert vshape_periodic(Instance(P=P, m=1, v=2, placement="vshape", f=1, b=2)) is None


@given(st.integers(1, 12), st.data(), durations, durations)
@settings(max_examples=60, deadline=None)
def test_vshape_small_m_reaches_mw4(P, data, f, b):
    """MW6b: for m <= P the explicit timetable is feasible and its makespan is MW4 = OPT."""
    from pipebounds.constructions.multi_wave import vshape_small_m, vshape_small_m_times

    m = data.draw(st.integers(1, P))
    inst = Instance(P=P, m=m, v=2, placement="vshape", f=f, b=b)
    res = simulate(vshape_small_m(inst))
    assert res.valid and res.makespan == mw.vshape_pair_value(inst) == mw.gpu_subset_value(inst)
    lb = lower_bound(inst)
    assert lb.exact and lb.value == res.makespan
    if f <= b:  # ASAP never later than the proof's timetable
        plan = vshape_small_m_times(P, m, f, b)
        for op, (start, _) in res.op_times().items():
            assert start <= plan[(op.stage, op.kind, op.microbatch)]


def test_vshape_small_m_matches_brute_force():
    from pipebounds.constructions.multi_wave import vshape_small_m

    for P, m, f, b in ((3, 2, 1, 3), (3, 3, 3, 1), (2, 2, 2, 3)):
        inst = Instance(P=P, m=m, v=2, placement="vshape", f=f, b=b)
        assert simulate(vshape_small_m(inst)).makespan == brute_force(inst)
