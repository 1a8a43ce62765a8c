"""``solve(instance, time_limit, engine)``: an optimal schedule and an honest status
(docs/search.md). This module only dispatches; each backend builds, solves and extracts on its
own and imports only downward:

* ``search``: the branch and bound (:mod:`pipebounds.search.deepening` over
  :mod:`pipebounds.search.bnb`), in this process;
* ``cpsat``: the CP-SAT model (:mod:`pipebounds.search.cpsat`), in this process;
* ``portfolio``: both side by side in processes, sharing incumbent and bound, the first proof
  wins (:mod:`pipebounds.search.portfolio`); the command line's default;
* ``auto``: an alias of ``portfolio`` (it was "search, then CP-SAT"; that order remains as
  :func:`solve_auto`, :func:`~pipebounds.search.portfolio.solve_sequential`, which the portfolio
  also uses inside a daemon process).

The backends share one contract (:mod:`pipebounds.search.backend`: a frozen
:class:`~pipebounds.search.backend.SolveOptions` and the ``Backend`` protocol).

Every returned schedule is checked by :func:`schedules.simulate.simulate`: it must be valid and
have the makespan reported (an ``AssertionError`` otherwise: a bug, never a silent result).

>>> from schedules import Instance
>>> r = solve(Instance(P=2, m=2, K=1))
>>> r.status, r.makespan
('optimal', Fraction(9, 1))
"""

from __future__ import annotations

from typing import Optional

from schedules.instance import Instance
from schedules.schedule import Schedule

from .portfolio import solve_portfolio as _registered  # noqa: F401 - registers the portfolio backends
from .backend import BACKENDS, SolveOptions
from .channel import SILENT, Channel
from .result import SolveResult
from schedules.instance import require_one_direction

ENGINES = tuple(BACKENDS)
"""The engine names (:data:`~pipebounds.search.backend.BACKENDS`)."""


def solve(inst: Instance, time_limit: Optional[float] = None, engine: str = "search",
          workers: int = 1, use_known: bool = True, use_theory: bool = True,
          channel: Channel = SILENT, incumbent: Optional[Schedule] = None) -> SolveResult:
    """An optimal schedule of ``inst`` within ``time_limit`` seconds (None: no limit).

    ``engine``: one of :data:`ENGINES` (the library's default is the in-process ``search``;
    ``pipebounds solve`` defaults to ``portfolio``); ``workers`` is CP-SAT's thread count;
    ``use_known`` seeds the incumbent with the known schedules (off for independent
    cross-checks); ``use_theory`` starts from :func:`bounds.lower_bound`. With
    ``use_theory=False`` every proof rests on the engines alone, so the result can *check* the
    theory's bounds (the table of optima is made this way); ``stats["independent"]`` says which.
    ``incumbent``: a valid schedule to start from (e.g. a synthesized one).
    ``channel`` (:mod:`pipebounds.search.channel`) receives progress and may stop the solve, which
    then returns the best found so far. The options become one
    :class:`~pipebounds.search.backend.SolveOptions` handed to the backend.
    """
    require_one_direction(inst, "solve (the exact engines)")
    if engine not in BACKENDS:
        raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
    if inst.memory is not None and inst.memory.budget is not None:
        backend = getattr(BACKENDS[engine], "memory_bytes", False)
        if not backend:
            raise ValueError(f"the {engine} engine does not model memory in bytes; use engine "
                             "'cpsat' (OR-tools) for an instance with a memory budget")
        if engine != "cpsat":
            engine = "cpsat"   # portfolio/auto: the search cannot take part
    options = SolveOptions(time_limit=time_limit, workers=workers, use_known=use_known,
                           use_theory=use_theory, incumbent=incumbent)
    return BACKENDS[engine].solve(inst, options, channel)


def solve_auto(inst: Instance, time_limit: Optional[float] = None, use_theory: bool = True,
               search_seconds: Optional[float] = None, channel: Channel = SILENT,
               **options) -> SolveResult:
    """The former ``auto``: the search for a slice of the time, then CP-SAT hinted with its best
    (:func:`~pipebounds.search.portfolio.solve_sequential`), in this process; the table of
    optima is made with it. ``options``: further :class:`SolveOptions` fields."""
    require_one_direction(inst, "solve (the exact engines)")
    from .portfolio import solve_sequential

    return solve_sequential(inst, SolveOptions(time_limit=time_limit, use_theory=use_theory,
                                               **options),
                            search_seconds=search_seconds, channel=channel)
