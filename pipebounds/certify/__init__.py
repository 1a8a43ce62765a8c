"""Certification: is the lower bound the optimum of this instance, and why.

The layer above :mod:`bounds` (formulas and what theorems prove) and
:mod:`pipebounds.constructions` / :mod:`pipebounds.search` (schedules and solvers): the only place
that combines them. :func:`certify` answers with a :class:`Certification` whose ``basis`` names
the evidence for the optimum, strongest and cheapest first:

``theorem``
    a theorem's proven exact case (:func:`bounds.lower_bound` flags it: a pure condition);
``checked``
    the instance lies in a range where the bound was confirmed equal to the optimum by exact
    search independent of the bound (:data:`pipebounds.certify.checked.CHECKED_RANGES`; scaling
    every duration scales every makespan, so the range covers every multiple of its duration
    ratios);
``table``
    a row of pipebounds/data/optima.jsonl proven optimal independently of the theory (``"independent":
    true``) has the same instance (durations up to a common factor; ``K >= v m`` reads as
    unconstrained); the optimum is known even when it exceeds the bound;
``certificate``
    a schedule (a construction of :mod:`pipebounds.constructions`, a known family of
    :mod:`schedules.generators` fitted to ``K`` with :func:`schedules.remat.fit_memory`, or one
    the caller passes) is valid, fits ``K`` and its simulated makespan equals the bound: a valid
    bound met by a feasible schedule. Tried only when ``seconds > 0`` (or for the schedules
    given);
``solver``
    an exact solver proved the optimum (:func:`pipebounds.search.solve`, only with ``solver=True``
    and ``seconds > 0``);

or None (nothing known). Lookups (theorem, checked, table) cost microseconds; certificates and
solver proofs are searches and only run when the caller grants the time.

The evidence lives in one module each: :mod:`pipebounds.certify.checked` (the checked ranges,
a scalar predicate and its vectorised twin for batches), :mod:`pipebounds.certify.optima` (the
one reader of pipebounds/data/optima.jsonl and its lookups), :mod:`pipebounds.certify.certificates`
(schedules that reach the bound); :func:`certify` combines them.

>>> from schedules import Instance
>>> c = certify(Instance(P=4, m=8, K=1, f=1, b=2))
>>> c.value, c.exact, c.basis
(Fraction(36, 1), True, 'checked')
>>> certify(Instance(P=4, m=8, K=4, f=1, b=2)).basis
'theorem'
"""

from __future__ import annotations

import inspect as _inspect
import sys as _sys
import time
import types as _types
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Optional

import bounds
from bounds import LowerBound
from schedules.instance import Instance
from schedules.schedule import Schedule

from . import checked as _checked
from .certificates import certificate, reaches
from .checked import (CHECKED_RANGES, SINGLE_SLOT_CHECKED, SPLIT_SINGLE_SLOT_CHECKED, CheckedRange,
                      checked_range, single_slot_checked)
from .optima import RESOURCE, optima_table, table_key, table_optimum

BASES = ("theorem", "checked", "table", "certificate", "solver")
"""The possible ``basis`` values (None: the optimum is not known)."""


@dataclass(frozen=True)
class Certification:
    """What is known about the optimum of one instance.

    ``value``: the lower bound; ``exact``: proven equal to the optimum; ``basis``: the evidence
    for ``optimum`` (one of :data:`BASES`, or None when the optimum is unknown); ``optimum``:
    the optimal makespan when known (it can exceed ``value``: then ``exact`` is False);
    ``schedule``: an optimal schedule when one was built (certificate or solver); ``terms``:
    the bound's terms ``(name, value)``; ``theorem``: the theorem id behind a ``theorem`` basis,
    the checked range's id or the certificate's source in ``detail``.
    """

    value: Fraction
    exact: bool
    basis: Optional[str]
    optimum: Optional[Fraction]
    terms: tuple[tuple[str, Fraction], ...]
    schedule: Optional[Schedule] = None
    detail: str = ""

    @property
    def binding(self) -> tuple[str, ...]:
        """The names of the terms equal to ``value``, in order (as
        :attr:`bounds.LowerBound.binding`)."""
        return tuple(name for name, v in self.terms if v == self.value)

    @property
    def exact_basis(self) -> Optional[str]:
        """``basis`` when the bound is exact, else None (the ``exact_basis`` of CLI.md)."""
        return self.basis if self.exact else None

    def __repr__(self) -> str:  # the schedule is long: name it
        from schedules.brief import brief_repr

        return brief_repr("Certification", value=self.value, exact=self.exact, basis=self.basis,
                          optimum=self.optimum, detail=self.detail,
                          schedule=None if self.schedule is None else self.schedule.source)


# --------------------------------------------------------------------------- certify
def certify(inst: Instance, seconds: float = 0, schedules: Iterable = (), table: bool = True,
            solver: bool = False, lb: Optional[LowerBound] = None) -> Certification:
    """Is the lower bound of ``inst`` its optimum, and why (module docstring).

    ``seconds``: time it may spend on certificates (and the solver); 0 (the default) uses the
    lookups only and never searches. ``schedules``: schedules the caller already has (each a
    Schedule or ``(Schedule, SimulationResult)``), tried as certificates at no search cost.
    ``table``: use pipebounds/data/optima.jsonl (a check of the table itself passes False). ``solver``:
    after the certificates, run the exact solver for the time left. ``lb``: the bound when the
    caller has computed it.
    """
    lb = lb if lb is not None else bounds.lower_bound(inst)
    value = lb.value

    def answer(basis, optimum, schedule=None, detail=""):
        return Certification(value, optimum == value, basis, optimum, lb.terms, schedule,
                             detail)

    if lb.exact:
        return answer("theorem", value, detail=lb.theorem or "")
    # the checked ranges and the table hold uniform instances without delay or byte budget only
    # (and one direction: MODEL.md, Directions)
    standard = (inst.uniform and not inst.c and inst.memory is None and not inst.overlapped
                and inst.directions == 1)
    if standard:
        rng = _checked.checked_range(inst)
        if rng is not None:
            return answer("checked", value, detail=rng.id)
    known = table_optimum(inst) if table and standard else None
    if known is not None:  # the optimum: no schedule can reach a bound below it
        return answer("table", known, detail=RESOURCE[-1])
    start = time.monotonic()
    found = certificate(inst, value, seconds, schedules)
    if found is not None:
        return answer("certificate", value, found[0], found[1])
    left = seconds - (time.monotonic() - start)
    # the exact engines do not model F&B ops nor two directions
    if solver and left > 0 and not inst.overlapped and inst.directions == 1:
        from pipebounds.search import solve

        res = solve(inst, time_limit=left)
        if res.status == "optimal" and res.makespan is not None:
            return answer("solver", res.makespan, res.schedule, res.engine)
    return Certification(value, False, None, None, lb.terms)


__all__ = ["BASES", "CHECKED_RANGES", "CheckedRange", "Certification", "certificate", "certify",
           "checked_range", "optima_table", "reaches", "single_slot_checked", "table_key",
           "table_optimum", "SINGLE_SLOT_CHECKED", "SPLIT_SINGLE_SLOT_CHECKED"]


class _CallableModule(_types.ModuleType):
    """The package is named after its function: ``pipebounds.certify(inst, ...)`` is
    :func:`certify` (so ``pb.certify(inst)`` answers "is the bound the optimum, and why")."""

    def __call__(self, *args, **kwargs) -> Certification:
        return certify(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
__signature__ = _inspect.signature(certify)
