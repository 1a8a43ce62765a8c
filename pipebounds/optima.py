"""The table of independently proven optima, ``pipebounds/data/optima.jsonl``: its one reader.

The table ships inside the package (read with :mod:`importlib.resources`), so a wheel install
certifies the same instances as a checkout. Each line is one solve of one instance (written by
``tools/optima_table.py``): the instance's keys (as in ``Instance.to_dict``), ``opt`` (the
optimum, or the best makespan when not proven), ``status`` and ``independent`` (true when the
engine proved it without the theory under test, ``use_theory=False``). Later lines of the same
instance supersede earlier ones; the readers above this module decide what to do with that.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

RESOURCE = ("data", "optima.jsonl")
"""Where the table lies inside the ``pipebounds`` package."""


def optima_text() -> str:
    """The table's text ('' when the package was built without it)."""
    node = resources.files("pipebounds").joinpath(*RESOURCE)
    return node.read_text() if node.is_file() else ""


@lru_cache(maxsize=1)
def optima_rows() -> tuple[dict, ...]:
    """Every row of the table, in file order (read and parsed once per process)."""
    return tuple(json.loads(line) for line in optima_text().splitlines() if line.strip())


def independent_rows() -> tuple[dict, ...]:
    """The rows proven independently of the theory that carry a makespan (``independent`` is
    true and ``opt`` is set), in file order."""
    return tuple(r for r in optima_rows() if r.get("independent") is True and r.get("opt") is not None)
