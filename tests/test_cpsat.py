"""The CP-SAT engine (pipebounds.search.cpsat): valid schedules, honest statuses, and agreement
with the branch-and-bound search on every sampled instance both finish."""

from __future__ import annotations

import pytest

from schedules import Instance, simulate  # noqa: E402
from pipebounds.search import solve  # noqa: E402

SAMPLE = [
    dict(P=2, m=3, K=1), dict(P=3, m=3, K=2), dict(P=3, m=4, K=1, f=2, b=3),
    dict(P=2, m=4, K=2, b_I=1, b_W=1), dict(P=3, m=3, K=1, b_I=2, b_W=1),
    dict(P=2, m=2, K=1, v=2, placement="vshape"), dict(P=2, m=2, K=2, v=2, placement="looped"),
    dict(P=2, m=3, K=None, v=2, placement="vshape", b_I=1, b_W=1),
    dict(P=3, m=2, K=1, c="1/2"),
]


@pytest.mark.parametrize("kw", SAMPLE)
def test_cpsat_agrees_with_search(kw):
    inst = Instance(**kw)
    a = solve(inst, time_limit=30, engine="search", use_known=False)
    b = solve(inst, time_limit=30, engine="cpsat", use_known=False)
    for res in (a, b):
        sim = simulate(res.schedule)
        assert sim.valid, sim.errors
        assert sim.makespan == res.makespan
    assert a.status == "optimal" and b.status == "optimal"
    assert a.makespan == b.makespan


def test_cpsat_respects_memory():
    inst = Instance(P=3, m=5, K=1)
    res = solve(inst, time_limit=30, engine="cpsat")
    sim = simulate(res.schedule)
    assert sim.valid and max(sim.peak_memory) <= 1
    assert any(op.kind == "R" for seq in res.schedule.orders for op in seq)


def test_cpsat_time_limit_is_honest():
    res = solve(Instance(P=4, m=8, K=3, f=1, b=3), time_limit=0.05, engine="cpsat")
    assert res.status in ("optimal", "feasible", "unknown")
    if res.status == "feasible":
        assert res.lower_bound < res.makespan


def test_sequential_engine_hands_what_the_search_leaves_open_to_cpsat(monkeypatch):
    """``solve_auto`` (search first, then CP-SAT): a hard two-wave instance is proven (CP-SAT
    closes what the short search slice leaves open), agrees with CP-SAT alone, and the result
    says which runs it made."""
    from pipebounds.search import portfolio
    from pipebounds.search.solve import solve_auto

    monkeypatch.setattr(portfolio, "SEQUENTIAL_SEARCH_SLICE", (0.25, 0.2))  # search gives up
    inst = Instance(P=3, m=2, K=3, v=2, placement="vshape")
    res = solve_auto(inst, time_limit=60, use_theory=False)
    alone = solve(inst, time_limit=60, engine="cpsat", use_theory=False)
    assert res.status == alone.status == "optimal"
    assert res.makespan == alone.makespan == simulate(res.schedule).makespan
    assert [e for e, _, _ in res.stats["engines"]][0] == "search"
    assert res.stats["independent"] is True


def test_cpsat_memory_in_bytes_equals_brute_force():
    """CP-SAT with a byte budget (cumulative over a_s - g_s until I, g_s until W, transients,
    static bytes) = the best valid schedule over every order and recompute choice."""
    pytest.importorskip("ortools")
    from itertools import combinations, product

    from reference_sim import _gpu_orders
    from schedules import Instance, Schedule, simulate
    from schedules.memory import MemoryModel
    from pipebounds.search import solve

    cases = [
        Instance(P=2, m=2, f=[1, 2], b=[2, 1], memory=MemoryModel(
            activation=[2, 3], static=[1, 0], transient={"B": 1}.items(), budget=4)),
        Instance(P=2, m=2, f=[1, 1], b_I=[1, 2], b_W=[2, 1], memory=MemoryModel(
            activation=[4, 4], kept_after_input=[1, 2], budget=6)),
    ]
    binds = 0
    for inst in cases:
        best = None
        per_gpu = []
        for p in range(inst.P):
            pairs = [(s, j) for s in inst.stages_of(p) for j in range(inst.m)]
            orders = []
            for r in range(len(pairs) + 1):
                for rec in combinations(pairs, r):
                    orders += _gpu_orders(inst, p, set(rec), None)
            per_gpu.append(orders)
        for combo in product(*per_gpu):
            res = simulate(Schedule(inst, combo))
            if res.valid and (best is None or res.makespan < best):
                best = res.makespan
        got = solve(inst, engine="cpsat", use_known=False, use_theory=False)
        assert best is not None and got.status == "optimal" and got.makespan == best, (inst, best)
        free = solve(inst.with_(memory=None), engine="cpsat", use_known=False, use_theory=False)
        binds += free.makespan < best
        # the search engine refuses rather than ignore the budget
        with pytest.raises(ValueError, match="bytes"):
            solve(inst, engine="search")
    assert binds  # the budget lengthens at least one optimum: the bytes are really modelled


def test_cpsat_until_stops_the_solve_before_its_wall_limit():
    """``until`` (a predicate on another clock, here a CPU budget) stops a solve whose wall
    limit is far away, with an honest status (a schedule, when it has one, no worse than the
    hint)."""
    import time

    from pipebounds.search.cpsat import solve_cpsat
    from schedules.generators import GENERATORS

    inst = Instance(P=6, m=16, K=3, b_I=1, b_W=1)  # not proven in seconds
    hint = GENERATORS["zb-h1"](inst.with_(K=None))
    from schedules.remat import fit_memory

    hint = fit_memory(hint, 3, polish=False).with_instance(inst)
    c0, w0 = time.process_time(), time.monotonic()
    res = solve_cpsat(inst, time_limit=600, hint=hint, catch_sigint=False,
                      until=lambda: time.process_time() > c0 + 0.5)
    assert time.monotonic() - w0 < 300  # far below the wall limit: the predicate stopped it
    assert time.process_time() - c0 < 0.5 + 3.0  # the model build and presolve included
    assert res.status in ("feasible", "optimal", "unknown")  # unknown: stopped before the hint
    if res.schedule is not None:                            # became a solution
        assert simulate(res.schedule).valid and res.makespan <= simulate(hint).makespan
