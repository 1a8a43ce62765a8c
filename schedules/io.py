"""Orders documents (CLI.md, *Orders document*): reading and writing schedules as JSON.

A document carries the instance (``P, m, v, placement`` or ``stage_to_rank``, ``K``), the
``durations`` (``F``, ``B``, ``I``, ``W``; ``B`` defaults to ``I + W``; ``R`` costs ``F``) and
``orders`` (GPU -> list of action strings). Unknown top-level keys are ignored.

>>> doc = {"P": 1, "m": 1, "durations": {"F": 1, "B": 2}, "orders": {"0": ["0F0", "0B0"]}}
>>> sched = schedule_from_document(doc)
>>> document_from_schedule(sched)["orders"]
{'0': ['0F0', '0B0']}
"""

from __future__ import annotations

import json
from typing import Any

from .instance import Instance, InstanceError, fraction_json, to_fraction
from .schedule import Schedule, ScheduleError


class DocumentError(ValueError):
    """A document that is not an orders document; the message names the key or value."""


def instance_from_document(doc: dict) -> Instance:
    """The :class:`Instance` an orders document describes."""
    if not isinstance(doc, dict):
        raise DocumentError(f"an orders document must be a JSON object, got {type(doc).__name__}")
    for key in ("P", "m"):
        if key not in doc:
            raise DocumentError(f"orders document is missing {key!r}")
    durations = doc.get("durations", {}) or {}
    if not isinstance(durations, dict):
        raise DocumentError("'durations' must be an object such as {\"F\": 1, \"B\": 2}")
    unknown = set(durations) - {"F", "B", "I", "W", "R"}
    if unknown:
        raise DocumentError(f"unknown op kind(s) {sorted(unknown)} in 'durations'; ops are F B I W R")
    kwargs: dict[str, Any] = {"P": doc["P"], "m": doc["m"], "K": doc.get("K")}
    if doc.get("stage_to_rank") is not None:
        kwargs["stage_to_rank"] = doc["stage_to_rank"]
        if not isinstance(doc["stage_to_rank"], list):
            raise DocumentError("'stage_to_rank' must be a list with one GPU per stage")
    else:
        kwargs["v"] = doc.get("v", 1)
        kwargs["placement"] = doc.get("placement") or "looped"
    f = durations.get("F", 1)
    if "R" in durations and to_fraction(durations["R"], "durations.R") != to_fraction(f, "durations.F"):
        raise DocumentError("durations.R must equal durations.F (a recompute repeats the forward)")
    kwargs["f"] = f
    if "I" in durations or "W" in durations:
        if "I" not in durations or "W" not in durations:
            raise DocumentError("split durations need both 'I' and 'W'")
        kwargs["b_I"], kwargs["b_W"] = durations["I"], durations["W"]
        if "B" in durations:
            kwargs["b"] = durations["B"]
    else:
        kwargs["b"] = durations.get("B", 2)
    if "c" in doc:
        kwargs["c"] = doc["c"]
    return Instance(**kwargs)


def schedule_from_document(doc: dict) -> Schedule:
    """Read one orders document into a :class:`Schedule` (raises DocumentError, InstanceError
    or ScheduleError with a message naming the problem)."""
    inst = instance_from_document(doc)
    if "orders" not in doc:
        raise DocumentError("orders document is missing 'orders'")
    sched = Schedule.from_strings(inst, doc["orders"], source=str(doc.get("source", "")))
    if doc.get("comms") is not None:  # the send/receive order (schedules/comms.py)
        sched = Schedule(inst, sched.orders, sched.source, doc["comms"])
    return sched


def document_from_schedule(schedule: Schedule, **extra) -> dict:
    """The orders document of ``schedule``; ``extra`` keys (``source``, notes) are added."""
    inst = schedule.instance
    doc: dict[str, Any] = {"P": inst.P, "m": inst.m}
    if inst.placement == "explicit":
        doc["stage_to_rank"] = list(inst.stage_to_rank)
    else:
        doc["v"] = inst.v
        doc["placement"] = inst.placement
    doc["K"] = inst.K
    durations = {"F": fraction_json(inst.f), "B": fraction_json(inst.b)}
    if inst.split:
        durations["I"] = fraction_json(inst.b_I)
        durations["W"] = fraction_json(inst.b_W)
    doc["durations"] = durations
    if inst.c:
        doc["c"] = fraction_json(inst.c)
    if schedule.source and "source" not in extra:
        doc["source"] = schedule.source
    doc.update(extra)
    doc["orders"] = schedule.to_strings()
    if schedule.comms is not None:
        doc["comms"] = schedule.comms_strings()
    return doc


def load_documents(text: str) -> tuple[list[dict], bool]:
    """Parse JSON text holding one document or a list of them; returns (documents, was_list)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if isinstance(data, list):
        return data, True
    return [data], False


def read_schedule(path: str) -> Schedule:
    """Read one orders document from a file."""
    with open(path, encoding="utf-8") as fh:
        docs, was_list = load_documents(fh.read())
    if was_list:
        if len(docs) != 1:
            raise DocumentError(f"{path} holds {len(docs)} documents, expected one")
    return schedule_from_document(docs[0])


def write_schedule(schedule: Schedule, path: str, **extra) -> None:
    """Write ``schedule`` as an orders document."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document_from_schedule(schedule, **extra), fh)
        fh.write("\n")


INPUT_ERRORS = (DocumentError, InstanceError, ScheduleError)
"""Exceptions that mean bad input (exit 2 in the CLI)."""
