"""Stopping long computations from outside: signals reach solvers that run in C code.

A Python signal handler runs only when the main thread returns to Python, so a SIGTERM during
a CP-SAT solve would wait for the solve's time limit. The command line therefore watches
signals with :func:`watch_signals` (a wakeup file descriptor read by a daemon thread), and every
in-process solve registers its ``stop`` function with :func:`stoppable` for its duration: a
signal stops the registered solves at once (CP-SAT's ``stop_search`` is thread-safe), they
return their best so far, and the Python handler then ends the command.

:func:`keep_sigint` restores the Python SIGINT handler after a call that replaces it (CP-SAT
with ``catch_sigint_signal`` leaves the system default behind, so a later Ctrl-C would kill the
process with no message).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Callable, Iterator

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""The exit status after each signal (128 + its number, as a shell reports a death by it)."""


class Interrupted(KeyboardInterrupt):
    """A command ended by SIGINT or SIGTERM (``signum``); ``note`` says what was kept."""

    def __init__(self, signum: int, note: str = ""):
        super().__init__(signum, note)
        self.signum, self.note = signum, note


def raise_interrupted(signum, frame) -> None:
    """A signal handler ending the command with :class:`Interrupted`."""
    raise Interrupted(signum)


def _deferred(signum, frame) -> None:
    """The first signal only stops the solves (the command then prints its best so far and
    ends with 130/143); a second one ends the command at once."""
    _HANDLED.append(signum)
    if len(_HANDLED) > 1:
        raise Interrupted(signum)
    stop_all()


@contextlib.contextmanager
def ending_on_signals(defer: bool = False) -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` in the block and stop every registered
    solve at once (:func:`watch_signals`); the previous handlers come back after it. With
    ``defer``, the first signal only stops the solves (every later one stops at its start) and
    the command finishes with what it has; :func:`signalled` then names the signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _SIGNALLED.clear()
    _HANDLED.clear()
    saved = {s: signal.signal(s, _deferred if defer else raise_interrupted) for s in EXIT_STATUS}
    watch_signals()
    try:
        yield
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
        _SIGNALLED.clear()  # a stop request never outlives its command
        _HANDLED.clear()


_STOPPERS: list[Callable[[], None]] = []
_LOCK = threading.Lock()
_SIGNALLED: list[int] = []
_HANDLED: list[int] = []


@contextlib.contextmanager
def stoppable(stop: Callable[[], None]) -> Iterator[None]:
    """Register ``stop`` (called from another thread on a signal) while the block runs; if a
    signal came before, ``stop`` is called at once."""
    with _LOCK:
        _STOPPERS.append(stop)
        early = bool(_SIGNALLED)
    if early:
        stop()
    try:
        yield
    finally:
        with _LOCK:
            _STOPPERS.remove(stop)


def stop_all() -> None:
    """Call every registered ``stop`` (what a watched signal does)."""
    with _LOCK:
        stoppers = list(_STOPPERS)
    for stop in stoppers:
        with contextlib.suppress(Exception):
            stop()


def stop_requested() -> bool:
    """Whether a signal asked the current command to stop (every deadline is then expired and a
    solve that starts gets a moment only: :func:`solve_seconds`)."""
    return bool(_HANDLED or _SIGNALLED)


def solve_seconds(limit):
    """A solver's time limit: ``limit``, or a moment (0.05 s, for the hint to become a
    solution) once a stop was requested (a stop before the solve starts would be lost)."""
    if stop_requested():
        return 0.05 if limit is None else min(float(limit), 0.05)
    return limit


def watching() -> bool:
    """Whether this process watches signals (:func:`watch_signals`): then a solver must not
    catch SIGINT itself (its handler would hide the signal from the command)."""
    return bool(_WATCHING) and signal.getsignal(signal.SIGINT) in (raise_interrupted, _deferred)


def signalled() -> int | None:
    """The first signal received in the current :func:`ending_on_signals` block, or None."""
    return _HANDLED[0] if _HANDLED else (_SIGNALLED[0] if _SIGNALLED else None)


_WATCHING: list[bool] = []


def watch_signals() -> None:
    """Stop the registered computations as soon as a signal arrives (main thread only, once
    per process): a wakeup file descriptor, read by a daemon thread, calls :func:`stop_all`."""
    if threading.current_thread() is not threading.main_thread() or _WATCHING:
        return
    _WATCHING.append(True)
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)

    def loop() -> None:
        while True:
            try:
                data = os.read(r, 64)
            except OSError:
                return
            if not data:
                return
            for signum in data:
                if signum in (signal.SIGINT, signal.SIGTERM):
                    _SIGNALLED.append(signum)
                    stop_all()

    threading.Thread(target=loop, name="pipebounds-signals", daemon=True).start()


def detach_child() -> None:
    """In a worker process forked from a command: its parent decides when it ends. SIGINT is
    ignored, SIGTERM ends it at once (the default), and neither reaches the parent's watcher
    (the inherited wakeup file descriptor is dropped; a forked child has no watcher thread)."""
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _SIGNALLED.clear()
    _HANDLED.clear()
    _WATCHING.clear()
    with _LOCK:
        _STOPPERS.clear()


@contextlib.contextmanager
def keep_sigint() -> Iterator[None]:
    """Restore the SIGINT handler after the block (main thread only; elsewhere a no-op)."""
    main = threading.current_thread() is threading.main_thread()
    saved = signal.getsignal(signal.SIGINT) if main else None
    try:
        yield
    finally:
        if main and saved is not None:
            signal.signal(signal.SIGINT, saved)


@contextlib.contextmanager
def watchdog(stop: Callable[[], None], when: Callable[[], bool] | None,
             every: float = 0.02) -> Iterator[None]:
    """Call ``stop`` (once, from a daemon thread) as soon as ``when()`` is true while the block
    runs, polling every ``every`` seconds; None: no watchdog. For a solver whose own limit is
    in wall seconds while the caller's budget is on another clock (``time.process_time``: the
    solver's C threads count, and a thread that sleeps costs no CPU).

    >>> import time
    >>> hits = []
    >>> t = time.monotonic()
    >>> with watchdog(lambda: hits.append(1), lambda: time.monotonic() > t + 0.05):
    ...     while not hits and time.monotonic() < t + 5:
    ...         time.sleep(0.01)
    >>> hits
    [1]
    """
    if when is None:
        yield
        return
    done = threading.Event()

    def loop() -> None:
        while not done.wait(every):
            if when():
                with contextlib.suppress(Exception):
                    stop()
                return

    thread = threading.Thread(target=loop, name="pipebounds-watchdog", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
