"""H4-H10 (bounds/heterogeneous_memory.py, docs/theory.md A.9): equal to the uniform theorems on
uniform instances, valid against exact optima of random non-uniform instances with finite K,
and a planted error in each is caught by the registered check."""

from __future__ import annotations

import itertools

import pytest

from bounds import heterogeneous_memory as hm
from bounds import lower_bound
from bounds import multi_wave as mw
from bounds import single_wave as sw
from proofs_checks.heterogeneous import (MEMORY_SEED, heterogeneous_memory_bounds,
                                         random_instances)
from proofs_checks.registry import Context
from schedules import Instance


def uniform_grid():
    for P, m, K, v, pl, split in itertools.product((2, 3, 4), (1, 2, 3, 5), (1, 2, 3, None),
                                                   (1, 2, 3), ("looped", "vshape"), (False, True)):
        for f, b1, b2 in ((1, 2, 1), (2, 1, 3), (3, 2, 2)):
            kw = dict(P=P, m=m, K=K, v=v, placement=pl, f=f)
            kw.update(dict(b_I=b1, b_W=b2) if split else dict(b=b1 + b2))
            yield Instance(**kw)


def test_equal_to_the_uniform_theorems_on_uniform_instances():
    n = 0
    for inst in uniform_grid():
        n += 1
        assert hm.gpu_subset_value(inst) == mw.gpu_subset_value(inst), inst
        if inst.split:
            assert hm.gpu_subset_value(inst, True) == mw.gpu_subset_value(inst, True), inst
        if inst.v == 1 and inst.K == 1:
            assert hm.single_slot_value(inst) == sw.single_slot_value(inst), inst
        if inst.v == 1 and inst.K is not None and inst.K < inst.m:
            uni = sw.split_memory_time_value(inst) if inst.split else sw.memory_time_value(inst)
            assert hm.memory_time_value(inst) == uni, inst
    assert n == 1728


def test_memory_slots_relaxation_and_split_drain_on_uniform_instances():
    """H7 relaxes MW7's integer choice (never above it); H8 is S1 on uniform instances."""
    for inst in uniform_grid():
        h7 = hm.memory_slots_value(inst)
        if h7 is not None:
            assert h7 <= mw.memory_slots_value(inst), inst
        if inst.split and inst.v == 1:
            assert hm.split_drain_value(inst) == sw.split_drain_value(inst), inst


def test_first_backward_is_mw11_on_uniform_instances():
    """H9 with uniform durations and c = 0 is MW11 (finite K, every v and placement)."""
    n = 0
    for inst in uniform_grid():
        if inst.K is not None:
            n += 1
            assert hm.first_backward_value(inst) == mw.first_backward_value(inst), inst
    assert n == 1296


def test_first_backward_on_the_previous_worst_instance():
    """P=2, m=2, K=2, v=2 vshape fused, c=1: H4-H8 gave 26, OPT = 30 (docs/theory.md A.9);
    H9 on GPU 1: its first B (stage 2) starts at 12, it runs 20 - 6 after it, then down(1) = 2."""
    inst = Instance(P=2, m=2, K=2, v=2, placement="vshape", f=[1, 3, 1, 2], b=[1, 4, 2, 2], c=1)
    assert hm.first_backward_value(inst) == 28
    assert lower_bound(inst).value == 28


def test_the_previous_worst_instance():
    """P=2, m=2, K=1, v=2 looped, per-stage split costs, c=1: H1-H3 gave 34, OPT = 49."""
    inst = Instance(P=2, m=2, K=1, v=2, placement="looped", f=[4, 2, 2, 4], b_I=[3, 1, 3, 1],
                    b_W=[2, 1, 3, 1], c=1)
    assert dict(lower_bound(inst).terms)["hetero_gpu_subset"] == 47


def test_delay_lengthens_the_chain_graph():
    base = Instance(P=3, m=2, K=1, v=2, f=[1, 2, 1, 1, 2, 1], b=[2, 1, 2, 2, 1, 2])
    assert hm.gpu_subset_value(base.with_(c=1)) > hm.gpu_subset_value(base)


def test_quick_check_passes():
    res = heterogeneous_memory_bounds(Context(mode="quick"))
    assert res.ok, res.detail
    assert res.instances == 24


@pytest.mark.parametrize("name", ["gpu_subset_value", "single_slot_value", "memory_time_value",
                                  "memory_slots_value", "split_drain_value",
                                  "first_backward_value", "wave_slot_value"])
def test_a_planted_error_in_each_is_caught(monkeypatch, name):
    real = getattr(hm, name)

    def planted(inst, *a, **k):
        x = real(inst, *a, **k)
        return None if x is None else x + 1

    monkeypatch.setattr(hm, name, planted)
    res = heterogeneous_memory_bounds(
        Context(mode="quick"), random_instances(24, seed=MEMORY_SEED, Ks=(1, 2, 3)))
    tid = {"gpu_subset_value": "H4", "single_slot_value": "H5", "memory_time_value": "H6",
           "memory_slots_value": "H7", "split_drain_value": "H8",
           "first_backward_value": "H9", "wave_slot_value": "H10"}[name]
    assert not res.ok and f"{tid} (hetero_" in res.detail


def test_wave_slot_is_at_least_mw9_on_uniform_instances():
    """H10 with uniform durations and c = 0 is never below MW9 at K = 1 (MW9's count is one of
    its two), and above it where the order of the kept holds binds (docs/theory.md A.9)."""
    n = above = 0
    for inst in uniform_grid():
        if inst.K == 1 and inst.v >= 2:
            n += 1
            h10, mw9 = hm.wave_slot_value(inst), mw.single_slot_value(inst)
            assert h10 >= mw9, inst
            above += h10 > mw9
        else:
            assert hm.wave_slot_value(inst) is None
    assert n == 288 and above > 0


def test_wave_slot_never_above_the_independent_uniform_optima():
    """H10 <= OPT on every independent K = 1, v >= 2 row of the table of optima (where it is
    above the uniform bound, it is a stronger bound; not taken by the uniform path)."""
    from bounds.multi_wave import single_slot_value
    from proofs_checks.table import optima_rows

    rows = optima_rows(lambda i: i.K == 1 and i.v >= 2)
    stronger = 0
    for inst, opt in rows:
        h10 = hm.wave_slot_value(inst)
        assert h10 <= opt, (inst, h10, opt)
        stronger += h10 > single_slot_value(inst)
    assert len(rows) >= 150 and stronger > 0


def test_wave_slot_on_the_previous_worst_instance():
    """P=2, m=3, K=1, v=2 vshape split, c=1: H1-H9 gave 197/4, OPT = 55 (docs/theory.md A.9).
    GPU 1 (stages 1, 2): keeping x top pairs of the gap G = 6 idles at least
    max(0, 6 - 5 (3 - x) + 3 (x - 1)); x = 1 gives the span 36 + 9 + 4 = 49, from 2, then
    tail(I(1)) - b_W,1 = 4."""
    inst = Instance(P=2, m=3, K=1, v=2, placement="vshape", f=[1, 3, 2, 2], b_I=2,
                    b_W=[2, 1, 2, 1], c=1)
    assert hm.wave_slot_value(inst) == 55
    assert lower_bound(inst).value == 55
    back = dict(lower_bound(inst, backward_remat=True).terms)["hetero_wave_slot"]
    assert back == hm.wave_slot_value(inst, True) <= 55


def test_plain_wave_slot_is_false_with_backward_recomputation():
    """Split, K = 1, v = 2 vshape, c = 1: the plain H10 (36) is above the optimum of the full
    model (35, CP-SAT with backward R, without the theory); its backward form is not, and it
    is the one lower_bound(backward_remat=True) takes."""
    from pipebounds.search.cpsat import solve_cpsat

    inst = Instance(P=2, m=2, K=1, v=2, placement="vshape", f=[2, 2, 3, 3], b_I=[1, 2, 1, 1],
                    b_W=[2, 1, 2, 2], c=1)
    res = solve_cpsat(inst, time_limit=60, workers=1, use_theory=False, backward=True)
    assert res.status == "optimal" and res.makespan == 35
    assert hm.wave_slot_value(inst) == 36
    back = hm.wave_slot_value(inst, True)
    assert back <= 35
    assert dict(lower_bound(inst, backward_remat=True).terms)["hetero_wave_slot"] == back


def test_backward_check_passes_and_catches_a_planted_error(monkeypatch):
    from proofs_checks.heterogeneous import (heterogeneous_backward_bounds,
                                             random_backward_instances)

    insts = random_backward_instances(12)
    res = heterogeneous_backward_bounds(Context(mode="quick"), insts)
    assert res.ok and res.instances == 12, res.detail
    real = hm.wave_slot_value
    monkeypatch.setattr(hm, "wave_slot_value",
                        lambda inst, *a, **k: None if real(inst, *a, **k) is None
                        else real(inst, *a, **k) + 1)
    res = heterogeneous_backward_bounds(Context(mode="quick"), insts)
    assert not res.ok and "H10 (hetero_wave_slot, backward)" in res.detail
