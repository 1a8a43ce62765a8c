"""H1-H3 (bounds/heterogeneous.py): hand values, never above a brute-force optimum on small
non-uniform instances, and the proofs check catches a bound planted one unit too high."""

from __future__ import annotations


from hypothesis import given, settings, strategies as st

import bounds
from bounds import heterogeneous as H
from proofs_checks.heterogeneous import compare, heterogeneous_bounds, random_instances
from proofs_checks.registry import Context
from reference_sim import reference_optimum
from schedules import Instance


def test_hand_values_fused_with_c():
    # P=2, f=(1,3), b=(2,4), c=1: head(1) = 1 + 1, down(1) = 2 + 1
    inst = Instance(P=2, m=2, f=[1, 3], b=[2, 4], c=1)
    assert H.work(inst) == 2 * 7
    assert H.chain(inst) == 1 + 1 + 3 + 4 + 1 + 2
    assert dict((n, x) for n, x in H.fill_drain(inst))["hetero_fill_drain"] == 2 + 14 + 3
    lb = bounds.lower_bound(inst)
    assert lb.value == 19 and not lb.exact
    assert {n for n, _ in lb.terms} == {"hetero_work", "hetero_chain", "hetero_fill_drain",
                                        "hetero_gpu_subset"}   # H4 (K = None: no memory term)


def test_hand_values_split():
    # split chain through W(j,1): the largest W ends late even though it is not the lowest stage
    inst = Instance(P=2, m=1, f=[1, 1], b_I=[1, 1], b_W=[1, 5])
    assert H.chain(inst) == 1 + 1 + 1 + 5      # F0 F1 I1 W1
    lb = bounds.lower_bound(inst)
    assert lb.value == 8 and lb.exact         # m = 1, v = 1: the chain is a schedule


def test_uniform_with_c_adds_c_on_each_crossing():
    inst = Instance(P=3, m=1, f=1, b=2, c="1/2")
    # chain 3 + 6 and 2 crossings each way
    assert bounds.lower_bound(inst).value == 9 + 2
    terms = {n: v for n, v, _ in bounds.evaluate.basic_terms(inst)}
    assert terms["critical_path"] == 11


def test_byte_budget_removes_exactness():
    from schedules.memory import MemoryModel

    inst = Instance(P=2, m=1)
    assert bounds.lower_bound(inst).exact
    tight = inst.with_(memory=MemoryModel(activation=[1, 1], budget=1))
    assert not bounds.lower_bound(tight).exact


@st.composite
def tiny_nonuniform(draw):
    P = draw(st.integers(1, 2))
    v = 2 if P == 1 else draw(st.integers(1, 2)) if P == 2 else 1
    S = P * v
    m = draw(st.integers(1, 2 if S > 2 else 3))
    kw = dict(P=P, m=m, v=v, K=draw(st.sampled_from([1, 2, None])),
              placement=draw(st.sampled_from(["looped", "vshape"])),
              c=draw(st.sampled_from([0, 1])), f=draw(st.lists(st.integers(1, 3), min_size=S,
                                                                 max_size=S)))
    if draw(st.booleans()):
        kw["b_I"] = draw(st.lists(st.integers(1, 2), min_size=S, max_size=S))
        kw["b_W"] = draw(st.lists(st.integers(1, 2), min_size=S, max_size=S))
    else:
        kw["b"] = draw(st.lists(st.integers(1, 4), min_size=S, max_size=S))
    return Instance(**kw)


@settings(max_examples=25)
@given(tiny_nonuniform())
def test_never_above_brute_force_optimum(inst):
    try:
        best = reference_optimum(inst, limit=20_000)
    except ValueError:
        return  # too many orders for brute force: not an example
    assert best is not None
    assert compare(inst, best[0]) == []


def test_quick_check_passes_and_counts():
    res = heterogeneous_bounds(Context(mode="quick"))
    assert res.ok, res.detail
    assert res.instances == 24 and "cross-checked by CP-SAT" in res.detail


def test_a_chain_one_unit_too_high_is_caught(monkeypatch):
    true_chain = H.chain
    monkeypatch.setattr(H, "chain", lambda inst: true_chain(inst) + 1)
    res = heterogeneous_bounds(Context(mode="quick"), instances=random_instances(24))
    assert not res.ok and "> OPT" in res.detail


def test_a_fill_drain_one_unit_too_high_is_caught(monkeypatch):
    true_fd = H.fill_drain
    monkeypatch.setattr(H, "fill_drain", lambda inst: [(n, x + 1) for n, x in true_fd(inst)])
    res = heterogeneous_bounds(Context(mode="quick"), instances=random_instances(24))
    assert not res.ok and "H3" in res.detail
