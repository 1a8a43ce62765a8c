"""Certificates: schedules that reach the lower bound (basis ``certificate`` of
:mod:`pipebounds.certify`).

A valid schedule that fits ``K`` has makespan ``>= OPT >= LB``; one whose simulated makespan
equals the (valid) bound ``LB`` therefore proves ``OPT = LB``. The candidates, cheapest first:
the schedules recorded for this very instance (pipebounds/data/certificates.jsonl, written by
tools/ship_certificates.py from the long solver runs of data/), the construction of the exact
cases (:func:`pipebounds.constructions.optimal_schedule`; at ``K = 1`` the bounded search with a
node budget from the time left), then every known family of :mod:`schedules.generators` fitted to
``K`` with :func:`schedules.remat.fit_memory`, after the schedules the caller passes.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Iterable, Optional

from schedules.instance import Instance
from schedules.schedule import Schedule

NODES_PER_SECOND = 10_000
"""Node budget per second of the ``K = 1`` bounded search (a conservative rate on a loaded
core: docs/theory.md measured about 20,000)."""


def reaches(sched: Schedule, inst: Instance, target: Fraction, result=None) -> bool:
    """``sched`` (for ``inst``'s pipeline) is valid, fits ``inst.K`` and has makespan
    ``target``. ``result``: its :class:`~schedules.simulate.SimulationResult` when the caller
    has simulated it already."""
    from schedules.simulate import simulate

    res = result if result is not None else simulate(sched.with_instance(inst))
    if not res.valid or res.makespan != target or res.peak_memory is None:
        return False
    return inst.K is None or max(res.peak_memory) <= inst.K


STORED = ("data", "certificates.jsonl")
"""Where the recorded certificate schedules lie inside the ``pipebounds`` package."""


@lru_cache(maxsize=1)
def stored_schedules() -> tuple[tuple[Schedule, str], ...]:
    """The recorded schedules ``(schedule, where)`` of pipebounds/data/certificates.jsonl (none
    when the package was built without it), read once per process."""
    from schedules.io import schedule_from_document

    node = resources.files("pipebounds")
    for part in STORED:
        node = node / part
    text = node.read_text() if node.is_file() else ""
    out = []
    for line in text.splitlines():
        if line.strip():
            doc = json.loads(line)
            out.append((schedule_from_document(doc), doc.get("recorded_as", "certificates.jsonl")))
    return tuple(out)


def _same_pipeline(a: Instance, b: Instance) -> bool:
    """The same instance but for ``K`` (a stored schedule is tried at the caller's ``K``)."""
    da, db = a.to_dict(), b.to_dict()
    da.pop("K", None)
    db.pop("K", None)
    return da == db


def _candidates(inst: Instance, deadline: float) -> Iterable[tuple[Schedule, str]]:
    """Schedules to try as certificates, cheapest first: the construction of the exact cases
    (:func:`pipebounds.constructions.optimal_schedule`; at ``K = 1`` the bounded search with a
    node budget from the time left), then every known family fitted to ``K``."""
    from pipebounds.constructions import optimal_schedule
    from pipebounds.constructions.single_wave import single_slot_schedule
    from schedules.generators import GENERATORS, generate
    from schedules.remat import fit_memory

    for stored, where in stored_schedules():
        if _same_pipeline(stored.instance, inst):
            yield stored, f"recorded {where}"
    if inst.directions != 1:  # no construction nor fit_memory takes two directions yet
        try:
            yield generate("dualpipe", inst.with_(K=None)).with_instance(inst), "dualpipe"
        except ValueError:
            pass
        return
    if inst.v == 1 and inst.K == 1 and not inst.split and not inst.c:
        # the bounded search runs about NODES_PER_SECOND nodes a second: a budget from the
        # time left, at most its default 2000 P m; the list family only with time to spare
        left = max(0.0, deadline - time.monotonic())
        nodes = max(1, min(int(left * NODES_PER_SECOND), 2000 * inst.P * inst.m))
        sched = single_slot_schedule(inst, nodes=nodes, quick=left < 10)
    else:
        sched = optimal_schedule(inst)
    if sched is not None:
        yield sched, sched.source or "construction"
    for name in GENERATORS:
        if time.monotonic() > deadline:
            return
        try:
            base = generate(name, inst.with_(K=None))
        except ValueError:
            continue
        yield (fit_memory(base.with_instance(inst), inst.K) if inst.K is not None else base), name


def certificate(inst: Instance, target: Fraction, seconds: float,
                schedules: Iterable = ()) -> Optional[tuple[Schedule, str]]:
    """A schedule reaching ``target`` (the bound) within ``seconds``: the given ``schedules``
    (each a Schedule or ``(Schedule, SimulationResult)``), then :func:`_candidates`."""
    for item in schedules:
        sched, res = item if isinstance(item, tuple) else (item, None)
        if reaches(sched, inst, target, res):
            return sched, sched.source or "given schedule"
    if seconds <= 0:
        return None
    deadline = time.monotonic() + seconds
    for sched, source in _candidates(inst, deadline):
        if reaches(sched, inst, target):
            return sched, source
        if time.monotonic() > deadline:
            break
    return None


__all__ = ["NODES_PER_SECOND", "STORED", "certificate", "reaches", "stored_schedules"]
