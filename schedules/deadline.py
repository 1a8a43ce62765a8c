"""Deadlines: a time limit as a wall-clock promise, passed down to the work that builds models.

A command given ``--time-limit S`` makes one :class:`Deadline` at its start; every stage of the
work that can take long (known schedules and their fitting to ``K``, model building, the
solvers) asks it how much time is left and stops early, keeping what it has, when it has
expired. ``Deadline(None)`` never expires (no limit).

>>> d = Deadline.after(None)
>>> d.expired(), d.remaining()
(False, None)
>>> Deadline.after(0).expired()
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Deadline:
    """A point of ``time.monotonic()`` (None: no deadline)."""

    at: Optional[float] = None

    @classmethod
    def after(cls, seconds: Optional[float]) -> "Deadline":
        """The deadline ``seconds`` from now (None: none)."""
        return cls(None if seconds is None else time.monotonic() + float(seconds))

    def remaining(self) -> Optional[float]:
        """Seconds left (>= 0), or None without a deadline."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        """Past the deadline, or a signal asked the command to stop (:mod:`schedules.stopping`)."""
        from .stopping import stop_requested

        return (self.at is not None and time.monotonic() >= self.at) or stop_requested()

    def share(self, fraction: float) -> "Deadline":
        """The deadline after ``fraction`` of the time left (for a first stage of the work)."""
        left = self.remaining()
        return Deadline.after(None if left is None else left * fraction)


NO_DEADLINE = Deadline()
