"""pipebounds.services.best: every entry is the optimal remat of its family's (natural or fit_memory) order,
never worse than fit_memory, never below the lower bound; the ranking is sorted."""

from __future__ import annotations

import pytest

from pipebounds.services.best import best, family_schedules
from schedules import Instance, simulate
from schedules.remat import fit_memory


@pytest.mark.parametrize("inst", [Instance(P=3, m=4, K=1, b_I=1, b_W=1),
                                  Instance(P=3, m=4, K=2, b_I=2, b_W=1),
                                  Instance(P=2, m=4, K=2, v=2, placement="vshape", b_I=1, b_W=1)])
def test_best_entries(inst):
    res = best(inst, solve_time_limit=None, time_limit=20)
    fams, _ = family_schedules(inst)
    ms = [e.makespan for e in res.ranking if e.makespan is not None]
    assert ms == sorted(ms) and ms
    for e in res.ranking:
        if e.makespan is None:
            continue
        assert e.status == "optimal"
        sim = simulate(e.result.schedule)
        assert sim.valid and sim.makespan == e.makespan and max(sim.peak_memory) <= inst.K
        assert e.makespan >= res.lower_bound
        assert e.makespan <= simulate(fit_memory(fams[e.family], inst.K)).makespan
        assert e.makespan <= e.natural_result.makespan if e.natural_result.makespan else True
    # a family the natural order cannot fit still gets an entry through fit_memory's order
    assert all(e.makespan is not None for e in res.ranking)


def test_to_row_is_exact_json():
    import json
    from fractions import Fraction

    res = best(Instance(P=2, m=3, K=1, f=Fraction(3, 2)), solve_time_limit=10)
    row = json.loads(json.dumps(res.to_row()))
    assert Fraction(row["ranking"][0]["makespan"]) == res.ranking[0].makespan
    assert row["optimum"] is not None and Fraction(row["optimum"]) == res.optimum
    assert Fraction(row["gap"]) == res.gap
