"""Exact schedulers (docs/search.md): :func:`solve` returns an optimal schedule and its status.

Modules: :mod:`.model` (the integer form of an instance), :mod:`.bnb` (branch and bound over
per-GPU orders), :mod:`.incumbent` (known schedules as upper bounds), :mod:`.cpsat` (the
OR-tools CP-SAT model, optional), :mod:`.result` (:class:`SolveResult`), :mod:`.solve` (the
driver).
"""

from .result import STATUSES, SolveResult
from .solve import ENGINES, solve

__all__ = ["solve", "SolveResult", "STATUSES", "ENGINES"]
