"""The portfolio backend: the branch and bound and CP-SAT side by side (docs/search.md,
"Portfolio").

:func:`solve_portfolio` computes what both engines need once (the theory's bound when
``use_theory``, the best known schedule when ``use_known``, the search's root bound), answers
at once when the known schedule meets the root bound, and otherwise starts one process per
engine (``multiprocessing``; fork where available). The processes share:

* the incumbent: each engine posts every schedule it finds (makespan in units, per-GPU orders)
  to a queue; the parent keeps the best and publishes its makespan in a shared value that the
  search reads (it ends when another engine holds a schedule at its proven ``T``) and CP-SAT's
  solution callback reads (it stops when its solution meets the shared bound);
* the bound: each engine posts every lower bound it proves (the search: each exhausted ``T``;
  CP-SAT: its best-bound callback); the parent publishes the largest, and the search jumps its
  ``T`` to it. CP-SAT starts from the known schedule as hint (the search's own incumbent at that
  time) but cannot take a new one during its solve.

The first proof wins: an engine's ``optimal``, or the best schedule meeting the best bound
(each bound is a proof of the engine that posted it, so the pair is one too). The other process
is then terminated. At the time limit, or when the caller's channel says stop (a signal), the
answer is the best schedule with the best bound, ``feasible`` (or ``unknown``). Inside a daemon
process (a ``multiprocessing`` pool worker, which may not start processes) the portfolio runs
the engines one after the other instead (:func:`solve_sequential`).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

from schedules.instance import Instance
from schedules.schedule import Schedule
from .backend import BACKENDS, FunctionBackend, SolveOptions, register
from .bnb import Search
from .channel import SILENT, Channel
from .model import Model
from .proof import ceil_units, checked, status_of, theory_guard
from .result import SolveResult
from schedules.instance import require_one_direction

ENGINES = ("search", "cpsat")
"""The backends the portfolio runs side by side."""

SEQUENTIAL_SEARCH_SLICE = (0.25, 5.0)
""":func:`solve_sequential`: the search runs ``min(share * time_limit, cap)`` seconds (the cap
alone without a time limit) before CP-SAT takes over."""

DRAIN = 2.0
"""Seconds the portfolio waits, once it has its answer (a proof, a signal), for the branch and
bound to stop and report its own answer (its node count, a better schedule); other engines get
:data:`DRAIN_OTHERS` (CP-SAT notices the stop only at its next callback). Never past the time
limit plus :data:`DRAIN_OTHERS`: the limit is a wall-clock promise. An engine still running then
is terminated and listed in ``stats["unreported"]``."""
DRAIN_OTHERS = 0.25
"""Seconds after the time limit (or after the answer, for engines other than the search) that
the parent waits for the engines' final reports."""
ENGINE_MARGIN = 0.2
"""Seconds (at most a tenth of the time left) by which the engines' own limit ends before the
portfolio's, so that their final reports arrive within it."""


class _Shared(Channel):
    """The channel of an engine process: posts to the parent's queue, reads its shared values;
    stops when the parent says so or is gone."""

    def __init__(self, q, upper, lower, stop, parent: int):
        self.q, self._upper, self._lower, self._stop = q, upper, lower, stop
        self.parent = parent

    def stop(self) -> bool:
        return bool(self._stop.value) or os.getppid() != self.parent

    def upper(self) -> Optional[int]:
        v = self._upper.value
        return None if v < 0 else v

    def lower(self) -> int:
        return self._lower.value

    def incumbent(self, engine: str, makespan: int, orders) -> None:
        self.q.put(_Incumbent(engine, makespan, [list(o) for o in orders]))

    def bound(self, engine: str, lower: int) -> None:
        self.q.put(_Bound(engine, lower))


@dataclass(frozen=True)
class _Incumbent:
    """An engine found a schedule of ``makespan`` units."""

    engine: str
    makespan: int
    orders: list


@dataclass(frozen=True)
class _Bound:
    """An engine proved that nothing beats ``lower`` units."""

    engine: str
    lower: int


@dataclass(frozen=True)
class _Done:
    """An engine's own answer (times in units)."""

    engine: str
    status: str
    lower: int
    makespan: Optional[int]
    orders: Optional[list]
    nodes: int
    seconds: float


@dataclass(frozen=True)
class _Failed:
    """An engine raised (a bug: the parent raises it)."""

    engine: str
    error: str


def _worker(backend, inst: Instance, options: SolveOptions, q, upper, lower, stop,
            parent: int) -> None:
    """One engine process. It runs in a session of its own: a terminal's SIGINT reaches only the
    parent, which decides and ends this process with SIGTERM, and the kernel's per-session CPU
    groups (autogroup) give each engine its own share, as a dedicated core would. Should the
    parent vanish, :meth:`_Shared.stop` notices."""
    from schedules.stopping import detach_child

    detach_child()  # SIGINT ignored, SIGTERM the default, nothing sent to the parent's watcher
    try:
        os.setsid()
    except OSError:  # already a session leader
        pass
    try:
        name = backend.name
        res = backend.solve(inst, options, _Shared(q, upper, lower, stop, parent))
        unit = inst.unit
        orders = None if res.schedule is None else [list(o) for o in res.schedule.orders]
        q.put(_Done(name, res.status, ceil_units(res.lower_bound, unit),
                    None if res.makespan is None else ceil_units(res.makespan, unit), orders,
                    res.nodes, res.seconds))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        q.put(_Failed(backend.name, f"{type(exc).__name__}: {exc}"))


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def solve_portfolio(inst: Instance, options: SolveOptions = SolveOptions(),
                    channel: Channel = SILENT, engines: Sequence = ENGINES,
                    engine_name: str = "portfolio") -> SolveResult:
    """Run ``engines`` (names of :data:`ENGINES`, or backend objects: a ``name`` and
    ``solve(inst, options, channel)``, e.g. :class:`pipebounds.synthesis.engine.SynthesisEngine`,
    which the layers keep out of this module) side by side; see the module docstring.

    ``stats["engines"]`` lists ``(engine, status, seconds)`` of the runs (status ``stopped``
    for a process ended before its own answer),
    ``stats["proof"]`` the engine whose proof decided (``combined`` when one engine's schedule
    met another's bound, None when nothing was proven), ``stats["interrupted"]`` whether the
    channel stopped it.
    """
    require_one_direction(inst, "the portfolio")
    t0 = time.monotonic()
    backends = []
    for e in engines:
        if isinstance(e, str):
            if e not in ENGINES:
                raise ValueError(f"unknown engine {e!r}; the portfolio runs {', '.join(ENGINES)}")
            e = BACKENDS[e]
        backends.append(e)
    names = [b.name for b in backends]
    if len(set(names)) != len(names):
        raise ValueError(f"engine names must differ, got {names}")
    mdl = Model.of(inst)
    unit = mdl.unit
    options = options.prepared(inst)
    lb_theory, known, time_limit = options.lb_theory, options.known, options.time_limit
    assert lb_theory is not None
    best_ms, best_orders, source = None, None, ""
    if known is not None:
        theory_guard(inst, known[2], lb_theory)
        best_ms, best_orders, source = ceil_units(known[2], unit), known[1].orders, known[0]
    best_lower = ceil_units(lb_theory, unit)
    if "search" in names:
        best_lower = max(best_lower, Search(mdl).root_bound())
    stats: dict = {"lower_bound_theory": lb_theory, "independent": not options.use_theory, "engines": [],
             "proof": None, "interrupted": False}

    def answer(status: Optional[str] = None, nodes: int = 0) -> SolveResult:
        seconds = time.monotonic() - t0
        lower = Fraction(best_lower, unit)
        if best_orders is None:
            return SolveResult(status or "unknown", None, None, lower, nodes, seconds,
                               engine_name, "", stats)
        sched = Schedule(inst, tuple(tuple(o) for o in best_orders), source=source)
        ms = checked(inst, sched)
        theory_guard(inst, ms, lb_theory)
        return SolveResult(status_of(ms, lower), sched, ms, lower, nodes, seconds, engine_name,
                           source, stats)

    if best_ms is not None and best_ms <= best_lower:
        stats["proof"] = "root"
        return answer()
    if multiprocessing.current_process().daemon:  # may not start processes
        if len(backends) == 1:
            return backends[0].solve(inst, options, channel)
        if set(names) != set(ENGINES):  # e.g. the synthesis, then CP-SAT: one after the other
            return _in_turn(inst, options, channel, backends, engine_name)
        return solve_sequential(inst, options, channel=channel, engine_name=engine_name)

    ctx = _context()
    q = ctx.Queue()
    upper = ctx.RawValue("q", -1 if best_ms is None else best_ms)
    lower = ctx.RawValue("q", best_lower)
    stop = ctx.RawValue("b", 0)
    procs = {}
    # the limit is a wall-clock promise: the engines end a margin before it, so that their
    # last reports arrive by ``end``; past ``end`` the parent waits DRAIN_OTHERS at most
    end = None if time_limit is None else t0 + time_limit
    left = None if end is None else end - time.monotonic()
    engine_options = options.replace(
        time_limit=None if left is None else max(0.01, left - min(ENGINE_MARGIN, left / 10)),
        catch_sigint=False)
    for backend in backends:
        name = backend.name
        p = ctx.Process(target=_worker, name=f"pipebounds-{name}", daemon=True,
                        args=(backend, inst, engine_options, q, upper, lower, stop, os.getpid()))
        p.start()
        procs[name] = p
    channel.bound(engine_name, best_lower)
    if best_ms is not None:
        channel.incumbent(source, best_ms, best_orders)
    alive = set(procs)
    nodes = 0
    final = None
    errors: list[str] = []

    def take(msg) -> Optional[str]:
        """Adopt one engine message (a schedule, a bound, an engine's own answer, a failure);
        the engine's status when it is a proof (``optimal``, ``infeasible``), else None."""
        nonlocal best_ms, best_orders, source, best_lower, nodes
        if isinstance(msg, _Failed):
            alive.discard(msg.engine)
            errors.append(f"{msg.engine}: {msg.error}")
            return None
        name = msg.engine
        found = msg if isinstance(msg, _Incumbent) else (
            msg if isinstance(msg, _Done) and msg.makespan is not None else None)
        if found is not None and (best_ms is None or found.makespan < best_ms):
            best_ms, best_orders, source = found.makespan, found.orders, name
            upper.value = found.makespan
            channel.incumbent(name, found.makespan, found.orders)
        if isinstance(msg, (_Bound, _Done)) and msg.lower > best_lower:
            best_lower = msg.lower
            lower.value = msg.lower
            channel.bound(name, msg.lower)
        if not isinstance(msg, _Done):
            return None
        alive.discard(name)
        nodes += msg.nodes
        stats["engines"].append((name, msg.status, msg.seconds))
        return msg.status if msg.status in ("optimal", "infeasible") else None

    def proof(status: Optional[str], engine: str) -> bool:
        """Record an engine's proof, or the best schedule meeting the best bound; True when
        the answer is decided."""
        nonlocal final
        if status is not None:
            final = status if status == "infeasible" else final
            stats["proof"] = stats["proof"] or engine
            return True
        if best_ms is not None and best_ms <= best_lower:
            stats["proof"] = stats["proof"] or "combined"
            return True
        return False

    try:
        while alive:
            if channel.stop():
                stats["interrupted"] = True
                break
            if end is not None and time.monotonic() >= end:
                break
            try:
                msg = q.get(timeout=0.05)
            except queue.Empty:
                continue
            if proof(take(msg), getattr(msg, "engine", "")):
                break
    finally:
        stop.value = 1
        drained = time.monotonic()
        while alive:  # the engines' last words: node counts, a better schedule
            wait = DRAIN if "search" in alive else DRAIN_OTHERS
            until = drained + wait if end is None else min(drained + wait,
                                                           max(end, drained) + DRAIN_OTHERS)
            if time.monotonic() >= until:
                break
            try:
                msg = q.get(timeout=0.05)
            except queue.Empty:
                continue
            proof(take(msg), getattr(msg, "engine", ""))
        stats["unreported"] = sorted(alive)
        for p in procs.values():
            if p.is_alive():
                p.terminate()
        for p in procs.values():
            p.join(timeout=2)
            if p.is_alive():
                p.kill()
                p.join()
    reported = {e for e, _, _ in stats["engines"]}
    stats["engines"] += [(e, "stopped", time.monotonic() - t0) for e in procs if e not in reported]
    if errors:
        raise AssertionError("portfolio engine failed: " + "; ".join(errors))
    if final == "infeasible":
        return SolveResult("infeasible", None, None, Fraction(best_lower, unit), nodes,
                           time.monotonic() - t0, engine_name, "", stats)
    return answer(nodes=nodes)


def solve_sequential(inst: Instance, options: SolveOptions = SolveOptions(),
                     search_seconds: Optional[float] = None, channel: Channel = SILENT,
                     engine_name: str = "auto") -> SolveResult:
    """The engines one after the other in this process: the search for a slice of the time
    (``search_seconds``, default from :data:`SEQUENTIAL_SEARCH_SLICE`), then CP-SAT for what it
    leaves open, hinted with the search's best schedule. The answer combines both runs (the best
    schedule of either, the larger proven bound: each is a proof, so the combination is sound);
    ``stats["engines"]`` lists the runs as ``(engine, status, seconds)``."""
    t0 = time.monotonic()
    time_limit, use_theory = options.time_limit, options.use_theory
    share, cap = SEQUENTIAL_SEARCH_SLICE
    first = cap if time_limit is None else min(share * time_limit, cap)
    if search_seconds is not None:
        first = search_seconds if time_limit is None else min(search_seconds, time_limit)
    a = BACKENDS["search"].solve(inst, options.replace(time_limit=first), channel)
    runs = [("search", a.status, a.seconds)]
    if a.status in ("optimal", "infeasible") or channel.stop():
        return SolveResult(a.status, a.schedule, a.makespan, a.lower_bound, a.nodes, a.seconds,
                           engine_name, a.source, dict(a.stats, engines=runs))
    left = None if time_limit is None else max(0.1, time_limit - (time.monotonic() - t0))
    # the search already started from the known schedules: hand CP-SAT its best one instead of
    # computing them again
    c = BACKENDS["cpsat"].solve(inst, options.replace(
        time_limit=left, use_known=False, known=None, lb_theory=None,
        incumbent=a.schedule if (options.use_known or options.incumbent is not None) else None),
        channel)
    runs.append(("cpsat", c.status, c.seconds))
    if c.status == "infeasible":
        return SolveResult("infeasible", None, None, c.lower_bound, a.nodes + c.nodes,
                           time.monotonic() - t0, engine_name, "cpsat",
                           dict(c.stats, engines=runs))
    return _combined((a, c), dict(a.stats, engines=runs, independent=not use_theory), t0,
                     engine_name)


def _combined(results, stats: dict, t0: float, engine_name: str) -> SolveResult:
    """One answer from runs of engines on the same instance: the best schedule of any with the
    largest proven bound (each a proof, so the combination is one), ``unknown`` when none found
    a schedule."""
    pick = min((r for r in results if r.makespan is not None), key=lambda r: r.makespan,
               default=None)
    lower = max(r.lower_bound for r in results)
    nodes = sum(r.nodes for r in results)
    if pick is None:
        return SolveResult("unknown", None, None, lower, nodes, time.monotonic() - t0,
                           engine_name, "", stats)
    return SolveResult(status_of(pick.makespan, lower), pick.schedule, pick.makespan, lower,
                       nodes, time.monotonic() - t0, engine_name, pick.source or pick.engine,
                       stats)


def _in_turn(inst: Instance, options: SolveOptions, channel: Channel, backends,
             engine_name: str) -> SolveResult:
    """``backends`` one after the other in this process (a daemon process may not start
    others), each given the time left; their answers :func:`_combined`."""
    t0 = time.monotonic()
    runs, results = [], []
    for backend in backends:
        left = None if options.time_limit is None else max(
            0.05, options.time_limit - (time.monotonic() - t0))
        r = backend.solve(inst, options.replace(time_limit=left), channel)
        runs.append((backend.name, r.status, r.seconds))
        results.append(r)
        if r.status in ("optimal", "infeasible") or channel.stop():
            break
    if results[-1].status == "infeasible":
        return SolveResult("infeasible", None, None, max(r.lower_bound for r in results),
                           sum(r.nodes for r in results), time.monotonic() - t0, engine_name,
                           "", {"engines": runs})
    return _combined(results, {"engines": runs, "independent": not options.use_theory}, t0,
                     engine_name)


def _portfolio(inst: Instance, options: SolveOptions, channel: Channel) -> SolveResult:
    return solve_portfolio(inst, options, channel)


register(FunctionBackend("portfolio", _portfolio, "search and CP-SAT side by side, sharing "
                         "incumbent and bound; the first proof wins", memory_bytes=True))
register(FunctionBackend("auto", _portfolio, "an alias of portfolio", memory_bytes=True))
