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
    times = res.op_times()
    for p, seq in enumerate(sched.orders):
        for i, op in enumerate(seq):
            assert times[op] == ref.times[(p, i)], f"{op} on GPU {p}"
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
