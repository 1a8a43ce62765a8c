"""Checks of H1-H10 (docs/theory.md, *Per-stage costs and communication*): the bounds of
:mod:`bounds.heterogeneous`, :mod:`bounds.heterogeneous_memory` and :func:`bounds.lower_bound`
on non-uniform instances are never above an exact optimum, and equal it wherever exactness is
claimed.

Instances are drawn at random (a fixed seed, so every run checks the same ones): per-stage
``f_s`` in 1..3 and ``b_s`` in 1..4 (split: ``b_I,s, b_W,s`` in 1..2), ``c`` in {0, 1},
``P <= 3``, ``m <= 3``, ``v`` in {1, 2} (``S <= 4``), both placements, fused or split,
``K`` in {1, 2, inf}; every instance has non-uniform durations. Each optimum is proven by
:func:`pipebounds.search.solve` with ``use_theory=False`` and no known schedules (the engine
alone, independent of the bounds); a sample is solved again by CP-SAT (also without the theory)
and the two optima must agree. Instances the search does not prove within its time limit are
counted apart, never as checked.
"""

from __future__ import annotations

import random
from fractions import Fraction
from functools import lru_cache
from typing import Optional

from schedules.instance import Instance

from .registry import CheckResult, Context, check

COUNTS = {"quick": 24, "full": 600}
CPSAT_EVERY = {"quick": 8, "full": 10}
TIME_LIMIT = 30.0


def random_instances(count: int, seed: int = 12, Ks=(1, 2, None)) -> list[Instance]:
    """``count`` non-uniform instances of the declared range (deterministic for a seed); ``K``
    drawn from ``Ks``."""
    rng = random.Random(seed)
    out: list = []
    while len(out) < count:
        P = rng.choice((1, 2, 2, 3, 3))
        v = rng.choice((1, 2)) if P <= 2 else 1
        if P == 1:
            v = 2
        S = P * v
        kw = dict(P=P, m=rng.randint(1, 3), v=v, K=rng.choice(Ks),
                  placement=rng.choice(("looped", "vshape")), c=rng.choice((0, 1)),
                  f=[rng.randint(1, 3) for _ in range(S)])
        if rng.random() < 0.5:
            kw["b"] = [rng.randint(1, 4) for _ in range(S)]
        else:
            kw["b_I"] = [rng.randint(1, 2) for _ in range(S)]
            kw["b_W"] = [rng.randint(1, 2) for _ in range(S)]
        inst = Instance(**kw)
        if not inst.uniform:
            out.append(inst)
    return out


@lru_cache(maxsize=8192)
def _optimum(inst: Instance, engine: str = "search") -> Optional[Fraction]:
    from pipebounds.search import solve

    res = solve(inst, time_limit=TIME_LIMIT, engine=engine, use_known=False, use_theory=False)
    return res.makespan if res.status == "optimal" else None


def compare(inst: Instance, opt: Fraction) -> list[str]:
    """Problems of the bounds of ``inst`` against its optimum ``opt`` (empty when all hold)."""
    import bounds
    from bounds import heterogeneous, heterogeneous_memory
    from bounds.evaluate import TERM_IDS

    out = []
    lb = bounds.lower_bound(inst)
    if lb.value > opt:
        out.append(f"lower_bound {lb.value} > OPT {opt} on {inst.to_dict()}")
    if lb.exact and lb.value != opt:
        out.append(f"lower_bound claimed exact, {lb.value} != OPT {opt} on {inst.to_dict()}")
    for name, value, exact in heterogeneous.terms(inst) + heterogeneous_memory.terms(inst):
        if value > opt:
            out.append(f"{TERM_IDS[name]} ({name}) {value} > OPT {opt} on "
                       f"{inst.to_dict()}")
        if exact and value != opt:
            out.append(f"{TERM_IDS[name]} claimed exact, {value} != OPT {opt} "
                       f"on {inst.to_dict()}")
    return out


def _solve_pair(args):
    k, inst, every = args
    opt = _optimum(inst)
    other = None
    if opt is not None and every and k % every == 0:
        try:
            other = _optimum(inst, "cpsat")
        except ImportError:
            other = None
    return opt, other


@check("H1-H3 (per-stage costs and c: work, chain, fill-drain)", theorems=("H1", "H2", "H3"),
       kind="exhaustive",
       range={"quick": "24 random non-uniform instances: P<=3, m<=3, v<=2, K in {1,2,inf}, "
                       "c in {0,1}, fused/split",
              "full": "600 random non-uniform instances: P<=3, m<=3, v<=2, K in {1,2,inf}, "
                      "c in {0,1}, fused/split"})
def heterogeneous_bounds(ctx: Context, instances: Optional[list[Instance]] = None) -> CheckResult:
    """LB <= OPT (and = where claimed exact) on random non-uniform instances; see module doc."""
    from .multi_wave import _map

    import bounds

    insts = instances if instances is not None else random_instances(COUNTS[ctx.mode])
    every = CPSAT_EVERY[ctx.mode]
    results = _map(ctx, _solve_pair, [(k, inst, every) for k, inst in enumerate(insts)])
    problems, checked, unsolved, cross, exact_hits = [], 0, 0, 0, 0
    worst = None
    for inst, (opt, other) in zip(insts, results):
        if opt is None:
            unsolved += 1
            continue
        if other is not None:
            cross += 1
            if other != opt:
                problems.append(f"search OPT {opt} != CP-SAT OPT {other} on {inst.to_dict()}")
        checked += 1
        problems += compare(inst, opt)
        lb = bounds.lower_bound(inst)
        exact_hits += lb.value == opt
        gap = opt / lb.value
        worst = gap if worst is None or gap > worst else worst
    detail = (f"{checked} optima compared ({exact_hits} with LB = OPT), {cross} cross-checked by "
              f"CP-SAT, {unsolved} unsolved in {TIME_LIMIT:g} s")
    if problems:
        detail = "; ".join(problems[:3]) + f" ... ({len(problems)} problems); " + detail
    return CheckResult(checked, not problems and checked > 0, worst, detail)


MEMORY_COUNTS = {"quick": 24, "full": 600}
MEMORY_SEED = 25


@check("H4-H10 (per-stage costs and c with memory: GPU subset, single slot, memory-time, memory "
       "slots, split drain, first backward, single slot per GPU at K = 1)",
       theorems=("H4", "H5", "H6", "H7", "H8", "H9", "H10"), kind="exhaustive",
       range={"quick": "24 random non-uniform instances: P<=3, m<=3, v<=2, K in {1,2,3}, "
                       "c in {0,1}, fused/split",
              "full": "600 random non-uniform instances: P<=3, m<=3, v<=2, K in {1,2,3}, "
                      "c in {0,1}, fused/split"})
def heterogeneous_memory_bounds(ctx: Context,
                                instances: Optional[list[Instance]] = None) -> CheckResult:
    """H4-H10 and ``lower_bound`` <= OPT on random non-uniform instances with finite ``K``
    (the instances of :func:`random_instances` with ``K`` in ``{1, 2, 3}``, another seed);
    the optima as in :func:`heterogeneous_bounds`."""
    insts = instances if instances is not None else random_instances(
        MEMORY_COUNTS[ctx.mode], seed=MEMORY_SEED, Ks=(1, 2, 3))
    return heterogeneous_bounds(ctx, insts)



BACKWARD_COUNTS = {"quick": 12, "full": 150}
BACKWARD_SEED = 10


def random_backward_instances(count: int, seed: int = BACKWARD_SEED) -> list[Instance]:
    """``count`` split instances at ``K = 1``, ``v = 2`` with per-stage costs or a delay
    (deterministic for a seed): ``P`` in {1, 2}, ``m <= 3``, both placements, ``f_s`` in 1..3,
    ``b_I,s, b_W,s`` in 1..2, ``c`` in {0, 1}; uniform durations only with ``c = 1``."""
    rng = random.Random(seed)
    out: list = []
    while len(out) < count:
        P = rng.choice((1, 2, 2, 2))
        S = 2 * P
        kw: dict = dict(P=P, m=rng.randint(1, 3), v=2, K=1,
                        placement=rng.choice(("looped", "vshape")), c=rng.choice((0, 1)),
                        f=[rng.randint(1, 3) for _ in range(S)],
                        b_I=[rng.randint(1, 2) for _ in range(S)],
                        b_W=[rng.randint(1, 2) for _ in range(S)])
        inst = Instance(**kw)
        if not inst.uniform or inst.c:
            out.append(inst)
    return out


def _optimum_backward(inst: Instance) -> Optional[Fraction]:
    from .backward_remat import optimum_backward

    return optimum_backward(inst)


@check("H10 with backward recomputation (split, K = 1: LB <= OPT of the full model; the plain "
       "split form is above some of those optima)", theorems=("H10",), kind="exhaustive",
       range={"quick": "12 random split instances: K=1, v=2, P<=2, m<=3, per-stage costs or "
                       "c=1, backward R allowed",
              "full": "150 random split instances: K=1, v=2, P<=2, m<=3, per-stage costs or "
                      "c=1, backward R allowed"})
def heterogeneous_backward_bounds(ctx: Context,
                                  instances: Optional[list[Instance]] = None) -> CheckResult:
    """``lower_bound(inst, backward_remat=True)`` and H10's backward form are never above the
    optimum of the full model (backward ``R`` between ``I`` and ``W`` allowed; proven by CP-SAT
    with ``backward=True`` and without the theory), the plain H10 is (it is not claimed there)
    on some instance of the full range, and H10's backward form is tight somewhere."""
    import bounds
    from bounds import heterogeneous_memory as hm

    from .multi_wave import _map

    insts = instances if instances is not None else random_backward_instances(
        BACKWARD_COUNTS[ctx.mode])
    optima = _map(ctx, _optimum_backward, insts)
    problems, checked, unsolved, tight, plain_above = [], 0, 0, 0, 0
    worst = None
    for inst, opt in zip(insts, optima):
        if opt is None:
            unsolved += 1
            continue
        checked += 1
        lb = bounds.lower_bound(inst, backward_remat=True)
        h10 = hm.wave_slot_value(inst, True)
        if lb.value > opt:
            problems.append(f"lower_bound(backward_remat=True) {lb.value} > OPT {opt} on "
                            f"{inst.to_dict()}")
        if lb.exact and lb.value != opt:
            problems.append(f"claimed exact, {lb.value} != OPT {opt} on {inst.to_dict()}")
        if h10 > opt:
            problems.append(f"H10 (hetero_wave_slot, backward) {h10} > OPT {opt} on "
                            f"{inst.to_dict()}")
        tight += h10 == opt
        plain_above += hm.wave_slot_value(inst) > opt
        gap = opt / lb.value
        worst = gap if worst is None or gap > worst else worst
    if ctx.mode == "full" and instances is None and not plain_above:
        problems.append("the plain H10 is above no optimum of the full model (the exclusion "
                        "is no longer shown)")
    detail = (f"{checked} optima of the full model (CP-SAT, backward R), H10 = OPT on {tight}, "
              f"the plain H10 above OPT on {plain_above}, {unsolved} unsolved")
    if problems:
        detail = "; ".join(problems[:3]) + f" ... ({len(problems)} problems); " + detail
    return CheckResult(checked, not problems and checked > 0 and tight > 0, worst, detail)
