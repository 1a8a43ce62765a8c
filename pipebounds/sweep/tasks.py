"""Sweep tasks: pure functions ``params -> list of rows`` (JSON-able dicts), one per task name.

``params`` holds ``instance`` (an instance object of CLI.md) and the grid's options. Numbers in
rows are exact: ints, or ``"p/q"`` strings (:func:`schedules.instance.fraction_json`); the store
loads them back exactly. Every task runs in a worker process, so each is a top-level function
that imports what it needs.

- ``bound``: the lower bound and its terms.
- ``solve``: the exact optimum (options ``time_limit``, default 10 s; ``engine``; ``synthesize``,
  seconds of :func:`pipebounds.synthesis.synthesize` first, its schedule the engines' first
  incumbent, as ``pipebounds solve --synthesize S``; default 0, off).
- ``generate``: every applicable family (option ``families``, default all) at every ``K`` from 1
  to the family's natural peak (option ``Ks``: a list instead), rematerialized by
  :func:`schedules.remat.fit_memory` (option ``polish``, default true), simulated; each row has
  the family's makespan, peak, the lower bound at that ``K`` and the gap makespan/bound.
- ``synthesize``: :func:`pipebounds.synthesis.synthesize` on the instance at its ``K`` (option
  ``time_limit``, default 3, in CPU seconds: ``clock='cpu'``), one row: ``K``, the makespan,
  the bound, the gap, ``status``, ``source``, the CPU seconds and ``synthesis_version``
  (:func:`pipebounds.sweep.store.synthesis_version`): a resumed sweep recomputes the rows of
  another version (:data:`ROW_VERSIONS`).
- ``best``, ``frontier``: the library functions of :mod:`pipebounds.services.best` and
  :mod:`pipebounds.services.frontier`, one row each.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from schedules.instance import Instance, fraction_json
from schedules.errors import InputError


class TaskError(InputError):
    """Options a task cannot use; the message names the option."""


def _instance(params: dict) -> Instance:
    return Instance.from_dict(params["instance"])


def bound_task(params: dict) -> list[dict]:
    from ..certify import certify

    cert = certify(_instance(params))  # the bound, and the lookups of the certification layer
    return [{"lower_bound": fraction_json(cert.value), "exact": cert.exact,
             "exact_basis": cert.exact_basis,
             "terms": {name: fraction_json(val) for name, val in cert.terms}}]


def solve_task(params: dict) -> list[dict]:
    from pipebounds.search import solve

    inst = _instance(params)
    kwargs: dict = {"time_limit": float(params.get("time_limit", 10))}
    if "engine" in params:
        kwargs["engine"] = params["engine"]
    seconds = min(float(params.get("synthesize", 0)), kwargs["time_limit"] / 2)
    if seconds > 0:
        import time

        from pipebounds.services.incumbent import synthesized_incumbent

        t0 = time.monotonic()  # the time limit covers the synthesis too, as on the command line
        kwargs["incumbent"] = synthesized_incumbent(inst, seconds)
        kwargs["time_limit"] = max(0.05, kwargs["time_limit"] - (time.monotonic() - t0))
    res = solve(inst, **kwargs)
    return [{"status": res.status,
             "makespan": None if res.makespan is None else fraction_json(res.makespan),
             "lower_bound": fraction_json(res.lower_bound), "seconds": round(res.seconds, 3),
             "engine": res.engine}]


def _gap(makespan: Fraction, bound: Fraction) -> str | int:
    return fraction_json(makespan / bound)


def generate_task(params: dict) -> list[dict]:
    from bounds import lower_bound
    from schedules.generators import GENERATORS, GeneratorError, generate
    from schedules.remat import fit_memory
    from schedules.simulate import simulate

    inst = _instance(params).with_(K=None)
    families = params.get("families") or sorted(GENERATORS)
    unknown = [f for f in families if f not in GENERATORS]
    if unknown:
        raise TaskError(f"unknown family {unknown[0]!r}")
    polish = bool(params.get("polish", True))
    rows = []
    bounds: dict = {}
    for family in families:
        if GENERATORS[family].requires.problems(inst):
            continue
        try:
            natural = generate(family, inst)
        except GeneratorError:  # a size the family does not define (e.g. DualPipeV, m < 2P)
            continue
        base = simulate(natural)
        peak = max(base.peak_memory)
        Ks = params.get("Ks") or list(range(1, peak + 1))
        for K in Ks:
            if K > peak:
                continue
            sched = natural if K == peak else fit_memory(natural, K, polish=polish)
            res = base if K == peak else simulate(sched)
            if K not in bounds:
                bounds[K] = lower_bound(inst.with_(K=K)).value
            lb = bounds[K]
            rows.append({"family": family, "K": K, "valid": res.valid,
                         "makespan": fraction_json(res.makespan), "peak": max(res.peak_memory),
                         "lower_bound": fraction_json(lb), "gap": _gap(res.makespan, lb)})
    return rows


def synthesize_task(params: dict) -> list[dict]:
    import time

    from pipebounds.synthesis import synthesize
    from .store import synthesis_version

    inst = _instance(params)
    if inst.K is None:
        raise TaskError("the synthesize task needs K in the instance")
    t0 = time.process_time()
    res = synthesize(inst, time_limit=float(params.get("time_limit", 3)), clock="cpu")
    return [{"K": inst.K, "makespan": fraction_json(res.makespan),
             "lower_bound": fraction_json(res.lower_bound),
             "gap": _gap(res.makespan, res.lower_bound), "status": res.status,
             "source": res.source, "cpu_seconds": round(time.process_time() - t0, 3),
             "synthesis_version": synthesis_version()}]


def best_task(params: dict) -> list[dict]:
    from pipebounds.services.best import best  # built by issue 12; a clear error until then

    return [best(_instance(params)).to_row()]


def frontier_task(params: dict) -> list[dict]:
    from pipebounds.services.frontier import frontier

    return [frontier(_instance(params),
                     time_limit=float(params.get("time_limit", 10))).to_row()]


TASKS: dict[str, Callable[[dict], list[dict]]] = {
    "bound": bound_task, "solve": solve_task, "generate": generate_task, "best": best_task,
    "frontier": frontier_task, "synthesize": synthesize_task,
}
"""Task name -> function (the ``--task`` choices of ``pipebounds sweep``)."""


def _synthesis_version() -> str:
    from .store import synthesis_version

    return synthesis_version()


ROW_VERSIONS: dict[str, tuple[str, Callable[[], str]]] = {
    "synthesize": ("synthesis_version", _synthesis_version),
}
"""Task -> (row field, current version): a stored item of that task whose rows carry another
version is stale, and ``run_sweep`` runs it again (``--resume`` recomputes it)."""


def run_task(task: str, params: dict) -> list[dict]:
    """Run one task (what every executor calls in its worker)."""
    return TASKS[task](params)
