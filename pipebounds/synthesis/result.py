"""What :func:`pipebounds.synthesis.synthesize` returns: :class:`SynthesisResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from schedules.schedule import Schedule

STATUSES = ("optimal", "feasible")


@dataclass(frozen=True)
class SynthesisResult:
    """A synthesized schedule and its certificate.

    ``schedule`` is valid for the instance with its memory limit (``K`` or the byte budget),
    checked by :func:`schedules.simulate.simulate`; ``makespan`` is its exact ASAP makespan;
    ``value`` the objective's value (the makespan, or with ``objective="span"`` the largest
    per-GPU span under the best timing of its orders, :func:`schedules.remat_optimal.min_span`).
    ``lower_bound`` is a proven lower bound on the objective over every valid schedule
    (makespan: :func:`bounds.lower_bound`, or a solver's proof when larger; span: the largest
    per-GPU work), ``binding`` the theorem ids of its terms that reach it, ``gap`` =
    ``value / lower_bound`` (the certified gap, ``>= 1``). ``status`` is ``optimal`` only when
    proven (``value == lower_bound``), else ``feasible``. ``source`` names the method that
    produced the schedule (a family, a list rule, ``+lns(n)`` for ``n`` improving
    neighbourhoods, ``cpsat``); ``methods`` what ran and what was skipped and why;
    ``history`` the anytime curve: ``(seconds, value)`` at each improvement.
    """

    schedule: Schedule
    makespan: Fraction
    lower_bound: Fraction
    binding: tuple[str, ...]
    status: str
    source: str
    seconds: float
    objective: str = "makespan"
    value: Optional[Fraction] = None
    methods: tuple[str, ...] = ()
    history: tuple[tuple[float, Fraction], ...] = ()
    interrupted: bool = False
    stats: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.value is None:
            object.__setattr__(self, "value", self.makespan)
        if self.lower_bound > self.value:
            raise AssertionError(f"lower bound {self.lower_bound} above the value {self.value} "
                                 f"of a valid schedule: a bound is wrong")
        if self.status == "optimal" and self.value != self.lower_bound:
            raise ValueError("an optimal result must have value == lower_bound")

    @property
    def gap(self) -> Optional[Fraction]:
        """``value / lower_bound`` (None when the bound is 0)."""
        return self.value / self.lower_bound if self.lower_bound else None
