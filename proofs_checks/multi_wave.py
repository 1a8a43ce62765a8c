"""Machine checks of the multi-wave theorems (docs/theory_multiwave.md, MW1-MW7).

Symbolic checks: sympy verifies the identities and inequalities the proofs use.
Exhaustive checks compare against exact optima computed *independently of the bound under
test*: :func:`brute_force` below (an exhaustive search over active schedules, K = inf, fused or
split, starting from the trivial bounds only), the rows of pipebounds/data/optima.jsonl, and fresh solves
of :func:`pipebounds.search.solve` with its root bound replaced by the trivial terms (so the bound
under test cannot leak into the optimum it is checked against).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Iterable, Optional

import sympy as sp

from bounds import multi_wave as mw
from bounds.evaluate import basic_terms, lower_bound
from bounds.symbols import P, b, f, m, v
from pipebounds.constructions.multi_wave import looped_bfs, optimal_schedule, vshape_certified
from schedules.instance import Instance
from schedules.simulate import simulate

from .registry import CheckResult, Context, check
from .table import optima_rows



# =========================================================================== exact optimum
def brute_force(inst: Instance, limit: int = 3_000_000) -> Optional[Fraction]:
    """The exact optimum of a small instance with ``K = None`` and ``c = 0`` (fused or split),
    or None when ``limit`` search nodes do not suffice.

    Iterative deepening on ``T`` from the trivial bounds (work, critical path); for each ``T`` a
    depth-first search over the active schedules of Giffler and Thompson (which contain an
    optimal schedule for the makespan): at every node the op that could finish first fixes a GPU
    and the search branches on every op of that GPU that could start before it finishes.
    Microbatches with the same progress and ready time are interchangeable, so states are kept
    sorted (symmetry) and failed states are memoised. Node pruning: each microbatch's remaining
    chain, and per GPU the Jackson (head + work + tail) bound of its remaining ops.

    >>> brute_force(Instance(P=2, m=2, v=2, placement="vshape", f=1, b=2))
    Fraction(16, 1)
    """
    if inst.K is not None or inst.c != 0:
        raise ValueError("brute_force handles K = None and c = 0 only")
    u = inst.unit
    S, Pn, mn = inst.S, inst.P, inst.m
    split = inst.split
    fu = int(inst.f * u)
    bu = int((inst.b_I if split else inst.b) * u)
    wu = int(inst.b_W * u) if split else 0
    gpu = inst.stage_to_rank
    cg = [gpu[i] if i < S else gpu[2 * S - 1 - i] for i in range(2 * S)]
    cd = [fu if i < S else bu for i in range(2 * S)]
    ct = [sum(cd[i + 1:]) + wu for i in range(2 * S)]

    def bound_ok(mbs, free, T):
        per = [[] for _ in range(Pn)]
        for idx, ready, wp in mbs:
            if idx < 2 * S and ready + cd[idx] + ct[idx] > T:
                return False
            h = ready
            for i in range(idx, 2 * S):
                per[cg[i]].append((h, cd[i], ct[i]))
                if split and i >= S:
                    per[gpu[2 * S - 1 - i]].append((h + cd[i], wu, 0))
                h += cd[i]
            for s, r in wp:
                if r + wu > T:
                    return False
                per[gpu[s]].append((r, wu, 0))
        for g in range(Pn):
            ops = per[g]
            if not ops:
                continue
            ops.sort()
            tot, mq = 0, None
            for h, d, q in reversed(ops):
                tot += d
                mq = q if mq is None else min(mq, q)
                if max(free[g], h) + tot + mq > T:
                    return False
            ops.sort(key=lambda o: o[2])
            tot, mh = 0, None
            for h, d, q in reversed(ops):
                tot += d
                mh = h if mh is None else min(mh, h)
                if max(free[g], mh) + tot + q > T:
                    return False
        return True

    count = [0]

    def feasible(T):
        failed = set()

        def dfs(mbs, free):
            key = (mbs, free)
            if key in failed:
                return False
            count[0] += 1
            if count[0] > limit:
                raise TimeoutError
            if all(idx == 2 * S and not wp for idx, _, wp in mbs):
                return True
            if not bound_ok(mbs, free, T):
                failed.add(key)
                return False
            cands, seen = [], set()
            for k, st in enumerate(mbs):
                if st in seen:
                    continue
                seen.add(st)
                idx, ready, wp = st
                if idx < 2 * S:
                    g = cg[idx]
                    es = max(ready, free[g])
                    cands.append((es, es + cd[idx], g, k, -1))
                for wi, (s, r) in enumerate(wp):
                    g = gpu[s]
                    es = max(r, free[g])
                    cands.append((es, es + wu, g, k, wi))
            cstar = min(c[1] for c in cands)
            gstar = min(c[2] for c in cands if c[1] == cstar)
            for es, ec, g, k, wi in sorted(c for c in cands if c[2] == gstar and c[0] < cstar):
                idx, ready, wp = mbs[k]
                if wi < 0:
                    nwp = tuple(sorted(wp + ((2 * S - 1 - idx, ec),))) if split and idx >= S \
                        else wp
                    nm = (idx + 1, ec, nwp)
                else:
                    nm = (idx, ready, wp[:wi] + wp[wi + 1:])
                if dfs(tuple(sorted(mbs[:k] + (nm,) + mbs[k + 1:])),
                       free[:g] + (ec,) + free[g + 1:]):
                    return True
            failed.add(key)
            return False

        return dfs(tuple((0, 0, ()) for _ in range(mn)), tuple([0] * Pn))

    T = max(int(val * u) for _, val, _ in basic_terms(inst))
    try:
        while not feasible(T):
            T += 1
    except TimeoutError:
        return None
    return Fraction(T, u)


def _independent_solve(inst: Instance, time_limit: float, engine: str = "search"):
    """:func:`pipebounds.search.solve` proving with the engine alone (``use_theory=False``, no
    known schedules), so that the optimum does not depend on the bound being checked."""
    from pipebounds.search import solve

    return solve(inst, time_limit=time_limit, use_known=False, use_theory=False, engine=engine)


def _map(ctx: Context, fn, items: list):
    """``fn`` over ``items`` through the sweep's executors (pipebounds.sweep.parallel_map)."""
    from pipebounds.sweep import parallel_map

    return parallel_map(fn, items, ctx.workers if len(items) > 8 else 1, ctx.scheduler)


# =========================================================================== ranges
FUSED_DURATIONS = [(1, 1), (1, 2), (2, 1), (1, 3), (2, 3)]
SPLIT_DURATIONS = [(1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 2)]


def fused_range(mode: str) -> list[Instance]:
    """Small fused instances, ``K = None``: v = 2, both placements (quick: P <= 3, m <= 4;
    full: P <= 4, m <= 6 and v = 3 with P <= 3, m <= 4)."""
    out = []
    Ps, ms = ((2, 3), range(1, 5)) if mode == "quick" else ((2, 3, 4), range(1, 7))
    durs = FUSED_DURATIONS[:3] if mode == "quick" else FUSED_DURATIONS
    for pl, Pn, mn, (fd, bd) in product(("looped", "vshape"), Ps, ms, durs):
        out.append(Instance(P=Pn, m=mn, v=2, placement=pl, f=fd, b=bd))
    if mode == "full":
        for pl, Pn, mn, (fd, bd) in product(("looped", "vshape"), (2, 3), range(1, 5),
                                            FUSED_DURATIONS[:3]):
            out.append(Instance(P=Pn, m=mn, v=3, placement=pl, f=fd, b=bd))
    return out


def split_range(mode: str) -> list[Instance]:
    """Small split instances, ``K = None``, v = 2 (quick: P = 2, m <= 3; full: P <= 3, m <= 4)."""
    Ps, ms = ((2,), range(1, 4)) if mode == "quick" else ((2, 3), range(1, 5))
    return [Instance(P=Pn, m=mn, v=2, placement=pl, f=fd, b_I=bi, b_W=bw)
            for pl, Pn, mn, (fd, bi, bw) in product(("looped", "vshape"), Ps, ms,
                                                    SPLIT_DURATIONS)]


def _gap_stats(pairs: Iterable[tuple[Instance, Fraction, Fraction]]):
    worst, worst_inst, total, n = Fraction(1), None, Fraction(0), 0
    for inst, lb, opt in pairs:
        g = opt / lb
        total += g
        n += 1
        if g > worst:
            worst, worst_inst = g, inst
    return worst, worst_inst, (total / n if n else Fraction(1)), n


# =========================================================================== symbolic
def _is_zero(e) -> bool:
    return sp.simplify(sp.expand(e)) == 0


@check("MW2 fill-drain, MW3 last stage, MW4 adjacent pair (closed forms = subset bounds)",
       theorems=("MW2", "MW3", "MW4"), kind="symbolic", range="all P, m, v >= 2; f, b > 0")
def closed_forms_are_subset_bounds(ctx: Context) -> CheckResult:
    S = v * P
    cases = {
        "MW2": ((P - 1) * f + v * m * (f + b) + (P - 1) * b, mw.fill_drain_expr()),
        "MW3": ((S - 1) * f + m * (f + b) + (S - 1) * b, mw.last_stage_expr()),
        "MW4 forwards": ((P - 1) * f + 2 * m * f + (S - 1 - P) * f + S * b,
                         S * (f + b) + 2 * (m - 1) * f),
        "MW4 backwards": (S * f + (S - 1 - P) * b + 2 * m * b + (P - 1) * b,
                          S * (f + b) + 2 * (m - 1) * b),
    }
    bad = [k for k, (lhs, rhs) in cases.items() if not _is_zero(lhs - rhs)]
    # MW4's Max(f, b) form is the larger of its two variants
    e = mw.vshape_pair_expr()
    for sub, variant in (({f: 1, b: 2}, "MW4 backwards"), ({f: 3, b: 1}, "MW4 forwards"),
                         ({f: sp.Rational(1, 2), b: sp.Rational(1, 2)}, "MW4 forwards")):
        if not _is_zero((e - cases[variant][1]).subs(sub)):
            bad.append(f"MW4 Max at {sub}")
    # MW1 reproduces the closed forms (gpu_subset_expr on concrete stages)
    for Pn, vn in ((2, 2), (3, 2), (4, 3)):
        inst = Instance(P=Pn, m=2, v=vn, placement="vshape", f=1, b=2)
        Sn = Pn * vn
        allp = [(k, s) for s in inst.stages_of(Pn - 1) for k in "FB"]
        if not _is_zero(mw.gpu_subset_expr(inst, Pn - 1, allp)
                        - mw.fill_drain_expr().subs({P: Pn, v: vn})):
            bad.append(f"MW1->MW2 P={Pn} v={vn}")
        last = [("F", Sn - 1), ("B", Sn - 1)]
        if not _is_zero(mw.gpu_subset_expr(inst, inst.gpu(Sn - 1), last)
                        - mw.last_stage_expr().subs({P: Pn, v: vn})):
            bad.append(f"MW1->MW3 P={Pn} v={vn}")
    return CheckResult(len(cases) + 9, not bad, None, "; ".join(bad))


def looped_timetable_times(Pn, mn, vn, fd, bd, M):
    """The timetable of MW5's proof (docs/theory_multiwave.md, MW5): start times of
    ``F(j, qP+p)`` and ``B(j, qP+p)`` as functions of ``(j, q, p)``; symbolic or numeric."""
    TF = (Pn - 1 + (vn - 1) * M + mn) * fd

    def F(j_, q_, p_):
        return (p_ + q_ * M + j_) * fd

    def B(j_, q_, p_):
        return TF + (Pn - 1 - p_ + (vn - 1 - q_) * M + j_) * bd

    return F, B, TF


def _looped_timetable_constraints(Pn, mn, vn, fd, bd, M):
    """Every constraint the timetable must satisfy, as ``(name, domain, later start - earlier
    end)`` with ``domain`` naming the index ranges it is taken over: the GPU orders of
    ``looped_bfs`` (forward waves ``q = 0..v-1``, then backward waves ``q = v-1..0``, each over
    ``j = 0..m-1``) and every precedence of MODEL.md, plus the makespan identity."""
    F, B, _ = looped_timetable_times(Pn, mn, vn, fd, bd, M)
    q, p, j = sp.symbols("q p j", integer=True, nonnegative=True)
    return [
        ("GPU order: F(j) -> F(j+1) in a wave", "j<=m-2", F(j + 1, q, p) - (F(j, q, p) + fd)),
        ("GPU order: forward wave q -> q+1", "q<=v-2",
         F(0, q + 1, p) - (F(mn - 1, q, p) + fd)),
        ("GPU order: last forward -> first backward", "p<=P-1",
         B(0, vn - 1, p) - (F(mn - 1, vn - 1, p) + fd)),
        ("GPU order: B(j) -> B(j+1) in a wave", "j<=m-2", B(j + 1, q, p) - (B(j, q, p) + bd)),
        ("GPU order: backward wave q -> q-1", "q>=1", B(0, q - 1, p) - (B(mn - 1, q, p) + bd)),
        ("precedence F(j,s-1) -> F(j,s), same wave", "p>=1", F(j, q, p) - (F(j, q, p - 1) + fd)),
        ("precedence F(j,s-1) -> F(j,s), wave q-1 -> q", "q>=1",
         F(j, q, 0) - (F(j, q - 1, Pn - 1) + fd)),
        ("precedence B(j,s+1) -> B(j,s), same wave", "p<=P-2",
         B(j, q, p) - (B(j, q, p + 1) + bd)),
        ("precedence B(j,s+1) -> B(j,s), wave q+1 -> q", "q<=v-2",
         B(j, q, Pn - 1) - (B(j, q + 1, 0) + bd)),
        ("precedence F(j,S-1) -> B(j,S-1)", "j<=m-1",
         B(j, vn - 1, Pn - 1) - (F(j, vn - 1, Pn - 1) + fd)),
        ("makespan: B(m-1, 0) ends at the closed form", "identity",
         (B(mn - 1, 0, 0) + bd) - (Pn - 1 + (vn - 1) * M + mn) * (fd + bd)),
    ]


@check("MW5 looped optimum: max(MW2, MW3) closed form and the breadth-first timetable (every "
       "GPU-order and precedence constraint, symbolic and op by op)", theorems=("MW5",), kind="symbolic",
       range={"quick": "sympy: all P, m, v >= 2, f, b > 0, cases m >= P and m <= P; op by op: "
                       "P <= 4, m <= 6, v <= 3, 2 duration pairs",
              "full": "sympy: all P, m, v >= 2, f, b > 0, cases m >= P and m <= P; op by op: "
                      "P <= 6, m <= 10, v <= 4, 4 duration pairs"})
def looped_timetable(ctx: Context) -> CheckResult:
    """The proof of MW5 (docs/theory_multiwave.md) is a timetable. Symbolic part: every
    constraint of :func:`_looped_timetable_constraints`, over its whole index domain (each index
    range written with fresh naturals), is a polynomial with non-negative coefficients in both
    cases ``M = m >= P`` and ``M = P >= m``, and the makespan is the closed form, which equals
    ``max(MW2, MW3)``. Op-by-op part: the timetable of concrete instances respects
    ``looped_bfs``'s GPU orders without overlap and every precedence of the instance, and ends
    at :func:`bounds.multi_wave.looped_opt_value`."""
    from .single_wave import nonnegative_on_naturals

    k, a, c, g, p1, q1, j1 = sp.symbols("k a c g p1 q1 j1", integer=True, nonnegative=True)
    q, p, j = sp.symbols("q p j", integer=True, nonnegative=True)
    nat = (k, a, c, g, p1, q1, j1, q, p, j)
    bad, n = [], 0
    Mx = sp.Symbol("M", positive=True)
    closed = (P - 1 + (v - 1) * Mx + m) * (f + b)
    for case in ("m>=P", "m<=P"):
        # M = max(m, P); the other of m, P is M - k. The domains substitute P, v or m.
        base = {m: Mx, P: Mx - k} if case == "m>=P" else {P: Mx, m: Mx - k}
        mw2, mw3 = mw.fill_drain_expr().subs(base), mw.last_stage_expr().subs(base)
        n += 2
        if not _is_zero(closed.subs(base) - (mw2 if case == "m>=P" else mw3)):
            bad.append(f"{case}: closed form != the larger of MW2, MW3")
        if not nonnegative_on_naturals(((mw2 - mw3) if case == "m>=P" else (mw3 - mw2))
                                       .subs(v, 2 + c), nat):
            bad.append(f"{case}: the other of MW2, MW3 is not smaller")
        for name, dom, expr in _looped_timetable_constraints(P, m, v, f, b, Mx):
            n += 1
            e = expr.subs(base)
            dsub = {"j<=m-2": {}, "q<=v-2": {v: q + 2 + c},
                    "p<=P-1": {}, "q>=1": {q: q1 + 1}, "p>=1": {p: p1 + 1},
                    "p<=P-2": {}, "j<=m-1": {}, "identity": {}}[dom]
            e = e.subs(dsub)
            # the index bounds in terms of M: p <= P-1, j <= m-1 where P or m is M or M - k
            if dom in ("p<=P-1", "p<=P-2"):
                e = e.subs(Mx, p + (1 if dom == "p<=P-1" else 2) + a
                           + (k if case == "m>=P" else 0))
            if dom == "j<=m-1":
                e = e.subs(Mx, j + 1 + g + (k if case == "m<=P" else 0))
            if dom == "identity":
                if not _is_zero(e):
                    bad.append(f"{case}: {name}: {sp.factor(e)} != 0")
                continue
            # v >= 1 and M >= 1 in every case: write v = 1 + c', M = 1 + a'
            e = e.subs(v, 1 + sp.Symbol("c2", integer=True, nonnegative=True))
            e = e.subs(Mx, 1 + sp.Symbol("a2", integer=True, nonnegative=True))
            if not nonnegative_on_naturals(e, nat + tuple(e.free_symbols - {f, b})):
                bad.append(f"{case}: {name}: {sp.factor(sp.expand(e))} not >= 0")
    # op by op on concrete instances
    quick = ctx.mode == "quick"
    durs = [(1, 2), (3, 1)] if quick else [(1, 2), (3, 1), (1, 1), (Fraction(1, 2), 2)]
    for Pn, mn, vn, (fd, bd) in product(range(1, 5 if quick else 7), range(1, 7 if quick else 11),
                                        range(2, 4 if quick else 5), durs):
        inst = Instance(P=Pn, m=mn, v=vn, f=fd, b=bd)
        M_ = max(mn, Pn)
        Ft, Bt, _ = looped_timetable_times(Pn, mn, vn, Fraction(fd), Fraction(bd), M_)
        start = {}
        for op in (o for order in looped_bfs(inst).orders for o in order):
            qq, pp = divmod(op.stage, Pn)
            start[op] = (Ft if op.kind == "F" else Bt)(op.microbatch, qq, pp)
        dur = {"F": Fraction(fd), "B": Fraction(bd)}
        n += 1
        err = None
        for order in looped_bfs(inst).orders:
            for o1, o2 in zip(order, order[1:]):
                if start[o2] < start[o1] + dur[o1.kind]:
                    err = f"GPU order {o1} -> {o2}"
        S = inst.S
        for (op, t) in start.items():
            s_, jj = op.stage, op.microbatch
            if op.kind == "F" and s_ > 0:
                pred = [o for o in start if o.kind == "F" and o.stage == s_ - 1
                        and o.microbatch == jj][0]
            elif op.kind == "B":
                pred = [o for o in start if o.microbatch == jj and (
                    (o.kind == "B" and o.stage == s_ + 1) or
                    (s_ == S - 1 and o.kind == "F" and o.stage == S - 1))][0]
            else:
                continue
            if t < start[pred] + dur[pred.kind]:
                err = f"precedence {pred} -> {op}"
        end = max(t + dur[o.kind] for o, t in start.items())
        if end != mw.looped_opt_value(inst):
            err = f"timetable ends at {end} != MW5 {mw.looped_opt_value(inst)}"
        if err:
            bad.append(f"{inst.to_dict()}: {err}")
    return CheckResult(n, not bad, None, "; ".join(bad[:3]) or
                       "every GPU-order and precedence constraint of the timetable holds "
                       "(sympy, both cases) and op by op; makespan = MW5")


@check("MW6 vshape: MW3 <= MW4, and MW2 >= MW4 iff (2m-P-1) min(f,b) >= (P-1) max(f,b)",
       theorems=("MW6",), kind="symbolic", range="v = 2, all P, m >= 1, f, b > 0")
def vshape_regimes(ctx: Context) -> CheckResult:
    lo, hi = sp.symbols("mu M", positive=True)
    bad = []
    sub = {v: 2}
    # write f, b as (lo, hi) in either order; MW4 uses max(f, b) = hi
    for fb in ((lo, hi), (hi, lo)):
        s = {f: fb[0], b: fb[1], **sub}
        mw3 = mw.last_stage_expr().subs(s)
        mw4 = (2 * P * (f + b) + 2 * (m - 1) * hi).subs(s)
        mw2 = mw.fill_drain_expr().subs(s)
        if not _is_zero((mw4 - mw3) - (m - 1) * (hi - lo)):
            bad.append(f"MW4-MW3 at {fb}")
        if not _is_zero((mw2 - mw4) - ((2 * m - P - 1) * lo - (P - 1) * hi)):
            bad.append(f"MW2-MW4 at {fb}")
    return CheckResult(4, not bad, None, "; ".join(bad))


# =========================================================================== exhaustive
def _fused_row(inst: Instance):
    opt = brute_force(inst)
    other = _independent_solve(inst, 10.0)  # a second, independent exact solver
    if opt is not None and other.status == "optimal" and other.makespan != opt:
        return inst, None, False, "solvers disagree", other.makespan, None
    lb = lower_bound(inst)
    sched = optimal_schedule(inst)
    ms = None
    if sched is not None:
        res = simulate(sched)
        ms = res.makespan if res.valid else "invalid"
    return inst, lb.value, lb.exact, opt, ms, mw.gpu_subset_value(inst)


@check("MW1 (with MW2-MW5) valid and exact on small fused instances, K = inf; constructions "
       "valid and optimal (optima by two independent exact solvers)",
       theorems=("MW1", "MW2", "MW3", "MW4", "MW5"), kind="exhaustive",
       range={"quick": "v=2, looped+vshape, P<=3, m<=4, (f,b) in {(1,1),(1,2),(2,1)}; "
                       "optima.jsonl rows v>=2 with K None or K >= vm",
              "full": "v=2, P<=4, m<=6, (f,b) in {(1,1),(1,2),(2,1),(1,3),(2,3)}; "
                      "v=3, P<=3, m<=4, 3 ratios; optima.jsonl rows v>=2, K None or >= vm"})
def fused_exhaustive(ctx: Context) -> CheckResult:
    rows = _map(ctx, _fused_row, fused_range(ctx.mode))
    # plus the exact optima of pipebounds/data/optima.jsonl with memory that does not bind
    for inst, opt in optima_rows(lambda i: i.v >= 2 and not i.split and i.c == 0
                                 and (i.K is None or i.K >= i.v * i.m)):
        lb = lower_bound(inst)
        sched = optimal_schedule(inst)
        ms = None
        if sched is not None:
            res = simulate(sched)
            ms = res.makespan if res.valid else "invalid"
        rows.append((inst, lb.value, lb.exact, opt, ms, None))
    bad, pairs, cert, vs = [], [], 0, 0
    for inst, lb, exact, opt, ms, sub in rows:
        if opt is None:
            bad.append(f"{inst}: brute force exceeded its node limit")
            continue
        if opt == "solvers disagree":
            bad.append(f"{inst.to_dict()}: brute force and pipebounds.search disagree ({ms})")
            continue
        pairs.append((inst, lb, opt))
        if lb > opt:
            bad.append(f"INVALID {inst.to_dict()}: LB {lb} > OPT {opt}")
        if exact and lb != opt:
            bad.append(f"WRONG EXACT {inst.to_dict()}: LB {lb} != OPT {opt}")
        if inst.placement == "looped" and (ms != opt or not exact):
            bad.append(f"looped {inst.to_dict()}: construction {ms}, OPT {opt}, exact {exact}")
        if ms is not None and ms != opt:
            bad.append(f"construction {inst.to_dict()}: makespan {ms} != OPT {opt}")
        if inst.placement == "vshape" and inst.v == 2:
            vs += 1
            cert += ms is not None
    worst, where, mean, n = _gap_stats(pairs)
    detail = (f"mean OPT/LB {float(mean):.4f}; worst {worst} at "
              f"{where.to_dict() if where else '-'}; vshape v=2 certified {cert}/{vs}")
    return CheckResult(n, not bad, worst, "; ".join(bad[:5]) or detail)


def _split_row(inst: Instance):
    return inst, lower_bound(inst).value, brute_force(inst)


@check("MW1 valid on small split instances (b_I, b_W), K = inf", theorems=("MW1",), kind="exhaustive",
       range={"quick": "v=2, both placements, P=2, m<=3, (f,b_I,b_W) in 4 ratios",
              "full": "v=2, both placements, P<=3, m<=4, 4 ratios"})
def split_exhaustive(ctx: Context) -> CheckResult:
    rows = _map(ctx, _split_row, split_range(ctx.mode))
    bad, pairs = [], []
    for inst, lb, opt in rows:
        if opt is None:
            bad.append(f"{inst}: brute force exceeded its node limit")
            continue
        pairs.append((inst, lb, opt))
        if lb > opt:
            bad.append(f"INVALID {inst.to_dict()}: LB {lb} > OPT {opt}")
    worst, where, mean, n = _gap_stats(pairs)
    detail = f"mean OPT/LB {float(mean):.4f}; worst {worst} at {where.to_dict() if where else '-'}"
    return CheckResult(n, not bad, worst, "; ".join(bad[:5]) or detail)


def _memory_instances(mode: str) -> list[Instance]:
    if mode == "quick":
        return [Instance(P=2, m=mn, v=2, K=Kn, placement=pl, f=1, b=2)
                for pl in ("looped", "vshape") for mn in (1, 2) for Kn in (1, 2)] + \
            [Instance(P=3, m=1, v=2, K=1, placement="vshape", f=2, b=1)]
    return [Instance(P=Pn, m=mn, v=2, K=Kn, placement=pl, f=1, b=2)
            for pl in ("looped", "vshape") for Pn in (2, 3) for mn in (1, 2, 3)
            for Kn in (1, 2, 3)]


def _memory_row(inst: Instance):
    r = _independent_solve(inst, 20.0)
    return inst, lower_bound(inst).value, (r.makespan if r.status == "optimal" else None)


@check("MW7 memory slots, MW8 forced recomputation (every multi-wave term) valid for finite K",
       theorems=("MW7", "MW8", "MW9", "MW8a", "MW8b"), kind="exhaustive",
       range={"quick": "pipebounds/data/optima.jsonl rows with v>=2, finite K; fresh: P=2, m<=2, K<=2 "
                       "and P=3, m=1, K=1 vshape",
              "full": "pipebounds/data/optima.jsonl rows with v>=2, finite K; fresh: P<=3, m<=3, K<=3"})
def memory_exhaustive(ctx: Context) -> CheckResult:
    rows = [(i, lower_bound(i).value, o) for i, o in
            optima_rows(lambda i: i.v >= 2 and i.K is not None and i.c == 0)]
    rows += _map(ctx, _memory_row, _memory_instances(ctx.mode))
    bad, pairs, skipped = [], [], 0
    for inst, lb, opt in rows:
        if opt is None:
            skipped += 1
            continue
        pairs.append((inst, lb, opt))
        if lb > opt:
            bad.append(f"INVALID {inst.to_dict()}: LB {lb} > OPT {opt}")
    worst, where, mean, n = _gap_stats(pairs)
    detail = (f"mean OPT/LB {float(mean):.4f}; worst {worst} at "
              f"{where.to_dict() if where else '-'}; {skipped} not solved in time")
    return CheckResult(n, not bad, worst, "; ".join(bad[:5]) or detail)


def _looped_large_row(inst: Instance):
    res = simulate(looped_bfs(inst))
    return inst, res.valid, res.makespan, mw.looped_opt_value(inst), lower_bound(inst).value, \
        max(res.peak_memory)


@check("MW5 looped construction reaches the bound for every P, m, v in a wide range",
       theorems=("MW5",), kind="exhaustive",
       range={"quick": "looped, v in {2,3}, P<=6, m<=12, (f,b) in {(1,2),(3,1),(1/2,5/3)}",
              "full": "looped, v in {2,3,4}, P<=10, m<=24, 4 duration pairs"})
def looped_wide(ctx: Context) -> CheckResult:
    quick = ctx.mode == "quick"
    vs = (2, 3) if quick else (2, 3, 4)
    Ps = range(1, 7) if quick else range(1, 11)
    ms = range(1, 13) if quick else range(1, 25)
    durs = [(1, 2), (3, 1), (Fraction(1, 2), Fraction(5, 3))]
    if not quick:
        durs.append((1, 1))
    items = [Instance(P=Pn, m=mn, v=vn, f=fd, b=bd)
             for vn in vs for Pn in Ps for mn in ms for fd, bd in durs]
    bad = []
    for inst, valid, ms_, closed, lb, peak in _map(ctx, _looped_large_row, items):
        if not valid or ms_ != closed or lb != closed or peak != inst.v * inst.m:
            bad.append(f"{inst.to_dict()}: valid {valid}, makespan {ms_}, closed {closed}, "
                       f"LB {lb}, peak {peak}")
    return CheckResult(len(items), not bad, Fraction(1) if not bad else None, "; ".join(bad[:3]))


def _vshape_wide_row(inst: Instance):
    sched = vshape_certified(inst)
    lb = mw.gpu_subset_value(inst)
    if sched is None:
        return inst, None, lb
    res = simulate(sched)
    return inst, (res.makespan if res.valid else "invalid"), lb


@check("MW6 vshape certificates: every returned schedule is valid and reaches MW1",
       theorems=("MW6",), kind="exhaustive",
       range={"quick": "vshape v=2, P<=4, m<=6, (f,b) in {(1,1),(1,2)}",
              "full": "vshape v=2, P<=6, m<=12, (f,b) in {(1,1),(1,2),(2,1),(1,3),(2,3)}"})
def vshape_wide(ctx: Context) -> CheckResult:
    quick = ctx.mode == "quick"
    Ps = range(2, 5) if quick else range(2, 7)
    ms = range(1, 7) if quick else range(1, 13)
    durs = [(1, 1), (1, 2)] if quick else FUSED_DURATIONS
    items = [Instance(P=Pn, m=mn, v=2, placement="vshape", f=fd, b=bd)
             for Pn in Ps for mn in ms for fd, bd in durs]
    bad, cert = [], 0
    for inst, ms_, lb in _map(ctx, _vshape_wide_row, items):
        if ms_ is None:
            continue
        cert += 1
        if ms_ != lb:
            bad.append(f"{inst.to_dict()}: certificate makespan {ms_} != LB {lb}")
    return CheckResult(len(items), not bad, None,
                       "; ".join(bad[:3]) or f"certified {cert}/{len(items)}")


def _construction_row(item):
    """``(construction name, instance) -> (instance, valid, makespan, lower bound)``."""
    from pipebounds.constructions import multi_wave as cmw

    name, inst = item
    res = simulate(getattr(cmw, name)(inst))
    return inst, res.valid, res.makespan, lower_bound(inst), \
        (max(res.peak_memory) if res.valid else None)


def _reaches_exact_bound(ctx: Context, construction: str, items, want, peak=None) -> CheckResult:
    """Every schedule of ``construction`` is valid with makespan ``want(inst)`` (and peak memory
    ``peak(inst)`` when given: the memory range of the exact claim), and the lower bound equals
    it and is flagged exact (the construction is then proven optimal)."""
    bad = []
    for inst, valid, ms_, lb, pk in _map(ctx, _construction_row,
                                         [(construction, i) for i in items]):
        w = want(inst)
        if not valid or ms_ != w or lb.value != w or not lb.exact or (
                peak is not None and pk != peak(inst)):
            bad.append(f"{inst.to_dict()}: valid {valid}, makespan {ms_}, MW4 {w}, "
                       f"LB {lb.value}, exact {lb.exact}, peak {pk}")
    return CheckResult(len(items), not bad, Fraction(1) if not bad else None, "; ".join(bad[:3]))


@check("MW6a vshape periodic schedule (f = b; m <= P or P | m) reaches max(MW2, MW4) "
       "with peak 2 min(m, P)",
       theorems=("MW6", "MW6a"), kind="exhaustive",
       range={"quick": "vshape v=2, f=b in {1, 2/3}, P<=10, m<=P or m=kP (k<=4)",
              "full": "vshape v=2, f=b in {1, 2/3, 5/2}, P<=24, m<=P or m=kP (k<=6)"})
def vshape_periodic_wide(ctx: Context) -> CheckResult:
    quick = ctx.mode == "quick"
    Ps = range(1, 11) if quick else range(1, 25)
    ks = range(2, 5) if quick else range(2, 7)
    fs = [Fraction(1), Fraction(2, 3)] + ([] if quick else [Fraction(5, 2)])
    items = [Instance(P=Pn, m=mn, v=2, placement="vshape", f=fd, b=fd)
             for Pn in Ps for mn in list(range(1, Pn + 1)) + [k * Pn for k in ks] for fd in fs]
    return _reaches_exact_bound(
        ctx, "vshape_periodic", items,
        lambda inst: max((4 * inst.P + 2 * (inst.m - 1)) * inst.f,
                         2 * (2 * inst.m + inst.P - 1) * inst.f),
        peak=lambda inst: 2 * min(inst.m, inst.P))


@check("MW6b vshape m <= P: timetable inequalities of the proof", theorems=("MW6", "MW6b"), kind="symbolic",
       range="v = 2, all P, 1 <= m <= P, 0 < f <= b (f > b by MW0)")
def vshape_small_m_inequalities(ctx: Context) -> CheckResult:
    # b = f + d, d >= 0; microbatch j <= P-1 written P = j + 1 + e; GPU q; q >= j: q = j + k;
    # q <= j - 1: j = q + 1 + k; all new symbols nonnegative integers (f > 0).
    d, e, k, q, j = sp.symbols("d e k q j", integer=True, nonnegative=True)
    ff = sp.Symbol("f", positive=True)
    bb = ff + d
    Pj = j + 1 + e
    t0 = 2 * Pj * ff
    ineqs = {
        # (i) microbatch j's no-wait head ends by GPU j's first backward: (2P+j) f <= t0 + j b
        "pre-part chain": (t0 + j * bb) - (2 * Pj + j) * ff,
        # (ii) wave-0 forward F(j,q) ends before GPU q's first backward at t0 + q b
        "wave-0 forwards": (t0 + q * bb) - (q + 2 * j + 1) * ff,
        # (iii) wave-1 forward F(j, 2P-1-q), q = j + k >= j, ends before t0 + q b
        "wave-1 head forwards": (t0 + (j + k) * bb) - (2 * Pj - (j + k) + 2 * j) * ff,
        # (v) slotted F(j, 2P-1) ends by the start beta_j = t0 + 2 j b of B(j, 2P-1)
        "last forward": (t0 + 2 * j * bb) - (t0 + (2 * j - 1) * bb + ff),
        # (vii) slotted F(j, 2P-1-q), j = q + 1 + k, starts after GPU q's first backward ends
        "slot after head": (t0 + (2 * (q + 1 + k) - 1 - q) * bb) - (t0 + (q + 1) * bb),
        # slotted precedence: F(j, 2P-2-q) on GPU q+1 (slot 2j-2-q) ends before slot 2j-1-q
        "slot chain": (t0 + (2 * j - 1 - q) * bb) - (t0 + (2 * j - 2 - q) * bb + ff),
        # makespan: B(m-1, 0) ends at MW4
        "makespan": sp.expand((t0 + 2 * j * bb + (2 * Pj - 1) * bb + bb)
                              - (2 * Pj * (ff + bb) + 2 * j * bb)),
    }
    bad = []
    for name, e_ in ineqs.items():
        ex = sp.expand(e_)
        if name == "makespan":
            if ex != 0:
                bad.append(f"{name}: {ex}")
        elif not (ex.is_nonnegative or ex == 0):
            bad.append(f"{name}: {ex}")
    # (vi) a slotted forward's slot 2j-1-q (in units of b after t0) is never one of GPU q's
    # backward slots q + 2i (first stage) or 2P-1-q + 2i (second stage), i >= 0. Shown by the
    # sign or parity of the difference, never by sp.solve (which returns [] for an identity,
    # whose every j is a solution, as well as for a contradiction):
    i_ = sp.Symbol("i", integer=True, nonnegative=True)
    # second stage: (2P-1-q+2i) - (2j-1-q) = 2(e + 1 + i) with P = j + 1 + e: strictly positive
    gap2 = sp.expand((2 * Pj - 1 - q + 2 * i_) - (2 * j - 1 - q))
    if not (gap2.is_positive and not gap2.is_zero):
        bad.append(f"slot collision with the second stage's backwards possible: {gap2}")
    # first stage: (2j-1-q) - (q + 2i) = 2(j - q - i) - 1 is odd: never 0
    gap1 = sp.expand((2 * j - 1 - q) - (q + 2 * i_))
    half = sp.expand((gap1 + 1) / 2)
    if not (half.is_integer and sp.expand(2 * half - 1 - gap1) == 0):
        bad.append(f"slot collision with the first stage's backwards possible: {gap1}")
    return CheckResult(len(ineqs) + 2, not bad, None, "; ".join(bad))


@check("MW6b vshape m <= P construction reaches MW4 (= OPT) with peak 2m for every P, "
       "f, b in range",
       theorems=("MW6", "MW6b"), kind="exhaustive",
       range={"quick": "vshape v=2, P<=8, m<=P, (f,b) in {(1,2),(3,1),(1/2,7/3),(2,9)}",
              "full": "vshape v=2, P<=16, m<=P, 9 duration pairs incl. fractions"})
def vshape_small_m_wide(ctx: Context) -> CheckResult:
    quick = ctx.mode == "quick"
    Ps = range(1, 9) if quick else range(1, 17)
    durs = [(1, 2), (3, 1), (Fraction(1, 2), Fraction(7, 3)), (2, 9)]
    if not quick:
        durs += [(1, 1), (2, 3), (5, 6), (7, 2), (1, 10)]
    items = [Instance(P=Pn, m=mn, v=2, placement="vshape", f=fd, b=bd)
             for Pn in Ps for mn in range(1, Pn + 1) for fd, bd in durs]
    return _reaches_exact_bound(ctx, "vshape_small_m", items, mw.vshape_pair_value,
                                peak=lambda inst: 2 * inst.m)


def _fresh_row(item):
    inst, time_limit, *engine = item
    r = _independent_solve(inst, time_limit, *engine)
    lb = lower_bound(inst)
    return inst, lb, (r.makespan if r.status == "optimal" else None)


def _fresh_terms_valid(ctx: Context, insts: list[Instance], time_limit: float,
                       must_be_tight: tuple[str, ...], engine: str = "search",
                       known: Iterable[tuple[Instance, Fraction]] = (),
                       bad: Optional[list[str]] = None) -> CheckResult:
    """Solve ``insts`` independently (no bound of :mod:`bounds`, no known schedules; with
    ``engine``); every term of ``lower_bound`` must be ``<= OPT``, ``LB = OPT`` where flagged
    exact, and each term named in ``must_be_tight`` must equal OPT on at least one instance
    (otherwise a bound too large by a little could pass unseen: the range must be able to catch
    it). ``known``: more ``(instance, OPT)`` pairs proven independently elsewhere, judged the
    same way; ``bad``: failures found before (reported with these)."""
    rows = _map(ctx, _fresh_row, [(i, time_limit, engine) for i in insts])
    rows += [(i, lower_bound(i), o) for i, o in known]
    bad = list(bad or [])
    pairs, skipped, tight = [], 0, {t: 0 for t in must_be_tight}
    for inst, lb, opt in rows:
        if opt is None:
            skipped += 1
            continue
        pairs.append((inst, lb.value, opt))
        for name, val in lb.terms:
            if val > opt:
                bad.append(f"INVALID {name} {val} > OPT {opt}: {inst.to_dict()}")
            if name in tight and val == opt:
                tight[name] += 1
        if lb.exact and lb.value != opt:
            bad.append(f"WRONG EXACT {inst.to_dict()}: LB {lb.value} != OPT {opt}")
    for name, cnt in tight.items():
        if not cnt:
            bad.append(f"term {name} is never tight on the range: an error in it could pass")
    worst, where, mean, n = _gap_stats(pairs)
    detail = (f"mean OPT/LB {float(mean):.4f}; worst {worst} at "
              f"{where.to_dict() if where else '-'}; {skipped} not solved in time; tight: "
              + ", ".join(f"{k} {v}" for k, v in tight.items()))
    return CheckResult(n, not bad, worst, "; ".join(bad[:3]) or detail)


@check("MW7-MW9 valid at v = 3, finite K (every term <= OPT; MW1, MW9 tight somewhere)",
       theorems=("MW1", "MW7", "MW8", "MW9"), kind="exhaustive",
       range={"quick": "v=3, both placements, P=2, m<=2, K in {1,2,3}, (f,b) in {(1,2),(2,1)}",
              "full": "v=3, both placements, K in {1,2,3}, P=2 with m<=3 and P=3 with m<=2, "
                      "(f,b) in {(1,2),(2,1),(1,1)}"})
def three_waves_finite_K(ctx: Context) -> CheckResult:
    quick = ctx.mode == "quick"
    durs = [(1, 2), (2, 1)] + ([] if quick else [(1, 1)])
    sizes = [(2, 1), (2, 2)] if quick else [(2, 1), (2, 2), (2, 3), (3, 1), (3, 2)]
    insts = [Instance(P=Pn, m=mn, v=3, K=Kn, placement=pl, f=fd, b=bd)
             for pl in ("looped", "vshape") for Pn, mn in sizes for Kn in (1, 2, 3)
             for fd, bd in durs if Kn < 3 * mn]
    return _fresh_terms_valid(ctx, insts, 20.0 if quick else 30.0,
                              ("mw_gpu_subset", "mw_single_slot"))


@check("MW8c, MW9 split forms (K = 1, split backward): every term <= OPT; both tight somewhere",
       theorems=("MW8", "MW9", "MW8c"), kind="exhaustive",
       range={"quick": "v=2, both placements, K=1, split, P<=3, m<=2, (f,b_I,b_W) in "
                       "{(1,1,1),(1,2,1),(1,1,2)}",
              "full": "v=2, both placements, K=1, split, P<=3, m<=3, (f,b_I,b_W) in "
                      "{(1,1,1),(1,2,1),(2,1,1),(1,1,2)}"})
def split_single_slot_multiwave(ctx: Context) -> CheckResult:
    quick = ctx.mode == "quick"
    trips = SPLIT_DURATIONS if not quick else [(1, 1, 1), (1, 2, 1), (1, 1, 2)]
    insts = [Instance(P=Pn, m=mn, v=2, K=1, placement=pl, f=fd, b_I=bi, b_W=bw)
             for pl in ("looped", "vshape") for Pn in (2, 3)
             for mn in ((1, 2) if quick else (1, 2, 3)) for fd, bi, bw in trips]
    return _fresh_terms_valid(ctx, insts, 20.0 if quick else 60.0,
                              ("mw_gpu_subset", "mw_single_slot"))


SPLIT_FINITE_K = "data/multiwave_finite_k_split.jsonl"
"""Exact optima of split two-wave instances with finite ``K`` (tools/multiwave_finite_k.py:
CP-SAT with ``use_theory=False``; each row keeps its optimal orders)."""
RANDOM_FINITE_K = "data/multiwave_finite_k_random.jsonl"
"""The same for random multi-wave instances (``P <= 4``, ``v in {2, 3}``, ``K <= 2v``, fused
and split; ``tools/multiwave_finite_k.py --random 7``)."""


def stored_split_optima(path: Optional[str] = None) -> tuple[list[tuple[Instance, Fraction]],
                                                              list[str]]:
    """The optimal rows of :data:`SPLIT_FINITE_K` as ``(instance, OPT)``, each row's schedule
    re-simulated: a row whose orders are invalid or do not end at its ``opt`` is reported
    (second list) and left out. A row not proven optimal (``feasible``: the time limit ended
    the search) only bounds the optimum from above: ``lower_bound`` above its schedule's
    makespan is reported too."""
    import json
    from pathlib import Path

    from schedules.schedule import Schedule

    file = Path(__file__).resolve().parent.parent / (path or SPLIT_FINITE_K)
    out: list[tuple[Instance, Fraction]] = []
    bad: list[str] = []
    if not file.exists():
        return out, [f"no {path or SPLIT_FINITE_K}"]
    for line in file.read_text().splitlines():
        row = json.loads(line) if line.strip() else None
        if not row or row.get("status") not in ("optimal", "feasible"):
            continue
        inst, opt = Instance.from_dict(row), Fraction(row["opt"])
        res = simulate(Schedule.from_strings(inst, row["orders"]))
        if not res.valid or res.makespan != opt:
            bad.append(f"STORED ROW {inst.to_dict()}: its schedule gives {res.makespan}, not {opt}")
        elif row["status"] == "optimal":
            out.append((inst, opt))
        else:
            above = [f"{n} {v_}" for n, v_ in lower_bound(inst).terms if v_ > opt]
            if above:
                bad.append(f"INVALID {', '.join(above)} > the makespan {opt} of a valid "
                           f"schedule: {inst.to_dict()}")
    return out, bad


def split_memory_instances(mode: str) -> list[Instance]:
    """Fresh split instances with ``2 <= K <= v`` and beyond (quick: ``v = 2, P = 2, m <= 3``
    and ``v = 3, P = 2, m = 2``; full: ``v = 2, P = 2, m <= 4`` and ``v = 3, P = 2, m <= 3``;
    the stored rows hold ``P = 3``)."""
    quick = mode == "quick"
    trips = [(1, 1, 1), (1, 2, 1)] if quick else [(1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 2),
                                                   (2, 3, 1)]
    two = [(2, mn) for mn in ((2, 3) if quick else (2, 3, 4))]
    out = [Instance(P=Pn, m=mn, v=2, K=Kn, placement=pl, f=fd, b_I=bi, b_W=bw)
           for pl in ("looped", "vshape") for Pn, mn in two for Kn in (2, 3, 4)
           for fd, bi, bw in trips if Kn < 2 * mn and (Kn == 2 or not quick)]
    out += [Instance(P=2, m=mn, v=3, K=Kn, placement=pl, f=fd, b_I=bi, b_W=bw)
            for pl in ("looped", "vshape") for mn in ((2,) if quick else (2, 3))
            for Kn in (2, 3) for fd, bi, bw in trips[:1 if quick else 3]]
    return out


@check("MW10 split single slot (2 <= K <= v) and MW7's split drain: every term <= OPT of split "
       "multi-wave instances with finite K; MW10 and MW7 tight somewhere",
       theorems=("MW10", "MW7"), kind="exhaustive",
       range={"quick": "every row of data/multiwave_finite_k_split.jsonl (v=2, P<=3, m<=4, "
                       "K 2..4, 6 duration triples; orders re-simulated); solved: v=2, P=2, "
                       "m<=3, K=2 and v=3, P=2, m=2, K in {2,3}, both placements",
              "full": "the same rows; solved: v=2, P=2, m<=4, K 2..4 and v=3, P=2, m<=3, "
                      "K in {2,3}, 5 (v=3: 3) duration triples, both placements"})
def split_memory_finite_K(ctx: Context) -> CheckResult:
    """MW10 and MW7 (with the split drain) against optima proven without any bound: the stored
    CP-SAT optima of :data:`SPLIT_FINITE_K` (each row's schedule re-simulated to its ``opt``)
    and fresh CP-SAT solves with ``use_theory=False``."""
    known, bad = stored_split_optima()
    quick = ctx.mode == "quick"
    return _fresh_terms_valid(ctx, split_memory_instances(ctx.mode), 20.0 if quick else 60.0,
                              ("mw_split_single_slot", "mw_memory_slots"), engine="cpsat",
                              known=known, bad=bad)


def first_backward_instances(mode: str) -> list[Instance]:
    """Fresh instances beyond the stored optima: ``v = 3`` and ``P = 4`` (quick: a handful at
    ``m = 2``; full: ``m <= 3``, both placements, fused and split)."""
    quick = mode == "quick"
    durs = [dict(f=1, b=2), dict(f=2, b_I=1, b_W=1)] + ([] if quick else [
        dict(f=3, b=1), dict(f=1, b_I=3, b_W=1)])
    ms = (2,) if quick else (2, 3)
    out = [Instance(P=2, m=mn, v=3, K=Kn, placement=pl, **d)
           for pl in ("looped", "vshape") for mn in ms for Kn in ((2, 4) if quick else (2, 3, 4, 5))
           for d in durs]
    out += [Instance(P=4, m=2, v=2, K=Kn, placement=pl, **d)
            for pl in ("looped", "vshape") for Kn in ((3,) if quick else (2, 3))
            for d in durs[:1 if quick else 4]]
    return out


def first_backward_v1_instances(mode: str) -> list[Instance]:
    """Fresh split single-wave instances (``v = 1``, ``K < m``) on which MW11 is above every
    other term of ``lower_bound`` (so an error in it shows): quick, three of them (MW11 above
    the rest by 4, 1 and 2); full, every such instance with ``P <= 3``, ``m <= 6``, ``K <= 4``,
    ``f, b_I, b_W <= 3`` that is not a row of pipebounds/data/optima.jsonl."""
    if mode == "quick":
        return [Instance(P=3, m=7, K=3, f=1, b_I=3, b_W=3),
                Instance(P=3, m=5, K=2, f=1, b_I=3, b_W=2),
                Instance(P=3, m=4, K=2, f=1, b_I=3, b_W=3)]
    stored = {inst for inst, _ in optima_rows(lambda i: i.v == 1 and i.split)}
    out = []
    for Pn, mn, Kn, fd, bi, bw in product((2, 3), range(2, 7), range(1, 5), (1, 2, 3),
                                          (1, 2, 3), (1, 2, 3)):
        if Kn >= mn:
            continue
        inst = Instance(P=Pn, m=mn, K=Kn, f=fd, b_I=bi, b_W=bw)
        terms = lower_bound(inst).terms
        rest = max(x for n, x in terms if n != "mw_first_backward")
        if inst not in stored and dict(terms)["mw_first_backward"] > rest:
            out.append(inst)
    return out


def _single_wave_split_rows() -> tuple[list[tuple[Instance, Fraction]], list[str]]:
    """The independent split ``v = 1`` rows of pipebounds/data/optima.jsonl with finite
    ``K < m`` as ``(instance, OPT)``; a ``feasible`` row (an incumbent, not proven) is judged
    only as an upper bound: ``lower_bound`` above its makespan is reported (second list)."""
    from .table import table_rows_all

    out, bad = [], []
    for inst, opt, status in table_rows_all():
        if inst.v != 1 or not inst.split or inst.K is None or inst.K >= inst.m or inst.c:
            continue
        if status == "optimal":
            out.append((inst, opt))
        elif lower_bound(inst).value > opt:
            bad.append(f"INVALID LB {lower_bound(inst).value} > incumbent {opt}: "
                       f"{inst.to_dict()}")
    return out, bad


@check("MW11 first backward, MW12 last forward: every term <= OPT of multi-wave instances with "
       "finite K (fused and split) and of single-wave split instances with K < m (MW11 at "
       "v = 1); both tight somewhere; OPT/LB with and without MW10-MW12, and at v = 1 with and "
       "without MW11",
       theorems=("MW11", "MW12"), kind="exhaustive",
       range={"quick": "every independent v>=2 finite-K row and every split v=1 row with K<m of "
                       "pipebounds/data/optima.jsonl and every row of "
                       "data/multiwave_finite_k_split.jsonl and "
                       "data/multiwave_finite_k_random.jsonl (orders re-simulated); "
                       "solved: v=3, P=2, m=2, K in {2,4} and v=2, P=4, m=2, K=3, both "
                       "placements, fused and split; v=1 split: 3 instances where MW11 is above "
                       "every other term",
              "full": "the same rows; solved: v=3, P=2, m<=3, K 2..5 and v=2, P=4, m=2, "
                      "K in {2,3}, both placements, 4 duration sets (fused and split); v=1 "
                      "split: every P<=3, m<=6, K<=4, f, b_I, b_W<=3 instance outside the table "
                      "where MW11 is above every other term"})
def first_backward_finite_K(ctx: Context) -> CheckResult:
    """MW11 and MW12 against optima proven without any bound (the table's multi-wave
    finite-``K`` rows and its split single-wave rows with ``K < m``, the stored split optima,
    fresh CP-SAT solves with ``use_theory=False``, multi-wave and single-wave). The detail
    also gives the mean and worst OPT/LB over the stored multi-wave rows without the terms of
    MW10-MW12 (``before``) and with them, and over the stored single-wave rows without MW11 and
    with it."""
    known, bad = stored_split_optima()
    more, bad_more = stored_split_optima(RANDOM_FINITE_K)
    single, bad_single = _single_wave_split_rows()
    known += more + optima_rows(lambda i: i.v >= 2 and i.K is not None and i.c == 0)
    bad += bad_more + bad_single
    new = ("mw_first_backward", "mw_split_single_slot", "mw_last_forward")
    ratios = []
    for inst, opt in known:
        terms = lower_bound(inst).terms
        ratios.append((opt / max(v_ for n, v_ in terms if n not in new),
                       opt / max(v_ for _, v_ in terms)))
    v1 = []
    for inst, opt in single:
        terms = lower_bound(inst).terms
        v1.append((opt / max(v_ for n, v_ in terms if n != "mw_first_backward"),
                   opt / max(v_ for _, v_ in terms)))
    res = _fresh_terms_valid(ctx, first_backward_instances(ctx.mode)
                             + first_backward_v1_instances(ctx.mode),
                             20.0 if ctx.mode == "quick" else 60.0,
                             ("mw_first_backward", "mw_last_forward"),
                             engine="cpsat", known=known + single, bad=bad)
    parts = [res.detail]
    for label, rs, what in (("stored rows", ratios, "MW10-MW12"),
                            ("stored split v=1 rows (K < m)", v1, "MW11")):
        if rs:
            before = [r[0] for r in rs]
            after = [r[1] for r in rs]
            parts.append(f"{label} {len(rs)}: without {what} mean "
                         f"{float(sum(before) / len(before)):.4f} worst {max(before)} (LB = OPT "
                         f"on {before.count(1)}), with {'it' if what == 'MW11' else 'them'} "
                         f"mean {float(sum(after) / len(after)):.4f} worst {max(after)} "
                         f"(LB = OPT on {after.count(1)})")
    return CheckResult(res.instances, res.ok, res.worst_gap, "; ".join(parts) if res.ok
                       else res.detail)


V3_FINITE_K = "data/multiwave_finite_k_v3.jsonl"
"""Exact optima of random three-wave instances with ``K <= v`` (fused and split;
``tools/multiwave_finite_k.py --random 11 --three-waves``: CP-SAT with ``use_theory=False``,
each row with its optimal orders)."""


def first_backward_top_instances(mode: str) -> list[Instance]:
    """Fresh ``v = 3``, ``K <= v`` instances (quick: ``P = 2, m = 2, K in {1, 2}``, two duration
    sets with ``f > b``; full: ``P = 2, m <= 3, K in {1, 2, 3}`` and ``P = 3, m = 2``, four
    duration sets, and ``v = 4, P = 2, m = 2, K <= 4`` with the first two), both
    placements."""
    quick = mode == "quick"
    durs = [dict(f=3, b=1), dict(f=2, b_I=3, b_W=1)] + ([] if quick else [
        dict(f=1, b=2), dict(f=Fraction(3, 2), b_I=3, b_W=2)])
    sizes = [(2, 2)] if quick else [(2, 2), (2, 3), (3, 2)]
    out = [Instance(P=Pn, m=mn, v=3, K=Kn, placement=pl, **d)
           for pl in ("looped", "vshape") for Pn, mn in sizes
           for Kn in ((1, 2) if quick else (1, 2, 3)) for d in durs]
    if not quick:
        out += [Instance(P=2, m=2, v=4, K=Kn, placement=pl, **d)
                for pl in ("looped", "vshape") for Kn in (1, 2, 3, 4) for d in durs[:2]]
    return out


@check("MW13 first backward over top stages: every term <= OPT of multi-wave instances with "
       "finite K (fused and split); MW13 tight somewhere; OPT/LB at v = 3, K <= v with and "
       "without MW13",
       theorems=("MW13",), kind="exhaustive",
       range={"quick": "every independent v>=2 finite-K row of pipebounds/data/optima.jsonl and "
                       "every row of data/multiwave_finite_k_split.jsonl, "
                       "data/multiwave_finite_k_random.jsonl and "
                       "data/multiwave_finite_k_v3.jsonl (orders re-simulated); solved: v=3, "
                       "P=2, m=2, K in {1,2}, both placements, f > b fused and split",
              "full": "the same rows; solved: v=3, K in {1,2,3}, P=2 with m<=3 and P=3 with "
                      "m=2, both placements, 4 duration sets (fused and split); v=4, P=2, m=2, "
                      "K<=4, 2 duration sets"})
def first_backward_top_finite_K(ctx: Context) -> CheckResult:
    """MW13 against optima proven without any bound (the table's multi-wave finite-``K``
    rows, the stored CP-SAT optima of the three sweeps, each re-simulated, and fresh CP-SAT
    solves with ``use_theory=False``); every term of ``lower_bound`` is judged. The detail
    gives the mean and worst OPT/LB over the stored ``v = 3``, ``K <= v`` rows without
    MW13's term (``before``) and with it, fused and split."""
    known, bad = stored_split_optima()
    for path in (RANDOM_FINITE_K, V3_FINITE_K):
        more, bad_more = stored_split_optima(path)
        known += more
        bad += bad_more
    known += optima_rows(lambda i: i.v >= 2 and i.K is not None and i.c == 0)
    stats: dict[str, list] = {"fused": [], "split": []}
    for inst, opt in known:
        if inst.v == 3 and inst.K is not None and inst.K <= inst.v:
            terms = lower_bound(inst).terms
            stats["split" if inst.split else "fused"].append(
                (opt / max(v_ for n, v_ in terms if n != "mw_first_backward_top"),
                 opt / max(v_ for _, v_ in terms)))
    res = _fresh_terms_valid(ctx, first_backward_top_instances(ctx.mode),
                             20.0 if ctx.mode == "quick" else 60.0,
                             ("mw_first_backward_top",), engine="cpsat", known=known, bad=bad)
    parts = []
    for key, rs in stats.items():
        if rs:
            before, after = [r[0] for r in rs], [r[1] for r in rs]
            parts.append(f"{key} v=3 K<=v {len(rs)} rows: without MW13 mean "
                         f"{float(sum(before) / len(before)):.4f} worst {max(before)}, with it "
                         f"mean {float(sum(after) / len(after)):.4f} worst {max(after)}")
    return CheckResult(res.instances, res.ok, res.worst_gap, "; ".join([res.detail] + parts))


@check("MW7 non-increasing in K (and the whole multi-wave bound)", theorems=("MW7",), kind="exhaustive",
       range={"quick": "v in {2,3}, both placements, P<=3, m<=4, K=1..vm, (f,b) in "
                       "{(1,2),(3,1)}; split (1,2,1)",
              "full": "v in {2,3}, both placements, P<=4, m<=6, K=1..vm, (f,b) in "
                      "{(1,2),(3,1),(1,1),(2,3)}; split (1,2,1), (2,1,1)"})
def memory_slots_monotone(ctx: Context) -> CheckResult:
    """docs/theory_multiwave.md, Proposition MW7-mono: MW7 never rises with ``K`` (exact
    evaluation over the range); the bound ``lower_bound`` is reported too (it must not rise
    with ``K`` either: every term is valid, and memory only adds constraints)."""
    quick = ctx.mode == "quick"
    durs = [(1, 2), (3, 1)] + ([] if quick else [(1, 1), (2, 3)])
    trips = [(1, 2, 1)] + ([] if quick else [(2, 1, 1)])
    n, bad = 0, []
    for pl, vn, Pn, mn in product(("looped", "vshape"), (2, 3), range(2, 4 if quick else 5),
                                  range(1, 5 if quick else 7)):
        bases = [Instance(P=Pn, m=mn, v=vn, placement=pl, f=fd, b=bd) for fd, bd in durs]
        bases += [Instance(P=Pn, m=mn, v=vn, placement=pl, f=fd, b_I=bi, b_W=bw)
                  for fd, bi, bw in trips]
        for base in bases:
            mem = [mw.memory_slots_value(base.with_(K=k)) for k in range(1, vn * mn + 1)]
            lbs = [lower_bound(base.with_(K=k)).value for k in range(1, vn * mn + 1)]
            lbs.append(lower_bound(base.with_(K=None)).value)
            n += 1
            if any(a is not None and c is not None and c > a for a, c in zip(mem, mem[1:])):
                bad.append(f"MW7 rises with K: {base.to_dict()} {mem}")
            if any(c > a for a, c in zip(lbs, lbs[1:])):
                bad.append(f"LB rises with K: {base.to_dict()} {lbs}")
    return CheckResult(n, not bad, None, "; ".join(bad[:3]) or
                       "MW7 and the multi-wave LB non-increasing in K on every instance")


def _reversed(sched, inst_rev: Instance):
    """MW0's map: every GPU's order reversed, ``F`` and ``B`` swapped, for durations ``(b, f)``."""
    from schedules import Op, Schedule

    return Schedule(inst_rev, tuple(tuple(Op(o.stage, "B" if o.kind == "F" else "F",
                                             o.microbatch) for o in reversed(seq))
                                    for seq in sched.orders), source="time reversal")


@check("MW0 time reversal: reversed schedules of (b, f) are no longer; OPT(f, b) = OPT(b, f) "
       "on the table", theorems=("MW0",), kind="exhaustive",
       range={"quick": "fused K = inf, every generator, P <= 4, m <= 6, v in {1, 2}, both "
                       "placements, (f, b) in {(1,2),(3,1),(1/2,5/3)}; table pairs",
              "full": "same with P <= 6, m <= 10"})
def time_reversal(ctx: Context) -> CheckResult:
    """Every generated fused schedule (``K`` unconstrained, no delay) reversed with ``F <-> B``
    is a valid schedule of the instance with ``f`` and ``b`` swapped, with a makespan no longer
    than the original's; and every pair of independent table optima ``(f, b)``, ``(b, f)`` (fused,
    ``K`` unconstrained) agrees."""
    from schedules.generators import GENERATORS, generate

    full = ctx.mode == "full"
    n, fails = 0, []
    for P_, m_, v_, pl, (f_, b_) in product(range(1, 7 if full else 5), range(1, 11 if full else 7),
                                           (1, 2), ("looped", "vshape"),
                                           ((1, 2), (3, 1), (Fraction(1, 2), Fraction(5, 3)))):
        if v_ == 1 and pl == "vshape":
            continue
        inst = Instance(P=P_, m=m_, v=v_, placement=pl, f=f_, b=b_)
        rev = inst.with_(f=b_, b=f_)
        for name in GENERATORS:
            try:
                sched = generate(name, inst)
            except ValueError:
                continue
            res, back = simulate(sched), simulate(_reversed(sched, rev))
            n += 1
            if not (res.valid and back.valid and back.makespan <= res.makespan):
                fails.append(f"{name} {inst.to_dict()}: {res.makespan} -> {back.makespan}")
    opts = {(i.P, i.m, i.stage_to_rank, i.f, i.b): o for i, o in
            optima_rows(lambda i: not i.split and i.K is None and not i.c)}
    for (P_, m_, s2r, f_, b_), o in opts.items():
        other = opts.get((P_, m_, s2r, b_, f_))
        if other is not None:
            n += 1
            if other != o:
                fails.append(f"table P={P_} m={m_} (f, b) = ({f_}, {b_}): {o} vs {other}")
    return CheckResult(n, not fails, None, "; ".join(fails[:3]) or
                       "every reversed schedule valid and no longer; swapped optima equal")


@check("MW8d one microbatch at K = 1: the forced-recomputation chain is a schedule reaching MW1",
       theorems=("MW8d", "MW1", "MW8", "MW8c"), kind="exhaustive",
       range={"quick": "m = 1, K = 1, v in {2, 3}, P <= 4, both placements, fused and split",
              "full": "m = 1, K = 1, v in {2, 3, 4}, P <= 8, both placements, fused and split"})
def single_microbatch_multi_wave(ctx: Context) -> CheckResult:
    """:func:`pipebounds.constructions.multi_wave.single_microbatch_schedule` is valid, holds one
    activation per GPU and its makespan equals MW1 (with MW8c's chains), which ``lower_bound``
    flags exact (MW8d)."""
    full = ctx.mode == "full"
    durs = [dict(f=1, b=2), dict(f=3, b=1), dict(f=1, b_I=1, b_W=2), dict(f=2, b_I=1, b_W=1)]
    n, fails = 0, []
    for P_, v_, pl, d in product(range(1, 9 if full else 5), (2, 3, 4) if full else (2, 3),
                                 ("looped", "vshape"), durs):
        inst = Instance(P=P_, m=1, v=v_, K=1, placement=pl, **d)
        res = simulate(optimal_schedule(inst))
        lb = lower_bound(inst)
        n += 1
        if not (res.valid and max(res.peak_memory) == 1 and res.makespan == lb.value
                == mw.gpu_subset_value(inst) and lb.exact and lb.theorem == "MW8d"):
            fails.append(f"{inst.to_dict()}: makespan {res.makespan}, LB {lb.value}")
    return CheckResult(n, not fails, Fraction(1) if not fails else None,
                       "; ".join(fails[:3]) or "chain schedule = MW1 = OPT")
