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

_LAZY = {"GENERATORS": "schedules.generators", "generate": "schedules.generators",
         "fit_memory": "schedules.remat", "RematResult": "schedules.remat_optimal",
         "optimal_remat": "schedules.remat_optimal"}
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
    elif name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def solve(inst: Instance, *args, **kwargs):
    """Exact search (:func:`pipebounds.search.solve`); imported on first use (it loads the solvers)."""
    from pipebounds.search import solve as _solve

    return _solve(inst, *args, **kwargs)


def optimal_schedule(inst: Instance):
    """A schedule proven optimal for an exact case (:func:`pipebounds.constructions.optimal_schedule`)."""
    from pipebounds.constructions import optimal_schedule as _optimal

    return _optimal(inst)


__all__ = [
    "__version__", "PipeboundsError", "Instance", "InstanceError", "Op", "Schedule",
    "SimulationResult", "simulate",
    "validate", "is_valid", "DocumentError", "schedule_from_document", "document_from_schedule",
    "read_schedule", "write_schedule", "LowerBound", "lower_bound", "GENERATORS", "generate",
    "fit_memory", "optimal_remat", "RematResult", "solve", "optimal_schedule",
]
