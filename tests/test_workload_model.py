"""Per-stage durations, the communication delay ``comm`` and memory in bytes (MODEL.md,
*Extensions*): Instance, orders documents, simulator and validator on hand-computed cases."""

from fractions import Fraction

import pytest

from schedules import Instance, Schedule, simulate
from schedules.io import DocumentError, document_from_schedule, schedule_from_document
from schedules.memory import MemoryModel, MemoryModelError, memory_from_json


def test_per_stage_fields_and_queries():
    inst = Instance(P=2, m=1, f=[1, 2], b_I=[1, "1/2"], b_W=[1, 1])
    assert not inst.uniform and inst.unit == 2
    assert inst.durations_of("B") == (2, Fraction(3, 2))
    assert inst.duration_of("R", 1) == 2 and inst.duration_of("W", 0) == 1
    with pytest.raises(ValueError, match="per-stage durations"):
        inst.duration("F")
    # equal entries collapse: the instance is the uniform one
    assert Instance(P=2, m=1, f=[3, 3], b=[2, 2]) == Instance(P=2, m=1, f=3, b=2)
    assert Instance(P=2, m=1, f=[3, 3]).uniform


@pytest.mark.parametrize("kwargs, message", [
    (dict(P=2, m=1, f=[1, 2, 3]), "f lists 3 per-stage durations, the instance has S=2"),
    (dict(P=2, m=1, f=[1, 0]), r"f\[1\] must be > 0"),
    (dict(P=2, m=1, b=[1, 2], b_I=[1, 1], b_W=[1, 1]), "contradicts"),
    (dict(P=2, m=1, memory=MemoryModel(activation=[1])), "memory.activation lists 1 stages"),
])
def test_per_stage_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Instance(**kwargs)


def test_memory_model_errors():
    with pytest.raises(MemoryModelError, match="exceeds"):
        MemoryModel(activation=[1, 2], kept_after_input=[2, 2])
    with pytest.raises(MemoryModelError, match="missing 'budget'"):
        memory_from_json({"activation": [1]})
    with pytest.raises(MemoryModelError, match=r"must be >= 0"):
        memory_from_json({"activation": [-1], "budget": 1})
    with pytest.raises(MemoryModelError, match="op kind 'X'"):
        memory_from_json({"activation": [1], "budget": 1, "transient": {"X": 1}})


def test_document_round_trip_with_lists_comm_and_memory():
    doc = {"P": 2, "m": 1, "durations": {"F": [1, 3], "I": [1, 2], "W": 1}, "comm": 1,
           "memory": {"activation": [4, 2], "kept_after_input": [1, 1], "static": [10, 0],
                      "transient": {"F": 1}, "budget": 14},
           "orders": {"0": ["0F0", "0I0", "0W0"], "1": ["1F0", "1I0", "1W0"]}}
    sched = schedule_from_document(doc)
    inst = sched.instance
    assert inst.f == (1, 3) and inst.b_W == 1 and inst.c == 1
    assert inst.memory.static == (10, 0)
    again = document_from_schedule(sched)
    assert again["durations"]["F"] == [1, 3] and again["comm"] == 1
    assert schedule_from_document(again).instance == inst
    with pytest.raises(DocumentError, match="disagree"):
        schedule_from_document(dict(doc, c=2))
    with pytest.raises(ValueError, match="durations.F"):
        schedule_from_document(dict(doc, durations={"F": [1, "x"], "B": 2}))


def test_simulate_per_stage_comm_and_bytes_by_hand():
    doc = {"P": 2, "m": 1, "durations": {"F": [1, 3], "I": [1, 2], "W": 1}, "comm": 1,
           "memory": {"activation": [4, 2], "kept_after_input": [1, 1], "static": [10, 0],
                      "transient": {"F": 1}, "budget": 15},
           "orders": {"0": ["0F0", "0I0", "0W0"], "1": ["1F0", "1I0", "1W0"]}}
    r = simulate(schedule_from_document(doc))
    # F0 [0,1) | c | F1 [2,5) I1 [5,7) W1 [7,8) | c | I0 [8,9) W0 [9,10)
    assert r.valid and r.makespan == 10
    assert r.peak_bytes == [15, 3]   # GPU 0: 10 static + 4 + 1 transient during F
    assert r.memory_profile_bytes(0) == [(0, 15), (1, 14), (9, 11), (10, 10)]
    assert r.memory_profile_bytes(1) == [(0, 0), (2, 3), (5, 2), (7, 1), (8, 0)]
    r = simulate(schedule_from_document(dict(doc, memory=dict(doc["memory"], budget=14))))
    assert not r.valid and [v.rule for v in r.violations] == ["memory"]
    assert "15 bytes during 0F0, above the budget 14" in r.errors[0]


def test_kept_bytes_freed_at_input_gradient():
    # one GPU, two pairs in split form: a = 4, g = 1; F0 F1 I1 I0 W1 W0
    inst = Instance(P=1, m=2, b_I=1, b_W=1, memory=MemoryModel(activation=[4], kept_after_input=[1],
                                                               budget=8))
    sched = Schedule.from_strings(inst, {0: ["0F0", "0F1", "0I0", "0I1", "0W0", "0W1"]})
    r = simulate(sched)
    assert r.valid and r.peak_bytes == [8]
    # a third forward before any I would need 12 bytes
    inst3 = inst.with_(m=3)
    bad = Schedule.from_strings(inst3, {0: ["0F0", "0F1", "0F2", "0I0", "0I1", "0I2", "0W0",
                                            "0W1", "0W2"]})
    r = simulate(bad)
    assert not r.valid and r.peak_bytes == [12]
    # after two I's only g = 1 each stays: F2 then fits (1 + 1 + 4 = 6)
    ok = Schedule.from_strings(inst3, {0: ["0F0", "0F1", "0I0", "0I1", "0F2", "0I2", "0W0",
                                           "0W1", "0W2"]})
    r = simulate(ok)
    assert r.valid and r.peak_bytes == [8]


def test_counting_model_equals_K():
    from schedules.generators import generate

    inst = Instance(P=3, m=5, K=2)
    sched = generate("1f1b", inst)
    counted = simulate(sched)
    as_bytes = simulate(sched.with_instance(inst.with_(K=None, memory=MemoryModel.counting(2, 3))))
    assert as_bytes.valid and as_bytes.peak_bytes == counted.peak_memory
    tight = simulate(sched.with_instance(inst.with_(K=None, memory=MemoryModel.counting(1, 3))))
    assert not tight.valid and tight.violations[0].rule == "memory"


def test_backward_recompute_by_hand():
    # one GPU, split, a = 4, g = 3: F0 F1 I0 R0 I1 W1 W0 ... with 0R0 between 0I0 and 0W0
    inst = Instance(P=1, m=2, b_I=1, b_W=1, memory=MemoryModel(activation=[4], kept_after_input=[3],
                                                               budget=100))
    plain = ["0F0", "0F1", "0I0", "0I1", "0W1", "0W0"]
    back = ["0F0", "0F1", "0I0", "0I1", "0W1", "0R0", "0W0"]
    a = simulate(Schedule.from_strings(inst, {0: plain}))
    b = simulate(Schedule.from_strings(inst, {0: back}))
    assert a.valid and b.valid, b.errors
    assert b.makespan == a.makespan + 1                   # the recompute costs f
    # during 0I1: plain holds 3 (kept of pair 0) + 4; with the recompute pair 0 was freed at I
    assert a.peak_bytes == [8] and b.peak_bytes == [8]   # F0 F1 both stored: 8 either way
    assert a.peak_memory == [2] and b.peak_memory == [2]
    # F0 [0,1) F1 [1,2) I0 [2,3) I1 [3,4) W1 [4,5) R0 [5,6) W0 [6,7): 0I0 frees all 4 bytes of
    # pair 0, 0I1 frees 1 of pair 1, 0W1 the other 3 at 5 when 0R0 stores g = 3 again (no net
    # change at 5), until 0W0 ends
    assert b.memory_profile_bytes(0) == [(0, 4), (1, 8), (3, 4), (4, 3), (7, 0)]
    assert a.memory_profile_bytes(0) == [(0, 4), (1, 8), (3, 7), (4, 6), (5, 3), (6, 0)]


@pytest.mark.parametrize("order, rule, text", [
    (["0F0", "0I0", "0W0", "0R0"], "recompute", "0R0 is listed after 0W0"),
    (["0F0", "0I0", "0R0", "0R0", "0W0"], "duplicate", "between I and W"),
    (["0F0", "0R0", "0R0", "0I0", "0W0"], "duplicate", "before its input gradient"),
])
def test_backward_recompute_violations(order, rule, text):
    inst = Instance(P=1, m=1, b_I=1, b_W=1)
    r = simulate(Schedule.from_strings(inst, {0: order}))
    assert rule in {v.rule for v in r.violations}
    assert any(text in e for e in r.errors), r.errors


def test_forward_and_backward_recompute_of_one_pair():
    inst = Instance(P=1, m=1, K=1, b_I=1, b_W=1)
    r = simulate(Schedule.from_strings(inst, {0: ["0F0", "0R0", "0I0", "0R0", "0W0"]}))
    assert r.valid and r.makespan == 5 and r.peak_memory == [1]
