"""Checks of the bounds over the full model, backward recomputation included (docs/theory.md
A.11, :mod:`bounds.backward_remat`).

Each optimum is proven by the CP-SAT model with backward ``R`` ops
(:func:`pipebounds.search.cpsat.solve_cpsat` with ``backward=True``, ``use_theory=False``:
independent of :mod:`bounds`; known schedules only as hints, each re-simulated). The check
fails if a term of ``lower_bound(inst, backward_remat=True)`` is above an optimum, if the bound
claims exactness and differs, or if an optimum of the full model is above the optimum without
backward ``R`` ops of the same instance where both are solved (the full model contains every
schedule of the plain one). It also confirms the refutations that make the backward forms
necessary: S1, MW1 (MW8d's exact case), MW9 and T3 split above a proven optimum of the full
model.

Ranges: split, ``v = 1``: ``P in {2, 3}``, ``m <= 5``, ``K < m`` in ``{1, 2, 3}``,
``f, b_I, b_W in {1, 2, 3}``; ``v = 2``, both placements: ``P in {2, 3}``, ``m <= 3``
(``m <= 2`` at ``P = 3``), ``K < 2m`` in ``{1, 2, 3}``, ``f, b_I, b_W in {1, 2}``. Quick: a fixed
subset chosen so that every term that is ever tight there is tight on one of them (so a planted
``+1`` is caught, tests/test_bounds_backward_remat.py; MW7r, never tight on the range, comes
within 35/36 of an optimum there, so a planted ``x (1 + 1/16)`` is caught).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product
from typing import Optional

from schedules.instance import Instance

from .registry import CheckResult, Context, check

TIME_LIMIT = 20.0

REFUTATIONS = (
    # (instance, plain term refuted by the full model)
    (dict(P=3, m=3, K=2, f=3, b_I=3, b_W=1), "split_drain"),
    (dict(P=3, m=1, K=1, v=2, placement="vshape", f=2, b_I=2, b_W=2), "mw_gpu_subset"),
    (dict(P=2, m=3, K=1, v=2, placement="vshape", f=1, b_I=2, b_W=1), "mw_single_slot"),
    (dict(P=4, m=4, K=1, f=1, b_I=1, b_W=1), "single_slot"),
)
"""Instances where a plain term is above the optimum of the full model: S1 32 > 31, MW1
(MW8d) 30 > 28, MW9 32 > 31 (found by this check's range) and T3 split 19 > 18 at unit
durations (found by the search of docs/theory.md A.11 aimed at T3 > T3r; MW11r = T3r = 18
there)."""

QUICK = (
    dict(P=2, m=4, K=3, f=2, b_I=2, b_W=2),
    dict(P=2, m=4, K=2, f=2, b_I=1, b_W=3),
    dict(P=3, m=3, K=1, f=1, b_I=1, b_W=1),
    dict(P=2, m=2, K=1, f=2, b_I=1, b_W=3),
    dict(P=2, m=2, K=1, f=1, b_I=2, b_W=1),
    dict(P=3, m=4, K=2, f=1, b_I=3, b_W=1),
    dict(P=2, m=2, K=1, v=2, placement="looped", f=2, b_I=2, b_W=2),
    dict(P=2, m=2, K=1, v=2, placement="vshape", f=2, b_I=1, b_W=1),
    dict(P=2, m=1, K=1, v=2, placement="looped", f=2, b_I=1, b_W=1),
    dict(P=2, m=2, K=2, v=2, placement="vshape", f=1, b_I=2, b_W=1),
    dict(P=2, m=3, K=1, v=2, placement="looped", f=1, b_I=2, b_W=2),   # MW7r 35 of OPT 36
)


def _inst(kw: dict) -> Instance:
    kw = dict(kw)
    kw.setdefault("b", kw["b_I"] + kw["b_W"])
    return Instance(**kw)


def full_range() -> list[Instance]:
    """The declared range (module docstring), in a fixed order."""
    out = []
    for P, m, K, f, bI, bW in product((2, 3), (2, 3, 4, 5), (1, 2, 3), (1, 2, 3), (1, 2, 3),
                                      (1, 2, 3)):
        if K < m and not (P == 3 and m == 5 and K == 1):
            out.append(_inst(dict(P=P, m=m, K=K, f=f, b_I=bI, b_W=bW)))
    for P, m, K, f, bI, bW, pl in product((2, 3), (1, 2, 3), (1, 2, 3), (1, 2), (1, 2), (1, 2),
                                          ("looped", "vshape")):
        if K < 2 * m and not (P == 3 and m == 3):
            out.append(_inst(dict(P=P, m=m, K=K, v=2, placement=pl, f=f, b_I=bI, b_W=bW)))
    return out


def instances(mode: str) -> list[Instance]:
    """The instances of ``mode``: the refutations, then the quick set or the full range."""
    base = [_inst(kw) for kw, _ in REFUTATIONS]
    rest = [_inst(kw) for kw in QUICK] if mode == "quick" else full_range()
    return list(dict.fromkeys(base + rest))


@lru_cache(maxsize=4096)
def optimum_backward(inst: Instance) -> Optional[Fraction]:
    """The optimum of the full model (backward ``R`` allowed), proven by CP-SAT without the
    theory, or None when not proven in :data:`TIME_LIMIT`."""
    from pipebounds.search.cpsat import solve_cpsat

    res = solve_cpsat(inst, time_limit=TIME_LIMIT, workers=1, use_theory=False,
                      backward=True)
    return res.makespan if res.status == "optimal" else None


def compare(inst: Instance, opt: Fraction) -> list[str]:
    """Problems of ``lower_bound(inst, backward_remat=True)`` against the full model's
    optimum ``opt`` (empty when all hold)."""
    from bounds import lower_bound
    from bounds.evaluate import TERM_IDS

    out = []
    lb = lower_bound(inst, backward_remat=True)
    for name, value in lb.terms:
        if value > opt:
            out.append(f"{TERM_IDS[name]} ({name}) {value} > OPT {opt} (backward R allowed) "
                       f"on {inst.to_dict()}")
    if lb.exact and lb.value != opt:
        out.append(f"lower_bound(backward_remat=True) claimed exact, {lb.value} != OPT {opt} "
                   f"on {inst.to_dict()}")
    return out


def _solve(inst: Instance):
    return optimum_backward(inst)


@check("Bounds over the full model (backward recomputation: S1r, S3r, T3r, MW1r, MW7r, MW9r, "
       "MW11r)",
       theorems=("S1r", "S3r", "T3r", "MW1r", "MW7r", "MW9r", "MW11r"), kind="exhaustive",
       range={"quick": f"{len(REFUTATIONS)} refutations + {len(QUICK)} split instances, v <= 2, "
                       "K in {1,2,3}",
              "full": "split v = 1: P <= 3, m <= 5, K < m, f, b_I, b_W in 1..3; v = 2 both "
                      "placements: P <= 3, m <= 3, K < 2m, f, b_I, b_W in 1..2"})
def backward_remat_valid(ctx: Context, insts: Optional[list[Instance]] = None) -> CheckResult:
    """LB(backward_remat=True) <= OPT of the full model on every instance of the range; the
    plain S1, MW1 and MW9 above it on :data:`REFUTATIONS` (module docstring)."""
    from bounds import lower_bound

    from .multi_wave import _map

    insts = instances(ctx.mode) if insts is None else insts
    opts = _map(ctx, _solve, insts)
    problems, checked, unsolved, tight, worst = [], 0, 0, 0, None
    refuted = 0
    by_inst = dict(zip(insts, opts))
    for kw, name in REFUTATIONS:
        inst = _inst(kw)
        opt = by_inst.get(inst)
        if opt is None:
            continue
        plain = dict(lower_bound(inst).terms).get(name)
        if plain is not None and plain > opt:
            refuted += 1
        else:
            problems.append(f"{name} = {plain} no longer above OPT {opt} (backward R) on "
                            f"{inst.to_dict()}: the refutation does not reproduce")
    for inst, opt in zip(insts, opts):
        if opt is None:
            unsolved += 1
            continue
        checked += 1
        problems += compare(inst, opt)
        lb = lower_bound(inst, backward_remat=True).value
        tight += lb == opt
        gap = opt / lb
        worst = gap if worst is None or gap > worst else worst
    detail = (f"{checked} optima of the full model compared ({tight} with LB = OPT), "
              f"{refuted} of {len(REFUTATIONS)} refutations of the plain terms reproduced, "
              f"{unsolved} unsolved in {TIME_LIMIT:g} s")
    if problems:
        detail = "; ".join(problems[:3]) + f" ... ({len(problems)} problems); " + detail
    return CheckResult(checked, not problems and checked > 0, worst, detail)
