"""Orders documents (CLI.md, *Orders document*): reading and writing schedules as JSON.

A document carries the instance (``P, m, v, placement`` or ``stage_to_rank``, ``K``), the
``durations`` (``F``, ``B``, ``I``, ``W``; ``B`` defaults to ``I + W``; ``R`` costs ``F``) and
``orders`` (GPU -> list of action strings). Unknown top-level keys are ignored.
Additions: a duration may be a list with one number per stage, ``comm`` (or ``c``) is the
communication delay, ``memory`` the bytes model (:mod:`schedules.memory`).

>>> doc = {"P": 1, "m": 1, "durations": {"F": 1, "B": 2}, "orders": {"0": ["0F0", "0B0"]}}
>>> sched = schedule_from_document(doc)
>>> document_from_schedule(sched)["orders"]
{'0': ['0F0', '0B0']}
"""

from __future__ import annotations

import json
from typing import Any

from .instance import Instance, InstanceError, durations_json, fraction_json, to_fraction
from .memory import MemoryModelError, memory_from_json
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
    kwargs.update(durations_from_document(durations))
    c = comm_from_document(doc)
    if c is not None:
        kwargs["c"] = c
    if doc.get("memory") is not None:
        kwargs["memory"] = memory_from_document(doc["memory"])
    return Instance(**kwargs)


def _duration_entry(value, key: str):
    """``durations.<key>``: a number, or a list with one number per stage (kept as a list;
    :class:`Instance` checks its length against ``S``)."""
    if isinstance(value, list):
        if not value:
            raise DocumentError(f"durations.{key} is an empty list; give one number per stage")
        return [to_fraction(x, f"durations.{key}[{s}]") for s, x in enumerate(value)]
    if isinstance(value, (dict, tuple)):
        raise DocumentError(f"durations.{key} must be a number or a list with one number per "
                            f"stage, got {value!r}")
    return to_fraction(value, f"durations.{key}")


def durations_from_document(durations: dict) -> dict:
    """Instance keyword arguments ``f``, ``b``, ``b_I``, ``b_W`` from a ``durations`` object.

    Each of ``F B I W`` may be a number or a per-stage list (CLI.md additions); ``B`` defaults to
    ``I + W`` (split) or 2 (fused); ``R``, if given, must equal ``F`` (a recompute repeats the
    forward), stage by stage.
    """
    parsed = {k: _duration_entry(v, k) for k, v in durations.items()}
    f = parsed.get("F", 1)
    if "R" in parsed and parsed["R"] != f:
        raise DocumentError("durations.R must equal durations.F (a recompute repeats the forward)")
    out = {"f": f}
    if "I" in parsed or "W" in parsed:
        if "I" not in parsed or "W" not in parsed:
            raise DocumentError("split durations need both 'I' and 'W'")
        out["b_I"], out["b_W"] = parsed["I"], parsed["W"]
        if "B" in parsed:
            out["b"] = parsed["B"]
    else:
        out["b"] = parsed.get("B", 2)
    return out


def comm_from_document(doc: dict):
    """The communication delay ``c``: key ``comm`` (CLI.md additions) or ``c``; None if absent.
    Both given and different is an error."""
    have = [k for k in ("comm", "c") if doc.get(k) is not None]
    if not have:
        return None
    values = [to_fraction(doc[k], k) for k in have]
    if len(set(values)) > 1:
        raise DocumentError(f"'comm' = {values[0]} and 'c' = {values[1]} disagree")
    return values[0]


def memory_from_document(obj):
    """The ``memory`` object (CLI.md additions) as a :class:`schedules.memory.MemoryModel`."""
    try:
        return memory_from_json(obj)
    except MemoryModelError as exc:
        raise DocumentError(str(exc)) from None


def schedule_from_document(doc: dict) -> Schedule:
    """Read one orders document into a :class:`Schedule` (raises DocumentError, InstanceError
    or ScheduleError with a message naming the problem)."""
    inst = instance_from_document(doc)
    if "orders" not in doc:
        raise DocumentError("orders document is missing 'orders'")
    return Schedule.from_strings(inst, doc["orders"], source=str(doc.get("source", "")))


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
    durations = {"F": durations_json(inst.f), "B": durations_json(inst.b)}
    if inst.split:
        durations["I"] = durations_json(inst.b_I)
        durations["W"] = durations_json(inst.b_W)
    doc["durations"] = durations
    if inst.c:
        doc["comm"] = fraction_json(inst.c)
    if inst.memory is not None:
        doc["memory"] = inst.memory.to_json()
    if schedule.source and "source" not in extra:
        doc["source"] = schedule.source
    doc.update(extra)
    doc["orders"] = schedule.to_strings()
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


INPUT_ERRORS = (DocumentError, InstanceError, ScheduleError, MemoryModelError)
"""Exceptions that mean bad input (exit 2 in the CLI)."""
