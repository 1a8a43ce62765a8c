"""Overlapped forward and backward ops (MODEL.md, third-round extensions, ``F&B``).

Checked against a hand-timed case, the independent simulator of tests/reference_sim.py
(which times an ``F&B`` op as one node of its graph) and the lower bound, which must stay
below every simulated schedule that uses ``F&B`` ops (docs/theory.md, *Overlapped ops*).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from bounds import lower_bound
from reference_sim import reference_simulate
from schedules import Instance, Schedule, simulate
from schedules.io import document_from_schedule, schedule_from_document
from schedules.ops import OpError, parse_overlap
from schedules.schedule import ScheduleError
from strategies import _r_in_place, instances, note_schedule, overlapped_schedules


def _hand_case():
    inst = Instance(P=2, m=2, f=1, b=2, d_FB=Fraction(5, 2))
    return Schedule.from_strings(inst, {0: ["0F0", "0F1", "0B0", "0B1"],
                                        1: ["1F0", "1F1&1B0", "1B1"]})


def test_hand_timed_case():
    # GPU 1: 1F0 [1, 2], then 1F1&1B0 starts at 2 (1F1 needs 0F1 ended at 2, 1B0 needs 1F0)
    # and lasts d_FB = 5/2, so [2, 9/2]; 1B1 [9/2, 13/2]; GPU 0: 0B0 [9/2, 13/2], 0B1 [13/2, 17/2]
    sched = _hand_case()
    assert sched.orders[1][1:3] == tuple(parse_overlap("1F1&1B0")[::-1])
    r = simulate(sched)
    assert r.valid, r.errors
    times = {str(op): t for op, t in r.op_times().items()}
    assert times["1F1"] == times["1B0"] == (2, Fraction(9, 2))
    assert times["0B0"] == (Fraction(9, 2), Fraction(13, 2))
    assert r.makespan == Fraction(17, 2)
    assert r.busy == [6, Fraction(11, 2)]          # 1 + 5/2 + 2 on GPU 1: the F&B counts once
    assert r.peak_memory == [2, 1]                 # GPU 1 releases 1B0 and stores 1F1 together
    assert r.memory_profile(1) == [(0, 0), (1, 1), (Fraction(9, 2), 1), (Fraction(13, 2), 0)]
    ref = reference_simulate(sched)
    assert ref.makespan == r.makespan and ref.peak == r.peak_memory


def test_document_round_trip_and_durations_key():
    sched = _hand_case()
    doc = document_from_schedule(sched)
    assert doc["orders"]["1"] == ["1F0", "1F1&1B0", "1B1"]
    assert doc["durations"]["F&B"] == "5/2"
    again = schedule_from_document(doc)
    assert again == sched and again.overlaps == ((), (1,))


def test_without_a_given_duration_an_overlap_lasts_its_parts():
    inst = Instance(P=1, m=2, f=1, b=2)
    seq = ["0F0", "0F1&0B0", "0B1"]
    r = simulate(Schedule.from_strings(inst, {0: seq}))
    assert r.valid and r.makespan == 6


@pytest.mark.parametrize("text", ["0B1&0F0", "0F0&0W1", "0F0&", "0F0&0B1&0B2", "0R0&0B1"])
def test_bad_overlapped_actions_are_named(text):
    with pytest.raises(OpError):
        parse_overlap(text)
    with pytest.raises(ScheduleError, match="GPU 0"):
        Schedule.from_strings(Instance(P=1, m=3), {0: [text]})


def test_overlap_of_a_pair_with_itself_deadlocks():
    # 0F0&0B0 at the last stage: the backward part needs the forward part's end
    r = simulate(Schedule.from_strings(Instance(P=1, m=1), {0: ["0F0&0B0"]}))
    assert [v.rule for v in r.violations] == ["deadlock"]
    assert reference_simulate(r.schedule).deadlock


def test_overlap_rule_names_a_wrong_join():
    from schedules import Op

    inst = Instance(P=1, m=2, b_I=1, b_W=1)
    seq = (Op(0, "F", 0), Op(0, "I", 0), Op(0, "W", 0), Op(0, "F", 1), Op(0, "I", 1),
           Op(0, "W", 1))
    bad = Schedule(inst, (seq,), overlaps=((1,),))   # I0 then W0 joined: not a forward
    assert "overlap" in {v.rule for v in simulate(bad).violations}


def test_instance_refuses_an_overlap_slower_than_its_parts():
    with pytest.raises(Exception, match="d_FB"):
        Instance(P=1, m=1, f=1, b=2, d_FB=4)
    with pytest.raises(Exception, match="split"):
        Instance(P=1, m=1, f=1, b=2, d_FI=1)


@given(overlapped_schedules())
def test_overlapped_schedules_match_the_reference(sched):
    note_schedule(sched)
    res, ref = simulate(sched), reference_simulate(sched)
    assert res.valid, res.errors
    assert not ref.deadlock
    times = res.op_times()
    for p, seq in enumerate(sched.orders):
        for i, op in enumerate(seq):
            assert times[op] == ref.times[(p, i)], f"{op} on GPU {p}"
    assert res.makespan == ref.makespan
    assert res.busy == ref.busy
    assert res.peak_memory == ref.peak == ref.order_peak


def test_the_unscaled_bound_fails_with_overlaps_and_the_scaled_one_holds():
    # P = 1, m = 2, f = b = 1: every schedule without overlaps lasts m(f + b) = 4; with
    # d_FB = 1 the order 0F0, 0F1&0B0, 0B1 lasts 3. OV1: rho' = 1/2, bound 2.
    inst = Instance(P=1, m=2, f=1, b=1, d_FB=1)
    r = simulate(Schedule.from_strings(inst, {0: ["0F0", "0F1&0B0", "0B1"]}))
    assert r.valid and r.makespan == 3
    assert lower_bound(inst.with_(d_FB=None)).value == 4
    lb = lower_bound(inst)
    assert lb.value == 2 and not lb.exact


@given(st.one_of(overlapped_schedules(instances(max_pairs=16, c=True)),
                 overlapped_schedules(instances(max_pairs=12), greedy=True)))
@settings(max_examples=80)
def test_bound_is_never_above_a_schedule_with_overlaps(sched):
    note_schedule(sched)
    res = simulate(sched)
    lb = lower_bound(sched.instance)
    assert lb.value <= res.makespan
    if sched.overlaps:
        assert not lb.exact


@given(st.data())
def test_joined_orders_with_shuffles_deadlock_iff_reference_finds_a_cycle(data):
    sched = data.draw(overlapped_schedules(instances(max_pairs=12)))
    orders = [list(seq) for seq in sched.orders]
    p = data.draw(st.integers(0, len(orders) - 1))
    seq = orders[p]
    joined = set(sched.overlap_starts(p)) | {i + 1 for i in sched.overlap_starts(p)}
    free = [i for i in range(len(seq)) if i not in joined]
    if len(free) >= 2:
        i, k = data.draw(st.permutations(free))[:2]
        trial = list(seq)
        trial[i], trial[k] = trial[k], trial[i]
        if _r_in_place(trial):     # keep every R between its F and its backward
            orders[p] = trial
    moved = Schedule(sched.instance, tuple(map(tuple, orders)), overlaps=sched.overlaps)
    res, ref = simulate(moved), reference_simulate(moved)
    rules = {v.rule for v in res.violations}
    assert rules <= {"deadlock", "memory"}, res.errors
    assert ("deadlock" in rules) == ref.deadlock
    assert res.peak_memory == ref.order_peak
    if not ref.deadlock:
        assert res.makespan == ref.makespan
        assert res.peak_memory == ref.peak


def test_gantt_draws_an_overlap_as_two_halves_of_one_bar(tmp_path):
    from pipebounds.viz.gantt import save_gantt
    from pipebounds.viz.gantt_data import busy_bands, gantt_data

    d = gantt_data(_hand_case())
    centre, height = d.bar_rows
    k = [d.op_name(i) for i in range(d.n_ops)].index("1B0")     # backward part, then forward
    assert d.op_name(k + 1) == "1F1" and d.fused[k]
    assert (centre[k], centre[k + 1], height[k]) == (1.2, 0.8, 0.4)
    assert d.start[k] == d.start[k + 1] == 2 and d.end[k] == d.end[k + 1] == 4.5
    assert d.mem_after[k] == d.mem_after[k + 1] == 1
    edges, frac = busy_bands(d, 17)
    assert frac.sum(axis=(1, 2)) * (edges[1] - edges[0]) == pytest.approx([6, 5.5])
    times, counts = d.memory_steps(1)   # the store of 1F1 counts at the op's end, 9/2
    assert list(zip(times.tolist(), counts.tolist()))[:3] == [(0, 0), (1, 1), (4.5, 1)]
    save_gantt(_hand_case(), str(tmp_path / "g.png"))
    assert (tmp_path / "g.png").stat().st_size > 0


def test_torch_overlap_f_b_round_trip():
    from schedules.interop.torch import from_pipeline_order, to_pipeline_order, to_torch_csv

    sched = _hand_case()
    order = to_pipeline_order(sched)
    assert order[1] == ["1F0", "(1F1;1B0)OVERLAP_F_B", "1B1"]
    back = from_pipeline_order(order, sched.instance)
    assert back.overlaps == sched.overlaps and back.orders == sched.orders
    assert simulate(back).makespan == Fraction(17, 2)
    assert "(1F1;1B0)OVERLAP_F_B" in to_torch_csv(sched)


def test_torch_comms_order_with_an_overlap_checks_against_the_written_parts():
    from schedules.interop.torch import from_pipeline_order

    inst = Instance(P=2, m=2, f=1, b=2, d_FB=Fraction(5, 2))
    order = {0: ["0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0", "0RECV_B1", "0B1"],
             1: ["1RECV_F0", "1F0", "1RECV_F1", "(1F1;1B0)OVERLAP_F_B", "1SEND_B0", "1B1",
                 "1SEND_B1"]}
    sched = from_pipeline_order(order, inst)
    assert sched.comms is not None and sched.overlaps == ((), (1,))
    r = simulate(sched)
    assert r.valid, r.errors
    assert r.makespan == Fraction(17, 2)


def test_cli_bound_and_generate_take_overlap_durations(capsys):
    import json

    from pipebounds.cli import main

    assert main(["bound", "-P", "1", "-m", "2", "-f", "1", "-b", "1", "--d-fb", "1",
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["lower_bound_exact"] == "2" and r["exact"] is False
    assert r["instance"]["d_FB"] == 1
    assert main(["generate", "dualpipev-fb", "-P", "2", "-m", "4", "-v", "2", "--placement",
                 "vshape", "--b-input", "1", "--b-weight", "1", "--d-fb", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["durations"]["F&B"] == 2
    assert any("&" in a for a in doc["orders"]["0"])
    assert simulate(schedule_from_document(doc)).makespan == 22
    assert main(["bound", "-P", "1", "-m", "2", "--d-fb", "9"]) == 2
    assert "d_FB" in capsys.readouterr().err
