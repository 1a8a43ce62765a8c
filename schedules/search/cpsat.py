"""The second exact engine: a CP-SAT model (OR-tools, the ``solver`` extra; imported lazily).

Built from the same :class:`~schedules.search.model.Model` (integer time units ``1/unit``):

* one interval per op: ``F(j,s)``, the input-gradient op (``B`` or ``I``), ``W(j,s)`` when
  split, and an *optional* ``R(j,s)`` whose presence literal ``r[j,s]`` is the remat choice
  (offered only when ``K`` can bind, as in the search);
* ``NoOverlap`` of the intervals of each GPU (one op at a time, no preemption);
* the precedences of MODEL.md with the delay ``c`` across GPUs; ``R`` between ``F`` and the
  input-gradient op when present;
* memory: the activation of ``(j,s)`` is an interval from the start of its storing op (``F`` if
  ``not r``, else ``R``) to the end of its releasing op (``B``, or ``W`` when split); on each
  GPU, ``AddCumulative`` of these intervals with demand 1 and capacity ``K``. Intervals are
  half-open in CP-SAT as in MODEL.md, and on one GPU the time-based count equals the order-based
  one of the validator (docs/search.md);
* symmetry: ``F(j,0)`` ends before ``F(j+1,0)`` starts (microbatches are interchangeable);
* objective: minimise ``T >= `` every end, with ``T >=`` the root lower bound.

The solution's per-GPU orders (ops sorted by start) are re-timed by the simulator, which checks
them and gives the reported makespan.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Optional

from ..instance import Instance
from ..ops import Op
from ..schedule import Schedule
from .incumbent import best_known
from .model import Model
from .result import SolveResult


class CPSATUnavailable(RuntimeError):
    """OR-tools is not installed: ``pip install 'pipebounds[solver]'`` (or ``ortools``)."""


def _ortools():
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CPSATUnavailable(
            "the cpsat engine needs OR-tools: pip install ortools "
            "(or the project's 'solver' extra)") from exc
    return cp_model


def solve_cpsat(inst: Instance, time_limit: Optional[float] = None, workers: int = 1,
                use_known: bool = True, use_theory: bool = True,
                hint: Optional[Schedule] = None) -> SolveResult:
    """Solve ``inst`` with CP-SAT; statuses as in :class:`SolveResult`.

    ``use_theory=False``: no lower bound from :mod:`bounds` in the model (independent proofs).
    ``hint``: a valid schedule of ``inst`` to start from (horizon and solution hint) in place
    of the best known one (engine ``auto`` passes the search's, which already includes it).
    """
    from .solve import _ceil_units, checked, root_lower_bound

    cp_model = _ortools()
    t0 = time.monotonic()
    mdl = Model.of(inst)
    unit = mdl.unit
    lb = _ceil_units(root_lower_bound(inst), unit) if use_theory else 0
    if hint is not None:
        known = ("hint", hint, checked(inst, hint))
    else:
        known = best_known(inst) if use_known else None
    trivial = mdl.m * mdl.S * (2 * mdl.dF + mdl.dIG + mdl.dW) + mdl.m * (sum(mdl.lag_f)
                                                                         + sum(mdl.lag_b))
    horizon = _ceil_units(known[2], unit) if known is not None else trivial
    assert horizon >= lb, (f"bounds.lower_bound exceeds the makespan {known[2]} of a valid "
                           f"schedule of {inst}: the bound is wrong")

    model = cp_model.CpModel()
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
        t_b = {k: int(mem.transient_of(k) * bunit) for k in ("F", "B", "I", "W", "R")}
        cap = [int((mem.budget - mem.static_of(p)) * bunit) for p in range(mdl.P)]
        byte_items = [[] for _ in range(mdl.P)]   # (interval, demand)
    starts: dict[Op, object] = {}
    ends: dict[Op, object] = {}
    present: dict[Op, object] = {}
    per_gpu = [[] for _ in range(mdl.P)]
    live = [[] for _ in range(mdl.P)]

    def interval(op: Op, d: int, p: int, optional=None):
        s = model.NewIntVar(0, horizon - d, f"s{op}")
        e = model.NewIntVar(d, horizon, f"e{op}")
        if optional is None:
            itv = model.NewIntervalVar(s, d, e, f"i{op}")
        else:
            itv = model.NewOptionalIntervalVar(s, d, e, optional, f"i{op}")
            present[op] = optional
        starts[op], ends[op] = s, e
        per_gpu[p].append(itv)
        if mem is not None and t_b[op.kind]:
            byte_items[p].append((itv, t_b[op.kind]))
        return s, e

    T = model.NewIntVar(lb, horizon, "T")
    for j in range(m):
        for s in range(S):
            p = gpu[s]
            interval(Op(s, "F", j), dFs[s], p)
            interval(Op(s, ig, j), dIGs[s], p)
            if mdl.split:
                interval(Op(s, "W", j), dWs[s], p)
            if bounded:
                interval(Op(s, "R", j), dFs[s], p, model.NewBoolVar(f"r{s}_{j}"))
        for s in range(S):
            F, G = Op(s, "F", j), Op(s, ig, j)
            if s > 0:
                model.Add(starts[F] >= ends[Op(s - 1, "F", j)] + mdl.lag_f[s])
            if s == S - 1:
                model.Add(starts[G] >= ends[F])
            else:
                model.Add(starts[G] >= ends[Op(s + 1, ig, j)] + mdl.lag_b[s])
            release = ends[G]
            if mdl.split:
                Wop = Op(s, "W", j)
                model.Add(starts[Wop] >= ends[G])
                release = ends[Wop]
                model.Add(T >= ends[Wop])
            else:
                model.Add(T >= ends[G])
            if bounded:
                R = Op(s, "R", j)
                r = present[R]
                model.Add(starts[R] >= ends[F]).OnlyEnforceIf(r)
                model.Add(ends[R] <= starts[G]).OnlyEnforceIf(r)
                ls = model.NewIntVar(0, horizon, f"ls{s}_{j}")
                model.Add(ls == starts[F]).OnlyEnforceIf(r.Not())
                model.Add(ls == starts[R]).OnlyEnforceIf(r)
                size = model.NewIntVar(0, horizon, f"lz{s}_{j}")
                itv = model.NewIntervalVar(ls, size, release, f"live{s}_{j}")
                live[gpu[s]].append(itv)
                if mem is not None:
                    if mdl.split and a_b[s] > g_b[s]:
                        # a_s - g_s bytes are freed at the end of I, g_s stay until W ends
                        size2 = model.NewIntVar(0, horizon, f"lzi{s}_{j}")
                        part = model.NewIntervalVar(ls, size2, ends[G], f"livei{s}_{j}")
                        byte_items[gpu[s]].append((part, a_b[s] - g_b[s]))
                        if g_b[s]:
                            byte_items[gpu[s]].append((itv, g_b[s]))
                    elif a_b[s]:
                        byte_items[gpu[s]].append((itv, a_b[s] if not mdl.split else g_b[s]))
    for p in range(mdl.P):
        model.AddNoOverlap(per_gpu[p])
        if mdl.bounded and live[p]:
            model.AddCumulative(live[p], [1] * len(live[p]), mdl.K)
        if mem is not None:
            if cap[p] < 0:
                model.Add(T < 0)  # the static bytes alone exceed the budget: infeasible
            elif byte_items[p]:
                model.AddCumulative([x for x, _ in byte_items[p]], [d for _, d in byte_items[p]],
                                    cap[p])
    for j in range(m - 1):
        model.Add(ends[Op(0, "F", j)] <= starts[Op(0, "F", j + 1)])
    model.Minimize(T)
    if known is not None:
        _hint(model, known[1], starts, present, unit)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(workers))
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    code = solver.Solve(model)
    seconds = time.monotonic() - t0
    nodes = int(solver.NumBranches())
    stats = {"cpsat_status": solver.StatusName(code), "wall_cpsat": solver.WallTime(),
             "independent": not use_theory}
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        orders = [[] for _ in range(mdl.P)]
        for op, s in starts.items():
            if op in present and not solver.BooleanValue(present[op]):
                continue
            orders[gpu[op.stage]].append((solver.Value(s), op))
        sched = Schedule(inst, tuple(tuple(op for _, op in sorted(seq)) for seq in orders),
                         source="cpsat")
        ms = checked(inst, sched)
        obj = Fraction(solver.Value(T), unit)
        assert ms <= obj, f"CP-SAT objective {obj} below the simulated makespan {ms}"
        if code == cp_model.OPTIMAL:
            assert ms == obj, f"CP-SAT optimum {obj} but its orders time to {ms}"
            return SolveResult("optimal", sched, ms, ms, nodes, seconds, "cpsat", "cpsat", stats)
        bound = max(lb, -(-int(solver.BestObjectiveBound()) // 1))
        lower = Fraction(bound, unit)
        status = "optimal" if lower == ms else "feasible"
        return SolveResult(status, sched, ms, lower, nodes, seconds, "cpsat", "cpsat", stats)
    if code == cp_model.INFEASIBLE:
        if known is not None:  # the horizon came from a valid schedule: cannot happen
            raise AssertionError("CP-SAT proved infeasible an instance with a known schedule")
        return SolveResult("infeasible", None, None, Fraction(lb, unit), nodes, seconds, "cpsat",
                           "", stats)
    return SolveResult("unknown", None, None, Fraction(lb, unit), nodes, seconds, "cpsat", "",
                       stats)


def _hint(model, sched: Schedule, starts, present, unit: int) -> None:
    """Hint CP-SAT with a known schedule's ASAP start times and remat choices."""
    from ..simulate import simulate

    times = simulate(sched).op_times()
    recomputed = {(op.stage, op.microbatch) for op in times if op.kind == "R"}
    for op, var in starts.items():
        if op in times:
            model.AddHint(var, int(times[op][0] * unit))
        elif op.kind in "IW" and Op(op.stage, "B", op.microbatch) in times:
            # a fused B in a split instance: I then W in its place
            t = times[Op(op.stage, "B", op.microbatch)][0]
            if op.kind == "W":
                t += sched.instance.b_I
            model.AddHint(var, int(t * unit))
    for op, lit in present.items():
        model.AddHint(lit, (op.stage, op.microbatch) in recomputed)
