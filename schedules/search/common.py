"""Helpers shared by the search engines (:mod:`.solve`, :mod:`.cpsat`): the theory's root
bound, rounding to integer time units, and the check of a found schedule. (Their own module so
that the engines do not import each other.)"""

from __future__ import annotations

from fractions import Fraction

from ..instance import Instance
from ..schedule import Schedule
from ..simulate import simulate


def root_lower_bound(inst: Instance) -> Fraction:
    """:func:`bounds.lower_bound` (the theory's bound)."""
    from bounds import lower_bound

    return Fraction(lower_bound(inst).value)


def _ceil_units(x: Fraction, unit: int) -> int:
    return -((-x.numerator * unit) // x.denominator)


def checked(inst: Instance, schedule: Schedule) -> Fraction:
    """The makespan of ``schedule``, asserting it is valid for ``inst``."""
    res = simulate(schedule)
    assert res.valid, f"solver produced an invalid schedule: {res.errors[:3]}"
    return res.makespan
