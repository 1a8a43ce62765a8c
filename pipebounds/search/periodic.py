"""Periodic (modulo) schedules: how fast a pipeline can run in steady state under ``K``.

A *periodic template* ``(q, L)`` gives every op of ``q`` microbatches ``t = 0..q-1`` a start time,
and repeats them with period ``L``: op ``o`` of microbatch ``j = n q + t`` starts at
``time(t, o) + n L``. Every GPU runs ``q`` microbatches' work per period, so the schedule's
*slope* (makespan per microbatch as ``m`` grows) is ``L / q``. Each pair ``(t, s)`` either keeps
its activation (live from ``F(t,s)`` to its releasing op, MODEL.md) or is recomputed (an ``R``
between ``F`` and the backward, live from ``R`` to the release), the same in every period.

The template is valid when the infinite repetition is: on every GPU no two ops overlap and at
most ``K`` activations are live at every instant. Every template microbatch runs inside
``[0, H]`` (``H``, the *horizon*, bounds a microbatch's span), so only copies ``n`` with
``|n - n'| <= H / L`` can meet, and the CP-SAT model below lays out ``ceil(H / L) + 2`` copies
of the template on a line, with a no-overlap and a cumulative (capacity ``K``) constraint per
GPU: this is exact for the infinite repetition (every pair of copies that can meet is present,
and from copy ``ceil(H/L) + 1`` on the line holds the steady state's full load).

**Unrolling.** :meth:`PeriodicTemplate.unroll` keeps the ops of microbatches ``0..m-1`` of the
repetition, in the order of their template times on each GPU, and lets
:func:`schedules.simulate.simulate` time them ASAP. The orders are valid for every ``m``: the
template times are a timing of them (no deadlock), and the live set at any point of a GPU's
order is a subset of the repetition's, so memory stays ``<= K`` (peak memory is a property of
the orders, MODEL.md). The makespan is at most ``(ceil(m / q) - 1) L + H`` (in units), so it
grows with slope ``L / q``; the fill and drain are the repetition's own, not optimized.

**What it measures.** A lower bound ``LB(m)`` that is valid has a slope
``lim (LB(m + D) - LB(m)) / D`` (:func:`bound_slope`) that no valid schedule family can beat: a
template with ``L / q`` below it would give, at large ``m``, a valid schedule below the bound.
So the search is a falsification check of the bounds' asymptotic form, and, where it finds a
template at the bound's slope (up to the tolerance of :func:`bound_slope`), a proof that the
bound's slope is the optimal one: then ``OPT(m) - LB(m)`` stays bounded as ``m`` grows (by the
template's ``H + L`` plus the bound's rounding), and what is left at finite ``m`` is the fill
and the drain. ``status = "infeasible"`` says only that no template with this ``(q, L)`` exists
in which every op of a microbatch starts at most ``H - L + 1`` after that microbatch's first
forward and every activation is live at most ``H`` (the model's start times and holds lie in
``[0, H]`` after a normalisation that loses no
template: each template microbatch is shifted by whole periods so that its first forward starts
in ``[0, L)``, and the microbatches are renumbered so that those starts increase, the first at
0).

References: modulo scheduling of a repeated task graph (B. R. Rau, *Iterative modulo
scheduling*, MICRO 1994); docs/synthesis.md, *Periodic steady state*.

>>> from schedules import Instance, simulate
>>> inst = Instance(P=4, m=16, K=2, f=1, b=2)
>>> res = periodic_template(inst, q=3, L=11, time_limit=20)
>>> res.status, res.template.slope
('feasible', Fraction(11, 3))
>>> periodic_template(inst, q=2, L=7, time_limit=20).status  # 7/2 is below T2's slope 39/11
'infeasible'
>>> r = simulate(res.template.unroll(16))
>>> r.valid, max(r.peak_memory) <= 2
(True, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional, Sequence

from schedules.errors import InputError
from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.stopping import keep_sigint, watchdog


class PeriodicError(InputError):
    """An instance or template the periodic model does not cover (a clear message, no
    traceback in the CLI)."""


@dataclass(frozen=True)
class PeriodicTemplate:
    """A valid periodic template of ``instance`` (``m`` plays no part): ``q`` microbatches per
    period ``L`` (in units of ``1/instance.unit``), start times ``times[(t, s, kind)]`` in the
    same units, and the pairs ``(t, s)`` that keep their activation (``kept``); the others have
    an ``R`` at ``times[(t, s, "R")]``."""

    instance: Instance
    q: int
    L: int
    horizon: int
    times: dict
    kept: frozenset

    @property
    def period(self) -> Fraction:
        """The period in time: ``L / unit``."""
        return Fraction(self.L, self.instance.unit)

    @property
    def slope(self) -> Fraction:
        """Makespan per microbatch of the repetition: ``L / (q * unit)``."""
        return self.period / self.q

    def unroll(self, m: int) -> Schedule:
        """The orders of microbatches ``0..m-1`` of the repetition (module docstring)."""
        if m < 1:
            raise PeriodicError(f"m must be at least 1, got {m}")
        inst = self.instance.with_(m=m)
        kinds = _kinds(inst)
        events: list[list[tuple[int, Op]]] = [[] for _ in range(inst.P)]
        for n in range(math.ceil(m / self.q)):
            for t in range(self.q):
                j = n * self.q + t
                if j >= m:
                    break
                for s in range(inst.S):
                    p = inst.gpu(s)
                    for kind in kinds:
                        events[p].append((self.times[t, s, kind] + n * self.L, Op(s, kind, j)))
                    if (t, s) not in self.kept:
                        events[p].append((self.times[t, s, "R"] + n * self.L, Op(s, "R", j)))
        orders = tuple(tuple(op for _, op in sorted(ev, key=lambda e: e[0])) for ev in events)
        return Schedule(inst, orders, source=f"periodic[q={self.q},L={self.period}]")


@dataclass(frozen=True)
class PeriodicResult:
    """The outcome of one ``(q, L)`` search: ``status`` is ``feasible`` (``template`` is one),
    ``infeasible`` (proven: no template with this ``q``, ``L`` and ``horizon``) or ``unknown``
    (the time limit came first)."""

    status: str
    q: int
    L: int
    horizon: int
    seconds: float
    template: Optional[PeriodicTemplate] = None


def check_covered(inst: Instance) -> None:
    """Raise :class:`PeriodicError` naming why the periodic model does not cover ``inst``
    (two directions, ``F&B`` ops, a byte model, ``K`` infinite)."""
    if inst.directions != 1 or inst.overlapped:
        raise PeriodicError("periodic templates need one direction and no F&B ops")
    if inst.memory is not None or inst.K is None:
        raise PeriodicError("periodic templates need a memory limit K in activations "
                            "(no byte model, K finite)")


def _units(inst: Instance, kind: str, s: int) -> int:
    return int(inst.duration_of(kind, s) * inst.unit)


def _kinds(inst: Instance) -> tuple[str, ...]:
    """The ops every pair runs besides a recompute: ``F`` and the backward (``B``, or ``I, W``);
    the second is the one on the chain."""
    return ("F", "I", "W") if inst.split else ("F", "B")


def default_horizon(inst: Instance, L: int, periods: int = 2) -> int:
    """A microbatch's span allowed in the template: its chain (every forward and every
    input-gradient op, with the delays, and a ``W``) plus ``periods`` periods, in units."""
    back = _kinds(inst)[1]
    c = int(inst.c * inst.unit)
    chain = sum(_units(inst, "F", s) + _units(inst, back, s) for s in range(inst.S))
    hops = sum(inst.gpu(s) != inst.gpu(s + 1) for s in range(inst.S - 1))
    extra = _units(inst, "W", 0) if inst.split else 0
    return chain + c * hops * 2 + extra + periods * L


def periodic_template(inst: Instance, q: int, L: int, horizon: Optional[int] = None,
                      time_limit: float = 30.0, workers: int = 2,
                      stop: Optional[Callable[[], bool]] = None) -> PeriodicResult:
    """Search a periodic template with ``q`` microbatches per period ``L`` (in units of
    ``1/inst.unit``) by CP-SAT (module docstring); ``horizon`` in the same units (default
    :func:`default_horizon`). ``stop``: the caller's stop request (a command's signal flag),
    polled during the search, which then ends ``unknown`` unless a template was found; with it
    CP-SAT leaves SIGINT to the caller. The caller's SIGINT handler is kept in any case."""
    check_covered(inst)
    if q < 1 or L < 1:
        raise PeriodicError(f"q and L must be at least 1, got q={q}, L={L}")
    from schedules.ortools_import import cp_model as _load

    cp_model = _load()
    K = inst.K
    S, split = inst.S, inst.split
    kinds = _kinds(inst)
    back, rel = kinds[1], kinds[-1]
    c = int(inst.c * inst.unit)
    H = default_horizon(inst, L) if horizon is None else int(horizon)
    copies = math.ceil(H / L) + 2
    g = [inst.gpu(s) for s in range(S)]
    M = cp_model.CpModel()
    x: dict = {}
    ops: list[list] = [[] for _ in range(inst.P)]
    live: list[list] = [[] for _ in range(inst.P)]
    for t in range(q):
        for s in range(S):
            for kind in kinds + ("R",):
                x[t, s, kind] = M.NewIntVar(0, H, f"{kind}{t}_{s}")
            x[t, s, "keep"] = M.NewBoolVar(f"keep{t}_{s}")
        for s in range(S):
            F, Bk = x[t, s, "F"], x[t, s, back]
            if s + 1 < S:
                hop = c if g[s] != g[s + 1] else 0
                M.Add(x[t, s + 1, "F"] >= F + _units(inst, "F", s) + hop)
                M.Add(Bk >= x[t, s + 1, back] + _units(inst, back, s + 1) + hop)
            else:
                M.Add(Bk >= F + _units(inst, "F", s))
            if split:
                M.Add(x[t, s, "W"] >= Bk + _units(inst, "I", s))
            keep, R = x[t, s, "keep"], x[t, s, "R"]
            M.Add(R == F).OnlyEnforceIf(keep)  # R's variable is the store time
            M.Add(R >= F + _units(inst, "F", s)).OnlyEnforceIf(keep.Not())
            M.Add(R + _units(inst, "R", s) <= Bk).OnlyEnforceIf(keep.Not())
            release_end = x[t, s, rel] + _units(inst, rel, s)
            hold = M.NewIntVar(1, H, f"hold{t}_{s}")
            M.Add(hold == release_end - R)
            for n in range(copies):
                off = n * L
                for kind in kinds:
                    ops[g[s]].append(M.NewFixedSizeIntervalVar(x[t, s, kind] + off,
                                                               _units(inst, kind, s), ""))
                ops[g[s]].append(M.NewOptionalFixedSizeIntervalVar(
                    R + off, _units(inst, "R", s), keep.Not(), ""))
                live[g[s]].append(M.NewIntervalVar(R + off, hold, release_end + off, ""))
    for p in range(inst.P):
        M.AddNoOverlap(ops[p])
        M.AddCumulative(live[p], [1] * len(live[p]), K)
    f0 = _units(inst, "F", 0)
    M.Add(x[0, 0, "F"] == 0)
    for t in range(q):  # symmetry breaking (module docstring): loses no template
        M.Add(x[t, 0, "F"] <= L - 1)
        if t + 1 < q:
            M.Add(x[t + 1, 0, "F"] >= x[t, 0, "F"] + f0)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    if stop is not None:
        solver.parameters.catch_sigint_signal = False
    t0 = time.perf_counter()
    with keep_sigint(), watchdog(solver.stop_search, stop):
        st = solver.Solve(M)
    seconds = time.perf_counter() - t0
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        times = {k: solver.Value(v) for k, v in x.items() if k[2] != "keep"}
        kept = frozenset((t, s) for t in range(q) for s in range(S)
                         if solver.Value(x[t, s, "keep"]))
        tpl = PeriodicTemplate(inst, q, L, H, times, kept)
        return PeriodicResult("feasible", q, L, H, seconds, tpl)
    status = "infeasible" if st == cp_model.INFEASIBLE else "unknown"
    return PeriodicResult(status, q, L, H, seconds)


def _simplest_in(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction with the smallest denominator in ``[lo, hi]`` (``0 < lo <= hi``; the
    Stern-Brocot descent by continued fractions)."""
    fl = lo.numerator // lo.denominator
    if Fraction(fl) == lo or fl + 1 <= hi:
        return Fraction(fl if Fraction(fl) == lo else fl + 1)
    # lo and hi share the integer part fl: recurse on the reciprocals of the fractional parts
    return fl + 1 / _simplest_in(1 / (hi - fl), 1 / (lo - fl))


def bound_slope(inst: Instance) -> tuple[Fraction, Fraction]:
    """The bound's makespan per microbatch at large ``m``, with its tolerance ``(s, tol)``.

    The finite difference ``e = (LB(2 M) - LB(M)) / M`` of :func:`bounds.evaluate.lower_bound`
    at the largest ``M`` the instance limits allow (``2 M S <= MAX_PAIRS``). The memory bounds
    are eventually affine in ``m`` up to a bounded term (the rounding of the minimising number of
    recomputes); the tolerance takes that term as at most ``J = 4`` times the longest op (true
    of T2's and S3's forms, a minimum over integer ``r`` of linear terms; assumed, not checked,
    for the others), so the true slope lies within ``tol = 2 J / M`` of ``e``; ``s`` is the
    fraction with the smallest denominator in ``[e - tol, e + tol]`` (T2's slope
    ``B + f r*/m`` has the denominator ``K f + (d - 1) B``, recovered when it is small), so
    ``|s - slope| <= 2 tol``. A template whose ratio is below ``s - 2 tol`` refutes the bound
    (it would give, at large ``m``, valid schedules below it).
    """
    from bounds.evaluate import lower_bound
    from schedules.limits import MAX_PAIRS

    M = max(1, MAX_PAIRS // (2 * inst.S))
    a = lower_bound(inst.with_(m=M)).value
    b = lower_bound(inst.with_(m=2 * M)).value
    e = Fraction(b - a) / M
    longest = max(max(inst.durations_of(k)) for k in _kinds(inst))
    tol = 2 * 4 * Fraction(longest) / M
    return _simplest_in(max(e - tol, Fraction(1, 10**9)), e + tol), tol


def candidate_periods(slope: Fraction, unit: int, q_max: int = 12) -> list[tuple[int, int]]:
    """``(q, L)`` for ``q = 1..q_max`` with ``L = ceil(q * slope * unit)`` (the shortest period
    not below the slope), sorted by ``L / q`` and then ``q``, one per distinct ratio (its
    smallest ``q``)."""
    seen: dict[Fraction, tuple[int, int]] = {}
    for q in range(1, q_max + 1):
        L = math.ceil(q * slope * unit)
        r = Fraction(L, q)
        if r not in seen:
            seen[r] = (q, L)
    return [seen[r] for r in sorted(seen)]


def best_periodic(inst: Instance, time_limit: float = 10.0, q_max: int = 12,
                  periods: Sequence[int] = (1,), per_try: Optional[float] = None,
                  workers: int = 2, slope: Optional[Fraction] = None,
                  on_try: Optional[Callable[[PeriodicResult], None]] = None,
                  stop: Optional[Callable[[], bool]] = None) -> Optional[PeriodicResult]:
    """The first feasible template among :func:`candidate_periods` of the bound's slope
    (increasing ratio ``L / q``), within ``time_limit`` wall seconds in all (``math.inf``: no
    total limit). Each ``(q, L)`` is searched with the horizon of the chain plus ``p`` periods
    (:func:`default_horizon`) for each ``p`` of ``periods`` in turn while the search is
    ``unknown`` (a shorter horizon restricts the templates but is often decided faster,
    docs/synthesis.md), each search getting ``per_try`` seconds (default a quarter of the
    limit, at least 1) or what is left. ``slope``: the bound's slope when the caller has it
    (default :func:`bound_slope`); ``on_try`` gets every search's result; ``stop``: the
    caller's stop request (:func:`periodic_template`), which ends the loop. None when no
    candidate is found in the time (an incomplete search: it proves nothing)."""
    check_covered(inst)
    t0 = time.perf_counter()
    if slope is None:
        slope, _ = bound_slope(inst)
    if per_try is None:
        per_try = max(1.0, time_limit / 4)
    for q, L in candidate_periods(slope, inst.unit, q_max):
        for p in periods:
            left = time_limit - (time.perf_counter() - t0)
            if left <= 0.05 or (stop is not None and stop()):
                return None
            res = periodic_template(inst, q, L, horizon=default_horizon(inst, L, p),
                                    time_limit=min(left, per_try), workers=workers, stop=stop)
            if on_try is not None:
                on_try(res)
            if res.template is not None:
                return res
            if res.status != "unknown":
                break
    return None
