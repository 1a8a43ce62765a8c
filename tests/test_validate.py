"""The validator: a valid schedule passes; one mutation per rule fails, naming that rule."""


from builders import one_f_one_b_orders
from schedules import Instance, Schedule, simulate, validate


def rules(inst, orders):
    return [v.rule for v in validate(Schedule.from_strings(inst, orders))]


BASE = Instance(P=3, m=4, f=1, b=2)


def base_orders():
    return one_f_one_b_orders(3, 4)


def test_valid_schedule_passes():
    assert rules(BASE, base_orders()) == []
    assert rules(BASE.with_(K=3), base_orders()) == []


def test_range():
    o = base_orders()
    o[0].append("0F9")
    assert "range" in rules(BASE, o)
    o = base_orders()
    o[2].append("7B0")
    assert rules(BASE, o)[0] == "range"


def test_placement_names_gpu():
    o = base_orders()
    o[0].remove("0F3")
    o[1].insert(0, "0F3")
    res = validate(Schedule.from_strings(BASE, o))
    assert [v.rule for v in res] == ["placement"]
    assert "0F3 is listed on GPU 1 but stage 0 is held by GPU 0" in res[0].message


def test_duplicate_and_missing():
    o = base_orders()
    o[1].append("1F2")
    assert rules(BASE, o) == ["duplicate"]
    o = base_orders()
    o[1].remove("1F2")
    assert rules(BASE, o) == ["missing"]
    o = base_orders()
    o[2].remove("2B1")
    res = validate(Schedule.from_strings(BASE, o))
    assert [v.rule for v in res] == ["missing"] and "stage 2" in res[0].message


def test_split_ops_need_split_durations():
    o = base_orders()
    o[2][o[2].index("2B0")] = "2I0"
    o[2].append("2W0")
    assert set(rules(BASE, o)) == {"durations"}


def test_backward_forms():
    inst = BASE.with_(b_I=1, b_W=1)
    o = base_orders()
    o[2].append("2I0")
    o[2].append("2W0")
    assert rules(inst, o) == ["backward"]  # B and I/W for (0, 2)
    o = base_orders()
    o[2][o[2].index("2B0")] = "2I0"
    res = validate(Schedule.from_strings(inst, o))
    assert [v.rule for v in res] == ["backward"] and "2I0 has no 2W0" in res[0].message


def test_recompute_twice_and_misplaced():
    inst = Instance(P=1, m=2)
    assert rules(inst, {0: ["0F0", "0R0", "0R0", "0B0", "0F1", "0B1"]}) == ["duplicate"]
    res = validate(Schedule.from_strings(inst, {0: ["0F0", "0B0", "0R0", "0F1", "0B1"]}))
    assert [v.rule for v in res] == ["recompute"] and "after its backward 0B0" in res[0].message
    assert rules(inst, {0: ["0R0", "0F0", "0B0", "0F1", "0B1"]}) == ["recompute"]


def test_deadlock_names_blocked_ops():
    o = base_orders()
    o[1] = ["1B0"] + [a for a in o[1] if a != "1B0"]
    res = validate(Schedule.from_strings(BASE, o))
    assert [v.rule for v in res] == ["deadlock"]
    assert "GPU 1 is blocked at 1B0 waiting for 2B0 (GPU 2)" in res[0].message


def test_memory_names_gpu_op_and_count():
    res = validate(Schedule.from_strings(BASE.with_(K=2), base_orders()))
    assert [v.rule for v in res] == ["memory"]
    assert "GPU 0 holds 3 live activations during 0F2, above K=2" in res[0].message


def test_memory_release_and_store_at_same_instant_do_not_overlap():
    # P=1: F0 B0 F1 B1 with K=1: B0 ends when F1 starts
    inst = Instance(P=1, m=2, K=1)
    assert rules(inst, {0: ["0F0", "0B0", "0F1", "0B1"]}) == []
    assert rules(inst, {0: ["0F0", "0F1", "0B0", "0B1"]}) == ["memory"]


def test_recomputed_forward_stores_nothing():
    inst = Instance(P=1, m=2, K=1)
    o = {0: ["0F0", "0F1", "0B0", "0R1", "0B1"]}
    assert rules(inst, o) == []
    assert simulate(Schedule.from_strings(inst, o)).peak_memory == [1]
    # the recompute's activation is live from R start to B end: R1 before B0 needs two slots
    assert rules(inst, {0: ["0F0", "0F1", "0R1", "0B0", "0B1"]}) == ["memory"]


def test_split_release_is_weight_op():
    inst = Instance(P=1, m=2, K=1, b_I=1, b_W=1)
    assert rules(inst, {0: ["0F0", "0I0", "0W0", "0F1", "0I1", "0W1"]}) == []
    assert rules(inst, {0: ["0F0", "0I0", "0F1", "0W0", "0I1", "0W1"]}) == ["memory"]


def test_many_violations_are_capped_but_counted():
    o = {p: [] for p in range(3)}
    res = validate(Schedule.from_strings(Instance(P=3, m=30), o))
    assert all(v.rule == "missing" for v in res)
    assert any("more" in v.message for v in res)
