"""The machine checks of the theorems, keyed by theorem id.

The theorems themselves (id, statement, bound function, exact case, docs section) are the one
registry :mod:`bounds.theorems`, filled by decorators beside the formulas; :data:`THEOREMS` is
that table. The id is the one ``pipebounds bound`` prints beside each term
(:data:`bounds.evaluate.TERM_IDS`); tests/test_registry.py fails when a theorem of the docs has
no entry, no bound or no check.

A check module (listed in :data:`proofs_checks.CHECK_MODULES`) registers its checks with the
:func:`check` decorator, naming the theorems it checks::

    @check("Theorem 1 (fill-drain bound)", theorems=("T1",), kind="symbolic",
           range="all P, m >= 1, f, b > 0")
    def fill_drain_reduces_at_large_K(ctx: Context) -> CheckResult:
        ...

``kind`` is ``symbolic`` (sympy proves an identity or inequality a proof relies on) or
``exhaustive`` (over a declared range of small instances: LB <= OPT from the exact search, and
LB = OPT wherever exactness is claimed). ``range`` may depend on the mode: give a dict
``{"quick": "...", "full": "..."}``. The function receives a :class:`Context` (mode and worker
count) and returns a :class:`CheckResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional, Union

from bounds.theorems import Theorem, all_theorems

MODES = ("quick", "full")


@dataclass(frozen=True)
class Context:
    """How a check runs: ``mode`` is ``quick`` (CI) or ``full``; ``workers`` processes."""

    mode: str = "quick"
    workers: int = 1
    scheduler: Optional[str] = None  # a Dask scheduler address: run the exhaustive checks there


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check.

    ``instances``: how many instances (or symbolic cases) were checked; ``worst_gap``: the
    largest OPT/LB seen (None for symbolic checks); ``ok``: whether every assertion held;
    ``detail``: counterexamples or notes (the first failing instance when not ok).
    """

    instances: int
    ok: bool
    worst_gap: Optional[Fraction] = None
    detail: str = ""


@dataclass(frozen=True)
class Check:
    theorem: str
    kind: str
    ranges: dict
    func: Callable[[Context], CheckResult] = field(repr=False)
    name: str = ""
    theorems: tuple[str, ...] = ()

    def range_for(self, mode: str) -> str:
        return self.ranges.get(mode, self.ranges.get("quick", ""))


CHECKS: list[Check] = []


def check(theorem: str, kind: str, range: Union[str, dict], theorems: tuple[str, ...] = ()):
    """Register the decorated function as the check of ``theorem`` (a title); ``theorems``: the
    ids of :data:`THEOREMS` it checks."""
    if kind not in ("symbolic", "exhaustive"):
        raise ValueError(f"check kind must be symbolic or exhaustive, got {kind!r}")
    unknown = [t for t in theorems if t not in THEOREMS]
    if unknown:
        raise ValueError(f"check {theorem!r} names unknown theorem ids {unknown}")
    ranges = {"quick": range, "full": range} if isinstance(range, str) else dict(range)

    def deco(func: Callable[[Context], CheckResult]):
        CHECKS.append(Check(theorem, kind, ranges, func, f"{func.__module__}.{func.__name__}",
                            tuple(theorems)))
        return func

    return deco


# --------------------------------------------------------------------------- theorems
THEOREMS: dict[str, Theorem] = all_theorems()
"""Theorem id -> :class:`bounds.theorems.Theorem`, one entry per theorem of the docs (the
registry of :mod:`bounds.theorems`; this module adds only the checks)."""


def checks_of(theorem_id: str) -> list[Check]:
    """The registered checks that name ``theorem_id`` (load the check modules first:
    :func:`proofs_checks.load_checks`)."""
    return [c for c in CHECKS if theorem_id in c.theorems]
