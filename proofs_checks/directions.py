"""Check of theorem D1 (docs/theory.md A.12, :mod:`bounds.directions`): the bidirectional
model's lower bound is at most the optimum.

Exhaustive on tiny instances and independent of the bound's proof: every per-GPU order of the
GPU's ops (its pairs: stage ``p`` of copy 0's microbatches, stage ``P-1-p`` of copy 1's) that
keeps each pair's forward before its backward (split: ``F`` before ``I`` before ``W``), every set
of disjoint adjacent forward/input-gradient pairs of different pairs joined into ``F&B`` ops
(when the instance gives an overlapped duration), timed by the simulator; the least valid
makespan must be at least ``lower_bound(inst)``, which must not claim exactness. ``K`` is
unconstrained: an optimum at finite ``K`` is at least the unconstrained one (dropping a
recompute never lengthens the ASAP timing), so this covers every ``K``. Reductions, both exact:
the microbatches of one copy are interchangeable, so the stage-0 GPU of each copy runs that
copy's forwards in microbatch order; on a split instance without ``d_FB`` only the split form is
tried (a ``B`` is its ``I`` then its ``W`` at the same place, never better).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations, product
from typing import Any, Optional

from schedules import Instance, Op, Schedule, simulate

from .overlap import joins
from .registry import CheckResult, Context, check


def pairs_of(inst: Instance, p: int) -> list[tuple[int, int]]:
    """``(stage, microbatch)`` of every pair GPU ``p`` runs (MODEL.md, *Directions*)."""
    half = inst.m // 2
    return ([(p, j) for j in range(half)]
            + [(inst.P - 1 - p, j) for j in range(half, inst.m)])


def _orders(inst: Instance, p: int):
    """Every order of GPU ``p``'s ops with each pair's ops in their own order, and the
    microbatches of a copy in order at its stage 0."""
    kinds = ("F", "I", "W") if inst.split else ("F", "B")
    ops = [Op(s, k, j) for s, j in pairs_of(inst, p) for k in kinds]
    for perm in permutations(ops):
        pos = {op: i for i, op in enumerate(perm)}
        if any(pos[Op(op.stage, kinds[kinds.index(op.kind) - 1], op.microbatch)] > pos[op]
               for op in perm if op.kind != "F"):
            continue
        firsts = [(pos[Op(0, "F", j)], j) for s, j in pairs_of(inst, p) if s == 0]
        by_copy = [[x for x in firsts if inst.copy_of(x[1]) == c] for c in (0, 1)]
        if any(sorted(group) != sorted(group, key=lambda x: x[1]) for group in by_copy):
            continue
        yield perm


def least_makespan(inst: Instance) -> Optional[tuple[Fraction, Schedule]]:
    """The least simulated makespan over every order and join (module docstring), and a
    schedule reaching it."""
    per_gpu = [[x for seq in _orders(inst, p) for x in joins(inst, seq)] for p in range(inst.P)]
    best: Optional[tuple[Fraction, Schedule]] = None
    for combo in product(*per_gpu):
        sched = Schedule(inst, tuple(o for o, _ in combo), "exhaustive",
                         overlaps=tuple(s for _, s in combo) if inst.overlapped else None)
        res = simulate(sched)
        if res.valid and res.makespan is not None and (best is None or res.makespan < best[0]):
            best = (res.makespan, sched)
    return best


def _instance(**kw: Any) -> Instance:
    return Instance(directions=2, **kw)


def instances(mode: str = "full") -> list[Instance]:
    """The declared range of ``mode`` (see the check's ``range``): ``quick`` leaves out the
    split instances at ``P = 3`` but ``f = b_I = b_W = 1, c = 0`` (the others take 2 to 10 s
    each) and takes ``c = 1`` only without overlapped durations at ``P <= 3``. ``P = 1`` has
    ``c = 0`` only: no precedence crosses GPUs there."""
    quick = mode == "quick"
    out = []
    fused = ((1, 1), (1, 2), (2, 1), (1, 3))
    split = ((1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 2))
    for P, m in ((1, 2), (1, 4), (2, 2), (3, 2), (4, 2)):
        for c in ((0,) if P == 1 else (0, 1)):
            for f, b in fused:
                for d in (None, f + b, Fraction(f + b, 2)):
                    if d is not None and (P == 4 or m == 4):
                        continue
                    if quick and c and (d is not None or P == 4):
                        continue
                    out.append(_instance(P=P, m=m, f=f, b=b, c=c, d_FB=d))
            if m == 4 or P == 4:
                continue
            for f, bi, bw in split:
                if quick and P == 3 and ((f, bi, bw) != (1, 1, 1) or c):
                    continue
                out.append(_instance(P=P, m=m, f=f, b_I=bi, b_W=bw, c=c))
                if not quick or (P < 3 and not c):
                    out.append(_instance(P=P, m=m, f=f, b_I=bi, b_W=bw, c=c,
                                         d_FI=Fraction(f + bi, 2)))
    return out


def compare(bound, insts=None) -> CheckResult:
    """``bound(inst) <= OPT(inst)`` over ``insts`` (default :func:`instances`); ``bound``
    returns a :class:`bounds.LowerBound`. Separate from the check so that a test can plant an
    error in the bound and see it caught."""
    problems, n, worst = [], 0, None
    for inst in insts if insts is not None else instances():
        found = least_makespan(inst)
        if found is None:
            continue
        opt: Fraction = found[0]
        n += 1
        lb = bound(inst)
        if lb.value > opt or lb.exact:
            problems.append(f"D1 {lb.value} > OPT {opt} (or claimed exact) on {inst.to_dict()}")
        gap = opt / lb.value if lb.value else None
        if gap is not None and (worst is None or gap > worst):
            worst = gap
    return CheckResult(n, not problems, worst, "; ".join(problems[:3]))


FULL_RANGE = ("directions = 2, P <= 4, m = 2 (m = 4 at P = 1), K unconstrained (covers every "
              "K), fused (f, b) in {(1,1), (1,2), (2,1), (1,3)} with d_FB in {none, f+b, (f+b)/2} "
              "(P <= 3, m = 2); split (f, b_I, b_W) in {(1,1,1), (1,2,1), (2,1,1), (1,1,2)} with "
              "d_FI in {none, (f+b_I)/2} (P <= 3); c in {0, 1} (0 at P = 1: no crossing)")


@check("D1: two directions, the middle GPU's head and tail idle plus its work",
       kind="exhaustive", theorems=("D1",),
       range={"full": FULL_RANGE, "quick": FULL_RANGE + "; quick: at P = 3 split only "
                                                       "f = b_I = b_W = 1, c = 0, no d_FI; c = 1 "
                                                       "only without overlapped durations, P <= 3"})
def directions_bound_valid(ctx: Context) -> CheckResult:
    """``lower_bound(inst) <= `` the least makespan of any bidirectional schedule."""
    from bounds import lower_bound

    return compare(lower_bound, instances(ctx.mode))
