"""Library entry points at the door (issue 16): wrong types raise TypeError/ValueError naming the
argument (never AttributeError from deep inside), and values that used to be coerced are refused.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

import pipebounds as pb
from schedules import limits
from schedules.io import DocumentError, load_documents, parse_json

BAD_ARGS = [None, {"P": 2, "m": 2}, "P=2", 3, [1, 2]]


@pytest.mark.parametrize("bad", BAD_ARGS, ids=repr)
@pytest.mark.parametrize("call, name", [
    (lambda x: pb.lower_bound(x), "inst"),
    (lambda x: pb.simulate(x), "schedule"),
    (lambda x: pb.validate(x), "schedule"),
    (lambda x: pb.is_valid(x), "schedule"),
    (lambda x: pb.fit_memory(x, 2), "schedule"),
    (lambda x: pb.generate("1f1b", x), "inst"),
    (lambda x: pb.generate(x, pb.Instance(P=2, m=2)), "name"),
], ids=["lower_bound", "simulate", "validate", "is_valid", "fit_memory", "generate-inst",
        "generate-name"])
def test_wrong_types_name_the_argument(call, name, bad):
    with pytest.raises((TypeError, ValueError)) as info:
        call(bad)
    assert name in str(info.value) or "unknown schedule" in str(info.value)


@pytest.mark.parametrize("bad", BAD_ARGS[:1] + ["x", 3, [1]])
def test_schedule_from_document_refuses_non_objects(bad):
    with pytest.raises(DocumentError, match="JSON object"):
        pb.schedule_from_document(bad)


COERCED = [  # values that were accepted by coercion before issue 16
    dict(P=True, m=2), dict(P=2, m=True), dict(P=2, m=2, v=True), dict(P=2, m=2, K=True),
    dict(P=2, m=2, K=2.0), dict(P=2.0, m=2), dict(P=2, m=1, stage_to_rank=[0.5, 1]),
    dict(P=2, m=1, stage_to_rank=["0", "1"]), dict(P=2, m=1, stage_to_rank="01"),
    dict(P=2, m=1, stage_to_rank=[True, False]), dict(P=2, m=2, f=True),
    dict(P=2, m=2, f=float("nan")), dict(P=2, m=2, placement=None), dict(P=Fraction(2), m=2),
    dict(P="\u0662", m=2), dict(P=2, m=2, f="1_0"),
]


@pytest.mark.parametrize("kwargs", COERCED, ids=repr)
def test_coerced_values_refused(kwargs):
    with pytest.raises(pb.InstanceError):
        pb.Instance(**kwargs)


def test_accepted_spellings_still_accepted():
    assert pb.Instance(P=np.int64(2), m="3", K="inf", f="3/2", b=Decimal("2.5")).b == Fraction(5, 2)
    assert pb.Instance(P=2, m=2, f=1.5, c="1e-3").c == Fraction(1, 1000)
    assert pb.Instance(P=2, m=1, stage_to_rank=[np.int32(1), 0]).placement == "explicit"


@pytest.mark.parametrize("kwargs, limit", [
    (dict(P=limits.MAX_STAGES + 1, m=1), "MAX_STAGES"),
    (dict(P=2, m=1, v=limits.MAX_STAGES), "MAX_STAGES"),
    (dict(P=1, m=limits.MAX_PAIRS + 1), "MAX_PAIRS"),
    (dict(P=1, m=1, K=limits.MAX_INTEGER + 1), "MAX_INTEGER"),
    (dict(P=1, m=1, f=10 ** 39), "MAX_TIME_UNITS"),
    (dict(P=1, m=1, f=10 ** 41), "MAX_NUMBER_DIGITS"),
    (dict(P=1, m=1, f="1e41"), "MAX_NUMBER_DIGITS"),
    (dict(P=1, m=1, f="1e-41"), "MAX_NUMBER_DIGITS"),
    (dict(P=1, m=1, f=Fraction(1, 10 ** 41)), "MAX_NUMBER_DIGITS"),
])
def test_limits_named(kwargs, limit):
    with pytest.raises(limits.LimitError, match=limit):
        pb.Instance(**kwargs)


def test_parse_json_limits():
    with pytest.raises(limits.LimitError, match="MAX_JSON_DEPTH"):
        parse_json('{"ignored": ' + "[" * (limits.MAX_JSON_DEPTH + 1) + "]" * (
            limits.MAX_JSON_DEPTH + 1) + "}")
    assert isinstance(parse_json("[" * limits.MAX_JSON_DEPTH + "]" * limits.MAX_JSON_DEPTH), list)
    with pytest.raises(limits.LimitError, match="MAX_NUMBER_DIGITS"):
        parse_json("1" * 5000)
    with pytest.raises(DocumentError, match="not a JSON number"):
        parse_json("[Infinity]")
    assert parse_json("1e100000000") == Decimal("1e100000000")  # read, not computed
    # brackets inside strings do not count
    assert parse_json(json.dumps({"a": "[" * 500, "b": "\\\"[[["}))["a"] == "[" * 500


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
                        st.text(max_size=3), kids, max_size=3), max_leaves=30))
def test_parse_json_agrees_with_json_within_limits(value):
    text = json.dumps(value)
    assert parse_json(text) == json.loads(text)


def test_packed_and_careful_readers_agree():
    """The fast array parser of action strings gives the same schedule as the per-action one."""
    from schedules.schedule import actions_to_ops, orders_per_gpu, pack_actions

    orders = {"0": ["0F0", "12B3", "0R10", "4I99", "7W0"], "1": ["0000F0001", "3F4294967295"]}
    per_gpu = orders_per_gpu(orders, 2)
    codes, lengths = pack_actions(per_gpu)
    ops = [op for seq in actions_to_ops(per_gpu) for op in seq]
    assert lengths == [5, 2] and codes.tolist() == [op.code for op in ops]
    for odd in (["0F0", " 1F0"], ["0F0", "1X0"], ["0F0,1F1"], ["F0"], ["0F"], ["0F4294967296"],
                ["\u0660F0"], ["0FF0"], [1]):
        assert pack_actions([odd]) is None, odd
    doc = load_documents(json.dumps({"P": 1, "m": 1, "orders": {"0": ["0F0", "0B0"]}}))[0][0]
    sched = pb.schedule_from_document(doc)
    assert sched == pb.Schedule.from_strings(sched.instance, [[pb.Op(0, "F", 0), pb.Op(0, "B", 0)]])
    assert [str(op) for op in sched.orders[0]] == ["0F0", "0B0"]


def test_lazy_schedule_behaves_like_an_eager_one():
    """A schedule read from a document keeps packed codes until its Ops are asked for."""
    import copy
    import dataclasses
    import pickle

    eager = pb.generate("1f1b", pb.Instance(P=3, m=4))
    lazy = pb.schedule_from_document(pb.document_from_schedule(eager))
    assert "orders" not in lazy.__dict__ and lazy.num_ops == eager.num_ops
    assert pb.simulate(lazy).makespan == pb.simulate(eager).makespan
    assert "orders" not in lazy.__dict__  # simulating needs no Op objects
    for other in (pickle.loads(pickle.dumps(lazy)), copy.deepcopy(lazy),
                  dataclasses.replace(lazy, source="x")):
        assert other == eager and hash(other) == hash(eager)
    assert lazy.orders == eager.orders and lazy.to_strings() == eager.to_strings()
