"""Interop without torch: torch-style ``pipeline_order`` strings round-trip into Schedules.

A random valid schedule is written the way torch writes its orders (idle ``None`` steps,
sharding actions, DualPipeV ``(F;B)OVERLAP_F_B`` groups) and read back with
:func:`schedules.interop.from_pipeline_order`; the compute ops must come back unchanged, each
group as one overlapped ``F&B`` op. With the
sends and receives a runtime order has, the schedule stays valid (no ``comm_deadlock``), and
moving a receive before the op that its peer's send waits for is caught.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from schedules import Instance, simulate
from schedules.interop import InteropError, from_pipeline_order
from schedules.comms import COMM_KINDS
from schedules.interop.torch import NON_COMPUTE, action_ops
from strategies import instances, note_schedule, valid_schedules


@st.composite
def torch_style(draw):
    sched = draw(valid_schedules(instances(max_pairs=16)))
    order = {}
    for p, seq in enumerate(sched.orders):
        out = []
        i = 0
        while i < len(seq):
            for _ in range(draw(st.integers(0, 2))):
                noise = draw(st.sampled_from(
                    tuple(k for k in NON_COMPUTE if k not in COMM_KINDS) + (None,)))
                if noise is None:
                    out.append(None)
                elif noise in ("UNSHARD", "RESHARD"):
                    out.append(f"{seq[i].stage}{noise}")
                else:
                    out.append(f"{seq[i].stage}{noise}{seq[i].microbatch}")
            op = seq[i]
            if (op.kind == "F" and i + 1 < len(seq) and seq[i + 1].kind in "BI"
                    and draw(st.booleans())):
                out.append(f"({op};{seq[i + 1]})OVERLAP_F_B")
                i += 2
                continue
            out.append(str(op))
            i += 1
        order[p] = out
    return sched, order


@given(torch_style())
def test_pipeline_order_strings_round_trip(case):
    sched, order = case
    note_schedule(sched)
    back = from_pipeline_order(order, sched.instance)
    assert back.comms is None
    # every OVERLAP_F_B group is one F&B op "<F>&<B>" (MODEL.md third round), the rest as listed
    for p in range(sched.instance.P):
        expected = [a.replace("(", "").replace(")OVERLAP_F_B", "").replace(";", "&")
                    for a in order[p] if a is not None and action_ops(a)]
        assert back.actions(p) == expected
    if back.overlaps is None:
        assert back.orders == sched.orders
        assert simulate(back).makespan == simulate(sched).makespan
    else:  # the same ops, each group's backward part listed first
        assert sorted(back.orders) != [] and all(
            sorted(a) == sorted(b) for a, b in zip(back.orders, sched.orders))


def with_comms(sched):
    """Per-GPU action strings with torch's point-to-point actions: a receive right before the op
    that needs another GPU's result, a send right after the op that produces it."""
    inst = sched.instance
    S = inst.S
    out = []
    for p, seq in enumerate(sched.orders):
        acts = []
        for op in seq:
            s, j = op.stage, op.microbatch
            if op.kind == "F" and s > 0 and inst.gpu(s - 1) != p:
                acts.append(f"{s}RECV_F{j}")
            if op.kind in "BI" and s < S - 1 and inst.gpu(s + 1) != p:
                acts.append(f"{s}RECV_B{j}")
            acts.append(str(op))
            if op.kind == "F" and s < S - 1 and inst.gpu(s + 1) != p:
                acts.append(f"{s}SEND_F{j}")
            if op.kind in "BI" and s > 0 and inst.gpu(s - 1) != p:
                acts.append(f"{s}SEND_B{j}")
        out.append(acts)
    return out


@given(valid_schedules(instances(max_pairs=16)), st.data())
def test_sends_and_receives_kept_and_checked(sched, data):
    note_schedule(sched)
    order = with_comms(sched)
    back = from_pipeline_order(order, sched.instance)
    assert back.orders == sched.orders
    res = simulate(back)
    assert res.valid and res.makespan == simulate(sched).makespan
    # a receive moved to the very front of its GPU's list: it deadlocks iff the peer's send
    # needs something this GPU only does after that receive (decided by a plain replay here)
    recvs = [(p, i) for p, acts in enumerate(order) for i, a in enumerate(acts) if "RECV" in a]
    if not recvs:
        return
    p, i = data.draw(st.sampled_from(recvs))
    moved = [list(a) for a in order]
    moved[p].insert(0, moved[p].pop(i))
    rules = {v.rule for v in simulate(from_pipeline_order(moved, sched.instance)).violations}
    assert rules <= {"comm_deadlock"}
    assert ("comm_deadlock" in rules) == replay_deadlocks(moved, sched.instance)


def replay_deadlocks(order, inst):
    """An independent replay: every GPU runs its list; an action runs when what it needs has
    run anywhere (a receive needs its send; an op its predecessor's op on this GPU or its
    receive; a send its op)."""
    done, ptr = set(), [0] * len(order)
    S = inst.S

    def ready(a):
        import re
        s, k, j = re.match(r"(\d+)([A-Z_]+)(\d+)", a).groups()
        s, j = int(s), int(j)
        need = {"RECV_F": [f"{s - 1}SEND_F{j}"], "RECV_B": [f"{s + 1}SEND_B{j}"],
                "SEND_F": [f"{s}F{j}"], "SEND_B": [f"{s}B{j}", f"{s}I{j}"],
                "F": [f"{s}RECV_F{j}", f"{s - 1}F{j}"] if s > 0 else [],
                "B": [f"{s}RECV_B{j}", f"{s + 1}B{j}", f"{s + 1}I{j}"] if s < S - 1 else [],
                "I": [f"{s}RECV_B{j}", f"{s + 1}B{j}", f"{s + 1}I{j}"] if s < S - 1 else [],
                }.get(k, [])
        return not need or any(n in done for n in need)

    changed = True
    while changed:
        changed = False
        for p, acts in enumerate(order):
            while ptr[p] < len(acts) and ready(acts[ptr[p]]):
                done.add(acts[ptr[p]])
                ptr[p] += 1
                changed = True
    return any(ptr[p] < len(a) for p, a in enumerate(order))


def test_overlap_is_split_in_order_and_comms_dropped():
    assert [str(op) for op in action_ops("(2F3;1B1)OVERLAP_F_B")] == ["2F3", "1B1"]
    for text in ("0SEND_F1", "3RECV_B0", "1UNSHARD", "1RESHARD", "0REDUCE_GRAD", "  ", None):
        assert action_ops(text) == []


@pytest.mark.parametrize("bad", ["0X1", "F0", "(0F1;1B0)FOO", "1BOGUS"])
def test_unreadable_actions_are_named(bad):
    with pytest.raises(InteropError, match="rank 0"):
        from_pipeline_order({0: [bad]}, Instance(P=1, m=2))


def test_static_1f1b_last_rank_off_by_one_is_reported_not_repaired():
    """The shape torch 2.13's Schedule1F1B.pipeline_order has on its last rank (P=2, m=3):
    forwards numbered 1..m. Read faithfully, the validator names both problems."""
    order = {0: ["0F0", "0F1", "0B0", "0F2", "0B1", None, "0B2", "0REDUCE_GRAD"],
             1: ["1F1", "1B0", "1F2", "1B1", "1F3", "1B2", "1REDUCE_GRAD"]}
    res = simulate(from_pipeline_order(order, Instance(P=2, m=3)))
    assert {v.rule for v in res.violations} == {"range", "missing"}
