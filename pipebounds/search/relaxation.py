"""The single-GPU relaxation (docs/theory.md A.7, "The single-GPU relaxation"): a lower bound
on the makespan from one GPU alone, computed exactly by CP-SAT.

The class (:func:`class_problems`): ``v = 1``, uniform durations, ``K`` finite, no
communication delay, one direction, no byte budget, no overlapped ops, and no backward
recomputation in the schedules it bounds (forward recomputation is modelled). Fused or split.

GPU ``p`` alone, ``d = P - p``, ``X`` the chain backward op (``B`` fused, ``I`` split, length
``b_c``), ``b_r`` the releasing op's length (``b`` fused, ``b_W`` split):

* every pair ``j`` has ``F(j)`` (starts at ``p f`` or later: its forward chain on GPUs
  ``0..p-1``), ``X(j)``, split ``W(j)`` after ``X(j)``, and an optional ``R(j)`` between them;
* ``X(j)`` starts at least ``L = (d - 1)(f + b_c)`` after ``F(j)`` ends (the chain
  ``F(j, p+1..P-1)``, ``X(j, P-1..p+1)`` on the other GPUs);
* the makespan is at least the end of every op and ``X(j)``'s end plus the tail
  ``p b_c (+ b_W split)`` (the chain ``X(j, p-1..0)``, split ``W(j, 0)``; on GPU 0 split the
  pair's own ``W`` is modelled);
* one op at a time; at most ``K`` activations live (from the storing op's start, ``F`` or
  ``R``, to the releasing op's end), the half-open intervals of MODEL.md.

Every feasible schedule of the instance, restricted to GPU ``p`` with its start times, is a
feasible point of this problem with the same or a smaller makespan (the precedences above are
the instance's own, through GPUs whose ops are dropped), so the relaxation's optimum is a lower
bound on ``OPT``. Pairs are interchangeable in the relaxation (same heads, lags, tails), so
ordering the forwards ``F(0) < F(1) < ...`` loses no optimum. CP-SAT's proven objective bound
is a proof on the relaxation, hence a valid lower bound on the instance even when the solve
ends before optimality (:attr:`GpuRelaxation.value`).

Measured (docs/synthesis.md, "Schedule or bound"): on ``P = 3, K = 2`` split at ``m = 7..9``
it is the proven optimum where every term of :func:`bounds.lower_bound` before S4 was one unit
below (S4, the window-fill term of docs/theory.md A.7, is a closed form of part of it and
reaches it on most of them); on the synthesis set's instances 14 and 2 it does not rise above
the bound (56, 52).

>>> from schedules import Instance
>>> r = gpu_relaxation(Instance(P=3, m=9, K=2, f=1, b_I=1, b_W=1), 0, time_limit=60)
>>> r.value, r.optimal     # OPT = 31 (CP-SAT without the theory); S4 = 31, the other terms 30
(Fraction(31, 1), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from schedules.errors import InputError
from schedules.instance import Instance

from .proof import plain_problems


def class_problems(inst: Instance) -> list[str]:
    """Why ``inst`` is outside the relaxation's class (empty: inside)."""
    out = []
    if inst.v != 1:
        out.append("v != 1")
    if inst.K is None:
        out.append("K = inf")
    return out + plain_problems(inst)


@dataclass(frozen=True)
class GpuRelaxation:
    """The answer of :func:`gpu_relaxation`: ``value`` a proven lower bound on the relaxation's
    optimum (hence on ``OPT``); ``best`` the makespan of the best relaxed schedule found (None:
    none), ``optimal`` True when ``value == best``; ``status`` CP-SAT's."""

    gpu: int
    value: Fraction
    best: Optional[Fraction]
    optimal: bool
    status: str


def gpu_relaxation(inst: Instance, gpu: int, time_limit: Optional[float] = 60.0,
                   workers: int = 1, cap: Optional[Fraction] = None,
                   lag_extra: Fraction = Fraction(0)) -> GpuRelaxation:
    """The single-GPU relaxation of GPU ``gpu`` (module docstring), solved by CP-SAT.

    ``cap``: look only for relaxed schedules of makespan ``<= cap`` (infeasible then proves the
    bound ``cap + 1/unit``). ``lag_extra``: added to the lag ``L`` (a planted error for the
    checks: any positive value is not a relaxation any more)."""
    from ortools.sat.python import cp_model

    problems = class_problems(inst)
    if problems:
        raise InputError("the single-GPU relaxation needs " + "; ".join(
            f"not {x}" for x in problems))
    if not 0 <= gpu < inst.P:
        raise InputError(f"gpu must be in 0..{inst.P - 1}, got {gpu}")
    unit = inst.unit * Fraction(lag_extra).denominator
    f = int(inst.f * unit)
    split = inst.b_I is not None and inst.b_W is not None
    bc = int((inst.b_I if inst.b_I is not None else inst.b) * unit)
    bw = int(inst.b_W * unit) if inst.b_W is not None else 0
    assert inst.K is not None   # class_problems refuses K = inf
    P, m, K = inst.P, inst.m, int(inst.K)
    d = P - gpu
    lag = (d - 1) * (f + bc) + int(Fraction(lag_extra) * unit)
    tail = gpu * bc + bw if gpu > 0 else 0   # GPU 0 split: its own W is modelled
    remat = K < m
    horizon = (m * (2 * f + bc + bw) + gpu * f + lag + tail) * 2 + 1   # a sequential schedule
    if cap is not None:
        horizon = min(horizon, int(Fraction(cap) * unit))
    md = cp_model.CpModel()
    T = md.new_int_var(0, horizon, "T")
    ops, mem = [], []
    prev = None
    for j in range(m):
        fs = md.new_int_var(gpu * f, horizon, f"fs{j}")
        ops.append(md.new_fixed_size_interval_var(fs, f, f"F{j}"))
        xs = md.new_int_var(0, horizon, f"xs{j}")
        md.add(xs >= fs + f + lag)
        ops.append(md.new_fixed_size_interval_var(xs, bc, f"X{j}"))
        md.add(T >= xs + bc + tail)
        if split:
            ws = md.new_int_var(0, horizon, f"ws{j}")
            md.add(ws >= xs + bc)
            ops.append(md.new_fixed_size_interval_var(ws, bw, f"W{j}"))
            md.add(T >= ws + bw)
            release_end = ws + bw
        else:
            release_end = xs + bc
        store = fs
        if remat:
            r = md.new_bool_var(f"r{j}")
            rs = md.new_int_var(0, horizon, f"rs{j}")
            ops.append(md.new_optional_fixed_size_interval_var(rs, f, r, f"R{j}"))
            md.add(rs >= fs + f).only_enforce_if(r)
            md.add(rs + f <= xs).only_enforce_if(r)
            store = md.new_int_var(0, horizon, f"st{j}")
            md.add(store == fs).only_enforce_if(~r)
            md.add(store == rs).only_enforce_if(r)
        size = md.new_int_var(0, horizon, f"len{j}")
        mem.append(md.new_interval_var(store, size, release_end, f"M{j}"))
        if prev is not None:   # interchangeable pairs: forwards in index order
            md.add(fs >= prev + f)
        prev = fs
    md.add_no_overlap(ops)
    md.add_cumulative(mem, [1] * m, K)
    md.minimize(T)
    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = workers
    code = solver.solve(md)
    status = solver.status_name(code)
    if code == cp_model.INFEASIBLE:   # only with a cap: no relaxed schedule ends by it
        assert cap is not None
        return GpuRelaxation(gpu, Fraction(horizon + 1, unit), None, False, status)
    bound = Fraction(int(-(-solver.best_objective_bound // 1)), unit)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        best = Fraction(int(solver.objective_value), unit)
        return GpuRelaxation(gpu, min(bound, best), best, code == cp_model.OPTIMAL, status)
    return GpuRelaxation(gpu, max(bound, Fraction(0)), None, False, status)


__all__ = ["gpu_relaxation", "GpuRelaxation", "class_problems"]
