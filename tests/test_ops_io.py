"""Ops, action strings and orders documents."""

import json

import pytest

from schedules import (DocumentError, Instance, Op, OpError, Schedule, ScheduleError,
                       document_from_schedule, schedule_from_document)
from schedules.io import load_documents


def test_action_round_trip():
    for text in ["0F0", "12B7", "3I10", "1W2", "5R0"]:
        assert str(Op.parse(text)) == text
    assert Op.parse(" 3F0 ") == Op(3, "F", 0)


@pytest.mark.parametrize("text, message", [
    ("3X0", "unknown op 'X'"), ("F0", "malformed action"), ("3F", "malformed action"),
    ("-1F0", "malformed action"), ("3SEND_F0", "unknown op 'SEND_F'"), (7, "must be a string")])
def test_bad_actions(text, message):
    with pytest.raises(OpError, match=message):
        Op.parse(text)


def test_document_round_trip():
    inst = Instance(P=2, m=1, K=1, f="1/2", b_I=1, b_W=1)
    s = Schedule.from_strings(inst, {0: ["0F0", "0I0", "0W0"], 1: ["1F0", "1I0", "1W0"]},
                              source="hand")
    doc = json.loads(json.dumps(document_from_schedule(s)))
    assert doc["durations"] == {"F": "1/2", "B": 2, "I": 1, "W": 1}
    assert schedule_from_document(doc) == s


def test_document_orders_as_list_and_stage_to_rank():
    doc = {"P": 2, "m": 1, "stage_to_rank": [1, 0], "orders": [["1F0", "1B0"], ["0F0", "0B0"]]}
    s = schedule_from_document(doc)
    assert s.instance.stage_to_rank == (1, 0) and str(s.orders[1][0]) == "0F0"


@pytest.mark.parametrize("doc, message", [
    ({"m": 1, "orders": {}}, "missing 'P'"),
    ({"P": 1, "m": 1}, "missing 'orders'"),
    ({"P": 1, "m": 1, "orders": {"3": []}}, "GPU 3, outside"),
    ({"P": 1, "m": 1, "orders": {"0": "0F0"}}, "must be a list"),
    ({"P": 1, "m": 1, "orders": {"0": ["0Q0"]}}, "unknown op 'Q'"),
    ({"P": 1, "m": 1, "durations": {"F": 0}, "orders": {}}, "f .* must be > 0"),
    ({"P": 1, "m": 1, "durations": {"X": 1}, "orders": {}}, "unknown op kind"),
    ({"P": 1, "m": 1, "durations": {"I": 1}, "orders": {}}, "both 'I' and 'W'"),
    ({"P": 1, "m": 1, "K": 0, "orders": {}}, "K must be >= 1"),
    ([1], "must be a JSON object"),
])
def test_bad_documents(doc, message):
    with pytest.raises((DocumentError, ScheduleError, ValueError), match=message):
        schedule_from_document(doc)


def test_malformed_json():
    with pytest.raises(DocumentError, match="malformed JSON"):
        load_documents("{not json")
