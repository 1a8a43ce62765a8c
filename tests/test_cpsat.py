"""The CP-SAT engine (schedules.search.cpsat): valid schedules, honest statuses, and agreement
with the branch-and-bound search on every sampled instance both finish."""

from __future__ import annotations

import pytest

from schedules import Instance, simulate  # noqa: E402
from schedules.search import solve  # noqa: E402

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
    from schedules.search import portfolio
    from schedules.search.solve import solve_auto

    monkeypatch.setattr(portfolio, "SEQUENTIAL_SEARCH_SLICE", (0.25, 0.2))  # search gives up
    inst = Instance(P=3, m=2, K=3, v=2, placement="vshape")
    res = solve_auto(inst, time_limit=60, use_theory=False)
    alone = solve(inst, time_limit=60, engine="cpsat", use_theory=False)
    assert res.status == alone.status == "optimal"
    assert res.makespan == alone.makespan == simulate(res.schedule).makespan
    assert [e for e, _, _ in res.stats["engines"]][0] == "search"
    assert res.stats["independent"] is True
