"""Grid files: which instances a sweep visits, and with which task options.

A grid is a JSON object. ``instances`` lists instance objects (CLI.md keys) explicitly;
otherwise every other key of ``product`` takes a list and the grid is their product:

.. code-block:: json

    {"product": {"P": [2, 4], "m_per_P": [1, 2], "K": [1, null], "v": [1, 2],
                 "placement": ["looped"], "durations": [{"f": 1, "b": 2},
                                                        {"f": 1, "b_input": 1, "b_weight": 1}]},
     "options": {"time_limit": 5}}

``m_per_P`` gives ``m = m_per_P * P`` (the atlas's ``m in {P, 2P, 4P, 8P}``); at ``v = 1``
the placement is dropped (both are the identity there), so the product does not repeat work;
``durations`` entries are merged into the instance object; ``options`` go to the task unchanged (for example
``families``, ``time_limit``, ``Ks``). An :class:`Item` is one instance object and the task
options; its ``key`` is a hash of both and of the task name, so the same work has the same key
in every run (what ``--resume`` relies on).

>>> items = expand({"product": {"P": [2, 4], "m_per_P": [1, 2]}}, "bound")
>>> [(it.params["instance"]["P"], it.params["instance"]["m"]) for it in items]
[(2, 2), (2, 4), (4, 4), (4, 8)]
>>> len({it.key for it in items})
4
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import Any
from schedules.errors import InputError

from schedules.limits import MAX_GRID_ITEMS, limit_message

PRODUCT_KEYS = ("P", "m", "m_per_P", "K", "v", "placement", "f", "b", "b_input", "b_weight", "c",
                "durations")


class GridError(InputError):
    """A grid file that cannot be expanded; the message names the key."""


_WHOLE_KEYS = ("P", "m", "m_per_P", "v")
_NUMBER_KEYS = ("f", "b", "b_input", "b_weight", "c")


def _check_value(key: str, value, where: str) -> None:
    """GridError unless ``value`` is a possible value of the grid key ``key``: whole numbers
    (JSON integers, not ``true`` nor ``"2"``) for ``P, m, m_per_P, v``; a whole number, null or
    ``"inf"`` for ``K``; a number or ``"p/q"`` for durations; a name for ``placement``. So a
    product never multiplies strings and the work never starts on a value it cannot use."""
    from schedules.numbers import read_fraction, read_limit

    try:
        if key in _WHOLE_KEYS:
            if type(value) is not int or value < 1:
                raise ValueError(f"must be a whole number >= 1 (a JSON integer), got "
                                 f"{json.dumps(value)[:60]}")
        elif key == "K":
            if not (value is None or isinstance(value, str)) and type(value) is not int:
                raise ValueError(f"must be a whole number >= 1, null or \"inf\", got "
                                 f"{json.dumps(value)[:60]}")
            read_limit(value, "K")
        elif key in _NUMBER_KEYS:
            read_fraction(value, key)
        elif key == "placement":
            if not isinstance(value, str):
                raise ValueError(f"must be a placement name, got {json.dumps(value)[:60]}")
        elif key == "durations":
            if not isinstance(value, dict):
                raise ValueError("each entry must be an object such as {\"f\": 1, \"b\": 2}")
            for k, x in value.items():
                if k not in _NUMBER_KEYS:
                    raise ValueError(f"unknown duration key {k[:40]!r}; known: "
                                     f"{', '.join(_NUMBER_KEYS)}")
                _check_value(k, x, f"{where}.{k}")
    except ValueError as exc:
        text = str(exc)
        raise GridError(f"{where}: {text}" if not text.startswith(where) else text) from None


def _check_options(options: dict) -> None:
    """GridError for a task option of the wrong type (``time_limit`` seconds > 0, ``Ks`` a list
    of whole numbers, ``families`` a list of names, ``polish`` a boolean, ``engine`` a name)."""
    from schedules.numbers import read_seconds

    try:
        if "time_limit" in options:
            if isinstance(options["time_limit"], bool):
                raise ValueError("must be a number of seconds, got a boolean")
            read_seconds(options["time_limit"], "time_limit")
        if options.get("Ks") is not None:
            Ks = options["Ks"]
            if not isinstance(Ks, list) or not all(type(K) is int and K >= 1 for K in Ks):
                raise ValueError("Ks must be a list of whole numbers >= 1")
        if options.get("families") is not None:
            fam = options["families"]
            if not isinstance(fam, list) or not all(isinstance(f, str) for f in fam):
                raise ValueError("families must be a list of family names")
        if "polish" in options and not isinstance(options["polish"], bool):
            raise ValueError("polish must be true or false")
        if "engine" in options and not isinstance(options["engine"], str):
            raise ValueError("engine must be an engine name")
    except ValueError as exc:
        raise GridError(f"options: {exc}") from None


@dataclass(frozen=True)
class Item:
    """One unit of sweep work: ``task`` applied to ``params`` (``instance`` and options)."""

    task: str
    params: dict
    key: str


def item_key(task: str, params: dict) -> str:
    """A stable hash of the task and its parameters (canonical JSON, sorted keys)."""
    text = json.dumps([task, params], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _product(spec: dict) -> list[dict]:
    for key, values in spec.items():
        if key not in PRODUCT_KEYS:
            raise GridError(f"unknown grid key {key!r}; known: {', '.join(PRODUCT_KEYS)}")
        if not isinstance(values, list) or not values:
            raise GridError(f"grid key {key!r} must be a non-empty list")
    if "m" in spec and "m_per_P" in spec:
        raise GridError("give either m or m_per_P, not both")
    size = 1
    for values in spec.values():
        size *= len(values)
        if size > MAX_GRID_ITEMS:  # before any value is checked or any item built
            raise GridError(limit_message("MAX_GRID_ITEMS", f"more than {size - 1}",
                                          "items of the product"))
    for key, values in spec.items():
        for k, value in enumerate(values):
            _check_value(key, value, f"product.{key}[{k}]")
    keys = list(spec)
    out = []
    for combo in itertools.product(*(spec[k] for k in keys)):
        inst: dict[str, Any] = {}
        for k, val in zip(keys, combo):
            if k == "durations":
                if not isinstance(val, dict):
                    raise GridError("each durations entry must be an object such as {\"f\": 1, \"b\": 2}")
                inst.update(val)
            elif k == "m_per_P":
                inst["m_per_P"] = val
            else:
                inst[k] = val
        if "m_per_P" in inst:
            per = inst.pop("m_per_P")
            inst["m"] = per * inst.get("P", 1)
        if inst.get("v", 1) == 1:
            inst.pop("placement", None)  # both placements are the identity at v = 1 (MODEL.md)
        out.append(inst)
    return out


def expand(grid: dict, task: str) -> list[Item]:
    """The items of ``grid`` for ``task``, in grid order (duplicates dropped)."""
    if not isinstance(grid, dict):
        raise GridError("a grid must be a JSON object with 'product' or 'instances'")
    unknown = set(grid) - {"product", "instances", "options", "name", "description"}
    if unknown:
        raise GridError(f"unknown top-level grid key {sorted(unknown)[0]!r}")
    if ("product" in grid) == ("instances" in grid):
        raise GridError("a grid needs exactly one of 'product' and 'instances'")
    options = grid.get("options", {})
    if not isinstance(options, dict):
        raise GridError("'options' must be an object")
    _check_options(options)
    if "instances" in grid:
        instances = grid["instances"]
        if not isinstance(instances, list) or not all(isinstance(x, dict) for x in instances):
            raise GridError("'instances' must be a list of instance objects")
        if len(instances) > MAX_GRID_ITEMS:
            raise GridError(limit_message("MAX_GRID_ITEMS", len(instances), "instances listed"))
    else:
        instances = _product(grid["product"])
    items, seen = [], set()
    for inst in instances:
        params = {"instance": inst, **options}
        key = item_key(task, params)
        if key not in seen:
            seen.add(key)
            items.append(Item(task, params, key))
    return items


def load_grid(path: str) -> dict:
    """Read a grid file (JSON object), or raise :class:`GridError` naming the problem."""
    from schedules.io import DocumentError, decode_text, parse_json, read_file

    try:
        return parse_json(decode_text(read_file(path, f"grid {path}"), f"grid {path}"),
                          f"grid {path}", decimals=False)
    except OSError as exc:
        raise GridError(f"cannot read grid {path}: {exc.strerror}") from None
    except DocumentError as exc:  # not UTF-8, not JSON, beyond a limit (docs/reliability.md)
        raise GridError(str(exc)) from None
