"""Constructive schedules proven optimal for the exact cases (docs/theory.md).

:func:`optimal_schedule` returns, for an instance that is an exact case (``K = 1``, or memory
that does not bind), a schedule whose makespan equals the matching lower bound of
:mod:`bounds`; for any other instance it returns None (no claim is made).
"""

from __future__ import annotations

import importlib
from typing import Optional

from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.schedule import Schedule


def optimal_schedule(inst: Instance, deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """A schedule proven optimal for ``inst``, or None when ``inst`` is not an exact case (or
    when the ``K = 1`` search reaches ``deadline`` first: no claim).

    The constructions assume uniform durations: per-stage costs (MODEL.md, Extensions) get None,
    and one direction: ``directions = 2`` (MODEL.md, Directions) gets None too (no construction
    is proven for it).
    """
    if not inst.uniform or inst.directions != 1:
        return None
    name = "single_wave" if inst.v == 1 else "multi_wave"
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{name}":
            return None
        raise
    if name == "single_wave":  # its K = 1 search can take seconds at mid sizes
        return module.optimal_schedule(inst, deadline)
    return module.optimal_schedule(inst)
