"""The best known schedule for a memory budget: :func:`best` (``pipebounds best``; docs/remat.md).

Every applicable family of :data:`schedules.generators.GENERATORS` is generated in its natural
order (memory unconstrained), then optimally rematerialized to the budget by
:func:`schedules.remat_optimal.optimal_remat` (its order kept, every recompute choice optimized,
forward recomputes; ``backward=True`` adds the paper's free-after-``I``); the families are ranked
by makespan, beside the theory's lower bound (:func:`bounds.lower_bound`, any order), the exact
optimum when :func:`pipebounds.search.solve` proves it within ``solve_time_limit``, and the gap
of the best family to the optimum (or, when unknown, to the lower bound).

With a byte budget the lower bound is the one of the unconstrained instance (a memory limit only
lengthens schedules) and no optimum is searched (the exact engines count activations).
With ``backward=True`` (split form) the lower bound and the optimum are those of the full model,
backward recomputes included: ``bounds.lower_bound(inst, backward_remat=True)`` (docs/theory.md
A.11) and the CP-SAT model with backward ``R`` ops, so the gap is never negative.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from schedules import Instance, Schedule
from schedules.generators import GENERATORS, GeneratorError
from schedules.progress import Progress, progress_for
from schedules.remat import RematError
from schedules.remat_optimal import MODEL_GRACE, RematResult, optimal_remat
from schedules.instance import require_one_direction

FAIL_LAST = {"optimal": 0, "feasible": 0, "unknown": 1, "infeasible": 2}


@dataclass(frozen=True)
class Entry:
    """One family: its optimally rematerialized schedule (``result``) and makespan. ``order``
    is ``natural`` (the family's own order) or ``fit_memory`` (the order after
    :func:`schedules.remat.fit_memory` moved some ``W`` ops earlier to make room, which can fit
    where the natural order cannot)."""

    family: str
    result: RematResult
    order: str = "natural"
    natural: Optional[RematResult] = None  # the natural order's result (None: it is ``result``)

    @property
    def natural_result(self) -> RematResult:
        return self.result if self.natural is None else self.natural

    @property
    def makespan(self) -> Optional[Fraction]:
        return self.result.makespan

    @property
    def status(self) -> str:
        return self.result.status

    @property
    def peak(self):
        return self.result.peak

    def __repr__(self) -> str:
        from schedules.brief import brief_repr

        return brief_repr("Entry", family=self.family, status=self.status,
                          makespan=self.makespan, order=self.order)

@dataclass(frozen=True)
class BestResult:
    """``ranking`` (best first: by makespan, families without a schedule last), the
    ``lower_bound``, the ``optimum`` (None unless proven), ``gap`` = best makespan / reference
    - 1 with ``gap_to`` the reference (``optimum`` or ``lower_bound``), ``skipped`` families
    with the reason."""

    instance: Instance
    ranking: tuple[Entry, ...]
    lower_bound: Optional[Fraction]
    optimum: Optional[Fraction]
    optimum_status: Optional[str]
    gap: Optional[Fraction]
    gap_to: Optional[str]
    skipped: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def best(self) -> Optional[Entry]:
        return self.ranking[0] if self.ranking and self.ranking[0].makespan is not None else None

    def with_entry(self, entry: Entry, seconds: float = 0.0) -> "BestResult":
        """The ranking with ``entry`` added in its place (e.g. the synthesized schedule of
        :func:`pipebounds.synthesis.synthesize`, ``family="synthesized"``), the gap taken again
        from the new best; ``seconds`` is added to the time spent."""
        from dataclasses import replace

        ranking = tuple(sorted(self.ranking + (entry,), key=_rank))
        top = ranking[0] if ranking[0].makespan is not None else None
        ref = self.optimum if self.optimum is not None else self.lower_bound
        gap = top.makespan / ref - 1 if top is not None and ref else None
        return replace(self, ranking=ranking, gap=gap, gap_to=self.gap_to if gap is not None
                       else None, seconds=self.seconds + seconds)

    def to_row(self) -> dict:
        """A JSON-able row with exact numbers (ints or ``"p/q"`` strings), for sweeps."""
        from schedules.instance import fraction_json

        def ex(x):
            return None if x is None else fraction_json(Fraction(x))

        return {"ranking": [{"family": e.family, "makespan": ex(e.makespan),
                             "peak": None if e.peak is None else [ex(x) for x in e.peak],
                             "status": e.status, "order": e.order} for e in self.ranking],
                "lower_bound": ex(self.lower_bound), "optimum": ex(self.optimum),
                "optimum_status": self.optimum_status, "gap": ex(self.gap),
                "gap_to": self.gap_to, "skipped": dict(self.skipped)}

    def __repr__(self) -> str:
        from schedules.brief import brief_repr, instance_brief

        top = self.best
        return brief_repr("BestResult", instance=instance_brief(self.instance),
                          best=None if top is None else top.family,
                          makespan=None if top is None else top.makespan,
                          lower_bound=self.lower_bound, optimum=self.optimum, gap=self.gap,
                          families=len(self.ranking))

def family_schedules(inst: Instance, only=None) -> tuple[dict[str, Schedule], dict[str, str]]:
    """The natural (unconstrained) schedule of every family that applies to ``inst`` (``only``:
    of these family names), and the reason each other family was skipped."""
    out, skipped = {}, {}
    free = inst.with_(K=None)
    for name, gen in GENERATORS.items():
        if only is not None and name not in only:
            continue
        if name == "dualpipev-fb":  # rematerialization does not keep F&B ops (MODEL.md 3rd round)
            skipped[name] = ("its F&B ops are not kept by the rematerialization; the family "
                             "dualpipev is its order without them")
            continue
        problems = gen.requires.problems(inst)
        if problems:
            skipped[name] = "; ".join(problems)
            continue
        try:
            out[name] = gen(free)
        except (GeneratorError, ValueError) as exc:
            skipped[name] = str(exc)
    return out, skipped


def _rank(e: Entry):
    return (FAIL_LAST[e.status], e.makespan if e.makespan is not None else Fraction(0),
            e.family, e.order != "natural")


def _fit_memory_order(sched: Schedule, K: int, deadline=None) -> Optional[Schedule]:
    """The non-``R`` order of ``fit_memory(sched, K)`` when it differs from ``sched``'s (some
    ``W`` moved earlier), else None. Its optimal remat is never worse than fit_memory's.
    ``deadline``: fit_memory's polish stops there."""
    from schedules.remat import fit_memory

    try:
        fitted = fit_memory(sched, K, deadline=deadline)
    except RematError:
        return None
    plain = tuple(tuple(op for op in seq if op.kind != "R") for seq in fitted.orders)
    if plain == sched.orders:
        return None
    return Schedule(sched.instance, plain, sched.source + "+fit_memory order")


def best(inst: Instance, K: Optional[int] = None, budget_bytes=None, backward: bool = False,
         time_limit: float = 20.0, solve_time_limit: Optional[float] = 5.0,
         families: Optional[dict[str, Schedule]] = None,
         progress: Progress = None, policy: str = "optimal", options=None,
         started: Optional[float] = None) -> BestResult:
    """Rank the families of ``inst`` optimally rematerialized to ``K`` (default ``inst.K``) or to
    ``budget_bytes`` (with ``inst.memory``); see the module docstring. ``time_limit`` is per
    family (CP-SAT); ``solve_time_limit`` is for the exact optimum (None or 0: not searched).
    ``families``: precomputed natural schedules (default :func:`family_schedules`).
    ``progress`` (:mod:`schedules.progress`): one step per family, weighted by its op count,
    and the exact solve weighted as much as a family. ``policy``: ``optimal`` (the default), or a
    fixed rule of :mod:`schedules.remat_policies` (``megatron``, ``deepspeed``, ``all``,
    ``none``) applied to every family instead of the optimal rematerialization. ``options``:
    the recompute options of :func:`optimal_remat` (default ``(1,)``; ``backward`` adds 2; in
    a fused instance only 1 applies). With option 2 or 3 the bound and optimum are those of
    the full model (an ``RI`` only adds work to a schedule with backward ``R`` ops, so they
    stay below every entry; docs/theory.md A.11).

    ``started`` (a ``time.monotonic()`` moment, e.g. the process start): the whole run is then a
    wall-clock promise, ending by ``started + n (time_limit + g) + solve_time_limit`` with ``n``
    the families to rank and ``g`` the model-building grace of
    :func:`schedules.remat_optimal.optimal_remat` (``MODEL_GRACE``, 1 s): each family gets its
    share (``time_limit + g`` plus what the families before it did not use; its natural and
    fit_memory orders together, model building included), the exact solve what the families
    leave of the whole, at most ``solve_time_limit``. Without it each family's CP-SAT gets
    ``time_limit`` plus the grace."""
    from schedules.deadline import NO_DEADLINE, Deadline
    from schedules.remat_optimal import remat_options

    require_one_direction(inst, "best")
    t0 = time.monotonic()
    opts = remat_options(backward, options)
    backward = 2 in opts or 3 in opts
    opts = tuple(o for o in opts if o == 1 or inst.split)
    if not opts:
        raise RematError("recompute options 2 and 3 need the split form (b_I, b_W)")
    if budget_bytes is None and K is None:
        K = inst.K
        if K is None and getattr(inst, "memory", None) is None:
            raise RematError("best needs a memory limit: -K N or --budget-bytes X")
    if families is None:
        families, skipped = family_schedules(inst)
    else:
        skipped = {}
    entries = []
    weights = {name: max(1, sum(len(seq) for seq in sched.orders))
               for name, sched in families.items()}
    solve_weight = max(weights.values(), default=1) if K is not None and solve_time_limit else 0
    bar = progress_for(progress, sum(weights.values()) + solve_weight, "best")
    solve_share = solve_time_limit if K is not None and solve_time_limit else 0.0
    whole = NO_DEADLINE if started is None else Deadline(
        started + len(families) * (time_limit + MODEL_GRACE) + solve_share)
    for i, name in enumerate(families):
        sched = families[name]
        bar.set_postfix_str(name)
        bar.update(0)
        cands = []
        # this family's share of the whole: its time_limit and what earlier ones left
        left = whole.remaining()
        share = None if left is None else max(0.0, left - solve_share) / (len(families) - i)
        mine = NO_DEADLINE if share is None else Deadline.after(share)

        def limits() -> dict:
            """optimal_remat's time limit and grace within this family's share."""
            rest = mine.remaining()
            if rest is None:
                return {"time_limit": time_limit}
            return {"time_limit": max(0.05, min(time_limit, rest)),
                    "grace": max(0.0, rest - time_limit)}

        if policy != "optimal":
            from schedules.remat_policies import as_remat_result, remat_policy

            try:
                entries.append(Entry(name, as_remat_result(remat_policy(
                    sched, policy, K=K, budget_bytes=budget_bytes)), policy))
            except RematError as exc:
                skipped[name] = str(exc)
            bar.update(weights[name])
            continue
        try:
            cands.append(Entry(name, optimal_remat(
                sched, K=K, budget_bytes=budget_bytes, options=opts, **limits())))
        except RematError as exc:
            skipped[name] = str(exc)
            bar.update(weights[name])
            continue
        moved = _fit_memory_order(sched, K, mine) if K is not None and not mine.expired() \
            else None
        if moved is not None:
            cands.append(Entry(name, optimal_remat(
                moved, K=K, options=opts, **limits()),
                "fit_memory", cands[0].result))
        entries.append(min(cands, key=_rank))
        bar.update(weights[name])
    entries.sort(key=_rank)
    limited = inst.with_(K=K, memory=None) if K is not None else inst.with_(K=None, memory=None)
    backward_full = bool(backward) and inst.split
    try:
        from bounds import lower_bound

        # with backward recomputes the entries are schedules of the full model: its bound
        # (docs/theory.md A.11) and its optimum (the CP-SAT model with backward R)
        lb = lower_bound(limited, backward_remat=backward_full).value
    except (ValueError, ArithmeticError, NotImplementedError):
        lb = None
    optimum = opt_status = None
    wanted = K is not None and bool(solve_time_limit)
    left = whole.remaining()
    if wanted and left is not None:
        solve_time_limit = min(solve_time_limit, left)  # type: ignore[type-var]
    if wanted and solve_time_limit < 0.05:  # type: ignore[operator]
        opt_status = "unknown"  # no time left for the exact solve
    elif wanted:
        from pipebounds.search import solve
        from pipebounds.search.cpsat import solve_cpsat

        bar.set_postfix_str("exact optimum")
        try:
            if backward_full:
                sol = solve_cpsat(limited, time_limit=solve_time_limit, backward=True)
            else:
                sol = solve(limited, time_limit=solve_time_limit, engine="auto")
            opt_status = sol.status
            if sol.status == "optimal":
                optimum = sol.makespan
        except (ValueError, NotImplementedError):
            opt_status = None
    bar.update(solve_weight)
    bar.close()
    gap = gap_to = None
    top = entries[0] if entries and entries[0].makespan is not None else None
    ref, gap_to = (optimum, "optimum") if optimum is not None else (lb, "lower_bound")
    if top is not None and ref:
        gap = top.makespan / ref - 1
    else:
        gap_to = None
    return BestResult(inst, tuple(entries), lb, optimum, opt_status, gap, gap_to, skipped,
                      time.monotonic() - t0)
