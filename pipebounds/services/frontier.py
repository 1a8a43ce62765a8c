"""The memory frontier of an instance: ``K*`` and the curve ``OPT(K)``, ``K = 1 .. K*``
(docs/theory_frontier.md; formulas in :mod:`bounds.frontier`).

``K*`` is the least ``K`` with ``OPT(K) = OPT(inf)``. :func:`frontier` brackets it:

* ``OPT(inf)``: T1 for single-wave fused (KF0), else the lower bound at ``K = inf`` where it is
  flagged exact, else an exact solve (``time_limit``);
* ``K_star_low``: the least ``K`` whose proven lower bound is at most ``OPT(inf)``
  (:func:`bounds.frontier.K_star_low`), raised past every ``K`` where an exact solve *proves*
  ``OPT(K) > OPT(inf)``;
* ``K_star_high``: the least ``K >= K_star_low`` with a *certificate*: a valid schedule of peak
  ``<= K`` and makespan ``OPT(inf)``, from :func:`pipebounds.constructions.frontier.frontier_schedule`
  (single-wave fused), 1F1B (KF0), or the exact solver; ``v m`` always works (memory never
  binds).

``K_star_exact`` iff the two meet. Every certificate is simulated; a solver answer counts only
when its status says so (a schedule reaching ``OPT(inf)``, or a proven lower bound above it).
The curve: for each ``K`` from 1 to ``K*`` (``K_star_high`` when not exact), the lower bound,
the optimum when known (``OPT(inf)`` for ``K >= K*``; a lower bound flagged exact; an optimal
solve when ``solve_curve``), and whether it is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from bounds import lower_bound
from bounds import frontier as kf
from schedules.deadline import NO_DEADLINE, Deadline
from schedules.instance import Instance
from schedules.progress import Progress, progress_for
from schedules.schedule import Schedule
from schedules.simulate import simulate
from schedules.instance import require_one_direction


@dataclass(frozen=True)
class CurvePoint:
    K: int
    lower_bound: Fraction
    optimum: Optional[Fraction]
    exact: bool
    basis: str = ""


@dataclass(frozen=True)
class Frontier:
    """``K_star`` is ``K_star_high`` (an achievable memory) when not exact."""

    instance: Instance
    optimum_unconstrained: Optional[Fraction]
    K_star_low: int
    K_star_high: Optional[int]
    curve: tuple[CurvePoint, ...]
    certificate: Optional[Schedule] = field(default=None, compare=False)
    basis: str = ""

    @property
    def K_star_exact(self) -> bool:
        return self.K_star_high is not None and self.K_star_low == self.K_star_high

    @property
    def K_star(self) -> Optional[int]:
        return self.K_star_high

    def to_row(self) -> dict:
        """One JSON-able row (the CLI's JSON object with the instance): used by
        ``pipebounds sweep --task frontier``."""
        return {"instance": self.instance.to_dict(), **frontier_report(self)}

    def __repr__(self) -> str:
        from schedules.brief import brief_repr, instance_brief

        return brief_repr("Frontier", instance=instance_brief(self.instance),
                          K_star=self.K_star, K_star_exact=self.K_star_exact,
                          optimum_unconstrained=self.optimum_unconstrained,
                          curve_points=len(self.curve))

def _certified(sched: Optional[Schedule], K: int, target: Fraction) -> Optional[Schedule]:
    if sched is None:
        return None
    r = simulate(sched)
    if r.valid and r.makespan == target and max(r.peak_memory) <= K:
        return sched
    return None


def _known_schedule(inst: Instance, K: int, target: Fraction,
                   deadline: Deadline = NO_DEADLINE) -> Optional[Schedule]:
    """A known schedule (every applicable generator, fitted to ``K`` by rematerialization)
    that reaches ``target`` with peak ``<= K``, or None (also once ``deadline`` has passed:
    the families not reached are not tried)."""
    from schedules.generators import GENERATORS, GeneratorError, generate
    from schedules.remat import RematError

    for name in GENERATORS:
        if deadline.expired():
            return None
        try:
            sched = generate(name, inst, deadline=deadline)
        except (GeneratorError, RematError):
            continue
        if _certified(sched, K, target) is not None:
            return sched
    return None


MIN_SOLVE_SECONDS = 0.05
"""A solve that would get less than this (the run's deadline is that close) is not started."""


def _solve(inst: Instance, time_limit: float, deadline: Deadline = NO_DEADLINE):
    """An exact solve of ``inst`` within ``time_limit`` and ``deadline``, the solver's import
    counted; None when no time is left for it."""
    from pipebounds.search import solve

    engine = "cpsat"
    try:
        import pipebounds.search.cpsat  # noqa: F401 - OR-tools: a second to import when loaded
    except ImportError:
        engine = "search"
    left = deadline.remaining()
    limit = time_limit if left is None else min(time_limit, left)
    if limit < MIN_SOLVE_SECONDS or deadline.expired():
        return None
    return solve(inst, time_limit=limit, engine=engine, use_theory=False)


def frontier(inst: Instance, time_limit: float = 10.0, nodes: Optional[int] = None,
             solve_curve: bool = False, progress: Progress = None,
             deadline: Deadline = NO_DEADLINE) -> Frontier:
    """The frontier of ``inst`` (its ``K`` ignored). ``time_limit``: seconds of exact search
    per question (0: none); ``nodes``: budget of the construction search. ``progress``
    (:mod:`schedules.progress`): one step per memory limit ``K`` looked at, in the search for
    ``K*`` and then along the curve (at most ``2 K_max`` steps). ``deadline``
    (:class:`schedules.deadline.Deadline`): the whole run's time; once it has passed no more
    ``K`` is tried and no solve starts, so ``K*`` may be left as a range (``K_star_low`` and
    ``K_star_high``, both proven), never guessed."""
    require_one_direction(inst, "frontier")

    from pipebounds.constructions.frontier import DEFAULT_NODES, frontier_schedule

    base = inst.with_(K=None)
    single = kf._single_wave_fused(base)
    opt_inf = kf.unconstrained_optimum(base)
    basis = "KF0 (fill-drain, Theorem 1)" if single else "bound flagged exact"
    if opt_inf is None and time_limit > 0:
        r = _solve(base, time_limit, deadline)
        if r is not None and r.status == "optimal":
            opt_inf, basis = r.makespan, "exact solve"
    K_max = kf.one_f_one_b_memory(base) if single else kf.memory_never_binds(base)
    if opt_inf is None:
        curve = tuple(CurvePoint(K, lower_bound(base.with_(K=K)).value, None, False)
                      for K in range(1, K_max + 1))
        return Frontier(base, None, 1, K_max, curve, None, "OPT(inf) unknown")
    low = kf.K_star_low(base, opt_inf, K_max)
    bar = progress_for(progress, 2 * K_max, "frontier")
    high, cert = None, None
    proven_above: dict = {}  # K -> a solve proving OPT(K) > OPT(inf)
    K = low
    while K <= K_max and not deadline.expired():
        bar.set_postfix_str(f"K*: K={K}")
        bar.update(1)
        if single:
            cert = _certified(frontier_schedule(base.with_(K=K), K,
                                                nodes or DEFAULT_NODES, deadline), K, opt_inf)
            if cert is None and K == K_max:
                from pipebounds.constructions.single_wave import one_f_one_b
                cert = _certified(one_f_one_b(base.with_(K=K)), K, opt_inf)
        if cert is None:
            cert = _known_schedule(base.with_(K=K), K, opt_inf, deadline)
        if cert is None and K == kf.memory_never_binds(base):
            high = K  # K = v m: memory never binds
            break
        if cert is None and time_limit > 0 and not deadline.expired():
            r = _solve(base.with_(K=K), time_limit, deadline)
            if r is None:
                pass
            elif r.schedule is not None and r.makespan == opt_inf:
                cert = _certified(r.schedule, K, opt_inf)
            elif r.lower_bound > opt_inf and low == K:
                proven_above[K] = r
                low = K + 1
        if cert is not None:
            high = K
            break
        K += 1
    if high is None and not single:
        high = K_max  # K >= v m: memory never binds, OPT(K) = OPT(inf)
    if high is None and single and K <= K_max:  # stopped early (deadline, signal): 1F1B at
        from pipebounds.constructions.single_wave import one_f_one_b  # KF0's K, simulated

        top = _certified(one_f_one_b(base.with_(K=K_max)), K_max, opt_inf)
        if top is not None:
            high, cert = K_max, top
    from pipebounds.certify import certify

    points: list[CurvePoint] = []
    for K in range(1, (high or K_max) + 1):
        bar.set_postfix_str(f"curve: K={K}")
        bar.update(1)
        lb = lower_bound(base.with_(K=K))
        known = certify(base.with_(K=K), lb=lb)  # lookups only: theorem, checked range, table
        if high is not None and K >= high:
            points.append(CurvePoint(K, lb.value, opt_inf, True, "certificate"))
        elif known.optimum is not None:
            points.append(CurvePoint(K, lb.value, known.optimum, True, known.basis or "bound"))
        elif K in proven_above:  # an exact solve proved OPT(K) > OPT(inf)
            r = proven_above[K]
            ok = r.status == "optimal"
            points.append(CurvePoint(K, max(lb.value, r.lower_bound), r.makespan if ok else None,
                                    ok, "solve"))
        elif solve_curve and time_limit > 0 and not deadline.expired():
            r = _solve(base.with_(K=K), time_limit, deadline)
            found = r.makespan if r is not None and r.status == "optimal" else None
            points.append(CurvePoint(K, lb.value, found, found is not None,
                                    "solve" if found is not None else ""))
        else:
            points.append(CurvePoint(K, lb.value, None, False))
    bar.close()
    return Frontier(base, opt_inf, low, high, tuple(points), cert, basis)


def frontier_report(fr: Frontier) -> dict:
    """The CLI.md JSON object of a frontier: each quantity a JSON number with its exact string
    beside it (``optimum_unconstrained`` and ``optimum_unconstrained_exact``; in each curve point
    ``lower_bound``/``lower_bound_exact`` and ``optimum``/``optimum_exact``). ``K_star_exact``
    is the contract's flag "K* is exact" (a boolean), not an exact string."""
    from schedules.json_numbers import quantity

    out = {"K_star": fr.K_star, "K_star_exact": fr.K_star_exact,
           **quantity("optimum_unconstrained", fr.optimum_unconstrained),
           "optimum_unconstrained_basis": fr.basis}
    if not fr.K_star_exact:
        out["K_star_low"], out["K_star_high"] = fr.K_star_low, fr.K_star_high
    if fr.instance.v == 1 and not fr.instance.split and not fr.instance.c:
        out["closed_form"] = {"KF0_high": kf.one_f_one_b_memory(fr.instance),
                              "KF1_single_slot_free": kf.single_slot_free(fr.instance),
                              "KF2_low": kf.memory_time_threshold(fr.instance),
                              "KF3": kf.kf3_value(fr.instance)}
    out["curve"] = [{"K": p.K, **quantity("lower_bound", p.lower_bound),
                     **quantity("optimum", p.optimum), "exact": p.exact} for p in fr.curve]
    return out
