"""Check of theorem OV1 (docs/theory.md A.10, :mod:`bounds.overlap`): with overlapped ``F&B``
ops the bound is ``ρ'`` times the bound of the instance without them.

Exhaustive on tiny instances, independent of the bound's proof: every per-GPU order of the
ops that keeps each forward before its own backward, every set of disjoint adjacent
forward/backward pairs of different microbatches joined into ``F&B`` ops (listed backward part
first, :attr:`schedules.schedule.Schedule.overlaps`), timed by the simulator; the least valid
makespan must be at least ``lower_bound(inst)``. Ranges: fused, ``v = 1``, ``P in {1, 2}``,
``m <= 3`` (``m <= 2`` at ``P = 2``), ``K`` in {1, 2, unconstrained}, ``f = 1``, ``b in {1, 2}``,
``d_FB`` in {``f + b``, ``(f + b)/2``, ``b``}.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations, product

from schedules import Instance, Op, Schedule, simulate

from .registry import CheckResult, Context, check


def _orders(inst: Instance, p: int):
    """Every order of GPU ``p``'s ops with each forward before its own backward."""
    ops = [Op(s, k, j) for s in inst.stages_of(p) for j in range(inst.m) for k in ("F", "B")]
    for perm in permutations(ops):
        pos = {op: i for i, op in enumerate(perm)}
        if all(pos[Op(op.stage, "F", op.microbatch)] < pos[op] for op in perm if op.kind == "B"):
            yield perm


def joins(inst: Instance, seq):
    """Every way of joining disjoint adjacent (forward, input gradient) ops of different pairs
    into ``F&B`` ops, listed backward part first: ``(order, starts)``; only the plain order
    when the instance gives no overlapped duration."""
    if not inst.overlapped:
        yield tuple(seq), ()
        return
    grad = {"B", "I"}
    cands = [i for i in range(len(seq) - 1)
             if {seq[i].kind, seq[i + 1].kind} in ({"F", "B"}, {"F", "I"})
             and (seq[i].stage, seq[i].microbatch) != (seq[i + 1].stage, seq[i + 1].microbatch)
             and (seq[i].kind in grad or seq[i + 1].kind in grad)]
    for mask in product((False, True), repeat=len(cands)):
        chosen = [i for i, on in zip(cands, mask) if on]
        if any(b - a < 2 for a, b in zip(chosen, chosen[1:])):
            continue
        out = list(seq)
        for i in chosen:
            if out[i].kind == "F":
                out[i], out[i + 1] = out[i + 1], out[i]
        yield tuple(out), tuple(chosen)


def least_makespan(inst: Instance):
    """The least simulated makespan over every order and join (module docstring)."""
    per_gpu = [[j for seq in _orders(inst, p) for j in joins(inst, seq)] for p in range(inst.P)]
    best = None
    for combo in product(*per_gpu):
        sched = Schedule(inst, tuple(o for o, _ in combo), overlaps=tuple(s for _, s in combo))
        res = simulate(sched)
        if res.valid and (best is None or res.makespan < best):
            best = res.makespan
    return best


def instances():
    out = []
    for P, m in ((1, 1), (1, 2), (1, 3), (2, 1), (2, 2)):
        for K, b in product((1, 2, None), (1, 2)):
            for d in (1 + b, Fraction(1 + b, 2), b):
                out.append(Instance(P=P, m=m, K=K, f=1, b=b, d_FB=d))
    return out


@check("OV1: with F&B ops, rho' times the bound without them", kind="exhaustive",
       theorems=("OV1",), range="fused v = 1, P <= 2, m <= 3 (2 at P = 2), K in {1, 2, inf}, "
                                "f = 1, b in {1, 2}, d_FB in {f+b, (f+b)/2, b}")
def overlap_bound_valid(ctx: Context) -> CheckResult:
    """``lower_bound(inst) <= `` the least makespan of any schedule with ``F&B`` ops."""
    from bounds import lower_bound

    problems, n, worst = [], 0, None
    for inst in instances():
        opt = least_makespan(inst)
        if opt is None:
            continue
        n += 1
        lb = lower_bound(inst)
        if lb.value > opt or lb.exact:
            problems.append(f"OV1 {lb.value} > least makespan {opt} (or claimed exact) on "
                            f"{inst.to_dict()}")
        gap = opt / lb.value if lb.value else None
        if gap is not None and (worst is None or gap > worst):
            worst = gap
    return CheckResult(n, not problems, worst, "; ".join(problems[:3]))
