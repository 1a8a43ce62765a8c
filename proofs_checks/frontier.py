"""Checks of the memory frontier K* (docs/theory_frontier.md, theorems KF0-KF3).

* :func:`frontier_table`: on every independent single-wave fused row of pipebounds/data/optima.jsonl,
  ``OPT(K) = T1`` exactly when ``K >= K*`` as computed by :func:`pipebounds.services.frontier.frontier`
  (no solving: the construction and the bounds only), and K* is exact there. This is the
  agreement with optima found without any bound (``use_theory=False``).
* :func:`frontier_grid`: ``frontier`` gives ``K_star_exact`` on every instance of the declared
  grid, with ``K* =`` KF3's value where KF3 is claimed (``b >= 2 f``), and its certificate
  is valid, peaks at ``<= K*`` and reaches T1; every ``K < K*`` has a proven bound above T1.
* :func:`kf2_matches_bound`: KF2's closed form equals the least ``K`` whose
  :func:`bounds.lower_bound` is at most T1 (the closed form is Theorem 2 read at T1).

Each body is a plain function of its inputs (``frontier_fn``, ``kf3_fn``) so that
tests/test_frontier.py can plant an error and see the check fail.
"""

from __future__ import annotations

import json
from fractions import Fraction

from .registry import CheckResult, Context, check

GRID_QUICK = dict(P=range(2, 5), m=range(1, 9), ratios=((1, 2),))
GRID_FULL = dict(P=range(2, 7), m=range(1, 13), ratios=((1, 2), (1, 3), (1, 1), (2, 1)))


def _single_fused(inst) -> bool:
    return inst.v == 1 and not inst.split and not inst.c


def table_agreement(rows, frontier_fn, single_only: bool = True) -> CheckResult:
    """``rows``: ``(instance, opt)``; for each base instance, the rows' verdicts
    ``OPT(K) == OPT(inf)`` must be ``K >= K*`` where K* is settled, and respect the bracket
    ``[K_star_low, K_star_high]`` elsewhere."""
    by_base: dict = {}
    for inst, opt in rows:
        if inst.K is None or inst.c or (single_only and not _single_fused(inst)):
            continue
        by_base.setdefault(inst.with_(K=None), []).append((inst.K, opt))
    n = settled = 0
    for base, ks in sorted(by_base.items(), key=lambda kv: (kv[0].P, kv[0].m, kv[0].f, kv[0].b)):
        fr = frontier_fn(base)
        T1 = fr.optimum_unconstrained
        if T1 is None:
            continue
        settled += fr.K_star_exact
        if not fr.K_star_exact:
            # where K* is not settled, the bracket must still hold
            for K, opt in ks:
                n += 1
                if (K < fr.K_star_low and opt <= T1) or (fr.K_star_high is not None
                                                        and K >= fr.K_star_high and opt != T1):
                    return CheckResult(n, False, None, f"{base} K={K}: OPT {opt}, bracket "
                                       f"[{fr.K_star_low}, {fr.K_star_high}]")
            continue
        for K, opt in ks:
            n += 1
            if (opt == T1) != (K >= fr.K_star):
                return CheckResult(n, False, None, f"{base}: OPT(K={K}) = {opt}, OPT(inf) = {T1}, "
                                   f"but K* = {fr.K_star}")
    return CheckResult(n, True, None, f"{len(by_base)} base instances, K* settled without "
                       f"solving on {settled}")


def grid_exact(grid, frontier_fn, kf3_fn) -> CheckResult:
    from bounds.frontier import fill_drain
    from schedules.instance import Instance
    from schedules.simulate import simulate

    n = exact = 0
    misses = []
    for f, b in grid["ratios"]:
        for P in grid["P"]:
            for m in grid["m"]:
                inst = Instance(P=P, m=m, f=f, b=b)
                claimed = Fraction(b) >= 2 * Fraction(f)
                fr = frontier_fn(inst) if claimed else frontier_fn(inst, 20_000)
                n += 1
                T1 = fill_drain(inst)
                if fr.optimum_unconstrained != T1:
                    return CheckResult(n, False, None, f"{inst}: OPT(inf) {fr.optimum_unconstrained} != T1")
                if not fr.K_star_exact:
                    misses.append((P, m, f, b))
                    if claimed:
                        return CheckResult(n, False, None, f"{inst}: K* not exact "
                                           f"[{fr.K_star_low}, {fr.K_star_high}]")
                    continue
                exact += 1
                if claimed and fr.K_star != kf3_fn(inst):
                    return CheckResult(n, False, None, f"{inst}: K* {fr.K_star} != KF3 "
                                       f"{kf3_fn(inst)}")
                if fr.certificate is not None:
                    r = simulate(fr.certificate)
                    if not r.valid or r.makespan != T1 or max(r.peak_memory) > fr.K_star:
                        return CheckResult(n, False, None, f"{inst}: bad certificate")
                for pt in fr.curve:
                    if pt.K < fr.K_star and not pt.lower_bound > T1:
                        return CheckResult(n, False, None, f"{inst}: K={pt.K} < K* without a "
                                           f"bound above T1")
    detail = f"{exact} of {n} exact"
    if misses:
        detail += f"; not settled without solving (f > b or b < 2f, no claim): {misses[:6]}"
    return CheckResult(n, True, None, detail)


def _frontier_no_solve(inst, nodes=None):
    from pipebounds.services.frontier import frontier

    return frontier(inst, time_limit=0, nodes=nodes)


@check("KF0-KF3 memory frontier K* (agreement with independent optima)", kind="exhaustive",
       theorems=("KF0", "KF1", "KF2", "KF3"),
       range="every independent single-wave fused row of pipebounds/data/optima.jsonl with finite K")
def frontier_table(ctx: Context) -> CheckResult:
    from .table import optima_rows

    nodes = 20_000  # a miss leaves a bracket, which is checked too
    return table_agreement(optima_rows(lambda i: i.v == 1 and not i.split and not i.c
                                       and i.K is not None),
                           lambda inst: _frontier_no_solve(inst, nodes))


@check("KF3 K* = max(KF2, 1 + [m > 2 + b/f]) for b >= 2f (construction at K*)",
       kind="exhaustive", theorems=("KF1", "KF3"),
       range={"quick": "P 2..4, m 1..8, f=1 b=2",
              "full": "P 2..6, m 1..12, (f,b) in (1,2) (1,3) [claimed]; (1,1) (2,1) [reported]"})
def frontier_grid(ctx: Context) -> CheckResult:
    from bounds.frontier import kf3_value

    return grid_exact(GRID_QUICK if ctx.mode == "quick" else GRID_FULL, _frontier_no_solve,
                      kf3_value)


@check("KF2 closed form = least K with lower_bound <= T1", kind="exhaustive", theorems=("KF2",),
       range={"quick": "P 1..5, m 1..10, (f,b) (1,2) (2,1)", "full": "P 1..8, m 1..16, 7 ratios"})
def kf2_matches_bound(ctx: Context) -> CheckResult:
    from bounds.frontier import K_star_low, fill_drain, kf3_value
    from schedules.instance import Instance

    ratios = ((1, 2), (2, 1)) if ctx.mode == "quick" else (
        (1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2))
    Pm = (6, 11) if ctx.mode == "quick" else (9, 17)
    n = 0
    for f, b in ratios:
        for P in range(1, Pm[0]):
            for m in range(1, Pm[1]):
                inst = Instance(P=P, m=m, f=f, b=b)
                n += 1
                a, c = kf3_value(inst), K_star_low(inst, fill_drain(inst), min(m, P))
                if a != c:
                    return CheckResult(n, False, None, f"{inst}: KF3 value {a} != bound's {c}")
    return CheckResult(n, True, None, "")


@check("K* bracket on split and multi-wave instances (agreement with independent optima)",
       kind="exhaustive",
       range={"quick": "independent rows of pipebounds/data/optima.jsonl, split or v >= 2, P <= 2",
              "full": "every independent row of pipebounds/data/optima.jsonl, split or v >= 2, finite K "
                      "(1,610 rows, 659 instances; those whose OPT(inf) the bounds settle are compared)"})
def frontier_table_general(ctx: Context) -> CheckResult:
    """No solving: the bracket ``[K_star_low, K_star_high]`` from the bounds and the known
    schedules fitted to ``K`` must contain the table's ``K*``, and be the table's ``K*`` where
    it closes."""
    from .table import optima_rows

    P_max = 2 if ctx.mode == "quick" else 99
    rows = optima_rows(lambda i: i.K is not None and not i.c and (i.split or i.v > 1)
                       and i.P <= P_max)
    return table_agreement(rows, _frontier_no_solve, single_only=False)


def table_k_star(rows) -> dict:
    """``{base instance: K*}`` read off rows ``(instance, opt)`` that give ``OPT(inf)`` and
    every ``K`` from 1 up to the first ``K`` reaching it (bases with a gap are left out)."""
    by_base: dict = {}
    for inst, opt in rows:
        by_base.setdefault(inst.with_(K=None), {})[inst.K] = opt
    out = {}
    for base, ks in by_base.items():
        if None not in ks:
            continue
        for K in range(1, base.v * base.m + 1):
            if K not in ks:
                break
            if ks[K] == ks[None]:
                out[base] = K
                break
    return out


def kf4_agreement(rows, kf4_fn) -> CheckResult:
    n = 0
    for base, K_star in sorted(table_k_star(rows).items(), key=lambda kv: str(kv[0])):
        want = kf4_fn(base)
        if want is None:
            continue
        n += 1
        if want != K_star:
            return CheckResult(n, False, None, f"{base}: table K* {K_star}, KF4 {want}")
    return CheckResult(n, True, None, "")


@check("KF4 v = 2 frontier (observed: looped P+1, vshape f=b 2P)", kind="exhaustive",
       theorems=("KF4",),
       range="every v = 2 fused instance of pipebounds/data/optima.jsonl with m >= P in KF4's range")
def kf4_table(ctx: Context) -> CheckResult:
    from bounds.frontier import kf4_value

    from .table import optima_rows

    return kf4_agreement(optima_rows(lambda i: i.v == 2 and not i.split and not i.c), kf4_value)


KF5_DATA = "data/frontier_v2_split.jsonl"
"""Exact ``K*`` of small ``v = 2`` split instances (docs/theory_frontier.md §8): per base
instance ``OPT(inf)`` and ``OPT(K)`` for ``K = 1 .. K*``, each proven by CP-SAT without any
bound of :mod:`bounds` (``use_theory=False``), written by the sweep of §8."""


def kf5_rows() -> list:
    """``(base instance, OPT(inf), {K: OPT(K)})`` of :data:`KF5_DATA` (repository root)."""
    from pathlib import Path

    from schedules.instance import Instance

    path = Path(__file__).resolve().parents[1] / KF5_DATA
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        inst = Instance(P=r["P"], m=r["m"], v=2, placement=r["placement"], f=r["f"],
                        b_I=r["b_I"], b_W=r["b_W"])
        out.append((inst, Fraction(r["opt_inf"]),
                    {int(K): Fraction(x) for K, x in r["opts"].items()}))
    return out


def kf5_agreement(split_rows, fused_rows, kf5_fn) -> CheckResult:
    """KF5 ``<= K*`` on every row: ``split_rows`` as :func:`kf5_rows` (the rows must read
    ``OPT(K) > OPT(inf)`` below their last ``K`` and ``= OPT(inf)`` at it, which is then
    ``K*``), ``fused_rows`` ``(instance, opt)`` rows of the table (``K*`` by
    :func:`table_k_star`). Reports how often KF5 is ``K*``."""
    n = equal = 0
    cases = []
    for inst, opt_inf, opts in split_rows:
        K_star = max(opts)
        if sorted(opts) != list(range(1, K_star + 1)) or opts[K_star] != opt_inf or any(
                opts[K] <= opt_inf for K in range(1, K_star)):
            return CheckResult(n, False, None, f"{inst}: the stored curve {opts} does not "
                               f"give K* (OPT(inf) = {opt_inf})")
        cases.append((inst, opt_inf, K_star))
    inf = {i: o for i, o in fused_rows if i.K is None}
    cases += [(b, inf[b], K) for b, K in table_k_star(fused_rows).items()]
    for inst, opt_inf, K_star in cases:
        n += 1
        got = kf5_fn(inst, opt_inf)
        if got > K_star:
            return CheckResult(n, False, None, f"{inst}: KF5 = {got} > K* = {K_star}")
        equal += got == K_star
    return CheckResult(n, True, None, f"KF5 = K* on {equal} of {n} ({len(split_rows)} v = 2 "
                       f"split instances of {KF5_DATA}, the rest v = 2 fused table rows)")


@check("KF5 K* >= max(K_F, K_L) for v >= 2 (agreement with exact K*)", kind="exhaustive",
       theorems=("KF5",),
       range=f"every instance of {KF5_DATA} (64: v = 2 split, P, m in 2..3, f, b_I, b_W in 1..2, "
             "both placements) and every v = 2 fused base of pipebounds/data/optima.jsonl with "
             "a K* (OPT(K) for every K up to it)")
def kf5_table(ctx: Context) -> CheckResult:
    from bounds.frontier import kf5_value

    from .table import optima_rows

    return kf5_agreement(kf5_rows(), optima_rows(lambda i: i.v == 2 and not i.split
                                                  and not i.c), kf5_value)


KF5_ATTAINED_DATA = "data/frontier_v2_split_kf5.jsonl"
"""``K*`` of ``v = 2`` split instances beyond :data:`KF5_DATA`, closed by KF5 and a schedule
(docs/theory_frontier.md §8, tools/frontier_v2_split.py): per base instance ``OPT(inf)``
(CP-SAT, ``use_theory=False, use_known=False``), the decisions "makespan ``<= OPT(inf)`` at
peak ``<= K``" from ``K = KF5`` up, and the schedule of the feasible one."""


def kf5_attained_rows() -> list:
    """``(base instance, row)`` of :data:`KF5_ATTAINED_DATA` (repository root)."""
    from pathlib import Path

    from schedules.instance import Instance

    path = Path(__file__).resolve().parents[1] / KF5_ATTAINED_DATA
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            out.append((Instance(P=r["P"], m=r["m"], v=2, placement=r["placement"],
                                 f=Fraction(r["f"]), b_I=Fraction(r["b_I"]),
                                 b_W=Fraction(r["b_W"])), r))
    return out


def _resolve_kf5_row(inst, row, time_limit: float = 600.0) -> tuple[str, int]:
    """Re-prove a stored row's solver answers (CP-SAT without any bound of ``bounds``):
    ``OPT(inf)``, and ``OPT(K) > OPT(inf)`` at every K recorded infeasible. Returns ``(error,
    undecided)``: ``error`` "" unless a re-solve contradicts the row (another ``OPT(inf)``, or
    a schedule of makespan ``<= OPT(inf)`` at a K recorded infeasible); ``undecided`` the
    answers not re-proven within ``time_limit`` (the stored proof then stands unconfirmed)."""
    from pipebounds.search.cpsat import solve_cpsat

    opt_inf = Fraction(row["opt_inf"])
    undecided = 0
    r = solve_cpsat(inst, time_limit=time_limit, use_known=False, use_theory=False)
    if r.status == "optimal" and r.makespan != opt_inf or (
            r.makespan is not None and r.makespan < opt_inf) or r.lower_bound > opt_inf:
        return f"OPT(inf) re-solved: {r.status} {r.makespan}, stored {opt_inf}", undecided
    undecided += r.status != "optimal"
    for K, verdict in row["decisions"].items():
        if verdict == "infeasible":
            d = solve_cpsat(inst.with_(K=int(K)), time_limit=time_limit, use_known=False,
                            use_theory=False, cap=int(opt_inf))
            if d.makespan is not None and d.makespan <= opt_inf:
                return (f"K={K} recorded infeasible, but a schedule of makespan {d.makespan} "
                        "was found", undecided)
            undecided += not d.lower_bound > opt_inf
    return "", undecided


def kf5_attained_agreement(rows, kf5_fn, resolve=None) -> CheckResult:
    """``rows`` as :func:`kf5_attained_rows`. For each row: the theory's bound at ``K = inf``
    is at most the stored ``OPT(inf)``; the stored schedule re-simulates valid, of makespan
    ``OPT(inf)`` and peak ``<= K_star_high`` (so ``K* <= K_star_high``); ``kf5_fn`` (KF5, a
    lower bound on ``K*``) is at most ``K_star_high`` and no ``K`` recorded infeasible is at or
    above it. ``K*`` is closed where KF5, raised past the ``K`` proven infeasible, meets
    ``K_star_high``. ``resolve(inst, row)`` (full mode) re-proves the solver answers,
``(error, undecided)`` as :func:`_resolve_kf5_row`; a contradiction fails the check, an answer
not re-proven in time is counted in the detail."""
    from bounds import lower_bound
    from schedules.schedule import Schedule
    from schedules.simulate import simulate

    n = closed = equal = undecided = 0
    misses: list[str] = []
    still_open: list[str] = []
    for inst, row in rows:
        if row.get("opt_inf") is None:
            continue
        n += 1
        opt_inf = Fraction(row["opt_inf"])
        lb = lower_bound(inst).value
        if lb > opt_inf:
            return CheckResult(n, False, None, f"{inst}: LB(inf) {lb} > OPT(inf) {opt_inf}")
        high = row["K_star_high"]
        if row.get("orders") is not None:
            sim = simulate(Schedule.from_strings(inst.with_(K=high), row["orders"]))
            if not (sim.valid and sim.makespan == opt_inf and max(sim.peak_memory) <= high):
                return CheckResult(n, False, None, f"{inst}: the stored schedule (valid "
                                   f"{sim.valid}, makespan {sim.makespan}, peak "
                                   f"{max(sim.peak_memory)}) does not reach OPT(inf) = "
                                   f"{opt_inf} at K = {high}")
        elif high != inst.v * inst.m:
            return CheckResult(n, False, None, f"{inst}: K_star_high {high} without a schedule")
        k5 = kf5_fn(inst, opt_inf)
        if k5 > high:
            return CheckResult(n, False, None, f"{inst}: KF5 = {k5} > {high}, a memory at "
                               f"which a schedule reaches OPT(inf) = {opt_inf}")
        infeasible = [int(K) for K, v in row["decisions"].items() if v == "infeasible"]
        if any(K >= high for K in infeasible):
            return CheckResult(n, False, None, f"{inst}: K recorded infeasible at or above "
                               f"K_star_high = {high}")
        low = max([k5] + [K + 1 for K in infeasible])  # OPT(K) does not rise with K
        if resolve is not None:
            err, left = resolve(inst, row)
            if err:
                return CheckResult(n, False, None, f"{inst}: {err}")
            undecided += left
        name = (f"P={inst.P} m={inst.m} {inst.placement} f={row['f']} b_I={row['b_I']} "
                f"b_W={row['b_W']}")
        if low < high:
            still_open.append(f"{name}: [{low}, {high}]")
        if low == high:
            closed += 1
            equal += k5 == high
            if k5 < high:
                misses.append(f"{name}: KF5 {k5}, K* {high}")
    detail = (f"K* closed on {closed} of {n} v = 2 split instances of {KF5_ATTAINED_DATA}; "
              f"KF5 = K* on {equal}")
    if misses:
        detail += f"; K* = KF5 + proven infeasible K on {len(misses)}: " + "; ".join(misses)
    if still_open:
        detail += "; open (the decision at the lower end ran out of time): " + "; ".join(still_open)
    if resolve is not None:
        detail += (f"; solver answers re-proven: all but {undecided} (not decided in time, "
                   "none contradicted)")
    return CheckResult(n, True, None, detail)


@check("KF5 attained: K* = KF5 by a schedule at KF5 on v = 2 split instances (K* closed by "
       "the bound and a schedule)", kind="exhaustive", theorems=("KF5",),
       range={"quick": f"every instance of {KF5_ATTAINED_DATA} (v = 2 split, both placements, "
                       "f, b_I, b_W in {1, 2}; (P, m) in 2x4, 2x5, 2x6, 3x4, 3x5, 4x2, 4x3, "
                       "4x4): schedules re-simulated",
              "full": f"every instance of {KF5_ATTAINED_DATA}: schedules re-simulated, "
                      "OPT(inf) and every infeasible decision re-solved by CP-SAT "
                      "(use_theory=False, 600 s each: a contradiction fails, an answer not "
                      "re-proven in time is counted)"})
def kf5_attained(ctx: Context) -> CheckResult:
    from bounds.frontier import kf5_value

    return kf5_attained_agreement(kf5_attained_rows(), kf5_value,
                                  _resolve_kf5_row if ctx.mode == "full" else None)
