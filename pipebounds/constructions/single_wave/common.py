"""What every single-wave construction uses: the backward ops of a pair, and the check that a
schedule is valid and reaches its target (every construction returns only such schedules).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from schedules.instance import Instance
from schedules.schedule import Schedule
from schedules.simulate import simulate


def _backward_kinds(inst: Instance) -> tuple[str, ...]:
    """The backward ops of one pair, in order: ``("B",)`` fused, ``("I", "W")`` split."""
    return ("I", "W") if inst.split else ("B",)




def _reaching(sched: Schedule, target: Fraction) -> Optional[Schedule]:
    """``sched`` if it is valid (so, with ``K = 1``, one activation per GPU) and its simulated
    makespan is ``target``, else None: every construction here returns only such schedules."""
    return sched if _makespan(sched) == target else None


def _makespan(sched: Optional[Schedule]) -> Optional[Fraction]:
    if sched is None:
        return None
    res = simulate(sched)
    return res.makespan if res.valid else None
