"""Large neighbourhood search: CP-SAT re-optimizes one window of the current schedule
(docs/synthesis.md).

The full CP-SAT model of the instance (:func:`pipebounds.search.cpsat.build`: every op an
interval, the precedences of MODEL.md with ``c``, ``add_no_overlap`` per GPU, the live
activations as a cumulative of capacity ``K`` or the byte budget, optional ``R`` ops) is built
once per incumbent, hinted with it (relabelled by :func:`~pipebounds.search.symmetry.canonical`,
so that SYM1 holds) and bounded by its makespan. A *neighbourhood* keeps most of the incumbent
and frees a part of it:

* a **time window** ``[t0, t1)``: on every GPU the ops whose incumbent start lies in it are
  *free* (any order among themselves); the ops before it keep their order and precede every free
  op, the ops after it keep their order and follow every free op;
* a **GPU window**: the same, but only on a few consecutive GPUs; the other GPUs keep their
  whole order.

Recomputes: an ``R`` of the incumbent outside the free part stays (fixed in its place); a pair
whose ``R`` is absent stays without one unless its forward or its input-gradient op is free or
the free part lies between them, and then an ``R`` may appear, only inside the free part.

Every neighbourhood contains the incumbent (its own order satisfies the added precedences), so
the sub-problem is feasible and its optimum is never worse; the solution's per-GPU orders are
re-timed ASAP by the simulator (ASAP is never later than the solver's times: monotonicity), and
the driver keeps it only when the simulated objective is strictly better.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from schedules.instance import Instance
from schedules.ops import Op
from schedules.schedule import Schedule
from schedules.simulate import simulate


@dataclass(frozen=True)
class Window:
    """A neighbourhood: ops starting in ``[t0, t1)`` (units ``1/unit``) on the GPUs ``gpus``
    (None: every GPU) are free."""

    t0: int
    t1: int
    gpus: Optional[tuple[int, ...]] = None

    def describe(self, unit: int) -> str:
        where = "all GPUs" if self.gpus is None else "GPUs " + ",".join(map(str, self.gpus))
        return f"[{Fraction(self.t0, unit)}, {Fraction(self.t1, unit)}) on {where}"


class Base:
    """The CP-SAT model of ``inst`` around one incumbent (``schedule``, valid, no backward
    recompute), from which each :meth:`solve` clones a neighbourhood."""

    def __init__(self, inst: Instance, schedule: Schedule, makespan: Fraction,
                 lb_theory: Fraction, objective: str = "makespan"):
        from pipebounds.search import cpsat

        self.inst = inst
        self.objective = objective
        self.built = cpsat.build(inst, use_theory=True, known=("incumbent", schedule, makespan),
                                 lb_theory=lb_theory)
        self.current = self.built.hinted  # canonical relabelling: satisfies SYM1
        res = simulate(self.current)
        assert res.valid, "canonical relabelling of a valid schedule must be valid"
        self.result = res
        mdl = self.built.mdl
        self.dur = {}
        for op in self.built.starts:
            s = op.stage
            self.dur[op] = (mdl.dFs[s] if op.kind in "FR" else mdl.dWs[s] if op.kind == "W"
                            else mdl.dIGs[s])
        self.times = {op: (int(a * mdl.unit), int(b * mdl.unit))
                      for op, (a, b) in res.op_times().items()}

    # ------------------------------------------------------------------ one neighbourhood
    def solve(self, window: Window, time_limit: float, stop: Callable[[], bool],
              seed: int = 0, band: Optional[int] = None,
              until: Optional[Callable[[], bool]] = None) -> Optional[Schedule]:
        """The best schedule of the neighbourhood found within ``time_limit`` (None when the
        solver found nothing better than the hint or nothing at all). ``band``: the ops that
        start at or after ``t1 + band`` keep their times (None: every later op may move
        earlier); the ASAP re-timing of the result moves them earlier anyway when the window
        made room. ``until``: a predicate that stops the solve when true (a CPU deadline;
        :func:`schedules.stopping.watchdog`)."""
        b = self.built
        model = b.model.clone()
        model.clear_hints()

        def iv(x):
            return model.get_int_var_from_proto_index(x.index)

        def bv(x):
            return model.get_bool_var_from_proto_index(x.index)

        starts = {op: iv(v) for op, v in b.starts.items()}
        present = {op: bv(v) for op, v in b.present.items()}
        dur = self.dur
        gpu = b.mdl.gpu
        T = iv(b.T)
        cur_ms = int(self.result.makespan * b.mdl.unit)
        model.add(T <= cur_ms)
        in_order = {}  # op -> (gpu, position) in the incumbent
        for p, seq in enumerate(self.current.orders):
            for i, op in enumerate(seq):
                in_order[op] = (p, i)
        free_gpus = set(range(b.mdl.P)) if window.gpus is None else set(window.gpus)

        def is_free(op: Op) -> bool:
            p = gpu[op.stage]
            return p in free_gpus and window.t0 <= self.times[op][0] < window.t1

        def prec(a: Op, c: Op, lit=None):
            ct = model.add(starts[a] + dur[a] <= starts[c])
            if lit is not None:
                ct.only_enforce_if(lit)

        region: dict = {}  # gpu -> (last op before the free part, first op after it)
        for p, seq in enumerate(self.current.orders):
            free = [op for op in seq if is_free(op)]
            before = [op for op in seq if not is_free(op) and self.times[op][0] < window.t0]
            after = [op for op in seq if not is_free(op) and self.times[op][0] >= window.t0]
            if not free:
                fixed = list(seq)
                for a, c in zip(fixed, fixed[1:]):
                    prec(a, c)
                region[p] = None
                continue
            for a, c in zip(before, before[1:]):
                prec(a, c)
            for a, c in zip(after, after[1:]):
                prec(a, c)
            if before:
                for op in free:
                    prec(before[-1], op)
            if after:
                for op in free:
                    prec(op, after[0])
            region[p] = (before[-1] if before else None, after[0] if after else None)
        # recomputes (their presence literal; an incumbent R outside the free part stays)
        for R, lit in present.items():
            p = gpu[R.stage]
            if R in in_order:
                if not is_free(R):
                    model.add(lit == 1)
                    continue
            else:
                F, G = Op(R.stage, "F", R.microbatch), Op(R.stage, b.mdl.ig_kind, R.microbatch)
                reg = region[p]
                span_ok = reg is not None and (
                    is_free(F) or is_free(G)
                    or (self.times[F][0] < window.t0 and self.times[G][0] >= window.t1))
                if not span_ok:
                    model.add(lit == 0)
                    continue
            reg = region[p]
            if reg is None:
                model.add(lit == 0)
                continue
            lo, hi = reg
            if lo is not None:
                prec(lo, R, lit)
            if hi is not None:
                prec(R, hi, lit)
        # ops that start before the window keep their times: they and their predecessors
        # start before t0 (a predecessor ends before its successor starts), so that set is
        # closed and, its orders kept, its ASAP times cannot change; the ops after it may only
        # start earlier than in the incumbent (a restriction the incumbent satisfies, which
        # keeps the sub-problem small)
        moving = []
        for op, var in starts.items():
            if op in self.times and self.times[op][0] < window.t0:
                model.add(var == self.times[op][0])
            elif op in self.times and not is_free(op):
                if band is not None and self.times[op][0] >= window.t1 + band:
                    model.add(var == self.times[op][0])  # far after the window: fixed
                else:
                    model.add(var <= self.times[op][0])  # the rest only moves earlier
            elif op.kind != "R" and op in self.times and is_free(op):
                moving.append(var)
        # objective: the makespan first, then the sum of the starts of the free ops (a
        # neighbourhood that cannot shorten the makespan may still pull its work earlier)
        weight = len(moving) * (b.horizon + 1) + 1
        if self.objective == "makespan":
            model.minimize(T * weight + sum(moving))
        if self.objective == "span":
            spans = []
            for p in range(b.mdl.P):
                ops = [op for op in starts if gpu[op.stage] == p]
                first = model.new_int_var(0, b.horizon, f"first{p}")
                last = model.new_int_var(0, b.horizon, f"last{p}")
                model.add_min_equality(first, [starts[op] for op in ops if op.kind == "F"])
                ends = [starts[op] + dur[op] for op in ops if op.kind != "R"]
                model.add_max_equality(last, ends)
                spans.append((first, last))
            span = model.new_int_var(0, b.horizon, "span")
            for first, last in spans:
                model.add(span >= last - first)
            model.minimize(span * (b.horizon + 1) * weight + T * weight + sum(moving))
        # hint: the incumbent
        for op, var in starts.items():
            if op in self.times:
                model.add_hint(var, self.times[op][0])
        for op, lit in present.items():
            model.add_hint(lit, op in in_order)
        from pipebounds.search.cpsat import cp_model  # here: a synthesis without time left
        # for a neighbourhood never imports OR-tools (schedules.ortools_import: without pandas)

        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.linearization_level = 0
        solver.parameters.catch_sigint_signal = False
        solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
        solver.parameters.random_seed = int(seed) % (1 << 31)

        class _Stop(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                if stop():
                    self.stop_search()

        from schedules.stopping import watchdog

        with watchdog(solver.stop_search, until):
            code = solver.solve(model, _Stop())
        self.last_status = solver.status_name(code)
        if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        orders: list[list] = [[] for _ in range(b.mdl.P)]
        for op, var in starts.items():
            if op in present and not solver.boolean_value(present[op]):
                continue
            orders[gpu[op.stage]].append((solver.value(var), in_order.get(op, (0, 0))[1], op))
        return Schedule(self.inst, tuple(tuple(op for _, _, op in sorted(seq)) for seq in orders),
                        source="lns")
