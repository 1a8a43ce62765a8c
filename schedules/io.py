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
import re
from decimal import Decimal
from typing import Any, Callable

from .limits import (DOCS, LimitError, MAX_DOCUMENTS, MAX_INPUT_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES,
                     MAX_NUMBER_DIGITS, limit_message)
from .instance import Instance, InstanceError, durations_json, fraction_json, to_fraction
from .memory import MemoryModelError, memory_from_json
from .ops import OpError
from .schedule import Schedule, ScheduleError, comms_problem
from .errors import InputError


class DocumentError(InputError):
    """A document that is not an orders document; the message names the key or value."""


class DocumentLimitError(DocumentError, LimitError):
    """A JSON input beyond a limit of :mod:`schedules.limits` (size, nesting, digits)."""


# ------------------------------------------------------------------------------- text and JSON
def read_capped(fh, where: str = "input") -> bytes:
    """Everything the binary file ``fh`` holds, read in 1 MiB chunks and refused (a
    :class:`DocumentLimitError` naming ``where``) as soon as it passes ``MAX_INPUT_BYTES``: an
    endless stream costs the limit, not the stream."""
    chunks, total = [], 0
    while True:
        chunk = fh.read(min(1 << 20, MAX_INPUT_BYTES + 1 - total))
        if not chunk:
            break
        if isinstance(chunk, str):  # a text stream (tests replace stdin)
            chunk = chunk.encode("utf-8", "surrogatepass")
        total += len(chunk)
        chunks.append(chunk)
        if total > MAX_INPUT_BYTES:
            raise DocumentLimitError(limit_message("MAX_INPUT_BYTES", f"more than {MAX_INPUT_BYTES}",
                                                   f"{where}: size in bytes"))
    return b"".join(chunks)


def read_file(path: str, where: str | None = None) -> bytes:
    """The bytes of the file ``path`` through :func:`read_capped` (OSError as ``open`` raises)."""
    with open(path, "rb") as fh:
        return read_capped(fh, where or path)


def decode_text(data: bytes, where: str = "input") -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark is dropped); invalid bytes give a
    :class:`DocumentError` naming the offset."""
    if len(data) > MAX_INPUT_BYTES:
        raise DocumentLimitError(limit_message("MAX_INPUT_BYTES", len(data),
                                                      f"{where}: size in bytes"))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{where} is not UTF-8 text: {exc.reason} (byte 0x{data[exc.start]:02x}"
                            f" at offset {exc.start})") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def printable_text(text: str) -> str:
    """``text`` with every lone surrogate (``"\\ud800"`` in JSON, an undecodable byte of a
    command-line argument) replaced by U+FFFD, so it can be written as UTF-8 anywhere (a title, a
    file, standard output). Other text is returned as it is.

    >>> printable_text("a\\ud800b")
    'a\\ufffdb'
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def _json_int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > MAX_NUMBER_DIGITS:
        raise DocumentLimitError(f"a JSON integer with {digits} digits is above the limit "
                                 f"MAX_NUMBER_DIGITS = {MAX_NUMBER_DIGITS} ({DOCS})")
    return int(text)


def _json_constant(text: str):
    raise DocumentError(f"{text} is not a JSON number")


def _depth_limit(depth) -> DocumentLimitError:
    return DocumentLimitError(limit_message("MAX_JSON_DEPTH", depth, "JSON nesting depth"))


def _check_depth(text: str, data: Any) -> None:
    """Raise when arrays/objects of ``data`` (parsed from ``text``) nest deeper than
    MAX_JSON_DEPTH. Fewer brackets in the text than the limit settle it at once; otherwise an
    iterative walk that looks only into containers holding containers."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        items = node.values() if type(node) is dict else node
        kinds = set(map(type, items))
        if list in kinds or dict in kinds:
            if depth + 1 > MAX_JSON_DEPTH:
                raise _depth_limit(depth + 1)
            stack.extend((x, depth + 1) for x in items if type(x) is list or type(x) is dict)


def _json_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise DocumentError(f"{text[:60]} is beyond the range of a float")
    return value


def parse_json(text: str, where: str = "", decimals: bool = True) -> Any:
    """``json.loads`` with the limits of :mod:`schedules.limits`: nesting depth (ignored keys
    included), digits of integers, no NaN/Infinity; numbers with a fraction or an exponent are
    read exactly as :class:`decimal.Decimal` (so ``1e100000000`` costs nothing until a limit
    refuses it; with ``decimals=False`` they are floats, for inputs that are not exact numbers).
    Errors are :class:`DocumentError` with one-line messages."""
    prefix = f"{where}: " if where else ""
    if not isinstance(text, str):
        raise TypeError(f"parse_json: text must be a str, got {type(text).__name__}")
    commas = text.count(",")
    if commas >= MAX_JSON_VALUES:
        raise DocumentLimitError(prefix + limit_message(
            "MAX_JSON_VALUES", f"more than {commas}", "JSON values (commas in the text)"))
    try:
        data = json.loads(text, parse_int=_json_int, parse_float=Decimal if decimals else _json_float,
                          parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"{prefix}malformed JSON: {exc.msg} at line {exc.lineno} column "
                            f"{exc.colno}") from None
    except RecursionError:
        raise DocumentLimitError(prefix + limit_message(
            "MAX_JSON_DEPTH", "more than 900", "JSON nesting depth")) from None
    except DocumentError as exc:
        raise type(exc)(prefix + str(exc)) from None
    if type(data) is list or type(data) is dict:
        _check_depth(text, data)
    return data


# ------------------------------------------------------------------------ document -> instance
def _plain(key: str):
    def read(doc: dict, kwargs: dict) -> None:
        kwargs[key] = doc[key]
    return read


def _read_stage_to_rank(doc: dict, kwargs: dict) -> None:
    if doc["stage_to_rank"] is None:
        return
    if not isinstance(doc["stage_to_rank"], list):
        raise DocumentError("'stage_to_rank' must be a list with one GPU per stage")
    kwargs["stage_to_rank"] = doc["stage_to_rank"]


def _read_placement(doc: dict, kwargs: dict) -> None:
    if doc["placement"] is not None:
        kwargs["placement"] = doc["placement"]


def _read_durations(doc: dict, kwargs: dict) -> None:
    durations = doc["durations"]
    if durations is None:
        return
    if not isinstance(durations, dict):
        raise DocumentError("'durations' must be an object such as {\"F\": 1, \"B\": 2}")
    unknown = set(durations) - {"F", "B", "I", "W", "R", "F&B", "F&I"}
    if unknown:
        raise DocumentError(f"unknown op kind(s) {sorted(unknown)[:5]} in 'durations'; "
                            f"ops are F B I W R, and F&B, F&I for overlapped ops"[:200])
    kwargs.update(durations_from_document(durations))


def _read_comm(doc: dict, kwargs: dict) -> None:
    c = comm_from_document(doc)
    if c is not None:
        kwargs["c"] = c


def _read_memory(doc: dict, kwargs: dict) -> None:
    if doc["memory"] is not None:
        kwargs["memory"] = memory_from_document(doc["memory"])


DOCUMENT_FIELDS: dict[str, Callable[[dict, dict], None]] = {
    "P": _plain("P"), "m": _plain("m"), "K": _plain("K"), "v": _plain("v"),
    "placement": _read_placement, "stage_to_rank": _read_stage_to_rank,
    "durations": _read_durations, "c": _read_comm, "comm": _read_comm, "memory": _read_memory,
    "directions": _plain("directions"),
}
"""The instance keys of an orders document and how each one sets :class:`Instance` arguments,
in this order (a new key is one entry here). Other top-level keys are ignored (CLI.md)."""

REQUIRED_KEYS = ("P", "m")


def instance_from_document(doc: dict) -> Instance:
    """The :class:`Instance` an orders document describes."""
    if not isinstance(doc, dict):
        raise DocumentError(f"an orders document must be a JSON object, got {type(doc).__name__}")
    for key in REQUIRED_KEYS:
        if key not in doc:
            raise DocumentError(f"orders document is missing {key!r}")
    kwargs: dict[str, Any] = {}
    for key, read in DOCUMENT_FIELDS.items():
        if key in doc:
            read(doc, kwargs)
    if "stage_to_rank" in kwargs:
        kwargs.pop("v", None)
        kwargs.pop("placement", None)
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
    forward), stage by stage. ``F&B`` and ``F&I`` (MODEL.md third-round extensions) are the
    durations ``d_FB``, ``d_FI`` of overlapped ops (per stage: by the forward part's stage).
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
    if "F&B" in parsed:
        out["d_FB"] = parsed["F&B"]
    if "F&I" in parsed:
        out["d_FI"] = parsed["F&I"]
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
    or ScheduleError with a message naming the problem). An op naming a stage ``>= S`` or a
    microbatch ``>= m`` is malformed input (DocumentError naming the first); every other fault
    of the orders is the validator's (an invalid schedule)."""
    inst = instance_from_document(doc)
    if "orders" not in doc:
        raise DocumentError("orders document is missing 'orders'")
    source = doc.get("source", "")
    source = printable_text(source if isinstance(source, str)
                            else json.dumps(source, default=str)[:200])
    sched = Schedule.from_strings(inst, doc["orders"], source=source)
    outside = sched.first_out_of_range()
    if outside is not None:  # names a stage or microbatch the instance does not have
        gpu, op = outside
        what = (f"stage {op.stage}, outside 0..{inst.S - 1} (S = v·P = {inst.S})"
                if op.stage >= inst.S else
                f"microbatch {op.microbatch}, outside 0..{inst.m - 1} (m = {inst.m})")
        raise DocumentError(f"GPU {gpu}: {op} names {what}")
    if doc.get("comms") is not None:  # the send/receive order (schedules/comms.py)
        sched = Schedule(inst, sched.orders, sched.source, doc["comms"], sched.overlaps)
        problem = comms_problem(sched)
        if problem is not None:
            raise DocumentError(f"comms: {problem}")
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
    durations = {"F": durations_json(inst.f), "B": durations_json(inst.b)}
    if inst.split:
        durations["I"] = durations_json(inst.b_I)
        durations["W"] = durations_json(inst.b_W)
    if inst.d_FB is not None:
        durations["F&B"] = durations_json(inst.d_FB)
    if inst.d_FI is not None:
        durations["F&I"] = durations_json(inst.d_FI)
    doc["durations"] = durations
    if inst.c:
        doc["comm"] = fraction_json(inst.c)
    if inst.memory is not None:
        doc["memory"] = inst.memory.to_json()
    if inst.directions != 1:  # MODEL.md, Directions: absent means 1
        doc["directions"] = inst.directions
    if schedule.source and "source" not in extra:
        doc["source"] = schedule.source
    doc.update(extra)
    doc["orders"] = schedule.to_strings()
    if schedule.comms is not None:
        doc["comms"] = schedule.comms_strings()
    return doc


def unwrap_document(obj: Any) -> Any:
    """The orders document ``obj`` wraps under ``schedule`` (what ``solve``, ``remat``,
    ``synthesize`` and ``best --json`` print, CLI.md), or ``obj`` itself when it is not such a
    wrapper (an object with ``orders`` is a document, whatever else it holds).

    >>> unwrap_document({"status": "optimal", "schedule": {"P": 1, "m": 1, "orders": {}}})
    {'P': 1, 'm': 1, 'orders': {}}
    """
    if type(obj) is not dict or "orders" in obj or "schedule" not in obj:
        return obj
    inner = obj["schedule"]
    if type(inner) is not dict:
        raise DocumentError(f"'schedule' holds no orders document (got "
                            f"{'null' if inner is None else type(inner).__name__}): nothing "
                            f"to read")
    return inner


def load_documents(text: str) -> tuple[list[dict], bool]:
    """Parse JSON text holding one document or a list of them; returns (documents, was_list).
    An object wrapping a document under ``schedule`` stands for that document
    (:func:`unwrap_document`)."""
    data = parse_json(text)
    if isinstance(data, list):
        if len(data) > MAX_DOCUMENTS:
            raise DocumentLimitError(limit_message("MAX_DOCUMENTS", len(data),
                                                   "documents in the input"))
        return [unwrap_document(d) for d in data], True
    return [unwrap_document(data)], False


def read_schedule(path: str) -> Schedule:
    """Read one orders document from a file."""
    docs, was_list = load_documents(decode_text(read_file(path), path))
    if was_list:
        if len(docs) != 1:
            raise DocumentError(f"{path} holds {len(docs)} documents, expected one")
    return schedule_from_document(docs[0])


def write_schedule(schedule: Schedule, path: str, **extra) -> None:
    """Write ``schedule`` as an orders document."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document_from_schedule(schedule, **extra), fh)
        fh.write("\n")


INPUT_ERRORS = (DocumentError, InstanceError, ScheduleError, OpError, LimitError,
                MemoryModelError)
"""Exceptions that mean bad input (exit 2 in the CLI)."""
