"""The portfolio with the synthesis as an engine (pipebounds.synthesis.engine, docs/search.md
"Portfolio with synthesis") and CP-SAT capped below an incumbent (pipebounds.search.cpsat, ``cap``):
statuses stay honest (``optimal`` only with a proof), the answers agree with the search's
optimum, and a cap never invents a bound."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from schedules import Instance, simulate
from schedules.io import schedule_from_document
from pipebounds.search import solve
from pipebounds.search.backend import SolveOptions
from pipebounds.search.channel import SILENT
from pipebounds.search.cpsat import build, solve_cpsat
from pipebounds.search.portfolio import solve_portfolio
from pipebounds.synthesis.engine import SynthesisEngine

ROOT = Path(__file__).resolve().parent.parent

# the theory's bound is below the optimum here, so that a proof needs an engine
CASES = [dict(P=3, m=6, K=2), dict(P=3, m=5, K=2, b_I=1, b_W=1), dict(P=2, m=5, K=3, v=2)]


def _optimum(inst):
    ref = solve(inst, time_limit=60, engine="search", use_theory=False)
    assert ref.status == "optimal"
    return ref


def _valid(res, inst):
    sim = simulate(res.schedule)
    assert sim.valid, sim.errors[:3]
    assert sim.makespan == res.makespan and res.schedule.instance == inst
    assert res.lower_bound <= res.makespan


@pytest.mark.parametrize("kw", CASES)
def test_capped_cpsat_proves_the_incumbent_or_finds_better(kw):
    """Cap one unit below the optimum: infeasible, so the lower bound is the optimum and the
    hint (an optimal schedule) is returned as optimal; cap below a worse hint: a better schedule
    or the bound, never a bound above the optimum; with the theory off."""
    inst = Instance(**kw)
    ref = _optimum(inst)
    unit = inst.unit
    opt = int(ref.makespan * unit)
    at = solve_cpsat(inst, time_limit=30, hint=ref.schedule, use_theory=False, cap=opt - 1)
    _valid(at, inst)
    assert at.status == "optimal" and at.makespan == ref.makespan
    assert at.lower_bound == ref.makespan and at.stats["capped"] == opt - 1
    # a cap far below the optimum: still only the bound the proof gives (cap + 1 <= OPT)
    low = solve_cpsat(inst, time_limit=30, hint=ref.schedule, use_theory=False, cap=opt - 3)
    assert low.status == "feasible" and low.lower_bound == Fraction(opt - 2, unit)
    assert low.makespan == ref.makespan


def test_a_cap_above_the_hint_changes_nothing_and_a_cap_below_the_theory_is_empty():
    inst = Instance(P=3, m=6, K=2)
    ref = _optimum(inst)
    opt = int(ref.makespan * inst.unit)
    known = ("hint", ref.schedule, ref.makespan)
    assert build(inst, known=known, cap=opt + 5).cap is None
    b = build(inst, known=known, cap=0)
    assert b.cap == 0 and b.horizon == 0
    # below the theory's bound: infeasible at once; the bound is the theory's, the hint kept
    res = solve_cpsat(inst, time_limit=10, hint=ref.schedule, cap=0)
    assert res.stats["cpsat_status"] == "INFEASIBLE"
    assert res.lower_bound == res.stats["lower_bound_theory"] and res.makespan == ref.makespan
    # the same without the theory: the cap's proof alone (nothing ends by time 0)
    res = solve_cpsat(inst, time_limit=10, hint=ref.schedule, cap=0, use_theory=False)
    assert res.stats["cpsat_status"] == "INFEASIBLE"
    assert res.lower_bound == Fraction(1, inst.unit) and res.status == "feasible"


@pytest.mark.parametrize("kw", CASES)
def test_portfolio_with_the_synthesis_is_optimal_and_independent_without_the_theory(kw):
    inst = Instance(**kw)
    ref = _optimum(inst)
    res = solve_portfolio(inst, SolveOptions(time_limit=60, use_theory=False),
                          engines=(SynthesisEngine(1.0), "cpsat"))
    _valid(res, inst)
    assert res.status == "optimal" and res.makespan == ref.makespan == res.lower_bound
    assert res.stats["independent"] and res.stats["proof"] in ("synthesize", "cpsat", "combined")


def test_synthesis_engine_alone_reports_an_honest_status_under_a_short_limit():
    """0.3 s: the synthesis and little else; a bound only from the engine's own proof."""
    inst = Instance(P=4, m=6, K=3, v=2, b_I=1, b_W=1)
    res = SynthesisEngine(0.2).solve(inst, SolveOptions(time_limit=0.3, use_theory=False))
    _valid(res, inst)
    assert res.status == "feasible" and res.lower_bound < res.makespan


def _in_daemon(q):
    res = solve_portfolio(Instance(P=3, m=6, K=2), SolveOptions(time_limit=60),
                          engines=(SynthesisEngine(0.5), "cpsat"))
    q.put((res.status, res.makespan, [e for e, _, _ in res.stats["engines"]]))


def test_portfolio_with_the_synthesis_inside_a_daemon_runs_the_engines_in_turn():
    ctx = multiprocessing.get_context()
    q = ctx.Queue()
    p = ctx.Process(target=_in_daemon, args=(q,), daemon=True)
    p.start()
    status, makespan, engines = q.get(timeout=120)
    p.join(10)
    assert status == "optimal" and makespan == _optimum(Instance(P=3, m=6, K=2)).makespan
    assert engines[0] == "synthesize"


def test_cli_solve_with_synthesis_runs_it_as_an_engine():
    out = subprocess.run([sys.executable, "-m", "pipebounds", "solve", "-P", "3", "-m", "6",
                          "-K", "2", "--time-limit", "20", "--synthesize", "1", "--json",
                          "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    sim = simulate(schedule_from_document(r["schedule"]))
    assert sim.valid and sim.makespan == Fraction(r["makespan_exact"])
    assert r["status"] == "optimal" and r["engine"] == "portfolio"
    assert Fraction(r["makespan_exact"]) == _optimum(Instance(P=3, m=6, K=2)).makespan


def _random_small(n: int, seed: int) -> list[Instance]:
    """``n`` seeded small instances with memory binding (sizes CP-SAT proves in well under a
    second), fused and split, one wave or two."""
    import random

    rng = random.Random(seed)
    out: list[Instance] = []
    while len(out) < n:
        P = rng.randint(2, 3)
        v = 2 if rng.random() < 0.25 else 1
        m = rng.randint(2, 5 if v == 1 else 3)
        K = rng.randint(1, P)
        kw: dict = dict(P=P, m=m, K=K, v=v, f=rng.randint(1, 3))
        if rng.random() < 0.4:
            kw.update(b_I=rng.randint(1, 3), b_W=rng.randint(1, 3))
        else:
            kw.update(b=rng.randint(1, 4))
        inst = Instance(**kw)
        if inst not in out:
            out.append(inst)
    return out


def test_at_bound_and_capped_restarts_reach_the_optimum_on_random_instances():
    """On 30 random small instances: CP-SAT at the theory's bound (stepping up while
    infeasible) ends at the optimum of an independent CP-SAT solve (no theory, no known
    schedules) and proves no bound above it; the capped restarts from the best family end at
    the optimum with it proven."""
    from pipebounds.search.incumbent import best_known
    from pipebounds.search.proof import ceil_units, root_lower_bound
    from pipebounds.synthesis.engine import at_bound, capped_restarts

    for inst in _random_small(30, seed=21):
        ref = solve_cpsat(inst, time_limit=60, use_known=False, use_theory=False)
        assert ref.status == "optimal", inst
        unit = inst.unit
        opt = ceil_units(ref.makespan, unit)
        lb = root_lower_bound(inst)
        shot, floor = at_bound(inst, lb, 60.0)
        assert floor <= opt, inst
        assert shot is not None and shot[2] == ref.makespan and floor == opt, inst
        _valid(SimpleResult(shot[1], shot[2]), inst)
        known = best_known(inst)
        stats: dict = {}
        sched, ms, _, lower, _ = capped_restarts(inst, SolveOptions(lb_theory=lb), SILENT,
                                                 known[1], known[2], known[0], lb, None, stats)
        assert ms == ref.makespan and lower == ms, (inst, ms, lower, ref.makespan)
        assert simulate(sched).makespan == ms and stats["restarts"] >= (known[2] > ms)


class SimpleResult:
    """The two fields :func:`_valid` reads besides the schedule."""

    def __init__(self, schedule, makespan):
        self.schedule, self.makespan, self.lower_bound = schedule, makespan, makespan


def test_cli_solve_answers_at_the_bound_without_engines():
    """-P 6 -m 8 -K 3 -f 3 split 1/1: no list schedule nor family meets the bound 58, CP-SAT
    capped at it finds one (the optimum: CP-SAT alone proves 58)."""
    out = subprocess.run([sys.executable, "-m", "pipebounds", "solve", "-P", "6", "-m", "8",
                          "-K", "3", "-f", "3", "--b-input", "1", "--b-weight", "1",
                          "--time-limit", "60", "--synthesize", "auto", "--json", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    sim = simulate(schedule_from_document(r["schedule"]))
    assert sim.valid and sim.makespan == Fraction(r["makespan_exact"]) == 58
    assert r["status"] == "optimal" and r["lower_bound"] == 58
    assert r["proof"] in ("at_bound", "root", "combined", "cpsat", "synthesize")
