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
    _now = staticmethod(time.monotonic)
    """The clock ``at`` is a point of (a subclass may count another: :class:`CpuDeadline`)."""

    @classmethod
    def after(cls, seconds: Optional[float]) -> "Deadline":
        """The deadline ``seconds`` from now (None: none)."""
        return cls(None if seconds is None else cls._now() + float(seconds))

    @classmethod
    def since_start(cls, seconds: Optional[float]) -> "Deadline":
        """The deadline ``seconds`` after the current command started (None: none): a command's
        time limit counts its start-up too (the interpreter, the imports), so that the limit is
        the user's wait. The start is :func:`command_started`."""
        return cls(None if seconds is None else command_started() + float(seconds))

    def remaining(self) -> Optional[float]:
        """Seconds left (>= 0), or None without a deadline."""
        return None if self.at is None else max(0.0, self.at - self._now())

    def expired(self) -> bool:
        """Past the deadline, or a signal asked the command to stop (:mod:`schedules.stopping`)."""
        from .stopping import stop_requested

        return (self.at is not None and self._now() >= self.at) or stop_requested()

    def share(self, fraction: float) -> "Deadline":
        """The deadline after ``fraction`` of the time left (for a first stage of the work), on
        the same clock."""
        left = self.remaining()
        return type(self).after(None if left is None else left * fraction)


NO_DEADLINE = Deadline()


@dataclass(frozen=True)
class CpuDeadline(Deadline):
    """A deadline on this process's CPU time (``time.process_time()``) instead of the wall
    clock: for measurements on a loaded machine, where a wall limit leaves a varying share of
    CPU. A stop signal ends it too, as :meth:`Deadline.expired`.

    >>> d = CpuDeadline.after(3600)
    >>> d.expired(), 3500 < d.remaining() <= 3600, CpuDeadline.after(0).expired()
    (False, True, True)
    """

    _now = staticmethod(time.process_time)


def command_started() -> float:
    """When the current command started, on the ``time.monotonic()`` clock: the moment given to
    :func:`mark_command_start` (the command line marks the process start when it runs as a
    program, the moment of the call when it is called in a running process), else the process
    start."""
    return _COMMAND[0] if _COMMAND else process_started()


def mark_command_start(at: float) -> None:
    """Record when the current command started (see :func:`command_started`)."""
    _COMMAND[:] = [float(at)]


_COMMAND: list[float] = []


def process_started() -> float:
    """When this process started, on the ``time.monotonic()`` clock: from ``/proc/self/stat``
    (Linux: field 22, clock ticks since boot, against ``CLOCK_BOOTTIME``), else the first call
    of this function (e.g. the command line's start)."""
    if not _STARTED:
        _STARTED.append(_from_proc() or time.monotonic())
    return _STARTED[0]


_STARTED: list[float] = []


def _from_proc() -> Optional[float]:
    """The process start from ``/proc`` (None where it cannot be read)."""
    import os

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of stat(5): fields[0] is field 3
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    if not 0 <= age < 86400 * 365:
        return None
    return time.monotonic() - age
