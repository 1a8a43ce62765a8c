"""Exact evaluation of the lower bound of one instance.

The bound is the maximum of the applicable terms; each term is a theorem of docs/theory.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from schedules.instance import Instance


@dataclass(frozen=True)
class LowerBound:
    """``value`` = max of ``terms`` (name -> exact value); ``exact`` iff proven equal to OPT."""

    value: Fraction
    terms: tuple[tuple[str, Fraction], ...]
    exact: bool = False


def lower_bound(inst: Instance) -> LowerBound:
    """The lower bound on the makespan of every feasible schedule of ``inst``.

    Terms: ``work`` (the busiest GPU's work ``v m (f+b)``) and ``critical_path`` (one
    microbatch's chain ``S f + S b_I + b_W``; ``S (f+b)`` fused).
    """
    f, b = inst.f, inst.b
    work = inst.v * inst.m * (f + b)
    chain = inst.S * f + (inst.S * inst.b_I + inst.b_W if inst.split else inst.S * b)
    terms = (("work", Fraction(work)), ("critical_path", Fraction(chain)))
    return LowerBound(max(t[1] for t in terms), terms, False)
