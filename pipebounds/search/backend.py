"""The solver-backend contract: one frozen options object, one protocol, one registry.

Every exact engine is a :class:`Backend`: ``solve(inst, options, channel) -> SolveResult``. The
caller's wishes travel in :class:`SolveOptions` (frozen; ``dataclasses.replace`` to vary one), so
adding an option touches this dataclass and the backends that read it, never the dispatchers.
:func:`pipebounds.search.solve` looks the engine up in :data:`BACKENDS`; the portfolio
(:mod:`pipebounds.search.portfolio`) runs any of them side by side through the same protocol.

Adding a backend (docs/architecture.md): write ``solve_<name>(inst, options, channel)`` in a
module of this package, and register it here with :func:`register`.

>>> from schedules import Instance
>>> sorted(BACKENDS)
['auto', 'cpsat', 'portfolio', 'search']
>>> r = BACKENDS["search"].solve(Instance(P=2, m=2, K=1), SolveOptions(time_limit=10))
>>> r.status, r.makespan
('optimal', Fraction(9, 1))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional, Protocol

from schedules.instance import Instance
from schedules.schedule import Schedule

from .channel import SILENT, Channel
from .result import SolveResult

Known = tuple[str, Schedule, Fraction]
"""A valid schedule to start from: ``(source, schedule, makespan)``."""


@dataclass(frozen=True)
class SolveOptions:
    """What every backend takes.

    ``time_limit``: seconds (None: no limit); ``workers``: CP-SAT's threads; ``use_known``: start
    from the known schedules (the families and constructions; off for cross-checks);
    ``use_theory``: start from :func:`bounds.lower_bound` (off: every proof rests on the engine
    alone, so the result can check the theory); ``incumbent``: a valid schedule of the instance
    to start from (for example a synthesized one), used whatever ``use_known`` says, since an
    upper bound never weakens a proof; ``known`` and ``lb_theory``: the best known schedule and
    the theory's bound when the caller computed them already (:meth:`prepared`).
    """

    time_limit: Optional[float] = None
    workers: int = 1
    use_known: bool = True
    use_theory: bool = True
    incumbent: Optional[Schedule] = None
    known: Optional[Known] = None
    lb_theory: Optional[Fraction] = None
    catch_sigint: bool = True
    """CP-SAT: install its own SIGINT handler during the solve (off in the portfolio's engine
    processes, which ignore SIGINT: their parent decides)."""

    def replace(self, **changes) -> "SolveOptions":
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def prepared(self, inst: Instance) -> "SolveOptions":
        """The options with ``known`` (the best of the known schedules and ``incumbent``) and
        ``lb_theory`` computed once, so that engines run side by side do not repeat them."""
        from schedules.deadline import Deadline
        from .incumbent import best_known
        from .proof import checked, theory_bound

        known = self.known
        if known is None and self.use_known:
            # the known schedules get at most half the time limit: the engines need the rest
            known = best_known(inst, Deadline.after(
                None if self.time_limit is None else self.time_limit / 2))
        if self.incumbent is not None:
            sched = self.incumbent.with_instance(inst)
            ms = checked(inst, sched)
            if known is None or ms < known[2]:
                known = (sched.source or "incumbent", sched, ms)
        lb = theory_bound(inst, self.use_theory, self.lb_theory)
        return self.replace(known=known, lb_theory=lb)


class Backend(Protocol):
    """An exact engine: an honest status, a schedule checked by the simulator."""

    @property
    def name(self) -> str:
        """The engine's name in :data:`BACKENDS` and on the command line."""
        ...

    def solve(self, inst: Instance, options: SolveOptions = SolveOptions(),
              channel: Channel = SILENT) -> SolveResult:
        ...


@dataclass(frozen=True)
class FunctionBackend:
    """A backend made of a function ``(inst, options, channel) -> SolveResult``."""

    name: str
    run: Callable[[Instance, SolveOptions, Channel], SolveResult]
    summary: str = ""
    memory_bytes: bool = False
    """Whether it models memory in bytes (an instance with a byte budget goes to one that does)."""

    def solve(self, inst: Instance, options: SolveOptions = SolveOptions(),
              channel: Channel = SILENT) -> SolveResult:
        return self.run(inst, options, channel)


BACKENDS: dict[str, Backend] = {}
"""Engine name -> backend (filled by :func:`register`: ``search`` and ``cpsat`` here,
``portfolio`` and its alias ``auto`` by :mod:`pipebounds.search.portfolio`, which runs the
others)."""


def register(backend: Backend) -> Backend:
    """Add ``backend`` to :data:`BACKENDS` under its name."""
    BACKENDS[backend.name] = backend
    return backend


def _search(inst: Instance, o: SolveOptions, channel: Channel) -> SolveResult:
    from .deepening import solve_search

    o = o.prepared(inst)
    return solve_search(inst, o.time_limit, o.use_known, o.use_theory, known=o.known,
                        channel=channel, lb_theory=o.lb_theory)


def _cpsat(inst: Instance, o: SolveOptions, channel: Channel) -> SolveResult:
    from .cpsat import solve_cpsat

    o = o.prepared(inst)
    # prepared: ``known`` is final (None: nothing to start from), so CP-SAT looks for nothing else
    return solve_cpsat(inst, o.time_limit, o.workers, o.known is not None, o.use_theory,
                       known=o.known, channel=channel, lb_theory=o.lb_theory,
                       catch_sigint=o.catch_sigint)


register(FunctionBackend("search", _search, "branch and bound with iterative deepening, in "
                         "this process"))
register(FunctionBackend("cpsat", _cpsat, "the CP-SAT model (OR-tools), in this process",
                         memory_bytes=True))
