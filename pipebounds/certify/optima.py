"""The table of independently proven optima, ``pipebounds/data/optima.jsonl``: its one reader and
its lookups (basis ``table`` of :mod:`pipebounds.certify`).

The table ships inside the package (read with :mod:`importlib.resources`), so a wheel install
certifies the same instances as a checkout. Each line is one solve of one instance (written by
``tools/optima_table.py``): the instance's keys (as in ``Instance.to_dict``), ``opt`` (the
optimum, or the best makespan when not proven), ``status`` and ``independent`` (true when the
engine proved it without the theory under test, ``use_theory=False``). Later lines of the same
instance supersede earlier ones.

Lookups: an instance is keyed up to a common factor of its durations (scaling every duration
by ``c`` scales every makespan by ``c``) with ``K >= v m`` read as unconstrained
(:func:`table_key`, :func:`table_optimum`); a batch of integer rows by the integer twin of that
key (:func:`int_key`, :func:`table_optima_rows`).
"""

from __future__ import annotations

import json
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from math import gcd, lcm
from typing import Optional

import numpy as np

from schedules.instance import Instance, placement_stage_to_rank

RESOURCE = ("data", "optima.jsonl")
"""Where the table lies inside the ``pipebounds`` package."""


def optima_text() -> str:
    """The table's text ('' when the package was built without it)."""
    node = resources.files("pipebounds")
    for part in RESOURCE:
        node = node / part
    return node.read_text() if node.is_file() else ""


@lru_cache(maxsize=1)
def optima_rows() -> tuple[dict, ...]:
    """Every row of the table, in file order (read and parsed once per process)."""
    return tuple(json.loads(line) for line in optima_text().splitlines() if line.strip())


def independent_rows() -> tuple[dict, ...]:
    """The rows proven independently of the theory that carry a makespan (``independent`` is
    true and ``opt`` is set), in file order."""
    return tuple(r for r in optima_rows() if r.get("independent") is True and r.get("opt") is not None)


# --------------------------------------------------------------------------- lookups
_TABLE: Optional[dict] = None


def table_key(P: int, m: int, K: Optional[int], stage_to_rank: tuple, f: Fraction,
              b: Fraction, b_I: Optional[Fraction], b_W: Optional[Fraction],
              c: Fraction) -> tuple:
    """The instance up to a common factor of its durations (divided by ``f``), with ``K >= v m``
    read as unconstrained (a GPU never holds more than its ``v m`` activations)."""
    v = len(stage_to_rank) // P
    if K is not None and K >= v * m:
        K = None
    return (P, m, K, stage_to_rank, b / f,
            None if b_I is None else b_I / f, None if b_W is None else b_W / f, c / f)


def _key(inst: Instance) -> tuple:
    return table_key(inst.P, inst.m, inst.K, inst.stage_to_rank, inst.f, inst.b, inst.b_I,
                     inst.b_W, inst.c)


def _number(x) -> Fraction:
    if isinstance(x, str) and x.isdigit():
        x = int(x)
    return Fraction(x) if isinstance(x, int) else Fraction(str(x))


@lru_cache(maxsize=None)
def _placement(P: int, v: int, placement: str) -> tuple[int, ...]:
    return placement_stage_to_rank(P, v, placement)


def _row_key(row: dict) -> tuple[tuple, Fraction]:
    """:func:`table_key` of a table row and its ``f`` (rows are ``Instance.to_dict()``, read
    without building an Instance: the table loads in milliseconds)."""
    P, m, v = row["P"], row["m"], row.get("v", 1)
    s2r = (tuple(row["stage_to_rank"]) if row.get("stage_to_rank") is not None
           else _placement(P, v, row.get("placement") or "looped"))
    f = _number(row.get("f", 1))
    b_I: Optional[Fraction] = None
    b_W: Optional[Fraction] = None
    if row.get("b_input") is not None:  # split
        b_I, b_W = _number(row["b_input"]), _number(row["b_weight"])
        b = b_I + b_W
    else:
        b = _number(row.get("b", 2))
    K = row.get("K")
    K = None if K in (None, "inf") else int(K)
    return table_key(P, m, K, s2r, f, b, b_I, b_W, _number(row.get("c", 0))), f


def optima_table() -> dict:
    """``{table_key: optimum / f}`` of the rows of pipebounds/data/optima.jsonl proven optimal independently
    of the theory (``"status": "optimal"``, ``"independent": true``; the last line of an
    instance wins). Read once per process."""
    global _TABLE
    if _TABLE is None:
        table: dict = {}
        for row in independent_rows():
            key, f = _row_key(row)
            if row.get("status") == "optimal":
                table[key] = _number(row["opt"]) / f
            else:
                table.pop(key, None)
        _TABLE = table
    return _TABLE


_INT_INDEX: Optional[dict] = None


def int_key(P: int, m: int, K: Optional[int], v: int, vshape: bool, f: int, b: int,
            b_I: int, b_W: int) -> tuple:
    """The table key of a named-placement instance with integer durations and no delay, as
    integers (durations divided by their gcd; ``b_I = b_W = 0`` fused; ``K >= v m`` read as
    unconstrained, 0): hashing it is cheap, for batches (:func:`optimum_by_int_key`)."""
    g = gcd(gcd(f, b), gcd(b_I, b_W))
    if K is not None and (K == 0 or K >= v * m):
        K = 0
    return (P, m, K or 0, v, bool(vshape) and v > 1, f // g, b // g, b_I // g, b_W // g), g


def table_sizes() -> set[tuple[int, int]]:
    """The ``(P, m)`` of the instances in pipebounds/data/optima.jsonl (a quick filter before a lookup)."""
    return {(k[0], k[1]) for k in optima_table()}


def optimum_by_int_key(key: tuple, g: int) -> Optional[Fraction]:
    """The table optimum for an :func:`int_key` (``g`` its gcd), or None."""
    global _INT_INDEX
    if _INT_INDEX is None:
        index = {}
        for k, opt in optima_table().items():
            P, m, K, s2r, b, b_I, b_W, c = k
            durs = (Fraction(1), b, b_I or Fraction(0), b_W or Fraction(0))
            if c or len(s2r) % P:
                continue
            v = len(s2r) // P
            named = [pl for pl in ("looped", "vshape") if s2r == _placement(P, v, pl)]
            if not named:
                continue
            u = lcm(*(d.denominator for d in durs))
            ints = [int(d * u) for d in durs]
            ik, gi = int_key(P, m, K, v, named[0] == "vshape", *ints)
            index[ik] = opt * u / gi        # the optimum for durations ints / gi (f = u / gi)
        _INT_INDEX = index
    opt = _INT_INDEX.get(key)
    return None if opt is None else opt * g


def table_optimum(inst: Instance) -> Optional[Fraction]:
    """The optimum of ``inst`` from pipebounds/data/optima.jsonl (scaled to its durations), or None."""
    opt = optima_table().get(_key(inst))
    return None if opt is None else opt * inst.f




def table_optima_rows(cols: np.ndarray, rows) -> dict:
    """``{k: optimum}`` for the rows ``k`` of ``rows`` (indices into ``cols``) whose instance
    has a table optimum; ``cols[k]`` is ``(P, m, K, v, vshape, f, b, b_I, b_W)`` (an int64
    array, ``K`` 0 unconstrained, ``b_I = b_W = 0`` fused: :func:`int_key`'s arguments). Rows
    whose ``(P, m)`` is in no table row are skipped before hashing."""
    rows = np.asarray(rows, dtype=np.int64)
    if not rows.size:
        return {}
    sizes = np.array(sorted(P * (1 << 21) + m for P, m in table_sizes()), dtype=np.int64)
    look = rows[np.isin(cols[rows, 0] * (1 << 21) + cols[rows, 1], sizes)]
    out = {}
    for k, fields in zip(look.tolist(), cols[look].tolist()):
        known = optimum_by_int_key(*int_key(*fields))
        if known is not None:
            out[k] = known
    return out


__all__ = ["RESOURCE", "independent_rows", "int_key", "optima_rows", "optima_table", "optima_text",
           "optimum_by_int_key", "table_key", "table_optima_rows", "table_optimum", "table_sizes"]
