"""How a running engine talks to its caller: :class:`Channel` (docs/search.md, "Portfolio").

An engine polls :meth:`Channel.stop` (end now with the best found: a signal, the time limit of
the caller, or another engine's proof), reads :meth:`Channel.upper` and :meth:`Channel.lower`
(the best makespan and the best proven lower bound known *elsewhere*, in units ``1/unit``), and
reports its own progress with :meth:`Channel.incumbent` and :meth:`Channel.bound`. The base
class is silent and never stops; :class:`Progress` prints one line per improvement to a stream;
the portfolio (:mod:`pipebounds.search.portfolio`) passes one that goes through processes.

A bound read from :meth:`Channel.lower` is a proof made by another engine (or the theory, when
the caller uses it); an engine that adopts it says so in its result's ``stats``.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional


class Channel:
    """The silent channel: knows nothing from elsewhere; stops only when a signal asked the
    command to stop (:func:`schedules.stopping.stop_requested`)."""

    def stop(self) -> bool:
        from schedules.stopping import stop_requested

        return stop_requested()

    def upper(self) -> Optional[int]:
        return None

    def lower(self) -> int:
        return 0

    def incumbent(self, engine: str, makespan: int, orders) -> None:
        """``engine`` found a valid schedule of makespan at most ``makespan`` units (``orders``:
        per-GPU ops; their ASAP timing may be shorter, the receiver simulates what it keeps)."""

    def bound(self, engine: str, lower: int) -> None:
        """``engine`` proved that no schedule beats ``lower`` units."""


SILENT = Channel()


class Progress(Channel):
    """Prints ``[elapsed] engine: incumbent U, bound L`` to ``stream`` on every improvement;
    ``stop`` is the caller's stop test (e.g. a signal flag)."""

    def __init__(self, unit: int, stream=None, stop: Optional[Callable[[], bool]] = None,
                 enabled: bool = True):
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self._stop = stop
        self.enabled = enabled
        self.t0 = time.monotonic()
        self.best_upper: Optional[int] = None
        self.best_lower = 0

    def stop(self) -> bool:
        return bool(self._stop and self._stop())

    def show(self, engine: str) -> None:
        if not self.enabled:
            return
        from fractions import Fraction

        up = "-" if self.best_upper is None else Fraction(self.best_upper, self.unit)
        lo = Fraction(self.best_lower, self.unit)
        print(f"[{time.monotonic() - self.t0:7.2f} s] {engine}: incumbent {up}, bound {lo}",
              file=self.stream, flush=True)

    def incumbent(self, engine: str, makespan: int, orders) -> None:
        if self.best_upper is None or makespan < self.best_upper:
            self.best_upper = makespan
            self.show(engine)

    def bound(self, engine: str, lower: int) -> None:
        if lower > self.best_lower:
            self.best_lower = lower
            self.show(engine)
