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

PRODUCT_KEYS = ("P", "m", "m_per_P", "K", "v", "placement", "f", "b", "b_input", "b_weight", "c",
                "durations")


class GridError(InputError):
    """A grid file that cannot be expanded; the message names the key."""


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
    if "instances" in grid:
        instances = grid["instances"]
        if not isinstance(instances, list) or not all(isinstance(x, dict) for x in instances):
            raise GridError("'instances' must be a list of instance objects")
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
    from schedules.io import DocumentError, decode_text, parse_json

    try:
        with open(path, "rb") as fh:
            return parse_json(decode_text(fh.read(), f"grid {path}"), f"grid {path}",
                              decimals=False)
    except OSError as exc:
        raise GridError(f"cannot read grid {path}: {exc.strerror}") from None
    except DocumentError as exc:  # not UTF-8, not JSON, beyond a limit (docs/reliability.md)
        raise GridError(str(exc)) from None
