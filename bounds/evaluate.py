"""Exact evaluation of the lower bound of one instance.

The bound is the maximum of the applicable terms; each term is a theorem of docs/theory.md.
Modules contribute terms through a function ``terms(inst) -> list[(name, Fraction, exact)]``:
:mod:`bounds.single_wave` for ``v = 1``, :mod:`bounds.multi_wave` for ``v >= 2``. ``exact`` is
True when that term is proven equal to the optimum for this instance.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from fractions import Fraction

from schedules.instance import Instance, require


@dataclass(frozen=True)
class LowerBound:
    """``value`` = max of ``terms`` (name -> exact value); ``exact`` iff proven equal to OPT."""

    value: Fraction
    terms: tuple[tuple[str, Fraction], ...]
    exact: bool = False


def basic_terms(inst: Instance) -> list[tuple[str, Fraction, bool]]:
    """Terms valid for every instance: the busiest GPU's work ``v m (f+b)`` and one
    microbatch's chain ``S f + S b`` (split: ``S f + S b_I + b_W``).

    The chain is exact for a single microbatch on a single wave (``m = 1, v = 1``: the chain
    itself is a schedule, holding one activation per GPU; docs/theory.md, Theorem 0).

    >>> [(n, int(x), e) for n, x, e in basic_terms(Instance(P=4, m=1, K=1))]
    [('work', 3, False), ('critical_path', 12, True)]
    """
    work = inst.v * inst.m * (inst.f + inst.b)
    chain = inst.S * inst.f + (inst.S * inst.b_I + inst.b_W if inst.split else inst.S * inst.b)
    chain_exact = inst.m == 1 and inst.v == 1 and not inst.c
    return [("work", Fraction(work), False), ("critical_path", Fraction(chain), chain_exact)]


def _module_terms(inst: Instance) -> list[tuple[str, Fraction, bool]]:
    name = "single_wave" if inst.v == 1 else "multi_wave"
    try:
        module = importlib.import_module(f"bounds.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"bounds.{name}":
            return []
        raise
    return list(module.terms(inst))


def lower_bound(inst: Instance) -> LowerBound:
    """The best proven lower bound on the makespan of every feasible schedule of ``inst``.

    >>> lb = lower_bound(Instance(P=3, m=4, K=1, f=3, b=2))
    >>> lb.value, lb.exact, dict(lb.terms)["single_slot"]
    (Fraction(34, 1), True, Fraction(34, 1))
    """
    require(inst, Instance, "inst", "lower_bound")
    terms = basic_terms(inst) + _module_terms(inst)
    value = max(t[1] for t in terms)
    # every exactness proof assumes no communication delay (MODEL.md: c = 0 unless given); with
    # c > 0 the bounds stay valid (delays only lengthen schedules) but OPT may exceed them
    exact = not inst.c and any(ex and val == value for _, val, ex in terms)
    return LowerBound(value, tuple((n, v) for n, v, _ in terms), exact)
