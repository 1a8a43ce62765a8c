"""The checked ranges: instances where the lower bound was confirmed equal to the optimum by
exact search independent of the bound (basis ``checked`` of :mod:`pipebounds.certify`).

Scaling every duration by ``c > 0`` scales every makespan by ``c``, so a range stated on a grid
of durations covers every instance whose durations are proportional to a tuple of the grid:
``(f, b)`` is in the fused range when ``f : b = a : c`` for some ``a, c`` of
:data:`SINGLE_SLOT_CHECKED`'s durations, i.e. ``c f = a b``. Each :class:`CheckedRange` has the
scalar predicate (an :class:`~schedules.instance.Instance`) and its vectorised twin (the rows
of :class:`bounds.batch.Rows`, for ``bound --batch``), both read from the same constants;
tests/test_certify.py checks that they agree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from bounds.batch import Rows
from schedules.instance import Instance

SINGLE_SLOT_CHECKED: dict = {"P": 5, "m": 8, "durations": (1, 2, 3, 4, 5)}
"""T3 = OPT, fused ``K = 1``, ``v = 1``: ``P <= 5, m <= 8``, every ratio ``f : b`` of two
durations of the grid (docs/theory.md section 5; 637 rows of pipebounds/data/optima.jsonl)."""

SPLIT_SINGLE_SLOT_CHECKED: dict = {"P": 4, "m": 6, "durations": (1, 2, 3)}
"""T3's split form = OPT, ``K = 1``, ``v = 1``: ``P <= 4, m <= 6``, every ratio
``f : b_I : b_W`` of the grid (docs/theory.md section 6)."""


SPLIT_NONBINDING_CHECKED: dict = {"P": 8, "m": 16, "durations": (1, 2, 3, 4)}
"""``max(S1, S2)`` = OPT, split, ``v = 1``, memory not binding (``K`` None or ``>= m``), no
delay: ``P <= 8, m <= 16``, every ratio ``f : b_I : b_W`` of the grid (S-nb, docs/theory.md
section 6; 7,168 instances, each by a schedule that reaches the bound:
:func:`pipebounds.constructions.single_wave.split_nonbinding_schedule`)."""


@dataclass(frozen=True)
class CheckedRange:
    """A range of instances on which the bound equals the optimum, confirmed by exact search
    independent of the bound: ``contains`` decides one instance, ``contains_rows`` the same for
    every row of a batch (a bool array); ``check`` names the proofs_checks check that
    re-confirms it (it fails when an instance of the range is missing from
    pipebounds/data/optima.jsonl or has LB != OPT)."""

    id: str
    theorem: str
    description: str
    contains: Callable[[Instance], bool]
    contains_rows: Callable[[Rows], np.ndarray]
    check: str


def _proportional(durs: tuple, grid) -> bool:
    """``durs`` is a positive multiple of some tuple of grid values (same length):
    ``t_j d_0 = t_0 d_j`` for every ``j``, for some ``t`` in ``grid^len(durs)``."""
    return any(all(g * durs[0] == t[0] * d_ for g, d_ in zip(t, durs))
               for t in itertools.product(grid, repeat=len(durs)))


def _proportional_rows(durs: tuple, grid) -> np.ndarray:
    """:func:`_proportional` elementwise: ``durs`` a tuple of int64 arrays (one per duration)."""
    ok = np.zeros(durs[0].shape, bool)
    for t in itertools.product(grid, repeat=len(durs)):
        hit = np.ones(durs[0].shape, bool)
        for g, d_ in zip(t, durs):
            hit &= g * durs[0] == t[0] * d_
        ok |= hit
    return ok


def _in_grid(inst: Instance, durs: tuple, rng: dict) -> bool:
    """``inst`` within the sizes of the range ``rng`` (``P`` and ``m`` at most its own) and
    its durations ``durs`` proportional to a tuple of its grid (:func:`_proportional`)."""
    return inst.P <= rng["P"] and inst.m <= rng["m"] and _proportional(durs, rng["durations"])


def _in_grid_rows(r: Rows, rows: np.ndarray, durs: tuple, rng: dict) -> np.ndarray:
    """:func:`_in_grid` of every row of ``r`` where the mask ``rows`` holds (False elsewhere);
    ``durs``: the rows' duration arrays. The durations' test runs on the rows inside the sizes
    only."""
    out = np.zeros(r.P.shape, bool)
    idx = np.flatnonzero(rows & (r.P <= rng["P"]) & (r.m <= rng["m"]))
    if idx.size:
        out[idx] = _proportional_rows(tuple(d[idx] for d in durs), rng["durations"])
    return out


def single_slot_checked(inst: Instance) -> bool:
    """``inst`` lies in the range where T3 (fused or split form) = OPT was confirmed."""
    if inst.K != 1 or inst.c or inst.v != 1:
        return False
    if inst.split:
        return _in_grid(inst, (inst.f, inst.b_I, inst.b_W), SPLIT_SINGLE_SLOT_CHECKED)
    return _in_grid(inst, (inst.f, inst.b), SINGLE_SLOT_CHECKED)


def single_slot_checked_rows(r: Rows) -> np.ndarray:
    """:func:`single_slot_checked` of every row of ``r`` (integer durations, no delay)."""
    base = (r.v == 1) & (r.K == 1)
    return (_in_grid_rows(r, base & ~r.split, (r.f, r.b), SINGLE_SLOT_CHECKED)
            | _in_grid_rows(r, base & r.split, (r.f, r.bI, r.bW), SPLIT_SINGLE_SLOT_CHECKED))


def split_nonbinding_checked(inst: Instance) -> bool:
    """``inst`` lies in the range where ``max(S1, S2)`` = OPT was confirmed (S-nb)."""
    if not inst.split or inst.c or inst.v != 1 or (inst.K is not None and inst.K < inst.m):
        return False
    return _in_grid(inst, (inst.f, inst.b_I, inst.b_W), SPLIT_NONBINDING_CHECKED)


def split_nonbinding_checked_rows(r: Rows) -> np.ndarray:
    """:func:`split_nonbinding_checked` of every row of ``r`` (integer durations, no delay)."""
    rows = (r.v == 1) & r.split & ((r.K == 0) | (r.K >= r.m))
    return _in_grid_rows(r, rows, (r.f, r.bI, r.bW), SPLIT_NONBINDING_CHECKED)


CHECKED_RANGES: tuple[CheckedRange, ...] = (
    CheckedRange("T3-checked", "T3",
                 "K = 1, v = 1, fused: P <= 5, m <= 8, f : b with f, b in {1..5}; split: "
                 "P <= 4, m <= 6, f : b_I : b_W with each in {1, 2, 3}",
                 single_slot_checked, single_slot_checked_rows,
                 "proofs_checks.single_wave.single_slot_table"),
    CheckedRange("S-nb-checked", "S1",
                 "split, v = 1, K = ∞ or K >= m: P <= 8, m <= 16, f : b_I : b_W with each in "
                 "{1, 2, 3, 4}; max(S1, S2) reached by a schedule on every instance",
                 split_nonbinding_checked, split_nonbinding_checked_rows,
                 "proofs_checks.single_wave.split_nonbinding_certificate"),
)


def checked_range(inst: Instance) -> Optional[CheckedRange]:
    """The checked range containing ``inst``, or None."""
    for rng in CHECKED_RANGES:
        if rng.contains(inst):
            return rng
    return None


def checked_range_rows(r: Rows) -> np.ndarray:
    """Per row of ``r``: the index in :data:`CHECKED_RANGES` of :func:`checked_range` (the
    first range containing it), -1 for none."""
    out = np.full(r.P.shape, -1, np.int64)
    for k, rng in enumerate(CHECKED_RANGES):
        out[(out < 0) & rng.contains_rows(r)] = k
    return out


def checked_rows(r: Rows) -> np.ndarray:
    """Per row of ``r``: it lies in some checked range (:func:`checked_range` is not None)."""
    return checked_range_rows(r) >= 0


__all__ = ["CHECKED_RANGES", "CheckedRange", "SINGLE_SLOT_CHECKED", "SPLIT_NONBINDING_CHECKED",
           "SPLIT_SINGLE_SLOT_CHECKED", "checked_range", "checked_range_rows", "checked_rows",
           "single_slot_checked", "single_slot_checked_rows", "split_nonbinding_checked",
           "split_nonbinding_checked_rows"]
