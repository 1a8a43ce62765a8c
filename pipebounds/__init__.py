"""pipebounds: bounds, exact optima and known schedules for pipeline parallelism under memory limits.

The public face of the toolkit. The layers, lowest first (docs/architecture.md):

- :mod:`schedules` — the model (:class:`Instance`, :class:`Op`, :class:`Schedule`), orders
  documents, the validator and the exact ASAP simulator; generators of the known schedules and
  rematerialization (:func:`fit_memory`, greedy; :func:`optimal_remat`, exact for a fixed order);
- :mod:`bounds` — lower bounds as formulas (sympy and exact evaluation), nothing else;
- :mod:`pipebounds.constructions`, :mod:`pipebounds.search` — constructive optimal schedules and
  exact solvers;
- :mod:`pipebounds` — certification ("is the bound the optimum here, and why"), the report and
  the command line.

>>> import pipebounds as pb
>>> inst = pb.Instance(P=4, m=8, K=1, f=1, b=2)
>>> pb.lower_bound(inst).value
Fraction(36, 1)
>>> pb.simulate(pb.generate("1f1b", pb.Instance(P=4, m=8))).makespan
Fraction(33, 1)

"Is the bound the optimum here, and why?" is :func:`certify`'s question (the command line's
``exact`` and ``exact_basis``): :attr:`LowerBound.exact` is narrower, true only where a theorem's
exact case covers the instance, while :func:`certify` also looks up the exhaustively checked
ranges, the table of optima and certificate schedules.

>>> pb.lower_bound(pb.Instance(P=4, m=8, K=2)).exact
False
>>> c = pb.certify(pb.Instance(P=4, m=8, K=2))
>>> c.exact, c.basis
(True, 'table')

A schedule for any instance, with its certified gap (makespan over the lower bound), from
:func:`synthesize` (docs/synthesis.md):

>>> r = pb.synthesize(pb.Instance(P=2, m=4, K=2, f=1, b=2), time_limit=5)
>>> r.makespan >= r.lower_bound, r.schedule.instance.P
(True, 2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bounds import LowerBound, lower_bound
from schedules import (DocumentError, Instance, InstanceError, Op, PipeboundsError, Schedule,
                       SimulationResult,
                       document_from_schedule, is_valid, read_schedule, schedule_from_document,
                       simulate, validate, write_schedule)

if TYPE_CHECKING:
    from schedules.generators import GENERATORS, generate
    from schedules.remat import fit_memory
    from schedules.remat_optimal import RematResult, optimal_remat
    from pipebounds.certify import Certification
    from pipebounds.search.result import SolveResult
    from pipebounds.services.audit import Verdict, audit
    from pipebounds.services.best import BestResult, best
    from pipebounds.services.frontier import Frontier, frontier
    from pipebounds.synthesis import SynthesisResult, synthesize

_LAZY = {"GENERATORS": "schedules.generators", "generate": "schedules.generators",
         "fit_memory": "schedules.remat", "RematResult": "schedules.remat_optimal",
         "optimal_remat": "schedules.remat_optimal",
         "Certification": "pipebounds.certify", "SolveResult": "pipebounds.search.result",
         "best": "pipebounds.services.best", "BestResult": "pipebounds.services.best",
         "frontier": "pipebounds.services.frontier", "Frontier": "pipebounds.services.frontier",
         "audit": "pipebounds.services.audit", "Verdict": "pipebounds.services.audit",
         "synthesize": "pipebounds.synthesis", "SynthesisResult": "pipebounds.synthesis"}
"""Public names imported on first use (start-up time of the command line:
benchmarks/bench_startup.py)."""


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("pipebounds")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def __getattr__(name: str):
    """``__version__`` and the names of :data:`_LAZY`, imported on first use (PEP 562)."""
    if name == "__version__":
        value = _version()
    elif name == "certify":  # the package, callable as its function: certify(inst)
        import importlib

        value = importlib.import_module("pipebounds.certify")
    elif name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"__version__", "certify"})


DEFAULT_ENGINE = "portfolio"
"""The default engine of :func:`solve`, as of ``pipebounds solve``: the branch and bound and
CP-SAT side by side in two processes, the first proof wins (``search`` runs in this process)."""


def solve(inst: Instance, time_limit: float | None = None, engine: str = DEFAULT_ENGINE,
          workers: int = 1, use_known: bool = True, use_theory: bool = True, channel=None,
          incumbent: Schedule | None = None):
    """An optimal schedule of ``inst`` within ``time_limit`` seconds (None: no limit), with an
    honest status (``optimal`` only when proven; :func:`pipebounds.search.solve`).

    ``engine``: ``portfolio`` (the default, as on the command line), ``search``, ``cpsat`` or
    ``auto``; ``workers``: CP-SAT threads; ``use_known``/``use_theory``: start from the known
    schedules and from :func:`lower_bound`; ``channel``: progress and stop
    (:mod:`pipebounds.search.channel`); ``incumbent``: a valid schedule to start from.
    Returns a :class:`pipebounds.search.SolveResult`. Imported on first use (it loads the
    solvers).
    """
    from pipebounds.search import solve as _solve
    from pipebounds.search.channel import SILENT

    return _solve(inst, time_limit=time_limit, engine=engine, workers=workers,
                  use_known=use_known, use_theory=use_theory,
                  channel=SILENT if channel is None else channel, incumbent=incumbent)


def optimal_schedule(inst: Instance):
    """A schedule proven optimal for an exact case (:func:`pipebounds.constructions.optimal_schedule`)."""
    from pipebounds.constructions import optimal_schedule as _optimal

    return _optimal(inst)


__all__ = [
    "__version__", "PipeboundsError", "Instance", "InstanceError", "Op", "Schedule",
    "SimulationResult", "simulate",
    "validate", "is_valid", "DocumentError", "schedule_from_document", "document_from_schedule",
    "read_schedule", "write_schedule", "LowerBound", "lower_bound", "GENERATORS", "generate",
    "fit_memory", "optimal_remat", "RematResult", "solve", "DEFAULT_ENGINE", "optimal_schedule",
    "certify", "Certification", "best", "BestResult", "frontier", "Frontier", "audit", "Verdict",
    "SolveResult", "synthesize", "SynthesisResult",
]
