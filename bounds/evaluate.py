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

from schedules.instance import Instance


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
    if inst.c:  # c at each GPU crossing of the chain (docs/theory.md, H2)
        from .heterogeneous import crossings

        chain += inst.c * crossings(inst)
    chain_exact = inst.m == 1 and inst.v == 1
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
    if not inst.uniform:
        return _extension_bound(inst, [])
    terms = basic_terms(inst) + _module_terms(inst)
    if inst.c or inst.memory is not None:
        return _extension_bound(inst, terms)
    value = max(t[1] for t in terms)
    exact = any(ex and val == value for _, val, ex in terms)
    return LowerBound(value, tuple((n, v) for n, v, _ in terms), exact)


def _extension_bound(inst: Instance, uniform_terms: list) -> LowerBound:
    """Per-stage costs, ``c > 0`` or memory in bytes (MODEL.md, Extensions): the terms H1-H3 of
    :mod:`bounds.heterogeneous` (valid for every instance), with the uniform theorems'
    ``uniform_terms`` when the durations are uniform (they stay valid: delays and a byte budget
    only lengthen or remove schedules). Exactness: only H2's own proof (m = 1, v = 1, no byte
    budget) and, for ``c = 0`` without a byte budget, the uniform theorems'."""
    from .heterogeneous import terms as hetero_terms

    budget = inst.memory is not None and inst.memory.budget is not None
    kept = [(n, v, ex and not inst.c and not budget) for n, v, ex in uniform_terms]
    terms = kept + hetero_terms(inst)
    value = max(t[1] for t in terms)
    exact = any(ex and val == value for _, val, ex in terms)
    return LowerBound(value, tuple((n, v) for n, v, _ in terms), exact)
