"""``solve(instance, time_limit, engine)``: an optimal schedule and an honest status
(docs/search.md). This module only dispatches; each backend builds, solves and extracts on its
own and imports only downward:

* ``search``: the branch and bound (:mod:`pipebounds.search.deepening` over
  :mod:`pipebounds.search.bnb`), in this process;
* ``cpsat``: the CP-SAT model (:mod:`pipebounds.search.cpsat`), in this process;
* ``portfolio``: both side by side in processes, sharing incumbent and bound, the first proof
  wins (:mod:`pipebounds.search.portfolio`); the command line's default;
* ``auto``: an alias of ``portfolio`` (it was "search, then CP-SAT"; that order remains as
  :func:`~pipebounds.search.portfolio.solve_sequential`, which the portfolio also uses inside a
  daemon process).

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
from .channel import SILENT, Channel
from .cpsat import solve_cpsat
from .deepening import solve_search
from .portfolio import solve_portfolio, solve_sequential
from .result import SolveResult

ENGINES = ("portfolio", "search", "cpsat", "auto")

solve_auto = solve_sequential
"""The former ``auto`` (search first, then CP-SAT), kept for the table of optima."""


def solve(inst: Instance, time_limit: Optional[float] = None, engine: str = "search",
          workers: int = 1, use_known: bool = True, use_theory: bool = True,
          channel: Channel = SILENT) -> SolveResult:
    """An optimal schedule of ``inst`` within ``time_limit`` seconds (None: no limit).

    ``engine``: one of :data:`ENGINES` (the library's default is the in-process ``search``;
    ``pipebounds solve`` defaults to ``portfolio``); ``workers`` is CP-SAT's thread count;
    ``use_known`` seeds the incumbent with the known schedules (off for independent
    cross-checks); ``use_theory`` starts from :func:`bounds.lower_bound`. With
    ``use_theory=False`` every proof rests on the engines alone, so the result can *check* the
    theory's bounds (the table of optima is made this way); ``stats["independent"]`` says which.
    ``channel`` (:mod:`pipebounds.search.channel`) receives progress and may stop the solve, which
    then returns the best found so far.
    """
    if inst.memory is not None and inst.memory.budget is not None and engine != "cpsat":
        if engine == "search":
            raise ValueError("the search engine does not model memory in bytes; use engine "
                             "'cpsat' (OR-tools) for an instance with a memory budget")
        engine = "cpsat"   # portfolio/auto: the search cannot take part
    if engine == "search":
        return solve_search(inst, time_limit, use_known, use_theory, channel=channel)
    if engine == "cpsat":
        return solve_cpsat(inst, time_limit=time_limit, workers=workers, use_known=use_known,
                           use_theory=use_theory, channel=channel)
    if engine in ("portfolio", "auto"):
        return solve_portfolio(inst, time_limit, workers, use_known, use_theory,
                               channel=channel)
    raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
