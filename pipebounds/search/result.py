"""What an exact scheduler returns: :class:`SolveResult`.

``status`` is honest (docs/search.md):

* ``optimal``: ``makespan == lower_bound`` and the schedule reaches it (proven: the search space
  was exhausted, or the incumbent met a proven lower bound);
* ``feasible``: a schedule was found but not proven optimal; ``lower_bound`` is the best proven
  lower bound, ``makespan`` the best found;
* ``unknown``: no schedule was found in the time limit;
* ``infeasible``: proven that no schedule exists (never happens for ``K >= 1``: one microbatch
  at a time with every forward but the current one checkpointed always fits).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from schedules.schedule import Schedule

STATUSES = ("optimal", "feasible", "unknown", "infeasible")


@dataclass(frozen=True)
class SolveResult:
    """The outcome of :func:`pipebounds.search.solve`.

    ``makespan`` and ``lower_bound`` are exact Fractions (``makespan`` None when no schedule was
    found); ``nodes`` counts search nodes (CP-SAT: branches); ``seconds`` is wall time;
    ``engine`` is ``"search"`` or ``"cpsat"``; ``source`` names where the best schedule came from
    (``search``, ``greedy``, ``construction``, ``cpsat``...).
    """

    status: str
    schedule: Optional[Schedule]
    makespan: Optional[Fraction]
    lower_bound: Fraction
    nodes: int
    seconds: float
    engine: str = "search"
    source: str = ""
    stats: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.status == "optimal" and self.makespan != self.lower_bound:
            raise ValueError("an optimal result must have makespan == lower_bound")

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"

    def __repr__(self) -> str:
        from schedules.brief import brief_repr

        return brief_repr("SolveResult", status=self.status, makespan=self.makespan,
                          lower_bound=self.lower_bound, engine=self.engine, nodes=self.nodes,
                          seconds=self.seconds)
