"""The rematerializing list scheduler's v = 2 orders (schedules/generators/remat_list.py:
``group``, Megatron's looped order; ``A``, the V-shape orders of ZB-V and V-half; ``keep_first``,
the keep limit of a GPU's earlier chunks): on random small v = 2 instances (both placements,
fused and split, K from 1 to every activation live, rational durations, c) and random
parameters it never stalls, its schedule is valid within K, the reference simulator agrees
with the makespan, and the makespan is never below the bound (exact Fractions)."""

from __future__ import annotations


from hypothesis import given, settings, strategies as st

from bounds import lower_bound
from schedules import Instance, simulate
from schedules.generators import GENERATORS
from schedules.generators.remat_list import natural_pairs, natural_window, remat_list_schedule
from pipebounds.synthesis.start import REMAT_LIST_HEAD, remat_list_candidates
from schedules.remat import fit_memory
from tests.schedule_checks import assert_valid_within_K
from tests.strategies import instances, scaled


@st.composite
def cases(draw):
    """A v = 2 instance with K in 1 .. v m (v m: every activation live, no limit binds) and
    the scheduler's parameters, the window and the keep limits per GPU."""
    inst = draw(instances(max_P=4, v=2, max_m=5, max_pairs=40, K="inf", c=True))
    K = draw(st.integers(1, inst.v * inst.m))
    P = inst.P
    order = draw(st.one_of(st.just(("group", P)), st.tuples(st.just("group"),
                                                               st.integers(1, inst.m)),
                           st.tuples(st.just("A"), st.one_of(st.none(), st.integers(1, 4)))))
    prm = dict(
        group=order[1] if order[0] == "group" else None,
        A=order[1] if order[0] == "A" else None,
        window=[max(1, natural_window(inst, p) + draw(st.integers(-2, 4))) for p in range(P)],
        keep_first=draw(st.one_of(st.none(), st.lists(st.integers(0, K), min_size=P,
                                                      max_size=P))),
        lookahead=draw(st.integers(1, 3)),
        w_room=draw(st.integers(0, 2)),
        eager_pairs=draw(st.one_of(st.none(), st.just(
            [max(1, natural_pairs(inst, p) + draw(st.integers(-3, 3))) for p in range(P)]))),
    )
    return inst.with_(K=K), prm


@settings(max_examples=scaled(120), deadline=None)
@given(cases())
def test_v2_orders_valid_within_K_reference_and_bound(case):
    inst, prm = case
    sched = remat_list_schedule(inst, **prm)  # never stalls: a GeneratorError fails the test
    assert_valid_within_K(sched, inst)


def test_K1_looped_order_every_placement_and_form():
    """K = 1 (one activation per GPU) in the looped order, fused and split, both placements,
    with the earlier chunks never kept: no stall, within K, every pair but the last stage's
    recomputed or kept alone."""
    for kw in (dict(f=1, b=2), dict(f=1, b_I=1, b_W=1)):
        for pl in ("looped", "vshape"):
            inst = Instance(P=3, m=7, K=1, v=2, placement=pl, **kw)
            sched = remat_list_schedule(inst, group=3, keep_first=[0] * 3)
            res = simulate(sched)
            assert res.valid and max(res.peak_memory) == 1
            assert sum(op.kind == "R" for seq in sched.orders for op in seq) >= inst.m


def test_recomputes_follow_the_chosen_order():
    """The recomputes of each GPU run in its fixed order (the deadlock argument needs it): at
    K = 2 with no forward kept, the looped order (groups of P) recomputes in
    interleaved 1F1B's backward order ``(j div P, S - 1 - s, j mod P)`` and ``A = 2`` on the
    V-shape placement in ZB-V's ``(2 j + S - 1 - s, j)``; the two differ on these instances."""
    P, m, S = 4, 8, 8
    for pl, kw, key in (("looped", dict(group=P), lambda j, s: (j // P, S - 1 - s, j % P)),
                        ("vshape", dict(A=2), lambda j, s: (2 * j + S - 1 - s, j))):
        inst = Instance(P=P, m=m, K=2, v=2, placement=pl, f=1, b=2)
        sched = remat_list_schedule(inst, keep=[0] * P, **kw)
        assert simulate(sched).valid
        total = 0
        for p, seq in enumerate(sched.orders):
            rs = [(op.microbatch, op.stage) for op in seq if op.kind == "R"]
            total += len(rs)
            assert rs == sorted(rs, key=lambda js: key(*js))
            if p == 1:  # two recomputed stages (the last stage's pairs are kept)
                assert rs != sorted(rs)  # not simply microbatch by microbatch
        assert total >= m * P


def test_earlier_chunk_checkpoints_beat_interleaved_fitted():
    """A frontier pair (P = 16, m = 64, v = 2 looped, f = 1, b = 2, K = 10; bound 440):
    interleaved 1F1B fitted to K by fit_memory recomputes every first-chunk pair and 27 of the
    second chunk's on GPU 0; the rematerializing list schedule that keeps no first-chunk
    activation (they live twice as long) is shorter."""
    inst = Instance(P=16, m=64, K=10, v=2, f=1, b=2)
    fitted = simulate(fit_memory(GENERATORS["interleaved"](inst.with_(K=None)), 10,
                                 polish=False).with_instance(inst)).makespan
    nat = [natural_window(inst, p) for p in range(inst.P)]
    sched = remat_list_schedule(inst, A=1, window=nat, lookahead=2, keep_first=[0] * inst.P,
                                eager_pairs=[natural_pairs(inst, p) for p in range(inst.P)])
    res = simulate(sched)
    assert res.valid and max(res.peak_memory) <= 10
    assert lower_bound(inst).value <= res.makespan < fitted


def test_list_candidates_start_with_the_v2_order():
    """At v = 2 under a count limit from HEAD_PAIRS pairs on, the list scheduler's candidates
    begin with the head of the rematerializing list scheduler's grid (remat_head), then the
    list rules still make their first schedule; the remat phase of synthesize skips the head.
    Small instances, v = 1, V-shape fused and no limit have no head."""
    from pipebounds.synthesis.start import HEAD_PAIRS, _grid, list_candidates, remat_head

    inst = Instance(P=16, m=HEAD_PAIRS // 32, K=6, v=2, f=1, b=2)
    assert remat_head(inst, 6) == 1
    cands = list_candidates(inst, 6, deadline=0.0, now=lambda: 1.0)  # no time left
    assert [c.source.split("[")[0] for c in cands] == ["remat-list", "list"]
    assert max(simulate(cands[0].schedule.with_instance(inst)).peak_memory) <= 6
    assert _grid(inst)[0] == REMAT_LIST_HEAD[("looped", False)]
    small = Instance(P=4, m=8, K=3, v=2, f=1, b=2)
    assert remat_head(small, 3) == 0
    assert len(remat_list_candidates(small, 3, float("inf"), skip=1)) == len(_grid(small)) - 1
    assert remat_head(Instance(P=32, m=64, K=3, f=1, b=2), 3) == 0  # v = 1
    assert remat_head(inst.with_(placement="vshape"), 6) == 0
    assert remat_head(inst, None) == 0
