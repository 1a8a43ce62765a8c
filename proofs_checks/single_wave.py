"""Machine checks of the single-wave theorems (docs/theory.md, ``v = 1``).

Symbolic checks: sympy proves the identities and inequalities the proofs use (reductions of
T2/T3 to T1 on the last GPU, monotonicity in ``K``, the piecewise form of T3's ``W_p``, the
split bound's reduction to the ZB-H1/ZB-H2 bubbles) and that every theorem's sympy expression
evaluates to the exact Fraction evaluator's value.

Exhaustive checks: over a declared range, the exact optimum comes from
:func:`pipebounds.search.solve` run **independently of the bound under test**
(``use_theory=False``: the solver does not start from :func:`bounds.lower_bound`, so a wrong
bound cannot certify itself); then ``LB <= OPT`` always,
``LB = OPT`` wherever ``exact`` is claimed, and every constructive schedule is valid, within
``K`` and has makespan ``LB``. An instance the solver does not close within the time limit is
reported in the detail as open (its incumbent still checks ``LB <= incumbent``); an instance
counts as closed only when that independent engine proves its optimum (an incumbent equal to
the bound under test proves nothing about the bound).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Iterable, Optional

import sympy as sp

from .registry import CheckResult, Context, check

DUR3 = (1, 2, 3)
PAIRS_QUICK = ((1, 1), (1, 2), (2, 1), (2, 3), (3, 2))
PAIRS_FULL = tuple((a, c) for a in DUR3 for c in DUR3)


# --------------------------------------------------------------------------- helpers
def resolve_minmax(expr: sp.Expr) -> sp.Expr:
    """Drop every argument of a ``Max``/``Min`` that sympy proves dominated (the difference
    factors into a provably non-negative expression), until nothing changes."""

    def one(node):
        is_max = isinstance(node, sp.Max)
        args = list(node.args)
        keep = []
        for i, a in enumerate(args):
            dominated = False
            for j, c in enumerate(args):
                if i == j:
                    continue
                diff = sp.factor(sp.simplify((c - a) if is_max else (a - c)))
                if diff.is_nonnegative and not (diff == 0 and j > i):
                    dominated = True
                    break
            if not dominated:
                keep.append(a)
        return keep[0] if len(keep) == 1 else (sp.Max if is_max else sp.Min)(*keep)

    for _ in range(12):
        new = expr.replace(lambda n: isinstance(n, (sp.Max, sp.Min)), one)
        if new == expr:
            break
        expr = new
    return expr


def _solve_one(job: tuple[dict, float]) -> dict:
    """Worker: the independent optimum of one instance, with the bound and the construction."""
    from bounds import lower_bound
    from schedules import Instance, simulate
    from pipebounds.constructions import optimal_schedule

    from pipebounds.certify import certify

    raw, time_limit = job
    inst = Instance.from_dict(raw)
    lb = lower_bound(inst)
    # the claim under test: exact by a theorem or a checked range (never the table, which is
    # made from the same optima; no certificate search)
    exact = certify(inst, lb=lb, table=False).exact
    out = {"instance": raw, "lb": lb.value, "exact": exact, "terms": dict(lb.terms)}
    from pipebounds.search import solve

    # the branch and bound first, for a second: it proves most small rows at once; then CP-SAT,
    # which proves the K = 1 rows of P = 4, m = 5 in under a CPU second where the branch and
    # bound would run to its limit (5-6 CPU s each); the branch and bound with the whole limit
    # when ortools is missing
    res = solve(inst, time_limit=min(1.0, time_limit), engine="search", use_theory=False)
    if res.status != "optimal":
        try:
            res = solve(inst, time_limit=time_limit, engine="cpsat", use_theory=False)
        except ImportError:  # ortools missing
            res = solve(inst, time_limit=time_limit, engine="search", use_theory=False)
    out["status"], out["opt"] = res.status, res.makespan
    sched = optimal_schedule(inst)
    if sched is not None:
        sim = simulate(sched)
        out["construction"] = (sim.valid, sim.makespan, max(sim.peak_memory))
    return out


def _run(ctx: Context, jobs: list[tuple[dict, float]]) -> list[dict]:
    """The exhaustive solves, through the sweep's executors (pipebounds.sweep.parallel_map)."""
    from pipebounds.sweep import parallel_map

    return parallel_map(_solve_one, jobs, ctx.workers, ctx.scheduler)


def _fused(Ps: Iterable[int], ms: Iterable[int], pairs, Ks=None) -> list[dict]:
    """Fused v = 1 instances; ``Ks`` None means every K in 1..m-1 and unconstrained."""
    out = []
    for P, m, (f, b) in itertools.product(Ps, ms, pairs):
        for K in (list(range(1, m)) + [None] if Ks is None else Ks):
            if K is not None and K >= m and K != 1:
                continue
            out.append({"P": P, "m": m, "K": K, "v": 1, "f": f, "b": b})
    return out


def _closed(r: dict) -> Optional[Fraction]:
    """The optimum when an engine independent of the bound under test proved it (``status``
    optimal from ``solve(..., use_theory=False)``), else None. An incumbent that merely equals
    the bound is *not* a proof: if the bound were too high, it would certify itself."""
    return r["opt"] if r["status"] == "optimal" else None


def _judge(rows: list[dict], claim_exact: bool = True) -> CheckResult:
    worst, fails, open_ = None, [], []
    ratios = []
    for r in rows:
        opt = _closed(r)
        if opt is None:
            open_.append(r["instance"])
            if r["opt"] is not None and r["opt"] < r["lb"]:
                fails.append(f"incumbent {r['opt']} below LB {r['lb']}: {r['instance']}")
            continue
        ratio = opt / r["lb"]
        ratios.append(ratio)
        worst = ratio if worst is None else max(worst, ratio)
        if r["lb"] > opt:
            fails.append(f"LB {r['lb']} > OPT {opt}: {r['instance']} terms {r['terms']}")
        if claim_exact and r["exact"] and r["lb"] != opt:
            fails.append(f"claimed exact but LB {r['lb']} != OPT {opt}: {r['instance']}")
        c = r.get("construction")
        if c is not None:
            valid, ms, peak = c
            K = r["instance"]["K"]
            if not valid or ms != r["lb"] or (K is not None and peak > K) or ms != opt:
                fails.append(f"construction {c} vs LB {r['lb']} OPT {opt}: {r['instance']}")
    n = len(rows) - len(open_)
    mean = (sum(ratios) / len(ratios)) if ratios else None
    detail = (f"{n} closed, {len(open_)} open; mean OPT/LB "
              f"{float(mean):.4f}" if mean is not None else f"{n} closed")
    if open_:
        detail += f"; open: {open_[:3]}"
    if fails:
        detail = f"{len(fails)} failures; first: {fails[0]}; " + detail
    return CheckResult(n, not fails, worst, detail)


# --------------------------------------------------------------------------- symbolic checks
@check("T1 fill-drain (T2, T3 reduce to it on GPU P-1)", theorems=("T1", "T2", "T3"), kind="symbolic",
       range="all P, m >= 1, K >= 1, f, b > 0")
def reductions_to_fill_drain(ctx: Context) -> CheckResult:
    from bounds.single_wave import (fill_drain_expr, memory_time_gpu_expr, p,
                                    single_slot_gpu_expr)
    from bounds.symbols import K, P, m

    k = sp.Symbol("k", integer=True, nonnegative=True)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    s_ = sp.Symbol("s", integer=True, nonnegative=True)
    ok = True
    # T2 at p = P-1, both sides of the slot edge's min(K, m): K <= m (m = K + s) and K > m
    e2 = memory_time_gpu_expr().subs(p, P - 1)
    e2a = resolve_minmax(e2.subs(m, K + s_).subs(K, 1 + k))
    ok &= sp.simplify(e2a - fill_drain_expr().subs(m, 1 + k + s_)) == 0
    e2b = resolve_minmax(e2.subs(K, m + 1 + k))
    ok &= sp.simplify(e2b - fill_drain_expr()) == 0
    for s in (0, 1):  # m even / odd resolves floor(m/2)
        e3 = sp.simplify(single_slot_gpu_expr().subs(p, P - 1).subs(m, 2 * n + s))
        ok &= sp.simplify(resolve_minmax(e3) - fill_drain_expr().subs(m, 2 * n + s)) == 0
    return CheckResult(4, bool(ok), None,
                       "T2|p=P-1 (K <= m, K > m) and T3|p=P-1 (m = 2n, 2n+1) equal T1")


def nonnegative_on_naturals(expr: sp.Expr, naturals, depth: int = 3) -> bool:
    """Prove ``expr >= 0`` for all integers ``>= 0`` in ``naturals`` (the other symbols
    positive): its numerator and denominator, expanded, have no negative coefficient, or else
    the same holds in both cases ``v = 0`` and ``v = v' + 1`` of some variable ``v`` (up to
    ``depth`` splits). ``k^2 - k``, non-negative on integers only, needs one split."""
    num, den = sp.fraction(sp.factor(sp.together(expr)))

    def no_negative(e):
        poly = sp.Poly(sp.expand(e), *sorted(e.free_symbols, key=str)) if e.free_symbols else None
        return e >= 0 if poly is None else all(c >= 0 for c in poly.coeffs())

    if no_negative(num) and no_negative(den):
        return True
    if depth == 0:
        return False
    for v in naturals:
        if v in expr.free_symbols and all(
                nonnegative_on_naturals(expr.subs(v, sub), naturals, depth - 1)
                for sub in (0, v + 1)):
            return True
    return False


@check("T2 memory-time (non-increasing in K; <= T1 when K >= d)", theorems=("T2",), kind="symbolic",
       range="all P, m, K >= 1, 0 <= r <= m, f, b > 0")
def memory_time_monotone(ctx: Context) -> CheckResult:
    """T2's memory term with the slot edge, ``M(K) = (X + E(K)) / K`` with
    ``X = ((m-r) d + r) B`` and ``E = k(k-1)/2 B``, ``k = min(K, m)``. For ``K > m`` the edge is
    constant and ``M`` falls with ``K``. For ``K <= m``, ``-K^2 M'(K) = X - K^2 B / 2``, and
    wherever ``M`` binds (``M >= m B``, the least work) ``X >= K m B - K(K-1) B/2``, so
    ``-K^2 M' >= K B (m - K) + K B / 2 >= 0``: ``max(work, M)`` never rises with ``K`` (a
    continuous function cannot climb above a level where its slope is ``<= 0``), nor does
    the minimum over ``r``. And with ``K >= d`` T2's GPU term is at most T1."""
    from bounds.symbols import K, b, f, m

    r, s, k, e = sp.symbols("r s k e", integer=True, nonnegative=True)
    d = 1 + e  # d >= 1
    nat = (r, s, k, e)
    B = f + b
    X = ((m - r) * d + r) * B
    ok = True
    # K > m: the edge m(m-1)/2 B is constant, d/dK <= 0 (m = r + s)
    mem_hi = (X + m * (m - 1) / 2 * B) / K
    ok &= nonnegative_on_naturals(-sp.diff(mem_hi, K).subs(m, r + s), nat)
    # K <= m: the identity -K^2 M' = X - K^2 B/2 ...
    mem_lo = (X + K * (K - 1) / 2 * B) / K
    ok &= sp.simplify(-K**2 * sp.diff(mem_lo, K) - (X - K**2 * B / 2)) == 0
    # ... and where M binds, X >= K m B - K(K-1)B/2, which is >= K^2 B/2 when m = K + s
    ok &= nonnegative_on_naturals((K * m * B - K * (K - 1) * B / 2 - K**2 * B / 2)
                                  .subs(m, K + s), nat)
    # K >= d: T2's term on GPU p (offset (P-d) B) is at most T1 = (m + P - 1) B, i.e.
    # (m d + E)/K <= m + d - 1 in units of B; K <= m (K = d + k, m = K + s) and K > m >= 1
    lo_case = (m + d - 1) * K - (m * d + K * (K - 1) / 2)
    ok &= nonnegative_on_naturals(lo_case.subs(m, K + s).subs(K, d + k), nat)
    hi_case = (m + d - 1) * K - (m * d + m * (m - 1) / 2)
    ok &= nonnegative_on_naturals(hi_case.subs(K, m + 1 + k).subs(m, 1 + s), nat)
    return CheckResult(5, bool(ok), None,
                       "T2 (with the slot edge) non-increasing in K where it binds; "
                       "K >= d gives T2's GPU term <= T1")


def _gpu_live_totals(sched):
    """Per GPU of a valid simulated schedule: ``(window, n, peak, total live time, release
    duration)`` with the window from the GPU's first start to its last end. The total live
    time is ``sum(release ends) - sum(store starts)`` (a sum, so independent of the pairing)."""
    from schedules import simulate

    res = simulate(sched)
    if not res.valid:
        raise AssertionError(f"schedule {sched.source!r} is not valid: {res.errors[:2]}")
    times = res.op_times()
    inst = sched.instance
    out = []
    for g, order in enumerate(sched.orders):
        a = min(times[o][0] for o in order)
        e = max(times[o][1] for o in order)
        remat = {(o.microbatch, o.stage) for o in order if o.kind == "R"}
        stores = [times[o][0] for o in order
                  if o.kind == "R" or (o.kind == "F" and (o.microbatch, o.stage) not in remat)]
        rel = "W" if inst.split else "B"
        releases = [times[o][1] for o in order if o.kind == rel]
        out.append((e - a, len(stores), res.peak_memory[g], sum(releases) - sum(stores),
                    inst.b_W if inst.split else inst.b))
    return out


@check("T2/S3/MW7 slot-edge lemma (holds on every GPU of simulated schedules; attained, so an "
       "edge twice too large fails)", theorems=("T2", "S3", "MW7"), kind="exhaustive",
       range={"quick": "v=1, P <= 4, m <= 6, f, b in {1,2,3} (split b_I, b_W in {1,2}): GPipe, "
                       "1F1B, ZB-H1, ZB-H2, K = 1 constructions",
              "full": "v=1, P <= 6, m <= 10, f, b in {1,2,3,1/2} (split: 8 triples): GPipe, "
                      "1F1B, ZB-H1, ZB-H2, K = 1 constructions"})
def slot_edge_lemma(ctx: Context) -> CheckResult:
    """The slot-edge lemma (docs/theory.md, Lemma L3) on simulated schedules: on every GPU with
    ``n`` activations and at most ``k`` live at once (``k`` = the GPU's peak), the live
    intervals total at most ``k (e - a) - slot_edge(k, f, b_r)``. The lemma is attained with
    equality (GPipe's last GPU: stores back to back from ``a``, releases back to back to ``e``),
    so this check fails if :func:`bounds.single_wave.slot_edge` is too large by any factor
    ``> 1``; the check also fails if no instance attains equality with ``k >= 2``."""
    from bounds.single_wave import slot_edge
    from schedules import Instance
    from pipebounds.constructions.single_wave import single_group_schedule, two_gpu_schedule
    from schedules.generators import generate

    full = ctx.mode == "full"
    durs = (1, 2, 3, Fraction(1, 2)) if full else (1, 2, 3)
    sdurs = (1, 2)
    Pmax, mmax = (6, 10) if full else (4, 6)
    n, fails, attained = 0, [], 0
    jobs = []
    for P_, m_ in itertools.product(range(1, Pmax + 1), range(1, mmax + 1)):
        for f_, b_ in itertools.product(durs, durs):
            inst = Instance(P=P_, m=m_, f=f_, b=b_)
            jobs += [generate("gpipe", inst), generate("1f1b", inst)]
            if P_ == 2:
                jobs.append(two_gpu_schedule(inst.with_(K=1)))
            if (m_ - 2) * f_ <= b_:
                jobs.append(single_group_schedule(inst.with_(K=1)))
        for f_, bi, bw in itertools.product(sdurs, sdurs, sdurs):
            inst = Instance(P=P_, m=m_, f=f_, b_I=bi, b_W=bw)
            for name in ("gpipe", "1f1b", "zb-h1", "zb-h2"):
                try:
                    jobs.append(generate(name, inst))
                except Exception:  # noqa: BLE001 - a generator that needs other sizes
                    pass
    for sched in jobs:
        for win, n_act, peak, total, b_r in _gpu_live_totals(sched):
            n += 1
            k = min(peak, n_act)
            if win < (k - 1) * (sched.instance.f + b_r):
                continue  # the lemma's hypothesis fails (never for a whole GPU's window)
            cap = k * win - slot_edge(k, sched.instance.f, b_r)
            if total > cap:
                fails.append(f"{sched.source}: live {total} > k(e-a) - E = {cap} "
                             f"(k={k}) on {sched.instance.to_dict()}")
            attained += total == cap and k >= 2
    if not attained:
        fails.append("no GPU attains the lemma with k >= 2: an edge too large would pass")
    return CheckResult(n, not fails, None, fails[0] if fails else
                       f"{n} GPU windows of {len(jobs)} schedules; equality on {attained} "
                       f"with k >= 2")


@check("T3 single slot (piecewise-linear W_p; minimiser at the breakpoints)",
       theorems=("T3",), kind="symbolic",
       range="all x, c >= 0, f > 0, 0 <= r0 < f")
def single_slot_piecewise(ctx: Context) -> CheckResult:
    from bounds.symbols import b, f

    xs, t, c, G, mm, r0 = sp.symbols("x t c G m r0", nonnegative=True)
    B = f + b

    def W(m_, x_):
        N = m_ - x_
        return (m_ * B + N * f + x_ * G - f * sp.Min(N, x_ * c)
                - r0 * sp.Min(x_, sp.Max(0, N - x_ * c)))

    ok = True
    # regime 1: N - x c >= x  (m = x(c+2) + t): slope -f
    m1 = xs * (c + 2) + t
    e = resolve_minmax(sp.expand(W(m1, xs)))
    ok &= sp.simplify(e - (m1 * B + (m1 - xs) * f + xs * G - f * xs * c - r0 * xs)) == 0
    # regime 2: 0 <= N - x c <= x  (m = x(c+1) + t, t <= x): W = m B + x G + (f - r0) t
    s = sp.Symbol("s", nonnegative=True)  # x = t + s
    m2 = (t + s) * (c + 1) + t
    e = resolve_minmax(sp.expand(W(m2, t + s)))
    ok &= sp.simplify(e - (m2 * B + (t + s) * G + (f - r0) * t)) == 0
    # regime 3: N <= x c  (m = x(c+1) - t, t >= 0): W = m B + x G
    m3 = xs * (c + 1) - t
    e = W(m3, xs).subs(sp.Min(m3 - xs, xs * c), m3 - xs)
    e = e.subs(sp.Max(0, m3 - xs - xs * c), 0)
    ok &= sp.simplify(resolve_minmax(sp.expand(e)) - (m3 * B + xs * G)) == 0
    return CheckResult(3, bool(ok), None, "W_p linear on [0, m/(c+2)], [m/(c+2), m/(c+1)], "
                                          "[m/(c+1), m] with slopes -f, G-(f-r0)(c+1), G")


@check("S1 split drain at K = P and K = 2P-1 (the ZB-H1 / ZB-H2 memories)", theorems=("S1",), kind="symbolic",
       range={"quick": "sympy: all P >= 1, m >= K, both signs of b_I - c b_W; exact: P <= 6, "
                       "K <= m <= 2P+2, f, b_I, b_W in {1,2,3,1/2}",
              "full": "sympy: all P >= 1, m >= K, both signs of b_I - c b_W; exact: P <= 10, "
                      "K <= m <= 2P+4, f, b_I, b_W in {1,2,3,4,1/2,3/2}"})
def split_reductions(ctx: Context) -> CheckResult:
    """Theorem S1 at the ZB memories (docs/theory.md, S1, Corollary S1'): with ``c = 1`` at
    ``K = P`` and ``c = 2`` at ``K = 2P-1`` (``m >= K``),

        S1 = m (f + b) + (P - 1) max(f, f + b_I - c b_W),

    so S1 equals the published ZB-H1 (ZB-H2) makespan ``m(f+b) + (P-1)(f + b_I - c b_W)`` only
    when ``b_I >= c b_W``; below that S1 (a valid bound) is *larger* than the published figure.
    sympy proves both branches on GPU ``P - 1`` and that the GPU term grows with ``p``; exact
    Fraction evaluation of :func:`bounds.single_wave.split_drain_value` (the max over GPUs)
    confirms the closed form on a grid, and the published figure is seen to be *below* S1 on
    some instance of the grid (``f = b_I = b_W = 1, P = 4, m = 8``: 27 > 24)."""
    from bounds.single_wave import p, split_drain_gpu_expr, split_drain_value
    from bounds.symbols import K, P, b_I, b_W, f, m
    from schedules import Instance

    u, k = sp.Symbol("u", nonnegative=True), sp.Symbol("k", integer=True, nonnegative=True)
    e = split_drain_gpu_expr()
    n, bad = 0, []
    for c, Kc in ((1, P), (2, 2 * P - 1)):
        eK = e.subs(sp.Min(K, m), Kc).subs(K, Kc).subs(m, Kc + k)  # m >= K
        last = eK.subs(p, P - 1)
        b_ = b_I + b_W
        # b_I >= c b_W (b_I = c b_W + u): S1 = m(f+b) + (P-1)(f + b_I - c b_W)
        hi = resolve_minmax(sp.expand(last.subs(b_I, c * b_W + u)))
        want = ((Kc + k) * (f + b_) + (P - 1) * (f + b_I - c * b_W)).subs(b_I, c * b_W + u)
        n += 1
        if sp.simplify(hi - want) != 0:
            bad.append(f"K={Kc}, b_I >= {c} b_W")
        # b_I <= c b_W (b_W = (b_I + u)/c): S1 = m(f+b) + (P-1) f
        lo = resolve_minmax(sp.expand(last.subs(b_W, (b_I + u) / c)))
        want = ((Kc + k) * (f + b_) + (P - 1) * f).subs(b_W, (b_I + u) / c)
        n += 1
        if sp.simplify(lo - want) != 0:
            bad.append(f"K={Kc}, b_I <= {c} b_W")
    # the GPU term is non-decreasing in p (so S1 is the term of GPU P-1): each step adds f
    # plus the non-negative change of max(0, p b_I - (k-1) b_W)
    n += 1
    step = sp.expand(e.subs(p, p + 1) - e.subs(p, p))
    if not (sp.simplify(step.subs(b_I, 0) - f) == 0):
        bad.append("S1 GPU term not increasing at b_I = 0")
    # exact evaluation on a grid, including b_I < c b_W
    full = ctx.mode == "full"
    durs = ((1, 2, 3, 4, Fraction(1, 2), Fraction(3, 2)) if full
            else (1, 2, 3, Fraction(1, 2)))
    published_below = None
    for P_ in range(1, (10 if full else 6) + 1):
        for (c, K_), f_, bi, bw in itertools.product(((1, P_), (2, 2 * P_ - 1)), durs, durs,
                                                     durs):
            for m_ in range(K_, 2 * P_ + (4 if full else 2) + 1):
                inst = Instance(P=P_, m=m_, K=K_, f=f_, b_I=bi, b_W=bw)
                F_ = Fraction
                want = m_ * (F_(f_) + F_(bi) + F_(bw)) + (P_ - 1) * max(F_(f_),
                                                                        F_(f_) + bi - c * F_(bw))
                n += 1
                got = split_drain_value(inst)
                if got != want:
                    bad.append(f"S1 {got} != closed form {want}: {inst.to_dict()}")
                pub = m_ * (F_(f_) + bi + bw) + (P_ - 1) * (F_(f_) + bi - c * F_(bw))
                if pub < got and published_below is None:
                    published_below = (inst.to_dict(), got, pub)
    if published_below is None:
        bad.append("the grid never has b_I < c b_W: the check cannot tell the two statements")
    detail = ("; ".join(bad[:3]) if bad else
              f"S1(K=P) = m(f+b) + (P-1) max(f, f+b_I-b_W), S1(K=2P-1) = m(f+b) + (P-1) "
              f"max(f, f+b_I-2b_W); published bubble below S1 e.g. at {published_below}")
    return CheckResult(n, not bad, None, detail)


def exact_function(expr: sp.Expr, args):
    """``expr`` as a Python function evaluated in exact Fraction arithmetic
    (:func:`bounds.symbols.exact_lambdify`; pass Fractions)."""
    from bounds.symbols import exact_lambdify

    return exact_lambdify(expr, args)


@check("T1-T3 (T3 fused and split), S1-S3 (sympy expression = exact evaluation)",
       theorems=("T1", "T2", "T3", "S1", "S2", "S3"), kind="symbolic",
       range={"quick": "P <= 4, m <= 6, K in {1,2,3}, f, b in {1,2,3} (+ split)",
              "full": "P <= 8, m <= 16, K in {1..5}, f, b in {1,2,3,4,1/2,3/2} (+ split)"})
def expressions_match_evaluation(ctx: Context) -> CheckResult:
    """Each theorem's sympy expression, evaluated exactly (lambdified over Fractions; a sample
    also through ``subs``), equals the Fraction evaluator of :mod:`bounds.single_wave`; and
    T3's closed-form minimum over ``x`` equals the brute minimum over every ``x``."""
    from bounds import single_wave as sw
    from bounds.symbols import K, P, b, b_I, b_W, f, m, substitutions
    from schedules import Instance

    full = ctx.mode == "full"
    Pr, mr, Kr = (range(1, 9), range(1, 17), (1, 2, 3, 4, 5)) if full else \
        (range(1, 5), range(1, 7), (1, 2, 3))
    durs = (1, 2, 3, 4, Fraction(1, 2), Fraction(3, 2)) if full else (1, 2, 3)
    fused_args = (P, m, K, f, b, sw.p)
    split_args = (P, m, K, f, b_I, b_W, sw.p)
    t2 = exact_function(sw.memory_time_gpu_expr(), fused_args)
    t3 = exact_function(sw.single_slot_gpu_expr(), fused_args)
    s1 = exact_function(sw.split_drain_gpu_expr(), split_args)
    s3 = exact_function(sw.split_memory_time_gpu_expr(), split_args)
    t3s = exact_function(sw.single_slot_gpu_expr(split=True), split_args)
    F = Fraction
    n, fails = 0, []
    for P_, m_, K_, f_, b_ in itertools.product(Pr, mr, Kr, durs, durs):
        inst = Instance(P=P_, m=m_, K=K_, f=f_, b=b_)
        a = (F(P_), F(m_), F(K_), inst.f, inst.b)
        n += 1
        if max(t2(*a, F(q)) for q in range(P_)) != sw.memory_time_value(inst):
            fails.append(("T2", inst.to_dict()))
        if K_ == 1:
            n += 2
            if max(t3(*a, F(q)) for q in range(P_)) != sw.single_slot_value(inst):
                fails.append(("T3", inst.to_dict()))
            brute = max(q * (inst.f + inst.b)
                        + min(sw._single_slot_W(m_, P_ - q, inst.f, inst.b, xx)
                              for xx in range(m_ + 1)) for q in range(P_))
            if brute != sw.single_slot_value(inst):
                fails.append(("T3-min", inst.to_dict()))
        if f_ == b_ or b_ == 1:  # split: b_I = b, b_W = f
            si = Instance(P=P_, m=m_, K=K_, f=f_, b_I=b_, b_W=f_)
            sa = (F(P_), F(m_), F(K_), si.f, si.b_I, si.b_W)
            n += 2
            if max(s1(*sa, F(q)) for q in range(P_)) != sw.split_drain_value(si):
                fails.append(("S1", si.to_dict()))
            if K_ < m_ and max(s3(*sa, F(q)) for q in range(P_)) != sw.split_memory_time_value(si):
                fails.append(("S3", si.to_dict()))
            if K_ == 1:
                n += 2
                if max(t3s(*sa, F(q)) for q in range(P_)) != sw.single_slot_value(si):
                    fails.append(("T3 split", si.to_dict()))
                brute = max(q * (si.f + si.b_I)
                            + min(sw._single_slot_W(m_, P_ - q, si.f, si.b, xx, si.b_I)
                                  for xx in range(m_ + 1)) for q in range(P_))
                if brute != sw.single_slot_value(si):
                    fails.append(("T3 split-min", si.to_dict()))
    # the lambdified function is the expression: a sample through sympy's own substitution
    # (``xreplace``: the numbers replace the symbols and sympy evaluates the Max / Min of
    # numbers; ``subs`` gives the same values but simplifies the Max at every step, 3-4 CPU s
    # per value)
    for P_, m_, f_, b_ in ((3, 4, 3, 2), (4, 7, 2, 1), (5, 6, 1, 3)):
        inst = Instance(P=P_, m=m_, K=1, f=f_, b=b_)
        subs = substitutions(inst)
        n += 1
        via_subs = max(F(str(sw.single_slot_gpu_expr().xreplace({**subs, sw.p: q})))
                       for q in range(P_))
        if via_subs != sw.single_slot_value(inst):
            fails.append(("T3-subs", inst.to_dict()))
    return CheckResult(n, not fails, None, f"first mismatch {fails[0]}" if fails else
                       "every expression equals its Fraction evaluation")


@check("T3 >= T2 at K = 1; bounds monotone in m, K, f, b", theorems=("T2", "T3"), kind="exhaustive",
       range={"quick": "P <= 5, m <= 10, f, b in {1,2,3}", "full": "P <= 8, m <= 16, f, b in {1..4, 1/2}"})
def dominance_and_monotonicity(ctx: Context) -> CheckResult:
    from bounds import lower_bound
    from bounds.single_wave import memory_time_value, single_slot_value
    from schedules import Instance

    full = ctx.mode == "full"
    Pr, mr = (range(1, 9), range(1, 17)) if full else (range(1, 6), range(1, 11))
    durs = (1, 2, 3, 4, Fraction(1, 2)) if full else (1, 2, 3)
    n, fails = 0, []
    for P_, f_, b_ in itertools.product(Pr, durs, durs):
        prev_m = None
        for m_ in mr:
            inst = Instance(P=P_, m=m_, K=1, f=f_, b=b_)
            n += 1
            if single_slot_value(inst) < memory_time_value(inst):
                fails.append(("T3<T2", inst.to_dict()))
            vals = [lower_bound(inst.with_(K=k)).value for k in range(1, m_ + 2)]
            vals.append(lower_bound(inst.with_(K=None)).value)
            if any(a < c for a, c in zip(vals, vals[1:])):
                fails.append(("K", inst.to_dict(), vals))
            if prev_m is not None and any(a > c for a, c in zip(prev_m, vals)):
                fails.append(("m", inst.to_dict()))
            prev_m = vals[:m_] + [vals[-1]]
            bigger = inst.with_(b=inst.b + 1)
            if lower_bound(bigger).value < lower_bound(inst).value:
                fails.append(("b", inst.to_dict()))
            bigger = inst.with_(f=inst.f + 1)
            if lower_bound(bigger).value < lower_bound(inst).value:
                fails.append(("f", inst.to_dict()))
    return CheckResult(n, not fails, None, f"first failure {fails[0]}" if fails else
                       "T3 >= T2; LB non-increasing in K, non-decreasing in m, f, b")


# --------------------------------------------------------------------------- exhaustive checks
@check("T1 exact for K >= min(m, P): 1F1B reaches it", theorems=("T1",), kind="exhaustive",
       range={"quick": "P <= 8, m <= 16, f, b in {1,2,3}", "full": "P <= 16, m <= 32, f, b in {1,2,3,1/2}"})
def one_f_one_b_reaches_fill_drain(ctx: Context) -> CheckResult:
    from bounds.single_wave import fill_drain_value
    from schedules import Instance, simulate
    from pipebounds.constructions.single_wave import one_f_one_b

    full = ctx.mode == "full"
    Pr, mr = (range(1, 17), range(1, 33)) if full else (range(1, 9), range(1, 17))
    durs = (1, 2, 3, Fraction(1, 2)) if full else (1, 2, 3)
    n, fails = 0, []
    for P_, m_, f_, b_ in itertools.product(Pr, mr, durs, durs):
        inst = Instance(P=P_, m=m_, K=min(m_, P_), f=f_, b=b_)
        res = simulate(one_f_one_b(inst))
        n += 1
        want = [min(P_ - q, m_) for q in range(P_)]
        if not res.valid or res.makespan != fill_drain_value(inst) or res.peak_memory != want:
            fails.append(inst.to_dict())
    return CheckResult(n, not fails, Fraction(1) if not fails else None,
                       f"first failure {fails[0]}" if fails else
                       "makespan (m+P-1)(f+b), GPU p peaks at min(P-p, m)")


@check("T3b/T3c: explicit K = 1 schedules reach the bound (P = 2; m <= 2 + b/f; fused and "
       "split)",
       theorems=("T3", "T1", "T3b", "T3c"), kind="exhaustive",
       range={"quick": "P = 2, m <= 24; and P <= 8, m <= 2 + b/f; f, b in {1..5, 1/2, 3/2}",
              "full": "P = 2, m <= 64; and P <= 16, m <= 2 + b/f; f, b in {1..7, 1/2, 3/2}"})
def explicit_k1_constructions(ctx: Context) -> CheckResult:
    """Theorems 3b and 3c are proven in docs/theory.md; this checks the code that builds them:
    every schedule valid, one activation per GPU, makespan = T3 (3b) or T1 (3c), and
    ``lower_bound`` flags the instance exact."""
    from bounds import lower_bound
    from bounds.single_wave import fill_drain_value, single_slot_value
    from schedules import Instance, simulate
    from pipebounds.constructions.single_wave import single_group_schedule, two_gpu_schedule

    full = ctx.mode == "full"
    durs = [Fraction(x) for x in range(1, 8 if full else 6)] + [Fraction(1, 2), Fraction(3, 2)]
    n, fails = 0, []
    for f_, b_ in itertools.product(durs, durs):
        for m_ in range(1, (64 if full else 24) + 1):
            inst = Instance(P=2, m=m_, K=1, f=f_, b=b_)
            # fused, and split with b_I = b and b_W in {f, b}
            for si in (inst, Instance(P=2, m=m_, K=1, f=f_, b_I=b_, b_W=f_),
                       Instance(P=2, m=m_, K=1, f=f_, b_I=b_, b_W=b_)):
                res = simulate(two_gpu_schedule(si))
                n += 1
                if not (res.valid and max(res.peak_memory) == 1
                        and res.makespan == single_slot_value(si) and lower_bound(si).exact):
                    fails.append(("3b", si.to_dict()))
        for P_ in range(1, (16 if full else 8) + 1):
            for m_ in range(1, int(2 + b_ / f_) + 1):
                inst = Instance(P=P_, m=m_, K=1, f=f_, b=b_)
                res = simulate(single_group_schedule(inst))
                n += 1
                if not (res.valid and max(res.peak_memory) == 1
                        and res.makespan == fill_drain_value(inst) == single_slot_value(inst)
                        and lower_bound(inst).exact):
                    fails.append(("3c", inst.to_dict()))
                # split form (b_I = b, b_W in {f, b}): makespan (P-1)(f + b_I) + m B = T3
                for bw in (f_, b_):
                    si = Instance(P=P_, m=m_, K=1, f=f_, b_I=b_, b_W=bw)
                    res = simulate(single_group_schedule(si))
                    n += 1
                    want = (P_ - 1) * (f_ + b_) + m_ * (f_ + b_ + bw)
                    if not (res.valid and max(res.peak_memory) == 1
                            and res.makespan == want == single_slot_value(si)
                            and lower_bound(si).exact):
                        fails.append(("3c split", si.to_dict()))
    return CheckResult(n, not fails, Fraction(1) if not fails else None,
                       f"first failure {fails[0]}" if fails else
                       "3b: makespan W_0(x) = T3; 3c: makespan (m+P-1)(f+b) = T3, split "
                       "(P-1)(f+b_I) + m B = T3")


@check("T3 exact at K = 1 (LB = OPT; construction = OPT)", theorems=("T3",), kind="exhaustive",
       range={"quick": "K=1, P <= 4, m <= 5, (f,b) in 5 pairs",
              "full": "K=1, P <= 4, m <= 8, f, b in {1,2,3}"})
def single_slot_exact(ctx: Context) -> CheckResult:
    full = ctx.mode == "full"
    if full:
        insts = _fused(range(1, 5), range(1, 9), PAIRS_FULL, Ks=[1])
        tl = 120.0
    else:
        insts = _fused(range(1, 5), range(1, 6), PAIRS_QUICK, Ks=[1])
        tl = 20.0
    rows = _run(ctx, [(i, tl) for i in insts])
    res = _judge(rows)
    not_exact = [r["instance"] for r in rows if not r["exact"]]
    if not_exact:
        return CheckResult(res.instances, False, res.worst_gap,
                           f"instances in range not flagged exact: {not_exact[:3]}; " + res.detail)
    return res


def _ratio(inst) -> tuple:
    """The durations of ``inst`` up to scaling: ``(b/f,)`` fused, ``(b_I/f, b_W/f)`` split."""
    return (inst.b_I / inst.f, inst.b_W / inst.f) if inst.split else (inst.b / inst.f,)


@check("T3 on the table's K = 1 rows (valid everywhere; = OPT on the claimed range)",
       theorems=("T3",), kind="exhaustive",
       range="independent K=1 rows of pipebounds/data/optima.jsonl (fused P <= 5, m <= 8, f, b in {1..5}; "
             "split P <= 4, m <= 6, f, b_I, b_W in {1,2,3}; and more)")
def single_slot_table(ctx: Context) -> CheckResult:
    """No solving: the optima were proven without the theory (``use_theory=False``) when the
    table was made. On every row (fused and split) ``T3 <= OPT`` and ``LB = OPT`` wherever
    exactness is claimed; inside :data:`pipebounds.certify.SINGLE_SLOT_CHECKED` (split:
    ``SPLIT_SINGLE_SLOT_CHECKED``) every row must have ``T3 = OPT`` and be flagged exact, and
    every instance of that range must have a row. Rows outside the range with ``T3 < OPT``
    (T3 is not exact in general, docs/theory.md section 5) are reported."""
    from bounds import lower_bound
    from bounds import single_wave as sw

    from pipebounds.certify import (SINGLE_SLOT_CHECKED, SPLIT_SINGLE_SLOT_CHECKED, certify,
                                    single_slot_checked)

    from .table import optima_rows

    rows = optima_rows(lambda i: i.v == 1 and i.K == 1 and not i.c)
    fails, not_flagged, ratios, gaps = [], [], set(), []
    worst = Fraction(1)
    for inst, opt in rows:
        lb = lower_bound(inst)
        t3 = sw.single_slot_value(inst)
        worst = max(worst, opt / lb.value)
        ratios.add(_ratio(inst))
        if lb.value > opt or t3 > opt or (lb.exact and lb.value != opt):
            fails.append(f"LB {lb.value} (exact={lb.exact}) T3 {t3} vs OPT {opt}: "
                         f"{inst.to_dict()}")
        if t3 < opt:
            gaps.append(f"P={inst.P} m={inst.m} {_ratio(inst)}: T3 {t3} < OPT {opt}")
            if single_slot_checked(inst):
                fails.append(f"inside the checked range T3 {t3} < OPT {opt}: {inst.to_dict()}")
        if single_slot_checked(inst) and not certify(inst, lb=lb, table=False).exact:
            not_flagged.append(inst.to_dict())
    # the declared ranges of the exactness claim must be covered by the table: every P, m and
    # every ratio of the grid (P = 1 and m = 1 are Theorems 1 and 0)
    have = {(i.split, i.P, i.m, _ratio(i)) for i, _ in rows}
    want = set()
    for split, rng in ((False, SINGLE_SLOT_CHECKED), (True, SPLIT_SINGLE_SLOT_CHECKED)):
        grid = rng["durations"]
        for P_, m_ in itertools.product(range(2, rng["P"] + 1), range(2, rng["m"] + 1)):
            for t in itertools.product(grid, repeat=3 if split else 2):
                want.add((split, P_, m_, tuple(Fraction(g, t[0]) for g in t[1:])))
    missing = sorted(want - have)
    if missing:
        fails.append(f"{len(missing)} instances of the claimed ranges have no independent "
                     f"optimum in the table, e.g. split, P, m, ratio = {missing[0]}")
    n_split = sum(i.split for i, _ in rows)
    ok = bool(rows) and not fails and not not_flagged
    detail = (fails[0] if fails else f"not flagged exact: {not_flagged[:2]}" if not_flagged
              else "no K = 1 rows in pipebounds/data/optima.jsonl" if not rows
              else f"{len(rows) - len(gaps)} of {len(rows)} rows T3 = OPT ({n_split} split; "
                   f"{len(ratios)} duration ratios); outside the claimed ranges T3 < OPT on "
                   f"{len(gaps)}: " + ("; ".join(gaps[:3]) or "none"))
    return CheckResult(len(rows), ok, worst, detail)


@check("T1-T2 valid for every K (LB <= OPT; tightness)", theorems=("T1", "T2"), kind="exhaustive",
       range={"quick": "P <= 4, m <= 5, K in {2, 3, inf}, (f,b) in 5 pairs",
              "full": "P <= 4, m <= 8, every K, f, b in {1,2,3}"})
def general_K_valid(ctx: Context) -> CheckResult:
    full = ctx.mode == "full"
    if full:
        insts = [i for i in _fused(range(1, 5), range(1, 9), PAIRS_FULL) if i["K"] != 1]
        tl = 120.0
    else:
        insts = _fused(range(1, 5), range(1, 6), PAIRS_QUICK, Ks=[2, 3, None])
        tl = 20.0
    rows = _run(ctx, [(i, tl) for i in insts])
    res = _judge(rows)
    binding = [r for r in rows if r["instance"]["K"] is not None
               and r["instance"]["K"] < min(r["instance"]["m"], r["instance"]["P"])
               and _closed(r) is not None]
    if binding:
        ratios = [_closed(r) / r["lb"] for r in binding]
        worst = max(range(len(binding)), key=lambda i: ratios[i])
        extra = (f"; binding memory (1 < K < min(m,P)): {len(binding)} instances, "
                 f"{sum(x == 1 for x in ratios)} exact, mean OPT/LB "
                 f"{float(sum(ratios) / len(ratios)):.4f}, worst {float(ratios[worst]):.4f} at "
                 f"{binding[worst]['instance']}")
        res = CheckResult(res.instances, res.ok, res.worst_gap, res.detail + extra)
    return res


@check("S1-S3 split backward valid (LB <= OPT)", theorems=("S1", "S2", "S3", "T3"), kind="exhaustive",
       range={"quick": "split, P <= 3, m <= 3, K in {1, 2, inf}, (f,b_I,b_W) in {111, 121, 211}",
              "full": "split, P <= 3, m <= 4, every K, f, b_I, b_W in {1, 2}"})
def split_valid(ctx: Context) -> CheckResult:
    full = ctx.mode == "full"
    trip = list(itertools.product((1, 2), repeat=3)) if full else [(1, 1, 1), (1, 2, 1), (2, 1, 1)]
    insts = []
    for P_, m_, (f_, bi, bw) in itertools.product(range(1, 4), range(1, 5 if full else 4), trip):
        for K_ in (list(range(1, m_)) + [None]) if full else (1, 2, None):
            if K_ is not None and K_ >= m_ and K_ != 1:
                continue
            insts.append({"P": P_, "m": m_, "K": K_, "v": 1, "f": f_, "b_input": bi,
                          "b_weight": bw})
    rows = _run(ctx, [(i, 120.0 if full else 20.0) for i in insts])
    return _judge(rows)


WINDOW_FILL_GRID = "data/split_relaxation_grid.jsonl"
"""Rows ``(instance, GPU)`` of the single-GPU relaxation (tools/split_relaxation_grid.py)."""


def window_fill_optima() -> list:
    """``(instance, OPT)`` of every stored split ``v = 1``, ``K = 2 < m`` optimum proven without
    the theory: the independent rows of pipebounds/data/optima.jsonl and the ``optimal`` rows
    of data/split_v1_midK_optima.jsonl."""
    import json
    from pathlib import Path

    from schedules import Instance

    from .table import optima_rows

    out = optima_rows(lambda i: i.split and i.v == 1 and i.K == 2 and i.m > 2 and i.uniform
                      and not i.c and i.memory is None)
    root = Path(__file__).resolve().parent.parent
    for line in (root / "data" / "split_v1_midK_optima.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["status"] == "optimal":
            out.append((Instance(P=r["P"], m=r["m"], K=r["K"], f=r["f"], b_I=r["b_input"],
                                 b_W=r["b_weight"]), Fraction(r["opt"])))
    return out


def window_fill_grid_rows() -> list:
    """``(instance, gpu, best, psi, optimal)`` of the ``K = 2`` rows of
    :data:`WINDOW_FILL_GRID` (``best`` the relaxation's best schedule, an upper bound on
    ``Ψ_p``; ``psi`` its proven value)."""
    import json
    from pathlib import Path

    from schedules import Instance

    root = Path(__file__).resolve().parent.parent
    out = []
    for line in (root / WINDOW_FILL_GRID).read_text().splitlines():
        r = json.loads(line)
        if r["K"] == 2 and r["m"] > 2:
            out.append((Instance(P=r["P"], m=r["m"], K=2, f=r["f"], b_I=r["b_I"],
                                 b_W=r["b_W"]), r["gpu"],
                        None if r["best"] is None else Fraction(r["best"]),
                        Fraction(r["psi"]), r["optimal"]))
    return out


def window_fill_failures(lag_extra=0, fresh: Optional[list] = None) -> tuple[int, list, int]:
    """S4 (:func:`bounds.single_wave.split_window_fill_value`) against the stored optima and
    the relaxation rows (``fresh``: rows solved now, same shape): how many comparisons, the
    failures, and on how many relaxation rows S4's GPU term equals a proven ``Ψ_p``.
    ``lag_extra``: the planted error (S4 with a lag that much longer)."""
    from bounds import single_wave as sw

    def s4(inst, q):
        return sw.split_window_fill_gpu_value(inst, q, lag_extra)

    n, fails, equal = 0, [], 0
    for inst, opt in window_fill_optima():
        n += 1
        val = max(s4(inst, q) for q in range(inst.P))
        if val > opt:
            fails.append(f"S4 {val} > OPT {opt}: {inst.to_dict()}")
    for inst, q, best, psi, optimal in (window_fill_grid_rows() if fresh is None else fresh):
        n += 1
        val = s4(inst, q)
        if best is not None and val > best:
            fails.append(f"S4 GPU {q} {val} > a relaxed schedule {best}: {inst.to_dict()}")
        equal += bool(optimal and val == psi)
    return n, fails, equal


def window_fill_choice_misses(grid) -> list:
    """The cases ``(m, f, A, g)`` of ``grid`` where S4's minimum over the candidates of
    :func:`bounds.single_wave.window_fill_choices` differs from the minimum over every
    ``0 <= r <= m`` (none: the candidates hold a minimiser)."""
    from bounds import single_wave as sw

    return [(m_, f_, A, g) for m_, f_, A, g in grid
            if min(sw._window_fill_twice(m_, r, f_, A, g) for r in range(m_ + 1))
            != min(sw._window_fill_twice(m_, r, f_, A, g)
                   for r in sw.window_fill_choices(m_, f_, A, g))]


def window_fill_lifted(insts) -> list:
    """``(instance, GPU)`` of the instances where S4 is above every other term of
    :func:`bounds.lower_bound`, with the GPU of S4's maximum."""
    from bounds import lower_bound
    from bounds import single_wave as sw

    out = []
    for inst in insts:
        terms = dict(lower_bound(inst).terms)
        s4 = terms.get("split_window_fill")
        if s4 is not None and s4 > max(x for n, x in terms.items() if n != "split_window_fill"):
            out.append((inst, max(range(inst.P),
                                  key=lambda q: sw.split_window_fill_gpu_value(inst, q))))
    return out


def window_fill_cap_failures(lifted, time_limit: float = 20.0) -> tuple[int, list]:
    """For each ``(instance, GPU)``: the single-GPU relaxation capped one unit below S4 (the
    check's ``--full`` part). A relaxed schedule found there refutes ``S4 <= Ψ_p``; INFEASIBLE
    proves ``Ψ_p >= S4``. Returns how many were proven and the refutations."""
    import math

    from bounds import single_wave as sw
    from pipebounds.search.relaxation import gpu_relaxation

    proven, fails = 0, []
    for inst, q in lifted:
        s4 = sw.split_window_fill_gpu_value(inst, q)
        cap = Fraction(math.ceil(s4 * inst.unit) - 1, inst.unit)
        res = gpu_relaxation(inst, q, time_limit=time_limit, cap=cap)
        if res.best is not None:
            fails.append(f"a relaxed schedule {res.best} < S4 {s4} on GPU {q}: {inst.to_dict()}")
        proven += res.status == "INFEASIBLE"
    return proven, fails


@check("S4 split window fill valid (<= stored OPT, <= the single-GPU relaxation)",
       theorems=("S4",), kind="exhaustive",
       range={"quick": "split, v = 1, K = 2 < m: every stored optimum (pipebounds/data/"
                       "optima.jsonl, data/split_v1_midK_optima.jsonl) and every row of "
                       "data/split_relaxation_grid.jsonl; the minimum over r at m <= 40",
              "full": "the quick range and, on every instance where S4 is above the other "
                      "terms (those files, and P in {3, 4, 5, 6}, m = 3..10, f, b_I, b_W in "
                      "{1, 2, 3}), the relaxation of S4's GPU capped one unit below S4 (10 s "
                      "each): no relaxed schedule"})
def split_window_fill_valid(ctx: Context) -> CheckResult:
    """S4 never above a proven optimum nor above a relaxed schedule of the same GPU (S4's proof
    uses only the relaxation's constraints, so its GPU term is at most ``Ψ_p``); its minimum
    over the candidates of :func:`bounds.single_wave.window_fill_choices` is the minimum over
    every ``r``; a lag one unit too long (the planted error) exceeds a stored optimum."""
    from schedules import Instance

    n, fails, equal = window_fill_failures()
    grid = [(m_, f_, A, g) for m_ in range(2, 41) for f_ in (1, 2, 3, Fraction(1, 2))
            for A in (0, 1, 2, 5, Fraction(7, 2)) for g in (-2, 0, 1, 2, 3, Fraction(5, 2))]
    fails += [f"minimum over r missed at m={m_}, f={f_}, A={A}, g={g}"
              for m_, f_, A, g in window_fill_choice_misses(grid)]
    _, planted, _ = window_fill_failures(lag_extra=1, fresh=[])
    if not planted:
        fails.append("planted error (lag + 1) not caught")
    extra = ""
    if ctx.mode == "full":
        insts = {inst for inst, _ in window_fill_optima()}
        insts |= {inst for inst, *_ in window_fill_grid_rows()}
        insts |= {Instance(P=P_, m=m_, K=2, f=f_, b_I=bi, b_W=bw)
                  for P_, m_, (f_, bi, bw) in itertools.product(
                      (3, 4, 5, 6), range(3, 11), itertools.product((1, 2, 3), repeat=3))}
        lifted = window_fill_lifted(sorted(insts, key=lambda i: (i.P, i.m, i.f, i.b_I, i.b_W)))
        proven, capped = window_fill_cap_failures(lifted, time_limit=10.0)
        fails += capped
        n += len(lifted)
        extra = f"; S4 <= Psi_p proven by the capped relaxation on {proven} of {len(lifted)}"
    detail = (fails[0] if fails else
              f"{n} comparisons, S4 = a proven Psi_p on {equal} relaxation rows; the minimum "
              f"over r on {len(grid)} cases; planted lag + 1 caught ({len(planted)} rows)"
              + extra)
    return CheckResult(n, not fails, None, detail)


@check("S-nb: max(S1, S2) = OPT at K = inf (split, v = 1): a greedy schedule reaches it",
       theorems=("S1", "S2"), kind="exhaustive",
       range={"quick": "split, v = 1, K = inf, P <= 6, m <= 12, f, b_I, b_W in {1, 2, 3}",
              "full": "split, v = 1, K = inf, P <= 8, m <= 16, f, b_I, b_W in {1, 2, 3, 4} "
                      "(the checked range S-nb-checked)"})
def split_nonbinding_certificate(ctx: Context) -> CheckResult:
    """Every instance of the range has a schedule whose simulated makespan is ``max(S1, S2)``
    (:func:`pipebounds.constructions.single_wave.split_nonbinding_schedule`), so the bound is
    the optimum there (docs/theory.md, S-nb); ``certify`` says exact (basis ``checked``, or
    ``theorem`` where a theorem already says so, as at ``m = 1``)."""
    full = ctx.mode == "full"
    Pr, mr = (range(2, 9), range(1, 17)) if full else (range(2, 7), range(1, 13))
    durs = (1, 2, 3, 4) if full else (1, 2, 3)
    n, fails = split_nonbinding_misses(Pr, mr, durs)
    return CheckResult(n, not fails, Fraction(1) if not fails else None,
                       f"{len(fails)} missed; first {fails[0]}" if fails else
                       "the greedy I>F>W schedule (one of its four hold variants) reaches "
                       "max(S1, S2) on every instance")


def split_nonbinding_misses(Ps, ms, durs) -> tuple[int, list[dict]]:
    """How many split ``K = ∞`` instances of ``Ps x ms x durs^3`` were tried, and those where
    the certificate does not reach :func:`bounds.lower_bound` or ``certify`` does not say
    exact (the check :func:`split_nonbinding_certificate` on its ranges)."""
    from bounds import lower_bound
    from schedules import Instance, simulate
    from pipebounds.certify import certify
    from pipebounds.constructions.single_wave import split_nonbinding_schedule

    n, fails = 0, []
    for P_, m_, (f_, bi, bw) in itertools.product(Ps, ms, itertools.product(durs, repeat=3)):
        inst = Instance(P=P_, m=m_, f=f_, b_I=bi, b_W=bw)
        n += 1
        sched = split_nonbinding_schedule(inst)
        res = simulate(sched) if sched is not None else None
        lb = lower_bound(inst)
        cert = certify(inst, lb=lb)
        if res is None or not res.valid or res.makespan != lb.value \
                or not cert.exact or cert.basis not in ("theorem", "checked"):
            fails.append(inst.to_dict())
    return n, fails


@check("T0 work and chain: the single microbatch's chain reaches T0 (m = 1, every K)",
       theorems=("T0",), kind="exhaustive",
       range={"quick": "v = 1, m = 1, P <= 8, K in {1, inf}, fused and split, 6 duration sets",
              "full": "v = 1, m = 1, P <= 32, K in {1, inf}, fused and split, 6 duration sets"})
def single_microbatch_chain(ctx: Context) -> CheckResult:
    """For ``m = 1`` the chain of one microbatch is a schedule holding one activation per GPU
    (docs/theory.md, Theorem 0): it is valid, within ``K = 1``, its makespan is T0's chain term,
    and ``lower_bound`` flags that exact. Also T0 <= every schedule's makespan there."""
    from bounds import lower_bound
    from bounds.evaluate import basic_terms
    from schedules import Instance, simulate
    from pipebounds.constructions import optimal_schedule

    durs = [dict(f=1, b=2), dict(f=3, b=1), dict(f=Fraction(1, 2), b=Fraction(5, 3)),
            dict(f=1, b_I=1, b_W=1), dict(f=2, b_I=1, b_W=3), dict(f=1, b_I=Fraction(3, 2), b_W=1)]
    n, fails = 0, []
    for P_ in range(1, (32 if ctx.mode == "full" else 8) + 1):
        for d, K_ in itertools.product(durs, (1, None)):
            inst = Instance(P=P_, m=1, K=K_, **d)
            res = simulate(optimal_schedule(inst))
            chain = dict((nm, x) for nm, x, _ in basic_terms(inst))["critical_path"]
            lb = lower_bound(inst)
            n += 1
            if not (res.valid and max(res.peak_memory) == 1 and res.makespan == chain
                    and lb.value == chain and lb.exact):
                fails.append(inst.to_dict())
    return CheckResult(n, not fails, Fraction(1) if not fails else None,
                       f"first failure {fails[0]}" if fails else "chain = T0 = OPT")


K1_QUESTION = "data/k1_question.jsonl"
COUNTEREXAMPLE = (3, 12, 5, 3)  # P, m, f, b: T3 = 144 < OPT = 146 (docs/theory.md, T3 gap)


@check("T3d coupled single slot (valid: <= every independent optimum; = OPT at P=3 m=12 f=5 "
       "b=3; never above T3 where T3 = OPT is certified)", theorems=("T3d",), kind="exhaustive",
       range={"quick": "every independent K=1 fused v=1 row of pipebounds/data/optima.jsonl; every row of "
                       "data/k1_question.jsonl; the schedules data/k1_*_reached_*.json; solved: "
                       "K=1, P <= 3, m <= 5, (f,b) in 5 pairs",
              "full": "the same rows and schedules; solved: K=1, P <= 4, m <= 8, f, b in {1..5} "
                      "coprime"})
def coupled_slot_valid(ctx: Context) -> CheckResult:
    """T3d (``bounds.single_wave.coupled_slot_value``) against optima proven without any bound:
    ``T3d <= OPT`` on every independent fused ``K = 1``, ``v = 1`` row of pipebounds/data/optima.jsonl and
    ``T3d = OPT`` on the counterexample row (which must be present); on every row of
    data/k1_question.jsonl certified by a construction (a schedule of makespan T3, so T3 = OPT)
    ``T3d = T3``, and on the others ``T3d <=`` the best makespan found; every recorded schedule
    ``data/k1_*_reached_*.json`` is valid, holds one activation per GPU and ends no earlier
    than T3d (where it ends at T3d, T3d = OPT); and ``T3d <= OPT`` on instances solved here by
    :func:`pipebounds.search.solve` with ``use_theory=False``."""
    import json
    from math import gcd
    from pathlib import Path

    from bounds.single_wave import coupled_slot_value, single_slot_value
    from schedules import Instance

    from .table import optima_rows

    fails: list[str] = []
    fired: list[str] = []
    n = 0
    worst = Fraction(1)
    cex_seen = False
    for inst, opt in optima_rows(lambda i: i.v == 1 and i.K == 1 and not i.split and not i.c):
        n += 1
        val = coupled_slot_value(inst)
        worst = max(worst, opt / val)
        if val > opt:
            fails.append(f"T3d {val} > OPT {opt}: {inst.to_dict()}")
        if val > single_slot_value(inst):
            fired.append(f"P={inst.P} m={inst.m} f={inst.f} b={inst.b}: T3d {val}, OPT {opt}")
        if (inst.P, inst.m, inst.f, inst.b) == COUNTEREXAMPLE:
            cex_seen = True
            if val != opt:
                fails.append(f"T3d {val} != OPT {opt} on the counterexample {COUNTEREXAMPLE}")
    if not cex_seen:
        fails.append(f"no independent optimum of {COUNTEREXAMPLE} in pipebounds/data/optima.jsonl")
    root = Path(__file__).resolve().parent.parent
    k1 = [json.loads(line) for line in (root / K1_QUESTION).read_text().splitlines() if line]
    for row in k1:
        n += 1
        inst = Instance(P=row["P"], m=row["m"], K=1, f=row["f"], b=row["b"])
        val, t3 = coupled_slot_value(inst), single_slot_value(inst)
        if t3 != Fraction(row["t3"]):
            fails.append(f"T3 {t3} != the recorded {row['t3']}: {row}")
        if row["certified"] and val != t3:
            fails.append(f"T3d {val} != T3 {t3} where T3 = OPT is certified: {row}")
        if row.get("opt") is not None and val > Fraction(row["opt"]):
            fails.append(f"T3d {val} above a schedule of makespan {row['opt']}: {row}")
    # recorded K = 1 schedules (data/k1_*.json): valid, one activation, makespan >= T3d
    from schedules import simulate
    from schedules.io import schedule_from_document

    reached = []
    for path in sorted((root / "data").glob("k1_*_reached_*.json")):
        sched = schedule_from_document(json.loads(path.read_text()))
        inst, sim = sched.instance, simulate(sched)
        n += 1
        val = coupled_slot_value(inst)
        if not (sim.valid and max(sim.peak_memory) <= 1 and sim.makespan >= val):
            fails.append(f"{path.name}: valid={sim.valid}, makespan {sim.makespan} vs T3d {val}")
        elif sim.makespan == val:
            reached.append(f"{path.name} (T3d = OPT = {val})")
    full = ctx.mode == "full"
    if full:
        pairs = [(a, c) for a in range(1, 6) for c in range(1, 6) if gcd(a, c) == 1]
        insts = _fused(range(2, 5), range(2, 9), pairs, Ks=[1])
        tl = 120.0
    else:
        insts = _fused(range(2, 4), range(2, 6), PAIRS_QUICK, Ks=[1])
        tl = 20.0
    rows = _run(ctx, [(i, tl) for i in insts])
    solved = 0
    for r in rows:
        opt = _closed(r)
        val = r["terms"]["single_slot_coupled"]
        if opt is None:
            if r["opt"] is not None and r["opt"] < val:
                fails.append(f"incumbent {r['opt']} below T3d {val}: {r['instance']}")
            continue
        solved += 1
        worst = max(worst, opt / val)
        if val > opt:
            fails.append(f"T3d {val} > OPT {opt} (solved): {r['instance']}")
    n += len(rows)
    detail = (fails[0] if fails else
              f"{n} instances ({solved} of {len(rows)} solved here); T3d > T3 on "
              f"{len(fired)} table rows: " + ("; ".join(fired[:3]) or "none") +
              "; recorded schedules reaching T3d: " + ("; ".join(reached) or "none"))
    return CheckResult(n, not fails, worst, detail)
