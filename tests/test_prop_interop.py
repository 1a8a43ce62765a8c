"""Interop without torch: torch-style ``pipeline_order`` strings round-trip into Schedules.

A random valid schedule is written the way torch writes its orders (idle ``None`` steps,
communication and sharding actions, DualPipeV ``(F;B)OVERLAP_F_B`` groups) and read back with
:func:`schedules.interop.from_pipeline_order`; the compute ops must come back unchanged.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from schedules import Instance, simulate
from schedules.interop import InteropError, from_pipeline_order
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
                noise = draw(st.sampled_from(NON_COMPUTE + (None,)))
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
    assert back.orders == sched.orders
    assert simulate(back).makespan == simulate(sched).makespan


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
