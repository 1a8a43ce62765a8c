"""What an exact engine may claim, and the checks behind it (docs/search.md, "Statuses").

* :func:`root_lower_bound`: the theory's bound (:func:`bounds.lower_bound`), used only when
  ``use_theory`` is on, so that with ``use_theory=False`` every proof rests on the engine alone;
* :func:`checked`: the simulated makespan of a schedule an engine returns (it must be valid);
* :func:`theory_guard`: a valid schedule below the theory's bound means the bound is wrong,
  never an optimum (a bound is never counted as a proof of itself);
* :func:`status_of`: ``optimal`` only when the best makespan equals a proven lower bound.

Times are integers in units ``1/unit`` (:class:`~pipebounds.search.model.Model`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from schedules.instance import Instance
from schedules.schedule import Schedule
from schedules.simulate import simulate


def root_lower_bound(inst: Instance) -> Fraction:
    """:func:`bounds.lower_bound` (the theory's bound)."""
    from bounds import lower_bound

    return Fraction(lower_bound(inst).value)


def theory_bound(inst: Instance, use_theory: bool, given: Optional[Fraction] = None) -> Fraction:
    """The theory's bound an engine may use: ``given`` (already computed by the caller) or
    :func:`root_lower_bound` with ``use_theory``, else 0 (every proof rests on the engine)."""
    if not use_theory:
        return Fraction(0)
    return root_lower_bound(inst) if given is None else Fraction(given)


def ceil_units(x: Fraction, unit: int) -> int:
    """``ceil(x * unit)``: a lower bound ``x`` in integer units."""
    x = Fraction(x)
    return -((-x.numerator * unit) // x.denominator)


def checked(inst: Instance, schedule: Schedule) -> Fraction:
    """The makespan of ``schedule``, asserting it is valid for ``inst``."""
    res = simulate(schedule)
    assert res.valid, f"solver produced an invalid schedule: {res.errors[:3]}"
    return res.makespan


def theory_guard(inst: Instance, makespan: Fraction, lb_theory: Fraction) -> None:
    """Fail loudly when a valid schedule of ``makespan`` beats the theory's bound ``lb_theory``."""
    assert makespan >= lb_theory, (f"bounds.lower_bound = {lb_theory} exceeds the makespan "
                                   f"{makespan} of a valid schedule of {inst}: the bound is wrong")


def status_of(makespan: Optional[Fraction], lower: Fraction) -> str:
    """``optimal`` iff a schedule reaches the proven ``lower``; ``feasible`` with a schedule,
    else ``unknown`` (an ``infeasible`` claim needs an exhaustive proof and is made by the
    engines themselves)."""
    if makespan is None:
        return "unknown"
    assert lower <= makespan, f"proven lower bound {lower} above a found makespan {makespan}"
    return "optimal" if lower == makespan else "feasible"


def plain_problems(inst: Instance) -> list[str]:
    """What takes ``inst`` outside the plain uniform model that the special engines' proofs
    assume (empty: inside): per-stage durations, a communication delay, two directions, a
    byte budget or overlapped ``F&B`` ops. Each engine adds the limits of its own class
    (:func:`.single_slot.class_problems`, :func:`.relaxation.class_problems`)."""
    out = []
    if not inst.uniform:
        out.append("per-stage durations")
    if inst.c:
        out.append("communication delay")
    if inst.directions != 1:
        out.append("two directions")
    if inst.memory is not None:
        out.append("memory in bytes")
    if inst.d_FB is not None or inst.d_FI is not None:
        out.append("overlapped F&B ops")
    return out
