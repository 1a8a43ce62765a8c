"""The registry of machine checks: one :class:`Check` per theorem of docs/theory.md.

A check module (listed in :data:`proofs_checks.CHECK_MODULES`) registers its checks with the
:func:`check` decorator::

    @check("Theorem 1 (fill-drain bound)", kind="symbolic",
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

MODES = ("quick", "full")


@dataclass(frozen=True)
class Context:
    """How a check runs: ``mode`` is ``quick`` (CI) or ``full``; ``workers`` processes."""

    mode: str = "quick"
    workers: int = 1


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

    def range_for(self, mode: str) -> str:
        return self.ranges.get(mode, self.ranges.get("quick", ""))


CHECKS: list[Check] = []


def check(theorem: str, kind: str, range: Union[str, dict]):
    """Register the decorated function as the check of ``theorem``."""
    if kind not in ("symbolic", "exhaustive"):
        raise ValueError(f"check kind must be symbolic or exhaustive, got {kind!r}")
    ranges = {"quick": range, "full": range} if isinstance(range, str) else dict(range)

    def deco(func: Callable[[Context], CheckResult]):
        CHECKS.append(Check(theorem, kind, ranges, func, f"{func.__module__}.{func.__name__}"))
        return func

    return deco
