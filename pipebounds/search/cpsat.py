"""The CP-SAT backend (OR-tools, a core dependency): :func:`build`, :func:`run`,
:func:`extract`, and :func:`solve_cpsat` that chains them.

Built from the same :class:`~pipebounds.search.model.Model` (integer time units ``1/unit``):

* one interval per op: ``F(j,s)``, the input-gradient op (``B`` or ``I``), ``W(j,s)`` when
  split, and an *optional* ``R(j,s)`` whose presence literal ``r[j,s]`` is the remat choice
  (offered only when ``K`` can bind, as in the search);
* ``add_no_overlap`` of the intervals of each GPU (one op at a time, no preemption);
* the precedences of MODEL.md with the delay ``c`` across GPUs; ``R`` between ``F`` and the
  input-gradient op when present;
* memory: the activation of ``(j,s)`` is an interval from the start of its storing op (``F`` if
  ``not r``, else ``R``) to the end of its releasing op (``B``, or ``W`` when split); on each
  GPU, ``add_cumulative`` of these intervals with demand 1 and capacity ``K``. Intervals are
  half-open in CP-SAT as in MODEL.md, and on one GPU the time-based count equals the order-based
  one of the validator (docs/search.md);
* symmetry: the rules SYM1-SYM4 of :mod:`pipebounds.search.symmetry` (microbatch ``j``'s ops
  before ``j+1``'s where a relabelling argument proves it loses no optimum): all four when
  ``K`` cannot bind, SYM1 alone otherwise unless asked (:func:`build`);
* objective: minimise ``T >=`` every end; with ``use_theory``, ``T >=`` :func:`bounds.lower_bound`
  (a constraint, never a proof of itself: :func:`~pipebounds.search.proof.theory_guard`);
* hint: the best known schedule (:func:`~pipebounds.search.incumbent.best_known`, or the one
  passed in), relabelled by :func:`~pipebounds.search.symmetry.canonical` so that it satisfies
  the symmetry rules, with its ASAP start times and remat choices; its makespan is the horizon.

The solution's per-GPU orders (ops sorted by start) are re-timed and checked by the simulator,
which gives the reported makespan. With a :class:`~pipebounds.search.channel.Channel`, every
solution and every bound improvement is reported, and the solve stops when the channel says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Callable, Optional

from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from .channel import SILENT, Channel
from .incumbent import best_known
from schedules.deadline import Deadline
from schedules.stopping import keep_sigint, solve_seconds, stoppable, watchdog, watching
from .model import Model
from .proof import ceil_units, checked, status_of, theory_bound, theory_guard
from .result import SolveResult
from .symmetry import canonical
from schedules.instance import require_one_direction

if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:  # the same module, without pandas at start-up (schedules.ortools_import)
    from schedules.ortools_import import cp_model as _load

    cp_model = _load()


@dataclass
class Built:
    """A CP-SAT model of one instance and its variables (the output of :func:`build`)."""

    inst: Instance
    mdl: Model
    model: cp_model.CpModel
    T: object
    lb: int                      # the theory's bound in units (0 without use_theory)
    lb_theory: Fraction
    use_theory: bool
    horizon: int
    starts: dict = field(default_factory=dict)
    present: dict = field(default_factory=dict)
    hinted: Optional[Schedule] = None
    backward: bool = False
    back: dict = field(default_factory=dict)   # (s, j) -> (start var, presence literal)
    cap: Optional[int] = None    # only schedules with T <= cap are looked for (units), or None
    known: Optional[tuple] = None  # the (source, schedule, makespan) it was built from


SYMMETRY = ("auto", "full", "sym1")


def build(inst: Instance, use_theory: bool = True, known=None,
          symmetry: str = "auto", lb_theory: Optional[Fraction] = None,
          backward: bool = False, cap: Optional[int] = None) -> Built:
    """The model of ``inst`` (see the module docstring). ``known``: ``(source, schedule,
    makespan)`` of a valid schedule (hint and horizon), or None (horizon: the trivial schedule).
    ``symmetry``: ``full`` imposes SYM1-SYM4, ``sym1`` only SYM1, ``auto`` (default) all four
    when ``K`` cannot bind (no ``R``: the rules are plain precedences) and SYM1 otherwise (with
    ``R`` the rules are conditional on remat literals, and measured slower: docs/search.md).

    ``backward``: the full model with backward rematerialization (MODEL.md, Extensions; split
    form, memory as a count ``K``): each pair also gets an optional ``R`` between its ``I`` and
    its ``W`` (literal ``rw``); with it the pair's live interval ends with ``I`` and a second
    one runs from that ``R``'s start to the end of ``W``. Only SYM1 is imposed (a relabelling of
    identical microbatches, valid whatever is recomputed).

    ``cap`` (units ``1/unit``): look only for schedules of makespan ``T <= cap`` (the horizon;
    typically one unit below an incumbent held elsewhere). Then *infeasible* is a proof that
    every schedule has makespan ``> cap``: the model keeps an ASAP-timed copy of every valid
    schedule up to the symmetry rules, which relabel microbatches without changing the makespan
    (:mod:`pipebounds.search.symmetry`), so :func:`result` reports the lower bound ``cap + 1``.
    ``known`` is then only a hint (its makespan may exceed ``cap``)."""
    if symmetry not in SYMMETRY:
        raise ValueError(f"symmetry must be one of {SYMMETRY}, got {symmetry!r}")
    if backward and not inst.split:
        raise ValueError("backward rematerialization needs split backward (I and W)")
    if backward and inst.memory is not None and inst.memory.budget is not None:
        raise ValueError("the exact model with backward rematerialization takes K, not bytes")
    mdl = Model.of(inst)
    unit = mdl.unit
    lb_theory = theory_bound(inst, use_theory, lb_theory)
    lb = ceil_units(lb_theory, unit)
    if known is not None:
        theory_guard(inst, known[2], lb_theory)
    horizon = ceil_units(known[2], unit) if known is not None else mdl.trivial_horizon
    if cap is not None:
        cap = int(cap)
        if cap >= horizon:  # the known schedule is within the cap already
            cap = None
        else:
            horizon = max(cap, 0)
    model = cp_model.CpModel()
    T = model.new_int_var(min(lb, horizon), horizon, "T")
    if lb > horizon:  # a cap below the theory's bound: infeasible, the theory proves it
        model.add(T >= lb)
    b = Built(inst, mdl, model, T, lb, lb_theory, use_theory, horizon, cap=cap, known=known)
    backward = backward and mdl.bounded
    b.backward = backward
    S, m, gpu = mdl.S, mdl.m, mdl.gpu
    dFs, dIGs, dWs = mdl.dFs, mdl.dIGs, mdl.dWs
    ig = mdl.ig_kind
    mem = inst.memory if inst.memory is not None and inst.memory.budget is not None else None
    bounded = mdl.bounded or mem is not None
    if mem is not None:
        # memory in bytes (MODEL.md, Extensions): cumulative over bytes in units of 1/bunit
        bunit = mem.unit
        a_b = [int(mem.stored(s) * bunit) for s in range(S)]
        g_b = [int(mem.kept(s) * bunit) for s in range(S)]
        t_b = {(k, s): int(mem.transient_of(k, s) * bunit) for k in ("F", "B", "I", "W", "R")
               for s in range(S)}
        cap = [int((mem.budget - mem.static_of(p)) * bunit) for p in range(mdl.P)]
    byte_items: list[list] = [[] for _ in range(mdl.P)]   # (interval, demand)
    ends: dict[Op, object] = {}
    per_gpu: list[list] = [[] for _ in range(mdl.P)]
    live: list[list] = [[] for _ in range(mdl.P)]

    def interval(op: Op, d: int, optional=None) -> None:
        # (a cap shorter than an op leaves it no room: T >= its end makes that infeasible)
        s = model.new_int_var(0, max(0, horizon - d), f"s{op}")
        e = model.new_int_var(d, max(d, horizon), f"e{op}")
        if optional is None:
            itv = model.new_interval_var(s, d, e, f"i{op}")
        else:
            itv = model.new_optional_interval_var(s, d, e, optional, f"i{op}")
            b.present[op] = optional
        b.starts[op], ends[op] = s, e
        p = gpu[op.stage]
        per_gpu[p].append(itv)
        if mem is not None and t_b[(op.kind, op.stage)]:
            byte_items[p].append((itv, t_b[(op.kind, op.stage)]))

    starts = b.starts
    for j in range(m):
        for s in range(S):
            interval(Op(s, "F", j), dFs[s])
            interval(Op(s, ig, j), dIGs[s])
            if mdl.split:
                interval(Op(s, "W", j), dWs[s])
            if bounded:
                interval(Op(s, "R", j), dFs[s], model.new_bool_var(f"r{s}_{j}"))
        for s in range(S):
            F, G = Op(s, "F", j), Op(s, ig, j)
            if s > 0:
                model.add(starts[F] >= ends[Op(s - 1, "F", j)] + mdl.lag_f[s])
            if s == S - 1:
                model.add(starts[G] >= ends[F])
            else:
                model.add(starts[G] >= ends[Op(s + 1, ig, j)] + mdl.lag_b[s])
            release = ends[G]
            if mdl.split:
                W = Op(s, "W", j)
                model.add(starts[W] >= ends[G])
                release = ends[W]
            model.add(T >= release)
            if bounded:
                R = Op(s, "R", j)
                r = b.present[R]
                model.add(starts[R] >= ends[F]).only_enforce_if(r)
                model.add(ends[R] <= starts[G]).only_enforce_if(r)
                ls = model.new_int_var(0, horizon, f"ls{s}_{j}")
                model.add(ls == starts[F]).only_enforce_if(~r)
                model.add(ls == starts[R]).only_enforce_if(r)
                size = model.new_int_var(0, horizon, f"lz{s}_{j}")
                if backward:
                    # free at the end of I, stored again by R(j,s) between I and W
                    rw = model.new_bool_var(f"rw{s}_{j}")
                    d = dFs[s]
                    sb = model.new_int_var(0, max(0, horizon - d), f"sRW{s}_{j}")
                    eb = model.new_int_var(d, max(d, horizon), f"eRW{s}_{j}")
                    per_gpu[gpu[s]].append(model.new_optional_interval_var(
                        sb, d, eb, rw, f"iRW{s}_{j}"))
                    b.back[(s, j)] = (sb, rw)
                    model.add(sb >= ends[G]).only_enforce_if(rw)
                    model.add(eb <= starts[W]).only_enforce_if(rw)
                    first_end = model.new_int_var(0, horizon, f"le{s}_{j}")
                    model.add(first_end == release).only_enforce_if(~rw)
                    model.add(first_end == ends[G]).only_enforce_if(rw)
                    itv = model.new_interval_var(ls, size, first_end, f"live{s}_{j}")
                    size2 = model.new_int_var(0, horizon, f"lzb{s}_{j}")
                    live[gpu[s]].append(model.new_optional_interval_var(
                        sb, size2, release, rw, f"liveb{s}_{j}"))
                else:
                    itv = model.new_interval_var(ls, size, release, f"live{s}_{j}")
                live[gpu[s]].append(itv)
                if mem is not None:
                    if mdl.split and a_b[s] > g_b[s]:
                        # a_s - g_s bytes are freed at the end of I, g_s stay until W ends
                        size2 = model.new_int_var(0, horizon, f"lzi{s}_{j}")
                        part = model.new_interval_var(ls, size2, ends[G], f"livei{s}_{j}")
                        byte_items[gpu[s]].append((part, a_b[s] - g_b[s]))
                        if g_b[s]:
                            byte_items[gpu[s]].append((itv, g_b[s]))
                    elif a_b[s]:
                        byte_items[gpu[s]].append((itv, a_b[s] if not mdl.split else g_b[s]))
    for p in range(mdl.P):
        model.add_no_overlap(per_gpu[p])
        if live[p] and mdl.K is not None:
            model.add_cumulative(live[p], [1] * len(live[p]), mdl.K)
        if mem is not None:
            if cap[p] < 0:
                model.add(T < 0)  # the static bytes alone exceed the budget: infeasible
            elif byte_items[p]:
                model.add_cumulative([x for x, _ in byte_items[p]],
                                     [d for _, d in byte_items[p]], cap[p])
    if mdl.bounded or mem is None:  # (byte budgets alone: no symmetry rule, not proven there)
        _symmetry(b, ends, full=not backward and (
            symmetry == "full" or (symmetry == "auto" and not bounded)))
    model.minimize(T)
    if known is not None:
        b.hinted = canonical(known[1].with_instance(inst))
        _hint(b)
    return b


def _symmetry(b: Built, ends: dict, full: bool) -> None:
    """SYM1-SYM4 (:mod:`pipebounds.search.symmetry`). ``nr[j][s]``: ``j`` recomputes no stage
    ``< s`` (an exact equivalence, so the solver cannot switch a rule off)."""
    model, mdl, starts = b.model, b.mdl, b.starts
    S, m, ig = mdl.S, mdl.m, mdl.ig_kind

    def before(a: Op, c: Op, lits=()):
        ct = model.add(ends[a] <= starts[c])
        if lits:
            ct.only_enforce_if(list(lits))

    for j in range(m - 1):  # SYM1
        before(Op(0, "F", j), Op(0, "F", j + 1))
    if not full:
        return
    kinds = (ig, "W") if mdl.split else (ig,)
    if not mdl.bounded:  # no R at all: every class is everyone, consecutive pairs suffice
        for j in range(m - 1):
            for s in range(S):
                for kind in ("F",) + kinds:
                    before(Op(s, kind, j), Op(s, kind, j + 1))
        return
    nr = []
    for j in range(m):
        row = [model.new_constant(1)]
        for s in range(S):
            r = b.present[Op(s, "R", j)]
            lit = model.new_bool_var(f"nr{j}_{s + 1}")
            model.add_implication(lit, row[-1])
            model.add_implication(lit, ~r)
            model.add_bool_or([~row[-1], r, lit])
            row.append(lit)
        nr.append(row)
    for j in range(m):
        for k in range(j + 1, m):
            for s in range(1, S):  # SYM2
                before(Op(s, "F", j), Op(s, "F", k), (nr[j][s], nr[k][s]))
            for s in range(S):  # SYM3
                for kind in kinds:
                    before(Op(s, kind, j), Op(s, kind, k), (nr[j][S], nr[k][S]))
            if mdl.split:  # SYM4: W in the order of I, whatever is recomputed
                for s in range(S):
                    o = model.new_bool_var(f"o{s}_{j}_{k}")
                    before(Op(s, "I", j), Op(s, "I", k), (o,))
                    before(Op(s, "W", j), Op(s, "W", k), (o,))
                    before(Op(s, "I", k), Op(s, "I", j), (~o,))
                    before(Op(s, "W", k), Op(s, "W", j), (~o,))


def _hint(b: Built) -> None:
    """Hint CP-SAT with ``b.hinted``'s ASAP start times and remat choices (a canonical
    schedule: split instances have ``I`` and ``W``, never a fused ``B``)."""
    from schedules.simulate import simulate

    times = simulate(b.hinted).op_times()
    unit = b.mdl.unit
    recomputed = {(op.stage, op.microbatch) for op in times if op.kind == "R"}
    for op, var in b.starts.items():
        # under a cap the hint (above it) is partial: the ops that still fit the horizon
        if op in times and times[op][1] * unit <= b.horizon:
            b.model.add_hint(var, int(times[op][0] * unit))
    for op, lit in b.present.items():
        b.model.add_hint(lit, (op.stage, op.microbatch) in recomputed)
    for _, lit in b.back.values():
        b.model.add_hint(lit, False)


def extract(b: Built, value, boolean_value) -> Schedule:
    """The schedule of a solution: per GPU, the present ops by start time (``value`` and
    ``boolean_value`` read the solution: a solver's or a solution callback's)."""
    orders: list[list] = [[] for _ in range(b.mdl.P)]
    for op, s in b.starts.items():
        if op in b.present and not boolean_value(b.present[op]):
            continue
        orders[b.mdl.gpu[op.stage]].append((value(s), op))
    for (st, j), (s, lit) in b.back.items():
        if boolean_value(lit):
            orders[b.mdl.gpu[st]].append((value(s), Op(st, "R", j)))
    return Schedule(b.inst, tuple(tuple(op for _, op in sorted(seq)) for seq in orders),
                    source="cpsat")


class _Reporter(cp_model.CpSolverSolutionCallback):
    """Reports each solution to the channel (its orders and objective ``T``, an upper bound on
    their ASAP makespan: whoever keeps the schedule simulates it); stops on request. No
    simulation here: the solver waits while the callback runs."""

    def __init__(self, b: Built, channel: Channel):
        super().__init__()
        self.b, self.channel = b, channel

    def on_solution_callback(self) -> None:
        sched = extract(self.b, self.value, self.boolean_value)
        obj = int(self.value(self.b.T))
        self.channel.incumbent("cpsat", obj, [list(o) for o in sched.orders])
        if self.channel.stop() or obj <= self.channel.lower():
            self.stop_search()


LINEARIZATION = 0
"""CP-SAT's ``linearization_level`` (its default is 1: an LP relaxation in the search). 0 was
measured 2-8x faster on the hard instances of this model and proves some that 1 leaves open
(docs/search.md, "CP-SAT model")."""


def run(b: Built, time_limit: Optional[float] = None, workers: int = 1,
        channel: Channel = SILENT, catch_sigint: bool = True,
        linearization: Optional[int] = None, seed: Optional[int] = None,
        until: Optional[Callable[[], bool]] = None):
    """Solve the built model; returns ``(solver, status code)``. ``linearization``: CP-SAT's
    ``linearization_level`` (default :data:`LINEARIZATION`); ``seed``: its ``random_seed`` (None:
    CP-SAT's default); ``until``: a predicate polled during the solve that stops it when true
    (:func:`schedules.stopping.watchdog`: a deadline on another clock than the wall limit's)."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(workers))
    if seed is not None:
        solver.parameters.random_seed = int(seed) % (1 << 31)
    solver.parameters.linearization_level = (LINEARIZATION if linearization is None
                                             else int(linearization))
    solver.parameters.catch_sigint_signal = catch_sigint and not watching()
    time_limit = solve_seconds(time_limit)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, float(time_limit))
    if channel is not SILENT:
        def on_bound(v: float) -> None:
            channel.bound("cpsat", -(-int(v) // 1))
            if channel.stop():
                solver.stop_search()

        solver.best_bound_callback = on_bound
        with keep_sigint(), stoppable(solver.stop_search), watchdog(solver.stop_search, until):
            code = solver.solve(b.model, _Reporter(b, channel))
    else:
        with keep_sigint(), stoppable(solver.stop_search), watchdog(solver.stop_search, until):
            code = solver.solve(b.model)
    return solver, code


def result(b: Built, solver, code, seconds: float) -> SolveResult:
    """The :class:`SolveResult` of a finished solve (statuses as documented there)."""
    inst, unit = b.inst, b.mdl.unit
    nodes = int(solver.num_branches)
    stats = {"cpsat_status": solver.status_name(code), "wall_cpsat": solver.wall_time,
             "deterministic_cpsat": solver.deterministic_time, "conflicts": solver.num_conflicts,
             "independent": not b.use_theory, "lower_bound_theory": b.lb_theory}
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sched = extract(b, solver.value, solver.boolean_value)
        ms = checked(inst, sched)
        theory_guard(inst, ms, b.lb_theory)
        obj = Fraction(solver.value(b.T), unit)
        assert ms <= obj, f"CP-SAT objective {obj} below the simulated makespan {ms}"
        if code == cp_model.OPTIMAL:
            assert ms == obj, f"CP-SAT optimum {obj} but its orders time to {ms}"
            return SolveResult("optimal", sched, ms, ms, nodes, seconds, "cpsat", "cpsat", stats)
        lower = Fraction(max(b.lb, -(-int(solver.best_objective_bound) // 1)), unit)
        status = "optimal" if lower == ms else "feasible"
        return SolveResult(status, sched, ms, lower, nodes, seconds, "cpsat", "cpsat", stats)
    if b.cap is not None and code in (cp_model.INFEASIBLE, cp_model.UNKNOWN):
        # nothing at or below the cap (a proof when infeasible): the hint is the schedule
        lower = Fraction(max(b.lb, b.cap + 1) if code == cp_model.INFEASIBLE else b.lb, unit)
        stats["capped"] = b.cap
        if b.known is None:
            return SolveResult("unknown", None, None, lower, nodes, seconds, "cpsat", "", stats)
        sched = b.known[1].with_instance(inst)
        ms = checked(inst, sched)
        return SolveResult(status_of(ms, lower), sched, ms, lower, nodes, seconds, "cpsat",
                           b.known[0], stats)
    if code == cp_model.INFEASIBLE:
        if b.hinted is not None:  # the horizon came from a valid schedule: cannot happen
            raise AssertionError("CP-SAT proved infeasible an instance with a known schedule")
        return SolveResult("infeasible", None, None, Fraction(b.lb, unit), nodes, seconds,
                           "cpsat", "", stats)
    return SolveResult("unknown", None, None, Fraction(b.lb, unit), nodes, seconds, "cpsat", "",
                       stats)


def solve_cpsat(inst: Instance, time_limit: Optional[float] = None, workers: int = 1,
                use_known: bool = True, use_theory: bool = True,
                hint: Optional[Schedule] = None, known=None, channel: Channel = SILENT,
                symmetry: str = "auto", catch_sigint: bool = True,
                lb_theory: Optional[Fraction] = None, backward: bool = False,
                seed: Optional[int] = None, cap: Optional[int] = None,
                until: Optional[Callable[[], bool]] = None) -> SolveResult:
    """Solve ``inst`` with CP-SAT: :func:`build`, :func:`run`, :func:`result`.

    ``use_theory=False``: no lower bound from :mod:`bounds` in the model (independent proofs).
    ``hint``: a valid schedule of ``inst`` to start from (horizon and solution hint) in place
    of the best known one; ``known``: :func:`best_known`'s answer, ``lb_theory``: the theory's
    bound, when already computed. ``seed``: CP-SAT's random seed (None: its default; for
    restarts of a search). ``cap``: look only below it (units; :func:`build`): an infeasible
    answer then proves the lower bound ``cap + 1``. ``until``: stops the solve when it turns
    true (polled; e.g. a CPU deadline, with a wall ``time_limit`` as the backstop).
    """
    require_one_direction(inst, "CP-SAT")
    t0 = time.monotonic()
    if hint is not None:
        known = ("hint", hint, checked(inst, hint))
    elif known is None and use_known:
        known = best_known(inst, Deadline.after(None if time_limit is None else time_limit / 2))
    if not use_known and hint is None:
        known = None
    if backward and use_theory and lb_theory is None:
        from bounds import lower_bound

        lb_theory = Fraction(lower_bound(inst, backward_remat=True).value)
    b = build(inst, use_theory=use_theory, known=known, symmetry=symmetry, lb_theory=lb_theory,
              backward=backward, cap=cap)
    left = None if time_limit is None else max(0.0, time_limit - (time.monotonic() - t0))
    solver, code = run(b, left, workers, channel, catch_sigint, seed=seed, until=until)
    return result(b, solver, code, time.monotonic() - t0)
