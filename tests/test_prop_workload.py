"""Per-stage durations, ``c`` and memory in bytes: the simulator agrees with the independent
reference (tests/reference_sim.py) on random valid schedules and random orders, and the
validator flags exactly the byte overruns the reference sees."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, strategies as st

from reference_sim import reference_simulate
from schedules import simulate
from schedules.memory import MemoryModel
from strategies import DURATIONS, arbitrary_orders, instances, note_schedule, valid_schedules

BYTES = st.integers(0, 6)


@st.composite
def workload(draw, sched_strategy):
    """A schedule of the strategy with per-stage durations, a delay and a bytes model drawn."""
    sched = draw(sched_strategy)
    inst = sched.instance
    S, P = inst.S, inst.P
    kw = dict(f=draw(st.lists(DURATIONS, min_size=S, max_size=S)),
              c=draw(st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1)])))
    if inst.split:
        kw["b_I"] = draw(st.lists(DURATIONS, min_size=S, max_size=S))
        kw["b_W"] = draw(st.lists(DURATIONS, min_size=S, max_size=S))
    else:
        kw["b"] = draw(st.lists(DURATIONS, min_size=S, max_size=S))
    a = draw(st.lists(st.integers(1, 8), min_size=S, max_size=S))
    g = [draw(st.integers(0, x)) for x in a]
    trans = draw(st.dictionaries(st.sampled_from("FBIWR"), BYTES, max_size=3))
    static = draw(st.none() | st.lists(BYTES, min_size=P, max_size=P))
    budget = draw(st.none() | st.integers(0, 30))
    mm = MemoryModel(activation=a, kept_after_input=g, static=static,
                     transient=tuple(trans.items()), budget=budget)
    return sched.with_instance(inst.with_(memory=mm, **kw))


def _check(sched):
    note_schedule(sched)
    res, ref = simulate(sched), reference_simulate(sched)
    assert ("deadlock" in {v.rule for v in res.violations}) == ref.deadlock
    if ref.deadlock:
        return
    u = res.unit
    for p, seq in enumerate(sched.orders):
        for i, op in enumerate(seq):   # by position: a pair may list R twice (forward, backward)
            got = (Fraction(res.start[p][i], u), Fraction(res.end[p][i], u))
            assert got == ref.times[(p, i)], f"{op} (position {i}) on GPU {p}"
    assert res.makespan == ref.makespan and res.busy == ref.busy
    assert res.peak_bytes == ref.peak_bytes
    budget = sched.instance.memory.budget
    over = budget is not None and max(ref.peak_bytes) > budget
    byte_msgs = [v for v in res.violations if v.rule == "memory" and "bytes" in v.message]
    assert bool(byte_msgs) == over
    # the bytes profile is the reference's level function: its maximum is the peak
    for p in range(sched.instance.P):
        prof = res.memory_profile_bytes(p)
        assert max(x for _, x in prof) == ref.peak_bytes[p]
        assert prof[-1][1] == sched.instance.memory.static_of(p)


@given(workload(valid_schedules(instances(max_pairs=16, explicit=True))))
def test_valid_schedules_with_per_stage_costs_and_bytes_match_reference(sched):
    _check(sched)


@given(workload(arbitrary_orders()))
def test_arbitrary_orders_with_per_stage_costs_and_bytes_match_reference(sched):
    _check(sched)


@given(workload(valid_schedules(instances(max_pairs=12))))
def test_counting_bytes_equal_activation_count(sched):
    """a = g = 1, no static, no transient: peak bytes are the peak activation counts."""
    inst = sched.instance
    unit = sched.with_instance(inst.with_(memory=MemoryModel.counting(None, inst.S)))
    res = simulate(unit)
    assert res.peak_bytes == res.peak_memory


@st.composite
def with_backward_recomputes(draw, sched_strategy):
    """A split schedule (per-stage costs, bytes) with ``R`` ops inserted between some pairs'
    ``I`` and ``W`` on their GPU (backward rematerialization, MODEL.md *Extensions*)."""
    from schedules import Op, Schedule

    sched = draw(sched_strategy)
    orders = [list(seq) for seq in sched.orders]
    for p, seq in enumerate(orders):
        pairs = [(op.stage, op.microbatch) for op in seq if op.kind == "I"]
        for s, j in pairs:
            if not draw(st.booleans()):
                continue
            i = seq.index(Op(s, "I", j))
            w = seq.index(Op(s, "W", j))
            k = draw(st.integers(i + 1, w))
            seq.insert(k, Op(s, "R", j))
    return sched, Schedule(sched.instance, tuple(map(tuple, orders)))


@given(with_backward_recomputes(workload(valid_schedules(instances(max_pairs=12, split=True)))))
def test_backward_recomputes_match_reference_and_never_raise_the_peak(pair):
    base, sched = pair
    _check(sched)
    res, before = simulate(sched), simulate(base)
    assert not [v for v in res.violations if v.rule != "memory"], res.errors
    assert all(x <= y for x, y in zip(res.peak_memory, before.peak_memory))
    if not sched.instance.memory.transient:   # an R's transient may add a new peak
        assert all(x <= y for x, y in zip(res.peak_bytes, before.peak_bytes))
    assert res.makespan >= before.makespan or any(op.kind == "R" for _, op in base.ops())
