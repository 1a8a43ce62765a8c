"""The ASAP simulator against hand-computed cases and closed forms."""

from fractions import Fraction

import pytest

from builders import gpipe_orders, one_f_one_b_orders
from schedules import Instance, Schedule, simulate


def sim(inst, orders):
    return simulate(Schedule.from_strings(inst, orders))


def test_issue_example_1f1b_P4_m8():
    r = sim(Instance(P=4, m=8, f=1, b=2), one_f_one_b_orders(4, 8))
    assert r.valid and r.makespan == 33 and r.peak_memory == [4, 3, 2, 1]


@pytest.mark.parametrize("P", [1, 2, 3, 5])
@pytest.mark.parametrize("m", [1, 2, 4, 7])
@pytest.mark.parametrize("f, b", [(1, 2), (Fraction(3, 2), 1), (2, Fraction(7, 3))])
def test_gpipe_and_1f1b_closed_form(P, m, f, b):
    inst = Instance(P=P, m=m, f=f, b=b)
    expected = (m + P - 1) * (Fraction(f) + Fraction(b))
    g = sim(inst, gpipe_orders(P, m))
    o = sim(inst, one_f_one_b_orders(P, m))
    assert g.makespan == expected and o.makespan == expected
    assert g.peak_memory == [m] * P
    assert o.peak_memory == [min(P - p, m) for p in range(P)]
    # bubble ratio of GPU p: 1 - m(f+b)/T
    assert o.bubble_ratio == [1 - m * (Fraction(f) + Fraction(b)) / expected] * P


def test_split_backward_hand_case():
    inst = Instance(P=2, m=1, f=1, b_I=1, b_W=1)
    r = sim(inst, {0: ["0F0", "0I0", "0W0"], 1: ["1F0", "1I0", "1W0"]})
    times = {str(op): t for op, t in r.op_times().items()}
    assert times == {"0F0": (0, 1), "1F0": (1, 2), "1I0": (2, 3), "1W0": (3, 4),
                     "0I0": (3, 4), "0W0": (4, 5)}
    assert r.makespan == 5 and r.peak_memory == [1, 1]


def test_rematerialized_K1_hand_case():
    # P=2, m=2, K=1, f=1, b=2; GPU 0 recomputes both microbatches.
    inst = Instance(P=2, m=2, K=1, f=1, b=2)
    r = sim(inst, {0: ["0F0", "0F1", "0R0", "0B0", "0R1", "0B1"],
                   1: ["1F0", "1B0", "1F1", "1B1"]})
    assert r.valid and r.makespan == 9 and r.peak_memory == [1, 1]
    times = {str(op): t for op, t in r.op_times().items()}
    assert times["0R0"] == (2, 3) and times["0B0"] == (4, 6) and times["0B1"] == (7, 9)
    assert r.busy == [8, 6]
    # R0 stores at 2; at 6 B0 releases while R1 stores (half-open: no overlap); B1 releases at 9
    assert r.memory_profile(0) == [(0, 0), (2, 1), (6, 1), (9, 0)]


def test_memory_profile_steps():
    inst = Instance(P=1, m=2, f=1, b=2)
    r = sim(inst, {0: ["0F0", "0F1", "0B0", "0B1"]})
    # stores at 0 and 1, releases at 4 and 6
    assert r.memory_profile(0) == [(0, 0), (0, 1), (1, 2), (4, 1), (6, 0)]


def test_communication_delay():
    inst = Instance(P=2, m=1, f=1, b=2, c=Fraction(1, 2))
    r = sim(inst, {0: ["0F0", "0B0"], 1: ["1F0", "1B0"]})
    assert r.makespan == 6 + 2 * Fraction(1, 2)


def test_multiwave_vshape_last_stage_on_gpu0():
    inst = Instance(P=2, m=1, v=2, placement="vshape", f=1, b=1)
    orders = {0: ["0F0", "3F0", "3B0", "0B0"], 1: ["1F0", "2F0", "2B0", "1B0"]}
    r = sim(inst, orders)
    assert r.valid and r.makespan == 8  # one microbatch's chain S(f+b)


def test_invalid_schedule_has_no_timing():
    r = sim(Instance(P=1, m=1), {0: ["0B0", "0F0"]})
    assert not r.valid and r.makespan is None and r.bubble_ratio is None
